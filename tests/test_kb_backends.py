"""The three search backends behind one interface: FTS5, the fast in-memory bm25s index, and rank-bm25 for small
corpora. Same tokenization and BM25 parameters, so they rank alike; the fast index is cached beside the database."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from clinical_gym.knowledge_base import KnowledgeBase, KnowledgeBaseError, Passage, SmallCorpusIndex, build_store
from clinical_gym.knowledge_base.corpus.written import written_passages
from clinical_gym.knowledge_base.fast_index import FastIndex

pytest.importorskip("bm25s", reason="the fast backend is optional: pip install bm25s numba PyStemmer")
pytest.importorskip("numba", reason="the fast backend is optional: pip install bm25s numba PyStemmer")

QUERIES = ["community acquired pneumonia antibiotics", "warfarin interaction antibiotics", "insulin potassium ketoacidosis",
           "stroke thrombolysis window", "sepsis fluids lactate vasopressor", "metformin kidney function",
           "asthma inhaled corticosteroid", "chest pain troponin ECG", "hyponatraemia SSRI older adults", "gout allopurinol"]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("kb") / "written.sqlite"
    build_store(written_passages(), path)
    return path


@pytest.fixture(scope="module")
def fts(db):
    return KnowledgeBase(db, backend="fts5")


@pytest.fixture(scope="module")
def fast(db):
    return KnowledgeBase(db, backend="fast")


def test_auto_picks_the_fast_backend_when_installed(db, fast, fts):
    assert KnowledgeBase(db).backend == "fast" and fast.backend == "fast" and fts.backend == "fts5"


@pytest.mark.parametrize("query", QUERIES)
def test_fast_and_fts5_return_the_same_ranking_and_scores(fast, fts, query):
    a, b = fast.search(query, k=10), fts.search(query, k=10)
    assert [h.doc_id for h in a] == [h.doc_id for h in b]
    assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=1e-3)


def test_fast_backend_filters_by_category_and_marks_snippets(fast, fts):
    hits = fast.search("warfarin bleeding", k=5, category="interaction")
    assert hits and all(h.category == "interaction" for h in hits)
    assert [h.doc_id for h in hits] == [h.doc_id for h in fts.search("warfarin bleeding", k=5, category="interaction")]
    assert "**warfarin**" in hits[0].snippet.lower()
    assert fast.search("warfarin", category="no-such-category") == []


def test_small_corpus_index_agrees_with_fts5(fts):
    small = SmallCorpusIndex(written_passages())
    overlaps = []
    for q in QUERIES:
        a = {h.doc_id for h in small.search(q, k=10)}
        b = {h.doc_id for h in fts.search(q, k=10)}
        overlaps.append(len(a & b) / len(b))
    assert sum(overlaps) / len(overlaps) >= 0.8
    assert small.search("sepsis lactate", k=1)[0].doc_id == fts.search("sepsis lactate", k=1)[0].doc_id


def test_small_corpus_index_interface():
    notes = [Passage(doc_id="n1", title="Triage note", content="Crushing chest pain radiating to the left arm.", category="note"),
             Passage(doc_id="n2", title="Nursing note", content="Pain settled after GTN spray; obs stable.", category="note"),
             Passage(doc_id="n3", title="Drug chart", content="Aspirin 300 mg given at 09:10.", category="chart")]
    index = SmallCorpusIndex(notes)
    hits = index.search("chest pain", k=5)
    assert [h.doc_id for h in hits] == ["n1", "n2"] and "**chest**" in hits[0].snippet
    assert [h.doc_id for h in index.search("aspirin pain", category="chart")] == ["n3"]
    assert index.get("n2") == notes[1] and index.get("x") is None
    assert index.categories() == {"note": 2, "chart": 1}
    assert index.search("") == [] and SmallCorpusIndex([]).search("pain") == []
    with pytest.raises(ValueError, match="unique"):
        SmallCorpusIndex(notes + notes[:1])


def test_fast_index_is_cached_and_rebuilt_with_the_store(db, tmp_path):
    path = tmp_path / "kb.sqlite"
    build_store([Passage(doc_id="a", content="gout and urate"), Passage(doc_id="b", content="sepsis and lactate")], path)
    kb = KnowledgeBase(path, backend="fast")
    cache = path.with_name("kb.sqlite.bm25s")
    assert (cache / "meta.json").is_file()
    stamp = (cache / "meta.json").stat().st_mtime_ns
    assert [h.doc_id for h in KnowledgeBase(path, backend="fast").search("gout")] == ["a"]
    assert (cache / "meta.json").stat().st_mtime_ns == stamp  # reused, not rebuilt
    build_store([Passage(doc_id="c", content="gout flare colchicine")], path)
    assert [h.doc_id for h in KnowledgeBase(path, backend="fast").search("gout")] == ["c"]
    (cache / "rowids.npy").write_bytes(b"garbage")
    assert [h.doc_id for h in KnowledgeBase(path, backend="fast").search("gout")] == ["c"]  # broken cache: rebuilt
    assert kb.search("sepsis")[0].doc_id == "b"  # an open index keeps serving its own build


def test_unknown_backend_and_missing_file(db, tmp_path):
    with pytest.raises(ValueError, match="unknown backend"):
        KnowledgeBase(db, backend="elastic")
    with pytest.raises(KnowledgeBaseError, match="clinical-gym kb build"):
        KnowledgeBase(tmp_path / "none.sqlite", backend="fast")


def test_fast_index_len_and_empty_query(db):
    kb = KnowledgeBase(db, backend="fast")
    assert len(kb) == 321 and kb.search("   ") == [] and kb.search("zzzunknownword") == []
    assert isinstance(kb._index, FastIndex) and len(kb._index) == 321


def test_an_index_built_in_many_chunks_equals_one_built_in_one(db, monkeypatch):
    """The build counts passages chunk by chunk and places each chunk's weights in its columns: with 7-passage
    chunks (46 of them here) every column, weight and ranking is the same as with one chunk."""
    from clinical_gym.knowledge_base import PassageStore, fast_index

    assert fast_index.CHUNK_PASSAGES <= 2**16  # a chunk's passage numbers are stored as uint16
    whole = FastIndex.build(PassageStore(db))
    monkeypatch.setattr(fast_index, "CHUNK_PASSAGES", 7)
    chunked = FastIndex.build(PassageStore(db))
    assert fast_index.CHUNK_PASSAGES == 7 and len(chunked) == len(whole) == 321
    a, b = whole._retriever, chunked._retriever
    assert a.vocab_dict.keys() == b.vocab_dict.keys()
    for stem_, i in a.vocab_dict.items():
        j = b.vocab_dict[stem_]
        cols_a = slice(a.scores["indptr"][i], a.scores["indptr"][i + 1])
        cols_b = slice(b.scores["indptr"][j], b.scores["indptr"][j + 1])
        assert (a.scores["indices"][cols_a] == b.scores["indices"][cols_b]).all()
        assert (a.scores["data"][cols_a] == b.scores["data"][cols_b]).all()
    for query in QUERIES:
        assert chunked.search(query, k=5) == whole.search(query, k=5)


def test_fast_backend_is_thread_safe(fast):
    expected = {q: fast.search(q, k=5) for q in QUERIES}
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda q: (q, fast.search(q, k=5)), QUERIES * 20))
    assert all(hits == expected[q] for q, hits in results)


def test_without_bm25s_auto_falls_back_to_fts5(db, monkeypatch):
    from clinical_gym.knowledge_base import search

    monkeypatch.setattr(search, "fast_backend_available", lambda: False)
    assert KnowledgeBase(db).backend == "fts5"
    with pytest.raises(KnowledgeBaseError, match="pip install bm25s numba PyStemmer"):
        KnowledgeBase(db, backend="fast")
