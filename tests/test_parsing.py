"""Doctor action parsing: the papers' formats, full-width colons, tolerant fallbacks, and reasons for failures."""

from __future__ import annotations

import pytest

from clinical_gym.parsing import parse_doctor_action


def test_question():
    a = parse_doctor_action("<think>check onset</think>\n<answer>Question: When did the pain start?</answer>")
    assert (a.kind, a.question, a.think) == ("question", "When did the pain start?", "check onset")


def test_diagnosis_and_recommendation():
    a = parse_doctor_action("<think>x</think><answer>Diagnosis: Acute appendicitis\nRecommendation: Surgical referral.</answer>")
    assert (a.kind, a.diagnosis, a.recommendation) == ("diagnosis", "Acute appendicitis", "Surgical referral.")


def test_full_width_colons():
    a = parse_doctor_action("<answer>Diagnosis：Migraine\nRecommendation：Triptan</answer>")
    assert (a.diagnosis, a.recommendation) == ("Migraine", "Triptan")
    assert parse_doctor_action("<answer>Question：哪里痛？</answer>").question == "哪里痛？"


def test_doctor_r1_recommendation_only_carries_the_diagnosis():
    a = parse_doctor_action("<answer>Recommendation: Likely gout; start an NSAID.</answer>")
    assert a.kind == "diagnosis" and a.diagnosis == "Likely gout; start an NSAID."


@pytest.mark.parametrize("text,reason", [
    ("When did it start?", "no <answer>"),
    ("<answer>Question: a?", "</answer> is missing"),
    ("<answer>Question: a?</answer></answer>", "more than once"),
    ("<answer>Question: a?</answer> trailing", "text after </answer>"),
    ("<answer>Question: a?</answer><answer>Question: b?</answer>", "more than one <answer>"),
    ("<answer>   </answer>", "empty"),
    ("<answer>Hello there</answer>", "must start with"),
    ("<answer>Question:   </answer>", "question is empty"),
    ("<answer>Diagnosis: \nRecommendation: rest</answer>", "diagnosis is empty"),
    ("", "empty"),
    ("<answer>Test: CBC</answer>", "cannot be ordered"),
])
def test_invalid_actions_say_why(text, reason):
    a = parse_doctor_action(text)
    assert a.kind == "invalid" and reason in a.error


def test_tolerant_mode_accepts_bare_labels_and_missing_close_tag():
    assert parse_doctor_action("Question: Any fever?", strict=False).question == "Any fever?"
    assert parse_doctor_action("<answer>Diagnosis: Flu", strict=False).diagnosis == "Flu"
    assert parse_doctor_action("just chatting", strict=False).kind == "invalid"


def test_tests_when_allowed():
    a = parse_doctor_action("<answer>Test: Complete Blood Count</answer>", allow_tests=True)
    assert (a.kind, a.test) == ("test", "Complete Blood Count")


def test_non_text_is_invalid():
    assert parse_doctor_action(None).kind == "invalid"  # type: ignore[arg-type]
