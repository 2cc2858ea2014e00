"""Finding topics in free text: which question types and symptoms of the topic vocabulary a text names.

Used to read a doctor's question (the patient simulator) and to tag imported case text with topics (loaders).
Patterns come from ``clinical_gym.cases.topics`` and are compiled once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from clinical_gym.cases.topics import BROADER, GENERIC_PAIN_PATTERNS, QUESTION_TYPES, SYMPTOMS


def compile_fragments(fragments: list[str]) -> re.Pattern[str]:
    """One word-bounded alternation of regex fragments."""
    return re.compile(r"\b(?:" + "|".join(fragments) + r")\b")


_TOPIC_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    *((k, compile_fragments(v)) for k, v in QUESTION_TYPES.items()),
    *((k, compile_fragments(v)) for k, v in SYMPTOMS.items()),
]
_GENERIC_PAIN = compile_fragments(GENERIC_PAIN_PATTERNS)


@dataclass(frozen=True)
class TextTopics:
    """Topics named in a text. ``explicit_symptoms`` were named outright; ``symptoms`` adds what broad terms imply."""

    question_types: frozenset[str]
    explicit_symptoms: frozenset[str]
    symptoms: frozenset[str]
    generic_pain: bool


def _drop_contained(hits: list[tuple[str, int, int]]) -> set[str]:
    """Keys whose matched span is not strictly inside another key's longer span ("stool" inside "blood in the stool")."""
    keep = set()
    for key, s, e in hits:
        inside = any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) and k2 != key for k2, s2, e2 in hits)
        if not inside:
            keep.add(key)
    return keep


@lru_cache(maxsize=16384)
def find_topics(text: str) -> TextTopics:
    """The question types and symptoms ``text`` names (lower-cased matching, cached)."""
    text = text.lower().replace("’", "'")
    hits = [(key, m.start(), m.end()) for key, pattern in _TOPIC_PATTERNS for m in pattern.finditer(text)]
    keys = _drop_contained(hits)
    generic_pain = any(not any(s2 <= m.start() and m.end() <= e2 for k2, s2, e2 in hits if k2 in SYMPTOMS)
                       for m in _GENERIC_PAIN.finditer(text))
    explicit = frozenset(k for k in keys if k in SYMPTOMS)
    symptoms = set(explicit)
    for broad, narrow in BROADER.items():
        if broad in explicit:
            symptoms.update(narrow)
    return TextTopics(frozenset(k for k in keys if k in QUESTION_TYPES), explicit, frozenset(symptoms), generic_pain)
