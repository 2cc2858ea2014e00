"""The checklist doctor, the rule-based baseline of ClinicalInquiry: a fixed review of systems, then the disease of
the knowledge table that best explains what the patient said.

It reads only the conversation (the opening self-report, its own questions and the patient's replies), so one
instance serves any number of concurrent consultations.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from clinical_gym.benchmarks.agents.disease_scoring import rank_diseases
from clinical_gym.benchmarks.agents.findings import Findings, read_answer, read_demographics, read_statement
from clinical_gym.cases.disease_table import Disease
from clinical_gym.rollout.policy import Message

# (system, question, the symptoms the question names), most informative first; one "?" each (DoctorAgent-RL's rule).
REVIEW_OF_SYSTEMS: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("general", "Have you had a fever, chills or any weight loss?", frozenset({"fever", "chills", "weight_loss"})),
    ("respiratory", "Do you have a cough, shortness of breath or a sore throat?",
     frozenset({"cough", "shortness_of_breath", "sore_throat"})),
    ("cardiovascular", "Have you had chest pain, palpitations or swelling in your legs?",
     frozenset({"chest_pain", "palpitations", "leg_swelling"})),
    ("upper gastrointestinal", "Have you had stomach pain, nausea or vomiting?",
     frozenset({"abdominal_pain", "nausea", "vomiting"})),
    ("lower gastrointestinal", "Have you had diarrhea, constipation or blood in your stool?",
     frozenset({"diarrhea", "constipation", "blood_in_stool"})),
    ("urinary", "Do you have pain when you pee, need to pee more often, or blood in your urine?",
     frozenset({"dysuria", "urinary_frequency", "hematuria"})),
    ("neurological", "Have you had headaches, dizziness or numbness?",
     frozenset({"headache", "dizziness", "numbness"})),
    ("skin and joints", "Have you had a rash, joint pain or muscle aches?",
     frozenset({"rash", "joint_pain", "muscle_pain"})),
    ("sleep and mood", "Have you felt unusually tired, had trouble sleeping, or felt low in mood?",
     frozenset({"fatigue", "sleep_problems", "low_mood"})),
)
_BUDGET_IN_REPLY = re.compile(r"Turn (\d+)/(\d+)\.")
_BUDGET_IN_PROMPT = re.compile(r"You have (\d+) turns")
_FINAL_CALL = "Give your final diagnosis"


def turn_budget(messages: Sequence[Message]) -> int:
    """The consultation's turn budget, from the latest "Turn k/N." line or the system prompt (default 10)."""
    for message in reversed(messages):
        found = _BUDGET_IN_REPLY.search(message["content"]) if message["role"] != "assistant" else None
        if found:
            return int(found.group(2))
    found = _BUDGET_IN_PROMPT.search(messages[0]["content"]) if messages else None
    return int(found.group(1)) if found else 10


def heard(messages: Sequence[Message]) -> Findings:
    """What the checklist doctor knows: the opening statement, and the answers to its review-of-systems questions
    (its i-th reply asked ``REVIEW_OF_SYSTEMS[i]``)."""
    findings = Findings()
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if users:
        opening = messages[users[0]]["content"]
        read_demographics(opening, findings)
        read_statement(opening, findings)
    asked = 0
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        if asked < len(REVIEW_OF_SYSTEMS) and i + 1 < len(messages):
            read_answer(REVIEW_OF_SYSTEMS[asked][2], messages[i + 1]["content"], findings)
        asked += 1
    return findings


def diagnosis_reply(disease: Disease, reason: str) -> str:
    """A final ``<answer>`` naming ``disease`` with its first-line management as the recommendation."""
    recommendation = " ".join(disease.management.split())
    return f"<think>{reason}</think><answer>Diagnosis: {disease.name}\nRecommendation: {recommendation}</answer>"


def checklist_reply(messages: Sequence[Message]) -> str:
    """The next review-of-systems question, or, with one turn of the budget left, the most likely diagnosis."""
    asked = sum(m["role"] == "assistant" for m in messages)
    questions = min(len(REVIEW_OF_SYSTEMS), turn_budget(messages) - 1)
    if asked < questions and _FINAL_CALL not in messages[-1]["content"]:
        system, question, _ = REVIEW_OF_SYSTEMS[asked]
        return f"<think>Review of systems: {system}.</think><answer>Question: {question}</answer>"
    findings = heard(messages)
    best = rank_diseases(findings)[0]
    present = ", ".join(sorted(findings.present)) or "no specific symptoms"
    return diagnosis_reply(best, f"Best fit in the disease table for: {present}.")
