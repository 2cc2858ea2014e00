"""AgentClinic OSCE JSONL (``agentclinic_medqa.jsonl``) and AgentClinic MIMIC-IV JSONL (``agentclinic_mimiciv.jsonl``):
one ``{"OSCE_Examination": {...}}`` object a line.

The patient actor's history, symptoms, past, social and family history and review of systems become history
facts (the primary symptom is also the self-report); nested physical exam findings become exam entries by system (vital
signs become ``Vitals`` when all six are given); nested test results become tests, nested names kept ("Imaging - Chest
CT"), with lab values where the results read as 'value unit'.

The MIMIC-IV files share the structure and add what this reader also handles in OSCE files: flat results named by
analyte and specimen ("Hemoglobin_Blood", "pH_Urine", "Glucose_CSF_Cerebrospinal_Fluid") are gathered into one panel
per specimen ("Blood tests", "Urine tests", "Cerebrospinal fluid tests"); vital signs and body measurements filed
under the results ("Blood_Pressure", "BMI", "Weight") join the vital-signs exam text; placeholders ("Not Provided",
"Not specified", empty) are no result and no fact.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.cases.formats.demographics import demographics_from
from clinical_gym.cases.formats.facts import FactBuilder
from clinical_gym.cases.formats.findings import add_exam_text, exam_system_for, results_from_tree, vitals_from_text
from clinical_gym.cases.formats.imported import CaseFormat, Origin, imported_case
from clinical_gym.cases.formats.text import Text, as_list, as_text, humanize, is_placeholder, sentences
from clinical_gym.cases.schema import Case, ExamSystem, TestResult, Vitals

LABEL = "AgentClinic OSCE"
MIMIC_LABEL = "AgentClinic MIMIC-IV"
# Specimen suffixes of MIMIC-IV lab item names, longest first, and the panel each specimen's results are gathered in.
_SPECIMENS: tuple[tuple[str, str], ...] = (
    ("csf cerebrospinal fluid", "Cerebrospinal fluid tests"), ("cerebrospinal fluid", "Cerebrospinal fluid tests"),
    ("csf", "Cerebrospinal fluid tests"), ("blood", "Blood tests"), ("urine", "Urine tests"), ("ascites", "Ascitic fluid tests"),
    ("pleural", "Pleural fluid tests"), ("joint fluid", "Joint fluid tests"), ("stool", "Stool tests"), ("fluid", "Body fluid tests"),
)
_SPECIMEN_SUFFIX = re.compile(r"(?i)^(?P<analyte>.+?)[ _]+(?P<specimen>" + "|".join(p.replace(" ", "[ _]") for p, _ in _SPECIMENS) + r")$")
# Results that are vital signs or body measurements (MIMIC-IV files file them with the labs).
_VITAL_KEYS = re.compile(r"(?i)^(?:blood[ _]pressure|bp|bmi\b.*|body[ _]mass[ _]index.*|height\b.*|weight\b.*|temperature|heart[ _]rate|"
                         r"pulse|respiratory[ _]rate|o2[ _]sat.*|oxygen[ _]saturation|spo2)$")


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


def looks_mimic(row: dict) -> bool:
    """An OSCE-shaped row from the MIMIC-IV file: results named by specimen ("Sodium_Blood"), or demographics that
    state race as MIMIC-IV records it."""
    exam = row.get("OSCE_Examination")
    if not isinstance(exam, dict):
        return False
    results = exam.get("Test_Results")
    keys = [k for k in results] if isinstance(results, dict) else []
    demographics = str((exam.get("Patient_Actor") or {}).get("Demographics", "")) if isinstance(exam.get("Patient_Actor"), dict) else ""
    return any(_SPECIMEN_SUFFIX.match(k) for k in keys) or bool(re.search(r"(?i)\brace\b", demographics))


def _exam(findings: dict[str, Any], measured: dict[str, str] | None = None) -> tuple[Vitals | None, dict[ExamSystem, str]]:
    """Vitals (when complete) and exam text by system from nested findings; ``measured`` holds vital signs filed
    among the results (those the exam already gives are not repeated)."""
    vitals, exam = None, {}
    if measured:
        given = findings.get("Vital_Signs")
        if isinstance(given, dict):
            known = {humanize(k).lower() for k in given}
            given = {**given, **{k: v for k, v in measured.items() if k.lower() not in known}}
        else:
            given = "; ".join(t for t in (as_text(given), as_text(measured)) if t)
        findings = {**findings, "Vital_Signs": given}
    for key, value in findings.items():
        system, text = exam_system_for(key), as_text(value)
        if is_placeholder(text):
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


def _tests(results: dict[str, Any]) -> tuple[list[TestResult], dict[str, str]]:
    """Tests from the results, with flat specimen-named results gathered into one panel per specimen, and the
    vital signs filed among the results."""
    panels: dict[str, dict[str, Any]] = {}
    vitals: dict[str, str] = {}
    tests: list[TestResult] = []
    for key, value in results.items():
        name = humanize(key)
        if not isinstance(value, dict) and _VITAL_KEYS.match(name):
            if not is_placeholder(as_text(value)):
                vitals[name] = as_text(value)
            continue
        m = _SPECIMEN_SUFFIX.match(name) if not isinstance(value, dict) else None
        if m:
            specimen = m.group("specimen").lower().replace("_", " ")
            panel = next(label for suffix, label in _SPECIMENS if suffix == specimen)
            panels.setdefault(panel, {})[m.group("analyte")] = value
            continue
        tests.extend(results_from_tree(name, value))
    for panel, values in panels.items():
        tests.extend(results_from_tree(panel, values, "lab"))
    return tests, vitals


def to_case(row: OsceRow, origin: Origin, label: str = LABEL) -> Case:
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
    tests, measured = _tests(row.exam.test_results)
    vitals, exam = _exam(row.exam.physical_exam, measured)
    return imported_case(
        label, origin, facts, demographics=demographics_from(p.demographics, p.history), chief_complaint=p.symptoms.primary,
        self_report=p.symptoms.primary, diagnosis=row.exam.diagnosis, past_history=sentences(p.past_medical_history),
        medications=sentences(p.medications), allergies=sentences(p.allergies), social_history=sentences(p.social_history),
        family_history=sentences(p.family_history), vitals=vitals, physical_exam=exam, tests=tests,
    )


FORMAT = CaseFormat(name="osce", label=LABEL, matches=matches, row_model=OsceRow, convert=to_case)
MIMIC_FORMAT = CaseFormat(name="mimiciv", label=MIMIC_LABEL, matches=looks_mimic, row_model=OsceRow,
                          convert=lambda row, origin: to_case(row, origin, MIMIC_LABEL))
