"""``clinical-gym bench`` fails loudly (issue 17): every LLM endpoint (agent, patient, judge, world model) is checked
before the first episode; failed and errored episodes are counted on screen and make the exit status 1; rerunning
into the same --out plays them again. Bring-your-own data: a user's own case file is played whole (no split), and
``--tasks DIR`` reads a task folder with its records."""

from __future__ import annotations

import json
import socket

import pytest

import clinical_gym.cli as cli
from clinical_gym.benchmarks.records import read_records
from clinical_gym.cases import load_cases
from clinical_gym.cases.loading import split_of
from fake_openai import serve

QUICK = ["--no-progress", "--episodes", "2", "--batch-size", "2"]


def dead_url() -> str:
    """The URL of a local port nothing listens on (connections are refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def error_line(capsys, *args: str) -> str:
    assert cli.main(list(args)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clinical-gym: error:"), lines
    return lines[0]


def test_unreachable_endpoints_stop_the_run_before_any_episode(tmp_path, capsys, monkeypatch):
    dead = dead_url()
    out = tmp_path / "agent"
    line = error_line(capsys, "bench", "--env", "ClinicalInquiry-v1", "--agent", "openai:doctor", "--base-url", dead,
                      "--out", str(out), *QUICK)
    assert "1 endpoint(s) do not answer" in line and f"agent openai:doctor ({dead}, model doctor)" in line
    assert not (out / "results.jsonl").exists()

    monkeypatch.setenv("OPENAI_BASE_URL", dead)
    line = error_line(capsys, "bench", "--env", "ClinicalInquiry-v1,DiagnosticWorkup-v1", "--agent", "baseline",
                      "--env-kwargs", json.dumps({"ClinicalInquiry-v1": {"patient": "openai:patient-model"},
                                                  "DiagnosticWorkup-v1": {"world_model": "openai:wm"}}),
                      "--judge", "judge-model", "--judge-base-url", dead, "--out", str(tmp_path / "actors"), *QUICK)
    assert "3 endpoint(s) do not answer" in line
    for role in ("patient of ClinicalInquiry-v1", "world model of DiagnosticWorkup-v1", "judge ("):
        assert role in line


def test_failed_episodes_are_counted_exit_1_and_are_played_again(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["bench", "--env", "ClinicalInquiry-v1", "--agent", "openai:doctor", "--out", str(out),
            "--env-kwargs", '{"turn_budget": 2}', *QUICK]
    with serve([("ok", "pong")] + [("status", 404)] * 6) as url:  # the server dies after the check
        assert cli.main([*args, "--base-url", url]) == 1
    printed = capsys.readouterr()
    assert "episodes: 2; failed (agent): 2; errors (simulator, judge or environment): 0" in printed.out
    assert "rerun the same command" in printed.err
    assert [r.status for r in read_records(out)] == ["failed", "failed"]

    answer = "<answer>Diagnosis: Pneumonia\nRecommendation: antibiotics</answer>"
    with serve(default=lambda path, body: answer) as url:
        assert cli.main([*args, "--base-url", url]) == 0
        played = [r for r in url.requests if r.body["messages"][-1]["content"] != "ping"]
    assert "failed (agent): 0; errors (simulator, judge or environment): 0" in capsys.readouterr().out
    records = read_records(out)
    assert sorted(r.episode for r in records) == [0, 1] and {r.status for r in records} == {"ok"}
    assert len(played) == 2  # both failed episodes played again, one reply each
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 2  # the failed records were replaced, not kept beside the new ones


def test_a_patient_outage_during_the_run_is_an_error_episode(tmp_path, capsys, monkeypatch):
    with serve([("ok", "pong")] + [("status", 400)] * 4) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        assert cli.main(["bench", "--env", "ClinicalInquiry-v1", "--agent", "baseline", "--out", str(tmp_path),
                         "--env-kwargs", '{"patient": "openai:patient-model"}', *QUICK]) == 1
    assert "failed (agent): 0; errors (simulator, judge or environment): 2" in capsys.readouterr().out
    assert all(r.status == "error" and "HTTP 400" in r.reason and r.outcome is None for r in read_records(tmp_path))


def test_a_users_own_case_file_is_played_whole(tmp_path, capsys):
    """Every case of the file is a train case: the default split of a bundled set (test) would leave none."""
    train = [c for c in load_cases("library") if split_of(c.id) == "train"][:3]
    path = tmp_path / "my_cases.jsonl"
    path.write_text("".join(c.model_dump_json() + "\n" for c in train))
    assert cli.main(["bench", "--env", "ClinicalInquiry-v1", "--agent", "oracle", "--cases", str(path),
                     "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    assert sorted(r.case_id for r in read_records(tmp_path / "run")) == sorted(c.id for c in train)
    assert "no cases" in error_line(capsys, "bench", "--env", "ClinicalInquiry-v1", "--agent", "oracle", "--cases",
                                    str(path), "--split", "test", "--out", str(tmp_path / "test"), "--no-progress")


def test_bench_tasks_reads_a_converted_folder_with_its_records(tmp_path, capsys):
    folder = tmp_path / "converted"
    medqa = "tests/fixtures/case_formats/medqa.jsonl"
    assert cli.main(["tools", "convert", "--from", medqa, "--domain", "MedicalQA-v1", "--out", str(folder)]) == 0
    assert cli.main(["bench", "--env", "MedicalQA-v1", "--agent", "oracle", "--tasks", str(folder),
                     "--out", str(tmp_path / "run"), "--no-progress", "--env-kwargs", '{"knowledge": null}']) == 0
    records = read_records(tmp_path / "run")
    assert len(records) == 4 and all(r.status == "ok" for r in records)  # all four converted tasks, no split
    questions = [t.observation for r in records for t in r.turns if '"get_question"' in t.action]
    assert questions and not any("not found" in q for q in questions)


def test_an_environment_bug_ends_the_episode_truncated_with_an_error():
    import gymnasium as gym

    from clinical_gym.benchmarks.guard import BenchEnv

    class Raises(gym.Wrapper):
        def step(self, action):
            raise KeyError("bug")

    env = BenchEnv(Raises(gym.make("Triage-v1")))
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step('{"name": "think", "arguments": {"thought": "x"}}')
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["error"] == "the environment raised KeyError: 'bug'"
