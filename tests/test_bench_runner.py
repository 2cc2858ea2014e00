"""The benchmark runner on real environments: output files and ranking, same seed -> same numbers, broken agents and
environments recorded as failed / error episodes, resume after a kill (SIGKILL of a real run against a local HTTP
endpoint agent) without duplicates, and run-folder checks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from clinical_gym.benchmarks.agents import Agent
from clinical_gym.benchmarks.plan import plan_env
from clinical_gym.benchmarks.records import RESULTS_FILE, read_records
from clinical_gym.benchmarks.runner import BenchConfig, play_chunk, run_bench
from clinical_gym.llm.base import LLMError
from clinical_gym.rollout import ScriptedPolicy
from fake_openai import serve

REPO = Path(__file__).resolve().parents[1]
QUESTION = "<answer>Question: Have you had a fever, chills or any weight loss?</answer>"
DIAGNOSIS = "<answer>Diagnosis: Acute bronchitis\nRecommendation: rest and fluids</answer>"


def results(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / RESULTS_FILE).read_text().splitlines()]


def doctor(path: str, body: dict) -> str:
    """The endpoint agent: asks one question, then diagnoses (decided from the conversation it is sent)."""
    asked = sum(m["role"] == "assistant" for m in body["messages"])
    return QUESTION if asked == 0 else DIAGNOSIS


def test_a_run_writes_results_summary_report_and_plots_with_oracle_first_and_random_last(tmp_path):
    out = tmp_path / "run"
    report = run_bench(BenchConfig(envs="ClinicalInquiry-v1,DiagnosticWorkup-v1,ClinicalDiagnosis-v1",
                                   agents="oracle,baseline,random", out=out, episodes=4, batch_size=3, progress=False))
    assert report == out / "report.md" and report.is_file()
    rows = results(out)
    assert len(rows) == 3 * 3 * 4 and len({(r["env"], r["agent"], r["episode"]) for r in rows}) == 36
    assert all(r["transcript"][0]["role"] == "system" and len(r["transcript"]) == 2 + 2 * len(r["turns"]) for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    for env in summary["envs"]:
        ranked = [a["agent"] for a in env["agents"]]
        assert ranked[0] == "oracle" and ranked[-1] == "random", (env["env"], ranked)
        assert all(a["episodes"] == 4 and a["failed"] == 0 for a in env["agents"])
        for plot in ("metrics", "turns"):
            assert (out / "plots" / f"{env['env']}_{plot}.png").stat().st_size > 1000
    text = report.read_text()
    assert "oracle (ground truth)" in text and "checklist doctor" in text and "test-orderer" in text
    assert "![ClinicalInquiry-v1_metrics](plots/ClinicalInquiry-v1_metrics.png)" in text


def test_the_same_seed_gives_the_same_episodes_and_numbers(tmp_path):
    def run(out: Path, seed: int) -> list[dict]:
        run_bench(BenchConfig(envs="ClinicalInquiry-v1", agents="baseline,random", out=out, episodes=5, seed=seed,
                              cases="generated:common:8", progress=False))
        return results(out)

    first, again, other = run(tmp_path / "a", 0), run(tmp_path / "b", 0), run(tmp_path / "c", 1)
    assert first == again
    summaries = [json.loads((tmp_path / run / "summary.json").read_text()) for run in ("a", "b")]
    assert summaries[0] == summaries[1]
    assert [r["case_id"] for r in first] != [r["case_id"] for r in other]


def scripted(reply) -> Agent:
    return Agent("test agent", ScriptedPolicy(reply))


def chunk_records(agent: Agent, chunk: Sequence[int] = (0, 1, 2), timeout_s: float = 30.0, **env_kwargs):
    plan = plan_env("ClinicalInquiry-v1", cases=None, tasks=None, split="test", episodes=None, seed=0,
                    env_kwargs=env_kwargs)
    config = BenchConfig(envs="ClinicalInquiry-v1", agents="x", out=Path("unused"), timeout_s=timeout_s)
    return plan, play_chunk(plan, "x", agent, list(chunk), config)


def test_a_raising_agent_fails_only_its_own_episodes():
    plan = plan_env("ClinicalInquiry-v1", cases=None, tasks=None, split="test", episodes=None, seed=0, env_kwargs={})
    env = plan.make()
    broken_opening, _ = env.reset(seed=plan.seed_of(1), options={"case_id": plan.case_of(1)})

    def reply(messages) -> str:
        if messages[1]["content"] == broken_opening:
            raise RuntimeError("boom")
        return DIAGNOSIS

    _, records = chunk_records(scripted(reply))
    assert [r.status for r in records] == ["ok", "failed", "ok"]
    assert records[1].reason == "exception: RuntimeError: boom" and records[1].turns[-1].action == ""
    assert records[1].transcript[-1]["content"].startswith("[the agent failed")


@pytest.mark.parametrize("reply, timeout_s, reason", [
    (lambda m: "   ", 30.0, "empty output"),
    (lambda m: time.sleep(0.6) or QUESTION, 0.2, "timeout: no reply within 0.2 s"),
])
def test_empty_and_slow_agents_are_failed_episodes_with_reasons(reply, timeout_s, reason):
    _, records = chunk_records(scripted(reply), chunk=(0, 1), timeout_s=timeout_s)
    assert [(r.status, r.reason, len(r.turns)) for r in records] == [("failed", reason, 1)] * 2


class BrokenPatient:
    """A patient backend that fails: ``LLMError`` (handled by the environment) or a bug (any other exception)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def reset(self, case, rng) -> None:
        pass

    def reply(self, question, history):
        raise self.error


@pytest.mark.parametrize("error, reason", [(LLMError("patient server down"), "patient server down"),
                                           (KeyError("bug"), "the environment raised KeyError: 'bug'")])
def test_environment_failures_are_error_episodes_and_the_chunk_goes_on(error, reason):
    _, records = chunk_records(scripted(lambda m: QUESTION), chunk=(0, 1), patient=BrokenPatient(error))
    assert [(r.status, r.reason) for r in records] == [("error", reason)] * 2


def test_a_kill_mid_run_resumes_without_duplicates_and_matches_an_uninterrupted_run(tmp_path):
    settings = dict(envs="ClinicalInquiry-v1", agents="endpoint=openai:fake", episodes=6, batch_size=2, progress=False)

    def slow(path: str, body: dict) -> str:
        time.sleep(0.15)
        return doctor(path, body)

    killed = tmp_path / "killed"
    with serve(default=slow) as url:
        code = (f"from pathlib import Path; from clinical_gym.benchmarks.runner import BenchConfig, run_bench; "
                f"run_bench(BenchConfig(**{settings!r}, out=Path({str(killed)!r}), base_url={url!r}))")
        process = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            if (killed / RESULTS_FILE).exists() and len(results(killed)) >= 2:
                break
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    written = len(results(killed))
    assert 2 <= written < 6
    with open(killed / RESULTS_FILE, "a") as f:
        f.write('{"env": "ClinicalInquiry-v1", "agent": "endp')  # a line cut short by the kill

    with serve(default=doctor) as url:
        run_bench(BenchConfig(**settings, out=killed, base_url=url))
        resumed_requests = len(url.requests)
    with serve(default=doctor) as url:
        run_bench(BenchConfig(**settings, out=tmp_path / "straight", base_url=url))
        straight_requests = len(url.requests)
        assert url.requests[0].body["messages"] == [{"role": "user", "content": "ping"}]  # the endpoint check
        assert url.requests[1].body["messages"][0]["role"] == "system"

    rows = results(killed)
    assert sorted(r["episode"] for r in rows) == list(range(6))  # each once, the partial line gone
    assert resumed_requests < straight_requests  # finished chunks were not played again
    by_episode = lambda rs: sorted(rs, key=lambda r: r["episode"])  # noqa: E731
    assert by_episode(rows) == by_episode(results(tmp_path / "straight"))
    assert all(r["status"] == "ok" and r["turns"][0]["action"] == QUESTION and r["turns"][1]["action"] == DIAGNOSIS
               for r in rows)


def test_a_finished_run_is_not_played_again_and_settings_cannot_change(tmp_path):
    config = dict(envs="DiagnosticWorkup-v1", agents="baseline", out=tmp_path, episodes=3, progress=False)
    run_bench(BenchConfig(**config))
    before = (tmp_path / RESULTS_FILE).read_text()
    run_bench(BenchConfig(**config))
    assert (tmp_path / RESULTS_FILE).read_text() == before
    run_bench(BenchConfig(**{**config, "episodes": 4, "agents": "baseline,oracle"}))  # extending is fine
    assert len(read_records(tmp_path)) == 8
    with pytest.raises(ValueError, match="other episode settings.*seed"):
        run_bench(BenchConfig(**{**config, "seed": 1}))


def test_an_llm_judge_scores_inquiry_episodes_and_its_failures_are_counted_apart(tmp_path):
    settings = dict(envs="ClinicalInquiry-v1", agents="oracle", episodes=2, progress=False, judge="judge-model")
    judge = lambda path, body: "<think>Same meaning.</think><answer>4</answer>"  # noqa: E731
    with serve(default=judge) as url:
        run_bench(BenchConfig(**settings, out=tmp_path / "judged", judge_base_url=url))
        assert "Candidate:" in url.requests[1].body["messages"][-1]["content"]  # after the endpoint check
    assert [r.judge for r in read_records(tmp_path / "judged")] == [{"diagnosis": 80.0, "recommendation": 80.0}] * 2
    with serve([("ok", "pong"), ("status", 400)], default=judge) as url:  # the first episode's judge call fails
        run_bench(BenchConfig(**settings, out=tmp_path / "broken", judge_base_url=url))
    summary = json.loads((tmp_path / "broken" / "summary.json").read_text())["envs"][0]["agents"][0]
    assert summary["judge_errors"] == 1 and summary["metrics"]["judge_diagnosis"]["n"] == 1
    assert summary["metrics"]["accuracy"]["mean"] == 1.0 and summary["metrics"]["accuracy"]["n"] == 2


def test_a_task_file_is_read_in_the_form_each_tool_environment_takes(tmp_path):
    """A pathway task file has phase fields the plain task model rejects: each env reads its own task files."""
    import shutil
    from importlib import resources

    pathways = tmp_path / "pathway_tasks.json"
    shutil.copy(resources.files("clinical_gym.domains.pathways") / "data" / "tasks.json", pathways)
    plan = plan_env("ClinicalPathway-v1", cases=None, tasks=str(pathways), split=None, episodes=3, seed=0,
                    env_kwargs={})
    assert plan.episodes == 3 and len(plan.case_ids) == 42 and plan.make().unwrapped.tasks[0].phases
    triage = tmp_path / "triage_tasks.json"
    shutil.copy(resources.files("clinical_gym.domains.triage") / "data" / "tasks.json", triage)
    assert plan_env("Triage-v1", cases=None, tasks=str(triage), split=None, episodes=2, seed=0, env_kwargs={}).case_ids
