"""Keeping a vLLM engine's weights in step with a training model: version bookkeeping (``WeightVersions``), the
shared ``sync_weights`` logic of both vLLM policies (``SyncedEngine``), and the model-side helpers (change
fingerprints, weights under vLLM's names, LoRA adapter folders). torch is imported only by the helpers that read a
model.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

LoraSync = Literal["adapter", "merged"]
LORA_SYNC_MODES: tuple[str, ...] = ("adapter", "merged")
# LoRA ranks vLLM's LoRA config accepts for max_lora_rank; an adapter of rank r needs the smallest one >= r.
VLLM_LORA_RANKS = (8, 16, 32, 64, 128, 256, 320, 512)


@dataclass(frozen=True)
class GenerationRecord:
    """One ``generate`` call: the weight version the engine served, and how many updates behind the model it was."""

    version: int
    staleness: int
    prompts: int


class WeightVersions:
    """Which weights an engine serves, for logging and for deciding when to push.

    ``model_version`` counts the distinct weight states ``observe`` has seen (0: none yet, the engine serves what it
    was loaded with); ``engine_version`` is the model version the engine serves. A state is pushed when it is new and
    at least ``sync_every`` versions ahead of the engine (or when forced); an unchanged state is skipped. Each
    ``generate`` call is recorded with its version and staleness (``model_version - engine_version``).
    """

    def __init__(self, sync_every: int = 1) -> None:
        if sync_every < 1:
            raise ValueError(f"sync_every must be >= 1, got {sync_every}")
        self.sync_every = sync_every
        self.model_version = 0
        self.engine_version = 0
        self.pushes = 0
        self.skipped = 0
        self.deferred = 0
        self.sync_seconds = 0.0
        self.records: list[GenerationRecord] = []
        self._fingerprint: tuple[float, ...] | None = None

    def observe(self, fingerprint: tuple[float, ...], force: bool = False) -> bool:
        """Register the model's current weights; True when they should be pushed to the engine now."""
        if fingerprint != self._fingerprint:
            self._fingerprint = fingerprint
            self.model_version += 1
        elif not force:
            self.skipped += 1
            return False
        if force or self.model_version - self.engine_version >= self.sync_every:
            return True
        self.deferred += 1
        return False

    def pushed(self, seconds: float) -> int:
        """Record a finished push; returns the push number (1 for the first), which names adapter versions."""
        self.engine_version = self.model_version
        self.pushes += 1
        self.sync_seconds += seconds
        return self.pushes

    def record(self, prompts: int) -> GenerationRecord:
        """Record a ``generate`` call served with the current engine weights."""
        entry = GenerationRecord(self.engine_version, self.model_version - self.engine_version, prompts)
        self.records.append(entry)
        return entry

    @property
    def last(self) -> GenerationRecord | None:
        """The latest ``generate`` call's record."""
        return self.records[-1] if self.records else None

    def metrics(self, reset: bool = True) -> dict[str, float]:
        """``engine/*`` figures: versions, pushes, skipped and deferred syncs, seconds spent syncing, and the mean
        and max staleness of the generate calls since the last ``metrics(reset=True)``."""
        stale = [r.staleness for r in self.records]
        out = {"engine/weight_version": float(self.engine_version), "engine/model_version": float(self.model_version),
               "engine/syncs": float(self.pushes), "engine/skipped_syncs": float(self.skipped),
               "engine/deferred_syncs": float(self.deferred), "engine/sync_s": self.sync_seconds,
               "engine/staleness_mean": sum(stale) / len(stale) if stale else 0.0,
               "engine/staleness_max": float(max(stale, default=0))}
        if reset:
            self.records = []
        return out


class SyncedEngine:
    """What both vLLM policies share: ``sync_weights`` with change detection and bookkeeping (``self.versions``).

    Subclasses set ``versions`` and ``lora_sync`` and implement ``_push_adapter(model, number)`` (a peft model's
    adapter as a new LoRA version) and ``_push_full(model)`` (every weight, a peft model's adapters merged in).
    """

    versions: WeightVersions
    lora_sync: str = "adapter"

    def sync_weights(self, model: Any, *, force: bool = False) -> bool:
        """Push ``model``'s weights to the engine when they changed since the last call (and ``sync_every`` allows),
        or always with ``force``. A peft model sends its LoRA adapter as a new version (``lora_sync="adapter"``) or
        its merged weights (``"merged"``); other models send all weights. Returns whether anything was pushed.

        Pass the causal LM itself (unwrapped from DDP, no value head); changes are detected from the values of the
        trainable parameters (all parameters when none is trainable)."""
        if not self.versions.observe(weights_fingerprint(model), force):
            return False
        began = time.perf_counter()
        if self.lora_sync == "adapter" and is_peft_model(model):
            self._push_adapter(model, self.versions.pushes + 1)
        else:
            self._push_full(model)
        self.versions.pushed(time.perf_counter() - began)
        return True

    def metrics(self, reset: bool = True) -> dict[str, float]:
        """The engine's ``engine/*`` figures (see ``WeightVersions.metrics``)."""
        return self.versions.metrics(reset)

    def _push_adapter(self, model: Any, number: int) -> None:
        raise NotImplementedError

    def _push_full(self, model: Any) -> None:
        raise NotImplementedError


# -- model-side helpers ----------------------------------------------------------------------------------------
def is_peft_model(model: Any) -> bool:
    """Whether ``model`` is a peft model (it has adapters)."""
    return hasattr(model, "peft_config") and hasattr(model, "merge_adapter")


def weights_fingerprint(model: Any) -> tuple[float, ...]:
    """A summary of the trainable parameters' values (all parameters when none is trainable) that changes whenever
    an optimizer step changes them: the L1 and L2 norms of each tensor, accumulated in float64."""
    import torch

    params = [p for p in model.parameters() if p.requires_grad] or list(model.parameters())
    with torch.no_grad():
        norms = [torch.linalg.vector_norm(p.detach(), ord=order, dtype=torch.float64)
                 for p in params for order in (1, 2)]
        return tuple(torch.stack(norms).cpu().tolist()) if norms else ()


def vllm_weights(model: Any) -> Iterator[tuple[str, Any]]:
    """``(name, tensor)`` for every weight under the names vLLM's ``load_weights`` expects. A peft model's
    adapters are merged while it is read (and unmerged after); its LoRA tensors are left out."""
    if not is_peft_model(model):
        yield from ((name, p.detach()) for name, p in model.named_parameters())
        return
    prefix = model.prefix  # "lora_"
    model.merge_adapter()
    try:
        for name, p in model.named_parameters():
            name = name.removeprefix("base_model.model.").replace(".base_layer", "")
            if prefix in name or "original_module" in name:
                continue
            yield name.replace("modules_to_save.default.", ""), p.detach()
    finally:
        model.unmerge_adapter()


def save_adapter(model: Any, folder: str | Path) -> Path:
    """Write a peft model's adapter (``adapter_config.json`` and weights) to ``folder``; returns its absolute path."""
    path = Path(folder).absolute()
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(path))
    return path


def remove_folder(path: str | Path | None) -> None:
    """Delete an adapter folder this package wrote (missing folders are fine)."""
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


def vllm_lora_rank(rank: int) -> int:
    """The smallest ``max_lora_rank`` vLLM accepts that fits an adapter of rank ``rank``."""
    for allowed in VLLM_LORA_RANKS:
        if rank <= allowed:
            return allowed
    raise ValueError(f"LoRA rank {rank} exceeds vLLM's largest max_lora_rank ({VLLM_LORA_RANKS[-1]})")
