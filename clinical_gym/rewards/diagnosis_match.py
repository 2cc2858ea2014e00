"""Rule-based grading of a doctor agent's free-text diagnosis against a case's gold diagnosis.

The grade is Doctor-R1's outcome scale (§3.2, App. B.1): "correct" (1.0) when the primary diagnosis matches,
"partially" (0.5) when only an alternative (a differential) matches, "wrong" (0.0) otherwise.

A text matches the gold diagnosis when, after normalisation, it

1. equals or contains the gold name or a synonym as whole words, or
2. has word-level F1 (:func:`~clinical_gym.rewards.text_match.word_f1`) >= ``f1_threshold`` with one of them, or
3. names an ICD-10-CM code, written out ("K35.80") or through its title ("acute appendicitis with localized
   peritonitis" -> K35.3), in the gold code's 3-character category.

Known limits: negation is not understood ("appendicitis ruled out" contains "appendicitis"), and "or" always
starts an alternative ("viral or bacterial pneumonia" has primary "viral").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Literal

from clinical_gym.cases.schema import Diagnosis, normalize
from clinical_gym.rewards.icd10_lookup import icd10_category, resolve_icd10
from clinical_gym.rewards.text_match import word_f1

Outcome = Literal["correct", "partially", "wrong"]

OUTCOME_SCORES: Mapping[str, float] = MappingProxyType({"correct": 1.0, "partially": 0.5, "wrong": 0.0})
"""Doctor-R1 outcome reward S_correctness per outcome (§3.2, App. B.1)."""

_THINK_AND_TAGS = re.compile(r"<think>.*?</think>|</?answer>", re.I | re.S)
_DIAGNOSIS_LABEL = re.compile(
    r"(?<!differential )\b(?:(?:final|primary|most likely|working|provisional)\s+)?diagnos[ie]s\s*[:：]", re.I
)
_OTHER_LABEL = re.compile(r"\b(?:recommendations?|treatment|plan|management|advice|reason)\s*[:：]", re.I)
_SEPARATORS = re.compile(
    r"[;\n]+"
    r"|(?<=[a-z)\]][.!?])\s+"  # sentence ends, but not list numbers ("1. ")
    r"|\b(?:differential(?:\s+diagnos[ie]s)?|ddx)\b(?:\s+(?:includes?|including|of|is|are))?\s*[:：]?"
    r"|\b(?:vs|versus|or|rule\s+out|r/o|consider(?:ing)?|alternatively)\b\.?",
    re.I,
)
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]+|\(?\d{1,2}[.)]|[a-z][.)])\s+", re.I)
_LEADING_LABEL = re.compile(
    r"^(?:(?:final|primary|most likely|working|provisional)\s+)?(?:diagnos[ie]s|impression|assessment|dx)\s*[:：-]\s*",
    re.I,
)
_FILLER = frozenset(
    "a also an be could diagnosis i is it likely may might most possible possibly probable probably should "
    "suspect suspected that the think this we would you".split()
)


@dataclass(frozen=True)
class DiagnosisMatch:
    """The grade of one answer: outcome, its Doctor-R1 outcome score, the parsed primary diagnosis, and why."""

    outcome: Outcome
    score: float
    primary: str
    reason: str


def has_diagnosis_label(answer: str) -> bool:
    """Whether ``answer``, outside its <think> block, labels a diagnosis ("Diagnosis:", "Final diagnosis:"; not
    "Differential diagnosis:"), the label ``match_diagnosis`` reads the primary diagnosis after."""
    return _DIAGNOSIS_LABEL.search(_THINK_AND_TAGS.sub(" ", answer)) is not None


def _diagnosis_section(answer: str) -> str:
    """The part of ``answer`` that states diagnoses: after a "Diagnosis:" label, before a "Recommendation:" one."""
    text = _THINK_AND_TAGS.sub(" ", answer)
    label = _DIAGNOSIS_LABEL.search(text)
    if label:
        text = text[label.end():]
    other = _OTHER_LABEL.search(text)
    if other and text[: other.start()].strip():
        return text[: other.start()]
    return text[other.end():] if other else text


def _clean(piece: str) -> str:
    piece = _LEADING_LABEL.sub("", _LIST_MARKER.sub("", piece.strip()))
    return piece.strip(" \t.,:;!?-–—*\"'")


def _says_something(piece: str) -> bool:
    return any(word not in _FILLER for word in normalize(piece).split())


def split_answer(answer: str) -> tuple[str, tuple[str, ...]]:
    """The primary diagnosis and the alternatives stated in a free-text answer.

    The primary is the first clause that says something; alternatives are the clauses after it, split at
    ";", newlines, sentence ends, "differential", "vs", "versus", "or", "rule out", "consider" (and commas).

    >>> split_answer("Acute appendicitis; differential includes mesenteric adenitis, gastroenteritis")
    ('Acute appendicitis', ('mesenteric adenitis', 'gastroenteritis'))
    """
    pieces = [p for p in map(_clean, _SEPARATORS.split(_diagnosis_section(answer))) if _says_something(p)]
    if not pieces:
        return "", ()
    alternatives = tuple(a for p in pieces[1:] for a in map(_clean, p.split(",")) if _says_something(a))
    return pieces[0], alternatives


@lru_cache(maxsize=4096)
def _gold_terms(diagnosis: Diagnosis) -> tuple[str, ...]:
    terms = (normalize(t) for t in (diagnosis.name, *diagnosis.synonyms))
    return tuple(dict.fromkeys(t for t in terms if t))


def _why_matches(text: str, diagnosis: Diagnosis, f1_threshold: float) -> str | None:
    """Why ``text`` names ``diagnosis`` (see the module docstring), or None when it does not."""
    norm = normalize(text)
    terms = _gold_terms(diagnosis)
    for term in terms:
        if norm == term:
            return f"equals {term!r}"
        if f" {term} " in f" {norm} ":
            return f"contains {term!r}"
    f1, term = max(((word_f1(norm, t), t) for t in terms), default=(0.0, ""))
    if f1 >= f1_threshold:
        return f"has word F1 {f1:.2f} with {term!r}"
    category = icd10_category(diagnosis.icd10)
    codes = sorted(c for c in resolve_icd10(text) if icd10_category(c) == category)
    if codes:
        return f"names ICD-10-CM {codes[0]}, in category {category} of {diagnosis.icd10}"
    return None


def _graded(outcome: Outcome, primary: str, reason: str) -> DiagnosisMatch:
    return DiagnosisMatch(outcome, OUTCOME_SCORES[outcome], primary, reason)


def match_diagnosis(answer: str, diagnosis: Diagnosis, *, f1_threshold: float = 0.6) -> DiagnosisMatch:
    """Grade a free-text diagnosis: "correct" if its primary matches the gold diagnosis, "partially" if only an
    alternative does, else "wrong" (Doctor-R1 outcome reward, §3.2).

    >>> gold = Diagnosis(name="Acute appendicitis", icd10="K35.80")
    >>> match_diagnosis("Gastroenteritis vs appendicitis", gold).outcome
    'partially'
    """
    if not 0.0 < f1_threshold <= 1.0:
        raise ValueError(f"f1_threshold must be in (0, 1], got {f1_threshold}")
    primary, alternatives = split_answer(answer)
    if not primary:
        return _graded("wrong", "", "no diagnosis stated")
    why = _why_matches(primary, diagnosis, f1_threshold)
    if why:
        return _graded("correct", primary, f"primary {why}")
    for alternative in alternatives:
        why = _why_matches(alternative, diagnosis, f1_threshold)
        if why:
            return _graded("partially", primary, f"primary does not match; alternative {alternative!r} {why}")
    return _graded("wrong", primary, f"neither the primary nor {len(alternatives)} alternative(s) match {diagnosis.name!r}")
