"""Knowledge-base text handling: words and stems match SQLite FTS5's 'porter unicode61', safe query terms, snippets."""

from __future__ import annotations

import sqlite3

import pytest

from clinical_gym.knowledge_base.text import MAX_QUERY_TERMS, fts_match_expression, make_snippet, query_terms, stem, stems, words

SAMPLES = [
    "Community-acquired pneumonia: cough, fever and pleuritic chest pain; CURB-65 guides admission.",
    "Naïve T cells, café-au-lait macules and Sjögren's syndrome — diacritics fold away.",
    "Hyperkalaemia >6.5 mmol/L needs IV calcium gluconate, insulin-dextrose & salbutamol (nebulised).",
    "Running runners ran; relational conditional generalization happiness hoping hopped.",
    "x² 36.6°C µg/L snake_case 12-lead ECG NSTEMI/STEMI e.g. i.v. 2nd-line α-blockers",
    "ÉCOLE Ærø İstanbul ﬁbrosis ontology assembly irreversibly visibly possibly",
]


def fts5_tokens(text: str) -> list[str]:
    """What SQLite's FTS5 'porter unicode61' tokenizer stores for ``text``, in order."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t VALUES (?)", (text,))
    return [term for (term,) in db.execute("SELECT term FROM v ORDER BY offset")]


@pytest.mark.parametrize("text", SAMPLES)
def test_stems_match_the_fts5_tokenizer(text):
    assert stems(text) == fts5_tokens(text)


def test_words_fold_case_and_diacritics_and_split_on_punctuation():
    assert words("Café-au-LAIT, x_y 3.5mg") == ["cafe", "au", "lait", "x", "y", "3", "5mg"]
    assert stem("running") == "run" and stem("as") == "as"  # words under 3 letters are not stemmed


def test_query_terms_make_any_text_safe():
    assert query_terms('pneumonia AND "sepsis" OR NOT (fever* ^ title:cough NEAR') == [
        "pneumonia", "sepsis", "not", "fever", "title", "cough", "near"]
    assert query_terms("the the THE of") == []
    assert query_terms("   ") == [] and query_terms("🤒🩺") == []
    assert query_terms("Fever fever FEVER") == ["fever"]
    assert len(query_terms(" ".join(f"term{i}" for i in range(100)))) == MAX_QUERY_TERMS


def test_match_expression_is_quoted_or_terms():
    assert fts_match_expression(["chest", "pain"]) == '"chest" OR "pain"'


def test_snippet_marks_hits_and_cuts_around_the_densest_window():
    text = ("Background words that say nothing at all about the topic. " * 5
            + "Sepsis needs antibiotics within one hour and fluids for hypotension. " + "Filler text again. " * 10)
    snip = make_snippet(text, [stem("sepsis"), stem("antibiotic")], width=80)
    assert "**Sepsis**" in snip and "**antibiotics**" in snip
    assert snip.startswith("…") and snip.endswith("…") and len(snip) < 130


def test_snippet_handles_unicode_and_no_hits():
    assert make_snippet("Naïve NAÏVE", [stem("naive")]) == "**Naïve** **NAÏVE**"
    assert make_snippet("Short text.", [stem("absent")]) == "Short text."
    assert make_snippet("", [stem("x")]) == ""
