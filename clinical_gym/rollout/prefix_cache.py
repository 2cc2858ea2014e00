"""``PrefixCache``: the key/value cache of token sequences a ``TransformersPolicy`` has already run, kept so that the
next turn of a multi-turn episode (the same sequence plus the generated reply's last token and the environment's
reply) prefills only what is new. Imports torch."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import torch

Tokens = tuple[int, ...]
LayerKV = tuple[torch.Tensor, torch.Tensor]  # keys, values of one layer: [1, kv_heads, tokens, head_dim]


class PrefixCache:
    """Per-sequence key/value tensors of one model, least recently stored dropped first beyond ``max_sequences``.

    ``take(tokens)`` hands out (and forgets) the longest stored sequence that is a proper prefix of ``tokens``: a
    sequence is continued once, and its continuation is stored anew. Everything is forgotten when the model's
    weights change (an optimizer step, a loaded state dict, a move to another device), detected from each
    parameter's identity, storage and in-place version counter, so a cache never outlives the weights that made it.
    """

    def __init__(self, model: Any, max_sequences: int = 1024) -> None:
        if max_sequences < 0:
            raise ValueError(f"max_sequences must be >= 0, got {max_sequences}")
        self.model = model
        self.max_sequences = max_sequences
        self._entries: OrderedDict[Tokens, list[LayerKV]] = OrderedDict()
        self._lengths: dict[int, int] = {}  # stored sequence length -> how many stored sequences have it
        self._stamp: tuple[tuple[int, int, int], ...] = ()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self._lengths.clear()

    def check_weights(self) -> None:
        """Forget everything if the weights changed since the last check."""
        stamp = tuple((id(p), p.data_ptr(), p._version) for p in self.model.parameters())
        if stamp != self._stamp:
            self.clear()
            self._stamp = stamp

    def take(self, tokens: Sequence[int]) -> tuple[int, list[LayerKV]] | None:
        """(length, layers) of the longest stored proper prefix of ``tokens``, removed from the cache; or None."""
        if not self._entries:
            return None
        for length in sorted((n for n in self._lengths if n < len(tokens)), reverse=True):
            key = tuple(tokens[:length])
            if key in self._entries:
                self._forget(key)
                return length, self._entries.pop(key)
        return None

    def store(self, tokens: Sequence[int], layers: list[LayerKV]) -> None:
        if self.max_sequences == 0:
            return
        key = tuple(tokens)
        if key in self._entries:
            self._forget(key)
            del self._entries[key]
        self._entries[key] = layers
        self._lengths[len(key)] = self._lengths.get(len(key), 0) + 1
        while len(self._entries) > self.max_sequences:
            oldest = next(iter(self._entries))
            self._forget(oldest)
            del self._entries[oldest]

    def _forget(self, key: Tokens) -> None:
        left = self._lengths[len(key)] - 1
        if left:
            self._lengths[len(key)] = left
        else:
            del self._lengths[len(key)]
