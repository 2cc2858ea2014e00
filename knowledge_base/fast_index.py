"""The fast search backend: an in-memory BM25 index over a store's passages, built with ``bm25s`` (numba).

It indexes title + content with the FTS5 table's words and stems and precomputes each term's BM25 weight per
passage exactly as FTS5's bm25() does (k1 = 1.2, b = 0.75, idf floored at 1e-6), so rankings and scores match
the FTS5 backend; bm25s' numba kernel sums and ranks them. Passages, titles and snippets come from the store.
The index is cached beside the database (``<db>.bm25s/``) and rebuilt when the store or the tokenizer changes.
Needs ``pip install bm25s numba PyStemmer``. The kernel is compiled once per machine (numba's cache, seconds)
and loaded in about 0.3 s by later processes.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from array import array
from functools import lru_cache
from pathlib import Path

import numpy as np

from clinical_gym.knowledge_base.passage import SearchHit
from clinical_gym.knowledge_base.store import TIE_MARGIN, PassageStore
from clinical_gym.knowledge_base.text import TOKENIZER_VERSION, make_snippet, query_terms, stem, words

K1, B = 1.2, 0.75
CACHE_FORMAT = 1


@lru_cache(maxsize=1)
def _retrieval_kernel():
    """bm25s' numba scoring and top-k kernel, compiled with numba's on-disk cache: once per machine, not per process."""
    from bm25s.numba.retrieve_utils import _retrieve_internal_jitted
    from numba import njit

    return njit(nogil=True, cache=True)(_retrieve_internal_jitted)


def fast_backend_available() -> bool:
    """Whether bm25s and numba are installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("bm25s", "numba"))


CHUNK_PASSAGES = 65_536  # passages tokenized and counted at once (their passage numbers fit in uint16)


class _Counts:
    """Term frequencies of a store's passages, gathered chunk by chunk: per chunk the (stem id, passage, count)
    triples sorted by stem then passage, as int32 / uint16 / uint16 (int32 for a count above 65,535), so memory
    is about 8 bytes per distinct (stem, passage) pair and never a copy of every token."""

    def __init__(self) -> None:
        self.chunks: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
        self.vocab: dict[str, int] = {}
        self.word_ids: dict[str, int] = {}
        self.categories: dict[str, int] = {}
        self.lengths = array("q")
        self.rowids = array("q")
        self.codes = array("i")

    def read(self, store: PassageStore) -> _Counts:
        tokens, starts = array("i"), array("q", [0])
        word_ids, vocab = self.word_ids, self.vocab
        for rowid, title, content, category in store.scan():
            ws = words(f"{title} {content}")
            for w in set(ws).difference(word_ids):
                word_ids[w] = vocab.setdefault(stem(w), len(vocab))
            tokens.extend(map(word_ids.__getitem__, ws))
            starts.append(len(tokens))
            self.lengths.append(len(ws))
            self.rowids.append(rowid)
            self.codes.append(self.categories.setdefault(category, len(self.categories)))
            if len(starts) > CHUNK_PASSAGES:
                self._count(tokens, starts)
                tokens, starts = array("i"), array("q", [0])
        if len(starts) > 1:
            self._count(tokens, starts)
        return self

    def _count(self, tokens: array, starts: array) -> None:
        offsets = np.frombuffer(starts, dtype=np.int64)
        n = len(offsets) - 1
        local = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
        pairs, tf = np.unique(np.frombuffer(tokens, dtype=np.int32).astype(np.int64) * n + local, return_counts=True)
        first = len(self.rowids) - n
        tf_type = np.uint16 if tf.max(initial=0) <= np.iinfo(np.uint16).max else np.int32
        self.chunks.append((first, (pairs // n).astype(np.int32), (pairs % n).astype(np.uint16), tf.astype(tf_type)))

    def score_matrix(self) -> dict[str, object]:
        """The term-by-passage BM25 weights in bm25s' CSC layout, computed as FTS5's bm25() does.

        weight = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen)), idf = ln((N - df + 0.5) / (df + 0.5))
        floored at 1e-6, so a query's score is the sum of its terms' weights and equals -bm25() of the FTS5 table.
        Each chunk's weights go straight to their columns (a chunk's passages follow the previous chunk's), and the
        chunk's counts are released as they are placed.
        """
        n_docs, n_vocab = len(self.rowids), len(self.vocab)
        lengths = np.frombuffer(self.lengths, dtype=np.int64)
        df = np.zeros(n_vocab, dtype=np.int64)
        for _, terms, _, _ in self.chunks:
            df += np.bincount(terms, minlength=n_vocab)
        idf = np.log((n_docs - df + 0.5) / (df + 0.5))
        idf[idf <= 0] = 1e-6
        norm = K1 * (1 - B + B * lengths / max(lengths.mean(), 1e-9))
        indptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        data = np.empty(int(indptr[-1]), dtype=np.float32)
        indices = np.empty(int(indptr[-1]), dtype=np.int32)
        cursor = indptr[:-1].copy()
        while self.chunks:
            first, terms, local, tf = self.chunks.pop(0)
            docs = local.astype(np.int64) + first
            weights = idf[terms] * tf * (K1 + 1) / (tf + norm[docs])
            present, starts, counts = np.unique(terms, return_index=True, return_counts=True)
            positions = np.repeat(cursor[present] - starts, counts) + np.arange(len(terms))
            data[positions] = weights
            indices[positions] = docs
            cursor[present] += counts
            del first, terms, local, tf, docs, weights, positions
        return {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}


class FastIndex:
    """BM25 search over a ``PassageStore`` in memory (bm25s with the numba backend); thread-safe for search."""

    def __init__(self, store: PassageStore, retriever, rowids: np.ndarray, categories: list[str], codes: np.ndarray):
        self.store = store
        self._retriever = retriever
        self._rowids = rowids
        self._categories = categories
        self._codes = codes
        self._masks = {name: (codes == i).astype(np.float32) for i, name in enumerate(categories)}
        for mask in (None, np.ones(len(rowids), dtype=np.float32)) if retriever.vocab_dict else ():
            self._top(np.zeros(1, dtype=np.int32), 1, mask)  # compile (or load) both kernel variants now

    @classmethod
    def build(cls, store: PassageStore) -> FastIndex:
        """Tokenize every passage of ``store`` and index it (no cache)."""
        import bm25s

        counts = _Counts().read(store)
        retriever = bm25s.BM25(k1=K1, b=B, method="robertson", backend="numba")
        retriever.scores = counts.score_matrix()
        retriever.vocab_dict = counts.vocab
        retriever.unique_token_ids_set = set(counts.vocab.values())
        retriever.nonoccurrence_array = None
        return cls(store, retriever, np.frombuffer(counts.rowids, dtype=np.int64), list(counts.categories),
                   np.frombuffer(counts.codes, dtype=np.int32))

    @classmethod
    def open(cls, store: PassageStore, cache_dir: str | Path | None = None) -> FastIndex:
        """The index of ``store``, loaded from ``cache_dir`` (default ``<db>.bm25s``) or built and saved there."""
        import bm25s

        cache = Path(cache_dir) if cache_dir else store.path.with_name(store.path.name + ".bm25s")
        meta_file = cache / "meta.json"
        try:
            meta = json.loads(meta_file.read_text())
            if meta == {**cls._cache_key(store), "categories": meta["categories"]}:
                retriever = bm25s.BM25.load(cache, mmap=True, backend="numba", show_progress=False)
                return cls(store, retriever, np.load(cache / "rowids.npy"), meta["categories"], np.load(cache / "categories.npy"))
        except (OSError, ValueError, KeyError, TypeError):
            pass  # no usable cache: build it
        index = cls.build(store)
        index._save(cache)
        return index

    @staticmethod
    def _cache_key(store: PassageStore) -> dict[str, object]:
        """What a cached index must match to be reused: its format, the tokenizer and the store's build."""
        return {"format": CACHE_FORMAT, "tokenizer": TOKENIZER_VERSION, "build_id": store.build_id}

    def _save(self, cache: Path) -> None:
        tmp = cache.with_name(cache.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        self._retriever.save(tmp, show_progress=False)
        np.save(tmp / "rowids.npy", self._rowids)
        np.save(tmp / "categories.npy", self._codes)
        meta = {**self._cache_key(self.store), "categories": self._categories}
        (tmp / "meta.json").write_text(json.dumps(meta))
        shutil.rmtree(cache, ignore_errors=True)
        tmp.rename(cache)

    def __len__(self) -> int:
        return len(self._rowids)

    def _top(self, ids: np.ndarray, n: int, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Scores and passage indexes of the ``n`` best passages for stem ids ``ids`` (``mask`` zeroes others)."""
        index = self._retriever.scores
        scores, docs = _retrieval_kernel()(
            ids, np.array([0, len(ids)], dtype=np.int32), n, True, np.dtype(np.float32), np.dtype(np.int32),
            index["data"], index["indptr"], index["indices"], index["num_docs"], None, mask)
        return scores[0], docs[0]

    def search(self, query: str, k: int = 5, category: str | None = None) -> list[SearchHit]:
        """The ``k`` passages ranked highest by BM25 for any text ``query``; same ranking rule as the FTS5 store."""
        query_stems = [stem(t) for t in query_terms(query)]
        vocab = self._retriever.vocab_dict
        ids = [vocab[s] for s in query_stems if s in vocab]
        mask = self._masks.get(category) if category is not None else None
        if not ids or k < 1 or (category is not None and mask is None):
            return []
        scores, docs = self._top(np.asarray(ids, dtype=np.int32), min(k + TIE_MARGIN, len(self._rowids)), mask)
        ranked = sorted((-float(s), int(d)) for d, s in zip(docs, scores) if s > 0)[:k]
        passages = self.store.by_rowid([int(self._rowids[d]) for _, d in ranked])
        hits = []
        for neg_score, d in ranked:
            p = passages[int(self._rowids[d])]
            hits.append(SearchHit(doc_id=p.doc_id, title=p.title, snippet=make_snippet(p.content, query_stems), score=-neg_score,
                                  category=p.category, source=p.source, dataset_name=p.dataset_name))
        return hits
