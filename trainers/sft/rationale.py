"""Templated reasoning for expert replies that come without any, built only from the case behind the episode and
the conversation so far, so that it never states a finding the case does not hold.

A ClinicalInquiry reply gets a ``<think>`` block before its ``<answer>`` (where the action parser reads reasoning):

* a question: the symptoms reported and denied so far (the case's facts already revealed in the conversation),
  on the first question the case's two leading alternatives and its diagnosis (alphabetically), and what the
  question checks next;
* a test order: the findings so far and the test;
* a diagnosis: the findings so far, the reported ones the disease knowledge table lists as typical of the
  diagnosis, and the diagnosis given.

Other environment families carry their reasoning in their own action format (DiagGym's ``Reason:`` line, a tool
call's ``reasoning`` argument) and get nothing added.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from clinical_gym.cases import Case
from clinical_gym.cases.disease_table import disease_table
from clinical_gym.cases.schema import normalize
from clinical_gym.cases.topic_match import find_topics
from clinical_gym.parsing import parse_doctor_action

RATIONALE_MODES = ("fill", "template", "source")
"""fill: keep the source's ``<think>`` and add a templated one where it has none; template: replace every
``<think>`` with the templated one; source: keep the replies as the source wrote them."""

DIFFERENTIAL_SIZE = 3  # diagnoses named on the first question: the case's leading alternatives and its diagnosis
THINK = re.compile(r"<think>(.*?)</think>\s*", re.S | re.I)
_RECOMMENDATION_ONLY = re.compile(r"\s*recommendation\s*[:：]", re.I)
_UNSAFE = re.compile(r"[<>?]")  # nothing in a rationale may read as a tag or a second question


def findings(case: Case, messages: Sequence[Mapping[str, str]]) -> tuple[list[str], list[str]]:
    """Symptoms reported and denied so far (keys of the topic vocabulary, in case order): those of the case's facts
    whose words appear in a message the environment sent (the opening included)."""
    heard = f" {normalize(' '.join(m['content'] for m in messages if m['role'] not in ('system', 'assistant')))} "
    present: list[str] = []
    absent: list[str] = []
    for fact in case.history:
        words = normalize(fact.text)
        if not words or f" {words} " not in heard:
            continue
        for symptom in fact.symptoms:
            if symptom not in present and symptom not in absent:
                (present if fact.present else absent).append(symptom)
    return present, absent


def symptom_name(key: str) -> str:
    return key.replace("_", " ")


def _known(present: list[str], absent: list[str]) -> list[str]:
    parts = []
    if present:
        parts.append(f"Reported: {', '.join(map(symptom_name, present))}.")
    if absent:
        parts.append(f"Denied: {', '.join(map(symptom_name, absent))}.")
    return parts


def _asks_about(question: str) -> str:
    topics = find_topics(question)
    names = [symptom_name(s) for s in sorted(topics.explicit_symptoms)]
    names += [t.replace("_", " ") for t in sorted(topics.question_types)]
    if not names and topics.generic_pain:
        names = ["the pain"]
    return ", ".join(names)


def question_rationale(case: Case, messages: Sequence[Mapping[str, str]], question: str) -> str:
    present, absent = findings(case, messages)
    parts = _known(present, absent) or [f"Presenting complaint: {case.chief_complaint}."]
    first = not any(m["role"] == "assistant" for m in messages)
    if first and case.differential:
        considered = {*case.differential[:DIFFERENTIAL_SIZE - 1], case.diagnosis.name}
        parts.append(f"Differential: {', '.join(sorted(considered))}.")
    asked = _asks_about(question)
    parts.append(f"Next I ask about {asked}." if asked else "Next I ask a focused question to narrow it down.")
    return " ".join(parts)


def test_rationale(case: Case, messages: Sequence[Mapping[str, str]], test: str) -> str:
    present, absent = findings(case, messages)
    parts = _known(present, absent) or [f"Presenting complaint: {case.chief_complaint}."]
    return " ".join([*parts, f"Next I order {test} to check the working diagnosis."])


def typical_findings(diagnosis: str, present: Sequence[str]) -> list[str]:
    """The reported symptoms that the disease knowledge table lists for ``diagnosis`` (by name or synonym)."""
    wanted = normalize(diagnosis)
    for disease in disease_table():
        if wanted in {normalize(disease.name), *(normalize(s) for s in disease.synonyms)}:
            listed = {s.symptom for s in disease.symptoms}
            return [s for s in present if s in listed]
    return []


def diagnosis_rationale(case: Case, messages: Sequence[Mapping[str, str]], diagnosis: str) -> str:
    present, absent = findings(case, messages)
    parts = _known(present, absent) or [f"Presenting complaint: {case.chief_complaint}."]
    typical = typical_findings(diagnosis, present)
    if typical:
        parts.append(f"Typical of {diagnosis}: {', '.join(map(symptom_name, typical))}.")
    parts.append(f"The most likely diagnosis is {diagnosis}.")
    return " ".join(parts)


def inquiry_rationale(case: Case, messages: Sequence[Mapping[str, str]], action: str) -> str | None:
    """The templated reasoning for a ClinicalInquiry reply, or None when the reply is not a usable action."""
    parsed = parse_doctor_action(action, strict=False, allow_tests=True)
    if parsed.kind == "question":
        text = question_rationale(case, messages, parsed.question)
    elif parsed.kind == "test":
        text = test_rationale(case, messages, parsed.test)
    elif parsed.kind == "diagnosis" and _RECOMMENDATION_ONLY.match(parsed.answer):  # Doctor-R1's one field
        present, absent = findings(case, messages)
        text = " ".join([*(_known(present, absent) or [f"Presenting complaint: {case.chief_complaint}."]),
                         "I give my diagnosis and recommendation."])
    elif parsed.kind == "diagnosis":
        text = diagnosis_rationale(case, messages, " ".join(parsed.diagnosis.split()))
    else:
        return None
    return _UNSAFE.sub("", text)


RATIONALES = {"inquiry": inquiry_rationale}
"""Templated reasoning per environment family: ``(case, messages so far, action) -> text or None``."""


def with_rationale(action: str, family: str, episode: Any, messages: Sequence[Mapping[str, str]],
                   mode: str = "fill") -> str:
    """``action`` with reasoning per ``mode`` (``RATIONALE_MODES``). ``episode`` is the environment's unwrapped
    instance (its ``case`` is read); ``messages`` the conversation before this reply. The templated reasoning goes
    in a ``<think>`` block before the rest of the reply; a family without templates keeps the action as it is."""
    if mode not in RATIONALE_MODES:
        raise ValueError(f"rationale must be one of {', '.join(RATIONALE_MODES)}; got {mode!r}")
    build = RATIONALES.get(family)
    case = getattr(episode, "case", None)
    if mode == "source" or build is None or not isinstance(case, Case) or not isinstance(action, str):
        return action
    existing = THINK.search(action)
    if mode == "fill" and existing and existing.group(1).strip():
        return action
    text = build(case, messages, action)
    if text is None:
        return action
    return f"<think>{text}</think>{THINK.sub('', action).lstrip()}"
