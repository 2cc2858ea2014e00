"""Finding topics in free text: which question types and symptoms of the topic vocabulary a text names.

Used to read a doctor's question (the patient simulator) and to tag imported case text with topics (loaders).
Patterns come from ``clinical_gym.cases.topics`` and are compiled once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from clinical_gym.cases.topics import BROADER, GENERIC_PAIN_PATTERNS, PAIN_SYMPTOMS, QUESTION_TYPES, SYMPTOMS


def compile_fragments(fragments: list[str]) -> re.Pattern[str]:
    """One word-bounded alternation of regex fragments."""
    return re.compile(r"\b(?:" + "|".join(fragments) + r")\b")


_TOPIC_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    *((k, compile_fragments(v)) for k, v in QUESTION_TYPES.items()),
    *((k, compile_fragments(v)) for k, v in SYMPTOMS.items()),
]
_GENERIC_PAIN = compile_fragments(GENERIC_PAIN_PATTERNS)


# Symptom words that name a body part, a function or a feeling rather than a complaint ("my knees", "I sleep flat"):
# enough for a question to be about the symptom, not for a statement to affirm it.
CONTEXT_WORDS = frozenset({
    "knee", "knees", "hip", "hips", "toe", "toes", "wrist", "wrists", "shoulder", "shoulders", "chest", "abdomen", "abdominal", "belly",
    "tummy", "stool", "stools", "bowel", "bowels", "movements", "poo", "breathing", "breathe", "sleep", "sleeping", "slept",
    "enjoy", "smile", "speech", "speak", "speaking", "talking", "jaw", "teeth", "dental", "cheek", "cheeks", "gland", "glands", "spots",
    "vision", "visual", "eyesight", "hearing", "calf", "calves", "flank", "loin", "spine", "lower back", "pelvic", "pelvis", "urine",
    "pee", "peeing", "bladder", "waterworks", "memory", "breast", "breasts", "nipple", "nipples", "temperature", "nasal", "sinus",
    "weakness", "drip", "wind", "runs", "fits", "fit", "walk normally", "walking normally", "put weight",
    "bear weight", "worry", "worried", "worries", "nervous", "lying flat", "lie flat", "pillow", "pillows", "appetite", "heart",
    "limp", "cramp", "cramps", "stiff", "stiffness", "drinking a lot of water", "testes", "balls", "sore",
})
_SYMPTOM_PATTERNS = [(k, p) for k, p in _TOPIC_PATTERNS if k in SYMPTOMS]



# A negation shortly before a mention ("without cough", "no fever or chills", "denies nausea and vomiting").
_NEGATED = re.compile(r"\b(?:no|not|without|denies|denied|nor|never|negative for|free of|absence of|none)\b(?:[\s,]+(?:or|and|any|\w+)){0,4}[\s,]*$")


@lru_cache(maxsize=16384)
def affirmed_symptoms(text: str, denial: bool = False) -> frozenset[str]:
    """The symptoms a statement names as complaints: matches made only of ``CONTEXT_WORDS`` ("up to my knees",
    "I sleep flat") do not count, unless the word locates a pain the text speaks of ("pain in the upper belly");
    nor do mentions negated just before ("nodes without cough"), unless the statement is a ``denial`` (then what
    it denies is what it names)."""
    text = text.lower().replace("’", "'")
    pain = bool(_GENERIC_PAIN.search(text))
    hits = [(key, m.start(), m.end()) for key, pattern in _SYMPTOM_PATTERNS for m in pattern.finditer(text)
            if (m.group(0) not in CONTEXT_WORDS or (pain and key in PAIN_SYMPTOMS))
            and (denial or not _NEGATED.search(text[max(0, m.start() - 40): m.start()]))]
    return frozenset(_drop_contained(hits))


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
