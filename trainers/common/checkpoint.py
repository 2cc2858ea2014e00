"""Checkpoints for exact resume: weights (the LoRA adapter only, or the full model), optimizer, scheduler, every
process's RNG states, and the trainer state (step, data position). A checkpoint is written in a temporary folder
that is renamed into place once complete, so a run killed while saving never leaves a checkpoint resume could use.

Layout: ``<root>/step-000012/{model/, optimizer.pt, scheduler.pt, rng_state_<rank>.pt, process_state_<rank>.json,
trainer_state.json}`` (the trainer state of each process, and the main one's),
plus ``<name>.safetensors`` for each extra module a trainer passes (e.g. a value head). A sharded model (``--fsdp``)
writes full state dicts gathered from every process (``model/full_state.pt``, the optimizer keyed by parameter
name), so its weights and optimizer load on any number of processes.
Files are written and read with ``torch.save``/``torch.load(weights_only=False)``: load only checkpoints you wrote.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from clinical_gym.trainers.common import sharding

STEP_DIR = re.compile(r"^step-(\d+)$")
STATE_FILE = "trainer_state.json"
TMP_PREFIX = ".tmp-"


def checkpoint_dir(root: str | Path, step: int) -> Path:
    return Path(root) / f"step-{step:06d}"


def latest_checkpoint(root: str | Path) -> Path | None:
    """The complete checkpoint with the highest step under ``root`` (temporary and partial folders are ignored)."""
    root = Path(root)
    if not root.is_dir():
        return None
    complete = [d for d in root.iterdir() if STEP_DIR.match(d.name) and (d / STATE_FILE).is_file()]
    return max(complete, key=lambda d: int(STEP_DIR.match(d.name).group(1)), default=None)


def save_checkpoint(root: str | Path, step: int, *, accelerator: Any, model: Any, optimizer: Any, scheduler: Any,
                    state: dict[str, Any], tokenizer: Any | None = None, keep: int = 2,
                    modules: Mapping[str, Any] | None = None) -> Path:
    """Write checkpoint ``step`` atomically and keep the newest ``keep``; every process must call it. ``modules``:
    extra modules saved whole as ``<name>.safetensors``."""
    final = checkpoint_dir(root, step)
    tmp = final.with_name(TMP_PREFIX + final.name)
    if accelerator.is_main_process:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    accelerator.wait_for_everyone()
    torch.save(capture_rng(), tmp / f"rng_state_{accelerator.process_index}.pt")
    # each process's own trainer state (its data position differs from the others' under dynamic sampling)
    (tmp / f"process_state_{accelerator.process_index}.json").write_text(json.dumps({**state, "step": step}),
                                                                        encoding="utf-8")
    unwrapped = accelerator.unwrap_model(model)
    if sharding.is_sharded(unwrapped):  # full state dicts, gathered from every process onto the main one
        weights = sharding.full_model_state(unwrapped)
        optimizer_state = sharding.full_optimizer_state(unwrapped, optimizer)
    if accelerator.is_main_process:
        if sharding.is_sharded(unwrapped):
            save_full_weights(unwrapped, weights, tmp / "model")
        else:
            save_weights(unwrapped, tmp / "model")
            optimizer_state = optimizer.state_dict()
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp / "model")
        torch.save(optimizer_state, tmp / "optimizer.pt")
        torch.save(scheduler.state_dict(), tmp / "scheduler.pt")
        for name, module in (modules or {}).items():
            save_module(accelerator.unwrap_model(module), tmp / f"{name}.safetensors")
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        (tmp / STATE_FILE).write_text(json.dumps({**state, "step": step}, indent=1), encoding="utf-8")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        _prune(Path(root), keep)
    accelerator.wait_for_everyone()
    return final


def load_checkpoint(path: str | Path, *, accelerator: Any, model: Any, optimizer: Any, scheduler: Any,
                    modules: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Restore weights, optimizer, scheduler, the extra ``modules`` and this process's RNG states; this process's
    saved trainer state (the main process's for a checkpoint without one)."""
    path = Path(path)
    unwrapped = accelerator.unwrap_model(model)
    if sharding.is_sharded(unwrapped):
        sharding.load_full_model_state(unwrapped, torch.load(path / "model" / sharding.FULL_STATE_FILE,
                                                             weights_only=False))
    else:
        load_weights(unwrapped, path / "model")
    for name, module in (modules or {}).items():
        load_module(accelerator.unwrap_model(module), path / f"{name}.safetensors")
    optimizer_state = torch.load(path / "optimizer.pt", weights_only=False)
    if sharding.is_sharded(unwrapped):
        sharding.load_full_optimizer_state(unwrapped, optimizer, optimizer_state)
    else:
        optimizer.load_state_dict(optimizer_state)
    scheduler.load_state_dict(torch.load(path / "scheduler.pt", weights_only=False))
    rng_file = path / f"rng_state_{accelerator.process_index}.pt"
    restore_rng(torch.load(rng_file if rng_file.exists() else path / "rng_state_0.pt", weights_only=False))
    own = path / f"process_state_{accelerator.process_index}.json"  # absent when resuming on more processes
    return json.loads((own if own.is_file() else path / STATE_FILE).read_text(encoding="utf-8"))


def save_weights(model: Any, folder: Path) -> None:
    """A peft model's adapter (``save_pretrained``), or all weights of a plain model (safetensors) and its config."""
    if _is_peft(model):
        model.save_pretrained(folder)
        return
    from safetensors.torch import save_model

    folder.mkdir(parents=True, exist_ok=True)
    save_model(model, str(folder / "model.safetensors"))
    config = model.config.to_dict()
    config.pop("quantization_config", None)  # GGUF-loaded models are dequantised; the weights are plain
    (folder / "config.json").write_text(json.dumps(config, indent=1, default=str), encoding="utf-8")


def save_full_weights(model: Any, weights: dict[str, torch.Tensor], folder: Path) -> None:
    """A sharded model's gathered state dict (every weight, LoRA or not, under the model's own names) and its
    config; ``load_checkpoint`` loads it back into a sharded model."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(weights, folder / sharding.FULL_STATE_FILE)
    config = getattr(model, "config", None)
    if config is not None and hasattr(config, "to_dict"):
        data = config.to_dict()
        data.pop("quantization_config", None)
        (folder / "config.json").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")


def load_weights(model: Any, folder: Path) -> None:
    if _is_peft(model):
        from peft import set_peft_model_state_dict
        from peft.utils import load_peft_weights

        set_peft_model_state_dict(model, load_peft_weights(str(folder), device="cpu"))
        return
    from safetensors.torch import load_model

    load_model(model, str(folder / "model.safetensors"), device=str(next(model.parameters()).device))


def save_module(module: Any, file: Path) -> None:
    """All of ``module``'s weights as one safetensors file."""
    from safetensors.torch import save_model

    save_model(module, str(file))


def load_module(module: Any, file: Path) -> None:
    from safetensors.torch import load_model

    load_model(module, str(file), device=str(next(module.parameters()).device))


def capture_rng() -> dict[str, Any]:
    """The states of Python's, NumPy's and torch's global generators (and CUDA's when present)."""
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _is_peft(model: Any) -> bool:
    return hasattr(model, "peft_config")


def _prune(root: Path, keep: int) -> None:
    """Delete all but the newest ``keep`` complete checkpoints."""
    steps = sorted((int(m.group(1)), d) for d in root.iterdir() if (m := STEP_DIR.match(d.name)))
    for _, folder in steps[:-keep]:
        shutil.rmtree(folder, ignore_errors=True)
