"""Which generation engine to use, and policies built from a spec string. Imports nothing heavy until asked."""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

from clinical_gym.rollout.policy import Policy

ENGINES = ("auto", "transformers", "vllm")
# Where a vLLM engine runs: inside the training process on its GPU, or as a separate server reached over HTTP.
VLLM_MODES = ("colocate", "server")
VLLM_HINT = "the vllm engine needs the vllm package (pip install 'clinical-gym[vllm]') and a CUDA GPU"


def vllm_installed() -> bool:
    return importlib.util.find_spec("vllm") is not None


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def choose_engine(engine: str, *, mode: str = "colocate", has_vllm: Callable[[], bool] | None = None,
                  has_cuda: Callable[[], bool] | None = None) -> str:
    """The engine to generate with.

    In ``mode="colocate"`` (vLLM inside this process), ``"auto"`` picks vLLM when it is installed and a CUDA GPU is
    present, else transformers, and asking for ``"vllm"`` without both raises ``ValueError``. In ``mode="server"``
    generation happens on a vLLM server, so ``"auto"`` and ``"vllm"`` both pick vLLM and nothing local is needed.
    (torch is imported only to look for a GPU once vLLM is known to be installed.)"""
    if engine not in ENGINES:
        raise ValueError(f"unknown generation engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if mode not in VLLM_MODES:
        raise ValueError(f"unknown vllm mode {mode!r}; choose one of {', '.join(VLLM_MODES)}")
    if engine == "transformers":
        return engine
    if mode == "server":
        return "vllm"
    usable = (has_vllm or vllm_installed)() and (has_cuda or cuda_available)()
    if engine == "vllm" and not usable:
        raise ValueError(VLLM_HINT)
    return "vllm" if usable else "transformers"


def require_vllm() -> ModuleType:
    """The ``vllm`` module, or ``ImportError`` saying how to get it."""
    if not vllm_installed():
        raise ImportError(VLLM_HINT)
    return importlib.import_module("vllm")


def make_policy(spec: str, **kwargs: Any) -> Policy:
    """A policy from a spec: ``"transformers:PATH"``, ``"vllm:PATH"``, ``"auto:PATH"`` (vLLM when usable, else
    transformers), ``"vllm:http://HOST:PORT"`` (a vLLM server, token ids in and out) or ``"openai:MODEL"`` (other
    client settings from ``kwargs`` or the environment). ``kwargs`` are sampling settings (``temperature``,
    ``top_p``, ...); for local models ``gguf_file`` and ``dtype`` load the weights and the rest go to the policy."""
    backend, _, target = spec.partition(":")
    if backend == "openai":
        from clinical_gym.rollout.openai_policy import OpenAICompatPolicy

        return OpenAICompatPolicy(model=target or None, **kwargs)
    if backend not in ENGINES or not target:
        raise ValueError(f"bad policy spec {spec!r}: expected 'transformers:PATH', 'vllm:PATH', 'auto:PATH', "
                         "'vllm:http://HOST:PORT' or 'openai:MODEL'")
    if backend == "vllm" and target.startswith(("http://", "https://")):
        from clinical_gym.rollout.vllm_server import VLLMServerPolicy

        return VLLMServerPolicy(target, **kwargs)
    gguf_file, dtype = kwargs.pop("gguf_file", None), kwargs.pop("dtype", "float32")
    if choose_engine(backend) == "vllm":
        from clinical_gym.rollout.vllm_policy import VLLMPolicy

        return VLLMPolicy(os.path.join(target, gguf_file) if gguf_file else target, dtype=dtype, **kwargs)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from clinical_gym.rollout.transformers_policy import TransformersPolicy

    from clinical_gym.llm import gguf_cache

    target, gguf_file = gguf_cache.resolve(target, gguf_file)  # a GGUF file: its plain folder, converted once
    tokenizer = AutoTokenizer.from_pretrained(target, gguf_file=gguf_file)
    model = AutoModelForCausalLM.from_pretrained(target, gguf_file=gguf_file, dtype=dtype)
    return TransformersPolicy(model, tokenizer, **kwargs)
