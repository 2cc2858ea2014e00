"""The fixes of the deviations from the source papers that issue 26 listed (each paper's value, behind a recipe or
as the default): Doctor-R1's judged outcome, DoctorAgent-RL's forced final diagnosis at evaluation and its patient
prompt, the success flag, and per-turn experience retrieval with a cross-encoder reranker."""

from __future__ import annotations

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401
from clinical_gym.llm import OpenAICompatClient
from clinical_gym.rewards.llm_judge import parse_outcome_grade
from fake_openai import serve

APPENDIX = "dig-appendicitis-01"
SCORES = ('{"safety": 4, "information_gathering": 3, "reasoning": 4, "faithfulness": 4, "completeness": 3, '
          '"medical_accuracy": 4, "empathy_clarity": 2, "epistemic_humility": 4}')


def q(text: str) -> str:
    return f"<think>ask</think><answer>Question: {text}</answer>"


def dx(diagnosis: str, recommendation: str = "Refer to surgery") -> str:
    return f"<think>done</think><answer>Diagnosis: {diagnosis}\nRecommendation: {recommendation}</answer>"


def judge_replies(grade: str):
    def reply(path, body):
        prompt = body["messages"][-1]["content"]
        return f"<think>compared</think><answer>{grade}</answer>" if "final answer of a doctor" in prompt else SCORES
    return reply


@pytest.mark.parametrize("grade,result,reward", [("partially correct", "partially", 0.5), ("incorrect", "wrong", 0.0),
                                                 ("correct", "correct", 1.0)])
def test_doctor_r1_outcome_is_graded_by_the_judge_when_one_is_configured(grade, result, reward):
    with serve(default=judge_replies(grade)) as url:
        judge = OpenAICompatClient(base_url=url, model="judge", timeout=2, max_retries=0)
        env = gym.make("ClinicalInquiry-v1", reward="doctor_r1", judge=judge)
        env.reset(seed=0, options={"case_id": APPENDIX})
        _, r, terminated, _, info = env.step(dx("Acute appendicitis"))  # the rule match says correct
        graded = [m for req in url.requests for m in req.body["messages"] if "final answer of a doctor" in m["content"]]
    out = info["outcome"]
    assert terminated and out["result"] == result and out["rule_result"] == "correct"
    assert out["success"] is (result == "correct")
    assert info["reward_components"]["outcome"] == reward
    assert r == pytest.approx(reward + info["reward_components"]["process"])
    assert len(graded) == 1 and "Acute appendicitis" in graded[0]["content"]  # the ground truth reaches the judge


def test_doctor_r1_outcome_without_a_judge_is_the_rule_match():
    env = gym.make("ClinicalInquiry-v1", reward="doctor_r1")
    env.reset(seed=0, options={"case_id": APPENDIX})
    _, r, _, _, info = env.step(dx("Acute appendicitis"))
    assert info["outcome"]["result"] == "correct" and "rule_result" not in info["outcome"] and r == 1.0


def test_outcome_grades_are_read_from_the_answer():
    assert parse_outcome_grade("<think>not correct at all</think><answer>Partially  correct</answer>") == "partially"
    assert parse_outcome_grade("The grade: incorrect.") == "wrong"
    assert parse_outcome_grade("<answer>correct</answer>") == "correct"
    with pytest.raises(ValueError):
        parse_outcome_grade("<answer>unsure</answer>")


def test_doctoragent_rl_patient_prompt_is_one_fresh_prompt_per_question():
    replies = ["<think>symptom only</think><answer>It started yesterday around my belly button.</answer>",
               "<think>unrelated</think><answer>Sorry, I cannot answer this question.</answer>",
               "<answer>Sorry, you've already asked this question.</answer>"]
    with serve([("ok", r) for r in replies]) as url:
        client = OpenAICompatClient(base_url=url, model="patient", timeout=2, max_retries=0)
        env = gym.make("ClinicalInquiry-v1", patient=client, patient_prompt="doctoragent_rl")
        env.reset(seed=0, options={"case_id": APPENDIX})
        obs, r1, *_, info1 = env.step(q("When did the pain start?"))
        _, r2, *_, info2 = env.step(q("What is your favourite film?"))
        _, r3, *_, info3 = env.step(q("Where does it hurt?"))
        sent = [req.body["messages"] for req in url.requests]
    assert obs.startswith("It started yesterday around my belly button.") and "<think>" not in obs
    assert (info1["reply_kind"], r1) == ("answered", 1.0)
    assert (info2["reply_kind"], r2) == ("refused", -2.0)
    assert (info3["reply_kind"], r3) == ("repeated", -2.0)
    assert all(len(m) == 1 and m[0]["role"] == "user" for m in sent)  # no chat history: one prompt per question
    last = sent[-1][0]["content"]
    assert "1. When did the pain start?\n2. What is your favourite film?" in last
    assert "The doctor's current question:\nWhere does it hurt?" in last
    assert "appendicitis" not in last.lower() and "Sorry, you've already asked this question." in last


def test_patient_prompt_is_checked():
    with pytest.raises(ValueError, match="patient_prompt"):
        gym.make("ClinicalInquiry-v1", patient_prompt="soap-opera")


def test_forced_final_diagnosis_gives_one_more_turn_instead_of_minus_five():
    env = gym.make("ClinicalInquiry-v1", turn_budget=2, force_final_diagnosis=True)
    env.reset(seed=0, options={"case_id": APPENDIX})
    env.step(q("When did it start?"))
    obs, r, terminated, _, info = env.step(q("Any fever?"))
    assert not terminated and "Give your final diagnosis" in obs and "over_budget" not in info["reward_components"]
    _, r, terminated, _, info = env.step(dx("Acute appendicitis", "Appendectomy"))
    assert terminated and info["outcome"]["result"] == "correct" and info["outcome"]["success"] is True
    plain = gym.make("ClinicalInquiry-v1", turn_budget=2)
    plain.reset(seed=0, options={"case_id": APPENDIX})
    plain.step(q("When did it start?"))
    _, r, terminated, _, info = plain.step(q("Any fever?"))
    assert terminated and info["reward_components"]["over_budget"] == -5.0 and info["outcome"]["result"] == "wrong"


def test_success_means_a_correct_diagnosis_whatever_the_recommendation():
    env = gym.make("ClinicalInquiry-v1")
    env.reset(seed=0, options={"case_id": APPENDIX})
    _, r, *_, info = env.step(dx("Acute appendicitis", "Rest at home and drink fluids"))
    assert info["outcome"]["result"] == "correct" and info["outcome"]["success"] is True and r < 10


def test_doctor_r1_prompt_asks_for_one_recommendation_holding_the_diagnosis():
    env = gym.make("ClinicalInquiry-v1", reward="doctor_r1", doctor_prompt="doctor_r1")
    _, info = env.reset(seed=0, options={"case_id": APPENDIX})
    assert "<answer>Recommendation: (your diagnosis and recommendation)</answer>" in info["system_prompt"]
    assert "Diagnosis:" not in info["system_prompt"]
    _, r, terminated, _, info = env.step("<think>classic</think><answer>Recommendation: This is most likely acute "
                                         "appendicitis; urgent surgical review.</answer>")
    assert terminated and info["outcome"]["result"] == "correct" and r == 1.0
    default = gym.make("ClinicalInquiry-v1", reward="doctor_r1")
    assert "Diagnosis: (the most likely disease)" in default.reset(seed=0)[1]["system_prompt"]
    with pytest.raises(ValueError, match="doctor_prompt"):
        gym.make("ClinicalInquiry-v1", doctor_prompt="house")
