"""Coherence of the final answer with what the agent gathered: rule checks, each applicable or not to an episode.

Checks (the score is passed / applicable; with no answer it is 0):

* ``clear_conclusion`` (always): a multiple-choice answer names exactly one option; an open answer has words and,
  with its reasoning, at least 10 characters.
* ``data_reviewed`` (tasks about a patient): patient data was reviewed by a successful call before the answer.
* ``agrees_with_recorded_diagnosis`` (a diagnosis was recorded and the answer names no drug): the answer and the
  last recorded diagnosis share their main words (ROUGE-1 F1 >= 0.5, or one contains the other).
* ``no_allergen_recommended`` (allergies were reviewed and the answer names a drug outside a negated clause): no
  recommended drug belongs to the allergy group of a documented allergen.
* ``lab_statements_match`` (labs were reviewed and the answer characterises a lab, e.g. "raised troponin",
  "troponin was high", "hyperkalaemia", "normal sodium"): each statement agrees with the lab's flag against its
  reference range.
* ``vital_statements_match`` (vitals were reviewed and the answer uses a vital-sign term: fever/afebrile,
  hypotension, tachycardia/bradycardia, hypoxia, tachypnoea): each term agrees with the latest vital signs
  (fever >= 38.0 °C, hypotension SBP < 90 mmHg, tachycardia HR > 100/min, bradycardia HR < 60/min,
  hypoxia SpO2 < 94%, tachypnoea RR > 20/min).

Terms inside a negated clause ("no fever", "avoid amoxicillin") are not read as statements.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from clinical_gym.cases.schema import normalize
from clinical_gym.pharmacology import Drug, allergy_conflict, drugs_mentioned
from clinical_gym.rewards.episode import EpisodeRecord, PatientFacts
from clinical_gym.rewards.overlap import rouge1_f1
from clinical_gym.tool_env.tasks import normalized
from clinical_gym.tools.trusted import trusted

Direction = Literal["high", "low", "normal"]

NEGATION_CUES = frozenset("no not avoid avoided avoiding without instead rather contraindicated contraindicates "
                          "allergic allergy allergies except exclude excluded excludes unsafe inappropriate stop "
                          "stopped withhold withheld discontinue discontinued never denies nor".split())
_CLAUSE = re.compile(r"[.;:\n!?]|\bbut\b|\bhowever\b")

LAB_NAMES: dict[str, tuple[str, ...]] = {
    "potassium": ("potassium",), "sodium": ("sodium",), "glucose": ("glucose", "blood sugar"),
    "haemoglobin": ("haemoglobin", "hemoglobin", "hb"), "platelets": ("platelets", "platelet count"),
    "wbc": ("white cell count", "white blood cells", "wcc", "wbc"), "crp": ("crp", "c reactive protein"),
    "troponin": ("troponin",), "creatinine": ("creatinine",), "egfr": ("egfr",), "inr": ("inr",),
    "lactate": ("lactate",), "calcium": ("calcium",), "tsh": ("tsh",), "lipase": ("lipase",),
    "d_dimer": ("d dimer",), "bilirubin": ("bilirubin",), "alt": ("alt",), "ferritin": ("ferritin",),
}
LAB_CONDITIONS: dict[str, tuple[str, Direction]] = {
    "hyperkalaemia": ("potassium", "high"), "hyperkalemia": ("potassium", "high"),
    "hypokalaemia": ("potassium", "low"), "hypokalemia": ("potassium", "low"),
    "hypernatraemia": ("sodium", "high"), "hypernatremia": ("sodium", "high"),
    "hyponatraemia": ("sodium", "low"), "hyponatremia": ("sodium", "low"),
    "hyperglycaemia": ("glucose", "high"), "hyperglycemia": ("glucose", "high"),
    "hypoglycaemia": ("glucose", "low"), "hypoglycemia": ("glucose", "low"),
    "anaemia": ("haemoglobin", "low"), "anemia": ("haemoglobin", "low"),
    "thrombocytopenia": ("platelets", "low"), "leukocytosis": ("wbc", "high"), "leucocytosis": ("wbc", "high"),
    "hypercalcaemia": ("calcium", "high"), "hypercalcemia": ("calcium", "high"),
    "hypocalcaemia": ("calcium", "low"), "hypocalcemia": ("calcium", "low"),
}
DIRECTION_WORDS: dict[str, Direction] = {
    "raised": "high", "elevated": "high", "high": "high", "increased": "high", "rising": "high",
    "low": "low", "reduced": "low", "decreased": "low", "depleted": "low",
    "normal": "normal", "unremarkable": "normal",
}
LINKING_WORDS = frozenset({"is", "was", "are", "were", "level", "levels"})
VITAL_TERMS: dict[str, Callable[[dict[str, float]], bool | None]] = {
    "fever": lambda v: _vital(v, "temperature_c", lambda t: t >= 38.0),
    "febrile": lambda v: _vital(v, "temperature_c", lambda t: t >= 38.0),
    "pyrexia": lambda v: _vital(v, "temperature_c", lambda t: t >= 38.0),
    "afebrile": lambda v: _vital(v, "temperature_c", lambda t: t < 38.0),
    "apyrexial": lambda v: _vital(v, "temperature_c", lambda t: t < 38.0),
    "hypotension": lambda v: _vital(v, "systolic_bp", lambda s: s < 90),
    "hypotensive": lambda v: _vital(v, "systolic_bp", lambda s: s < 90),
    "tachycardia": lambda v: _vital(v, "heart_rate", lambda h: h > 100),
    "tachycardic": lambda v: _vital(v, "heart_rate", lambda h: h > 100),
    "bradycardia": lambda v: _vital(v, "heart_rate", lambda h: h < 60),
    "bradycardic": lambda v: _vital(v, "heart_rate", lambda h: h < 60),
    "hypoxia": lambda v: _vital(v, "spo2", lambda s: s < 94),
    "hypoxic": lambda v: _vital(v, "spo2", lambda s: s < 94),
    "hypoxaemia": lambda v: _vital(v, "spo2", lambda s: s < 94),
    "hypoxemia": lambda v: _vital(v, "spo2", lambda s: s < 94),
    "tachypnoea": lambda v: _vital(v, "respiratory_rate", lambda r: r > 20),
    "tachypnea": lambda v: _vital(v, "respiratory_rate", lambda r: r > 20),
}


def _vital(vitals: dict[str, float], key: str, test: Callable[[float], bool]) -> bool | None:
    return test(vitals[key]) if key in vitals else None


@lru_cache(maxsize=4096)
def _vital_words(text: str) -> tuple[str, ...]:
    """The vital-sign terms (``VITAL_TERMS``) of ``text``'s affirmed clauses, in order."""
    return tuple(w for clause in affirmed_clauses(text) for w in clause.split() if w in VITAL_TERMS)


class CoherenceResult(BaseModel):
    """The coherence score and each check's outcome (None: not applicable to this episode)."""

    model_config = ConfigDict(frozen=True)

    score: float
    checks: dict[str, bool | None]


@lru_cache(maxsize=4096)
def affirmed_clauses(text: str) -> tuple[str, ...]:
    """The normalised clauses of ``text`` that carry no negation cue."""
    clauses = (normalize(c) for c in _CLAUSE.split(text.lower()))
    return tuple(c for c in clauses if c and not NEGATION_CUES & set(c.split()))


@lru_cache(maxsize=4096)
def recommended_drugs(text: str) -> tuple[Drug, ...]:
    """Drugs named in ``text`` outside negated clauses ("avoid amoxicillin" does not recommend amoxicillin)."""
    found: dict[str, Drug] = {}
    for clause in affirmed_clauses(text):
        for drug in drugs_mentioned(clause):
            found.setdefault(drug.name, drug)
    return tuple(found.values())


def answer_text(record: EpisodeRecord) -> str:
    """The submitted answer, with a multiple-choice letter replaced by its option text."""
    if record.answer is None:
        return ""
    options = record.task.options
    letter = chosen_option(record.answer.answer, options) if options else None
    return options[letter] if options and letter else record.answer.answer


def chosen_option(answer: str, options: dict[str, str]) -> str | None:
    """The single option letter an answer names ("B", "(B)", "B. text", "option B", or an option's exact text)."""
    text = answer.strip()
    wanted = normalized(text)
    by_text = [k for k, v in options.items() if normalized(v) == wanted]
    if by_text:
        return by_text[0]
    leading = re.match(r"\(?([A-Z])(?:[.):]|$)", text)  # "B." "(B)" "B:" "B": the answer format itself
    if leading and leading.group(1) in options:
        return leading.group(1)
    letters = {m.group(1) for m in re.finditer(r"(?<![\w-])([A-Z])(?![\w-])", text) if m.group(1) in options}
    return letters.pop() if len(letters) == 1 else None


def score_coherence(record: EpisodeRecord) -> CoherenceResult:
    """The coherence checks of one episode (see the module docstring)."""
    if record.answer is None:
        return CoherenceResult(score=0.0, checks={"clear_conclusion": False})
    checks: dict[str, bool | None] = {
        "clear_conclusion": _clear_conclusion(record),
        "data_reviewed": _data_reviewed(record),
        "agrees_with_recorded_diagnosis": _agrees_with_diagnosis(record),
        "no_allergen_recommended": _no_allergen(record),
        "lab_statements_match": _labs_match(record),
        "vital_statements_match": _vitals_match(record),
    }
    applicable = [v for v in checks.values() if v is not None]
    # the score a float, the checks a new dict of bool/None (clinical_gym.tools.trusted)
    return trusted(CoherenceResult, score=sum(applicable) / len(applicable), checks=checks)


def _clear_conclusion(record: EpisodeRecord) -> bool:
    answer = record.answer
    assert answer is not None
    if record.task.options:
        return chosen_option(answer.answer, record.task.options) is not None
    return bool(normalized(answer.answer)) and len(answer.text) >= 10


def _data_reviewed(record: EpisodeRecord) -> bool | None:
    if record.patient is None:
        return None
    first = record.call_summary.first_any_review  # first_review(*REVIEW_CATEGORIES)
    return first is not None and record.answer is not None and first < record.answer.call_index


def _agrees_with_diagnosis(record: EpisodeRecord) -> bool | None:
    if not record.actions.diagnoses:
        return None
    text = answer_text(record)
    if drugs_mentioned(text):
        return None
    recorded = record.actions.diagnoses[-1].text
    a, b = normalize(text), normalize(recorded)
    return rouge1_f1(text, recorded) >= 0.5 or f" {a} " in f" {b} " or f" {b} " in f" {a} "


def _no_allergen(record: EpisodeRecord) -> bool | None:
    patient = record.patient
    if patient is None or not patient.allergies or record.first_review("allergies") is None:
        return None
    drugs = recommended_drugs(answer_text(record))
    if not drugs:
        return None
    return not any(allergy_conflict(a.substance, d) == "same" for a in patient.allergies for d in drugs)


def _lab_name_index() -> dict[str, list[tuple[str, list[str]]]]:
    index: dict[str, list[tuple[str, list[str]]]] = {}
    for key, names in LAB_NAMES.items():
        for name in names:
            words = name.split()
            index.setdefault(words[0], []).append((key, words))
    return index


_LAB_NAME_INDEX = _lab_name_index()


def lab_statements(text: str) -> list[tuple[str, Direction]]:
    """(lab key, direction) for each lab the text characterises outside negated clauses."""
    return list(_lab_statements(text))


@lru_cache(maxsize=4096)
def _lab_statements(text: str) -> tuple[tuple[str, Direction], ...]:
    found: list[tuple[str, Direction]] = []
    for clause in affirmed_clauses(text):
        words = clause.split()
        for i, word in enumerate(words):
            if word in LAB_CONDITIONS:
                found.append(LAB_CONDITIONS[word])
                continue
            for key, name in _LAB_NAME_INDEX.get(word, ()):
                n = len(name)
                if words[i:i + n] != name:
                    continue
                before = words[i - 1] if i > 0 else ""
                after = words[i + n: i + n + 2]
                if after and after[0] in LINKING_WORDS:
                    after = after[1:]
                direction = DIRECTION_WORDS.get(before) or (DIRECTION_WORDS.get(after[0]) if after else None)
                if direction:
                    found.append((key, direction))
    return tuple(found)


def _labs_match(record: EpisodeRecord) -> bool | None:
    patient = record.patient
    if patient is None or record.first_review("labs") is None:
        return None
    statements = [(k, d) for k, d in _lab_statements(answer_text(record) + "\n" + record.answer.reasoning)
                  if k in patient.lab_flags] if record.answer else []
    if not statements:
        return None
    return all(patient.lab_flags[k] == d for k, d in statements)


def _vitals_match(record: EpisodeRecord) -> bool | None:
    patient: PatientFacts | None = record.patient
    if patient is None or record.first_review("vitals") is None or record.answer is None:
        return None
    verdicts = [VITAL_TERMS[w](patient.vitals) for w in _vital_words(record.answer.text)]
    known = [v for v in verdicts if v is not None]
    return all(known) if known else None
