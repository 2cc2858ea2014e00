"""Log-probabilities of a batch's own tokens under a model, recomputed only where the loss needs them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from clinical_gym.trainers.common.shared_prefix import forward_kept

CHUNK_ROWS = 2048  # vocabulary-wide softmax rows reduced at once, to bound float32 copies of the logits


def token_logprobs(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, loss_mask: torch.Tensor,
                   temperature: float = 1.0, model_inputs: Mapping[str, torch.Tensor] | None = None) -> torch.Tensor:
    """See ``token_logprobs_and_entropy``; the log-probabilities only."""
    return token_logprobs_and_entropy(model, input_ids, attention_mask, loss_mask, temperature, model_inputs)[0]


def token_logprobs_and_entropy(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                               loss_mask: torch.Tensor, temperature: float = 1.0,
                               model_inputs: Mapping[str, torch.Tensor] | None = None, *,
                               entropy: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``out[b, t] = log p(input_ids[b, t+1] | input_ids[b, :t+1])`` under ``model`` with logits divided by
    ``temperature`` (the sampling distribution), where ``loss_mask[b, t]`` is set; 0 elsewhere. Shape
    [batch, length - 1], right padding expected. Only the masked positions are projected onto the vocabulary, and a
    prompt several rows share runs once (``shared_prefix.forward_kept``; not with ``model_inputs``). The
    result is connected to the model's graph even when the mask is empty (every process runs its backward pass).
    ``model_inputs`` go to the forward pass too (a vision-language model's pixels; floating tensors in the model's
    dtype). With ``entropy`` the second result is the entropy of the (temperature-scaled) policy at the same
    positions, differentiable (the entropy bonus); else None."""
    wanted = loss_mask.bool()
    keep = torch.zeros_like(input_ids, dtype=torch.bool)
    keep[:, :-1] = wanted
    extra = {}
    if model_inputs:
        dtype = next(model.parameters()).dtype
        extra = {k: v.to(dtype) if v.is_floating_point() else v for k, v in model_inputs.items()}
    if extra:
        logits = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep,
                       **extra).logits  # [n, vocab]
    else:  # a prompt several rows share (a GRPO group's) runs once
        logits = forward_kept(model, input_ids, attention_mask, keep).logits
    picked, row_entropy = logprobs_from_logits(logits, input_ids[:, 1:][wanted], temperature, entropy=entropy,
                                               entropy_grad=entropy)
    out = torch.zeros(loss_mask.shape, dtype=torch.float, device=input_ids.device)
    entropies = torch.zeros_like(out) if entropy else None
    if not picked.numel():  # no generated token here: still part of the graph, so backward() works
        return out + 0.0 * logits.sum(), entropies
    out[wanted] = picked
    if entropies is not None:
        entropies[wanted] = row_entropy
    return out, entropies


def logprobs_from_logits(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0, *,
                         entropy: bool = False, entropy_grad: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``log softmax(logits / temperature)`` at ``targets`` for rows of logits [n, vocab] and targets [n], and with
    ``entropy`` the entropy of each row's distribution (differentiable only with ``entropy_grad``), reduced
    ``CHUNK_ROWS`` rows at a time in float32."""
    picked, entropies = [], []
    for start in range(0, targets.shape[0], CHUNK_ROWS):
        rows = logits[start:start + CHUNK_ROWS].float()
        rows = rows / temperature if temperature != 1 else rows
        chosen = rows.gather(-1, targets[start:start + CHUNK_ROWS, None]).squeeze(-1)
        normaliser = torch.logsumexp(rows, dim=-1)
        picked.append(chosen - normaliser)
        if entropy:
            with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
                # H = logsumexp(z) − Σ softmax(z) z
                entropies.append(normaliser - (torch.softmax(rows, dim=-1) * rows).sum(dim=-1))
    empty = logits.new_zeros(0, dtype=torch.float)
    row_entropy = (torch.cat(entropies) if entropies else empty) if entropy else None
    return (torch.cat(picked) if picked else empty), row_entropy
