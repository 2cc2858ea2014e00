"""DiagGym / DiagBench-style JSONL: a patient profile, the chain of exams with their results, and the diagnosis.

``{"id", "profile": {"sex", "age", "chief_complaint", "hpi", "pmh", "medications", "social_history",
"family_history", "allergies"}, "exam_chain": [{"exam_name", "exam_results"}], "final_diagnosis", "key_exams",
"rubrics"}``. Profile texts become history facts; each exam becomes a test whose MIMIC-style lines
("Neutrophils: Value: 83.6; ...; Reference Range: 34.0 - 71.0; Flag: abnormal") become lab values. The Case
schema has no rubric field: the number of rubric items left out is noted in ``source``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.cases.formats.demographics import demographics_from
from clinical_gym.cases.formats.facts import FactBuilder
from clinical_gym.cases.formats.findings import result_from_report
from clinical_gym.cases.formats.imported import CaseFormat, Origin, imported_case
from clinical_gym.cases.formats.text import Text, as_list, sentences
from clinical_gym.cases.schema import Case

LABEL = "DiagGym"


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Profile(_Row):
    sex: Text = ""
    age: Any = None
    chief_complaint: Text = ""
    hpi: Text = ""
    pmh: Text = ""
    medications: Text = ""
    social_history: Text = ""
    family_history: Text = ""
    allergies: Text = ""


class Exam(_Row):
    exam_name: Text = Field(min_length=1)
    exam_results: Text = ""


class DiagGymRow(_Row):
    """One DiagGym case record (the fields used; others are ignored)."""

    id: Any = None
    profile: Profile
    exam_chain: list[Exam] = Field(default_factory=list)
    final_diagnosis: Text = Field(min_length=1)
    icd10: str | None = None
    key_exams: list[Any] = Field(default_factory=list)
    rubrics: list[Any] = Field(default_factory=list)


def matches(row: dict) -> bool:
    return "profile" in row and ("final_diagnosis" in row or "exam_chain" in row)


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
    notes = (f"{len(row.rubrics)} rubric items not kept (the case schema has no rubric field)",) if row.rubrics else ()
    chief = p.chief_complaint or (sentences(p.hpi) or [""])[0]
    return imported_case(
        LABEL, origin, facts, demographics=demographics_from(p.hpi, p.chief_complaint, age=p.age, sex=p.sex or None),
        chief_complaint=chief, self_report=chief, diagnosis=row.final_diagnosis, case_id=row.id, icd10=row.icd10,
        past_history=sentences(p.pmh), medications=sentences(p.medications), allergies=sentences(p.allergies),
        social_history=sentences(p.social_history), family_history=sentences(p.family_history), tests=tests,
        key_exams=as_list(row.key_exams), notes=notes,
    )


FORMAT = CaseFormat(name="diaggym", label=LABEL, matches=matches, row_model=DiagGymRow, convert=to_case)
