"""The policy model (transformers, optionally with a peft LoRA adapter) and its reference policy."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import torch

from clinical_gym.llm import gguf_cache
from clinical_gym.trainers.common.config import TrainerConfig
from clinical_gym.trainers.common.logprobs import token_logprobs
from clinical_gym.trainers.common.lora_forward import install_fast_lora

VISION_PROCESSOR_FILES = ("processor_config.json", "preprocessor_config.json")


def load_model(cfg: TrainerConfig) -> tuple[Any, Any]:
    """Tokenizer and causal LM from ``cfg.model`` (``cfg.gguf_file`` for a GGUF file in that folder); a folder
    holding a multimodal processor (``processor_config.json`` or ``preprocessor_config.json``) gives the processor
    and the vision-language model (``AutoModelForImageTextToText``) instead."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = Path(cfg.model)
    if not cfg.gguf_file and any((folder / name).is_file() for name in VISION_PROCESSOR_FILES):
        from transformers import AutoModelForImageTextToText, AutoProcessor

        processor = AutoProcessor.from_pretrained(cfg.model)
        return AutoModelForImageTextToText.from_pretrained(cfg.model, dtype=getattr(torch, cfg.dtype)), processor
    path, gguf_file = gguf_cache.resolve(cfg.model, cfg.gguf_file)  # a GGUF file: its plain folder, converted once
    tokenizer = AutoTokenizer.from_pretrained(path, gguf_file=gguf_file)
    model = AutoModelForCausalLM.from_pretrained(path, gguf_file=gguf_file, dtype=getattr(torch, cfg.dtype))
    return model, tokenizer


def prepare_model(model: Any, cfg: TrainerConfig) -> Any:
    """Add the LoRA adapter when ``cfg.lora_r > 0`` (a model that already has one is kept as it is; either way its
    LoRA layers take ``lora_forward.fast_lora_forward``), enable
    gradient checkpointing when asked, and put the model in training mode. ``from_pretrained`` returns a model in
    eval mode, where transformers' layers neither checkpoint nor drop out: GRPO and TT-OPD trained that way (no
    checkpointing under ``--gradient-checkpointing``, no ``--lora-dropout``) until the mode was set here; the
    no-gradient passes and generation still switch to eval mode and back."""
    if cfg.gradient_checkpointing:
        enable_checkpointing(model)
    if cfg.lora_r and not hasattr(model, "peft_config"):
        from peft import LoraConfig, get_peft_model

        targets = cfg.lora_target_modules
        modules: str | list[str] = targets if targets == "all-linear" else [m.strip() for m in targets.split(",")]
        model = get_peft_model(model, LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                                                 target_modules=modules, task_type="CAUSAL_LM"))
    if hasattr(model, "peft_config"):
        install_fast_lora(model)  # same values as peft's LoRA forward, fewer passes over each output (lora_forward)
    return model.train()


def enable_checkpointing(model: Any) -> None:
    """Non-reentrant activation checkpointing of every decoder layer (what TRL's trainers turn on by default): the
    layers' activations are recomputed in the backward pass; passes without gradients (generation, reference and
    teacher logprobs) do not checkpoint."""
    enable = getattr(model, "activation_checkpointing_enable", None)  # transformers >= 5.x; older: the alias
    if enable is not None:
        enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})


def checkpointing(model: Any) -> bool:
    """Whether activation checkpointing is on in ``model`` (a transformers model, plain or wrapped by peft)."""
    return any(getattr(m, "gradient_checkpointing", False) is True for m in model.modules())


class Reference:
    """Log-probabilities under the reference policy π_ref: for a LoRA model, the same model with its adapters
    disabled (no extra memory); otherwise a frozen copy made at construction (or ``frozen``, one the caller made).
    Nothing when ``needed`` is False, LoRA or not (then ``available`` is False and the trainers skip the pass)."""

    def __init__(self, model: Any, needed: bool, frozen: Any | None = None) -> None:
        self.uses_adapters = hasattr(model, "peft_config")
        self.copy = None
        if needed and not self.uses_adapters:
            # ``frozen``: a copy made by the caller (a sharded model cannot be deep-copied; see frozen_copy)
            self.copy = frozen.eval().requires_grad_(False) if frozen is not None else frozen_copy(model, needed)
        # a LoRA model's reference costs no memory, but each use is a forward pass: only when needed
        self.available = needed and (self.uses_adapters or self.copy is not None)

    def logprobs(self, model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, loss_mask: torch.Tensor,
                 temperature: float, model_inputs: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        """``token_logprobs`` under π_ref (``model`` is the unwrapped policy, used with adapters disabled)."""
        if not self.available:
            raise RuntimeError("no reference model: it was not needed at construction")
        with torch.no_grad(), self._disabled(model):
            return token_logprobs(self.copy if self.copy is not None else model, input_ids, attention_mask, loss_mask,
                                  temperature, model_inputs)

    def _disabled(self, model: Any) -> Any:
        return model.disable_adapter() if self.uses_adapters else nullcontext()


def frozen_copy(model: Any, needed: bool) -> Any | None:
    """The full-fine-tuning reference copy ``Reference`` would make, made now (before the model is sharded), or
    None when no copy is needed (not needed, or a LoRA model, whose reference is itself with adapters off)."""
    if not needed or hasattr(model, "peft_config"):
        return None
    return copy.deepcopy(model).eval().requires_grad_(False)


@contextmanager
def eval_mode(model: Any) -> Iterator[None]:
    """Dropout off inside the block; the previous mode is restored after it."""
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)
