"""The RadiologyReport database: patients (demographics, location, relevant history, care team), imaging studies
(exam, technique, clinical indication, structured findings and pertinent negatives; reported priors with their
final reports), report templates by modality, follow-up and critical-results guidance, and what the radiologist
writes during an episode (drafts, signed reports, result communications, registered follow-up recommendations)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from clinical_gym.tool_env.database import RecordListsDB
from clinical_gym.domains.records import StrictModel as _Model

TemplateKey = Literal["chest_radiograph", "radiograph", "ct_head", "ct_chest", "ct_abdomen_pelvis", "ct_spine",
                      "mri_brain", "mri_spine", "ultrasound", "mammography"]
GuidanceTopic = Literal["critical_results", "fleischner_solid_nodule", "fleischner_subsolid_nodule",
                        "adrenal_incidentaloma", "bosniak_renal_cyst", "bi_rads", "abdominal_aortic_aneurysm"]
Urgency = Literal["critical", "urgent", "non-urgent"]
Method = Literal["telephone", "in person", "secure message"]

RECORD_FIELDS = ("drafts", "final_reports", "communications", "follow_ups")


class Contact(_Model):
    """A clinician who can receive results for the patient."""

    name: str
    role: str
    contact: str


class Patient(_Model):
    """One patient. ``pregnant`` is None when not applicable or unknown."""

    patient_id: str
    name: str
    age: int = Field(ge=0, le=120)
    sex: Literal["female", "male"]
    location: str
    history: list[str] = Field(default_factory=list)
    pregnant: bool | None = None
    care_team: list[Contact] = Field(min_length=1)


class Finding(_Model):
    """One structured finding: where, what it looks like, how big, its features, and how it compares with priors.
    Findings describe; the interpretation is the radiologist's."""

    finding_id: str
    location: str
    description: str
    size: str = ""
    characteristics: str = ""
    comparison: str = ""


class Study(_Model):
    """An imaging study. A reported prior has its ``final_report`` (and ``reported_at``); a study awaiting a report
    has its structured ``findings`` instead. ``referrer`` names a member of the patient's care team."""

    accession: str
    patient_id: str
    exam: str
    template: TemplateKey
    performed_at: str
    technique: str
    limitations: str = ""
    referrer: str
    clinical_details: str
    clinical_question: str = ""
    relevant_results: list[str] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    pertinent_negatives: list[str] = Field(default_factory=list)
    final_report: str = ""
    reported_at: str = ""

    @property
    def status(self) -> Literal["final", "awaiting report"]:
        return "final" if self.final_report else "awaiting report"


class TemplateSection(_Model):
    name: str
    required: bool
    guidance: str


class ReportTemplate(_Model):
    """A structured report template: the exams it covers and its sections in order."""

    name: str
    covers: list[str]
    sections: list[TemplateSection] = Field(min_length=1)
    notes: list[str] = Field(default_factory=list)

    @property
    def required_sections(self) -> list[str]:
        return [s.name for s in self.sections if s.required]


class Guidance(_Model):
    """A follow-up or communication guideline, summarised for the reporting radiologist."""

    title: str
    source: str
    applies_to: str
    points: list[str] = Field(min_length=1)


# -- what the radiologist writes ---------------------------------------------------------------------------------------
class ReportDraft(_Model):
    draft_id: str
    patient_id: str
    accession: str
    text: str
    sections: dict[str, str]
    time: str


class SignedReport(_Model):
    """A final report: the text as signed, its sections (canonical names, see ``report_sections``) and the required
    sections of its template it lacked."""

    report_id: str
    patient_id: str
    accession: str
    text: str
    sections: dict[str, str]
    missing_sections: list[str]
    signed_at: str


class Communication(_Model):
    """A result communicated to a clinician: who was told (``recipient`` as a care-team member's name and role),
    when, how, and whether they read the result back."""

    communication_id: str
    patient_id: str
    accession: str
    finding: str
    recipient: str
    recipient_role: str
    urgency: Urgency
    method: Method
    read_back: bool
    time: str


class FollowUp(_Model):
    """A follow-up recommendation registered for tracking (imaging follow-up or referral)."""

    follow_up_id: str
    patient_id: str
    accession: str
    finding: str
    recommendation: str
    interval_months: int
    time: str


class RadiologyReportDB(RecordListsDB):
    """The domain's state. ``clock`` is the fixed current time of every episode (see policy.md).

    Patients, studies, templates and guidance are read-only: tools only append to the record lists
    (``RECORD_FIELDS``). ``episode_copy()`` therefore copies just those lists (a reset costs microseconds), and
    ``get_hash()`` digests the read-only part once and shares that digest with every copy.
    """

    record_fields: ClassVar[tuple[str, ...]] = RECORD_FIELDS
    clock: str
    patients: dict[str, Patient]
    studies: dict[str, Study]
    templates: dict[TemplateKey, ReportTemplate]
    guidance: dict[GuidanceTopic, Guidance]
    drafts: list[ReportDraft] = Field(default_factory=list)
    final_reports: list[SignedReport] = Field(default_factory=list)
    communications: list[Communication] = Field(default_factory=list)
    follow_ups: list[FollowUp] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> RadiologyReportDB:
        problems = []
        for accession, study in self.studies.items():
            patient = self.patients.get(study.patient_id)
            if accession != study.accession:
                problems.append(f"study key {accession!r} differs from its accession {study.accession!r}")
            if patient is None:
                problems.append(f"{accession}: unknown patient {study.patient_id!r}")
            elif study.referrer not in {c.name for c in patient.care_team}:
                problems.append(f"{accession}: referrer {study.referrer!r} is not on the care team")
            if study.template not in self.templates:
                problems.append(f"{accession}: no template {study.template!r}")
            if bool(study.final_report) == bool(study.findings):
                problems.append(f"{accession}: a study has either a final report or findings")
        missing = {"critical_results"} - set(self.guidance)
        if problems or missing:
            raise ValueError("; ".join(problems + [f"missing guidance {m!r}" for m in missing]))
        return self

    def studies_of(self, patient_id: str) -> list[Study]:
        """The patient's studies, newest first."""
        index: dict[str, list[Study]] | None = self._cache.get("studies_by_patient")
        if index is None:
            index = {}
            for study in sorted(self.studies.values(), key=lambda s: s.performed_at, reverse=True):
                index.setdefault(study.patient_id, []).append(study)
            self._cache["studies_by_patient"] = index
        return index.get(patient_id, [])

    def signed_report(self, accession: str) -> SignedReport | None:
        """This episode's signed report of ``accession``, if any."""
        return next((r for r in self.final_reports if r.accession == accession), None)
