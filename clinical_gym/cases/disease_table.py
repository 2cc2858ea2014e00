"""The disease knowledge table: how each common condition presents, for generating unlimited varied patients.

One ``Disease`` per condition, written for this project: demographics, symptoms with approximate frequencies
and first-person phrasings per question type, risk factors, exam findings, lab/micro/imaging abnormalities
with typical values, differential, first-line management and ICD-10-CM code. The generator
(``clinical_gym.cases.generator``) samples cases from it; the DiagnosticWorkup world model uses its lab
shifts to synthesise results the case does not record. Data: ``clinical_gym/data/diseases/*.json``.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from clinical_gym.cases.schema import Diagnosis, ExamSystem, FactCategory, Specialty, TestCategory
from clinical_gym.cases.topics import QUESTION_TYPES, SYMPTOMS

HPI_TYPES = ("onset", "duration", "location", "character", "severity", "radiation", "timing", "aggravating", "relieving", "course")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SymptomPattern(_Model):
    """A symptom of the disease: how often it occurs and how a patient describes it.

    ``phrasings``: first-person lay sentences saying the patient has it (the generator picks one).
    ``details``: optional extra first-person sentences per HPI question type (onset, location, character, ...),
    each a list of alternatives; the generator turns each chosen one into its own fact.
    """

    symptom: str
    frequency: float = Field(gt=0, le=1)
    phrasings: tuple[str, ...] = Field(min_length=2)
    details: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    @field_validator("symptom")
    @classmethod
    def _known_symptom(cls, v: str) -> str:
        if v not in SYMPTOMS:
            raise ValueError(f"unknown symptom key {v!r}; use keys of clinical_gym.cases.topics.SYMPTOMS")
        return v

    @field_validator("details")
    @classmethod
    def _hpi_types(cls, v: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        bad = [k for k in v if k not in HPI_TYPES]
        if bad:
            raise ValueError(f"details keys must be HPI question types {HPI_TYPES}, got {bad}")
        return v


class HistoryItem(_Model):
    """A risk factor or background item, as first-person alternatives, with how often it is present."""

    category: FactCategory
    topic: str
    frequency: float = Field(gt=0, le=1)
    phrasings: tuple[str, ...] = Field(min_length=1)

    @field_validator("topic")
    @classmethod
    def _known_topic(cls, v: str) -> str:
        if v not in QUESTION_TYPES:
            raise ValueError(f"unknown question-type topic {v!r}; use keys of clinical_gym.cases.topics.QUESTION_TYPES")
        return v


class ExamFinding(_Model):
    system: ExamSystem
    text: str
    frequency: float = Field(gt=0, le=1)


class LabShift(_Model):
    """A lab component the disease moves: reference range, and the range its values typically fall in."""

    test: str  # panel or test name, e.g. "Complete Blood Count"
    component: str  # e.g. "White Blood Cells"
    unit: str
    ref_low: float
    ref_high: float
    typical_low: float
    typical_high: float
    frequency: float = Field(default=1.0, gt=0, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> "LabShift":
        if self.ref_low > self.ref_high or self.typical_low > self.typical_high:
            raise ValueError(f"{self.component}: ranges must be low <= high")
        return self


class TextResult(_Model):
    """A microbiology, imaging, ECG or bedside result described as findings (never naming the diagnosis)."""

    test: str
    category: TestCategory
    text: str
    frequency: float = Field(default=1.0, gt=0, le=1)


class VitalsRange(_Model):
    temperature_c: tuple[float, float] = (36.4, 37.2)
    heart_rate: tuple[int, int] = (62, 90)
    respiratory_rate: tuple[int, int] = (12, 18)
    systolic_bp: tuple[int, int] = (110, 135)
    diastolic_bp: tuple[int, int] = (65, 85)
    spo2: tuple[int, int] = (96, 99)


class Disease(_Model):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    name: str
    icd10: str
    synonyms: tuple[str, ...] = ()
    specialty: Specialty
    age_range: tuple[int, int]
    male_fraction: float = Field(ge=0, le=1)
    onset: Literal["sudden", "acute", "subacute", "chronic", "episodic"]
    chief_complaint: str  # clinical phrase, e.g. "right lower quadrant abdominal pain"
    chief_symptom: str  # symptom key every generated patient has
    self_reports: tuple[str, ...] = Field(min_length=2)  # first-person opening lines, no diagnosis
    symptoms: tuple[SymptomPattern, ...] = Field(min_length=3)
    history: tuple[HistoryItem, ...] = ()
    exam_findings: tuple[ExamFinding, ...] = Field(min_length=1)
    vitals: VitalsRange = VitalsRange()
    labs: tuple[LabShift, ...] = ()
    results: tuple[TextResult, ...] = ()
    key_exams: tuple[str, ...] = Field(min_length=1)
    differential: tuple[str, ...] = Field(min_length=2)
    management: str

    @model_validator(mode="after")
    def _consistent(self) -> "Disease":
        if self.chief_symptom not in {s.symptom for s in self.symptoms}:
            raise ValueError(f"{self.id}: chief_symptom {self.chief_symptom!r} must be one of its symptoms")
        if self.age_range[0] > self.age_range[1]:
            raise ValueError(f"{self.id}: age_range must be (low, high)")
        tests = {lab.test for lab in self.labs} | {r.test for r in self.results}
        missing = [k for k in self.key_exams if k not in tests]
        if missing:
            raise ValueError(f"{self.id}: key_exams {missing} must be tests in labs or results")
        if len(tests) < 3:
            raise ValueError(f"{self.id}: needs at least 3 distinct tests across labs and results")
        return self


def _data_files() -> list[Path]:
    root = resources.files("clinical_gym") / "data" / "diseases"
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".json")) if root.is_dir() else []


@lru_cache(maxsize=1)
def disease_table() -> tuple[Disease, ...]:
    """Every disease in the bundled table (validated once)."""
    import json

    diseases: list[Disease] = []
    for f in _data_files():
        diseases.extend(Disease.model_validate(d) for d in json.loads(f.read_text(encoding="utf-8")))
    ids = [d.id for d in diseases]
    if len(ids) != len(set(ids)):
        raise ValueError("disease table has duplicate ids")
    return tuple(diseases)


def find_disease(name_or_icd10: str) -> Disease | None:
    """The table entry for a diagnosis name, synonym or ICD-10 code (case-insensitive), or None."""
    from clinical_gym.cases.schema import normalize

    key = normalize(name_or_icd10)
    code = name_or_icd10.replace(".", "").upper()
    for d in disease_table():
        if d.icd10.replace(".", "").upper() == code or key in {normalize(d.name), *(normalize(s) for s in d.synonyms)}:
            return d
    return None


@lru_cache(maxsize=4096)
def disease_for(diagnosis: Diagnosis) -> Disease | None:
    """The table entry for a case's diagnosis: by ICD-10 code, name or synonym, else the first entry whose name the
    reward's diagnosis matching accepts for it (synonyms, word overlap, the same ICD-10-CM category), else None."""
    found = find_disease(diagnosis.icd10) or find_disease(diagnosis.name)
    if found is not None:
        return found
    for synonym in diagnosis.synonyms:
        if (found := find_disease(synonym)) is not None:
            return found
    from clinical_gym.rewards.diagnosis_match import match_diagnosis

    return next((d for d in disease_table() if match_diagnosis(d.name, diagnosis).outcome == "correct"), None)
