"""The test-orderer, the rule-based baseline of DiagnosticWorkup: a working hypothesis from the initial inquiry, the
examinations the disease knowledge table lists as key for it (one per turn, DiagGym's phrasing), then that diagnosis.

It reads only the conversation, so one instance serves any number of concurrent workups.
"""

from __future__ import annotations

from collections.abc import Sequence

from clinical_gym.benchmarks.agents.disease_scoring import rank_diseases
from clinical_gym.benchmarks.agents.findings import Findings, read_demographics, read_statement
from clinical_gym.cases.disease_table import Disease
from clinical_gym.domains.workup.environment import NEXT_DIAGNOSIS, NEXT_EXAM
from clinical_gym.rollout.policy import Message

# Lines of the initial inquiry that describe the present illness (past and family history name other conditions).
PRESENT_ILLNESS = ("Chief complaint:", "History of present illness")


def working_hypothesis(inquiry: str) -> Disease:
    """The table disease that best explains the presenting complaint and history of the present illness."""
    findings = Findings()
    read_demographics(inquiry, findings)
    for line in inquiry.splitlines():
        if line.startswith(PRESENT_ILLNESS):
            read_statement(line.split(":", 1)[1], findings)
    return rank_diseases(findings)[0]


def order_reply(disease: Disease, exam: str, first: bool) -> str:
    basis = "the patient's initial presentation" if first else "the current findings"
    need = ("the following investigation should be performed" if first
            else "the following additional investigation(s) are needed")
    return (f"Current diagnosis: {disease.name}\nBased on {basis}, {need}: {exam}\n"
            f"Reason: a key examination for {disease.name}.")


def exam_orderer_reply(messages: Sequence[Message]) -> str:
    """The next key examination of the working hypothesis, then the diagnosis. In DiagnosticWorkup's single-turn
    protocol: the first key examination the opening does not show yet, or the diagnosis when it is asked for."""
    opening = next(m["content"] for m in messages if m["role"] == "user")
    disease = working_hypothesis(opening)
    ordered = sum(m["role"] == "assistant" for m in messages)
    if opening.rstrip().endswith(NEXT_EXAM):
        shown = opening.lower()
        ordered = next((i for i, exam in enumerate(disease.key_exams) if exam.lower() not in shown), 0)
    elif opening.rstrip().endswith(NEXT_DIAGNOSIS):
        ordered = len(disease.key_exams)
    if ordered < len(disease.key_exams):
        return order_reply(disease, disease.key_exams[ordered], first=ordered == 0)
    return (f"The available information is sufficient to make a diagnosis.\nDiagnosis: {disease.name}\n"
            f"Reason: the presentation and the key examinations fit {disease.name}.")
