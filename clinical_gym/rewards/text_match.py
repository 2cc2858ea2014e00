"""Word-level F1 between a predicted and a reference text (DoctorAgent-RL Eq. 2 uses it for R_accuracy)."""

from __future__ import annotations

from collections import Counter

from clinical_gym.cases.schema import normalize

_ARTICLES = frozenset({"a", "an", "the"})


def normalized_words(text: str) -> list[str]:
    """The lower-case alphanumeric words of ``text`` without articles (SQuAD answer normalisation)."""
    return [w for w in normalize(text).split() if w not in _ARTICLES]


def word_f1(prediction: str, reference: str) -> float:
    """SQuAD-style word F1: harmonic mean of precision and recall of the multiset word overlap.

    Both texts are normalised with :func:`normalized_words`; the score is 0.0 when either has no words.

    >>> word_f1("Acute appendicitis", "appendicitis")
    0.6666666666666666
    """
    pred, ref = normalized_words(prediction), normalized_words(reference)
    if not pred or not ref:
        return 0.0
    overlap = sum((Counter(pred) & Counter(ref)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred), overlap / len(ref)
    return 2 * precision * recall / (precision + recall)
