"""A forward pass that runs a prompt shared by several rows of a batch once.

A GRPO group is G rollouts of one case: G rows that start with the same prompt (the system prompt and the opening
turn), and only the generated tokens after it carry a loss. ``forward_kept`` finds rows whose tokens before their
first loss position are identical, runs each such prompt once (its keys and values, with their gradients, become
the cache of every row that shares it), then runs each row's remaining tokens on top of that cache, at their true
positions. The outputs at the kept positions are those of one pass over the whole rows (the same attention, up to
float rounding), and the gradients reach the shared prompt through its keys and values. The activations and the
compute of a shared prompt are paid once per group instead of once per row: in a single-turn GRPO step with a
40-token prompt, 4 generations and 32 new tokens, 40% of the tokens.

A batch where the two passes would not run fewer token positions than one (padding included: rows that share
nothing run whole in the second pass), or a model with gradient checkpointing (which runs without a cache), takes
the usual single pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

MIN_SHARED_TOKENS = 8  # shorter common prompts are not worth a second forward pass


@dataclass
class KeptOutputs:
    """The logits [n, vocab] of the kept positions, in row-major order, and their last hidden states [n, hidden]
    when asked for."""

    logits: torch.Tensor
    hidden: torch.Tensor | None = None


def forward_kept(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: torch.Tensor, *,
                 hidden: bool = False, share: bool = True) -> KeptOutputs:
    """``model``'s logits (and last hidden states with ``hidden``) at the positions ``keep`` [rows, length] sets;
    right-padded rows. With ``share``, prompts several rows share run once (see the module docstring)."""
    groups = shared_prompts(input_ids, attention_mask, keep) if share and _can_share(model) else None
    if groups is None or not _pays(input_ids, attention_mask, groups):
        out = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep,
                    output_hidden_states=hidden)
        return KeptOutputs(out.logits, out.hidden_states[-1][keep] if hidden else None)
    return _two_passes(model, input_ids, attention_mask, keep, groups, hidden)


def shared_prompts(input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: torch.Tensor
                   ) -> tuple[list[int], list[int]] | None:
    """For each row, its shared prompt's group (-1: none) and the prompt's length (0: none), or None when no two
    rows share one. A row's prompt is every token before its first kept position; rows share it when those tokens
    are identical and at least ``MIN_SHARED_TOKENS`` long."""
    lengths = attention_mask.sum(dim=1).tolist()
    kept = keep.any(dim=1).tolist()
    first = keep.int().argmax(dim=1).tolist()
    rows_of: dict[tuple[int, ...], list[int]] = {}
    ids = input_ids.tolist()
    for row, (n, any_kept, start) in enumerate(zip(lengths, kept, first)):
        prompt_len = min(start, n)
        if any_kept and prompt_len >= MIN_SHARED_TOKENS:
            rows_of.setdefault(tuple(ids[row][:prompt_len]), []).append(row)
    group, length = [-1] * len(ids), [0] * len(ids)
    shared = [(len(prompt), rows) for prompt, rows in rows_of.items() if len(rows) > 1]
    for g, (n, rows) in enumerate(shared):
        for row in rows:
            group[row], length[row] = g, n
    return (group, length) if shared else None


def _can_share(model: Any) -> bool:
    """Not with gradient checkpointing, nor for an FSDP2-sharded model (``--fsdp``, issue 24), which frees its
    gathered weights between the two passes' backward ("storage of size 0")."""
    from clinical_gym.trainers.common.sharding import is_sharded

    return not getattr(model, "is_gradient_checkpointing", False) and not is_sharded(model)


def _pays(input_ids: torch.Tensor, attention_mask: torch.Tensor, groups: tuple[list[int], list[int]]) -> bool:
    """Whether the two passes run fewer token positions (padding included) than one pass over the whole rows."""
    group, length = groups
    prompts: dict[int, int] = dict(zip(group, length))
    prompts.pop(-1, None)
    rest = max(int(n) - p for n, p in zip(attention_mask.sum(dim=1).tolist(), length))
    return len(prompts) * max(prompts.values()) + len(group) * rest < input_ids.numel()


def _two_passes(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: torch.Tensor,
                groups: tuple[list[int], list[int]], hidden: bool) -> KeptOutputs:
    from transformers import DynamicCache

    group, length = groups
    device, rows = input_ids.device, input_ids.shape[0]
    n_groups = max(group) + 1
    prompt_len = [0] * n_groups
    first_row = [0] * n_groups
    for row in reversed(range(rows)):
        if group[row] >= 0:
            prompt_len[group[row]], first_row[group[row]] = length[row], row
    # pass 1: each shared prompt once, left-padded to a common width (its keys and values keep their gradients)
    width = max(prompt_len)
    prompt_ids = input_ids.new_zeros((n_groups, width))
    prompt_mask = attention_mask.new_zeros((n_groups, width))
    for g in range(n_groups):
        prompt_ids[g, width - prompt_len[g]:] = input_ids[first_row[g], :prompt_len[g]]
        prompt_mask[g, width - prompt_len[g]:] = 1
    positions = (prompt_mask.cumsum(-1) - 1).clamp(min=0)
    first = model(input_ids=prompt_ids, attention_mask=prompt_mask, position_ids=positions, use_cache=True,
                  logits_to_keep=1)
    cache = first.past_key_values
    if not all(type(layer).__name__ == "DynamicLayer" for layer in getattr(cache, "layers", [None])):
        out = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep,
                    output_hidden_states=hidden)  # a cache of another kind (sliding windows): one pass after all
        return KeptOutputs(out.logits, out.hidden_states[-1][keep] if hidden else None)
    # pass 2: every row's own tokens on its prompt's keys and values (rows sharing nothing get masked-out columns)
    pick = torch.tensor([max(g, 0) for g in group], device=device)
    past = [(layer.keys.index_select(0, pick), layer.values.index_select(0, pick)) for layer in cache.layers]
    lengths = attention_mask.sum(dim=1).tolist()
    rest = [int(n) - p for n, p in zip(lengths, length)]
    span = max(rest)
    ids = input_ids.new_zeros((rows, span))
    mask = attention_mask.new_zeros((rows, width + span))
    positions = input_ids.new_zeros((rows, span))
    kept = torch.zeros((rows, span), dtype=torch.bool, device=device)
    for row in range(rows):
        p, r = length[row], rest[row]
        ids[row, :r] = input_ids[row, p:p + r]
        mask[row, width - p:width] = 1
        mask[row, width:width + r] = 1
        positions[row] = torch.arange(p, p + span, device=device)
        kept[row, :r] = keep[row, p:p + r]
    out = model(input_ids=ids, attention_mask=mask, position_ids=positions,
                past_key_values=DynamicCache(ddp_cache_data=past), use_cache=True, logits_to_keep=kept,
                output_hidden_states=hidden)
    return KeptOutputs(out.logits, out.hidden_states[-1][kept] if hidden else None)
