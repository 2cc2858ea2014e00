"""DoctorAgent-RL consultation evaluator values (Eqs. 2-7)."""

import dataclasses

import pytest

from clinical_gym.rewards import DoctorAgentRLRewards, accuracy_reward


def test_defaults_are_the_paper_values():
    r = DoctorAgentRLRewards()
    assert (r.format_invalid, r.over_budget, r.multiple_questions, r.repeated_question) == (-2.0, -5.0, -2.0, -2.0)
    assert (r.answered, r.refused) == (1.0, -2.0)  # Eq. 3
    assert (r.accuracy_scale, r.success_threshold) == (5.0, 10.0)


def test_released_code_value_is_configurable_and_config_is_frozen():
    r = DoctorAgentRLRewards(refused=-1.0)
    assert r.refused == -1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.refused = 0.0  # type: ignore[misc]


def test_non_positive_accuracy_scale_is_rejected():
    with pytest.raises(ValueError, match="accuracy_scale"):
        DoctorAgentRLRewards(accuracy_scale=0.0)


def test_perfect_answer_earns_the_maximum_of_ten_and_reaches_success():
    reward = accuracy_reward("Acute gastritis", "Omeprazole 20 mg daily", "acute gastritis", "omeprazole 20 mg daily")
    assert reward == 10.0
    assert reward >= DoctorAgentRLRewards().success_threshold


def test_partial_answer_is_five_times_the_sum_of_f1s():
    # diagnosis F1 = 2*(1*1/2)/(1+1/2) = 2/3 ; recommendation F1 = 0
    reward = accuracy_reward("gastritis", "rest", "acute gastritis", "proton pump inhibitor")
    assert reward == pytest.approx(5 * (2 / 3))


def test_scale_is_a_parameter():
    assert accuracy_reward("gastritis", "omeprazole", "gastritis", "omeprazole", scale=1.0) == 2.0


def test_worked_episode_total_follows_eq7():
    r = DoctorAgentRLRewards()
    # three questions answered, one refused, one double question, then a perfect diagnosis
    total = 3 * r.answered + r.refused + r.multiple_questions + accuracy_reward("flu", "rest", "flu", "rest", r.accuracy_scale)
    assert total == 3 - 2 - 2 + 10
