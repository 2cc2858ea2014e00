"""A BM25 index held in memory for small corpora (one case's notes, a domain's policy), built with rank-bm25.

Same interface, words, stems and query handling as the database backends, and nothing is written to disk.
Building and searching are linear in the corpus size: use a ``KnowledgeBase`` beyond a few thousand passages.
"""

from __future__ import annotations

from collections.abc import Iterable

from rank_bm25 import BM25Okapi

from clinical_gym.knowledge_base.passage import Passage, SearchHit
from clinical_gym.knowledge_base.text import make_snippet, query_terms, stem, stems

K1, B = 1.2, 0.75


class SmallCorpusIndex:
    """BM25 search over passages given in memory; read-only after construction, so thread-safe."""

    def __init__(self, passages: Iterable[Passage]):
        self._passages = list(passages)
        self._by_id = {p.doc_id: p for p in self._passages}
        if len(self._by_id) != len(self._passages):
            raise ValueError("passages must have unique doc_ids")
        docs = [stems(f"{p.title} {p.content}") for p in self._passages]
        self._terms = [set(d) for d in docs]
        self._bm25 = BM25Okapi(docs, k1=K1, b=B) if docs else None

    def __len__(self) -> int:
        return len(self._passages)

    def categories(self) -> dict[str, int]:
        """Passage count per category, largest first."""
        counts: dict[str, int] = {}
        for p in self._passages:
            counts[p.category] = counts.get(p.category, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def get(self, doc_id: str) -> Passage | None:
        """The passage with this doc_id, or None."""
        return self._by_id.get(doc_id)

    def search(self, query: str, k: int = 5, category: str | None = None) -> list[SearchHit]:
        """The ``k`` passages ranked highest by BM25 that contain at least one query term."""
        query_stems = [stem(t) for t in query_terms(query)]
        if not query_stems or k < 1 or self._bm25 is None:
            return []
        wanted = set(query_stems)
        matches = [i for i, (p, terms) in enumerate(zip(self._passages, self._terms))
                   if not terms.isdisjoint(wanted) and (category is None or p.category == category)]
        scores = self._bm25.get_batch_scores(query_stems, matches) if matches else []
        ranked = sorted((-score, i) for score, i in zip(scores, matches))[:k]
        return [SearchHit(doc_id=(p := self._passages[i]).doc_id, title=p.title, snippet=make_snippet(p.content, query_stems),
                          score=-float(neg), category=p.category, source=p.source, dataset_name=p.dataset_name)
                for neg, i in ranked]
