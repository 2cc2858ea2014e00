"""Collapse monitors and environment metrics computed from a step's trajectories.

Logged every step so that failure modes show early: turns per episode falling (multi-turn collapse), tool calls
per episode, reply length exploding or vanishing, truncation rising, within-group reward std reaching 0 (no
learning signal), KL to the reference drifting, clip fraction and grad norm (update size).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from clinical_gym.registration import ENVIRONMENTS
from clinical_gym.rollout import Trajectory

# Every collapse monitor a trainer logs each step (the last three come from the update).
COLLAPSE_MONITORS = (
    "rollout/turns_per_episode",
    "rollout/tool_calls_per_episode",
    "rollout/gen_tokens_per_turn",
    "rollout/gen_tokens_per_episode",
    "rollout/truncation_rate",
    "rollout/group_reward_std",
    "losses/kl_ref",
    "losses/clip_fraction",
    "losses/grad_norm",
)


def rollout_metrics(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """Episode-shape and reward statistics of a batch; groups are the trajectories sharing ``group``. Episodes that
    ended with an error (a simulator, judge or world-model outage; out of the loss) are counted in
    ``rollout/errored_episodes`` and left out of the reward statistics."""
    turns = [len(t.turns) for t in trajectories]
    generated = [t.generated_tokens for t in trajectories]
    scored = [t for t in trajectories if t.error is None]
    rewards = np.array([t.reward for t in scored] or [0.0], dtype=float)
    groups: dict[object, list[float]] = defaultdict(list)
    for t in scored:
        groups[t.group].append(t.reward)
    group_stds = [float(np.std(r)) for r in groups.values()]
    all_turns = [turn for t in trajectories for turn in t.turns]
    return {
        "rollout/episodes": float(len(trajectories)),
        "rollout/errored_episodes": float(len(trajectories) - len(scored)),
        "rollout/reward_mean": float(rewards.mean()),
        "rollout/reward_std": float(rewards.std()),
        "rollout/turns_per_episode": float(np.mean(turns)),
        "rollout/tool_calls_per_episode": float(np.mean([t.tool_calls for t in trajectories])),
        "rollout/gen_tokens_per_turn": float(sum(generated) / max(sum(turns), 1)),
        "rollout/gen_tokens_per_episode": float(np.mean(generated)),
        "rollout/truncation_rate": float(np.mean([t.truncated or any(x.truncated for x in t.turns)
                                                  for t in trajectories])),
        "rollout/turn_truncation_rate": float(np.mean([x.truncated for x in all_turns])) if all_turns else 0.0,
        "rollout/group_reward_std": float(np.mean(group_stds)) if group_stds else 0.0,
        "rollout/zero_std_groups": float(np.mean([s == 0 for s in group_stds])) if group_stds else 0.0,
    }


def env_metrics(trajectories: Sequence[Trajectory], domain: str) -> dict[str, float]:
    """``env/<domain>/*``: success rate (episodes with an outcome), mean reward and mean of each reward component
    (episodes that ended with an error left out of the means), and the share of episodes that ended with an error."""
    prefix = f"env/{domain}"
    errored = sum(t.error is not None for t in trajectories)
    scored = [t for t in trajectories if t.error is None] or list(trajectories)
    out = {f"{prefix}/reward": float(np.mean([t.reward for t in scored])),
           f"{prefix}/error_rate": errored / len(trajectories)}
    outcomes = [t.success for t in trajectories if t.success is not None]
    out[f"{prefix}/success_rate"] = float(np.mean(outcomes)) if outcomes else 0.0
    out[f"{prefix}/finished_rate"] = len(outcomes) / len(trajectories)
    names = sorted({name for t in trajectories for name in t.reward_components})
    for name in names:
        out[f"{prefix}/{name}"] = float(np.mean([t.reward_components.get(name, 0.0) for t in scored]))
    return out


def env_domain(env_id: str) -> str:
    """The ``clinical_gym.domains`` package of a registered clinical-gym id (``ClinicalInquiry-v1`` -> ``inquiry``,
    ``Triage-v1`` -> ``triage``), else the id's name without its version."""
    name = env_id.split(":")[-1]
    domain = next((e.domain for e in ENVIRONMENTS if e.id == name), "")
    return domain or name.rsplit("-v", 1)[0]
