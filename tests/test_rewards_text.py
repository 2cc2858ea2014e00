"""word_f1: SQuAD-style word F1, the F1 of DoctorAgent-RL Eq. 2."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clinical_gym.rewards import word_f1
from clinical_gym.rewards.text_match import normalized_words


def test_identical_texts_score_one_despite_case_and_punctuation():
    assert word_f1("Acute Appendicitis.", "acute appendicitis") == 1.0


def test_partial_overlap_is_harmonic_mean_of_precision_and_recall():
    # precision 1/2, recall 1/3 -> F1 = 2 * (1/2 * 1/3) / (1/2 + 1/3) = 0.4
    assert word_f1("bacterial pneumonia", "community acquired pneumonia") == pytest.approx(0.4)


def test_overlap_is_a_multiset():
    # "pain" appears twice in the prediction but once in the reference: overlap 1, precision 1/3, recall 1/2
    assert word_f1("pain pain relief", "pain management") == pytest.approx(0.4)


def test_articles_are_ignored():
    assert word_f1("the flu", "flu") == 1.0
    assert normalized_words("An ulcer of the stomach") == ["ulcer", "of", "stomach"]


@pytest.mark.parametrize("prediction, reference", [("", "gastritis"), ("gastritis", ""), ("", ""), ("...", "the"), ("the", "a")])
def test_empty_side_scores_zero(prediction, reference):
    assert word_f1(prediction, reference) == 0.0


def test_disjoint_texts_score_zero():
    assert word_f1("migraine", "appendicitis") == 0.0


@given(st.text(max_size=60), st.text(max_size=60))
def test_f1_is_symmetric_and_bounded(a, b):
    score = word_f1(a, b)
    assert 0.0 <= score <= 1.0
    assert score == pytest.approx(word_f1(b, a))


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_normalize_ascii_fast_path_equals_the_unicode_folding(text):
    # ASCII text skips NFKD and the combining-mark pass; the result must be what that pass gives
    import re
    import unicodedata

    from clinical_gym.cases.schema import normalize

    folded = unicodedata.normalize("NFKD", text.lower())
    slow = " ".join(re.findall(r"[a-z0-9]+", "".join(c for c in folded if not unicodedata.combining(c))))
    assert normalize(text) == slow


def test_normalize_still_folds_accents():
    from clinical_gym.cases.schema import normalize

    assert normalize("Guillain-Barré Syndrome") == "guillain barre syndrome"
    assert normalize("ﬁbrosis ①") == "fibrosis 1"
