"""The LLM client protocol that simulated actors (patient, world model, judge) use, whatever the backend."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class LLMError(RuntimeError):
    """An LLM call failed for good (after retries): timeout, HTTP error, malformed reply, refusal."""


@runtime_checkable
class LLMClient(Protocol):
    """Text in, text out. Implementations retry transient failures and raise ``LLMError`` when they give up."""

    def chat(self, messages: list[dict[str, str]], *, max_tokens: int = 256, temperature: float = 0.0,
             stop: list[str] | None = None, seed: int | None = None) -> str:
        """Reply to an OpenAI-style list of ``{"role", "content"}`` messages."""
        ...

    def complete(self, prompt: str, *, max_tokens: int = 256, temperature: float = 0.0,
                 stop: list[str] | None = None, seed: int | None = None) -> str:
        """Continue a raw text prompt (completions API)."""
        ...
