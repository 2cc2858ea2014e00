"""GRPO settings (group-relative policy optimisation with DAPO's clip-higher and dynamic sampling)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from clinical_gym.trainers.common.config import AGGREGATIONS, TrainerConfig, option


@dataclass
class GRPOConfig(TrainerConfig):
    """GRPO settings; the shared ones are documented on ``TrainerConfig``. Equations: trainers/grpo/README.md.

    > Groups
        group_size: G, rollouts of the same case per group (DoctorAgent-RL and Doctor-R1: 8; DiagGym: 5).
        groups_per_step: cases per training step (per process); the batch is groups_per_step x G episodes.
        scale_rewards: divide the advantage by the group's reward std (Eq. 1); False keeps r - mean (Dr. GRPO).
        advantage_epsilon: eps in the Eq. 1 denominator.

    > Objective
        epsilon_low / epsilon_high: the clip range [1 - eps_low, 1 + eps_high] of the ratio (Eq. 3); 0.2 / 0.28
        is DAPO's clip-higher, used by DoctorAgent-RL.
        beta: weight of the k3 KL to the reference (Eq. 4); DoctorAgent-RL's paper uses 0.001, 0 removes it.
        entropy_coef: weight of the entropy bonus, - c * H(pi_theta) per generated token aggregated like the
        surrogate (DoctorAgent-RL, Table 2: 0.001; 0 leaves it out and skips computing the entropy).
        loss_aggregation: "token-mean" (DAPO), "sequence-mean" (GRPO, DoctorAgent-RL's per-sequence average) or
        "constant" (Dr. GRPO: divide by groups x G x loss_constant), Eq. 5.
        loss_constant: the Dr. GRPO normaliser in tokens per sequence (default: max_episode_tokens).
        num_iterations: mu, passes over each batch; num_minibatches: optimizer steps per pass. Any value above 1
        makes later updates off-policy, so the ratio differs from 1 and the clip acts.

    > Dynamic sampling (DAPO)
        dynamic_sampling: drop groups whose rewards are all equal (zero advantage) and refill with new cases.
        max_refill_rounds: most extra collection rounds per step; if groups are still missing, the step trains on
        the groups it has (on all collected groups, with zero advantages, when none has variance).

    > Reward (opt-in length control, clinical_gym.trainers.common.length_reward)
        cosine_reward: train on the cosine length reward of TT-OPD (Eq. 3) instead of the environment's reward: a
        correct episode earns cosine_r_max at 0 generated tokens falling to cosine_r_min at cosine_max_length, a
        wrong one 0 falling to -cosine_r_wrong, an episode cut by a limit (or longer) cosine_r_penalty.
    """

    supports_fsdp: ClassVar[bool] = True

    output_dir: str = option("run folder: metrics.jsonl and checkpoints/", default="runs/grpo")
    group_size: int = option("G: rollouts per case", default=8)
    groups_per_step: int = option("cases per training step (per process)", default=16)
    scale_rewards: bool = option("divide advantages by the group reward std", default=True)
    advantage_epsilon: float = option("epsilon in the advantage denominator", default=1e-4)
    epsilon_low: float = option("lower clip range of the ratio", default=0.2)
    epsilon_high: float = option("upper clip range of the ratio (DAPO clip-higher)", default=0.28)
    beta: float = option("KL coefficient (k3 estimator); 0 disables the KL term", default=0.001)
    entropy_coef: float = option("weight of the entropy bonus (DoctorAgent-RL: 0.001); 0 disables it", default=0.0)
    loss_aggregation: str = option("how token losses are averaged (Eq. 5)", AGGREGATIONS, default="token-mean")
    loss_constant: int | None = option("Dr. GRPO normaliser in tokens (none: max_episode_tokens)", default=None)
    num_iterations: int = option("mu: passes over each batch", default=1)
    num_minibatches: int = option("optimizer steps per pass over the batch", default=2)
    dynamic_sampling: bool = option("drop zero-variance groups and refill", default=True)
    max_refill_rounds: int = option("most extra collection rounds per step", default=3)
    cosine_reward: bool = option("train on the cosine length reward (TT-OPD Eq. 3) instead of the environment's",
                                 default=False)
    cosine_r_max: float = option("cosine reward: R_max, a correct answer of 0 tokens", default=1.1)
    cosine_r_min: float = option("cosine reward: R_min, a correct answer of L_max tokens", default=0.7)
    cosine_r_wrong: float | None = option("cosine reward: magnitude of a wrong answer's reward at L_max "
                                          "(none: |R_min| as printed in Eq. 3)", default=0.3)
    cosine_r_penalty: float = option("cosine reward: R_penalty, an episode cut by a limit or over L_max",
                                     default=-0.5)
    cosine_max_length: int = option("cosine reward: L_max, generated tokens per episode", default=12288)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.group_size < 2:
            raise ValueError(f"group_size must be >= 2 (advantages compare rollouts of a group), got {self.group_size}")
        if self.groups_per_step < 1 or self.num_iterations < 1 or self.num_minibatches < 1:
            raise ValueError("groups_per_step, num_iterations and num_minibatches must be >= 1")
        if self.num_minibatches > self.groups_per_step * self.group_size:
            raise ValueError(f"num_minibatches ({self.num_minibatches}) exceeds the episodes per step "
                             f"({self.groups_per_step * self.group_size})")
        if not 0 <= self.epsilon_low < 1 or self.epsilon_high < 0:
            raise ValueError(f"need 0 <= epsilon_low < 1 and epsilon_high >= 0, got {self.epsilon_low}, "
                             f"{self.epsilon_high}")
        if self.beta < 0 or self.advantage_epsilon <= 0:
            raise ValueError("beta must be >= 0 and advantage_epsilon > 0")
        if self.entropy_coef < 0:
            raise ValueError(f"entropy_coef must be >= 0 (a bonus for entropy), got {self.entropy_coef}")
        if self.loss_aggregation not in AGGREGATIONS:
            raise ValueError(f"loss_aggregation must be one of {', '.join(AGGREGATIONS)}; "
                             f"got {self.loss_aggregation!r}")
        if self.loss_constant is not None and self.loss_constant < 1:
            raise ValueError(f"loss_constant must be >= 1, got {self.loss_constant}")
        if self.max_refill_rounds < 0:
            raise ValueError(f"max_refill_rounds must be >= 0, got {self.max_refill_rounds}")
        from clinical_gym.rewards.cosine_length import CosineLengthReward  # here: the rewards package is not light

        CosineLengthReward(self.cosine_r_max, self.cosine_r_min, self.cosine_r_wrong, self.cosine_r_penalty,
                           self.cosine_max_length)  # raises ValueError on bad constants
