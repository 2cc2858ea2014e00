"""PPO settings (clipped policy and value losses, GAE over generated tokens, KL to the reference)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from clinical_gym.trainers.common.config import AGGREGATIONS, TrainerConfig, option

# Where the KL to the reference enters: "reward" (β·k1 taken from every generated token's reward, InstructGPT /
# TRL) or "loss" (β·k3 added to the loss, as in GRPO).
KL_MODES = ("reward", "loss")


@dataclass
class PPOConfig(TrainerConfig):
    """PPO settings; the shared ones are documented on ``TrainerConfig``. Equations: trainers/ppo/README.md.

    > Batches
        group_size: rollouts of the same case per step (1 is plain PPO; more gives the within-group reward std
        monitor a meaning). groups_per_step: cases per step (per process); a batch is groups_per_step x
        group_size episodes.

    > Advantages (Eq. 1-3)
        gamma, lam: the discount and the GAE lambda over generated tokens; 1.0 / 0.95 as in TRL's PPO trainer.
        whiten_advantages: shift and scale the batch's advantages to mean 0, std 1 (Eq. 3).

    > Objective (Eq. 4-8)
        epsilon_low / epsilon_high: the ratio's clip range [1 - eps_low, 1 + eps_high]; 0.2 / 0.2 is PPO's.
        value_clip: how far a value may move from its rollout estimate before the clipped value loss takes over
        (Eq. 5); none disables the clip. vf_coef: the value loss weight (TRL: 0.1). entropy_coef: the entropy
        bonus weight (Eq. 6; 0 in TRL's and OpenRLHF's LLM PPO). kl_coef / kl_mode: β and where the KL to the
        reference goes: "reward" (per-token k1 subtracted from the reward, Eq. 1) or "loss" (k3 in the loss,
        Eq. 7). loss_aggregation / loss_constant: how token losses are averaged (as in GRPO).
        num_epochs: passes over each batch (1: as many optimizer steps per batch as GRPO's mu = 1, so the two compare
        at one learning rate; TRL's 4 drifted at LoRA rates, trainers/ppo/README.md); num_minibatches: optimizer
        steps per pass.
        value_learning_rate: the value head's learning rate (none: learning_rate).
    """

    supports_fsdp: ClassVar[bool] = True

    output_dir: str = option("run folder: metrics.jsonl and checkpoints/", default="runs/ppo")
    group_size: int = option("rollouts per case (1: plain PPO)", default=4)
    groups_per_step: int = option("cases per training step (per process)", default=16)
    gamma: float = option("discount between consecutive generated tokens", default=1.0)
    lam: float = option("GAE lambda", default=0.95)
    whiten_advantages: bool = option("normalise the batch's advantages to mean 0, std 1", default=True)
    epsilon_low: float = option("lower clip range of the ratio", default=0.2)
    epsilon_high: float = option("upper clip range of the ratio", default=0.2)
    value_clip: float | None = option("clip range of the value around its rollout estimate (none: no clip)",
                                      default=0.2)
    vf_coef: float = option("weight of the value loss", default=0.1)
    entropy_coef: float = option("weight of the entropy bonus (0: logged only)", default=0.0)
    kl_coef: float = option("beta: weight of the KL to the reference; 0 disables it", default=0.05)
    kl_mode: str = option("where the KL goes: per-token k1 in the reward, or k3 in the loss", KL_MODES,
                          default="reward")
    loss_aggregation: str = option("how token losses are averaged", AGGREGATIONS, default="token-mean")
    loss_constant: int | None = option("normaliser in tokens for 'constant' aggregation (none: max_episode_tokens)",
                                       default=None)
    num_epochs: int = option("passes over each batch", default=1)
    num_minibatches: int = option("optimizer steps per pass over the batch", default=1)
    value_learning_rate: float | None = option("learning rate of the value head (none: learning_rate)", default=None)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.group_size < 1 or self.groups_per_step < 1:
            raise ValueError("group_size and groups_per_step must be >= 1")
        if self.num_epochs < 1 or self.num_minibatches < 1:
            raise ValueError("num_epochs and num_minibatches must be >= 1")
        if self.num_minibatches > self.groups_per_step * self.group_size:
            raise ValueError(f"num_minibatches ({self.num_minibatches}) exceeds the episodes per step "
                             f"({self.groups_per_step * self.group_size})")
        if not (0 <= self.gamma <= 1 and 0 <= self.lam <= 1):
            raise ValueError(f"gamma and lam must be in [0, 1], got {self.gamma}, {self.lam}")
        if not 0 <= self.epsilon_low < 1 or self.epsilon_high < 0:
            raise ValueError(f"need 0 <= epsilon_low < 1 and epsilon_high >= 0, got {self.epsilon_low}, "
                             f"{self.epsilon_high}")
        if self.value_clip is not None and self.value_clip <= 0:
            raise ValueError(f"value_clip must be > 0 (or none to disable it), got {self.value_clip}")
        if self.vf_coef < 0 or self.entropy_coef < 0 or self.kl_coef < 0:
            raise ValueError("vf_coef, entropy_coef and kl_coef must be >= 0")
        if self.kl_mode not in KL_MODES:
            raise ValueError(f"kl_mode must be one of {', '.join(KL_MODES)}; got {self.kl_mode!r}")
        if self.loss_aggregation not in AGGREGATIONS:
            raise ValueError(f"loss_aggregation must be one of {', '.join(AGGREGATIONS)}; "
                             f"got {self.loss_aggregation!r}")
        if self.loss_constant is not None and self.loss_constant < 1:
            raise ValueError(f"loss_constant must be >= 1, got {self.loss_constant}")
        if self.value_learning_rate is not None and self.value_learning_rate <= 0:
            raise ValueError(f"value_learning_rate must be > 0, got {self.value_learning_rate}")
