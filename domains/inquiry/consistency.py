"""What a case's facts affirm and deny, and whether a consultation contradicts what the patient already said.

A present fact affirms the symptoms it is tagged with and, for history of the complaint (``hpi``, ``ros``),
the symptoms its own words name outside a denial ("I sleep propped up on four pillows and wake up gasping"
affirms trouble sleeping), unless the record denies that symptom outright elsewhere. A background fact affirms
the history topics its words name (a smoking fact affirms ``smoking``; "No surgeries." affirms nothing). A pertinent negative denies its symptoms, except those
a present fact affirms by tag (a record that says both keeps the affirmation). A generated reply denies the keys
in ``PatientReply.denied``: symptoms, history topics, and ``GENERIC_PAIN`` for "I'm not in any pain".

A consultation contradicts itself when one key is affirmed and denied (a denied broad symptom such as
``bowel_changes`` also denies the narrower ones it covers; a denied ``GENERIC_PAIN`` denies every pain symptom).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from clinical_gym.cases import Case
from clinical_gym.cases.formats.text import clauses, is_denial
from clinical_gym.cases.topic_match import affirmed_symptoms, find_topics
from clinical_gym.cases.topics import BROADER, PAIN_SYMPTOMS, QUESTION_TYPES

GENERIC_PAIN = "<pain>"
HISTORY_TYPES = frozenset({"past_history", "surgical_history", "medications", "allergies", "smoking", "alcohol", "substance_use",
                           "family_history", "travel", "sexual_history", "vaccination", "exposure"})
_COMPLAINT_CATEGORIES = frozenset({"hpi", "ros"})
assert HISTORY_TYPES <= set(QUESTION_TYPES)


@dataclass(frozen=True)
class Claims:
    """The topic keys one fact affirms and denies."""

    affirms: frozenset[str] = frozenset()
    denies: frozenset[str] = frozenset()


def text_symptoms(text: str) -> frozenset[str]:
    """Symptoms a text names as complaints outside its denials ("Cough, but no fever" names cough; "swollen right
    up to my knees" does not name joint pain: see ``topic_match.affirmed_symptoms``)."""
    return frozenset(s for clause, negative in clauses(text) if not negative for s in affirmed_symptoms(clause))


_LOOSE_HISTORY_WORDS = re.compile(r"(?i)\b(?:shots?|jabs?|holidays?|vacations?|trips?)\b")  # insulin shots, a beach holiday


def _history_named(text: str) -> frozenset[str]:
    """History topics a text names in its own words (a fact filed under past history that speaks of vaccinations
    is about vaccinations); words that name a topic only in a question ("shots", "holiday") do not count."""
    return find_topics(_LOOSE_HISTORY_WORDS.sub(" ", text)).question_types & HISTORY_TYPES


_CLAIMS: dict[int, tuple[Case, dict[str, Claims]]] = {}


def case_claims(case: Case) -> dict[str, Claims]:
    """What each fact of a case affirms and denies, by fact id (computed once per case object)."""
    hit = _CLAIMS.get(id(case))
    if hit is not None and hit[0] is case:
        return hit[1]
    denied_outright = {s for f in case.history if not f.present for s in f.symptoms}
    tagged_present = {s for f in case.history if f.present for s in f.symptoms}
    # a negative about a broad symptom does not deny the narrower one the record affirms ("bowels working normally"
    # now, "diarrhea three weeks ago")
    kept_affirmed = tagged_present | {broad for broad, narrow in BROADER.items() if tagged_present & set(narrow)}
    claims: dict[str, Claims] = {}
    for f in case.history:
        if f.present:
            said = text_symptoms(f.text) - denied_outright if f.category in _COMPLAINT_CATEGORIES else frozenset()
            # not "No surgeries."; a relative's history is not the patient's ("my father needed an operation")
            history = _history_named(f.text) if not is_denial(f.text) and f.category != "family" else frozenset()
            claims[f.id] = Claims(affirms=frozenset(f.symptoms) | said | history)
        else:
            history = _history_named(f.text) if f.category not in (*_COMPLAINT_CATEGORIES, "family") else frozenset()
            claims[f.id] = Claims(denies=(frozenset(f.symptoms) - kept_affirmed) | history)
    if len(_CLAIMS) > 4096:
        _CLAIMS.clear()
    _CLAIMS[id(case)] = (case, claims)
    return claims


def denial_reach(key: str) -> frozenset[str]:
    """The keys a denial of ``key`` also denies (a broad symptom covers its narrower ones; generic pain every pain)."""
    if key == GENERIC_PAIN:
        return PAIN_SYMPTOMS | {GENERIC_PAIN}
    return frozenset({key, *BROADER.get(key, ())})


class ConsistencyCheck:
    """Follows one consultation and reports every reply that contradicts what the patient said before (or itself)."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self._claims = case_claims(case)
        self.affirmed: dict[str, int] = {}
        self.denied: dict[str, int] = {}
        self.turn = 0

    def add(self, facts: Iterable[str], denied: Iterable[str] = ()) -> list[str]:
        """Record one reply (the facts it told and the keys it denied); the contradictions it makes."""
        self.turn += 1
        affirms: set[str] = set()
        denies: set[str] = set(denied)
        for fid in facts:
            affirms |= self._claims[fid].affirms
            denies |= self._claims[fid].denies
        problems = []
        for key in denies:
            for covered in denial_reach(key):
                if covered in affirms or covered in self.affirmed:
                    when = "this reply" if covered in affirms else f"turn {self.affirmed[covered]}"
                    problems.append(f"turn {self.turn}: denies {key!r} but affirmed {covered!r} in {when}")
        for key in affirms:
            for denied_key, turn in self.denied.items():
                if key in denial_reach(denied_key):
                    problems.append(f"turn {self.turn}: affirms {key!r} but denied {denied_key!r} in turn {turn}")
        for key in affirms:
            self.affirmed.setdefault(key, self.turn)
        for key in denies:
            self.denied.setdefault(key, self.turn)
        return problems
