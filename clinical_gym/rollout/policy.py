"""The policy contract of the rollout interface: a batch of prompts in, one ``Generation`` per prompt out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

FinishReason = Literal["stop", "length"]
Message = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Prompt:
    """One conversation to continue.

    ``messages`` is the OpenAI-style conversation so far. ``token_ids``, when set, is the exact token sequence the
    model must continue (kept by the ``RolloutCollector``, never re-tokenized); token-level policies use it instead
    of templating ``messages``. ``max_new_tokens`` bounds this generation. ``tools``: the environment's OpenAI tool
    schemas (``info["tools"]`` of a tool environment), for policies that call tools natively; None elsewhere.
    """

    messages: Sequence[Message]
    max_new_tokens: int
    token_ids: Sequence[int] | None = None
    tools: Sequence[Mapping[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class Generation:
    """A policy's reply to one ``Prompt``.

    ``token_ids`` are the generated tokens, including the end-of-turn token when generation stopped on it;
    ``logprobs[i]`` is the log-probability of ``token_ids[i]`` under the sampling distribution (the model's softmax at
    the policy's temperature, before top-p/top-k truncation). ``finish_reason`` is ``"stop"`` (an end token or stop
    condition) or ``"length"`` (``max_new_tokens`` reached). Text-only backends leave ``token_ids``/``logprobs`` empty.
    """

    text: str
    token_ids: tuple[int, ...] = ()
    logprobs: tuple[float, ...] = ()
    finish_reason: FinishReason = "stop"


@runtime_checkable
class Policy(Protocol):
    """Anything that continues a batch of conversations: a local model, an inference server, a scripted baseline."""

    def generate(self, prompts: Sequence[Prompt], *, seed: int | None = None) -> list[Generation]:
        """One ``Generation`` per prompt, in order. ``seed`` makes the batch's sampling reproducible where the backend
        supports it."""
        ...
