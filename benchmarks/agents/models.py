"""Model-backed agents: a local transformers model, an OpenAI-compatible endpoint, and a checkpoint written by our
trainers (a LoRA adapter over its base model, or full weights). Local models import torch when built; they decode
with ``temperature`` (0: greedy) in token mode, as the trainers' rollouts do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clinical_gym.benchmarks.agents.base import Agent
from clinical_gym.rollout.openai_policy import OpenAICompatPolicy

ADAPTER_CONFIG = "adapter_config.json"
FULL_WEIGHTS = "model.safetensors"


def split_gguf(path: str) -> tuple[str, str | None]:
    """A model folder and GGUF file name from ``folder/file.gguf``; a folder holding no ``config.json`` and exactly
    one ``.gguf`` file gives that file; anything else is a folder or hub id without a GGUF file."""
    p = Path(path).expanduser()
    if p.suffix == ".gguf":
        return str(p.parent), p.name
    if p.is_dir() and not (p / "config.json").exists():
        ggufs = sorted(p.glob("*.gguf"))
        if len(ggufs) == 1:
            return str(p), ggufs[0].name
    return str(p) if p.exists() else path, None


def load_causal_lm(path: str, with_model: bool = True) -> tuple[Any, Any]:
    """Tokenizer and (float32) model from a folder, a hub id in the local cache, or a GGUF file (nothing is
    downloaded); the model is None when ``with_model`` is False."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from clinical_gym.llm import gguf_cache

    folder, gguf = gguf_cache.resolve(*split_gguf(path))  # a GGUF file: its plain folder, converted once
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf, local_files_only=True)
    if not with_model:
        return tokenizer, None
    import torch

    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=torch.float32, local_files_only=True)
    return tokenizer, model.eval()


def _model_agent(kind: str, tokenizer: Any, model: Any, temperature: float) -> Agent:
    from clinical_gym.rollout.transformers_policy import TransformersPolicy

    return Agent(kind, TransformersPolicy(model, tokenizer, temperature=temperature), tokenizer=tokenizer)


def transformers_agent(path: str, temperature: float) -> Agent:
    tokenizer, model = load_causal_lm(path)
    return _model_agent(f"transformers model ({Path(path).name})", tokenizer, model, temperature)


def endpoint_agent(model: str, base_url: str | None, temperature: float, native_tools: bool = True) -> Agent:
    """A model behind an OpenAI-compatible chat endpoint; with ``native_tools`` it gets a tool environment's schemas
    as ``tools`` and answers with ``tool_calls`` (else it writes calls as text)."""
    policy = OpenAICompatPolicy(model=model, base_url=base_url, temperature=temperature, chat_logprobs=False,
                                native_tools=native_tools)
    return Agent(f"OpenAI-compatible endpoint ({model})", policy)


def checkpoint_weights(path: str | Path) -> Path:
    """The weights folder of a training checkpoint: ``path`` may be a run folder, its ``checkpoints/`` folder (the
    newest complete checkpoint is used), one ``step-N`` folder, or the weights folder itself."""
    from clinical_gym.trainers.common.checkpoint import latest_checkpoint

    p = Path(path).expanduser()
    for candidate in (p / "checkpoints", p):
        found = latest_checkpoint(candidate)
        if found is not None:
            p = found
            break
    if (p / "model").is_dir():
        p = p / "model"
    if not ((p / ADAPTER_CONFIG).is_file() or (p / FULL_WEIGHTS).is_file()):
        raise ValueError(f"no checkpoint in {path}: expected a run folder, a step-N folder, or a folder with "
                         f"{ADAPTER_CONFIG} (LoRA) or {FULL_WEIGHTS}")
    return p


def load_checkpoint_model(path: str | Path, base_model: str | None = None) -> tuple[Any, Any]:
    """Tokenizer and model of a checkpoint. A LoRA adapter is applied to ``base_model`` (default: the base recorded
    in the adapter's config) and merged; full weights load on their own. The tokenizer saved with the weights is
    used, else the base model's."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    weights = checkpoint_weights(path)
    adapter = weights / ADAPTER_CONFIG
    base = base_model or (json.loads(adapter.read_text(encoding="utf-8"))["base_model_name_or_path"]
                          if adapter.is_file() else None)
    if adapter.is_file():
        from peft import PeftModel

        tokenizer, model = load_causal_lm(base)
        model = PeftModel.from_pretrained(model, str(weights)).merge_and_unload()
    else:
        model = AutoModelForCausalLM.from_pretrained(str(weights), local_files_only=True)
        tokenizer = None
    if (weights / "tokenizer_config.json").is_file():
        tokenizer = AutoTokenizer.from_pretrained(str(weights), local_files_only=True)
    elif tokenizer is None:
        if base is None:
            raise ValueError(f"{weights} has no tokenizer: pass the base model (--base-model)")
        tokenizer = load_causal_lm(base, with_model=False)[0]
    return tokenizer, model.eval()


def checkpoint_agent(path: str, base_model: str | None, temperature: float) -> Agent:
    tokenizer, model = load_checkpoint_model(path, base_model)
    return _model_agent(f"trained checkpoint ({checkpoint_weights(path)})", tokenizer, model, temperature)
