"""Loss building blocks shared by the objectives: per-token aggregation weights and the k3 KL estimator."""

from __future__ import annotations

import torch

from clinical_gym.trainers.common.config import AGGREGATIONS


def token_weights(mask: torch.Tensor, mode: str, constant: int | None = None, *,
                  total_tokens: float | None = None, total_sequences: float | None = None) -> torch.Tensor:
    """Weights ``w`` (same shape as the 0/1 ``mask`` [sequences, tokens]) such that ``(w * loss).sum()`` is the
    aggregated loss:

    * ``"token-mean"``: every token of the batch counts equally, ``mask / Σ mask`` (DAPO);
    * ``"sequence-mean"``: mean over sequences of each sequence's token mean (GRPO);
    * ``"constant"``: ``mask / (sequences · constant)``, a length-independent normaliser (Dr. GRPO).

    ``total_tokens``/``total_sequences`` replace this batch's counts when the batch is one share of a larger one
    (several processes), so shares add up to the whole.
    """
    if mode not in AGGREGATIONS:
        raise ValueError(f"unknown loss aggregation {mode!r}; choose one of {', '.join(AGGREGATIONS)}")
    mask = mask.float()
    sequences = float(total_sequences if total_sequences is not None else mask.shape[0])
    if mode == "token-mean":
        tokens = float(total_tokens if total_tokens is not None else mask.sum())
        return mask / max(tokens, 1.0)
    if mode == "sequence-mean":
        return mask / (mask.sum(dim=1, keepdim=True).clamp(min=1.0) * sequences)
    if constant is None or constant < 1:
        raise ValueError("the 'constant' aggregation needs a positive constant (tokens per sequence)")
    return mask / (sequences * constant)


def k3_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(π_θ ‖ π_ref) from samples of π_θ: ``exp(d) - d - 1`` with ``d = ref - logp``
    (non-negative, unbiased, low variance; Schulman 2020)."""
    delta = ref_logprobs - logprobs
    return torch.exp(delta) - delta - 1
