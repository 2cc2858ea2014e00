"""DiagGym / DiagBench-style JSONL (or a JSON object keyed by case id): a patient profile, the chain of exams with
their results, and the diagnosis.

``{"id", "profile": {"sex", "age", "chief_complaint", "hpi", "pmh", "medications", "social_history",
"family_history", "allergies"}, "exam_chain": [{"exam_name", "exam_results"}], "final_diagnosis", "key_exams",
"rubrics": [{"criterion", "points"}]}``. Profile texts become history facts; each exam becomes a test whose
MIMIC-style lines ("Neutrophils: Value: 83.6; ...; Reference Range: 34.0 - 71.0; Flag: abnormal") become lab
values. The exam list is kept: ``key_exams`` as given, else the names of the exam chain (DiagBench's reference
trajectory). Rubrics are kept in ``Case.rubrics`` (``criterion`` / ``points``; ``rubric``, ``text``,
``description`` and ``weight``, ``score`` are read as the same). A profile may also be DiagAgent's initial-inquiry
text ("- Chief Complaint: ...\\n- History of Present Illness: ..."), given as ``profile`` or ``initial_inquiry``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from clinical_gym.cases.formats.demographics import demographics_from
from clinical_gym.cases.formats.facts import FactBuilder
from clinical_gym.cases.formats.findings import result_from_report
from clinical_gym.cases.formats.imported import CaseFormat, Origin, imported_case
from clinical_gym.cases.formats.text import Text, as_list, as_text, sentences
from clinical_gym.cases.schema import Case, Rubric

LABEL = "DiagGym/DiagBench"

# Section labels of DiagAgent's initial-inquiry text, and the profile field each fills.
_SECTIONS: tuple[tuple[str, str], ...] = (
    (r"patient information|patient|demographics", "patient"), (r"chief complaint", "chief_complaint"),
    (r"history of present illness|hpi|present illness", "hpi"), (r"past medical history|pmh|medical history", "pmh"),
    (r"medications?|drug history", "medications"), (r"personal history|social history", "social_history"),
    (r"family history", "family_history"), (r"allerg(?:y|ies)(?: history)?", "allergies"),
)
_SECTION = re.compile(r"(?im)^\s*[-*]?\s*(?P<label>" + "|".join(p for p, _ in _SECTIONS) + r")\s*:\s*")


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Profile(_Row):
    sex: Text = Field("", validation_alias=AliasChoices("sex", "gender", "Sex"))
    age: Any = Field(None, validation_alias=AliasChoices("age", "anchor_age", "Age"))
    patient: Text = ""  # "___ y/o F" (DiagAgent's "Patient Information")
    chief_complaint: Text = Field("", validation_alias=AliasChoices("chief_complaint", "Chief Complaint", "complaint"))
    hpi: Text = Field("", validation_alias=AliasChoices("hpi", "history_of_present_illness", "History of Present Illness", "present_illness"))
    pmh: Text = Field("", validation_alias=AliasChoices("pmh", "past_medical_history", "Past Medical History"))
    medications: Text = ""
    social_history: Text = Field("", validation_alias=AliasChoices("social_history", "personal_history", "Social History", "Personal History"))
    family_history: Text = Field("", validation_alias=AliasChoices("family_history", "Family History"))
    allergies: Text = Field("", validation_alias=AliasChoices("allergies", "allergy_history", "Allergies", "Allergy History"))


def profile_from_text(text: str) -> Profile:
    """A profile from DiagAgent's initial-inquiry text ("- Chief Complaint: ...", one labelled section a line)."""
    fields: dict[str, str] = {}
    marks = list(_SECTION.finditer(text))
    for m, nxt in zip(marks, [*marks[1:], None]):
        label = m.group("label").lower()
        key = next(k for p, k in _SECTIONS if re.fullmatch(p, label))
        body = text[m.end(): nxt.start() if nxt else len(text)].strip()
        if body and not re.fullmatch(r"(?i)not (?:provided|available)\.?|none\.?|___", body):
            fields[key] = f"{fields[key]} {body}".strip() if key in fields else body
    return Profile.model_validate(fields)


class Exam(_Row):
    exam_name: Text = Field(min_length=1, validation_alias=AliasChoices("exam_name", "name", "examination", "exam"))
    exam_results: Text = Field("", validation_alias=AliasChoices("exam_results", "results", "result", "exam_result"))


class DiagGymRow(_Row):
    """One DiagGym / DiagBench case record (the fields used; others are ignored)."""

    id: Any = Field(None, validation_alias=AliasChoices("id", "case_id", "note_id"))
    profile: Profile = Field(validation_alias=AliasChoices("profile", "initial_inquiry", "patient_profile"))
    exam_chain: list[Exam] = Field(default_factory=list, validation_alias=AliasChoices("exam_chain", "examinations", "trajectory"))
    final_diagnosis: Text = Field(min_length=1, validation_alias=AliasChoices("final_diagnosis", "diagnosis"))
    icd10: str | None = None
    key_exams: list[Any] = Field(default_factory=list)
    rubrics: list[Any] = Field(default_factory=list)

    @field_validator("profile", mode="before")
    @classmethod
    def _profile_text(cls, value: Any) -> Any:
        return profile_from_text(value) if isinstance(value, str) else value

    def rubric_items(self) -> tuple[Rubric, ...]:
        """The rubric items as ``Rubric`` s; raises ValueError naming the first item that is not a criterion with
        points."""
        out = []
        for i, item in enumerate(self.rubrics, 1):
            if not isinstance(item, dict):
                raise ValueError(f"rubrics.{i}: expected an object with a criterion and points, got {type(item).__name__}")
            text = next((as_text(item[k]) for k in ("criterion", "rubric", "criteria", "text", "description") if k in item), "")
            points = next((item[k] for k in ("points", "weight", "score", "point") if k in item), None)
            try:
                out.append(Rubric(criterion=text, points=float(points)))
            except (TypeError, ValueError) as e:
                raise ValueError(f"rubrics.{i}: needs a criterion text and numeric points between -10 and 10 ({item!r:.80})") from e
        return tuple(out)


def matches(row: dict) -> bool:
    return any(k in row for k in ("profile", "initial_inquiry", "patient_profile")) and \
        any(k in row for k in ("final_diagnosis", "exam_chain", "examinations", "trajectory"))


def to_case(row: DiagGymRow, origin: Origin) -> Case:
    p = row.profile
    facts = FactBuilder()
    facts.add_text(p.chief_complaint, "hpi")
    facts.add_text(p.hpi, "hpi")
    facts.add_text(p.pmh, "past_history")
    facts.add_text(p.medications, "medications")
    facts.add_text(p.allergies, "allergies")
    facts.add_text(p.social_history, "social")
    facts.add_text(p.family_history, "family")
    tests = [t for e in row.exam_chain if (t := result_from_report(e.exam_name, e.exam_results))]
    chief = p.chief_complaint or (sentences(p.hpi) or [""])[0]
    key_exams = as_list(row.key_exams) or [e.exam_name for e in row.exam_chain]
    return imported_case(
        LABEL, origin, facts, demographics=demographics_from(p.patient, p.hpi, p.chief_complaint, age=p.age, sex=p.sex or None),
        chief_complaint=chief, self_report=chief, diagnosis=row.final_diagnosis, case_id=row.id, icd10=row.icd10,
        past_history=sentences(p.pmh), medications=sentences(p.medications), allergies=sentences(p.allergies),
        social_history=sentences(p.social_history), family_history=sentences(p.family_history), tests=tests,
        key_exams=list(dict.fromkeys(key_exams)), rubrics=row.rubric_items(),
    )


FORMAT = CaseFormat(name="diaggym", label=LABEL, matches=matches, row_model=DiagGymRow, convert=to_case)
