"""Acceptance: PPO on CPU with a tiny random model learns the quiz answer that GRPO learns in
``test_grpo_learning.py`` (mean reward near 0 -> >= 0.8), and its value head learns to predict the reward."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch", reason="PPO needs the [train] extra")

from test_grpo_toy_env import QuizEnv, one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.ppo.config import PPOConfig  # noqa: E402
from clinical_gym.trainers.ppo.train import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

STEPS = 20


def test_ppo_learns_the_right_first_answer(tmp_path):
    tokenizer = tiny_tokenizer()
    cfg = PPOConfig(model="in-memory", env="QuizEnv", output_dir=str(tmp_path / "run"), total_steps=STEPS,
                    group_size=8, groups_per_step=2, num_epochs=2, num_minibatches=2, max_turn_tokens=3,
                    max_episode_tokens=64, learning_rate=1e-2, kl_coef=0.0, seed=0, progress=False, report_to="none",
                    save_every=STEPS, entropy_coef=0.01)
    # the entropy bonus keeps the policy exploring until it finds the answer: without it, seeds 0 and 7 of 0-7 ended
    # at 0.12 and 0.0 (the policy settled on a wrong answer); with it all eight ended at >= 0.83 over the last three
    # steps (ad hoc seed sweep after the sampler change of 2026-11-29)
    main(cfg, env_factory=QuizEnv, model=tiny_llama(tokenizer), tokenizer=tokenizer)

    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    rewards = [r["rollout/reward_mean"] for r in rows]
    assert len(rows) == STEPS
    assert rewards[0] <= 0.1, rewards
    assert sum(rewards[-3:]) / 3 >= 0.8, rewards
    # the value head starts at 0 and ends near the reward it now earns (the return of every generated token)
    values = [r["rollout/value_mean"] for r in rows]
    assert values[0] == 0.0 and values[-1] >= 0.5, values
    assert all(r["losses/value_loss"] >= 0 for r in rows)
    assert rows[-1]["losses/entropy"] < rows[0]["losses/entropy"]  # the policy sharpens on the answer
    # two epochs of two minibatches: later updates are off-policy, so ratios leave 1 and the clip acts
    assert any(r["losses/clip_fraction"] > 0 for r in rows)
    assert max(r["rollout/logprob_gap"] for r in rows) < 1e-4  # rollout and trainer see the same tokens
