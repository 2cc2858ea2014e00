"""Simulated patients: the protocol, and the rule-based default that answers from a case's structured facts.

The rule-based patient reveals only the fact a question asks for, denies symptoms the case does not have,
says it does not know what a patient would not know (lab values, scan results), never names or confirms a
diagnosis, spots repeated questions, and speaks in its persona's tone. It is deterministic given the rng.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
from rank_bm25 import BM25Okapi

from clinical_gym.cases import Case, Fact
from clinical_gym.cases.topics import BROADER, PAIN_SYMPTOMS, SYMPTOM_NAMES
from clinical_gym.domains.inquiry.questions import HPI_TYPES, QuestionTopics, analyze_question, content_words

ReplyKind = Literal["answered", "denied", "unknown", "refused", "repeated"]

REFUSE = "Sorry, I cannot answer this question."
REPEATED = "Sorry, you've already asked this question."
NO_DIAGNOSIS = "I don't know what's wrong with me, doctor, that's why I came to see you."
UNKNOWN = "I don't know, nobody has told me that."
UNSURE = "I'm not sure, I haven't noticed anything like that."
NO_PAIN = "No, I'm not in any pain."
BM25_MIN_SCORE = 1.0
MAX_PARTS = 3


@dataclass(frozen=True)
class PatientReply:
    """What the patient said, how (``kind``), and which fact ids it revealed."""

    text: str
    kind: ReplyKind
    facts: tuple[str, ...] = ()


class Patient(Protocol):
    """A simulated patient for one episode at a time; ``reset`` clears all episode state."""

    def reset(self, case: Case, rng: np.random.Generator) -> None: ...

    def reply(self, question: str, history: list[dict[str, str]]) -> PatientReply: ...


@dataclass
class _CaseIndex:
    """Per-case lookups, built once per case object."""

    facts: tuple[Fact, ...]
    chief: str | None
    pains: frozenset[str]
    bm25: BM25Okapi

    @classmethod
    def build(cls, case: Case) -> "_CaseIndex":
        facts = case.history
        ordered = [f for f in facts if f.volunteered and f.symptoms] + [f for f in facts if f.category == "hpi" and f.symptoms]
        chief = ordered[0].symptoms[0] if ordered else None
        pains = frozenset(s for f in facts if f.present for s in f.symptoms if s in PAIN_SYMPTOMS)
        corpus = [list(content_words(f.text)) or ["_"] for f in facts]
        return cls(facts=facts, chief=chief, pains=pains, bm25=BM25Okapi(corpus))


_INDEX: dict[int, tuple[Case, _CaseIndex]] = {}


def case_index(case: Case) -> _CaseIndex:
    hit = _INDEX.get(id(case))
    if hit is not None and hit[0] is case:
        return hit[1]
    if len(_INDEX) > 4096:
        _INDEX.clear()
    index = _CaseIndex.build(case)
    _INDEX[id(case)] = (case, index)
    return index


_TONE: dict[str, tuple[str, ...]] = {
    "calm": ("",), "stoic": ("",), "anxious": ("", "", "Um, ", "I'm quite worried about all this. "),
    "frustrated": ("", "", "Like I said, ", "Look, "), "embarrassed": ("", "", "", "This is a bit awkward, but "),
    "tired": ("", "", "", "Sorry, I'm so worn out. "), "cheerful": ("", "", "Well, "),
}
_FORGETFUL_CATEGORIES = frozenset({"medications", "past_history", "surgical_history", "family"})


def _denial(symptoms: list[str]) -> str:
    names = [SYMPTOM_NAMES[s] for s in symptoms]
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"No, I haven't had any {joined}."


@dataclass
class RuleBasedPatient:
    """The embedded patient: rules + retrieval over the case's facts. Offline, deterministic, fast."""

    case: Case | None = None
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    asked: set = field(default_factory=set)
    revealed: list[str] = field(default_factory=list)

    def reset(self, case: Case, rng: np.random.Generator) -> None:
        self.case, self.rng = case, rng
        self.asked = set()
        self.revealed = []
        self._index = case_index(case)

    def reply(self, question: str, history: list[dict[str, str]] | None = None) -> PatientReply:
        q = analyze_question(question)
        if q.injection or q.diagnosis_request:
            return PatientReply(NO_DIAGNOSIS, "refused")
        if q.key in self.asked:
            return PatientReply(REPEATED, "repeated")
        self.asked.add(q.key)
        if q.unknowable:
            return PatientReply(UNKNOWN, "unknown")
        reply = self._answer(q)
        self.revealed.extend(f for f in reply.facts if f not in self.revealed)
        text = self._style(reply.text, reply.facts) if reply.kind in ("answered", "denied") else reply.text
        return PatientReply(text, reply.kind, reply.facts)

    # -- choosing what to say -----------------------------------------------------------------------------
    def _answer(self, q: QuestionTopics) -> PatientReply:
        groups = self._symptom_groups(q)
        if groups is None:
            return PatientReply(NO_PAIN, "denied")
        if groups:
            return self._answer_symptoms(q, groups)
        if q.question_types:
            fact = self._best(q, frozenset())
            if fact is not None:
                return PatientReply(fact.text, "answered", (fact.id,))
            return PatientReply(UNSURE if q.question_types & HPI_TYPES else "No, nothing like that.", "denied")
        return self._retrieve(q)

    def _symptom_groups(self, q: QuestionTopics) -> list[tuple[str, frozenset[str]]] | None:
        """The symptoms asked about, each with the keys that answer it; None means 'pain' asked, patient has none.

        A group named ``<implicit>`` is the symptom the question refers to without naming it ("when did it start?").
        """
        idx = self._index
        groups = [(s, frozenset({s, *BROADER.get(s, ())})) for s in sorted(q.explicit_symptoms)]
        if q.generic_pain and not (q.explicit_symptoms & PAIN_SYMPTOMS):
            if not idx.pains:
                return None if not groups else groups
            pain = frozenset({idx.chief}) if idx.chief in idx.pains else idx.pains
            groups.append(("<implicit>", pain))
        elif not groups and idx.chief and q.question_types and q.question_types <= HPI_TYPES:
            groups.append(("<implicit>", frozenset({idx.chief})))
        return groups

    def _answer_symptoms(self, q: QuestionTopics, groups: list[tuple[str, frozenset[str]]]) -> PatientReply:
        texts, facts, denied = [], [], []
        for name, keys in groups:
            fact = self._best(q, keys, need_type=name == "<implicit>")
            if fact is None:
                if name != "<implicit>":
                    denied.append(name)
            elif fact.id not in facts:
                facts.append(fact.id)
                texts.append(fact.text)
        if denied:
            texts.append(_denial(denied))
        texts = texts[:MAX_PARTS]
        if not facts and denied:
            return PatientReply(texts[0], "denied")
        if not texts:
            return PatientReply(UNSURE, "denied")
        present = any(self.case.fact(f).present for f in facts)
        return PatientReply(" ".join(texts), "answered" if present else "denied", tuple(facts))

    def _best(self, q: QuestionTopics, symptoms: frozenset[str], need_type: bool = False) -> Fact | None:
        """The fact that best answers ``q`` about ``symptoms`` (or about its question types when empty).

        ``need_type``: the fact must also answer one of the question's types (used when the symptom was implied).
        """
        best, best_score = None, 0.0
        withheld = set(self.case.persona.withheld)
        for i, f in enumerate(self._index.facts):
            if f.id in withheld and not (set(f.symptoms) & q.explicit_symptoms):
                continue
            sym = len(symptoms.intersection(f.topics))
            typ = len(q.question_types.intersection(f.topics))
            if (symptoms and not sym) or ((need_type or not symptoms) and q.question_types and not typ) or (not symptoms and not typ):
                continue
            score = 2.0 * sym + typ - 0.01 * len(f.topics) + (0.3 if f.id not in self.revealed else 0.0) - 0.0001 * i
            if score > best_score:
                best, best_score = f, score
        return best

    def _retrieve(self, q: QuestionTopics) -> PatientReply:
        if not q.words:
            return PatientReply(REFUSE, "refused")
        scores = self._index.bm25.get_scores(list(q.words))
        i = int(np.argmax(scores))
        fact = self._index.facts[i]
        if scores[i] < BM25_MIN_SCORE or fact.id in self.case.persona.withheld:
            return PatientReply(REFUSE, "refused")
        return PatientReply(fact.text, "answered" if fact.present else "denied", (fact.id,))

    # -- how to say it ------------------------------------------------------------------------------------
    def _style(self, text: str, facts: tuple[str, ...]) -> str:
        """The persona's tone around a reply; the fact's own words are kept verbatim."""
        persona = self.case.persona
        options = _TONE[persona.emotion]
        prefix = options[int(self.rng.integers(len(options)))] if len(options) > 1 else options[0]
        if persona.cognitive == "forgetful" and any(self.case.fact(f).category in _FORGETFUL_CATEGORIES for f in facts):
            text = f"{text} At least I think so, I'm not good with these things."
        if prefix and not prefix.endswith(". ") and not re.match(r"I\b", text):
            text = text[0].lower() + text[1:]
        return prefix + text
