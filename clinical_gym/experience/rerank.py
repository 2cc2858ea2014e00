"""Doctor-R1's stage-2 reranker: a cross-encoder that reads the query and each candidate's state together (the paper
uses bge-reranker-base, Xiao et al. 2023).

``CrossEncoderReranker(PATH)`` loads any sequence-classification cross-encoder saved in a local folder with
transformers (``AutoTokenizer`` + ``AutoModelForSequenceClassification``): bge-reranker-base, ms-marco MiniLM
cross-encoders and the like. No package on PyPI ships such weights, so the model must be downloaded once by the
user (e.g. ``huggingface-cli download BAAI/bge-reranker-base --local-dir DIR``) and named by its folder: in
``RetrievalConfig(reranker=DIR)`` or the environment's ``experience_config``. It loads on the first query and runs
on the CPU unless given a device; torch and transformers (the ``[train]`` extra) are imported only then.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from clinical_gym.experience.retrieval import Candidate


class CrossEncoderReranker:
    """A ``Reranker``: one relevance logit per (query, candidate state) pair, higher first. A one-label model's
    logit is its score; a model with several labels scores by its last label (the "relevant" class)."""

    def __init__(self, path: str | os.PathLike[str], *, max_length: int = 512, batch_size: int = 16,
                 device: str = "cpu") -> None:
        self.path = os.fspath(path)
        if not os.path.isdir(self.path):
            raise ValueError(f"no cross-encoder folder {self.path!r}: download a reranker (e.g. bge-reranker-base) "
                             "and give its folder")
        self.max_length = max_length
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self._tokenizer = AutoTokenizer.from_pretrained(self.path)
        self._model = AutoModelForSequenceClassification.from_pretrained(self.path).to(self.device).eval()

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """The relevance of each text to ``query``."""
        import torch

        if self._model is None:
            self._load()
        found: list[float] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start:start + self.batch_size])
            inputs = self._tokenizer([query] * len(chunk), chunk, padding=True, truncation=True,
                                     max_length=self.max_length, return_tensors="pt").to(self.device)
            with torch.no_grad():
                logits = self._model(**inputs).logits
            found += logits[:, -1].float().tolist()
        return found

    def __call__(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        return self.scores(query, [c.experience.state for c in candidates]) if candidates else []
