"""Benchmark settings in the field's habits, on real environments and a real HTTP endpoint (tests/fake_openai.py):
native function calling for OpenAI-compatible agents on tool environments (schemas sent as ``tools``, ``tool_calls``
turned into actions) with a text fallback, ``--patient`` / ``--world-model`` LLM actors, ``--trials`` with pass^k,
and ``run.json`` provenance; the report's marks (lower is better, all-zero metrics, ranking wording)."""

from __future__ import annotations

import json
import re
import subprocess
from importlib import metadata
from pathlib import Path

import gymnasium as gym
import pytest

import clinical_gym.cli as cli
from clinical_gym.benchmarks.plan import plan_env
from clinical_gym.benchmarks.records import read_records
from clinical_gym.benchmarks.runner import BenchConfig, run_bench
from clinical_gym.rollout.native_tools import native_messages, split_results, tool_call_action
from fake_openai import serve

REPO = Path(__file__).resolve().parents[1]


def call(name: str, call_id: str | None, **arguments) -> dict:
    entry = {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {**entry, "id": call_id} if call_id else entry


def medical_qa_agent(path: str, body: dict) -> dict:
    """Reads the question, then thinks and lists the options in one turn (two calls), then submits C."""
    if "tools" not in body:
        return "pong"  # the runner's check that the endpoint answers
    asked = sum(m["role"] == "assistant" for m in body["messages"])
    question = re.search(r"Q\d+", body["messages"][1]["content"]).group(0)
    if asked == 0:
        return {"content": None, "tool_calls": [call("get_question", "call_a", question_id=question)]}
    if asked == 1:
        return {"content": "Two things at once.",
                "tool_calls": [call("think", "call_b", thought="giant cell arteritis?"),
                               call("list_options", None, question_id=question)]}
    return {"content": None, "tool_calls": [call("submit_answer", "call_d", answer="C", reasoning="biopsy")]}


def test_native_function_calling_sends_the_schemas_and_reads_tool_calls(tmp_path):
    with serve(default=medical_qa_agent) as url:
        run_bench(BenchConfig(envs="MedicalQA-v1", agents="openai:fake", episodes=1, out=tmp_path, base_url=url,
                              progress=False))
        sent = [r.body for r in url.requests if r.body and "tools" in r.body]  # (a preflight ping has no tools)
    (episode,) = read_records(tmp_path)
    env = gym.make("MedicalQA-v1")
    _, info = env.reset(options={"task_id": episode.case_id})
    assert len(sent) == 3 and all(body["tools"] == info["tools"] for body in sent)
    second, third = sent[1]["messages"], sent[2]["messages"]
    assert second[2]["role"] == "assistant" and second[2]["content"] is None
    assert [(c["id"], c["function"]["name"]) for c in second[2]["tool_calls"]] == [("call_a", "get_question")]
    assert second[3]["role"] == "tool" and second[3]["tool_call_id"] == "call_a"
    assert [m["role"] for m in third[4:]] == ["assistant", "tool", "tool"]
    assert third[4]["content"] == "Two things at once." and third[4]["tool_calls"][1]["id"] == "call_2"
    assert [m["tool_call_id"] for m in third[5:]] == ["call_b", "call_2"]
    assert third[5]["content"].startswith("[1] think:") and third[6]["content"].startswith("[2] list_options:")
    assert episode.status == "ok" and episode.outcome["answer"] == "C" and len(episode.turns) == 3
    assert [c["name"] for c in episode.outcome["tool_calls"]] == ["get_question", "think", "list_options",
                                                                   "submit_answer"]
    assert all(c["ok"] for c in episode.outcome["tool_calls"])
    assert json.loads(episode.turns[0].action)["tool_calls"][0]["function"]["name"] == "get_question"


def test_text_tool_calling_sends_no_tools(tmp_path):
    submit = json.dumps({"name": "submit_answer", "arguments": {"answer": "A"}})
    with serve(default=lambda path, body: submit) as url:
        run_bench(BenchConfig(envs="MedicalQA-v1", agents="openai:fake", episodes=1, out=tmp_path, base_url=url,
                              progress=False, tool_calling="text"))
        bodies = [r.body for r in url.requests if r.body and len(r.body.get("messages", [])) > 1]
    assert bodies and not any("tools" in body for body in bodies)
    (episode,) = read_records(tmp_path)
    assert episode.status == "ok" and episode.outcome["answer"] == "A"


def test_tool_call_actions_and_messages_round_trip():
    action = tool_call_action({"content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]})
    assert json.loads(action) == {"tool_calls": [{"id": "call_1", "type": "function",
                                                  "function": {"name": "f", "arguments": '{"x": 1}'}}]}
    assert tool_call_action({"content": "plain text"}) == "plain text"
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
                {"role": "assistant", "content": action}, {"role": "user", "content": "result"},
                {"role": "assistant", "content": '{"name": "f", "arguments": {}}'}, {"role": "user", "content": "r2"}]
    native = native_messages(messages)
    assert native[2]["tool_calls"][0]["id"] == "call_1" and native[2]["content"] is None
    assert native[3] == {"role": "tool", "tool_call_id": "call_1", "content": "result"}
    assert native[4:] == messages[4:]  # a call the model wrote as text stays text
    assert split_results("[1] a: x\n\n[2] b: y", 2) == ["[1] a: x", "[2] b: y"]
    assert split_results("Error: too many calls", 3) == ["Error: too many calls",
                                                         *["(the results of this turn's calls are in the first tool "
                                                           "message above)"] * 2]


def test_patient_and_world_model_flags_put_llms_behind_the_simulated_actors(tmp_path):
    with serve(default=lambda path, body: "It started two days ago.") as patient, \
            serve(default=lambda path, body: "Within normal limits.") as world:
        run_bench(BenchConfig(envs="ClinicalInquiry-v1,DiagnosticWorkup-v1", agents="baseline", episodes=1,
                              out=tmp_path, patient="patient-model", patient_base_url=patient,
                              world_model="world-model", world_model_base_url=world, progress=False))
        to_patient = [r.body for r in patient.requests if r.body and len(r.body.get("messages", [])) > 1]
        to_world = [r.body for r in world.requests if r.body and r.body.get("prompt") not in (None, "ping")]
    assert to_patient and all(b["model"] == "patient-model" for b in to_patient)
    assert "role-playing a patient" in to_patient[0]["messages"][0]["content"]
    assert to_world and all(b["model"] == "world-model" for b in to_world)
    inquiry = next(r for r in read_records(tmp_path) if r.env == "ClinicalInquiry-v1")
    assert "It started two days ago." in inquiry.turns[0].observation
    run = json.loads((tmp_path / "run.json").read_text())
    assert (run["patient"], run["world_model"]) == ("patient-model", "world-model")
    assert run["config"]["patient_base_url"] == patient


@pytest.mark.parametrize("settings, message", [
    (dict(envs="DiagnosticWorkup-v1", patient="m"), "--patient sets the patient of ClinicalInquiry-v1, which this "
                                                    "run does not play"),
    (dict(envs="ClinicalInquiry-v1", patient_base_url="http://127.0.0.1:9/v1"), "--patient-base-url needs --patient"),
    (dict(envs="ClinicalInquiry-v1", patient="m", env_kwargs={"patient": "rules"}), "the patient is set twice"),
    (dict(envs="ClinicalInquiry-v1", trials=0), "at least 1"),
    (dict(envs="ClinicalInquiry-v1", tool_calling="json"), "tool calling must be native or text"),
])
def test_bad_actor_and_trial_settings_are_refused(tmp_path, settings, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        run_bench(BenchConfig(agents="baseline", out=tmp_path, progress=False, **settings))


def test_trials_play_each_task_k_times_and_report_pass_k(tmp_path):
    plan = plan_env("DiagnosticWorkup-v1", cases=None, tasks=None, split="test", episodes=2, seed=0, env_kwargs={},
                    trials=3)
    assert plan.episodes == 6 and [plan.case_of(k) for k in range(6)] == [plan.case_of(0)] * 3 + [plan.case_of(3)] * 3
    assert len({plan.seed_of(k) for k in range(6)}) == 6
    run_bench(BenchConfig(envs="DiagnosticWorkup-v1,Triage-v1", agents="oracle,random", episodes=2, trials=3,
                          out=tmp_path, progress=False))
    summary = json.loads((tmp_path / "summary.json").read_text())
    for env in summary["envs"]:
        for agent in env["agents"]:
            assert agent["episodes"] == 6 and agent["tasks"] == 2
            assert set(agent["reliability"]) == {"pass^1", "pass^2", "pass^3", "pass@2", "pass@3"}
        oracle = next(a for a in env["agents"] if a["agent"] == "oracle")
        assert oracle["reliability"]["pass^3"]["mean"] == 1.0
        assert (tmp_path / "plots" / f"{env['env']}_pass_k.png").stat().st_size > 1000
    report = (tmp_path / "report.md").read_text()
    assert ", 3 trials per task." in report
    assert report.count("| agent | pass^1 | pass^2 | pass^3 | pass@2 | pass@3 |") == 2
    assert "Ranked by accuracy, then reward;" in report and "Ranked by reward;" in report  # not "reward, then reward"
    assert "then reward, then" not in report and "Ranked by reward, then reward" not in report
    assert re.search(r"0 for every agent in every episode: [^\n]*violations sev1 ↓", report)
    triage_table = report.split("## Triage-v1")[1].split("\n\n")[2]
    assert triage_table.startswith("| rank |") and "violations sev1" not in triage_table  # a line, not a column
    with pytest.raises(ValueError, match=r"other episode settings \(trials: 3 -> 2\)"):
        run_bench(BenchConfig(envs="DiagnosticWorkup-v1", agents="oracle", episodes=2, trials=2, out=tmp_path,
                              progress=False))


def test_run_json_records_version_commit_environments_and_every_setting(tmp_path):
    config = BenchConfig(envs="DiagnosticWorkup-v1", agents="oracle", episodes=2, out=tmp_path, progress=False)
    run_bench(config)
    run = json.loads((tmp_path / "run.json").read_text())
    provenance = run["provenance"]
    assert provenance["clinical_gym"]["version"] == metadata.version("clinical-gym")
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert provenance["clinical_gym"]["git"]["commit"] == head
    assert isinstance(provenance["clinical_gym"]["git"]["dirty"], bool)
    env = provenance["environments"]["DiagnosticWorkup-v1"]
    assert env["version"] == 1 and env["entry_point"].endswith(":DiagnosticWorkupEnv") and env["cases"] >= 2
    assert set(run["config"]) == set(BenchConfig.__dataclass_fields__)
    assert provenance["packages"]["gymnasium"] == metadata.version("gymnasium")
    report = (tmp_path / "report.md").read_text()
    assert f"Produced by clinical-gym {metadata.version('clinical-gym')}, commit {head[:10]}" in report


@pytest.mark.parametrize("args, message", [
    (("--env", "DiagnosticWorkup-v1", "--agent", "oracle", "--trials", "0"), "at least 1"),
    (("--env", "DiagnosticWorkup-v1", "--agent", "oracle", "--patient", "m"), "which this run does not play"),
    (("--env", "MedicalQA-v1", "--agent", "oracle", "--tool-calling", "json"), "invalid choice: 'json'"),
])
def test_bench_flag_errors_are_one_line(capsys, tmp_path, args, message):
    assert cli.main(["bench", *args, "--out", str(tmp_path), "--no-progress"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_bench_compare_two_agents_of_one_run_from_the_cli(capsys, tmp_path):
    assert cli.main(["bench", "--env", "DiagnosticWorkup-v1", "--agent", "oracle,random", "--episodes", "3",
                     "--out", str(tmp_path), "--no-progress"]) == 0
    capsys.readouterr()
    assert cli.main(["bench", "compare", str(tmp_path), "--agent-a", "random", "--agent-b", "oracle"]) == 0
    out = capsys.readouterr().out
    assert "DiagnosticWorkup-v1 · random vs oracle: 3 paired episodes over 3 tasks (A played 3, B 3)" in out
    assert re.search(r"accuracy\s+0\.000\s+1\.000\s+\+1\.000 \[\+1\.000, \+1\.000\]  B better", out)
    assert cli.main(["bench", "compare", str(tmp_path)]) == 2
    assert "name two different agents" in capsys.readouterr().err
