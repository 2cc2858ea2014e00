"""Doctor-R1 two-tier reward (seeds/doctor-r1_full.txt, §3.2 and App. B.1).

* Process reward per turn (Eq. 2, Eq. 7): a judge scores eight dimensions with integers in [-5, 5]; a negative
  safety score vetoes the turn at -1.0, a negative reasoning or medical-accuracy score at -0.75, and otherwise
  the reward is the weighted sum normalised by S_max * sum(w) = 5 * 6.2 and clipped to [-1, 1].
* Outcome reward at the end: 1.0 correct, 0.5 partially correct, 0.0 wrong.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from clinical_gym.rewards.diagnosis_match import OUTCOME_SCORES

DIMENSIONS: Mapping[str, float] = MappingProxyType({
    "safety": 1.0,
    "reasoning": 1.0,
    "medical_accuracy": 1.0,
    "information_gathering": 0.8,
    "faithfulness": 0.7,
    "completeness": 0.7,
    "empathy_clarity": 0.5,
    "epistemic_humility": 0.5,
})
"""The eight judge dimensions and their weights w_i (App. B.1); the weights sum to 6.2."""

SCORE_MIN, SCORE_MAX = -5, 5
"""The judge's ordinal scale per dimension (App. B.1); S_max normalises Eq. 7."""
FAILURE_THRESHOLD = 0
"""epsilon of Eq. 2: a critical dimension scoring below it triggers a veto (Table 6)."""
CRITICAL_FAILURE_REWARD = -1.0
"""R_crit: the turn reward when S_safety < epsilon (Eq. 2)."""
SEVERE_FAILURE_REWARD = -0.75
"""R_sev: the turn reward when S_reasoning < epsilon or S_accuracy < epsilon (Eq. 2)."""


def validate_scores(scores: Mapping[str, int]) -> None:
    """Raise ValueError, naming the dimension, unless ``scores`` holds exactly the eight dimensions as integers
    in [-5, 5]."""
    for dimension in DIMENSIONS:
        if dimension not in scores:
            raise ValueError(f"missing score for dimension {dimension!r}")
        value = scores[dimension]
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"score for {dimension!r} must be an integer, got {value!r}")
        if not SCORE_MIN <= value <= SCORE_MAX:
            raise ValueError(f"score for {dimension!r} must be in [{SCORE_MIN}, {SCORE_MAX}], got {value}")
    unknown = sorted(set(scores) - set(DIMENSIONS))
    if unknown:
        raise ValueError(f"unknown dimension(s) {unknown}; expected {list(DIMENSIONS)}")


def process_reward(scores: Mapping[str, int], *, weights: Mapping[str, float] = DIMENSIONS, veto: bool = True) -> float:
    """R_turn of one doctor turn from the judge's eight scores (Eq. 2 veto, then Eq. 7).

    ``weights`` and ``veto=False`` reproduce the paper's reward ablations (App. D.1, Table 13: "w/o Soft Skill"
    zeroes empathy and humility; "w/o Veto System" skips the veto).

    >>> round(process_reward({"safety": 4, "information_gathering": 3, "reasoning": 4, "faithfulness": 4,
    ...     "completeness": 3, "medical_accuracy": 4, "empathy_clarity": 2, "epistemic_humility": 4}), 3)
    0.719
    """
    validate_scores(scores)
    if veto and scores["safety"] < FAILURE_THRESHOLD:
        return CRITICAL_FAILURE_REWARD
    if veto and (scores["reasoning"] < FAILURE_THRESHOLD or scores["medical_accuracy"] < FAILURE_THRESHOLD):
        return SEVERE_FAILURE_REWARD
    missing = [d for d in DIMENSIONS if d not in weights]
    if missing:
        raise ValueError(f"weights lack dimension(s) {missing}")
    total_weight = sum(weights[d] for d in DIMENSIONS)
    if total_weight <= 0:
        raise ValueError(f"the weights must sum to a positive number, got {total_weight}")
    raw = sum(weights[d] * scores[d] for d in DIMENSIONS)
    return min(1.0, max(-1.0, raw / (SCORE_MAX * total_weight)))


def outcome_reward(outcome: str) -> float:
    """R_final: 1.0 for a correct diagnosis, 0.5 partially correct, 0.0 wrong (§3.2, App. B.1)."""
    if outcome not in OUTCOME_SCORES:
        raise ValueError(f"unknown outcome {outcome!r}; expected one of {list(OUTCOME_SCORES)}")
    return OUTCOME_SCORES[outcome]


@dataclass(frozen=True)
class DoctorR1Penalties:
    """Per-step penalties of the Doctor-R1 environment. The paper gives none; these are the released code's."""

    repeated_question: float = -0.2
    """A question the doctor already asked."""
    format_invalid: float = -0.2
    """A turn that is not ``<think>...</think><answer>...</answer>``."""
    over_max_turns: float = -0.3
    """Reaching the turn limit without a recommendation; the episode ends."""
