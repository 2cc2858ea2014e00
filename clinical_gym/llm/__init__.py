"""LLM clients behind simulated actors: an OpenAI-compatible HTTP client and a local transformers client.

``TransformersClient`` is imported on first use, so importing this package does not import torch.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from clinical_gym.llm.base import LLMClient, LLMError
from clinical_gym.llm.openai_compat import OpenAICompatClient

if TYPE_CHECKING:
    from clinical_gym.llm.transformers_local import TransformersClient

__all__ = ["LLMClient", "LLMError", "OpenAICompatClient", "TransformersClient", "as_client", "llm_setting",
           "make_client"]

SPECS = "'openai:MODEL', 'transformers:PATH' or an LLMClient"


def __getattr__(name: str) -> Any:
    if name == "TransformersClient":
        from clinical_gym.llm.transformers_local import TransformersClient

        return TransformersClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_client(spec: str, **kw: Any) -> LLMClient:
    """A client from a spec: ``"openai:MODEL"`` (other settings from ``kw`` or the environment) or
    ``"transformers:PATH"`` (``kw`` go to ``TransformersClient.from_pretrained``; PATH must be a model folder)."""
    backend, _, target = spec.partition(":")
    if backend == "openai":
        return OpenAICompatClient(model=target or None, **kw)
    if backend == "transformers" and target:
        if not os.path.isdir(os.path.expanduser(target)):
            raise ValueError(f"no model folder {target!r} for {spec!r}")
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


def llm_setting(value: Any, what: str, also: str = "") -> LLMClient | None:
    """The client an environment argument names, checked when the environment is made: None stays None, an
    ``LLMClient`` is used as it is, a spec string (``"openai:MODEL"``, ``"transformers:PATH"``) is built with
    ``make_client``. Anything else is a one-line ``ValueError`` naming ``what`` and what it accepts (``also``: the
    caller's own choices, listed first, e.g. ``"'rules', a Patient, "``)."""
    accepted = f"use {also}None, {SPECS}" if not also else f"use {also}{SPECS}"
    if value is None:
        return None
    if isinstance(value, str):
        if value.partition(":")[0] not in ("openai", "transformers"):
            raise ValueError(f"{what}={value!r} is not accepted; {accepted}")
        try:
            return make_client(value)
        except ValueError as e:
            raise ValueError(f"{what}={value!r}: {str(e).splitlines()[0]}") from None
    if isinstance(value, LLMClient):
        return value
    raise ValueError(f"{what} must not be a {type(value).__name__}; {accepted}")
