"""Free-text helpers for imported records: coercing loose JSON to text, sentences, clauses and denials."""

from __future__ import annotations

import re
from typing import Annotated, Any, Callable

from pydantic import BeforeValidator

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n+")
# Where a clause may start that changes polarity ("fever, but no cough"; "reports fever and denies cough").
_CLAUSE_BREAK = re.compile(
    r"(\s*;\s*|,?\s+but\s+|,?\s+however,?\s+|,?\s+although\s+|,\s*(?=(?:and\s+)?(?:no|denies|denied|without|negative for)\b)"
    r"|\s+and\s+(?=(?:denies|denied|no)\b))",
    re.IGNORECASE,
)
_SUBJECT = r"(?:(?:the\s+)?patient|pt|he|she|they)\s+"
_NEGATION = re.compile(
    rf"^(?:{_SUBJECT})?(?:(?:has|have|had)\s+(?:had\s+)?)?(?:no|not|nothing|denies|denied|without|negative for|never|none|nor|"
    r"absence of|free of|non-?smoker|hasn't|haven't|did not|didn't|does not|doesn't|there (?:is|was|were|are) no)\b",
    re.IGNORECASE,
)
_DENIES = re.compile(rf"^(?:{_SUBJECT})?(?:denies|denied)(?:\s+any)?\s+", re.IGNORECASE)
_REPORTS = re.compile(rf"^(?:{_SUBJECT})?(?:reports|reported|states|stated|describes|complains of|endorses|notes|mentions|"
                      r"(?:presents|presented|is presenting) with(?: (?:complaints?|a complaint) of)?)\s+", re.IGNORECASE)
# What a record writes where it has no value: such a leaf is no result and no fact.
_PLACEHOLDER = re.compile(
    r"(?i)^(?:not (?:provided|specified|available|performed|done|reported|recorded|applicable|mentioned|given)|n/?a|none (?:provided|"
    r"reported|given|available|noted)|pending|unknown|null|nan|-+|—|(?:no )?information (?:is )?not (?:provided|available)|"
    r"no (?:additional|further|other) (?:symptoms|information|details) (?:provided|reported|given))\.?$"
)
# A sentence that instructs the examiner or actor instead of describing the patient ("The doctor should inquire ...").
_INSTRUCTION = re.compile(r"(?i)\b(?:the doctor (?:should|may|will|to)|doctor to (?:note|ask|assess)|should (?:inquire|ask about|be asked)|"
                          r"expect questions|as a patient actor|for your role|your character|remember,? you)\b")
_DEMOGRAPHIC_TAIL = re.compile(r"\s*\((?:[^()]*\b(?:years?|months?)\s+old|[^()]*\b(?:male|female|man|woman|boy|girl)\b)[^()]*\)\s*$",
                               re.IGNORECASE)


def is_placeholder(text: str) -> bool:
    """Whether a record value stands for a missing one ("Not provided", "N/A", "Pending", "")."""
    return not text.strip() or bool(_PLACEHOLDER.match(text.strip()))


def is_instruction(sentence: str) -> bool:
    """Whether a sentence speaks to the examiner or the actor rather than about the patient."""
    return bool(_INSTRUCTION.search(sentence))


def as_text(value: Any) -> str:
    """Loose JSON as one text: lists joined with '; ', nested dicts as 'Parent - Child: value', None as ''."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, tuple)):
        return _join([as_text(v) for v in value])
    if isinstance(value, dict):
        return _join([f"{name}: {text}" for name, text in flatten(value)])
    return str(value)


def _join(items: list[str]) -> str:
    """Items as one text: after a full stop a space, else '; '."""
    out = ""
    for item in (i for i in items if i):
        out = item if not out else f"{out} {item}" if out.endswith((".", "!", "?")) else f"{out}; {item}"
    return out


# A text field that also accepts lists, numbers and nested dicts (public datasets are not consistent).
Text = Annotated[str, BeforeValidator(as_text)]


def as_list(value: Any) -> list[str]:
    """Loose JSON as a list of non-empty texts (a string is one item)."""
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    return [t for t in (as_text(v) for v in items) if t]


def humanize(key: str) -> str:
    """A JSON key as a heading: 'Blood_Tests' -> 'Blood Tests'."""
    return re.sub(r"\s+", " ", key.replace("_", " ")).strip()


def flatten(tree: dict[str, Any], parent: str = "") -> list[tuple[str, str]]:
    """Leaves of a nested dict as ('Parent - Child', text) pairs, in order; placeholder leaves ("Not provided") are
    left out."""
    leaves: list[tuple[str, str]] = []
    for key, value in tree.items():
        name = f"{parent} - {humanize(key)}" if parent else humanize(key)
        if isinstance(value, dict):
            leaves.extend(flatten(value, name))
        else:
            text = as_text(value)
            if not is_placeholder(text):
                leaves.append((name, text))
    return leaves


def sentences(text: str) -> list[str]:
    """The sentences (and separate lines) of a text."""
    return [s.strip() for s in _SENTENCE_END.split(text or "") if s.strip()]


def is_denial(clause: str) -> bool:
    """Whether a clause denies something ("No fever", "Denies chest pain", "She has not vomited")."""
    return bool(_NEGATION.match(clause.strip()))


def clauses(sentence: str, standalone: Callable[[str], bool] = lambda clause: True) -> list[tuple[str, bool]]:
    """A sentence cut where it switches between stating and denying, as (clause, is_denial) pairs; a clause that is
    not ``standalone`` ("..., but not watery") stays with the one before it."""
    parts = _CLAUSE_BREAK.split(sentence)
    out: list[tuple[str, bool]] = []
    for i in range(0, len(parts), 2):
        clause = parts[i].strip()
        if not clause:
            continue
        negative = is_denial(clause)
        if out and (out[-1][1] == negative or not standalone(clause)):
            negative = out[-1][1]
            out[-1] = (out[-1][0] + parts[i - 1] + clause, negative)
        else:
            out.append((clause, negative))
    return out


def patient_voice(clause: str) -> str:
    """A clause as something a patient could say, where that is a safe rewrite ("Denies fever" -> "No fever.")."""
    text = clause.strip().rstrip(",;")
    if _DENIES.match(text):
        text = "No " + _DENIES.sub("", text)
    else:
        text = _REPORTS.sub("", text)
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def without_demographics(text: str) -> str:
    """A self-report without a trailing '(male, 37 years old)'."""
    return _DEMOGRAPHIC_TAIL.sub("", text).strip()


# Second person (a role-play brief: "You are a 55-year-old woman ... your face") to the patient's first person.
_SECOND_PERSON: tuple[tuple[str, str], ...] = (
    (r"you are", "I am"), (r"you were", "I was"), (r"you're", "I'm"), (r"you've", "I've"), (r"you'd", "I'd"), (r"you'll", "I'll"),
    (r"you have", "I have"), (r"you had", "I had"), (r"you haven't", "I haven't"), (r"you don't", "I don't"), (r"you do", "I do"),
    (r"you did", "I did"), (r"yourself", "myself"), (r"yours", "mine"), (r"your", "my"),
)
_OBJECT_YOU = re.compile(r"\b(to|for|with|at|on|about|from|told|asked|gave|examined|noted|advised|helped|of|by|as|than|let|make|makes|made)"
                         r" you\b", re.IGNORECASE)


def first_person(text: str) -> str:
    """A second-person brief as the patient's own words ("You have noticed your skin darkening" -> "I have noticed
    my skin darkening"); markdown emphasis is removed."""
    text = re.sub(r"\*\*|__", "", text)
    for you, me in _SECOND_PERSON:
        text = re.sub(rf"\b{you}\b", lambda m, me=me: me if m.group(0)[0].islower() or me.startswith("I") else me.capitalize(), text,
                      flags=re.IGNORECASE)
    text = _OBJECT_YOU.sub(lambda m: f"{m.group(1)} me", text)
    return re.sub(r"\byou\b", "I", text, flags=re.IGNORECASE)
