"""The medical knowledge base: a passage store (SQLite FTS5, BM25), its search backends and the bundled corpus.

* ``KnowledgeBase(path)``: search a built database (fast in-memory bm25s index when installed, else FTS5);
  ``open_bundled()`` opens the bundled corpus, building it in the user cache on first use.
* ``SmallCorpusIndex(passages)``: the same search over a few passages held in memory (rank-bm25).
* ``build_store`` / ``build_from_source``: write a database from passages, a JSONL file or a saved HF dataset.
* ``KnowledgeTools``: search_knowledge / get_passage / search_by_category for agents.
"""

from clinical_gym.knowledge_base.errors import KnowledgeBaseError
from clinical_gym.knowledge_base.ingest import BuildReport, build_from_source
from clinical_gym.knowledge_base.passage import Passage, SearchHit
from clinical_gym.knowledge_base.search import KnowledgeBase, PassageSearch, open_bundled
from clinical_gym.knowledge_base.small_index import SmallCorpusIndex
from clinical_gym.knowledge_base.store import PassageStore, build_store
from clinical_gym.knowledge_base.tools import KnowledgeTools

__all__ = [
    "BuildReport", "KnowledgeBase", "KnowledgeBaseError", "KnowledgeTools", "Passage", "PassageSearch", "PassageStore",
    "SearchHit", "SmallCorpusIndex", "build_from_source", "build_store", "open_bundled",
]
