"""A cheaper forward pass for peft's LoRA linear layers in the plain case the trainers use.

peft computes ``base(x) + lora_B(lora_A(dropout(x))) * scaling`` as five operations, two of them full-width passes
over the layer's output (the scaling and the sum). ``fast_lora_forward`` computes the same value as three: the base
product, ``x A^T``, and one ``addmm`` that adds ``scaling * (x A^T) B^T`` to the base output (in place when no
gradient is recorded). Same value up to float rounding (BLAS adds the scaled product in its own order). On one core
(ad hoc, 8 LoRA r=8 layers of 576): a 16-row decoding step 0.74x peft's CPU time, a 544-row forward and backward
0.92x; at SmolLM2-135M's size with "all-linear" targets that is 210 layers on every decoding step.

Any other case goes to peft's own forward: adapters disabled or merged, several active adapters, mixed-batch
``adapter_names``, a LoRA variant (DoRA, ...), a bias on lora_B, an active dropout (training with lora_dropout > 0),
a base layer that is not a plain ``torch.nn.Linear``, sharded (DTensor) weights, or inputs of another dtype.
"""

from __future__ import annotations

import types
from typing import Any

import torch
import torch.nn.functional as F


def install_fast_lora(model: Any) -> int:
    """Route every peft LoRA ``Linear`` of ``model`` through ``fast_lora_forward``; returns how many. Idempotent."""
    try:
        from peft.tuners.lora.layer import Linear as LoraLinear
    except ImportError:  # peft missing: no LoRA layers to route
        return 0
    count = 0
    for module in model.modules():
        if isinstance(module, LoraLinear):
            if getattr(module.forward, "__func__", None) is not fast_lora_forward:
                module.forward = types.MethodType(fast_lora_forward, module)
            count += 1
    return count


def fast_lora_forward(self: Any, x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    """peft ``lora.Linear.forward``'s value for one plain active adapter (module docstring), else peft's own."""
    adapter = _plain_adapter(self, x, args, kwargs)
    if adapter is None:
        return type(self).forward(self, x, *args, **kwargs)
    base, lora_a, lora_b = self.base_layer, self.lora_A[adapter], self.lora_B[adapter]
    flat = x.reshape(-1, x.shape[-1])
    out = F.linear(flat, base.weight, base.bias)
    down = F.linear(flat, lora_a.weight)
    if torch.is_grad_enabled() and (out.requires_grad or down.requires_grad):
        out = torch.addmm(out, down, lora_b.weight.t(), alpha=self.scaling[adapter])
    else:
        out.addmm_(down, lora_b.weight.t(), alpha=self.scaling[adapter])
    return out.view(*x.shape[:-1], out.shape[-1])


def _plain_adapter(layer: Any, x: torch.Tensor, args: tuple, kwargs: dict) -> str | None:
    """The one active adapter when the plain computation applies, else None."""
    if args or kwargs or layer.disable_adapters or layer.merged:
        return None
    active = layer.active_adapters
    if len(active) != 1 or active[0] not in layer.lora_A or active[0] in getattr(layer, "lora_variant", {}):
        return None
    adapter = active[0]
    base, lora_a, lora_b = layer.base_layer, layer.lora_A[adapter], layer.lora_B[adapter]
    dropout = layer.lora_dropout[adapter]
    if not isinstance(dropout, torch.nn.Identity) and dropout.training and getattr(dropout, "p", 1.0) > 0:
        return None
    if type(base) is not torch.nn.Linear or lora_b.bias is not None or lora_a.bias is not None:
        return None
    weights = (base.weight, lora_a.weight, lora_b.weight)
    if any(hasattr(w, "to_local") for w in weights) or any(w.dtype != x.dtype for w in weights):
        return None
    return adapter
