"""The common end of every format reader: where a row came from, and the ``Case`` built from its parts.

Fills what public records leave out: a case id from the file and line, the ICD-10-CM code (looked up from the
diagnosis title, else R69), the specialty, and a ``source`` that records all of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from pydantic import BaseModel

from clinical_gym.cases.formats.diagnosis import code_diagnosis, specialty_for
from clinical_gym.cases.formats.facts import FactBuilder
from clinical_gym.cases.schema import Case, Demographics, Diagnosis, ExamSystem, Rubric, TestResult, Vitals

_ID_CHARS = re.compile(r"[^A-Za-z0-9_.:-]+")


@dataclass(frozen=True)
class Origin:
    """Where a row was read: a file (or dataset) name and its line (or row) number."""

    name: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.name}:{self.line}"

    def case_id(self, given: object = None) -> str:
        """The record's own id (made id-safe) when it has one, else '<file stem>-<line>'."""
        raw = str(given).strip() if given not in (None, "") else f"{self.name.rsplit('.', 1)[0]}-{self.line}"
        return _ID_CHARS.sub("-", raw).strip("-") or f"case-{self.line}"


@dataclass(frozen=True)
class CaseFormat:
    """A public case format: its name (``format=`` value), a label for ``source``, a test that a JSON row is in
    this format, its row model (pydantic), and the conversion of a validated row to a ``Case``."""

    name: str
    label: str
    matches: Callable[[dict], bool]
    row_model: type[BaseModel]
    convert: Callable[[BaseModel, Origin], Case]

    def to_case(self, row: dict, origin: Origin) -> Case:
        """The case for one raw row; raises ValueError (pydantic's ValidationError included) for a bad row."""
        return self.convert(self.row_model.model_validate(row), origin)


def imported_case(fmt_label: str, origin: Origin, facts: FactBuilder, *, demographics: Demographics, chief_complaint: str,
                  self_report: str, diagnosis: str, case_id: object = None, icd10: str | None = None, category: str = "",
                  past_history: list[str] | None = None, medications: list[str] | None = None, allergies: list[str] | None = None,
                  social_history: list[str] | None = None, family_history: list[str] | None = None, vitals: Vitals | None = None,
                  physical_exam: dict[ExamSystem, str] | None = None, tests: list[TestResult] | None = None,
                  key_exams: list[str] | None = None, differential: list[str] | None = None, recommendation: str = "",
                  images: tuple[str, ...] = (), rubrics: tuple[Rubric, ...] = (), notes: tuple[str, ...] = ()) -> Case:
    """A validated Case from the parts a format reader found, with the defaults for what it did not."""
    diagnosis = diagnosis.strip()
    if not diagnosis:
        raise ValueError("no diagnosis")
    if not facts.facts:
        raise ValueError("no history the patient could tell")
    coded = code_diagnosis(diagnosis, icd10)
    symptoms = [s for f in facts.facts if f.present for s in f.symptoms]
    source = "; ".join((f"{fmt_label} ({origin.where})", coded.note, *notes))
    return Case(
        id=origin.case_id(case_id), specialty=specialty_for(coded, symptoms, category), source=source, demographics=demographics,
        chief_complaint=chief_complaint.strip(), self_report=self_report.strip(), history=tuple(facts.facts),
        past_history=tuple(past_history or ()), medications=tuple(medications or ()), allergies=tuple(allergies or ()),
        social_history=tuple(social_history or ()), family_history=tuple(family_history or ()), vitals=vitals,
        physical_exam=physical_exam or {}, tests=tuple(tests or ()), images=tuple(images), key_exams=tuple(key_exams or ()),
        diagnosis=Diagnosis(name=diagnosis, icd10=coded.icd10), differential=tuple(differential or ()), recommendation=recommendation.strip(),
        rubrics=tuple(rubrics),
    )
