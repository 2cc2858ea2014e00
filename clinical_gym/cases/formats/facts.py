"""History facts from imported free text, tagged with the topic vocabulary (``clinical_gym.cases.topic_match``).

Each sentence becomes one fact, cut where it switches between stating and denying: "Fever for two days, no
cough" gives a present fever fact and a pertinent negative about cough (``present=False``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from clinical_gym.cases.formats.text import clauses, is_instruction, is_placeholder, patient_voice, sentences
from clinical_gym.cases.schema import Fact, FactCategory
from clinical_gym.cases.topic_match import affirmed_symptoms, compile_fragments, find_topics
from clinical_gym.cases.topics import SYMPTOMS

# The topic a fact of each category answers when its text names none (and always, for background categories).
CATEGORY_TOPIC: dict[str, str] = {
    "hpi": "associated", "ros": "associated", "past_history": "past_history", "surgical_history": "surgical_history",
    "medications": "medications", "allergies": "allergies", "social": "living_situation", "family": "family_history",
    "gynecologic": "menstrual_history",
}
_SYMPTOM_CATEGORIES = frozenset({"hpi", "ros"})  # only these carry symptom topics ("no abdominal surgery" is not about pain)
_HPI_TYPES = frozenset({"onset", "duration", "location", "character", "severity", "radiation", "timing", "aggravating", "relieving", "course"})
_ID_PREFIX = {"hpi": "hpi", "ros": "ros", "past_history": "pmh", "surgical_history": "psh", "medications": "med", "allergies": "allergy",
              "social": "social", "family": "family", "gynecologic": "gyn"}
MIN_FACT_CHARS = 3
# A statement of how long or since when ("for 2 days", "over the past month", "since yesterday", "3 hours ago").
_STATES_DURATION = re.compile(r"(?i)\b(?:for|over|during)\s+(?:the\s+)?(?:past\s+|last\s+|previous\s+)?(?:\d+|an?|one|two|three|four|five|six|"
                              r"seven|eight|nine|ten|several|a\s+few|few|many)?\s*(?:minute|hour|day|week|month|year)s?\b")
_STATES_ONSET = re.compile(r"(?i)\b(?:since\s+(?:yesterday|last|this|the|\w+day|\d)|\d+\s+(?:minute|hour|day|week|month|year)s?\s+ago|"
                           r"(?:began|started|came\s+on)\b)")


@lru_cache(maxsize=None)
def _symptom_pattern(key: str) -> re.Pattern[str]:
    return compile_fragments(SYMPTOMS[key])


def _symptoms_in_order(text: str, symptoms: frozenset[str]) -> list[str]:
    """Symptoms in the order the text names them (the first is what the fact is about)."""
    lowered = text.lower()

    def position(key: str) -> int:
        m = _symptom_pattern(key).search(lowered)
        return m.start() if m else len(lowered)

    return sorted(symptoms, key=lambda k: (position(k), k))


def names_topics(text: str) -> bool:
    """Whether ``text`` names any question type or symptom of the vocabulary."""
    found = find_topics(text)
    return bool(found.question_types or found.explicit_symptoms)


def tag(text: str, category: FactCategory, context_symptom: str | None = None, extra: str = "", present: bool = True) -> tuple[str, ...]:
    """Topics a fact answers: the question types and symptoms its text (and ``extra``, e.g. the question it answered)
    names; a symptom counts in the text only where it is named as a complaint, not by a body part or function alone
    (``topic_match.affirmed_symptoms``). History and ROS facts carry symptoms; an HPI statement about an attribute of the complaint (onset,
    severity, ...) that names no symptom carries ``context_symptom``. Background facts carry no symptoms: family
    facts only 'family_history', social facts what they name (else 'living_situation'), the others their
    category's topic plus what they name."""
    found = find_topics(text)
    asked = find_topics(extra) if extra else None
    types = set(found.question_types) | (set(asked.question_types) if asked else set())
    if category in _SYMPTOM_CATEGORIES:  # "Fever for 2 days." answers "how long?" and "since yesterday" "when?"
        types |= {"duration"} if _STATES_DURATION.search(text) else set()
        types |= {"onset"} if _STATES_ONSET.search(text) else set()
        types.discard("family_history")  # "Her family noticed she is breathing fast" is no family history
    own = CATEGORY_TOPIC[category]
    if category == "family":
        return (own,)
    if category == "social":
        return tuple(sorted(types)) or (own,)
    if category not in _SYMPTOM_CATEGORIES:
        return (own, *sorted(types - {own}))
    symptoms = _symptoms_in_order(text, affirmed_symptoms(text, denial=not present))  # "deep breathing" is not breathlessness
    if asked:
        symptoms += [s for s in _symptoms_in_order(extra, asked.explicit_symptoms) if s not in symptoms]
    if not symptoms and context_symptom and category == "hpi" and types & _HPI_TYPES:
        symptoms = [context_symptom]
    if not types and not symptoms:
        types.add(own)
    return (*sorted(types), *symptoms)


# Question types that make a statement background history, in the order they are checked.
_TYPE_CATEGORY: tuple[tuple[str, FactCategory], ...] = (
    ("family_history", "family"), ("allergies", "allergies"), ("medications", "medications"), ("surgical_history", "surgical_history"),
    ("past_history", "past_history"), ("menstrual_history", "gynecologic"), ("smoking", "social"), ("alcohol", "social"),
    ("substance_use", "social"), ("occupation", "social"), ("living_situation", "social"), ("travel", "social"),
    ("sexual_history", "social"),
)


def category_for(*texts: str) -> FactCategory:
    """The history category a statement (with the question it answered) belongs to, from the question types they
    name; 'hpi' when they name none of the background ones."""
    types = frozenset().union(*(find_topics(t).question_types for t in texts if t))
    return next((category for topic, category in _TYPE_CATEGORY if topic in types), "hpi")


@dataclass
class FactBuilder:
    """Collects the facts of one imported case, numbering their ids per category (hpi_1, pmh_1, ...)."""

    facts: list[Fact] = field(default_factory=list)
    chief_symptom: str | None = None
    _counts: dict[str, int] = field(default_factory=dict)

    def add(self, text: str, category: FactCategory, *, present: bool = True, asked: str = "") -> Fact | None:
        """One fact, as given (no sentence splitting); None when the text is too short to be a fact, a placeholder
        ("Not provided.") or an instruction to the examiner ("The doctor should inquire about ...")."""
        text = text.strip()
        if len(text) < MIN_FACT_CHARS or is_placeholder(text) or is_instruction(text):
            return None
        topics = tag(text, category, self.chief_symptom if present else None, asked, present)
        n = self._counts[category] = self._counts.get(category, 0) + 1
        fact = Fact(id=f"{_ID_PREFIX[category]}_{n}", category=category, text=text, topics=topics, present=present)
        if self.chief_symptom is None and present and fact.symptoms:
            self.chief_symptom = fact.symptoms[0]
        self.facts.append(fact)
        return fact

    def add_text(self, text: str, category: FactCategory) -> list[Fact]:
        """Facts from free text: one per sentence, cut where it switches between stating and denying; denied
        symptoms of an HPI text become ROS pertinent negatives."""
        added = []
        for sentence in sentences(text):
            for clause, negative in clauses(sentence, standalone=lambda c: names_topics(patient_voice(c))):
                cat: FactCategory = "ros" if negative and category == "hpi" else category
                fact = self.add(patient_voice(clause), cat, present=not negative)
                if fact:
                    added.append(fact)
        return added

    def add_items(self, items: list[str], category: FactCategory) -> list[Fact]:
        """Facts from list items (one or more sentences each)."""
        return [f for item in items for f in self.add_text(item, category)]
