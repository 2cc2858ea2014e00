"""Reading a workup agent's reply: DiagGym's fixed phrases or the ``<think>/<answer>`` format.

DiagGym phrase format (seed digests §3)::

    Current diagnosis: ...
    Based on the patient's initial presentation, the following investigation should be performed: [one test]
    Reason: ...
    # later turns: "Based on the current findings, the following additional investigation(s) are needed: [test]"

    The available information is sufficient to make a diagnosis.
    Diagnosis: ...
    Reason: ...

``<think>/<answer>`` format: ``<answer>Test: X</answer>`` (or ``Examination: X``) and ``<answer>Diagnosis: X</answer>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from clinical_gym.parsing import parse_doctor_action

_ORDER = re.compile(r"(?:investigations?|investigation\(s\)|examinations?|tests?)\s+(?:should be performed|(?:is|are) needed|(?:is|are) required)\s*[:：]\s*(.+?)(?=\n\s*reason\s*[:：]|\n\s*\n|$)",
                    re.I | re.S)
_DIAGNOSIS = re.compile(r"(?:^|\n)\s*(?:final\s+)?diagnosis\s*[:：]\s*(.+?)(?=\n\s*reason\s*[:：]|$)", re.I | re.S)
_SPLIT = re.compile(r"\s*(?:;|\n|,(?![^()]*\))|\s+\+\s+)\s*")


@dataclass(frozen=True)
class WorkupAction:
    """An exam order (one or more names), a final diagnosis, or an invalid reply with the reason."""

    kind: Literal["order", "diagnosis", "invalid"]
    exams: tuple[str, ...] = ()
    diagnosis: str = ""
    error: str = ""
    format: Literal["diaggym", "answer_tags", ""] = ""
    think: str = field(default="", repr=False)


def _clean(name: str) -> str:
    return name.strip().strip("[]()\"'`*. ").strip()


def split_exams(text: str) -> tuple[str, ...]:
    """Exam names listed in one order ('CBC; CRP', 'CBC, lipase'), commas inside parentheses kept."""
    return tuple(n for n in (_clean(p) for p in _SPLIT.split(text)) if n)


def parse_workup_action(text: str) -> WorkupAction:
    """Parse one reply; tries the ``<answer>`` format when tags are present, DiagGym's phrases otherwise."""
    if not isinstance(text, str) or not text.strip():
        return WorkupAction("invalid", error="the reply is empty")
    if re.search(r"<answer>", text, re.I):
        a = parse_doctor_action(text, strict=True, allow_tests=True)
        if a.kind == "test":
            return WorkupAction("order", split_exams(a.test), format="answer_tags", think=a.think)
        if a.kind == "diagnosis":
            return WorkupAction("diagnosis", diagnosis=a.diagnosis, format="answer_tags", think=a.think)
        if a.kind == "question":
            return WorkupAction("invalid", error="there is no patient to question here; order a test or give a diagnosis")
        return WorkupAction("invalid", error=a.error)
    order = _ORDER.search(text)
    diagnosis = _DIAGNOSIS.search(text)
    if diagnosis and (not order or diagnosis.start() > order.start()):
        name = diagnosis.group(1).strip()
        return WorkupAction("diagnosis", diagnosis=name, format="diaggym") if name else WorkupAction("invalid", error="the diagnosis is empty")
    if order:
        exams = split_exams(order.group(1))
        return WorkupAction("order", exams, format="diaggym") if exams else WorkupAction("invalid", error="no examination named")
    return WorkupAction("invalid", error="no examination order and no 'Diagnosis:' line")
