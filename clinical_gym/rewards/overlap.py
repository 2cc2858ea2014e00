"""Unigram overlap metrics for open answers: ROUGE-1 F1 (Lin, 2004) and BLEU-1 (Papineni et al., 2002).

Both read words as :func:`~clinical_gym.rewards.text_match.normalized_words` does (lower case, alphanumeric, no
articles), so the gold answer scores 1.0 against itself on both. Word counts are memoised per text, and
``open_answer_score`` counts each reference's clipped overlap once for both metrics.
"""

from __future__ import annotations

import math
from functools import lru_cache

from clinical_gym.rewards import text_match


@lru_cache(maxsize=8192)
def normalized_words(text: str) -> tuple[str, ...]:
    """``clinical_gym.rewards.text_match.normalized_words``, memoised."""
    return tuple(text_match.normalized_words(text))


@lru_cache(maxsize=8192)
def _counts(text: str) -> tuple[dict[str, int], int]:
    """Each normalised word's count in ``text``, and the number of words."""
    counts: dict[str, int] = {}
    words = normalized_words(text)
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    return counts, len(words)


def _overlap(pred: dict[str, int], ref: dict[str, int]) -> int:
    """The clipped unigram overlap: Σ_w min(count_pred(w), count_ref(w))."""
    if len(ref) < len(pred):
        pred, ref = ref, pred
    return sum(min(n, ref[w]) for w, n in pred.items() if w in ref)


def _rouge1(overlap: int, c: int, r: int) -> float:
    if not overlap:
        return 0.0
    precision, recall = overlap / c, overlap / r
    return 2 * precision * recall / (precision + recall)


def _bleu1(overlap: int, c: int, r: int) -> float:
    if not c or not r:
        return 0.0
    precision = overlap / c
    brevity = 1.0 if c >= r else math.exp(1 - r / c)
    return precision * brevity


def rouge1_f1(prediction: str, reference: str) -> float:
    """ROUGE-1 F1: harmonic mean of unigram precision and recall (clipped counts); 0.0 when either is empty.

    >>> rouge1_f1("acute appendicitis", "appendicitis")
    0.6666666666666666
    """
    (pred, c), (ref, r) = _counts(prediction), _counts(reference)
    return _rouge1(_overlap(pred, ref), c, r)


def bleu1(prediction: str, reference: str) -> float:
    """BLEU-1: clipped unigram precision times the brevity penalty exp(1 - r/c) when the prediction is shorter
    than the reference; 0.0 when either is empty.

    >>> bleu1("appendicitis", "acute appendicitis")
    0.36787944117144233
    """
    (pred, c), (ref, r) = _counts(prediction), _counts(reference)
    return _bleu1(_overlap(pred, ref), c, r)


def open_answer_score(prediction: str, references: list[str]) -> float:
    """The best mean of ROUGE-1 F1 and BLEU-1 over the reference answers."""
    pred, c = _counts(prediction)
    best = None
    for reference in references:
        ref, r = _counts(reference)
        overlap = _overlap(pred, ref)
        score = 0.5 * (_rouge1(overlap, c, r) + _bleu1(overlap, c, r))
        if best is None or score > best:
            best = score
    return 0.0 if best is None else best
