"""Episode outcomes and the cosine length reward (TT-OPD Eq. 3) as a transform of ``Trajectory`` batches, usable
by any trainer. Imports no torch.

The transform replaces each episode's reward (the environment's) with
``CosineLengthReward(correct, L, truncated)`` where ``correct`` comes from the terminal outcome
(``outcome_correct``), ``L`` is the number of tokens the model generated over all turns (environment tokens do not
count) and ``truncated`` means a limit stopped the episode before the environment ended it. The environment's reward
stays on the trajectory (for ``env/*`` metrics); only the training signal changes.

* GRPO: ``--cosine-reward`` (``GRPOConfig.cosine_reward``) computes group advantages from these rewards, and
  dynamic sampling drops groups whose shaped rewards are all equal.
* PPO, or a trainer of your own: ``rewards = cosine_length_rewards(trajectories, CosineLengthReward(...))``, then
  use ``rewards[i]`` wherever episode ``i``'s reward is used, e.g. as the reward at the end of its last turn (the
  other turns' rewards set to 0) before GAE.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clinical_gym.rewards.cosine_length import CosineLengthReward
from clinical_gym.rollout import Trajectory


def outcome_correct(trajectory: Trajectory) -> bool:
    """Whether an episode ended correct: ``outcome["success"]`` when the outcome has it, else
    ``outcome["result"] == "correct"``, else a positive reward. An episode without an outcome (stopped by a limit
    before the environment ended it) is not correct."""
    outcome = trajectory.outcome
    if outcome is None:
        return False
    if "success" in outcome:
        return bool(outcome["success"])
    if "result" in outcome:
        return outcome["result"] == "correct"
    return trajectory.reward > 0


def cosine_length_reward_of(trajectory: Trajectory, reward: CosineLengthReward) -> float:
    """Eq. 3 for one episode: its outcome, its generated tokens, and whether a limit cut it."""
    return reward(outcome_correct(trajectory), trajectory.generated_tokens, trajectory.truncated)


def cosine_length_rewards(trajectories: Sequence[Trajectory], reward: CosineLengthReward) -> list[float]:
    """Eq. 3 for each episode, in order."""
    return [cosine_length_reward_of(t, reward) for t in trajectories]


def cosine_reward_from(cfg: Any) -> CosineLengthReward:
    """The ``CosineLengthReward`` of a config with ``cosine_r_max``, ``cosine_r_min``, ``cosine_r_wrong``,
    ``cosine_r_penalty`` and ``cosine_max_length`` (``GRPOConfig`` and its subclasses)."""
    return CosineLengthReward(r_max=cfg.cosine_r_max, r_min=cfg.cosine_r_min, r_wrong=cfg.cosine_r_wrong,
                              r_penalty=cfg.cosine_r_penalty, max_length=cfg.cosine_max_length)
