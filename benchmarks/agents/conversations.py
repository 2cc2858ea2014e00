"""What agents keep per conversation: values keyed by a conversation's opening, and per-conversation seeds.

A ``Policy`` sees only messages; an agent that needs what ``reset`` returned (tool schemas, or for the oracle the
ground truth) records it under the conversation's opening observation, which is the same text in every later
prompt of that episode. Episodes with the same opening start from the same case, so they share the entry.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from typing import Generic, TypeVar

import numpy as np

from clinical_gym.content_parts import first_text

V = TypeVar("V")
MAX_ENTRIES = 100_000


def opening(messages: Sequence[Mapping[str, str]]) -> str:
    """The first user message of a conversation (the environment's opening observation; its first text part when
    the message carries images)."""
    return next((first_text(m["content"]) for m in messages if m["role"] == "user"), "")


def conversation_rng(seed: int, messages: Sequence[Mapping[str, str]]) -> np.random.Generator:
    """A generator determined by ``seed`` and the conversation so far, whatever else runs in the same batch."""
    digest = zlib.crc32(json.dumps([[m["role"], m["content"]] for m in messages]).encode())
    return np.random.default_rng([seed, digest])


class ByOpening(Generic[V]):
    """A value per conversation, looked up by the conversation's opening."""

    def __init__(self) -> None:
        self._values: dict[str, V] = {}

    def remember(self, first_observation: str, value: V) -> None:
        if len(self._values) >= MAX_ENTRIES:
            self._values.clear()
        self._values[first_observation] = value

    def recall(self, messages: Sequence[Mapping[str, str]]) -> V:
        """The value of this conversation; ``KeyError`` when its reset was never seen."""
        key = opening(messages)
        if key not in self._values:
            raise KeyError("no reset recorded for this conversation (was the agent's on_reset hook called?)")
        return self._values[key]
