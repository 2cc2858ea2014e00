"""The SQLite FTS5 passage store: building (with a skip report), ranked search, snippets, categories, WAL mode,
concurrent readers, and clear errors for missing or corrupted files."""

from __future__ import annotations

import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from clinical_gym.knowledge_base import KnowledgeBaseError, Passage, PassageStore, build_from_source, build_store
from clinical_gym.knowledge_base.corpus.written import written_passages

QUERIES = ["community acquired pneumonia antibiotics", "warfarin interaction", "diabetic ketoacidosis insulin potassium",
           "stroke thrombolysis window", "sepsis fluids lactate", "metformin kidney", "asthma inhaled steroid", "chest pain"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> PassageStore:
    path = tmp_path_factory.mktemp("kb") / "written.sqlite"
    build_store(written_passages(), path)
    return PassageStore(path)


def test_schema_tokenizer_and_wal_mode(store):
    db = sqlite3.connect(store.path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    fts_sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'passages_fts'").fetchone()[0]
    assert "USING FTS5" in fts_sql and "porter unicode61" in fts_sql
    columns = [r[1] for r in db.execute("PRAGMA table_info(passages)")]
    assert columns == ["doc_id", "source", "title", "content", "category", "dataset_name"]
    assert int(store.meta["passages"]) == len(store) == 321


def test_search_ranks_the_relevant_passage_first(store):
    hits = store.search("diabetic ketoacidosis fixed-rate insulin potassium", k=3)
    assert hits[0].doc_id in {"cg:guideline:dka-management", "cg:condition:diabetic-ketoacidosis"}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.score > 0 for h in hits)


def test_snippets_come_from_fts5_with_marked_terms(store):
    hit = store.search("thrombolysis", k=1)[0]
    assert "**thrombolysis**" in hit.snippet.lower()


def test_category_filter(store):
    hits = store.search("warfarin", k=10, category="interaction")
    assert hits and all(h.category == "interaction" for h in hits)
    assert store.search("warfarin", k=10, category="no-such-category") == []


def test_get_and_categories(store):
    p = store.get("cg:drug:metformin")
    assert p is not None and p.title == "Metformin" and "biguanide" in p.content
    assert store.get("nope") is None
    cats = store.categories()
    assert set(cats) == {"condition", "drug", "interaction", "guideline"} and sum(cats.values()) == len(store)


def test_empty_and_stopword_queries_return_nothing(store):
    assert store.search("") == [] and store.search("the of and") == [] and store.search("fever", k=0) == []


def test_eight_threads_get_the_same_results_as_one(store):
    expected = {q: store.search(q, k=5) for q in QUERIES}
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda q: (q, store.search(q, k=5)), QUERIES * 25))
    assert all(hits == expected[q] for q, hits in results)


def test_build_from_jsonl_reports_skipped_rows(tmp_path):
    src = tmp_path / "mine.jsonl"
    rows = [
        json.dumps({"id": "a", "title": "Gout", "text": "Gout is urate crystal arthritis.", "category": "condition"}),
        "{not json",
        json.dumps({"doc_id": "a", "content": "duplicate id"}),
        json.dumps({"doc_id": "b", "title": "No content"}),
        json.dumps(["not", "an", "object"]),
        "",
        json.dumps({"content": "No id given: one is made up.", "title": 3}),
        json.dumps({"doc_id": "c", "content": {"nested": True}}),
    ]
    src.write_text("\n".join(rows) + "\n")
    report = build_from_source(src, tmp_path / "mine.sqlite")
    assert report.written == 2
    assert report.skipped == {"invalid JSON": 1, "duplicate doc_id": 1, "missing or empty content": 1,
                              "not a JSON object": 1, "content is not text": 1}
    assert report.first_seen["invalid JSON"] == "line 2"
    summary = report.summary()
    assert "wrote 2 passages" in summary and "skipped 5 rows" in summary and "1 duplicate doc_id (first at line 3)" in summary
    store = PassageStore(tmp_path / "mine.sqlite")
    assert store.get("a").source == "mine.jsonl" and store.get("a").dataset_name == "mine"
    assert store.get("mine:6").title == "3"  # rows without an id are numbered by position


def test_rebuild_replaces_the_old_database(tmp_path):
    path = tmp_path / "kb.sqlite"
    build_store([Passage(doc_id="old", content="old text about gout")], path)
    first = PassageStore(path).build_id
    build_store([Passage(doc_id="new", content="new text about gout")], path)
    store = PassageStore(path)
    assert store.build_id != first and [h.doc_id for h in store.search("gout")] == ["new"]
    assert not list(tmp_path.glob("*.building-*"))


def test_missing_database_names_the_rebuild_command(tmp_path):
    with pytest.raises(KnowledgeBaseError, match="no knowledge base at .*clinical-gym kb build"):
        PassageStore(tmp_path / "absent.sqlite")


@pytest.mark.parametrize("content", [b"this is not a database at all" * 100, b""])
def test_corrupted_database_names_the_rebuild_command(tmp_path, content):
    path = tmp_path / "broken.sqlite"
    path.write_bytes(content)
    with pytest.raises(KnowledgeBaseError, match="clinical-gym kb build --out"):
        PassageStore(path)


def test_truncated_database_fails_clearly_when_read(store, tmp_path):
    path = tmp_path / "truncated.sqlite"
    data = store.path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(KnowledgeBaseError, match="clinical-gym kb build"):
        broken = PassageStore(path)
        for q in QUERIES:
            broken.search(q, k=50)
        list(broken.scan())


def test_a_failed_build_keeps_the_old_database(tmp_path):
    path = tmp_path / "kb.sqlite"
    build_store([Passage(doc_id="old", content="gout")], path)
    with pytest.raises(sqlite3.IntegrityError):
        build_store([Passage(doc_id="dup", content="a"), Passage(doc_id="dup", content="b")], path)
    assert [h.doc_id for h in PassageStore(path).search("gout")] == ["old"]
    assert not list(tmp_path.glob("*.building-*"))
