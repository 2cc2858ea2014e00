"""The search interface every backend offers, and ``KnowledgeBase``: a passage database with its best backend."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal, Protocol

from clinical_gym.knowledge_base.errors import KnowledgeBaseError
from clinical_gym.knowledge_base.fast_index import FastIndex, fast_backend_available
from clinical_gym.knowledge_base.passage import Passage, SearchHit
from clinical_gym.knowledge_base.store import PassageStore

Backend = Literal["auto", "fast", "fts5"]
BACKENDS: tuple[str, ...] = ("auto", "fast", "fts5")


class PassageSearch(Protocol):
    """What search tools need: ranked search with an optional category, lookup by doc_id, the categories."""

    def search(self, query: str, k: int = 5, category: str | None = None) -> list[SearchHit]: ...

    def get(self, doc_id: str) -> Passage | None: ...

    def categories(self) -> dict[str, int]: ...


class KnowledgeBase:
    """A built passage database searched with the fast in-memory index (bm25s) when installed, else with FTS5.

    ``backend``: "auto" (fast when bm25s and numba are installed), "fast" (required) or "fts5". Search never
    raises on query text; a missing or corrupted database raises ``KnowledgeBaseError`` naming the rebuild
    command. Thread-safe.
    """

    def __init__(self, path: str | Path, backend: Backend = "auto"):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        if backend == "fast" and not fast_backend_available():
            raise KnowledgeBaseError("the fast backend needs: pip install bm25s numba PyStemmer")
        self.store = PassageStore(path)
        use_fast = len(self.store) > 0 and (backend == "fast" or (backend == "auto" and fast_backend_available()))
        self._index: FastIndex | PassageStore = FastIndex.open(self.store) if use_fast else self.store
        self.backend = "fast" if use_fast else "fts5"

    @property
    def path(self) -> Path:
        return self.store.path

    def __len__(self) -> int:
        return len(self.store)

    def search(self, query: str, k: int = 5, category: str | None = None) -> list[SearchHit]:
        """The ``k`` most relevant passages for ``query`` (any text), optionally only from one category."""
        return self._index.search(query, k, category)

    def get(self, doc_id: str) -> Passage | None:
        """The passage with this doc_id, or None."""
        return self.store.get(doc_id)

    def categories(self) -> dict[str, int]:
        """Passage count per category, largest first."""
        return self.store.categories()


def open_bundled(path: str | Path | None = None, backend: Backend = "auto",
                 on_progress: Callable[[int], None] | None = None) -> KnowledgeBase:
    """The bundled corpus' knowledge base at ``path`` (default: the user cache), built first if missing or unreadable."""
    from clinical_gym.knowledge_base.corpus import build_bundled, default_db_path

    path = Path(path) if path else default_db_path()
    try:
        return KnowledgeBase(path, backend)
    except KnowledgeBaseError:
        if backend == "fast" and not fast_backend_available():
            raise
    build_bundled(path, on_progress=on_progress)
    return KnowledgeBase(path, backend)
