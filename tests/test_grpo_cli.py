"""``clinical-gym train grpo``: flags generated from GRPOConfig, YAML settings, one-line errors before any model
loads, and a full run from a saved tiny model."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import fields

import pytest
from test_grpo_toy_env import one_torch_thread  # noqa: F401

import clinical_gym.cli
from clinical_gym.cli import train as train_cli
from clinical_gym.trainers.common.config_cli import config_from_args
from clinical_gym.trainers.grpo.config import GRPOConfig

# Runs the CLI with "train" wired in, for each argument list; reports exit status, stderr and whether torch loaded.
ERROR_PROBE = """
import contextlib, io, json, sys
import clinical_gym.cli as cli
cli.COMMAND_MODULES = ("play", "train")
results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli.main(argv)
    results.append([code, err.getvalue()])
print(json.dumps({"results": results, "torch": "torch" in sys.modules}))
"""

BAD = [
    (["train"], "choose a training algorithm"),
    (["train", "grpo"], "model is required"),
    (["train", "grpo", "--model", "/no/such/model"], "model not found"),
    (["train", "grpo", "--model", ".", "--env", "NoSuchEnv-v0"], "unknown environment 'NoSuchEnv-v0'"),
    (["train", "grpo", "--model", ".", "--env-kwargs", '{"turn_budget": 0}'], "rejects env_kwargs"),
    (["train", "grpo", "--model", ".", "--env-kwargs", "[1]"], "not a JSON object"),
    (["train", "grpo", "--model", ".", "--lora-r", "eight"], "invalid int value"),
    (["train", "grpo", "--model", ".", "--group-size", "1"], "group_size must be >= 2"),
    (["train", "grpo", "--model", ".", "--epsilon-low", "1.5"], "epsilon_low"),
    (["train", "grpo", "--model", ".", "--loss-aggregation", "sum"], "invalid choice"),
    (["train", "grpo", "--model", ".", "--max-episode-tokens", "64", "--max-turn-tokens", "64"], "must exceed"),
    (["train", "grpo", "--model", ".", "--config", "/no/such.yaml"], "cannot read config file"),
    (["train", "grpo", "--model", ".", "--generation-engine", "vllm"], "vllm"),
]


def test_bad_settings_fail_in_one_line_before_any_model_loads():
    argvs = [argv for argv, _ in BAD]
    out = subprocess.run([sys.executable, "-c", ERROR_PROBE, json.dumps(argvs)], capture_output=True, text=True,
                         timeout=120, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    for (argv, message), (code, stderr) in zip(BAD, report["results"]):
        lines = stderr.strip().splitlines()
        assert code == 2 and len(lines) == 1, (argv, stderr)
        assert lines[0].startswith("clinical-gym: error:") and message in lines[0], (argv, lines[0])
    assert report["torch"] is False


def grpo_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    train_cli.add_commands(parser.add_subparsers())
    return parser


def test_every_config_field_has_a_flag_with_help(capsys):
    assert grpo_parser().parse_args(["train", "grpo"]).algorithm == "grpo"
    with pytest.raises(SystemExit):
        grpo_parser().parse_args(["train", "grpo", "--help"])
    help_text = capsys.readouterr().out
    for f in fields(GRPOConfig):
        assert "--" + f.name.replace("_", "-") in help_text, f.name
    assert "DAPO clip-higher" in help_text and "--no-dynamic-sampling" in help_text


@pytest.mark.parametrize("algorithm", train_cli.ALGORITHMS, ids=lambda a: a.name)
def test_every_algorithm_has_a_subcommand_with_every_config_flag(algorithm, capsys):
    with pytest.raises(SystemExit):
        grpo_parser().parse_args(["train", algorithm.name, "--help"])
    help_text = capsys.readouterr().out
    for f in fields(train_cli._load(algorithm.config)):
        assert "--" + f.name.replace("_", "-") in help_text, (algorithm.name, f.name)


def test_yaml_settings_are_overridden_by_flags(tmp_path):
    settings = tmp_path / "grpo.yaml"
    settings.write_text("model: /models/doctor\nlora-r: 8\nlearning_rate: 1e-5\nenv_kwargs: {turn_budget: 4}\n"
                        "max_turns: null\ndynamic_sampling: false\n")
    args = grpo_parser().parse_args(["train", "grpo", "--config", str(settings), "--lora-r", "4"])
    cfg = config_from_args(GRPOConfig, args)
    assert (cfg.model, cfg.lora_r, cfg.learning_rate) == ("/models/doctor", 4, 1e-5)
    assert cfg.env_kwargs == {"turn_budget": 4} and cfg.max_turns is None and cfg.dynamic_sampling is False
    settings.write_text("lora_rank: 8\n")
    with pytest.raises(ValueError, match="unknown setting"):
        config_from_args(GRPOConfig, grpo_parser().parse_args(["train", "grpo", "--config", str(settings)]))
    settings.write_text("model: m\nprogress: 'off'\ngroup_size: '4'\n")
    cfg = config_from_args(GRPOConfig, grpo_parser().parse_args(["train", "grpo", "--config", str(settings)]))
    assert cfg.progress is False and cfg.group_size == 4
    settings.write_text("beta: lots\n")
    with pytest.raises(ValueError, match="beta"):
        config_from_args(GRPOConfig, grpo_parser().parse_args(["train", "grpo", "--config", str(settings)]))


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
        "train", "grpo", "--env", "ClinicalInquiry-v1", "--env-kwargs", '{"turn_budget": 2}',
        "--model", str(tmp_path / "model"), "--lora-r", "2", "--total-steps", "1", "--group-size", "2",
        "--groups-per-step", "1", "--max-refill-rounds", "0", "--max-turn-tokens", "4", "--max-episode-tokens", "1024",
        "--output-dir", str(run), "--no-progress", "--report-to", "none", "--torch-threads", "1"])
    assert code == 0
    row = json.loads((run / "metrics.jsonl").read_text())
    assert set(COLLAPSE_MONITORS) <= set(row) and row["step"] == 1
    assert (run / "checkpoints" / "step-000001" / "model" / "adapter_model.safetensors").is_file()


def test_trackers_are_used_only_when_installed():
    import importlib.util

    from clinical_gym.trainers.common.metrics_log import trackers_for

    has_tensorboard = importlib.util.find_spec("tensorboard") is not None
    assert trackers_for("auto") == (["tensorboard"] if has_tensorboard else [])
    assert trackers_for("none") == []
    if importlib.util.find_spec("wandb") is None:
        with pytest.raises(ValueError, match="needs the wandb package"):
            trackers_for("wandb")


def test_module_entry_point_reports_bad_settings(capsys):
    from clinical_gym.trainers.grpo.train import cli

    assert cli(["--model", "/no/such/model"]) == 2
    message = "error: model not found: '/no/such/model' is neither a folder nor a hub id"
    assert capsys.readouterr().err.strip() == message
