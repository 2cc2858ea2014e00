"""DoctorAgent-RL consultation evaluator values (Eqs. 2-7)."""

import dataclasses

import pytest

from clinical_gym.domains.inquiry.environment import ClinicalInquiryEnv
from clinical_gym.rewards import DoctorAgentRLRewards, accuracy_reward


def test_defaults_are_the_paper_values():
    r = DoctorAgentRLRewards()
    assert (r.format_invalid, r.over_budget, r.multiple_questions, r.repeated_question) == (-2.0, -5.0, -2.0, -2.0)
    assert (r.answered, r.refused) == (1.0, -2.0)  # Eq. 3
    assert r.accuracy_scale == 5.0


def test_released_code_value_is_configurable_and_config_is_frozen():
    r = DoctorAgentRLRewards(refused=-1.0)
    assert r.refused == -1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.refused = 0.0  # type: ignore[misc]


def test_non_positive_accuracy_scale_is_rejected():
    with pytest.raises(ValueError, match="accuracy_scale"):
        DoctorAgentRLRewards(accuracy_scale=0.0)


def test_perfect_answer_earns_the_maximum_of_ten():
    reward = accuracy_reward("Acute gastritis", "Omeprazole 20 mg daily", "acute gastritis", "omeprazole 20 mg daily")
    assert reward == 10.0


@pytest.mark.parametrize("reward", ["doctoragent_rl", "doctor_r1"])
def test_success_means_a_correct_diagnosis_whatever_the_recommendation(reward):
    """``result: correct`` and ``success: False`` never go together: success is the diagnosis match, in every preset
    (the DoctorAgent-RL reward still scores the recommendation's word F1)."""
    env = ClinicalInquiryEnv(reward=reward)
    for diagnosis, recommendation, result in [("Acute appendicitis", "rest", "correct"),
                                               ("Acute appendicitis", "", "correct"),
                                               ("Gastroenteritis", "Urgent surgical referral", "wrong")]:
        env.reset(options={"case_id": "dig-appendicitis-01"})
        text = f"<answer>Diagnosis: {diagnosis}\nRecommendation: {recommendation}</answer>"
        _, r, terminated, _, info = env.step(text)
        assert terminated and info["outcome"]["result"] == result
        assert info["outcome"]["success"] is (result == "correct")
        if reward == "doctoragent_rl" and result == "correct":
            assert r < 10.0  # the recommendation's F1 still counts in the reward


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
