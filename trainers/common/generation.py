"""The rollout policy a trainer generates with: the training model itself (transformers), a vLLM engine inside the
training process (colocate), or a vLLM server (server); vLLM engines are kept in sync with the training model.
Every trainer builds its policy here, and after each update calls ``sync_generation_policy`` and logs
``engine_metrics``. Commands for GPU runs: docs/gpu.md."""

from __future__ import annotations

import os
from typing import Any

from clinical_gym.rollout import Policy
from clinical_gym.rollout.selection import choose_engine
from clinical_gym.trainers.common.config import TrainerConfig


def generation_engine(cfg: TrainerConfig) -> str:
    """``"transformers"`` or ``"vllm"`` for ``cfg`` (``ValueError`` when vLLM is asked for but cannot run)."""
    return choose_engine(cfg.generation_engine, mode=cfg.vllm_mode)


def generation_policy(cfg: TrainerConfig, model: Any, tokenizer: Any) -> Policy:
    """The rollout policy for ``cfg.generation_engine`` and ``cfg.vllm_mode``: a ``TransformersPolicy`` over the
    training model (``TransformersVLMPolicy`` when ``tokenizer`` is a vision-language model's processor), a ``VLLMPolicy`` (colocate) loaded from ``cfg.model``, or a ``VLLMServerPolicy`` (server) at
    ``cfg.vllm_server_url``. A vLLM policy gets the training model's current weights (or LoRA adapter) at once, so
    resumed and LoRA runs start in sync. ``model`` is the unwrapped causal LM."""
    if generation_engine(cfg) == "transformers":
        from clinical_gym.rollout.vision import is_processor

        if is_processor(tokenizer):  # a vision-language model and its processor
            from clinical_gym.rollout.vlm_policy import TransformersVLMPolicy

            return TransformersVLMPolicy(model, tokenizer, temperature=cfg.temperature, top_p=cfg.top_p)
        from clinical_gym.rollout.transformers_policy import TransformersPolicy

        return TransformersPolicy(model, tokenizer, temperature=cfg.temperature, top_p=cfg.top_p)
    state = _process_state()
    adapter_dir = cfg.vllm_adapter_dir or os.path.join(cfg.output_dir, "vllm_adapters")
    sync = {"lora_sync": cfg.vllm_lora_sync, "sync_every": cfg.vllm_sync_every}
    policy: Any
    if cfg.vllm_mode == "server":
        from clinical_gym.rollout.vllm_server import VLLMServerPolicy

        policy = VLLMServerPolicy(cfg.vllm_server_url, temperature=cfg.temperature, top_p=cfg.top_p,
                                  timeout=cfg.vllm_server_timeout, adapter_dir=adapter_dir,
                                  is_main_process=state.is_main_process, barrier=state.wait_for_everyone, **sync)
    else:
        from clinical_gym.rollout.vllm_policy import VLLMPolicy

        policy = VLLMPolicy(vllm_model_path(cfg), temperature=cfg.temperature, top_p=cfg.top_p,
                            adapter_dir=os.path.join(adapter_dir, f"rank{state.process_index}"), **sync,
                            **colocate_engine_kwargs(cfg, state.process_index))
    policy.sync_weights(model, force=True)
    return policy


def colocate_engine_kwargs(cfg: TrainerConfig, process_index: int = 0) -> dict[str, Any]:
    """``vllm.LLM`` arguments for a colocated engine: GPU share, dtype, context length, LoRA slots when adapters
    are synced, and a per-process seed."""
    kwargs: dict[str, Any] = {"gpu_memory_utilization": cfg.vllm_gpu_memory_utilization, "dtype": cfg.dtype,
                              "seed": cfg.seed + process_index}
    if cfg.vllm_max_model_len is not None:
        kwargs["max_model_len"] = cfg.vllm_max_model_len
    if cfg.lora_r > 0 and cfg.vllm_lora_sync == "adapter":
        from clinical_gym.rollout.vllm_sync import vllm_lora_rank

        kwargs.update(enable_lora=True, max_lora_rank=vllm_lora_rank(cfg.lora_r), max_loras=1)
    return kwargs


def vllm_model_path(cfg: TrainerConfig) -> str:
    """What vLLM loads: ``cfg.model``, or the GGUF file inside it when ``cfg.gguf_file`` is set."""
    return os.path.join(cfg.model, cfg.gguf_file) if cfg.gguf_file else cfg.model


def sync_generation_policy(policy: Policy, model: Any) -> bool:
    """Push ``model``'s weights to a vLLM policy after an update (a no-op that returns False for policies that
    generate with the training model itself)."""
    sync = getattr(policy, "sync_weights", None)
    return bool(sync(model)) if sync is not None else False


def engine_metrics(policy: Policy) -> dict[str, float]:
    """The ``engine/*`` figures of a vLLM policy since the last call (weight version, syncs, staleness of the
    batches generated); empty for policies that generate with the training model itself."""
    metrics = getattr(policy, "metrics", None)
    return metrics() if metrics is not None else {}


def _process_state() -> Any:
    """accelerate's view of this process (index, main or not, barrier); a single process without accelerate."""
    try:
        from accelerate import PartialState
    except ImportError:  # pragma: no cover - accelerate ships with the [train] extra
        from types import SimpleNamespace

        return SimpleNamespace(process_index=0, is_main_process=True, wait_for_everyone=lambda: None)
    return PartialState()
