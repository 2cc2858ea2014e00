"""The clinical-gym CLI: envs, play (driven through stdin), and one-line errors with a non-zero exit."""

from __future__ import annotations

import subprocess
import sys

import pytest

import clinical_gym
from clinical_gym.cli.play import as_doctor_action


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clinical_gym.cli", *args], input=stdin, capture_output=True, text=True, timeout=120)


def test_envs_lists_every_id():
    out = run("envs")
    assert out.returncode == 0
    for env_id in clinical_gym.env_ids():
        assert env_id in out.stdout


def test_play_a_consultation_through_stdin():
    out = run("play", "ClinicalInquiry-v1", "--case", "dig-appendicitis-01", "--seed", "0",
              stdin="When did the pain start?\nDo you have a fever?\nDiagnosis: acute appendicitis; Recommendation: surgery\n")
    assert out.returncode == 0, out.stderr
    assert "Turn 1/10." in out.stdout and "Turn 2/10." in out.stdout
    assert "outcome: correct" in out.stdout and "reward: +" in out.stdout


def test_play_handles_end_of_input():
    out = run("play", "ClinicalInquiry-v1", "--seed", "1", stdin="Any fever?\n")
    assert out.returncode == 0 and "abandoned" in out.stdout


@pytest.mark.parametrize("args,message", [
    ((), "choose a command"),
    (("frobnicate",), "invalid choice"),
    (("play", "NoSuchEnv-v0"), "unknown environment"),
    (("play", "ClinicalInquiry-v1", "--case", "missing-case"), "unknown case_id"),
    (("play", "ClinicalInquiry-v1", "--cases", "/no/such/file.json"), "no case set or file"),
    (("play", "ClinicalInquiry-v1", "--budget", "0"), "--budget must be at least 1"),
    (("play", "ClinicalInquiry-v1", "--seed", "abc"), "invalid int value"),
])
def test_errors_are_one_line_and_non_zero(args, message):
    out = run(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("clinical-gym: error:")


def test_typed_text_becomes_agent_format():
    assert as_doctor_action("any fever?") == "<answer>Question: any fever?</answer>"
    assert as_doctor_action("Diagnosis: flu; Recommendation: rest") == "<answer>Diagnosis: flu\nRecommendation: rest</answer>"
