"""The bundled corpus (built on first use into the user cache, then reused): size, sources and provenance, the
written passages, the top-10 overlap between the fast backend and FTS5, and automatic rebuilds."""

from __future__ import annotations

import sqlite3
from functools import partial

import pytest

from clinical_gym.knowledge_base import KnowledgeBase, corpus, open_bundled
from clinical_gym.knowledge_base.corpus import SOURCES, bundled_passages, default_db_path
from clinical_gym.knowledge_base.corpus.written import SOURCE as WRITTEN_SOURCE
from clinical_gym.knowledge_base.fast_index import fast_backend_available

OVERLAP_QUERIES = [
    "community acquired pneumonia", "type 2 diabetes mellitus with ketoacidosis", "fracture of neck of femur",
    "warfarin interaction antibiotics", "seizures hypotonia developmental delay", "metformin", "acute myocardial infarction",
    "sepsis bundle lactate antibiotics", "asthma inhaled corticosteroid", "iron deficiency anaemia", "stroke thrombolysis",
    "hypertension in pregnancy", "chronic kidney disease stage 3", "atrial fibrillation anticoagulation", "migraine with aura",
    "abnormality of the kidney", "short stature intellectual disability", "penicillin allergy", "major depressive disorder",
    "hyperkalaemia ECG changes", "gout allopurinol", "breast cancer", "tuberculosis of lung", "insulin glargine",
    "paracetamol overdose liver", "heart failure reduced ejection fraction", "cellulitis of lower limb", "autosomal recessive",
]


@pytest.fixture(scope="module")
def bundled() -> KnowledgeBase:
    return open_bundled(backend="fts5")  # builds into the user cache on first use, reused afterwards


def test_corpus_size_sources_and_provenance(bundled):
    assert len(bundled) >= 20_000
    db = sqlite3.connect(bundled.path)
    by_dataset = dict(db.execute("SELECT dataset_name, count(*) FROM passages GROUP BY dataset_name"))
    assert set(by_dataset) == {"clinical_gym_written", "icd10cm", "hpo", "hpo_annotations", "drug_ner"}
    assert by_dataset["clinical_gym_written"] >= 300 and by_dataset["icd10cm"] > 40_000 and by_dataset["hpo"] > 15_000
    assert db.execute("SELECT count(*) FROM passages WHERE source = '' OR content = ''").fetchone()[0] == 0
    assert set(bundled.categories()) == {"condition", "drug", "interaction", "guideline", "icd10cm", "drug_name", "phenotype",
                                         "rare_disease"}


def test_icd_passages_carry_ancestry_and_inclusion_terms(bundled):
    p = bundled.get("icd10cm:I21.4")
    assert "Non-ST elevation (NSTEMI) myocardial infarction" in p.content
    assert "chapter 9" in p.content and "block I20-I25" in p.content and "Nontransmural myocardial infarction" in p.content
    assert "simple-icd-10-cm" in p.source


def test_searches_find_each_source(bundled):
    assert bundled.search("diabetic ketoacidosis fluids insulin potassium", k=3, category="guideline")[0].doc_id == \
        "cg:guideline:dka-management"
    assert bundled.search("metformin lactic acidosis", k=1)[0].source == WRITTEN_SOURCE
    assert bundled.search("glucophage", k=1, category="drug_name")[0].doc_id == "drug:metformin"
    assert bundled.search("gait disturbance", k=3, category="phenotype")[0].doc_id == "hpo:HP:0001288"
    assert bundled.search("NSTEMI myocardial infarction", k=3, category="icd10cm")[0].doc_id.startswith(("icd10cm:I21", "icd10cm:I22"))


@pytest.mark.skipif(not fast_backend_available(), reason="the fast backend is optional: pip install bm25s numba PyStemmer")
def test_fast_backend_top10_overlaps_fts5_on_the_bundled_corpus(bundled):
    fast = KnowledgeBase(bundled.path, backend="fast")
    overlaps = []
    for q in OVERLAP_QUERIES:
        a, b = {h.doc_id for h in fast.search(q, 10)}, {h.doc_id for h in bundled.search(q, 10)}
        assert b, q
        overlaps.append(len(a & b) / len(b))
    assert sum(overlaps) / len(overlaps) >= 0.8


def test_written_passages_are_unique_and_long_enough():
    written = list(bundled_passages(("written",)))
    assert len(written) >= 300 and len({p.doc_id for p in written}) == len(written)
    assert all(len(p.content.split()) >= 40 for p in written)
    with pytest.raises(ValueError, match="unknown corpus sources"):
        list(bundled_passages(("nope",)))
    assert set(SOURCES) == {"written", "icd10cm", "hpo", "drugs"}


def test_a_corrupted_bundled_database_is_rebuilt(tmp_path, monkeypatch):
    # the rebuild goes through build_bundled; limiting it to the written passages keeps this test fast
    monkeypatch.setattr(corpus, "build_bundled", partial(corpus.build_bundled, sources=("written",)))
    path = tmp_path / "bundled.sqlite"
    path.write_bytes(b"garbage" * 1000)
    kb = open_bundled(path, backend="fts5")
    assert len(kb) >= 300 and kb.search("sepsis")[0].category in {"condition", "guideline"}


def test_default_path_is_in_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_db_path().parent == tmp_path / "clinical-gym" / "knowledge_base"
