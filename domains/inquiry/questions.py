"""Reading a doctor's question: which topics it asks about, and whether it is a question a patient can answer.

``analyze_question`` maps a question onto the topic vocabulary (``clinical_gym.cases.topic_match``) and flags
the questions a rule-based patient must not answer from facts: requests for the diagnosis, prompt injection, and questions about things a patient would not know (lab values, scan results).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from clinical_gym.cases.lexicon import ORGANS, concepts, organs_asked
from clinical_gym.cases.topic_match import compile_fragments as _compile
from clinical_gym.cases.topic_match import find_topics
from clinical_gym.cases.topics import BROADER, BROADER_TYPES

_DIAGNOSIS_REQUEST = _compile([
    r"what (?:do|did|does) (?:i|you|he|she) have", r"what do you think (?:i|you) (?:might |could |may )?have", r"what(?:'s| is) (?:wrong|the matter) with (?:me|you)", r"(?:your|my|the) diagnos[ie]s",
    r"what (?:disease|condition|illness|diagnosis)", r"what(?:'s| is) causing (?:this|it)", r"(?:tell|give|show|reveal|print|say|name) (?:me )?(?:your|the) (?:diagnos\w+|condition|disease|answer)",
    r"(?:told|know) what (?:this|it) is", r"do you know what (?:it|this) is", r"what (?:do you think )?(?:it|this) (?:is|could be)",
    r"is it (?:an? )?\w+(?:itis|oma|osis|emia|pathy|ism|ia)", r"could (?:it|this) be", r"do you think (?:it|this) (?:is|could be)",
])
_INJECTION = _compile([
    r"ignore (?:all |any |your |the )?(?:previous |prior |above )?(?:instructions?|rules|prompts?)", r"system prompt", r"developer mode",
    r"you are (?:now|no longer)", r"pretend (?:to be|you are)", r"disregard", r"jailbreak", r"case (?:file|record|json)",
    r"hidden (?:profile|information|answer)", r"ground truth", r"reveal (?:your|the) (?:instructions|answer|secret)", r"icd",
    r"as an ai", r"override",
])
# Things only a clinician or a machine would know: the patient says they do not know.
_UNKNOWABLE = _compile([
    r"(?:level|count|value|reading|saturation)s? (?:of|is|was|are)", r"(?:what|how high|how low) (?:is|was|are|were) (?:your|the) \w+ (?:level|count)s?",
    r"creatinine", r"h(?:a)?emoglobin", r"potassium", r"sodium", r"white (?:blood )?cell", r"platelets?", r"troponin", r"lipase", r"ejection fraction",
    r"inr", r"crp", r"esr", r"hba1c", r"tsh", r"bilirubin", r"(?:blood|lab|urine) (?:test|work) results?", r"test results?", r"results? of",
    r"x-?ray (?:show|result)", r"(?:ct|mri|scan|ultrasound) (?:show|result)\w*", r"ecg (?:show|result)\w*", r"biopsy",
    r"(?:blood pressure|heart rate|pulse|oxygen) (?:is|was|reading)", r"what is your (?:blood pressure|heart rate|pulse|oxygen)",
])
_STOPWORDS = frozenset(
    "a an the and or but if of to in on at for with about from by as is are was were be been being do does did have has had "
    "you your yours i me my we our it its this that these those any anything some there what when where which who how why "
    "can could would should will shall may might must please tell describe ever currently recently now still also just".split()
)
_WORD = re.compile(r"[a-z0-9]+")
HPI_TYPES = frozenset({"onset", "duration", "location", "character", "severity", "radiation", "timing", "aggravating", "relieving", "course"})


@dataclass(frozen=True)
class QuestionTopics:
    """What a question asks. ``explicit_symptoms`` were named outright (not inferred from "pain" or a broad term);
    ``implied_types`` are the history topics an umbrella word stands for ("lifestyle": work, smoking, ...), also
    in ``question_types``. ``organs`` are those of a "<organ> problems" question ("any bowel problems?": past
    history about the bowels, and the bowel symptoms, which are in ``explicit_symptoms``; see
    ``clinical_gym.cases.lexicon.ORGANS``). ``events`` are the events it names in any wording ("Have you been
    incontinent?": incontinence; ``lexicon.EVENT_TERMS``)."""

    question_types: frozenset[str]
    explicit_symptoms: frozenset[str]
    symptoms: frozenset[str]
    generic_pain: bool
    diagnosis_request: bool
    injection: bool
    unknowable: bool
    words: tuple[str, ...]
    implied_types: frozenset[str] = frozenset()
    organs: tuple[str, ...] = ()
    events: frozenset[str] = frozenset()


@lru_cache(maxsize=8192)
def analyze_question(question: str) -> QuestionTopics:
    """Topics and flags of a doctor's question (cached: the same question costs one lookup)."""
    text = question.lower().replace("’", "'")
    t = find_topics(question)
    umbrellas = t.question_types & set(BROADER_TYPES)
    implied = frozenset(k for u in umbrellas for k in BROADER_TYPES[u]) - t.question_types
    organs = organs_asked(text)
    organ_symptoms = frozenset(s for o in organs for s in ORGANS[o].symptoms)
    return QuestionTopics(
        question_types=(t.question_types - umbrellas) | implied,
        implied_types=implied,
        explicit_symptoms=t.explicit_symptoms | organ_symptoms,
        symptoms=t.symptoms | organ_symptoms | frozenset(n for s in organ_symptoms for n in BROADER.get(s, ())),
        organs=organs,
        events=concepts(text),
        generic_pain=t.generic_pain,
        diagnosis_request=bool(_DIAGNOSIS_REQUEST.search(text)),
        injection=bool(_INJECTION.search(text)),
        unknowable=bool(_UNKNOWABLE.search(text)),
        words=content_words(text),
    )


def content_words(text: str) -> tuple[str, ...]:
    """Lower-case words minus stopwords, for BM25, word overlap and repetition keys."""
    return tuple(w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOPWORDS)
