"""A forward pass that runs a prompt shared by several rows of a batch once.

A GRPO group is G rollouts of one case: G rows that start with the same prompt (the system prompt and the opening
turn), and only the generated tokens after it carry a loss. ``forward_kept`` finds rows whose tokens before their
first loss position are identical, runs each such prompt once (its keys and values, with their gradients, become
the cache of every row that shares it), then runs each row's remaining tokens on top of that cache, at their true
positions. The outputs at the kept positions are those of one pass over the whole rows (the same attention, up to
float rounding), and the gradients reach the shared prompt through its keys and values. The activations and the
compute of a shared prompt are paid once per group instead of once per row: in a single-turn GRPO step with a
40-token prompt, 4 generations and 32 new tokens, 40% of the tokens.

Under non-reentrant activation checkpointing (``--gradient-checkpointing``) the two passes still run: each
decoder layer keeps its cache there (transformers drops it by default, since a layer that appends to a cache would
append a second time when the backward pass replays it), and the caches' layers are ``ReplayableLayer``s, whose
update gives the same keys and values however often it runs. A batch where the two passes would not run fewer
token positions than one (padding included: rows that share nothing run whole in the second pass), a sharded
model, or a transformers release whose layers cannot keep a cache under checkpointing takes the usual single pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from transformers.cache_utils import DynamicLayer

from clinical_gym.rollout.kv_cache import full_attention

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


class ReplayableLayer(DynamicLayer):
    """A key/value cache layer that starts from fixed keys and values (a shared prompt's, or none) and whose
    ``update`` returns them joined with the new ones, replacing what an earlier update added instead of appending
    to it: a checkpointed decoder layer replayed in the backward pass gets the same keys and values as in the
    forward pass. Holds one update's worth, which is all a training forward pass makes."""

    def __init__(self, keys: torch.Tensor | None = None, values: torch.Tensor | None = None) -> None:
        super().__init__()
        self.start = (keys, values)
        if keys is not None:
            self.keys, self.values, self.device, self.is_initialized = keys, values, keys.device, True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any,
               **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        keys, values = self.start
        self.keys = key_states if keys is None else torch.cat([keys, key_states], dim=-2)
        self.values = value_states if values is None else torch.cat([values, value_states], dim=-2)
        self.device, self.is_initialized = key_states.device, True
        return self.keys, self.values


def _replayable_cache(past: list[tuple[torch.Tensor, torch.Tensor]] | None = None) -> Any:
    """A cache of ``ReplayableLayer``s: starting from ``past`` (keys and values per layer), or empty (its layers
    are made as the model's layers first update it)."""
    from transformers import DynamicCache

    cache = DynamicCache()
    if past is not None:
        cache.layer_class_to_replicate, cache.layers = None, [ReplayableLayer(*kv) for kv in past]
    else:
        cache.layer_class_to_replicate = ReplayableLayer
    return cache


def _cache_argument(model: Any) -> str:
    """The name ``model``'s forward takes its key/value cache by: ``cache`` (transformers 5.24 on) or
    ``past_key_values`` (before; still accepted, with a deprecation warning, until 5.40)."""
    import inspect

    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "cache" if "cache" in inspect.signature(type(inner).forward).parameters else "past_key_values"


def _checkpointed_layers(model: Any) -> list[Any]:
    from transformers.modeling_layers import GradientCheckpointingLayer

    return [m for m in model.modules() if isinstance(m, GradientCheckpointingLayer) and m.gradient_checkpointing]


@contextmanager
def _caches_kept(model: Any) -> Iterator[None]:
    """Checkpointed decoder layers keep the cache they are given inside the block (``ReplayableLayer``s make
    that safe)."""
    layers = _checkpointed_layers(model)
    for layer in layers:
        layer._can_checkpoint_with_cache = True
    try:
        yield
    finally:
        for layer in layers:
            del layer._can_checkpoint_with_cache


def _can_share(model: Any) -> bool:
    """Not for an FSDP2-sharded model (``--fsdp``, issue 24), which frees its gathered weights between the two
    passes' backward ("storage of size 0"), nor under activation checkpointing in a transformers release whose
    layers always drop their cache there."""
    from transformers.modeling_layers import GradientCheckpointingLayer

    from clinical_gym.trainers.common.sharding import is_sharded

    if is_sharded(model):
        return False
    return not _checkpointed_layers(model) or hasattr(GradientCheckpointingLayer, "_can_checkpoint_with_cache")


def _pays(input_ids: torch.Tensor, attention_mask: torch.Tensor, groups: tuple[list[int], list[int]]) -> bool:
    """Whether the two passes run fewer token positions (padding included) than one pass over the whole rows."""
    group, length = groups
    prompts: dict[int, int] = dict(zip(group, length))
    prompts.pop(-1, None)
    rest = max(int(n) - p for n, p in zip(attention_mask.sum(dim=1).tolist(), length))
    return len(prompts) * max(prompts.values()) + len(group) * rest < input_ids.numel()


def _two_passes(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: torch.Tensor,
                groups: tuple[list[int], list[int]], hidden: bool) -> KeptOutputs:
    with _caches_kept(model):
        return _two_passes_kept(model, input_ids, attention_mask, keep, groups, hidden)


def _two_passes_kept(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: torch.Tensor,
                     groups: tuple[list[int], list[int]], hidden: bool) -> KeptOutputs:
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
    cache = _replayable_cache() if full_attention(model) else None
    if cache is not None:
        model(input_ids=prompt_ids, attention_mask=prompt_mask, position_ids=positions,
              **{_cache_argument(model): cache}, use_cache=True, logits_to_keep=1)
    if cache is None or not cache.layers or not all(layer.is_initialized for layer in cache.layers):
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
                **{_cache_argument(model): _replayable_cache(past)}, use_cache=True, logits_to_keep=kept,
                output_hidden_states=hidden)
    return KeptOutputs(out.logits, out.hidden_states[-1][kept] if hidden else None)
