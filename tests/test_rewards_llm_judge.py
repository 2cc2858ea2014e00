"""LLM judges with a scripted fake client: prompt content, tolerant parsing, one retry, then LLMError."""

import json

import pytest

from clinical_gym.cases.schema import Diagnosis
from clinical_gym.llm.base import LLMClient, LLMError
from clinical_gym.rewards import DIMENSIONS, PERCENT_PER_POINT, LLMDiagnosisJudge, LLMTurnJudge, process_reward

GOOD_SCORES = {
    "safety": 4, "information_gathering": 3, "reasoning": 4, "faithfulness": 4,
    "completeness": 3, "medical_accuracy": 4, "empathy_clarity": 2, "epistemic_humility": 4,
}
HISTORY = [
    {"role": "system", "content": "You are a doctor."},
    {"role": "user", "content": "Patient's description: stomach pain since yesterday"},
    {"role": "assistant", "content": "<think>localise</think><answer>Question: Where is the pain?</answer>"},
    {"role": "user", "content": "Lower right side."},
]
TURN = "<think>appendicitis?</think><answer>Question: Does it hurt more when you walk?</answer>"


class FakeClient:
    """Returns scripted replies in order and records every call."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[dict] = []

    def chat(self, messages, *, max_tokens=256, temperature=0.0, stop=None, seed=None):
        self.calls.append({"messages": messages, "max_tokens": max_tokens, "temperature": temperature, "seed": seed})
        return self.replies.pop(0)

    def complete(self, prompt, *, max_tokens=256, temperature=0.0, stop=None, seed=None):
        raise AssertionError("judges use chat()")


class FailingClient(FakeClient):
    def chat(self, messages, **kwargs):
        raise LLMError("endpoint timed out after 3 retries")


def test_fake_client_implements_the_protocol():
    assert isinstance(FakeClient(), LLMClient)


# ---- turn judge ----------------------------------------------------------------------------------------

def test_prompt_holds_rubric_history_case_and_turn():
    client = FakeClient(json.dumps(GOOD_SCORES))
    LLMTurnJudge(client, seed=7).score_turn(HISTORY, TURN, "Acute appendicitis in a 19-year-old man")
    call = client.calls[0]
    system, user = call["messages"]
    assert system["role"] == "system"
    assert all(dimension in system["content"] for dimension in DIMENSIONS)
    assert "-5" in system["content"] and "+5" in system["content"]
    assert "Patient: Lower right side." in user["content"]
    assert "Doctor: <think>localise</think>" in user["content"]
    assert "You are a doctor." not in user["content"]
    assert "Acute appendicitis in a 19-year-old man" in user["content"]
    assert TURN in user["content"]
    assert (call["temperature"], call["seed"]) == (0.0, 7)


def test_plain_json_reply():
    scores = LLMTurnJudge(FakeClient(json.dumps(GOOD_SCORES))).score_turn(HISTORY, TURN, "case")
    assert scores == GOOD_SCORES
    assert list(scores) == list(DIMENSIONS)
    assert round(process_reward(scores), 3) == 0.719


def test_json_in_code_fence_after_analysis():
    reply = ("Analysis: the question is relevant {but not exhaustive}.\n\n```json\n"
             + json.dumps({"scores": GOOD_SCORES}, indent=2) + "\n```\nDone.")
    assert LLMTurnJudge(FakeClient(reply)).score_turn(HISTORY, TURN, "case") == GOOD_SCORES


def test_loose_keys_plus_signs_floats_and_strings_are_accepted():
    reply = ('Scores: {"Safety": +4, "Information Gathering": 3, "Reasoning Quality": "4", "Faithfulness": 4.0, '
             '"Completeness": 3, "Medical Accuracy": 4, "Empathy & Clarity": 2, "Humility": 4, "comment": "ok"}')
    assert LLMTurnJudge(FakeClient(reply)).score_turn(HISTORY, TURN, "case") == GOOD_SCORES


def test_out_of_range_scores_are_clipped():
    reply = json.dumps({**GOOD_SCORES, "safety": 9, "empathy_clarity": -12})
    scores = LLMTurnJudge(FakeClient(reply)).score_turn(HISTORY, TURN, "case")
    assert (scores["safety"], scores["empathy_clarity"]) == (5, -5)


def test_unparsable_reply_is_retried_once_with_the_error():
    client = FakeClient("I think this turn is quite good overall.", json.dumps(GOOD_SCORES))
    assert LLMTurnJudge(client).score_turn(HISTORY, TURN, "case") == GOOD_SCORES
    assert len(client.calls) == 2
    retry = client.calls[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "I think this turn is quite good overall."}
    assert "could not be read" in retry[-1]["content"]


def test_missing_dimension_twice_raises_naming_it():
    partial = json.dumps({k: v for k, v in GOOD_SCORES.items() if k != "epistemic_humility"})
    client = FakeClient(partial, partial)
    with pytest.raises(LLMError, match="epistemic_humility"):
        LLMTurnJudge(client).score_turn(HISTORY, TURN, "case")
    assert len(client.calls) == 2


def test_garbage_twice_raises():
    with pytest.raises(LLMError, match="unparsable reply twice"):
        LLMTurnJudge(FakeClient("no idea", '{"safety": "high"}')).score_turn(HISTORY, TURN, "case")


def test_client_errors_propagate():
    with pytest.raises(LLMError, match="timed out"):
        LLMTurnJudge(FailingClient()).score_turn(HISTORY, TURN, "case")


# ---- diagnosis judge -----------------------------------------------------------------------------------

@pytest.mark.parametrize("reply, score", [
    ("<think>same disease</think><answer>5</answer>", 5),
    ("<think>close</think><answer> [4] </answer>", 4),
    ("<think>5 criteria considered</think> Score: 3/5", 3),
    ("<answer>7</answer>", 5),
    ("<answer>-1</answer>", 0),
])
def test_semantic_score_parsing(reply, score):
    assert LLMDiagnosisJudge(FakeClient(reply)).score("appendicitis", "Acute appendicitis") == score


def test_diagnosis_prompt_is_the_doctoragent_rl_prompt():
    client = FakeClient("<answer>4</answer>")
    gold = Diagnosis(name="Acute appendicitis", icd10="K35.80")
    assert LLMDiagnosisJudge(client).score("  appendicitis ", gold) * PERCENT_PER_POINT == 80
    (message,) = client.calls[0]["messages"]
    assert 'Candidate: "appendicitis"' in message["content"]
    assert 'Reference: "Acute appendicitis"' in message["content"]
    assert "0-5 point scale" in message["content"]


def test_empty_answer_scores_zero_without_a_call():
    client = FakeClient()
    assert LLMDiagnosisJudge(client).score("   ", "Acute appendicitis") == 0
    assert client.calls == []


def test_diagnosis_judge_retries_then_raises():
    client = FakeClient("I cannot judge this.", "<answer>3</answer>")
    assert LLMDiagnosisJudge(client).score("gastritis", "peptic ulcer") == 3
    with pytest.raises(LLMError, match="diagnosis judge"):
        LLMDiagnosisJudge(FakeClient("hmm", "no score")).score("gastritis", "peptic ulcer")
