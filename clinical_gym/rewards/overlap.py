"""Unigram overlap metrics for open answers: ROUGE-1 F1 (Lin, 2004) and BLEU-1 (Papineni et al., 2002).

Both read words as :func:`~clinical_gym.rewards.text_match.normalized_words` does (lower case, alphanumeric, no
articles), so the gold answer scores 1.0 against itself on both.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache

from clinical_gym.rewards import text_match


@lru_cache(maxsize=8192)
def normalized_words(text: str) -> tuple[str, ...]:
    """``clinical_gym.rewards.text_match.normalized_words``, memoised."""
    return tuple(text_match.normalized_words(text))


def rouge1_f1(prediction: str, reference: str) -> float:
    """ROUGE-1 F1: harmonic mean of unigram precision and recall (clipped counts); 0.0 when either is empty.

    >>> rouge1_f1("acute appendicitis", "appendicitis")
    0.6666666666666666
    """
    pred, ref = Counter(normalized_words(prediction)), Counter(normalized_words(reference))
    overlap = sum((pred & ref).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(pred.values()), overlap / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: str, reference: str) -> float:
    """BLEU-1: clipped unigram precision times the brevity penalty exp(1 - r/c) when the prediction is shorter
    than the reference; 0.0 when either is empty.

    >>> bleu1("appendicitis", "acute appendicitis")
    0.36787944117144233
    """
    pred_words, ref_words = normalized_words(prediction), normalized_words(reference)
    if not pred_words or not ref_words:
        return 0.0
    overlap = sum((Counter(pred_words) & Counter(ref_words)).values())
    precision = overlap / len(pred_words)
    c, r = len(pred_words), len(ref_words)
    brevity = 1.0 if c >= r else math.exp(1 - r / c)
    return precision * brevity


def open_answer_score(prediction: str, references: list[str]) -> float:
    """The best mean of ROUGE-1 F1 and BLEU-1 over the reference answers."""
    return max((0.5 * (rouge1_f1(prediction, ref) + bleu1(prediction, ref)) for ref in references), default=0.0)
