"""Episodes that end because a simulated actor failed (a patient, judge or world-model outage: truncated with
``info["error"]``) carry no training signal: the collector marks them, their loss mask is all 0, GRPO leaves them out
of their group's statistics, and the metrics count them."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="trainers need the [train] extra")

from test_grpo_toy_env import DONOR, QuizEnv, one_torch_thread  # noqa: E402,F401

from clinical_gym.rollout import EpisodeSpec, RolloutCollector, RolloutLimits, ScriptedPolicy, Trajectory, Turn  # noqa: E402
from clinical_gym.trainers.common.batch import pack  # noqa: E402
from clinical_gym.trainers.common.monitors import env_metrics, rollout_metrics  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.grpo.config import GRPOConfig  # noqa: E402
from clinical_gym.trainers.grpo.train import group_advantages, has_reward_variance, main  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class OutageQuiz(QuizEnv):
    """The quiz, with a simulator that is down for the episodes whose reset seed ``down(seed)`` picks (all when None)."""

    def __init__(self, down: Callable[[int | None], bool] | None = None) -> None:
        super().__init__((DONOR,))
        self.down = down

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        self.failing = self.down is None or self.down(seed)
        return super().reset(seed=seed, options=options)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.failing:
            return "The simulator failed.", 0.0, False, True, {"error": "POST /v1/chat: HTTP 503", "reward_components": {}}
        return super().step(action)


def made(generated: list[int], reward: float, error: str | None = None) -> Trajectory:
    turn = Turn(prompt_len=3, generated_ids=generated, logprobs=[0.0] * len(generated), finish_reason="stop", action="")
    return Trajectory(opening_ids=[3, 4, 5], messages=[], turns=[turn], group=0, reward=reward, error=error)


def test_the_collector_marks_errored_episodes_and_their_loss_mask_is_empty():
    collector = RolloutCollector(ScriptedPolicy(lambda m: "O"), lambda: OutageQuiz(down=lambda seed: seed == 1),
                                 limits=RolloutLimits(8, 64), num_envs=2)
    ok, down = collector.collect([EpisodeSpec(seed=0), EpisodeSpec(seed=1)])
    assert ok.error is None and ok.outcome["success"] and ok.terminated
    assert down.error == "POST /v1/chat: HTTP 503" and down.truncation == "env" and down.outcome is None
    assert down.success is None
    batch = pack([made([7, 8], 1.0), made([7, 8], 0.0, error="down")], [1.0, 1.0], pad_token_id=0)
    assert batch.loss_mask.sum(dim=1).tolist() == [2.0, 0.0]


def test_group_statistics_leave_errored_episodes_out():
    rewards = torch.tensor([[1.0, 0.0, 0.0, 9.0]])
    valid = torch.tensor([[True, True, True, False]])
    expected = group_advantages(torch.tensor([[1.0, 0.0, 0.0]]), scale=True, eps=1e-8)[0]
    got = group_advantages(rewards, scale=True, eps=1e-8, valid=valid)[0]
    assert torch.allclose(got[:3], expected) and got[3] == 0.0
    assert torch.allclose(group_advantages(rewards, False, 1e-8, valid)[0], torch.tensor([2 / 3, -1 / 3, -1 / 3, 0.0]))
    assert torch.equal(group_advantages(rewards, True, 1e-8, torch.zeros(1, 4, dtype=torch.bool)), torch.zeros(1, 4))
    cfg = GRPOConfig(model="unused")
    assert not has_reward_variance([made([1], 1.0), made([1], 0.0, error="down")], cfg)


def test_metrics_count_errored_episodes_apart():
    batch = [made([1], 1.0), made([1], 0.0), made([1], 0.0, error="down")]
    metrics = rollout_metrics(batch)
    assert metrics["rollout/errored_episodes"] == 1.0 and metrics["rollout/episodes"] == 3.0
    assert metrics["rollout/reward_mean"] == 0.5
    assert env_metrics(batch, "quiz")["env/quiz/error_rate"] == pytest.approx(1 / 3)


def grpo(tmp_path, name: str, **kw: Any) -> GRPOConfig:
    return GRPOConfig(model="in-memory", env="OutageQuiz", output_dir=str(tmp_path / name), total_steps=1,
                      group_size=4, groups_per_step=2, max_turn_tokens=3, max_episode_tokens=64, learning_rate=1e-2,
                      beta=0.0, seed=0, progress=False, report_to="none", dynamic_sampling=False, **kw)


def test_grpo_trains_around_an_outage_and_an_all_outage_step_changes_nothing(tmp_path):
    tokenizer = tiny_tokenizer()
    base = tiny_llama(tokenizer)
    model = copy.deepcopy(base)
    main(grpo(tmp_path, "all-down"), env_factory=lambda: OutageQuiz(), model=model, tokenizer=tokenizer)
    row = json.loads((tmp_path / "all-down" / "metrics.jsonl").read_text().splitlines()[-1])
    assert row["rollout/errored_episodes"] == 8.0 and row["env/OutageQuiz/error_rate"] == 1.0
    assert row["losses/policy_loss"] == 0.0
    assert all(torch.equal(v, base.state_dict()[k]) for k, v in model.state_dict().items())

    model = copy.deepcopy(base)
    main(grpo(tmp_path, "half-down"), env_factory=lambda: OutageQuiz(down=lambda seed: seed % 2 == 1), model=model,
         tokenizer=tokenizer)
    row = json.loads((tmp_path / "half-down" / "metrics.jsonl").read_text().splitlines()[-1])
    assert 0 < row["rollout/errored_episodes"] < 8 and row["losses/grad_norm"] == row["losses/grad_norm"]  # not NaN
