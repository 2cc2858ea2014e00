"""Acceptance: GRPO on CPU with a tiny random model learns the quiz answer (mean reward near 0 -> >= 0.8)."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch", reason="GRPO needs the [train] extra")

from test_grpo_toy_env import QuizEnv, one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.grpo.config import GRPOConfig  # noqa: E402
from clinical_gym.trainers.grpo.train import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

STEPS = 20



def test_grpo_learns_the_right_first_answer(tmp_path):
    tokenizer = tiny_tokenizer()
    cfg = GRPOConfig(model="in-memory", env="QuizEnv", output_dir=str(tmp_path / "run"), total_steps=STEPS,
                     group_size=8, groups_per_step=2, num_minibatches=2, max_turn_tokens=3, max_episode_tokens=64,
                     learning_rate=1e-2, beta=0.0, seed=0, progress=False, report_to="none", save_every=STEPS)
    main(cfg, env_factory=QuizEnv, model=tiny_llama(tokenizer), tokenizer=tokenizer)

    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    rewards = [r["rollout/reward_mean"] for r in rows]
    assert len(rows) == STEPS
    assert rewards[0] <= 0.1, rewards
    assert rewards[-1] >= 0.8, rewards
    # two minibatches per batch: the second update is off-policy, so ratios leave 1 and the clip acts
    assert any(r["losses/clip_fraction"] > 0 for r in rows)
    assert max(r["rollout/logprob_gap"] for r in rows) < 1e-4  # rollout and trainer see the same tokens
