"""In-memory search indexes over an experience store, kept in step with it.

``DenseIndex`` holds every state's cached embedding in one float32 matrix (loaded once, then only new rows are
read) and scores a query with one matrix-vector product. ``BM25Index`` is the fallback when the embedding extra is
absent: rank-bm25 over the states' words. Both see rows that any process adds to the store, at the next ``sync``.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from clinical_gym.experience.embedding import Encoder, MiniLMEncoder, embedding_available
from clinical_gym.experience.store import Change, ExperienceStore

NO_CASE = -1
ENCODE_CHUNK = 512  # states encoded (and their vectors saved) per step of a sync
_WORD = re.compile(r"[^\W_]+")


class QueryScores(Protocol):
    """One query's view of an index: ``relevance`` of every row (in [0, 1] for similar texts), and the query's
    similarity to chosen rows' states and between those states (cosines: 1 is the same text)."""

    relevance: np.ndarray

    def similarity(self, rows: np.ndarray) -> np.ndarray:
        """Similarity [len(rows)] of the query to each row's state."""
        ...

    def pairwise(self, rows: np.ndarray) -> np.ndarray:
        """Similarity [len(rows), len(rows)] between the rows' states."""
        ...


class ExperienceIndex:
    """The rows of a store that an index knows (ids, rewards, case codes) and their sync with the store.

    Subclasses add their per-row search data in ``_append`` and answer ``query``. Row ``i`` is experience
    ``ids[i]``; a reward improved in the store is updated in place.
    """

    def __init__(self, store: ExperienceStore) -> None:
        self.store = store
        self._rev = 0
        self._n = 0
        self._ids = np.empty(0, dtype=np.int64)
        self._rewards = np.empty(0, dtype=np.float32)
        self._cases = np.empty(0, dtype=np.int32)
        self._row_of: dict[int, int] = {}
        self._case_codes: dict[str, int] = {}

    def __len__(self) -> int:
        return self._n

    @property
    def ids(self) -> np.ndarray:
        return self._ids[:self._n]

    @property
    def rewards(self) -> np.ndarray:
        return self._rewards[:self._n]

    @property
    def cases(self) -> np.ndarray:
        """Each row's case code (``case_code``), ``NO_CASE`` when the experience has no case id."""
        return self._cases[:self._n]

    def case_code(self, case_id: str) -> int | None:
        """The code of ``case_id`` in ``cases``, or None when no row has it."""
        return self._case_codes.get(case_id)

    def sync(self) -> None:
        """Read what was added to or improved in the store since the last sync."""
        if self.store.revision() == self._rev:
            return
        changes = self._changes(self._rev)
        new = [c for c in changes if c.id not in self._row_of]
        for change in changes:
            if change.id in self._row_of:
                row = self._row_of[change.id]
                self._rewards[row], self._cases[row] = change.reward, self._code(change.case_id)
        if new:
            self._reserve(self._n + len(new))
            rows = slice(self._n, self._n + len(new))
            self._ids[rows] = [c.id for c in new]
            self._rewards[rows] = [c.reward for c in new]
            self._cases[rows] = [self._code(c.case_id) for c in new]
            self._row_of.update((c.id, self._n + i) for i, c in enumerate(new))
            self._append(new)
            self._n += len(new)
        if changes:
            self._rev = max(c.rev for c in changes)

    def query(self, text: str) -> QueryScores:
        """Score ``text`` against every row (call ``sync`` first to see the newest rows)."""
        raise NotImplementedError

    # -- for subclasses -------------------------------------------------------------------------------------
    def _changes(self, since: int) -> list[Change]:
        return self.store.changes(since)

    def _append(self, new: Sequence[Change]) -> None:
        """Add the search data of ``new``, which become rows ``len(self)`` onwards."""
        raise NotImplementedError

    def _reserve(self, size: int) -> None:
        """Room for ``size`` rows in the per-row arrays (capacity grows by half, so appends are amortised)."""
        if size <= len(self._ids):
            return
        capacity = max(size, len(self._ids) * 3 // 2, 64)
        self._ids = _grown(self._ids, capacity)
        self._rewards = _grown(self._rewards, capacity)
        self._cases = _grown(self._cases, capacity)

    def _code(self, case_id: str | None) -> int:
        if case_id is None:
            return NO_CASE
        return self._case_codes.setdefault(case_id, len(self._case_codes))


class DenseIndex(ExperienceIndex):
    """Cosine search over the states' embeddings by ``encoder`` (all-MiniLM-L6-v2 by default).

    Vectors come from the store's cache; states without one are encoded on sync (each distinct text once) and their
    vectors written back, so a state is encoded once for all processes sharing the store. The vectors of the last
    ``query_cache_size`` query texts are kept: the G rollouts of a GRPO group open with the same state, so with
    retrieval once per episode only the first of them pays for encoding (the encoder dominates the latency).
    """

    def __init__(self, store: ExperienceStore, encoder: Encoder | None = None, *, query_cache_size: int = 1024) -> None:
        super().__init__(store)
        self.encoder = encoder or MiniLMEncoder()
        self._matrix = np.empty((0, self.encoder.dim), dtype=np.float32)
        self.query_cache_size = query_cache_size
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def matrix(self) -> np.ndarray:
        """The unit vectors [len(self), dim], row ``i`` for experience ``ids[i]``."""
        return self._matrix[:self._n]

    def query(self, text: str) -> _DenseQuery:
        return _DenseQuery(self.matrix @ self.query_vector(text), self.matrix)

    def query_vector(self, text: str) -> np.ndarray:
        """The encoder's unit vector for ``text``, from the cache of recent queries when it is there."""
        vector = self._query_vectors.get(text)
        if vector is None:
            vector = self.encoder.encode([text])[0]
            if self.query_cache_size > 0:
                self._query_vectors[text] = vector
                if len(self._query_vectors) > self.query_cache_size:
                    self._query_vectors.popitem(last=False)
        else:
            self._query_vectors.move_to_end(text)
        return vector

    def _changes(self, since: int) -> list[Change]:
        return self.store.changes(since, encoder=self.encoder.name)

    def _reserve(self, size: int) -> None:
        super()._reserve(size)
        if len(self._ids) > len(self._matrix):
            self._matrix = _grown(self._matrix, len(self._ids))

    def _append(self, new: Sequence[Change]) -> None:
        width = self.encoder.dim * 4
        bad = next((c for c in new if c.vector is not None and len(c.vector) != width), None)
        if bad is not None:
            raise ValueError(f"experience {bad.id} has a cached {self.encoder.name} vector of {len(bad.vector) // 4} "
                             f"dimensions, expected {self.encoder.dim}")
        block = self._matrix[self._n:self._n + len(new)]
        cached = [i for i, c in enumerate(new) if c.vector is not None]
        if cached:
            vectors = np.frombuffer(b"".join(new[i].vector for i in cached), dtype=np.float32)
            block[cached] = vectors.reshape(-1, self.encoder.dim)
        missing = [i for i, c in enumerate(new) if c.vector is None]
        for start in range(0, len(missing), ENCODE_CHUNK):
            rows = missing[start:start + ENCODE_CHUNK]
            ids = [new[i].id for i in rows]
            states = self.store.states(ids)
            unique = {state: i for i, state in enumerate(dict.fromkeys(states))}  # a state shared by many actions
            block[rows] = self.encoder.encode(list(unique))[[unique[state] for state in states]]
            self.store.save_embeddings(self.encoder.name, ids, block[rows])


class _DenseQuery:
    """Cosines of one query vector with every row (``relevance``) and between chosen rows."""

    def __init__(self, relevance: np.ndarray, matrix: np.ndarray) -> None:
        self.relevance = relevance
        self._matrix = matrix

    def similarity(self, rows: np.ndarray) -> np.ndarray:
        return self.relevance[rows]

    def pairwise(self, rows: np.ndarray) -> np.ndarray:
        vectors = self._matrix[rows]
        return vectors @ vectors.T


class BM25Index(ExperienceIndex):
    """BM25 (Okapi, rank-bm25) over the states' words: the fallback without the embedding extra.

    ``relevance`` is the BM25 score divided by the best score of the query (so 1 is the best match); similarity for
    novelty and reranking is the cosine of word counts. rank-bm25 scores every row in Python: fine for thousands
    of experiences, slow (hundreds of ms) at 100,000.
    """

    def __init__(self, store: ExperienceStore) -> None:
        super().__init__(store)
        self._words: list[Counter[str]] = []
        self._norms: list[float] = []
        self._bm25: Any | None = None

    def query(self, text: str) -> _LexicalQuery:
        from rank_bm25 import BM25Okapi

        terms = words(text)
        if self._bm25 is None and self._words:
            self._bm25 = BM25Okapi([list(c.elements()) for c in self._words])
        scores = np.zeros(len(self), dtype=np.float32)
        if self._bm25 is not None and terms:
            scores = np.asarray(self._bm25.get_scores(terms), dtype=np.float32)
        best = float(scores.max(initial=0.0))
        relevance = np.clip(scores / best, 0.0, 1.0) if best > 0 else np.zeros_like(scores)
        return _LexicalQuery(relevance, Counter(terms), self._words, self._norms)

    def _changes(self, since: int) -> list[Change]:
        return self.store.changes(since, with_state=True)

    def _append(self, new: Sequence[Change]) -> None:
        for change in new:
            counts = Counter(words(change.state or ""))
            self._words.append(counts)
            self._norms.append(_norm(counts))
        self._bm25 = None  # rank-bm25 cannot add documents: rebuilt on the next query


class _LexicalQuery:
    """BM25 relevance of one query to every row, and word-count cosines with and between chosen rows."""

    def __init__(self, relevance: np.ndarray, counts: Counter[str], docs: list[Counter[str]],
                 norms: list[float]) -> None:
        self.relevance = relevance
        self._counts = counts
        self._norm = _norm(counts)
        self._docs = docs
        self._norms = norms

    def similarity(self, rows: np.ndarray) -> np.ndarray:
        return np.array([_cosine(self._counts, self._norm, self._docs[r], self._norms[r]) for r in rows],
                        dtype=np.float32)

    def pairwise(self, rows: np.ndarray) -> np.ndarray:
        return np.array([[_cosine(self._docs[a], self._norms[a], self._docs[b], self._norms[b]) for b in rows]
                         for a in rows], dtype=np.float32)


def words(text: str) -> list[str]:
    """The case-folded words (letters and digits) of ``text``."""
    return _WORD.findall(text.casefold())


def default_index(store: ExperienceStore) -> ExperienceIndex:
    """A ``DenseIndex`` with all-MiniLM-L6-v2 when the embedding extra is installed, else a ``BM25Index``."""
    return DenseIndex(store) if embedding_available() else BM25Index(store)


def _norm(counts: Counter[str]) -> float:
    return float(np.sqrt(sum(v * v for v in counts.values())))


def _cosine(a: Counter[str], norm_a: float, b: Counter[str], norm_b: float) -> float:
    if not norm_a or not norm_b:
        return 0.0
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return sum(v * large[t] for t, v in small.items()) / (norm_a * norm_b)


def _grown(array: np.ndarray, rows: int) -> np.ndarray:
    grown = np.empty((rows, *array.shape[1:]), dtype=array.dtype)
    grown[:len(array)] = array
    return grown
