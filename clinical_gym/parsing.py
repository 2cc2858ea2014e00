"""Parsing a doctor agent's reply: ``<think>…</think><answer>…</answer>`` with labelled fields.

Formats (seed digests §1 and §2)::

    <think> ... </think>
    <answer>Question: (exactly one question)</answer>
    <answer>Diagnosis: (most likely disease)
    Recommendation: (treatment/advice)</answer>
    <answer>Recommendation: (diagnosis and recommendation)</answer>      # Doctor-R1
    <answer>Test: (an examination or test to perform)</answer>           # when test ordering is on

Labels accept ASCII and full-width colons (``Question：``). Strict parsing follows DoctorAgent-RL's checks
(an ``<answer>`` block, ``</answer>`` exactly once, nothing after it). Tolerant parsing also accepts a missing
closing tag and a bare labelled reply without tags. Every failure carries a reason meant for the agent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ActionKind = Literal["question", "diagnosis", "test", "invalid"]

_THINK = re.compile(r"<think>(.*?)</think>", re.S | re.I)
_ANSWER_OPEN = re.compile(r"<answer>", re.I)
_ANSWER_CLOSE = re.compile(r"</answer>", re.I)
_COLON = r"\s*[:：]"
_LABEL = re.compile(rf"^\s*(question|diagnosis|recommendation|test|examination){_COLON}", re.I)
# DoctorAgent-RL's own extraction patterns (code), with full-width colons.
_DIAGNOSIS = re.compile(rf"diagnosis{_COLON}(.*?)(?=recommendation{_COLON}|$)", re.I | re.S)
_RECOMMENDATION = re.compile(rf"recommendation{_COLON}(.*?)(?=\n|$)", re.I | re.S)
_QUESTION = re.compile(rf"question{_COLON}(.*)", re.I | re.S)
_TEST = re.compile(rf"(?:test|examination){_COLON}(.*)", re.I | re.S)


@dataclass(frozen=True)
class DoctorAction:
    """A parsed doctor reply. ``error`` says what was wrong when ``kind == "invalid"``."""

    kind: ActionKind
    question: str = ""
    diagnosis: str = ""
    recommendation: str = ""
    test: str = ""
    think: str = ""
    error: str = ""
    answer: str = ""


def _invalid(reason: str, think: str = "") -> DoctorAction:
    return DoctorAction(kind="invalid", error=reason, think=think)


def _answer_block(text: str, strict: bool) -> tuple[str | None, str]:
    """The text inside ``<answer>``, or None and the reason it could not be found."""
    opens = _ANSWER_OPEN.findall(text)
    closes = list(_ANSWER_CLOSE.finditer(text))
    if not opens:
        if strict:
            return None, "no <answer>...</answer> block"
        return (text if _LABEL.search(_THINK.sub("", text)) else None), "no <answer> block and no 'Question:' or 'Diagnosis:' label"
    if len(opens) > 1:
        return None, "more than one <answer> block"
    start = _ANSWER_OPEN.search(text).end()
    if not closes:
        if strict:
            return None, "</answer> is missing"
        return text[start:], ""
    if len(closes) > 1:
        return None, "</answer> appears more than once"
    if text[closes[0].end():].strip():
        return None, "there is text after </answer>"
    if closes[0].start() < start:
        return None, "</answer> comes before <answer>"
    return text[start:closes[0].start()], ""


def parse_doctor_action(text: str, *, strict: bool = True, allow_tests: bool = False) -> DoctorAction:
    """Parse one doctor reply into a question, a diagnosis (+recommendation), a test order, or an invalid action."""
    if not isinstance(text, str):
        return _invalid(f"the reply must be text, got {type(text).__name__}")
    if not text.strip():
        return _invalid("the reply is empty")
    think_match = _THINK.search(text)
    think = think_match.group(1).strip() if think_match else ""
    body, reason = _answer_block(text, strict)
    if body is None:
        return _invalid(reason, think)
    answer = _THINK.sub("", body).strip()
    if not answer:
        return _invalid("the <answer> block is empty", think)
    label = _LABEL.match(answer)
    if label is None:
        return _invalid("the answer must start with 'Question:' or 'Diagnosis:' (or 'Recommendation:')", think)
    kind = label.group(1).lower()
    if kind == "question":
        question = _QUESTION.search(answer).group(1).strip()
        if not question:
            return _invalid("the question is empty", think)
        return DoctorAction(kind="question", question=question, think=think, answer=answer)
    if kind in ("test", "examination"):
        if not allow_tests:
            return _invalid("tests cannot be ordered in this consultation; ask a question or give a diagnosis", think)
        test = _TEST.search(answer).group(1).strip()
        return DoctorAction(kind="test", test=test, think=think, answer=answer) if test else _invalid("the test name is empty", think)
    diag = _DIAGNOSIS.search(answer)
    rec = _RECOMMENDATION.search(answer)
    diagnosis = diag.group(1).strip() if diag else ""
    recommendation = rec.group(1).strip() if rec else ""
    if kind == "recommendation" and not diagnosis:
        diagnosis = recommendation  # Doctor-R1: "Recommendation: (diagnosis and recommendation)"
    if not diagnosis:
        return _invalid("the diagnosis is empty", think)
    return DoctorAction(kind="diagnosis", diagnosis=diagnosis, recommendation=recommendation, think=think, answer=answer)
