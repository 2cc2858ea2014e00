"""``clinical-gym train ppo`` and ``python -m clinical_gym.trainers.ppo.train``: flags generated from PPOConfig, one-line errors
(exit 2) before any model loads, and a run from the command line on ClinicalInquiry-v1 with a saved tiny model."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import fields

import pytest
from test_grpo_cli import ERROR_PROBE
from test_grpo_toy_env import one_torch_thread  # noqa: F401

import clinical_gym.cli
from clinical_gym.cli import train as train_cli
from clinical_gym.trainers.common.config_cli import config_from_args
from clinical_gym.trainers.ppo.config import PPOConfig

BAD = [
    (["train", "ppo"], "model is required"),
    (["train", "ppo", "--model", "/no/such/model"], "model not found"),
    (["train", "ppo", "--model", ".", "--env", "NoSuchEnv-v0"], "unknown environment 'NoSuchEnv-v0'"),
    (["train", "ppo", "--model", ".", "--kl-mode", "both"], "invalid choice"),
    (["train", "ppo", "--model", ".", "--gamma", "1.5"], "gamma and lam must be in [0, 1]"),
    (["train", "ppo", "--model", ".", "--lam", "x"], "invalid float value"),
    (["train", "ppo", "--model", ".", "--value-clip", "0"], "value_clip must be > 0"),
    (["train", "ppo", "--model", ".", "--vf-coef", "-1"], "must be >= 0"),
    (["train", "ppo", "--model", ".", "--num-epochs", "0"], "num_epochs and num_minibatches must be >= 1"),
    (["train", "ppo", "--model", ".", "--value-learning-rate", "0"], "value_learning_rate must be > 0"),
    (["train", "ppo", "--model", ".", "--group-size", "1", "--groups-per-step", "1", "--num-minibatches", "2"],
     "exceeds the episodes per step"),
]


def test_bad_settings_fail_in_one_line_before_any_model_loads():
    out = subprocess.run([sys.executable, "-c", ERROR_PROBE, json.dumps([argv for argv, _ in BAD])],
                         capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    for (argv, message), (code, stderr) in zip(BAD, report["results"], strict=True):
        lines = stderr.strip().splitlines()
        assert code == 2 and len(lines) == 1, (argv, stderr)
        assert lines[0].startswith("clinical-gym: error:") and message in lines[0], (argv, lines[0])
    assert report["torch"] is False


def ppo_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    train_cli.add_commands(parser.add_subparsers())
    return parser


def test_every_config_field_has_a_flag_with_help_and_yaml_works(capsys, tmp_path):
    with pytest.raises(SystemExit):
        ppo_parser().parse_args(["train", "ppo", "--help"])
    help_text = capsys.readouterr().out
    for f in fields(PPOConfig):
        assert "--" + f.name.replace("_", "-") in help_text, f.name
    assert "GAE lambda" in help_text and "--no-whiten-advantages" in help_text
    settings = tmp_path / "ppo.yaml"
    settings.write_text("model: /models/doctor\nkl_mode: loss\nvalue_clip: null\nlam: 1\n")
    cfg = config_from_args(PPOConfig, ppo_parser().parse_args(["train", "ppo", "--config", str(settings),
                                                               "--gamma", "0.99"]))
    assert (cfg.kl_mode, cfg.value_clip, cfg.lam, cfg.gamma) == ("loss", None, 1.0, 0.99)


def test_module_entry_point_reports_bad_settings(capsys):
    from clinical_gym.trainers.ppo.train import cli

    assert cli(["--model", "/no/such/model"]) == 2
    message = "error: model not found: '/no/such/model' is neither a folder nor a hub id"
    assert capsys.readouterr().err.strip() == message
    assert cli(["--model", ".", "--kl-coef", "-0.1"]) == 2
    assert capsys.readouterr().err.strip() == "error: vf_coef, entropy_coef and kl_coef must be >= 0"


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
        "train", "ppo", "--env", "ClinicalInquiry-v1", "--env-kwargs", '{"turn_budget": 2}',
        "--model", str(tmp_path / "model"), "--lora-r", "2", "--total-steps", "1", "--group-size", "2",
        "--groups-per-step", "1", "--num-epochs", "1", "--max-turn-tokens", "4", "--max-episode-tokens", "1024",
        "--output-dir", str(run), "--no-progress", "--report-to", "none", "--torch-threads", "1"])
    assert code == 0
    row = json.loads((run / "metrics.jsonl").read_text())
    assert set(COLLAPSE_MONITORS) <= set(row) and row["step"] == 1
    assert row["rollout/turns_per_episode"] == 2  # the patient's reply sits between the two replies
    for name in ("losses/value_loss", "losses/explained_variance", "losses/entropy", "losses/value_clip_fraction"):
        assert name in row
    checkpoint = run / "checkpoints" / "step-000001"
    assert (checkpoint / "model" / "adapter_model.safetensors").is_file()
    assert (checkpoint / "value_head.safetensors").is_file()
