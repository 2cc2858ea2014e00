"""Search never raises on user text: 10,000 fuzzed queries (any unicode text, half of them turned into a mix of
FTS5 operators, quotes, brackets, emoji and blanks) against every backend."""

from __future__ import annotations

from itertools import islice

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_gym.knowledge_base import KnowledgeBase, SearchHit, SmallCorpusIndex, build_store
from clinical_gym.knowledge_base.corpus.written import written_passages
from clinical_gym.knowledge_base.fast_index import fast_backend_available

PIECES = ['"', "'", "AND", "OR", "NOT", "NEAR", "NEAR(", "*", "^", ":", "(", ")", "{", "}", "-", "+", "title:", "content:",
          "passages_fts", "🤒", "🩺", "é", "\u0301", "ＡＮＤ", "\x00", " ", "\t\n", "sepsis", "fever", "warfarin", "the",
          ";", "--", "%", "_", "\\", "µg", "36.6°C", "x²", "中文", "rank", "bm25(", "''", '""']
CATEGORIES = [None, "drug", "guideline", "nope"]


def operator_soup(text: str) -> str:
    """A query built from FTS5 syntax pieces, chosen by the characters of ``text``."""
    return "".join(PIECES[(ord(c) * 7 + i) % len(PIECES)] + (" " if ord(c) % 3 else "") for i, c in enumerate(text[:12]))


@pytest.fixture(scope="module")
def backends(tmp_path_factory):
    passages = list(islice(written_passages(), 0, None, 8))  # a few of every category: keeps 10,000 runs fast
    path = tmp_path_factory.mktemp("kb") / "sample.sqlite"
    build_store(passages, path)
    found = [KnowledgeBase(path, backend="fts5"), SmallCorpusIndex(passages)]
    if fast_backend_available():
        found.append(KnowledgeBase(path, backend="fast"))
    return found


@settings(max_examples=10_000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=60))
def test_any_query_is_safe_on_every_backend(backends, text):
    k, category = 1 + len(text) % 8, CATEGORIES[len(text) % len(CATEGORIES)]
    query = operator_soup(text) if sum(map(ord, text)) % 2 else text  # half raw text, half FTS5 syntax
    for backend in backends:
        hits = backend.search(query, k, category)
        assert len(hits) <= k and all(isinstance(h, SearchHit) for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert category is None or all(h.category == category for h in hits)


def test_operator_soup_really_contains_fts5_syntax():
    soup = operator_soup("abcdefghijkl")
    assert any(op in soup for op in ('"', "NEAR", "(", "*", ":", "AND")) and len(soup) > 12
