"""A scalar value head on the policy's last hidden state, and the policy and head as one module whose forward pass
gives per-token logprobs, values and (optionally) entropies of a batch's generated tokens.

The head is a linear layer read from the backbone's final (normalised) hidden state, the state the language-model
head reads too; it is always trainable, also when the policy trains only LoRA adapters, and it is saved apart from
the policy's weights (``value_head.safetensors`` in a checkpoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from clinical_gym.trainers.common.logprobs import masked_scores

VALUE_HEAD_FILE = "value_head"  # checkpoint module name: <checkpoint>/value_head.safetensors


class ValueHead(torch.nn.Module):
    """``V(h) = w·h + b`` in float32, for hidden states ``h`` [..., hidden_size]. Starts at zero (``V ≡ 0``), so
    the first advantages are the discounted rewards themselves and no random bias enters them."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(hidden_size, 1, dtype=torch.float32)
        torch.nn.init.zeros_(self.linear.weight)
        torch.nn.init.zeros_(self.linear.bias)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.linear(hidden.to(self.linear.weight.dtype)).squeeze(-1)


@dataclass
class TokenOutputs:
    """Per-token outputs [batch, length - 1] (column ``t`` is about token ``t + 1``), 0 outside the mask:
    ``logprobs`` of the batch's tokens, ``values`` of the states before them, and ``entropy`` of the policy there
    (None unless asked for)."""

    logprobs: torch.Tensor
    values: torch.Tensor
    entropy: torch.Tensor | None = None


class PolicyWithValueHead(torch.nn.Module):
    """A causal LM (``policy``, plain or peft) and its ``value_head``: one module, so that accelerate / DDP wraps,
    syncs and averages both in one forward and backward pass."""

    def __init__(self, policy: Any, value_head: ValueHead | None = None) -> None:
        super().__init__()
        self.policy = policy
        self.value_head = value_head if value_head is not None else ValueHead(hidden_size_of(policy))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, loss_mask: torch.Tensor,
                temperature: float = 1.0, entropy: bool = False, entropy_grad: bool = False) -> TokenOutputs:
        """Logprobs (of the temperature-scaled softmax) and values where ``loss_mask`` is set, from one forward
        pass that projects only those positions onto the vocabulary. Connected to the graph of the policy and the
        head even when the mask is empty (every process runs its backward pass)."""
        # a shared prompt runs once; the vocabulary projection is chunked (logprobs.kept_scores)
        out = masked_scores(self.policy, input_ids, attention_mask, loss_mask, temperature, entropy=entropy,
                            entropy_grad=entropy_grad, hidden=True)
        picked_values = self.value_head(out.hidden)  # from the state before each kept token [n, hidden]
        out.sources += (picked_values,)  # an empty mask still reaches the head
        return TokenOutputs(out.spread(out.logprobs), out.spread(picked_values),
                            out.spread(out.entropy) if entropy else None)


def hidden_size_of(model: Any) -> int:
    """The width of ``model``'s last hidden state (``config.hidden_size``, or ``config.text_config.hidden_size``
    for models with a separate text tower)."""
    config = model.config
    size = getattr(config, "hidden_size", None) or getattr(getattr(config, "text_config", None), "hidden_size", None)
    if not size:
        raise ValueError(f"cannot tell the hidden size of {type(model).__name__} from its config")
    return int(size)
