"""``clinical-gym train ttopd`` and ``python -m clinical_gym.trainers.ttopd.train``: one-line errors before any model loads, and
a full run from a saved tiny model whose checkpoint carries the teacher."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from test_grpo_cli import ERROR_PROBE
from test_grpo_toy_env import one_torch_thread  # noqa: F401

import clinical_gym.cli

BAD = [
    (["train", "ttopd"], "model is required"),
    (["train", "ttopd", "--model", ".", "--teacher-update", "swap"], "invalid choice"),
    (["train", "ttopd", "--model", ".", "--ema-alpha", "2"], "ema_alpha must be in [0, 1]"),
    (["train", "ttopd", "--model", ".", "--teacher-update", "reset", "--hard-copy-interval", "0"],
     "hard_copy_interval >= 1"),
    (["train", "ttopd", "--model", ".", "--hint-correct", "done {"], "not a valid template"),
    (["train", "ttopd", "--model", ".", "--cosine-r-min", "2"], "must not exceed"),
    (["train", "ttopd", "--model", ".", "--env", "NoSuchEnv-v0"], "unknown environment 'NoSuchEnv-v0'"),
]


def test_bad_settings_fail_in_one_line_before_any_model_loads():
    argvs = [argv for argv, _ in BAD]
    out = subprocess.run([sys.executable, "-c", ERROR_PROBE, json.dumps(argvs)], capture_output=True, text=True,
                         timeout=120, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    for (argv, message), (code, stderr) in zip(BAD, report["results"], strict=True):
        lines = stderr.strip().splitlines()
        assert code == 2 and len(lines) == 1, (argv, stderr)
        assert lines[0].startswith("clinical-gym: error:") and message in lines[0], (argv, lines[0])
    assert report["torch"] is False


def test_module_entry_point_reports_bad_settings(capsys):
    from clinical_gym.trainers.ttopd.train import cli

    assert cli(["--model", "/no/such/model"]) == 2
    message = "error: model not found: '/no/such/model' is neither a folder nor a hub id"
    assert capsys.readouterr().err.strip() == message


@pytest.mark.usefixtures("one_torch_thread")
def test_a_run_from_the_command_line(tmp_path, monkeypatch):
    from clinical_gym.trainers.common.monitors import COLLAPSE_MONITORS
    from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer

    tokenizer = tiny_tokenizer()
    tiny_llama(tokenizer).save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    monkeypatch.setattr(clinical_gym.cli, "COMMAND_MODULES", ("play", "train"))
    run = tmp_path / "run"
    code = clinical_gym.cli.main([
        "train", "ttopd", "--env", "ClinicalInquiry-v1", "--env-kwargs", '{"turn_budget": 2}',
        "--model", str(tmp_path / "model"), "--lora-r", "2", "--total-steps", "1", "--group-size", "2",
        "--groups-per-step", "1", "--max-refill-rounds", "0", "--max-turn-tokens", "4", "--max-episode-tokens", "1024",
        "--lambda-distill", "1.5", "--output-dir", str(run), "--no-progress", "--report-to", "none",
        "--torch-threads", "1"])
    assert code == 0
    row = json.loads((run / "metrics.jsonl").read_text())
    assert set(COLLAPSE_MONITORS) <= set(row) and row["step"] == 1
    assert row["losses/lambda_distill"] == 1.5 and row["losses/kl_teacher"] > 0
    checkpoint = run / "checkpoints" / "step-000001"
    assert (checkpoint / "model" / "adapter_model.safetensors").is_file()
    assert (checkpoint / "teacher" / "teacher.safetensors").is_file()
