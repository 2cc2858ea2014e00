"""Fully sharded training (``--fsdp``): the policy (and a full-fine-tuning reference copy) sharded over the
processes with PyTorch's FSDP2 (``torch.distributed.fsdp.fully_shard``), one unit per decoder layer plus the root,
so that parameters, gradients and optimizer state are split between the processes.

Training passes run sharded (every process runs the same number of them, as DDP needs too). Passes without
gradients (rollout generation, old-policy, reference, value and teacher scoring) run inside ``gathered``: each
process gathers the full parameters once, then runs any number of forward passes with no collective (processes
generate different numbers of tokens), then frees them again.

accelerate's ``FullyShardedDataParallelPlugin`` is not used: accelerate applies it only on GPUs, and these
trainers must run (and be tested) the same way on CPU processes (gloo) and GPUs (NCCL). accelerate still owns the
processes, devices, seeding and gradient averaging of everything else.

Checkpoints of a sharded model hold full (unsharded) state dicts, gathered from every process: weights as
``model/full_state.pt`` (the whole model, LoRA or not) and the optimizer as one file, so a sharded run
resumes exactly, also on another number of processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

FULL_STATE_FILE = "full_state.pt"


def _fsdp() -> Any:
    from torch.distributed import fsdp

    return fsdp


def shard(model: Any) -> Any:
    """``model`` sharded in place: each decoder layer (the classes in ``_no_split_modules`` of the transformers
    model inside it, under a peft wrapper or PPO's policy-with-value-head too) one FSDP unit, then the root (which
    holds the rest: embeddings, final norm, head, a value head). Needs an initialised process group."""
    fsdp = _fsdp()
    if not torch.distributed.is_initialized():
        raise RuntimeError("fsdp needs several processes: launch with 'accelerate launch --num_processes N' or "
                           "'torchrun --nproc_per_node N'")
    layer_names = next((set(m._no_split_modules) for m in model.modules() if getattr(m, "_no_split_modules", None)),
                       set())
    layers = [m for m in model.modules() if type(m).__name__ in layer_names]
    if not layers:
        raise ValueError(f"cannot find the decoder layers of {type(model).__name__} to shard (no _no_split_modules)")
    for layer in layers:
        fsdp.fully_shard(layer)
    fsdp.fully_shard(model)
    # FSDP2 initialises lazily, at the first forward pass, taking the module it runs first as the root; PPO generates
    # with the policy inside the policy-with-value-head root, so initialise from the root now
    model._get_fsdp_state()._lazy_init()
    return model


def prepare(accelerator: Any, model: Any, optimizer: Any, sharded: bool) -> tuple[Any, Any]:
    """``accelerator.prepare(model, optimizer)``, except that a sharded model is not wrapped again (no DDP): only
    its optimizer is prepared."""
    if sharded:
        return model, accelerator.prepare(optimizer)
    return accelerator.prepare(model, optimizer)


def is_sharded(model: Any) -> bool:
    """Whether ``model`` or a module inside it is sharded (PPO's policy sits inside the sharded root)."""
    if model is None or not hasattr(model, "modules"):
        return False
    unit = _fsdp().FSDPModule
    return isinstance(model, unit) or any(isinstance(m, unit) for m in model.modules())


@contextmanager
def gathered(*models: Any) -> Iterator[None]:
    """Full parameters of the sharded ``models`` inside the block (no-op for unsharded ones); forward passes in it
    need no collective. Every process must enter and leave it together."""
    units = [m for model in models if is_sharded(model) for m in model.modules() if isinstance(m, _fsdp().FSDPModule)]
    for unit in units:
        unit.set_reshard_after_forward(False)
        unit.unshard()
    try:
        yield
    finally:
        for unit in units:
            unit.reshard()
            unit.set_reshard_after_forward(True)


def full_model_state(model: Any) -> dict[str, torch.Tensor]:
    """The whole model's state dict as full CPU tensors on the main process (empty elsewhere); collective."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    return get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))


def load_full_model_state(model: Any, state: dict[str, torch.Tensor]) -> None:
    """Load a full state dict (every process passes the same one) into a sharded model."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=True))


def full_optimizer_state(model: Any, optimizer: Any) -> dict[str, Any]:
    """The optimizer's state with full tensors, keyed by parameter name, on the main process; collective."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

    return get_optimizer_state_dict(model, _inner(optimizer),
                                    options=StateDictOptions(full_state_dict=True, cpu_offload=True))


def load_full_optimizer_state(model: Any, optimizer: Any, state: dict[str, Any]) -> None:
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

    set_optimizer_state_dict(model, _inner(optimizer), optim_state_dict=state,
                             options=StateDictOptions(full_state_dict=True))


def _inner(optimizer: Any) -> Any:
    """The torch optimizer inside accelerate's wrapper."""
    return getattr(optimizer, "optimizer", optimizer)
