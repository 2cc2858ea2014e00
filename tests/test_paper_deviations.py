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
        env = gym.make("ClinicalInquiry-v0", reward="doctor_r1", judge=judge)
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
    env = gym.make("ClinicalInquiry-v0", reward="doctor_r1")
    env.reset(seed=0, options={"case_id": APPENDIX})
    _, r, _, _, info = env.step(dx("Acute appendicitis"))
    assert info["outcome"]["result"] == "correct" and "rule_result" not in info["outcome"] and r == 1.0


def test_outcome_grades_are_read_from_the_answer():
    assert parse_outcome_grade("<think>not correct at all</think><answer>Partially  correct</answer>") == "partially"
    assert parse_outcome_grade("The grade: incorrect.") == "wrong"
    assert parse_outcome_grade("<answer>correct</answer>") == "correct"
    with pytest.raises(ValueError):
        parse_outcome_grade("<answer>unsure</answer>")
