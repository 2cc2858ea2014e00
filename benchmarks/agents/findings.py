"""What a rule-based agent has learned about its patient from the conversation: symptoms present and absent,
age and sex, read from the text the environment showed it (never from the case behind it).

Symptoms are the keys of the topic vocabulary (``clinical_gym.cases.topics.SYMPTOMS``), found with the same
patterns the patient simulator reads questions with. A clause that opens or carries a denial ("No, I haven't had
any fever", "my ankles aren't swollen") marks the symptoms it names absent; any other clause marks them present.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from clinical_gym.cases.topic_match import find_topics
from clinical_gym.cases.topics import SYMPTOM_NAMES

_CLAUSE = re.compile(r"(?<=[.!?])\s+|;|,\s*but\b|\bbut\b|,")
_DENIAL = re.compile(r"\b(?:no|not|never|none|nothing|without|denies|fine|normal|haven't|hasn't|don't|doesn't|didn't|"
                     r"isn't|aren't|wasn't|weren't|have not|has not|do not|does not|did not)\b", re.I)
# How the rule-based patient denies symptoms it was asked about: "No, I haven't had any fever or cough."
_DENIAL_LIST = re.compile(r"No, I haven't had any (.+?)\.(?:\s|$)")
_LAY_NAMES = {name.lower(): key for key, name in SYMPTOM_NAMES.items()}
_AGE_SEX = (re.compile(r"\((male|female), (\d+) years old\)"), re.compile(r"(\d+)-year-old (male|female)"))
_NO_ANSWER = re.compile(r"\b(?:cannot answer|can't answer|don't know|not sure|haven't noticed anything)\b", re.I)


@dataclass
class Findings:
    """Symptoms heard present and absent, and the patient's age and sex when stated."""

    present: set[str] = field(default_factory=set)
    absent: set[str] = field(default_factory=set)
    age: int | None = None
    sex: str | None = None

    def note(self, symptom: str, present: bool) -> None:
        """Record one symptom; a denial overrides an earlier mention (patients deny explicitly)."""
        if present and symptom not in self.absent:
            self.present.add(symptom)
        elif not present:
            self.present.discard(symptom)
            self.absent.add(symptom)


def named_symptoms(text: str) -> frozenset[str]:
    """The symptoms a text names outright."""
    return find_topics(text).explicit_symptoms


def clauses(text: str) -> list[str]:
    return [c.strip() for c in _CLAUSE.split(text) if c and c.strip()]


def read_statement(text: str, findings: Findings, only: Iterable[str] | None = None) -> None:
    """Note every symptom ``text`` names (restricted to ``only`` when given), clause by clause."""
    allowed = None if only is None else set(only)
    for clause in clauses(text):
        denied = bool(_DENIAL.search(clause))
        for symptom in named_symptoms(clause):
            if allowed is None or symptom in allowed:
                findings.note(symptom, not denied)


def read_demographics(text: str, findings: Findings) -> None:
    """Age and sex from "(male, 37 years old)" or "54-year-old female"."""
    for pattern in _AGE_SEX:
        match = pattern.search(text)
        if match:
            a, b = match.groups()
            sex, age = (a, b) if a in ("male", "female") else (b, a)
            findings.sex, findings.age = sex, int(age)
            return


def read_answer(asked: frozenset[str], reply: str, findings: Findings) -> None:
    """Note what a patient's reply says about the symptoms a question asked about.

    Symptoms the reply lists in a denial are absent; symptoms a clause names are present or absent by that clause;
    an asked symptom the reply neither names nor denies is present when the reply also says something affirmative
    that names none of the asked symptoms (the patient described it in other words).
    """
    denied: set[str] = set()
    for listed in _DENIAL_LIST.findall(reply):
        for name in re.split(r", | or ", listed):
            key = _LAY_NAMES.get(name.strip().lower())
            if key is not None:
                denied.add(key)
    for symptom in denied & asked:
        findings.note(symptom, False)
    rest = _DENIAL_LIST.sub(" ", reply)
    read_statement(rest, findings, only=asked)
    if _NO_ANSWER.search(rest):
        return
    unexplained = [c for c in clauses(rest) if not _DENIAL.search(c) and not (named_symptoms(c) & asked)]
    if unexplained:
        for symptom in asked - denied - findings.present - findings.absent:
            findings.note(symptom, True)
