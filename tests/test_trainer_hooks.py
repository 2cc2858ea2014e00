"""Every trainer (GRPO, PPO, TT-OPD) hands each batch of rollouts to its ``on_collect`` hooks, e.g. the experience
recorder that stores a training step's good turns (issue 11)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="trainers need the [train] extra")

from test_grpo_toy_env import QuizEnv, one_torch_thread  # noqa: E402,F401

from clinical_gym.rollout import Trajectory  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")
SETTINGS = dict(model="in-memory", env="QuizEnv", total_steps=2, group_size=2, groups_per_step=2, num_minibatches=1,
                max_turn_tokens=3, max_episode_tokens=64, seed=0, progress=False, report_to="none", save_every=2)


def ppo():
    from clinical_gym.trainers.ppo.config import PPOConfig
    from clinical_gym.trainers.ppo.train import main

    return PPOConfig, main, {"num_epochs": 1}


def grpo():
    from clinical_gym.trainers.grpo.config import GRPOConfig
    from clinical_gym.trainers.grpo.train import main

    return GRPOConfig, main, {"dynamic_sampling": False}


def ttopd():
    from clinical_gym.trainers.ttopd.config import TTOPDConfig
    from clinical_gym.trainers.ttopd.train import main

    return TTOPDConfig, main, {"dynamic_sampling": False}


@pytest.mark.parametrize("trainer", [grpo, ppo, ttopd], ids=lambda t: t.__name__)
def test_on_collect_hooks_see_every_batch(trainer, tmp_path):
    """Also: each step's rollouts run with no gradient left from the previous update (kept, a full fine-tuning run
    would carry a float32 copy of every weight through the rollout and the no-gradient passes; issue 23)."""
    config, main, extra = trainer()
    batches: list[list[Trajectory]] = []
    tokenizer = tiny_tokenizer()
    model = tiny_llama(tokenizer)
    gradients_held: list[bool] = []

    def note_gradients(_: list[Trajectory]) -> None:
        gradients_held.append(any(p.grad is not None for p in model.parameters()))

    cfg = config(**SETTINGS, **extra, output_dir=str(tmp_path / "run"))
    main(cfg, env_factory=QuizEnv, model=model, tokenizer=tokenizer, on_collect=[batches.append, note_gradients])
    assert len(batches) >= 2  # at least one collect call per step
    assert all(isinstance(t, Trajectory) and t.turns for batch in batches for t in batch)
    assert sum(len(b) for b in batches) >= 2 * cfg.group_size * cfg.groups_per_step
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    assert len(gradients_held) >= 2 and not any(gradients_held)  # the second step's rollouts follow an update
