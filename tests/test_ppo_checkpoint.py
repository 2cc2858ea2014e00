"""PPO resumes exactly: a run killed after step k and resumed ends with the same adapter (or weights), the same
value head and the same metrics as an uninterrupted run; checkpoints hold the value head and its optimizer state."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="trainers need the [train] extra")

from safetensors.torch import load_file  # noqa: E402
from test_grpo_toy_env import DONOR, HEART, QuizEnv, one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common.checkpoint import latest_checkpoint  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.ppo.config import PPOConfig  # noqa: E402
from clinical_gym.trainers.ppo.train import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

KILLED_AFTER, TOTAL = 2, 4


def two_case_quiz() -> QuizEnv:
    return QuizEnv((DONOR, HEART))


class Killed(Exception):
    """Stands in for SIGKILL: the run stops wherever it is, saving nothing."""


@pytest.fixture(scope="module")
def tiny() -> tuple[object, object]:
    tokenizer = tiny_tokenizer()
    return tokenizer, tiny_llama(tokenizer)


def ppo_config(run: Path, **overrides: object) -> PPOConfig:
    settings = dict(model="in-memory", env="QuizEnv", output_dir=str(run), total_steps=TOTAL, save_every=1,
                    keep_checkpoints=1, group_size=4, groups_per_step=2, num_epochs=2, num_minibatches=2,
                    max_turn_tokens=3, max_episode_tokens=64, learning_rate=1e-2, value_learning_rate=3e-2,
                    kl_coef=0.01, lora_r=4, lora_dropout=0.1, seed=3, progress=False, report_to="none")
    return PPOConfig(**{**settings, **overrides})


def metric_rows(run: Path) -> list[dict]:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.endswith("_s")} for r in rows]  # drop timings


# LoRA with the KL in the reward, and full fine-tuning (a frozen reference copy) with the KL in the loss
@pytest.mark.parametrize("settings", [{"lora_r": 4, "kl_mode": "reward"}, {"lora_r": 0, "kl_mode": "loss"}],
                         ids=["lora-kl-in-reward", "full-kl-in-loss"])
def test_resume_after_a_kill_matches_an_uninterrupted_run(tmp_path, tiny, settings):
    tokenizer, base = tiny
    main(ppo_config(tmp_path / "straight", **settings), env_factory=two_case_quiz, model=copy.deepcopy(base),
         tokenizer=tokenizer)

    interrupted = tmp_path / "interrupted"

    def dies_after_step_k() -> QuizEnv:
        found = latest_checkpoint(interrupted / "checkpoints")
        if found is not None and found.name == f"step-{KILLED_AFTER:06d}":
            raise Killed  # during the rollouts of step k + 1
        return two_case_quiz()

    with pytest.raises(Killed):
        main(ppo_config(interrupted, **settings), env_factory=dies_after_step_k, model=copy.deepcopy(base),
             tokenizer=tokenizer)
    assert len(metric_rows(interrupted)) == KILLED_AFTER
    torch.manual_seed(12345), np.random.seed(6), random.seed(7)  # whatever state the dead run left behind
    main(ppo_config(interrupted, resume=True, **settings), env_factory=two_case_quiz, model=copy.deepcopy(base),
         tokenizer=tokenizer)

    final = f"checkpoints/step-{TOTAL:06d}"
    weights = "model/adapter_model.safetensors" if settings["lora_r"] else "model/model.safetensors"
    for name in (weights, "value_head.safetensors"):
        straight, resumed = load_file(tmp_path / "straight" / final / name), load_file(interrupted / final / name)
        assert straight.keys() == resumed.keys() and straight
        assert all(torch.equal(straight[k], resumed[k]) for k in straight), name
    head = load_file(interrupted / final / "value_head.safetensors")
    assert head["linear.weight"].abs().sum() > 0  # training moved the value head off its zero start
    assert metric_rows(interrupted) == metric_rows(tmp_path / "straight")
    assert sorted(p.name for p in (interrupted / "checkpoints").iterdir()) == [f"step-{TOTAL:06d}"]  # pruned
    optimizer = torch.load(interrupted / final / "optimizer.pt", weights_only=False)
    policy_group, head_group = optimizer["param_groups"]  # the value head has its own group, learning rate, state
    assert head_group["initial_lr"] == 3e-2 and policy_group["initial_lr"] == 1e-2
    assert all(i in optimizer["state"] for i in head_group["params"])
