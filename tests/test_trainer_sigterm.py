"""A training run killed with SIGTERM, mid-step or mid-save, leaves its newest complete checkpoint loadable, never
picks up a half-written one, and resumes from it to the end (issue 12, section 3).

The run is a real ``clinical-gym train grpo`` process (tiny random model, ClinicalInquiry-v1) killed from outside.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="trainers need the [train] extra")

from clinical_gym.trainers.common.checkpoint import STATE_FILE, TMP_PREFIX, latest_checkpoint  # noqa: E402

TOTAL = 5
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer

    folder = tmp_path_factory.mktemp("tiny") / "model"
    tokenizer = tiny_tokenizer()
    tiny_llama(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def train(model_dir: Path, run: Path, *extra: str) -> subprocess.Popen:
    argv = [sys.executable, "-m", "clinical_gym.cli", "train", "grpo", "--env", "ClinicalInquiry-v1",
            "--env-kwargs", '{"turn_budget": 2}', "--model", str(model_dir), "--lora-r", "2",
            "--total-steps", str(TOTAL), "--save-every", "1", "--keep-checkpoints", "2", "--group-size", "2",
            "--groups-per-step", "1", "--max-refill-rounds", "0", "--max-turn-tokens", "4",
            "--max-episode-tokens", "1024", "--output-dir", str(run), "--no-progress", "--report-to", "none",
            "--torch-threads", "1", *extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def kill_when(process: subprocess.Popen, ready, timeout: float = 240.0) -> None:
    """SIGTERM ``process`` as soon as ``ready()`` is true (polled every millisecond)."""
    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None:
            pytest.fail(f"the run ended before it could be killed:\n{process.stdout.read()}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("the run never reached the point where it should be killed")
        time.sleep(0.001)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)
    assert process.returncode == -signal.SIGTERM


def steps_logged(run: Path) -> list[int]:
    path = run / "metrics.jsonl"
    return [json.loads(line)["step"] for line in path.read_text().splitlines()] if path.exists() else []


def assert_loadable(checkpoint: Path) -> None:
    """Every file of a complete checkpoint is there and reads back."""
    import torch
    from safetensors.torch import load_file

    state = json.loads((checkpoint / STATE_FILE).read_text())
    assert state["step"] == int(checkpoint.name.split("-")[1]) and "sampler" in state
    assert load_file(checkpoint / "model" / "adapter_model.safetensors")
    for name in ("optimizer.pt", "scheduler.pt", "rng_state_0.pt"):
        assert torch.load(checkpoint / name, weights_only=False) is not None


def resume_to_the_end(model_dir: Path, run: Path) -> None:
    done = train(model_dir, run, "--resume")
    out, _ = done.communicate(timeout=300)
    assert done.returncode == 0, out
    assert "resumed from" in out
    assert steps_logged(run) == list(range(1, TOTAL + 1))  # no step lost, none logged twice
    assert latest_checkpoint(run / "checkpoints").name == f"step-{TOTAL:06d}"


def test_sigterm_during_a_step_leaves_the_last_checkpoint_loadable(model_dir, tmp_path):
    run = tmp_path / "run"
    checkpoints = run / "checkpoints"
    process = train(model_dir, run)
    # step 2 is saved; the run is somewhere inside step 3 (rollouts or update) when it is killed
    kill_when(process, lambda: (checkpoints / "step-000002" / STATE_FILE).is_file())
    found = latest_checkpoint(checkpoints)
    assert found is not None and found.name in ("step-000002", "step-000003")
    assert_loadable(found)
    resume_to_the_end(model_dir, run)


def test_sigterm_while_a_checkpoint_is_written_never_leaves_it_as_the_latest(model_dir, tmp_path):
    run = tmp_path / "run"
    checkpoints = run / "checkpoints"
    process = train(model_dir, run)
    writing = checkpoints / f"{TMP_PREFIX}step-000002"
    kill_when(process, writing.exists)
    found = latest_checkpoint(checkpoints)
    if writing.exists():  # killed before the rename: the partial folder is ignored, step 1 is the latest
        assert found is not None and found.name == "step-000001"
    else:  # the rename won the race: step 2 is complete
        assert found is not None and found.name == "step-000002"
    assert_loadable(found)
    resume_to_the_end(model_dir, run)
    assert not any(p.name.startswith(TMP_PREFIX) for p in checkpoints.iterdir())
