"""The patient case schema shared by every environment family.

A ``Case`` holds everything an environment may reveal about a patient (history facts, physical exam, test
results) and the hidden ground truth (diagnosis, differential, recommendation). Validation enforces the
library's quality rules and the leakage rule: no patient-facing text may name the diagnosis.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from clinical_gym.cases.topics import ALL_TOPICS, SYMPTOMS

SPECIALTIES = (
    "digestive", "respiratory", "infectious", "genitourinary", "neurological", "circulatory", "endocrine", "skin",
    "musculoskeletal", "mental_health", "hematologic", "obstetric_gynecologic", "ent", "ophthalmologic", "pediatric", "renal",
)
Specialty = Literal[
    "digestive", "respiratory", "infectious", "genitourinary", "neurological", "circulatory", "endocrine", "skin",
    "musculoskeletal", "mental_health", "hematologic", "obstetric_gynecologic", "ent", "ophthalmologic", "pediatric", "renal",
]
FactCategory = Literal["hpi", "ros", "past_history", "surgical_history", "medications", "allergies", "social", "family", "gynecologic"]
TestCategory = Literal["lab", "microbiology", "imaging", "ecg", "bedside", "pathology", "other"]
ExamSystem = Literal[
    "general", "vitals", "heent", "neck", "cardiovascular", "respiratory", "abdominal", "genitourinary", "rectal", "neurological",
    "musculoskeletal", "skin", "extremities", "psychiatric", "breast", "pelvic", "lymphatic", "eye", "ear",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


DAYS_PER_YEAR = 365.25


class Demographics(_Model):
    """Age in whole years and sex; ``age_days`` is the age in days of a patient under one year where the record
    gives it ("a 3-week-old boy"), shown in weeks or months (``age_text``)."""

    age: int = Field(ge=0, le=120)
    sex: Literal["male", "female"]
    age_days: int | None = Field(default=None, ge=0, le=365)

    @model_validator(mode="after")
    def _days_under_one_year(self) -> "Demographics":
        if self.age_days is not None and self.age != 0:
            raise ValueError(f"age_days is for patients under one year; age is {self.age}")
        return self

    @property
    def age_in_days(self) -> int:
        """The age in days (whole years count from their first day)."""
        return self.age_days if self.age_days is not None else round(self.age * DAYS_PER_YEAR)

    def _age_parts(self) -> tuple[int, str] | None:
        if self.age > 0:
            return self.age, "year"
        if self.age_days is None:
            return None
        if self.age_days < 14:
            return self.age_days, "day"
        if self.age_days < 60:
            return self.age_days // 7, "week"
        return max(2, round(self.age_days / 30.44)), "month"

    @property
    def age_text(self) -> str:
        """The age in words: "43 years old", "3 weeks old", "5 months old", "10 days old" ("under 1 year old" when the
        days are unknown)."""
        parts = self._age_parts()
        if parts is None:
            return "under 1 year old"
        n, unit = parts
        return f"{n} {unit}{'' if n == 1 else 's'} old"

    @property
    def age_adjective(self) -> str:
        """The age as an adjective: "43-year-old", "3-week-old", "5-month-old" ("under-1-year-old" when the days are
        unknown)."""
        parts = self._age_parts()
        return "under-1-year-old" if parts is None else f"{parts[0]}-{parts[1]}-old"


class Fact(_Model):
    """One thing the patient can tell, in the patient's own first-person words.

    ``present=False`` marks a pertinent negative ("No, I haven't had a fever."). ``volunteered`` facts are part
    of what the patient says unprompted. ``topics`` are keys of the topic vocabulary (question types and
    symptoms) that this fact answers; the first symptom topic is what the fact is about.
    """

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    category: FactCategory
    text: str = Field(min_length=3)
    topics: tuple[str, ...] = Field(min_length=1)
    present: bool = True
    volunteered: bool = False

    @field_validator("topics")
    @classmethod
    def _known_topics(cls, topics: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [t for t in topics if t not in ALL_TOPICS]
        if unknown:
            raise ValueError(f"unknown topics {unknown}; use keys of clinical_gym.cases.topics")
        return topics

    @property
    def symptoms(self) -> tuple[str, ...]:
        return tuple(t for t in self.topics if t in SYMPTOMS)

    @property
    def question_types(self) -> tuple[str, ...]:
        return tuple(t for t in self.topics if t not in SYMPTOMS)


class LabValue(_Model):
    """One component of a lab result, with its unit and reference range."""

    name: str
    value: float | None = None
    text: str | None = None  # non-numeric results: "positive", "trace"
    unit: str = ""
    ref_low: float | None = None
    ref_high: float | None = None
    flag: Literal["normal", "low", "high", "abnormal", "critical"] = "normal"

    @model_validator(mode="after")
    def _has_value(self) -> "LabValue":
        if self.value is None and not self.text:
            raise ValueError(f"lab value {self.name!r} needs a numeric value or a text result")
        return self


class TestResult(_Model):
    """An examination or test with its result: free text (imaging, ECG) and/or structured values (labs)."""

    name: str
    category: TestCategory
    text: str = ""
    values: tuple[LabValue, ...] = ()

    @model_validator(mode="after")
    def _has_result(self) -> "TestResult":
        if not self.text and not self.values:
            raise ValueError(f"test {self.name!r} needs a text result or values")
        return self


class Vitals(_Model):
    temperature_c: float = Field(ge=30, le=45)
    heart_rate: int = Field(ge=20, le=250)
    respiratory_rate: int = Field(ge=4, le=70)
    systolic_bp: int = Field(ge=40, le=260)
    diastolic_bp: int = Field(ge=20, le=160)
    spo2: int = Field(ge=50, le=100)


class Diagnosis(_Model):
    name: str
    icd10: str = Field(pattern=r"^[A-Z][0-9][0-9A-Z](\.?[0-9A-Z]{1,4})?$")
    synonyms: tuple[str, ...] = ()


class Persona(_Model):
    """How the patient talks and what they hold back.

    ``withheld`` lists fact ids the patient reveals only when asked about that symptom specifically
    (a disclosure rule such as "do not mention vomiting blood until asked"). ``disclosure_rules`` are the
    same rules in words, for LLM patients.
    """

    emotion: Literal["calm", "anxious", "frustrated", "stoic", "embarrassed", "tired", "cheerful"] = "calm"
    language: Literal["plain", "informal", "formal", "terse"] = "plain"
    cognitive: Literal["normal", "forgetful"] = "normal"
    withheld: tuple[str, ...] = ()
    disclosure_rules: tuple[str, ...] = ()


class Rubric(_Model):
    """One physician-written criterion for judging a diagnostic process (DiagBench), with its importance weight.

    DiagBench weights each criterion from 0 (non-informative) to 10 (essential); the weighted rubric score of a
    trajectory is the sum of the points of the criteria it satisfies over the sum of all points. Negative points
    (HealthBench-style penalties for an undesirable step) are allowed down to -10.
    """

    criterion: str = Field(min_length=1)
    points: float = Field(ge=-10, le=10)


class Case(_Model):
    """A patient case: demographics, what the patient can tell, exam, tests, and the hidden ground truth.

    ``images`` are references (URLs or paths) to images that belong to the case (an NEJM image challenge); the
    environments use the text findings, and the reference is kept for multimodal agents. ``rubrics`` are the
    process criteria an imported benchmark case came with (hidden ground truth, like the diagnosis).
    """

    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$")
    specialty: Specialty
    source: str = "clinical-gym library"
    demographics: Demographics
    chief_complaint: str
    self_report: str
    history: tuple[Fact, ...]
    past_history: tuple[str, ...] = ()
    medications: tuple[str, ...] = ()
    allergies: tuple[str, ...] = ()
    social_history: tuple[str, ...] = ()
    family_history: tuple[str, ...] = ()
    vitals: Vitals | None = None
    physical_exam: dict[ExamSystem, str] = Field(default_factory=dict)
    tests: tuple[TestResult, ...] = ()
    images: tuple[str, ...] = ()
    key_exams: tuple[str, ...] = ()
    diagnosis: Diagnosis
    differential: tuple[str, ...] = ()
    recommendation: str = ""
    rubrics: tuple[Rubric, ...] = ()
    persona: Persona = Persona()

    @model_validator(mode="after")
    def _consistent(self) -> "Case":
        ids = [f.id for f in self.history]
        dupes = {i for i in ids if ids.count(i) > 1}
        if dupes:
            raise ValueError(f"duplicate fact ids {sorted(dupes)}")
        missing = [w for w in self.persona.withheld if w not in ids]
        if missing:
            raise ValueError(f"persona withholds unknown fact ids {missing}")
        return self

    def fact(self, fact_id: str) -> Fact:
        for f in self.history:
            if f.id == fact_id:
                return f
        raise KeyError(fact_id)

    def test(self, name: str) -> TestResult | None:
        key = name.strip().lower()
        return next((t for t in self.tests if t.name.lower() == key), None)

    @property
    def patient_texts(self) -> list[str]:
        """Every text the patient simulator may say: these must never name the diagnosis."""
        return [self.chief_complaint, self.self_report, *(f.text for f in self.history)]

    @property
    def opening(self) -> str:
        """The self-report line shown to the doctor at reset (DoctorAgent-RL format)."""
        return f"{self.self_report} ({self.demographics.sex}, {self.demographics.age_text})"


_WORD = re.compile(r"[a-z0-9]+")


def normalize(text: str) -> str:
    """Lower-case word sequence used for diagnosis and leakage matching; accents are folded ("Barré" -> "barre")."""
    if text.isascii():  # nothing to decompose or fold: the same result without the per-character pass (4x faster)
        return " ".join(_WORD.findall(text.lower()))
    folded = unicodedata.normalize("NFKD", text.lower())
    return " ".join(_WORD.findall("".join(c for c in folded if not unicodedata.combining(c))))
