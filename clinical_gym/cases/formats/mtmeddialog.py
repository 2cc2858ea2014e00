"""MTMedDialog JSON (DoctorAgent-RL): a list of consultation records.

``{"self_report", "dialogue": [{"doctor_question", "patient_response"}], "diagnosis", "recommendation",
"enhanced_description", "category"}``. The self-report (its trailing "(male, 37 years old)" gives the
demographics) is also the first fact; each patient response becomes a fact tagged with what the doctor asked
(a response starting with "No" denies it; what was asked also decides the history category); sentences of the
enhanced description that the dialogue did not already cover become further facts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.cases.formats.demographics import demographics_from
from clinical_gym.cases.formats.facts import FactBuilder, category_for
from clinical_gym.cases.formats.imported import CaseFormat, Origin, imported_case
from clinical_gym.cases.formats.text import Text, is_denial, sentences, without_demographics
from clinical_gym.cases.schema import Case, normalize

LABEL = "MTMedDialog"


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Turn(_Row):
    doctor_question: Text = ""
    patient_response: Text = ""


class MTMedDialogRow(_Row):
    """One MTMedDialog record (the fields used; others are ignored)."""

    self_report: Text = Field(min_length=1)
    dialogue: list[Turn] = Field(default_factory=list)
    diagnosis: Text = Field(min_length=1)
    recommendation: Text = ""
    enhanced_description: Text = ""
    category: Text = ""
    id: Any = None


def matches(row: dict) -> bool:
    return "self_report" in row and "diagnosis" in row and isinstance(row.get("diagnosis"), str)


def to_case(row: MTMedDialogRow, origin: Origin) -> Case:
    report = without_demographics(row.self_report)
    facts = FactBuilder()
    facts.add_text(report, "hpi")
    said = {normalize(report)}
    for turn in row.dialogue:
        answer = turn.patient_response.strip()
        if answer and not answer.endswith((".", "!", "?")):
            answer += "."
        negative = is_denial(answer)
        category = category_for(turn.doctor_question, answer)
        if category == "hpi" and negative:
            category = "ros"
        if facts.add(answer, category, present=not negative, asked=turn.doctor_question):
            said.add(normalize(answer))
    for sentence in sentences(row.enhanced_description):
        if normalize(sentence) not in said and normalize(without_demographics(sentence)) not in said:
            facts.add_text(sentence, category_for(sentence))
    chief = report.split(",")[0].split(".")[0]
    return imported_case(
        LABEL, origin, facts, demographics=demographics_from(row.self_report, row.enhanced_description),
        chief_complaint=chief, self_report=report, diagnosis=row.diagnosis, case_id=row.id, category=row.category,
        recommendation=row.recommendation,
    )


FORMAT = CaseFormat(name="mtmeddialog", label=LABEL, matches=matches, row_model=MTMedDialogRow, convert=to_case)
