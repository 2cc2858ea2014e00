"""DAPO's dynamic sampling in a real GRPO run (tiny random model): groups whose rewards are all equal carry no
advantage and are dropped, and new cases are collected in their place, so every group the update trains on has
reward variance; with dynamic sampling off, equal-reward groups are trained on."""

from __future__ import annotations

import json
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="GRPO needs the [train] extra")

from test_grpo_toy_env import QuizCase, QuizEnv, one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.grpo import train as grpo  # noqa: E402
from clinical_gym.trainers.grpo.config import GRPOConfig  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FLAT_REWARD = 0.25
CASES = (QuizCase("flat-1", "say anything", "-"), QuizCase("flat-2", "say anything else", "-"),
         QuizCase("parity-1", "say something", "-"), QuizCase("parity-2", "say something else", "-"))


class FlatOrParityQuiz(QuizEnv):
    """``flat-*`` cases pay FLAT_REWARD for any reply (a group of them has no reward variance); ``parity-*`` cases
    pay 1 for a reply of even length, else 0 (a random model's group nearly always differs)."""

    def __init__(self) -> None:
        super().__init__(CASES)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, _, terminated, truncated, info = super().step(action)
        reward = FLAT_REWARD if self.case.id.startswith("flat") else float(len(action) % 2 == 0)
        info = {**info, "reward_components": {"answer": reward},
                "outcome": {"result": "scored", "success": reward == 1.0}}
        return obs, reward, terminated, truncated, info


def run(tmp_path, monkeypatch, **settings) -> tuple[list[list[float]], list[int], list[dict]]:
    """A 3-step GRPO run; the reward rows of the groups each update trained on, the size of every collection and
    the metric rows."""
    trained: list[list[float]] = []
    real_advantages = grpo.group_advantages

    def recording_advantages(rewards, *args, **kwargs):
        trained.extend(rewards.tolist())
        return real_advantages(rewards, *args, **kwargs)

    monkeypatch.setattr(grpo, "group_advantages", recording_advantages)
    collections: list[int] = []
    tokenizer = tiny_tokenizer()
    cfg = GRPOConfig(model="in-memory", env="FlatOrParityQuiz", output_dir=str(tmp_path), total_steps=3,
                     group_size=4, groups_per_step=2, num_minibatches=1, max_turn_tokens=3, max_episode_tokens=64,
                     learning_rate=1e-3, beta=0.0, seed=0, progress=False, report_to="none", save_every=3,
                     **settings)
    grpo.main(cfg, env_factory=FlatOrParityQuiz, model=tiny_llama(tokenizer), tokenizer=tokenizer,
              on_collect=[lambda batch: collections.append(len(batch))])
    metrics = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    return trained, collections, metrics


def has_variance(rewards: list[float]) -> bool:
    return len(set(rewards)) > 1


def test_groups_without_reward_variance_are_dropped_and_refilled(tmp_path, monkeypatch):
    trained, collections, metrics = run(tmp_path, monkeypatch, dynamic_sampling=True, max_refill_rounds=3)
    assert len(trained) == 3 * 2                                   # every step trains on groups_per_step groups
    assert all(has_variance(row) for row in trained), trained      # none of them without signal
    assert FLAT_REWARD not in {r for row in trained for r in row}  # no flat case reached the update
    # the flat cases that were drawn were collected, then replaced by collecting again within the same step
    assert len(collections) > 3 and sum(m["rollout/refill_rounds"] for m in metrics) >= 1
    assert [m["rollout/kept_groups"] for m in metrics] == [2.0, 2.0, 2.0]


def test_without_dynamic_sampling_equal_reward_groups_are_trained_on(tmp_path, monkeypatch):
    trained, collections, metrics = run(tmp_path, monkeypatch, dynamic_sampling=False, max_refill_rounds=3)
    assert len(collections) == 3 and len(trained) == 6            # one collection per step, nothing refilled
    assert [FLAT_REWARD] * 4 in trained                           # a flat group with zero advantages
    assert all(m["rollout/refill_rounds"] == 0 for m in metrics)
