"""Simulated patients: the protocol, and the rule-based default that answers from a case's structured facts.

The rule-based patient reveals only the facts a question asks for (every topic of a compound question),
denies symptoms the case does not have, says it does not know what a patient would not know (lab values,
scan results), never names or confirms a diagnosis, and speaks in its persona's tone. It never contradicts
what it already said (``clinical_gym.domains.inquiry.consistency``): a symptom that a told fact affirms, in its
tags or in its own words, is never denied. A question is "already asked" only when its answer would tell
nothing new. A yes/no question about an event the record does not mention ("Have you had a colonoscopy?")
gets a plausible negative that names no diagnosis (``unknown_answer="deny"``, what real patients do) or an
unsure reply (``"unsure"``). It is deterministic given the rng.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
from rank_bm25 import BM25Okapi

from clinical_gym.cases import Case, Fact
from clinical_gym.cases.leakage import leaked_terms
from clinical_gym.cases.lexicon import (
    ORGANS,
    PAIN_SITES,
    about_organ,
    concepts,
    content_stems,
    fact_events,
    index_tokens,
    names_site,
)
from clinical_gym.cases.topics import BROADER, PAIN_SYMPTOMS, SYMPTOM_NAMES
from clinical_gym.domains.inquiry.consistency import GENERIC_PAIN, HISTORY_TYPES, case_claims
from clinical_gym.domains.inquiry.questions import HPI_TYPES, QuestionTopics, analyze_question

ReplyKind = Literal["answered", "denied", "unknown", "refused", "repeated"]
UnknownAnswer = Literal["deny", "unsure"]

REFUSE = "Sorry, I cannot answer this question."
REPEATED = "Sorry, you've already asked this question."
NO_DIAGNOSIS = "I don't know what's wrong with me, doctor, that's why I came to see you."
UNKNOWN = "I don't know, nobody has told me that."
UNSURE = "I'm not sure, I haven't noticed anything like that."
NO_PAIN = "No, I'm not in any pain."
HOLD_BACK = "Um, nothing I really want to go into."
NO_EVENT: dict[str, str] = {"deny": "No, not that I know of.", "unsure": "I'm not sure, I don't think so."}
# What a patient says when the record holds nothing about a history topic (a plausible negative, no diagnosis).
NO_HISTORY: dict[str, str] = {
    "past_history": "No, I don't have any long-term medical problems.", "surgical_history": "No, I've never had an operation.",
    "medications": "I'm not taking any regular medicines.", "allergies": "No, I'm not allergic to anything that I know of.",
    "smoking": "No, I don't smoke.", "alcohol": "I don't really drink alcohol.", "substance_use": "No, I don't use any drugs.",
    "family_history": "Not that I know of, nobody in my family has had anything like this.",
    "travel": "No, I haven't travelled anywhere recently.", "sexual_history": "Nothing I'm worried about there.",
    "vaccination": "As far as I know, my vaccinations are up to date.", "exposure": "No, not that I know of.",
    "menstrual_history": "Nothing unusual there.", "occupation": "Nothing about my work that I think matters here.",
    "living_situation": "Nothing out of the ordinary at home.", "diet": "Nothing out of the ordinary with my diet.",
    "activity": "Nothing out of the ordinary there.", "associated": "Not that I can think of.",
}
# A yes/no question about something that did or did not happen ("Have you had a colonoscopy?", "Did you travel?").
_EVENT_QUESTION = re.compile(
    r"(?i)^\s*(?:(?:so|and|also|ok(?:ay)?|now|tell me),?\s+)?(?:(?:have|has|had|did|were|was)\s+(?:you|anyone|anybody|your\s+\w+)\b|"
    r"(?:any|ever)\b|(?:do|does|are|is)\s+(?:you|anyone)\s+(?:\w+\s+){0,2}(?:had|been|ever)\b)"
)
# An open question about why the patient came ("What brings you in?", "What's wrong?"): told the main complaint.
_COMPLAINT_QUESTION = re.compile(
    r"(?i)\b(?:what (?:brings|brought) you|what(?:'s| is| seems to be)(?: the)? (?:problem|matter|trouble)|"
    r"what(?:'s| is) wrong|how can i help|why (?:did|have) you come|what(?: has)? happened|"
    r"what(?:'s| has) been (?:going on|happening)|tell me (?:more )?about (?:it|this|the problem|your (?:symptoms?|problem)))"
)
BM25_MIN_SCORE = 1.0
EVENT_WORD_SHARE = 2 / 3
MAX_PARTS = 6
WORD_BONUS, MAX_WORD_BONUS = 0.25, 1.0
_COMPLAINT_CATEGORIES = frozenset({"hpi", "ros"})
_NEAR_TYPES = {"onset": "duration", "duration": "onset"}  # a fact that tells one answers the other at half weight
# The category where a history topic's own facts are filed (a medication list before an ROS line naming tablets).
_HOME_CATEGORY = {"medications": "medications", "past_history": "past_history", "surgical_history": "surgical_history",
                  "allergies": "allergies", "family_history": "family", "menstrual_history": "gynecologic"}
_ORGAN_CATEGORY_ORDER = ("past_history", "surgical_history", "medications", "hpi", "ros", "social", "gynecologic", "allergies")


@dataclass(frozen=True)
class PatientReply:
    """What the patient said, how (``kind``), which fact ids it revealed, and which topic keys it denied in its own
    words (symptoms, history topics, ``"<pain>"``; see ``consistency``)."""

    text: str
    kind: ReplyKind
    facts: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()


class Patient(Protocol):
    """A simulated patient for one episode at a time; ``reset`` clears all episode state."""

    def reset(self, case: Case, rng: np.random.Generator) -> None: ...

    def reply(self, question: str, history: list[dict[str, str]]) -> PatientReply: ...


def _covers(asked: frozenset[str], fact: frozenset[str]) -> bool:
    """Whether a fact's word stems hold most of an event question's (``lexicon.content_stems``: pronouns and fillers
    left out): a stem matches the same stem or one a letter longer or shorter ("wets" / "wet")."""
    if not asked:
        return False
    hits = sum(a in fact or any(_one_letter_apart(a, f) for f in fact) for a in asked)
    return hits >= EVENT_WORD_SHARE * len(asked)


def _one_letter_apart(a: str, b: str) -> bool:
    """Whether one stem (three letters or more) is the other with one letter more at its end."""
    return min(len(a), len(b)) >= 3 and abs(len(a) - len(b)) == 1 and (a.startswith(b) or b.startswith(a))


@dataclass
class _CaseIndex:
    """Per-case lookups, built once per case object. Facts that name the diagnosis are never said."""

    facts: tuple[Fact, ...]
    said: dict[str, frozenset[str]]  # fact id -> keys it answers (tags, symptoms its words affirm, "location" if it says where)
    stems: dict[str, frozenset[str]]
    events: dict[str, frozenset[str]]  # fact id -> events it names in any wording or by its tags (lexicon.fact_events)
    chief: str | None
    pains: frozenset[str]
    affirmed: frozenset[str]  # every key some present fact affirms
    bm25: BM25Okapi | None

    @classmethod
    def build(cls, case: Case) -> "_CaseIndex":
        claims = case_claims(case)
        facts = tuple(f for f in case.history if not leaked_terms(f.text, case.diagnosis))
        # a complaint fact that says where ("My muscles ache all over", "a swollen, painful right knee") answers
        # "where?" about a symptom the record tags no location for
        located = {s for f in facts if "location" in f.topics for s in f.symptoms}
        site = {f.id: frozenset({"location"}) if f.present and f.category in _COMPLAINT_CATEGORIES and names_site(f.text)
                and claims[f.id].affirms - located else frozenset() for f in facts}
        said = {f.id: frozenset(f.topics) | claims[f.id].affirms | site[f.id] for f in facts}
        ordered = [f for f in facts if f.volunteered and f.symptoms] + [f for f in facts if f.category == "hpi" and f.symptoms]
        chief = ordered[0].symptoms[0] if ordered else None
        pains = frozenset(s for f in facts if f.present for s in said[f.id] if s in PAIN_SYMPTOMS)
        corpus = [index_tokens(f.text) or ["_"] for f in facts]
        affirmed = frozenset(k for f in case.history if f.present for k in claims[f.id].affirms)
        return cls(facts=facts, said=said, stems={f.id: frozenset(content_stems(f.text)) for f in facts},
                   events={f.id: fact_events(f.text, f.symptoms) for f in facts}, chief=chief, pains=pains, affirmed=affirmed,
                   bm25=BM25Okapi(corpus) if corpus else None)


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


def _site_of(pains: frozenset[str]) -> str:
    """Where pains are, as their names say ("in my throat" for a sore throat), for up to three of them."""
    sites = list(dict.fromkeys(PAIN_SITES[p] for p in sorted(pains) if p in PAIN_SITES))[:3]
    return " and ".join(sites)


@dataclass
class _Answer:
    """The parts of a reply being put together."""

    texts: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    event: bool = False  # a fact naming an event the question names was told (or held back): nothing is denied
    affirmed: bool = False  # something was said that is no denial, though no fact was told ("It's in my throat.")

    def fact(self, f: Fact) -> None:
        if f.id not in self.facts:
            self.facts.append(f.id)
            self.texts.append(f.text)

    def deny(self, text: str, keys: list[str]) -> None:
        self.texts.append(text)
        self.denied.extend(k for k in keys if k not in self.denied)


@dataclass
class RuleBasedPatient:
    """The embedded patient: rules + retrieval over the case's facts. Offline, deterministic, fast.

    ``unknown_answer``: what the patient says to a yes/no question about an event the record does not mention:
    ``"deny"`` ("No, not that I know of.", the default: what real patients say) or ``"unsure"``.
    """

    case: Case | None = None
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    unknown_answer: UnknownAnswer = "deny"
    told: set = field(default_factory=set)
    revealed: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.unknown_answer not in NO_EVENT:
            raise ValueError(f"unknown_answer must be 'deny' or 'unsure', got {self.unknown_answer!r}")

    def reset(self, case: Case, rng: np.random.Generator) -> None:
        self.case, self.rng = case, rng
        self.told = set()
        self.revealed = []
        self._index = case_index(case)

    def reply(self, question: str, history: list[dict[str, str]] | None = None) -> PatientReply:
        q = analyze_question(question)
        if q.injection or q.diagnosis_request:
            return PatientReply(NO_DIAGNOSIS, "refused")
        if q.unknowable:
            reply = PatientReply(UNKNOWN, "unknown")
            keys = {("unknown", q.words)}
        else:
            reply = self._answer(q, question)
            keys = {("fact", f) for f in reply.facts} | {("denied", k) for k in reply.denied}
            keys = keys or {(reply.kind, reply.text, q.words)}
        if keys <= self.told:
            return PatientReply(REPEATED, "repeated")
        self.told |= keys
        self.revealed.extend(f for f in reply.facts if f not in self.revealed)
        text = self._style(reply.text, reply.facts) if reply.kind in ("answered", "denied") else reply.text
        return PatientReply(text, reply.kind, reply.facts, reply.denied)

    # -- choosing what to say -----------------------------------------------------------------------------
    def _answer(self, q: QuestionTopics, question: str) -> PatientReply:
        chief = self._index.chief
        if chief and not q.explicit_symptoms and _COMPLAINT_QUESTION.search(question):  # "What brings you in?"
            fact = self._best(q, frozenset({chief}), named=chief)
            if fact is not None:
                return PatientReply(fact.text, "answered" if fact.present else "denied", (fact.id,))
        answer = _Answer()
        self._answer_events(q, answer)
        groups = self._symptom_groups(q)
        if groups is None and not answer.event:
            answer.deny(NO_PAIN, [GENERIC_PAIN])
        elif groups:
            self._answer_symptoms(q, groups, answer)
        # history topics: all of them in a history question, the strong ones beside symptoms ("fever or allergies?"),
        # not the context words of a symptom question ("worse after eating?" is not about diet)
        history_types = sorted(t for t in q.question_types if t not in HPI_TYPES and (not answer.texts or t in HISTORY_TYPES))
        if history_types:
            self._answer_history(q, history_types, answer, skip_associated=bool(groups))
        if not answer.texts and q.question_types & HPI_TYPES:
            answer.texts.append(UNSURE)
        if not answer.texts:
            return self._retrieve(q, question)
        texts = answer.texts[:MAX_PARTS]
        present = answer.affirmed or any(self.case.fact(f).present for f in answer.facts)
        kind = "answered" if present else "denied"
        return PatientReply(" ".join(texts), kind, tuple(answer.facts), tuple(answer.denied))

    def _answer_events(self, q: QuestionTopics, answer: _Answer) -> None:
        """An event the question names in any wording ("Have you been incontinent?", "any pets?", "Do you remember
        it?") that a fact tells, whatever its tags ("I wet myself during it"): that fact first, held back if the
        persona withholds it and the question does not name its symptom; the rest of the reply then denies nothing
        (the record said it happened)."""
        if not q.events:
            return
        hits = [f for f in self._index.facts if q.events & self._index.events[f.id]]
        if not hits:
            return
        fact = min(hits, key=lambda f: (f.id in self.revealed, not f.present))
        if fact.id in self.case.persona.withheld and not set(fact.symptoms) & q.explicit_symptoms:
            answer.texts.append(HOLD_BACK)
        else:
            answer.fact(fact)
        answer.event = True

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

    def _answer_symptoms(self, q: QuestionTopics, groups: list[tuple[str, frozenset[str]]], answer: _Answer) -> None:
        """Each symptom asked about: its best fact, else a denial. A broad symptom answered by a pertinent negative
        about a narrower one ("any skin lesions?" - "No rash.") is denied as well, unless the patient has one of
        the symptoms it covers."""
        denied = []
        for name, keys in groups:
            fact = self._best(q, keys, need_type=name == "<implicit>", named=name)
            if fact is not None:
                answer.fact(fact)
            elif name == "<implicit>" and "location" in q.question_types and (site := _site_of(keys)):
                answer.texts.append(f"It's {site}.")  # "where is the pain?" of a sore throat no fact locates: the throat
                answer.affirmed = True
            if name == "<implicit>" or (fact is not None and (fact.present or name in fact.topics or keys & self._index.affirmed)):
                continue
            if answer.event:  # the event asked about was told: no denial beside it
                continue
            if keys & self._withheld_keys():  # held back until asked about specifically: not denied, not told
                answer.texts.append(HOLD_BACK)
            else:
                denied.append(name)
        if denied:
            answer.deny(_denial(denied), denied)

    def _answer_history(self, q: QuestionTopics, types: list[str], answer: _Answer, skip_associated: bool) -> None:
        """One answer per history topic the question names ("work, smoking, alcohol?"): its best fact, else the
        topic's plausible negative."""
        for topic in types:
            if topic == "associated" and skip_associated:
                continue
            if answer.event and topic not in HISTORY_TYPES:  # "any pets?" told the cat: not also who they live with
                continue
            if topic == "past_history" and q.organs:
                self._answer_organs(q, answer)
                continue
            fact = self._best(q, frozenset(), only_type=topic)
            if fact is not None:
                answer.fact(fact)
            elif topic in self._withheld_keys():
                answer.texts.append(HOLD_BACK)
            elif answer.event:
                continue
            elif topic in NO_HISTORY and topic not in q.implied_types and not (topic == "menstrual_history" and self.case.demographics.sex == "male"):
                answer.deny(NO_HISTORY[topic], [topic] if topic in HISTORY_TYPES else [])

    def _answer_organs(self, q: QuestionTopics, answer: _Answer) -> None:
        """A "<organ> problems" question ("any bowel problems?"): a fact about that organ (past history first, never
        a relative's), else, unless its symptoms were just answered, "No, I've never had any problems with my ...";
        another organ's history is no answer."""
        withheld = set(self.case.persona.withheld)
        for organ in q.organs:
            about = [f for f in self._index.facts if f.category != "family" and about_organ(f.text, organ)
                     and (f.id not in withheld or set(f.symptoms) & q.explicit_symptoms)]
            about.sort(key=lambda f: (_ORGAN_CATEGORY_ORDER.index(f.category) if f.category in _ORGAN_CATEGORY_ORDER
                                      else len(_ORGAN_CATEGORY_ORDER), f.id in self.revealed))
            if about:
                answer.fact(about[0])
            elif not ORGANS[organ].symptoms and not answer.event:
                answer.deny(f"No, I've never had any problems with my {ORGANS[organ].noun}.", [])

    def _withheld_keys(self) -> frozenset[str]:
        withheld = self.case.persona.withheld
        return frozenset(k for f in self._index.facts if f.id in withheld for k in self._index.said[f.id])

    def _best(self, q: QuestionTopics, symptoms: frozenset[str], need_type: bool = False, only_type: str | None = None,
              named: str = "") -> Fact | None:
        """The fact that best answers ``q`` about ``symptoms`` (or about its question types when empty, or about
        ``only_type``): a fact tagged with the ``named`` symptom first, then one tagged with a symptom it covers, then
        one whose words affirm it; words the question shares with a fact break ties between facts on the same topics.

        ``need_type``: the fact must also answer one of the question's types (used when the symptom was implied).
        """
        best, best_score = None, 0.0
        withheld = set(self.case.persona.withheld)
        types = frozenset({only_type}) if only_type else q.question_types
        near_types = types | {_NEAR_TYPES[t] for t in types if t in _NEAR_TYPES}
        stems = frozenset(content_stems(" ".join(q.words)))
        for i, f in enumerate(self._index.facts):
            if f.id in withheld and not (set(f.symptoms) & q.explicit_symptoms):
                continue
            said = bool(symptoms & self._index.said[f.id])
            tagged = bool(symptoms.intersection(f.topics))
            exact = named in f.topics or (named == "<implicit>" and tagged)
            typ = (len(types.intersection(f.topics)) + 0.5 * len((types & self._index.said[f.id]).difference(f.topics))
                   + 0.5 * len((near_types - types).intersection(f.topics)))  # "when did it start?": "for two days"
            if (symptoms and not said) or ((need_type or not symptoms) and types and not typ) or (not symptoms and not typ):
                continue
            bonus = min(MAX_WORD_BONUS, WORD_BONUS * len(stems & self._index.stems[f.id]))
            home = 0.5 if only_type is not None and f.category == _HOME_CATEGORY.get(only_type) else 0.0  # the medication list
            broad = 0.5 if len(symptoms) > 1 and f.present else 0.0  # "any bowel problems?": what the patient has first
            # a present fact that affirms the very symptom asked beats a pertinent negative about a narrower one
            affirms = 1.5 if f.present and named in self._index.said[f.id] else 0.0
            score = (2.0 * exact + tagged + said + typ + bonus + broad + home + affirms - 0.01 * len(f.topics)
                     + (0.3 if f.id not in self.revealed else 0.0) - 0.0001 * i)
            if score > best_score:
                best, best_score = f, score
        return best

    def _retrieve(self, q: QuestionTopics, question: str) -> PatientReply:
        """A fact that shares the question's words (their stems, and the events they name in any wording). A yes/no
        question about an event is answered only by a fact that names the same event ("Have you been incontinent?" /
        "I wet myself during it") or holds most of its words ("a blood transfusion?" is not answered by "no blood
        in my vomit"); when no recorded fact does, it gets the plausible negative. Any other question gets the best
        match, else the refusal. A withheld fact found this way is held back, never denied."""
        idx = self._index
        event = bool(_EVENT_QUESTION.search(question))
        tokens = index_tokens(question)
        scores = idx.bm25.get_scores(tokens) if tokens and idx.bm25 is not None else None
        if event:
            asked, named = frozenset(content_stems(question)), concepts(question)
            found = [i for i, f in enumerate(idx.facts) if named & idx.events[f.id] or _covers(asked, idx.stems[f.id])]
            if not found:
                return PatientReply(NO_EVENT[self.unknown_answer], "denied")
            i = max(found, key=lambda i: (scores[i] if scores is not None else 0.0, -i))
        elif scores is not None and len(scores) and scores.max() >= BM25_MIN_SCORE:
            i = int(np.argmax(scores))
        else:
            return PatientReply(REFUSE, "refused")
        fact = idx.facts[i]
        if fact.id in self.case.persona.withheld:  # held back, never denied ("Did you wet yourself?")
            return PatientReply(HOLD_BACK, "denied")
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
