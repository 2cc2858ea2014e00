"""The rollout policy a trainer generates with: the training model itself (transformers) or a vLLM engine that is
kept in sync with it. Every trainer builds its policy here."""

from __future__ import annotations

from typing import Any

from clinical_gym.rollout import Policy
from clinical_gym.rollout.selection import choose_engine
from trainers.common.config import TrainerConfig


def generation_policy(cfg: TrainerConfig, model: Any, tokenizer: Any) -> Policy:
    """The rollout policy for ``cfg.generation_engine``: a ``TransformersPolicy`` over the training model, or a
    ``VLLMPolicy`` loaded from ``cfg.model`` with the training model's weights synced in."""
    if choose_engine(cfg.generation_engine) == "vllm":
        from clinical_gym.rollout.vllm_policy import VLLMPolicy

        policy = VLLMPolicy(cfg.model, temperature=cfg.temperature, top_p=cfg.top_p,
                            gpu_memory_utilization=cfg.vllm_gpu_memory_utilization)
        policy.sync_weights(model)
        return policy
    from clinical_gym.rollout.transformers_policy import TransformersPolicy

    return TransformersPolicy(model, tokenizer, temperature=cfg.temperature, top_p=cfg.top_p)
