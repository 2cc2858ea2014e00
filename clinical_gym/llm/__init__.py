"""LLM clients behind simulated actors: an OpenAI-compatible HTTP client and a local transformers client.

``TransformersClient`` is imported on first use, so importing this package does not import torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clinical_gym.llm.base import LLMClient, LLMError
from clinical_gym.llm.openai_compat import OpenAICompatClient

if TYPE_CHECKING:
    from clinical_gym.llm.transformers_local import TransformersClient

__all__ = ["LLMClient", "LLMError", "OpenAICompatClient", "TransformersClient", "as_client", "make_client"]


def __getattr__(name: str) -> Any:
    if name == "TransformersClient":
        from clinical_gym.llm.transformers_local import TransformersClient

        return TransformersClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_client(spec: str, **kw: Any) -> LLMClient:
    """A client from a spec: ``"openai:MODEL"`` (other settings from ``kw`` or the environment) or
    ``"transformers:PATH"`` (``kw`` go to ``TransformersClient.from_pretrained``)."""
    backend, _, target = spec.partition(":")
    if backend == "openai":
        return OpenAICompatClient(model=target or None, **kw)
    if backend == "transformers" and target:
        from clinical_gym.llm.transformers_local import TransformersClient

        return TransformersClient.from_pretrained(target, **kw)
    raise ValueError(f"bad LLM client spec {spec!r}: expected 'openai:MODEL' or 'transformers:PATH'")


def as_client(value: Any, what: str) -> Any:
    """``value`` itself, or the client a spec string names (``"openai:MODEL"``, ``"transformers:PATH"``), so that
    JSON settings (``--env-kwargs '{"patient": "openai:my-model"}'``) can choose an LLM backend. The OpenAI client
    takes its URL and key from ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``. ``what`` names the setting in errors."""
    if isinstance(value, str) and value.partition(":")[0] in ("openai", "transformers"):
        try:
            return make_client(value)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
    return value
