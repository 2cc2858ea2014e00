"""AdamW over the trainable parameters and a warm-up + decay learning-rate schedule."""

from __future__ import annotations

from typing import Any

import torch

from clinical_gym.trainers.common.config import TrainerConfig

SCHEDULE_NAMES = {"constant": "constant_with_warmup", "linear": "linear", "cosine": "cosine"}


def make_optimizer(model: torch.nn.Module, cfg: TrainerConfig) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("the model has no trainable parameters")
    return torch.optim.AdamW(params, lr=cfg.learning_rate, betas=(cfg.adam_beta1, cfg.adam_beta2),
                             eps=cfg.adam_epsilon, weight_decay=cfg.weight_decay)


def make_scheduler(optimizer: torch.optim.Optimizer, cfg: TrainerConfig, total_updates: int) -> Any:
    """Linear warm-up over ``cfg.warmup_steps`` optimizer steps, then ``cfg.lr_scheduler`` until ``total_updates``."""
    from transformers import get_scheduler

    return get_scheduler(SCHEDULE_NAMES[cfg.lr_scheduler], optimizer, num_warmup_steps=cfg.warmup_steps,
                         num_training_steps=total_updates)
