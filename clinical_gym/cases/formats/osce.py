"""AgentClinic OSCE JSONL: one ``{"OSCE_Examination": {...}}`` object a line.

The patient actor's history, symptoms, past, social and family history and review of systems become history
facts (the primary symptom is also the self-report); nested physical exam findings become exam entries by system (vital
signs become ``Vitals`` when all six are given); nested test results become tests with lab values where the
results read as 'value unit'.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.cases.formats.demographics import demographics_from
from clinical_gym.cases.formats.facts import FactBuilder
from clinical_gym.cases.formats.findings import add_exam_text, exam_system_for, results_from_tree, vitals_from_text
from clinical_gym.cases.formats.imported import CaseFormat, Origin, imported_case
from clinical_gym.cases.formats.text import Text, as_list, as_text, humanize, sentences
from clinical_gym.cases.schema import Case, ExamSystem, TestResult, Vitals

LABEL = "AgentClinic OSCE"


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Symptoms(_Row):
    primary: Text = Field(alias="Primary_Symptom", min_length=1)
    secondary: Any = Field(default_factory=list, alias="Secondary_Symptoms")  # a list, or one text


class PatientActor(_Row):
    demographics: Text = Field(alias="Demographics", min_length=1)
    history: Text = Field("", alias="History")
    symptoms: Symptoms = Field(alias="Symptoms")
    past_medical_history: Text = Field("", alias="Past_Medical_History")
    medications: Text = Field("", alias="Medications")
    allergies: Text = Field("", alias="Allergies")
    social_history: Text = Field("", alias="Social_History")
    family_history: Text = Field("", alias="Family_History")
    review_of_systems: Text = Field("", alias="Review_of_Systems")


class OsceExamination(_Row):
    patient: PatientActor = Field(alias="Patient_Actor")
    physical_exam: dict[str, Any] = Field(default_factory=dict, alias="Physical_Examination_Findings")
    test_results: dict[str, Any] = Field(default_factory=dict, alias="Test_Results")
    diagnosis: Text = Field(alias="Correct_Diagnosis", min_length=1)


class OsceRow(_Row):
    """One AgentClinic OSCE record (the fields used; others are ignored)."""

    exam: OsceExamination = Field(alias="OSCE_Examination")


def matches(row: dict) -> bool:
    return "OSCE_Examination" in row


def _exam(findings: dict[str, Any]) -> tuple[Vitals | None, dict[ExamSystem, str]]:
    """Vitals (when complete) and exam text by system from nested findings."""
    vitals, exam = None, {}
    for key, value in findings.items():
        system, text = exam_system_for(key), as_text(value)
        if not text:
            continue
        if system == "vitals":
            found = vitals_from_text(text)
            if found is not None:
                vitals = vitals or found
                continue
        elif system == "general" and not re.search(r"(?i)general|appearance", key):
            text = f"{humanize(key)}: {text}"  # a heading no system matched: keep it with its finding
        add_exam_text(exam, system, text if text.endswith(".") else text + ".")
    return vitals, exam


def _tests(results: dict[str, Any]) -> list[TestResult]:
    return [t for key, value in results.items() for t in results_from_tree(humanize(key), value)]


def to_case(row: OsceRow, origin: Origin) -> Case:
    p = row.exam.patient
    facts = FactBuilder()
    facts.add_text(p.symptoms.primary, "hpi")
    facts.add_items(as_list(p.symptoms.secondary), "hpi")
    facts.add_text(p.history, "hpi")
    facts.add_text(p.review_of_systems, "ros")
    facts.add_text(p.past_medical_history, "past_history")
    facts.add_text(p.medications, "medications")
    facts.add_text(p.allergies, "allergies")
    facts.add_text(p.social_history, "social")
    facts.add_text(p.family_history, "family")
    vitals, exam = _exam(row.exam.physical_exam)
    return imported_case(
        LABEL, origin, facts, demographics=demographics_from(p.demographics, p.history), chief_complaint=p.symptoms.primary,
        self_report=p.symptoms.primary, diagnosis=row.exam.diagnosis, past_history=sentences(p.past_medical_history),
        medications=sentences(p.medications), allergies=sentences(p.allergies), social_history=sentences(p.social_history),
        family_history=sentences(p.family_history), vitals=vitals, physical_exam=exam, tests=_tests(row.exam.test_results),
    )


FORMAT = CaseFormat(name="osce", label=LABEL, matches=matches, row_model=OsceRow, convert=to_case)
