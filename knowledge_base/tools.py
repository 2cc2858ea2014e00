"""Knowledge-search tools an agent can call: plain methods whose signatures and Google-style docstrings are their
schemas, ready to be mounted as a toolkit. Results are JSON-ready dicts; unknown ids and categories raise
``ValueError`` with a message meant for the agent.
"""

from __future__ import annotations

from pathlib import Path

from clinical_gym.knowledge_base.search import Backend, PassageSearch, open_bundled

MAX_K = 20


class KnowledgeTools:
    """Search tools over a passage index (by default the bundled medical knowledge base).

    ``index``: any ``PassageSearch`` (a ``KnowledgeBase``, a ``SmallCorpusIndex``); when None, the bundled
    knowledge base at ``db_path`` (default: the user cache, built on first use). ``top_k``: results when the
    agent gives no k. Thread-safe; one instance can serve many environments.
    """

    def __init__(self, index: PassageSearch | None = None, *, db_path: str | Path | None = None, top_k: int = 5,
                 backend: Backend = "auto"):
        if not 1 <= top_k <= MAX_K:
            raise ValueError(f"top_k must be between 1 and {MAX_K}")
        self.index = index if index is not None else open_bundled(db_path, backend)
        self.top_k = top_k

    def _k(self, k: int | None) -> int:
        if k is None:
            return self.top_k
        if not 1 <= k <= MAX_K:
            raise ValueError(f"k must be between 1 and {MAX_K}, got {k}")
        return k

    def search_knowledge(self, query: str, k: int | None = None) -> list[dict]:
        """Search the medical knowledge base for passages relevant to a free-text query.

        Args:
            query: What to look up, in plain words, e.g. "first-line treatment of community-acquired pneumonia".
            k: How many passages to return, 1 to 20 (default 5).

        Returns:
            The best-matching passages, most relevant first, each with doc_id, title, snippet (matching words
            marked **like this**), score, category and source. Empty when nothing matches.

        Raises:
            ValueError: If k is outside 1 to 20.
        """
        return [hit.model_dump() for hit in self.index.search(query, self._k(k))]

    def get_passage(self, doc_id: str) -> dict:
        """Read the full text of one passage found by a search.

        Args:
            doc_id: The passage id from a search result, e.g. "icd10cm:J18.9".

        Returns:
            The passage: doc_id, title, content, category, source and dataset_name.

        Raises:
            ValueError: If no passage has this doc_id.
        """
        passage = self.index.get(doc_id)
        if passage is None:
            raise ValueError(f"passage {doc_id!r} not found; use a doc_id from a search result")
        return passage.model_dump()

    def search_by_category(self, category: str, query: str, k: int | None = None) -> list[dict]:
        """Search one category of the knowledge base, e.g. only drugs or only guidelines.

        Args:
            category: The category to search: "condition", "drug", "interaction", "guideline" (written
                clinical summaries), "icd10cm" (diagnosis codes), "drug_name" (drug names and synonyms),
                "phenotype" (HPO terms) or "rare_disease" (diseases with their HPO features).
            query: What to look up, in plain words, e.g. "metformin contraindications".
            k: How many passages to return, 1 to 20 (default 5).

        Returns:
            The best-matching passages of that category, most relevant first, in the same form as search_knowledge.

        Raises:
            ValueError: If the category does not exist or k is outside 1 to 20.
        """
        known = self.index.categories()
        if category not in known:
            raise ValueError(f"unknown category {category!r}; choose one of {', '.join(sorted(known))}")
        return [hit.model_dump() for hit in self.index.search(query, self._k(k), category)]
