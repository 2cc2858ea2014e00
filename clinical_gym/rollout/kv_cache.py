"""A key/value cache with room to grow, for ``TransformersPolicy``'s decode loop. Imports torch and transformers.

transformers' ``DynamicLayer`` appends each decoding step's keys and values with ``torch.cat``, which copies the
whole cache of every layer at every step: decoding n tokens copies O(n²) keys and values. Generating for
``benchmarks/perf_trainer.py``'s random model at SmolLM2-135M's size (4 key/value heads of 144; 16 rows, 32 new
tokens on ~30-token prompts, one thread), those copies were a fifth of the CPU time by an ad hoc ``torch.profiler``
run (benchmarks/README.md, "Trainers against TRL"; issue 23). ``GrowingLayer`` keeps the keys and values in a
buffer with room for the tokens still to come and writes each step's new ones in place; ``keys``/``values`` are
views of the filled part, so everything that reads a ``DynamicLayer`` reads it the same way.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer


class GrowingLayer(DynamicLayer):
    """A ``DynamicLayer`` whose keys and values live in buffers with ``room`` positions to spare after the first
    update: later updates that fit are written in place; one that does not fit moves the cache to a buffer with
    ``room`` to spare again."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = max(int(room), 0)
        self.length = 0
        self._buffers: tuple[torch.Tensor, torch.Tensor] | None = None

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any,
               **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        new = key_states.shape[-2]
        if self._buffers is None or self.length + new > self._buffers[0].shape[-2]:
            self._grow(key_states, value_states, self.length + new + self.room)
        key_buffer, value_buffer = self._buffers
        key_buffer[..., self.length:self.length + new, :] = key_states
        value_buffer[..., self.length:self.length + new, :] = value_states
        self.length += new
        self._expose()
        self.device, self.is_initialized = key_states.device, True
        return self.keys, self.values

    def hold(self, key_buffer: torch.Tensor, value_buffer: torch.Tensor, length: int) -> None:
        """Take ``key_buffer``/``value_buffer`` [rows, heads, capacity, dim] as this layer's buffers, their first
        ``length`` positions the cache so far: nothing is copied."""
        self._buffers, self.length = (key_buffer, value_buffer), length
        self._expose()
        self.device, self.is_initialized = key_buffer.device, True

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        """Keep the rows ``indices`` (with repeats: copies), room included."""
        if self._buffers is not None:
            self._buffers = (self._buffers[0][indices], self._buffers[1][indices])
            self._expose()

    def batch_repeat_interleave(self, repeats: int) -> None:
        if self._buffers is not None:
            self._buffers = tuple(b.repeat_interleave(repeats, dim=0) for b in self._buffers)
            self._expose()

    def crop(self, tokens_to_remove: int) -> None:
        if tokens_to_remove > 0:
            raise ValueError(f"crop takes a negative number of tokens to remove, got {tokens_to_remove}")
        if self._buffers is not None and tokens_to_remove:
            self.length = max(self.length + tokens_to_remove, 0)
            self._expose()

    def reset(self) -> None:
        self._buffers, self.length = None, 0
        super().reset()

    def _grow(self, key_states: torch.Tensor, value_states: torch.Tensor, capacity: int) -> None:
        rows, heads, _, key_dim = key_states.shape
        key_buffer = key_states.new_empty((rows, heads, capacity, key_dim))
        value_buffer = value_states.new_empty((rows, heads, capacity, value_states.shape[-1]))
        if self.length:
            key_buffer[..., :self.length, :] = self.keys
            value_buffer[..., :self.length, :] = self.values
        self._buffers = (key_buffer, value_buffer)

    def _expose(self) -> None:
        self.keys = self._buffers[0][..., :self.length, :]
        self.values = self._buffers[1][..., :self.length, :]


def full_attention(model: Any) -> bool:
    """Whether every layer of the cache ``model`` makes for itself is a plain ``DynamicLayer`` (no sliding window,
    no linear attention): the caches ``GrowingLayer`` stands in for."""
    config = getattr(model, "config", None)
    if config is None:
        return False
    try:
        layers = DynamicCache(config=config).layers
    except (AttributeError, TypeError, ValueError):
        return False
    return bool(layers) and all(type(layer) is DynamicLayer for layer in layers)


def growing_cache(room: int, past: list[tuple[torch.Tensor, torch.Tensor]] | None = None,
                  filled: int | None = None) -> DynamicCache:
    """A ``DynamicCache`` of ``GrowingLayer``s with ``room`` positions to spare: empty (its layers are made as the
    model's layers first update it), or holding ``past`` (keys and values per layer), copied into buffers with
    ``room`` to spare; with ``filled``, ``past``'s tensors are the buffers themselves, their first ``filled``
    positions the cache (``GrowingLayer.hold``: no copy)."""
    cache = DynamicCache()
    if past is None:
        cache.layer_class_to_replicate = lambda: GrowingLayer(room)
        return cache
    cache.layer_class_to_replicate, cache.layers = None, []
    for keys, values in past:
        layer = GrowingLayer(room)
        if filled is None:
            layer.update(keys, values)
        else:
            layer.hold(keys, values, filled)
        cache.layers.append(layer)
    return cache
