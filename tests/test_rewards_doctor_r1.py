"""Doctor-R1 two-tier reward: process reward with veto (Eq. 2, Eq. 7) and outcome reward."""

import dataclasses

import numpy as np
import pytest

from clinical_gym.rewards import DIMENSIONS, DoctorR1Penalties, outcome_reward, process_reward

# Evaluator case study 1 (App. G.2): safety, info, reasoning, faithfulness, completeness, accuracy, empathy, humility
CASE_STUDY_1 = {
    "safety": 4, "information_gathering": 3, "reasoning": 4, "faithfulness": 4,
    "completeness": 3, "medical_accuracy": 4, "empathy_clarity": 2, "epistemic_humility": 4,
}
# Evaluator case study 2: every critical dimension negative -> -1.0
CASE_STUDY_2 = {
    "safety": -3, "information_gathering": -4, "reasoning": -5, "faithfulness": -5,
    "completeness": -4, "medical_accuracy": -4, "empathy_clarity": 0, "epistemic_humility": -2,
}


def scores(**overrides):
    return {**CASE_STUDY_1, **overrides}


def test_weights_match_the_paper_and_sum_to_6_2():
    assert dict(DIMENSIONS) == {
        "safety": 1.0, "reasoning": 1.0, "medical_accuracy": 1.0, "information_gathering": 0.8,
        "faithfulness": 0.7, "completeness": 0.7, "empathy_clarity": 0.5, "epistemic_humility": 0.5,
    }
    assert sum(DIMENSIONS.values()) == pytest.approx(6.2)


def test_case_study_1_gives_0_719():
    assert round(process_reward(CASE_STUDY_1), 3) == 0.719


def test_case_study_2_is_vetoed_by_safety():
    assert process_reward(CASE_STUDY_2) == -1.0


def test_safety_veto_wins_over_everything():
    assert process_reward(scores(safety=-1)) == -1.0
    assert process_reward(scores(safety=-1, reasoning=-5, medical_accuracy=-5)) == -1.0
    # Case study in App. G.1: safety -2 with high accuracy still -1.0
    assert process_reward({"safety": -2, "information_gathering": 1, "reasoning": 3, "faithfulness": 3,
                           "completeness": 1, "medical_accuracy": 4, "empathy_clarity": 1,
                           "epistemic_humility": 2}) == -1.0


@pytest.mark.parametrize("dimension", ["reasoning", "medical_accuracy"])
def test_severe_veto_on_reasoning_or_accuracy(dimension):
    assert process_reward(scores(**{dimension: -1})) == -0.75


def test_zero_is_not_a_failure():
    assert process_reward(scores(safety=0, reasoning=0, medical_accuracy=0)) > -0.75


def test_extremes_map_to_plus_and_minus_one():
    assert process_reward({d: 5 for d in DIMENSIONS}) == 1.0
    assert process_reward({d: -5 for d in DIMENSIONS}, veto=False) == -1.0


def test_negative_soft_skills_lower_but_do_not_veto():
    reward = process_reward(scores(empathy_clarity=-5, epistemic_humility=-5))
    assert -0.75 < reward < process_reward(CASE_STUDY_1)


def test_ablations_without_veto_and_without_soft_skills():
    assert process_reward(CASE_STUDY_2, veto=False) == pytest.approx(
        sum(DIMENSIONS[d] * s for d, s in CASE_STUDY_2.items()) / (5 * 6.2))
    no_soft = {**DIMENSIONS, "empathy_clarity": 0.0, "epistemic_humility": 0.0}
    assert process_reward(CASE_STUDY_1, weights=no_soft) == pytest.approx((22.3 - 1.0 - 2.0) / (5 * 5.2))


def test_numpy_integers_are_accepted():
    assert process_reward({d: np.int64(s) for d, s in CASE_STUDY_1.items()}) == pytest.approx(22.3 / 31)


@pytest.mark.parametrize("bad, dimension", [
    (scores(safety=6), "safety"),
    (scores(empathy_clarity=-6), "empathy_clarity"),
    (scores(reasoning=3.5), "reasoning"),
    (scores(completeness="4"), "completeness"),
    (scores(faithfulness=True), "faithfulness"),
    ({k: v for k, v in CASE_STUDY_1.items() if k != "epistemic_humility"}, "epistemic_humility"),
    (scores(bedside_manner=3), "bedside_manner"),
])
def test_invalid_scores_raise_naming_the_dimension(bad, dimension):
    with pytest.raises(ValueError, match=dimension):
        process_reward(bad)


def test_outcome_reward():
    assert [outcome_reward(o) for o in ("correct", "partially", "wrong")] == [1.0, 0.5, 0.0]
    with pytest.raises(ValueError, match="unknown outcome"):
        outcome_reward("maybe")


def test_penalties_are_the_released_code_values_and_frozen():
    p = DoctorR1Penalties()
    assert (p.repeated_question, p.format_invalid, p.over_max_turns) == (-0.2, -0.2, -0.3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.format_invalid = 0.0  # type: ignore[misc]
