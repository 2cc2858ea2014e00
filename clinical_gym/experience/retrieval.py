"""Doctor-R1's three-stage experience retrieval (seed digests §2; paper §3.3, Eq. 4-6).

1. Candidates: every stored state scored by ``S = sim(query, state) + alpha * reward`` (Eq. 4); the top
   ``candidates`` (N = 30) kept.
2. Reranking: a pluggable ``Reranker`` reorders them (default: the similarity of stage 1; the paper uses a
   cross-encoder: ``RetrievalConfig(reranker=FOLDER)`` loads one, ``clinical_gym.experience.rerank``; any callable
   with the ``Reranker`` signature works too).
3. Filters (Eq. 5-6): a candidate is dropped when its reward is below ``mean + beta * std`` of the candidates'
   rewards (beta = 1; capped at the best candidate reward, so that the best are kept when most candidates share
   the top reward, as discrete rule rewards often do), or when its state is a near-duplicate (similarity >=
   ``novelty``, 0.9) of the query or of a candidate already kept; the first ``k`` (2) left, in reranked order, are
   returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from clinical_gym.experience.index import ExperienceIndex, default_index
from clinical_gym.experience.store import Experience, ExperienceStore

REWARD_TOLERANCE = 1e-9
"""Slack on the reward threshold, so equal rewards (std 0) are kept despite rounding in the mean."""


@dataclass(frozen=True)
class RetrievalConfig:
    """Doctor-R1's retrieval settings (paper §3.3).

    alpha: weight of the reward in the candidate score (Eq. 4).
    candidates: N, candidates kept by stage 1.
    novelty: tau_novelty; states at least this similar to the query or to a kept experience are dropped (Eq. 6).
    beta: beta_std in the reward threshold mean + beta * std of the candidates' rewards (Eq. 5).
    k: experiences returned.
    reranker: the folder of a cross-encoder for stage 2 (Doctor-R1: bge-reranker-base; ``CrossEncoderReranker``),
        None for the stage-1 similarity.
    """

    alpha: float = 0.5
    candidates: int = 30
    novelty: float = 0.9
    beta: float = 1.0
    k: int = 2
    reranker: str | None = None

    def __post_init__(self) -> None:
        if self.candidates < 1 or self.k < 1:
            raise ValueError(f"candidates and k must be >= 1, got {self.candidates} and {self.k}")
        if self.alpha < 0:
            raise ValueError(f"alpha must be >= 0, got {self.alpha}")


@dataclass(frozen=True)
class Candidate:
    """A stored experience considered for a query: its ``similarity`` to the query, its stage-1 ``score`` and
    its reranker ``rerank_score``."""

    experience: Experience
    similarity: float
    score: float
    rerank_score: float = 0.0
    row: int = field(default=-1, repr=False)


class Reranker(Protocol):
    """Scores candidates for a query; higher ranks first (one score per candidate, in order)."""

    def __call__(self, query: str, candidates: Sequence[Candidate]) -> Sequence[float]: ...


def similarity_reranker(query: str, candidates: Sequence[Candidate]) -> list[float]:
    """The default reranker: each candidate's similarity to the query."""
    return [c.similarity for c in candidates]


def reward_threshold(rewards: Sequence[float] | np.ndarray, beta: float) -> float:
    """tau_dynamic = mean + beta * std of ``rewards`` (population std) (Eq. 5)."""
    values = np.asarray(rewards, dtype=np.float64)
    return float(values.mean() + beta * values.std())


def apply_filters(candidates: Sequence[Candidate], pairwise: np.ndarray, config: RetrievalConfig) -> list[Candidate]:
    """Stage 3 over ``candidates`` in reranked order; ``pairwise[i, j]`` is the similarity of the states of
    candidates ``i`` and ``j``. The reward threshold is ``min(reward_threshold, best reward)``. Returns at most
    ``config.k`` candidates."""
    if not candidates:
        return []
    rewards = [c.experience.reward for c in candidates]
    # capped at the best reward: otherwise, when most candidates share the top reward, no candidate would pass
    threshold = min(reward_threshold(rewards, config.beta), max(rewards)) - REWARD_TOLERANCE
    kept: list[int] = []
    for i, candidate in enumerate(candidates):
        if len(kept) == config.k:
            break
        if candidate.experience.reward < threshold or candidate.similarity >= config.novelty:
            continue
        if any(pairwise[i, j] >= config.novelty for j in kept):
            continue
        kept.append(i)
    return [candidates[i] for i in kept]


class Retriever:
    """Retrieves experiences from ``store`` for a query state through an ``index`` (by default MiniLM embeddings,
    or BM25 without the embedding extra). Rows other processes add are seen on the next ``retrieve``."""

    def __init__(self, store: ExperienceStore, index: ExperienceIndex | None = None,
                 config: RetrievalConfig | None = None, reranker: Reranker | None = None) -> None:
        self.store = store
        self.index = index if index is not None else default_index(store)
        self.config = config or RetrievalConfig()
        if reranker is None and self.config.reranker is not None:
            from clinical_gym.experience.rerank import CrossEncoderReranker

            reranker = CrossEncoderReranker(self.config.reranker)
        self.reranker = reranker or similarity_reranker

    def retrieve(self, query: str, *, k: int | None = None, exclude_case: str | None = None) -> list[Candidate]:
        """The top ``k`` (default ``config.k``) experiences for ``query``, best first, leaving out those of case
        ``exclude_case`` (so an episode never sees its own case's answers)."""
        config = self.config if k is None else replace(self.config, k=k)
        index = self.index
        index.sync()
        if not len(index) or not query.strip():
            return []
        scores = index.query(query)
        # Eq. 4: S = sim(emb(Q), emb(E_state)) + alpha * R(E)
        combined = scores.relevance + config.alpha * index.rewards
        code = index.case_code(exclude_case) if exclude_case is not None else None
        if code is not None:
            combined = np.where(index.cases == code, -np.inf, combined)
        rows = _top(combined, config.candidates)
        if not len(rows):
            return []
        experiences = self.store.get(index.ids[rows].tolist())
        similarity = scores.similarity(rows)
        candidates = [Candidate(e, float(s), float(combined[r]), row=int(r))
                      for e, s, r in zip(experiences, similarity, rows)]
        reranked = self._rerank(query, candidates)
        pairwise = scores.pairwise(np.array([c.row for c in reranked]))
        return apply_filters(reranked, pairwise, config)

    def _rerank(self, query: str, candidates: list[Candidate]) -> list[Candidate]:
        """The candidates with their reranker scores, best first (stable: ties keep the stage-1 order)."""
        values = list(self.reranker(query, candidates))
        if len(values) != len(candidates):
            raise ValueError(f"the reranker returned {len(values)} scores for {len(candidates)} candidates")
        scored = [replace(c, rerank_score=float(v)) for c, v in zip(candidates, values)]
        return sorted(scored, key=lambda c: -c.rerank_score)


def _top(scores: np.ndarray, n: int) -> np.ndarray:
    """Rows of the ``n`` highest finite scores, highest first (ties: lower row first)."""
    rows = np.argpartition(-scores, n - 1)[:n] if len(scores) > n else np.arange(len(scores))
    rows = rows[np.isfinite(scores[rows])]
    return rows[np.lexsort((rows, -scores[rows]))]
