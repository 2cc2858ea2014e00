"""The VisualDiagnosis database: patients (who they are, why the study was done, history, medicines, vital signs,
results that can be ordered), their studies (an image and the parameters it is drawn from: ``EcgParams``,
``CtgParams``, ``SpirometryParams`` or ``AudiogramParams`` from ``clinical_gym.imaging``; the parameters are the
ground truth) and what the reader writes during an episode (interpretations, escalations, orders)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from clinical_gym.imaging.audiogram import AudiogramParams
from clinical_gym.imaging.ctg import CtgParams
from clinical_gym.imaging.ecg_rhythms import EcgParams
from clinical_gym.imaging.spirometry import SpirometryParams
from clinical_gym.domains.records import Allergy, LabResult, Medication, Order, VitalSigns
from clinical_gym.domains.records import StrictModel as _Model
from clinical_gym.tool_env.database import RecordListsDB

StudyKind = Literal["ecg_12_lead", "rhythm_strip", "ctg", "spirometry", "audiogram"]
Pathway = Literal["cath lab activation (primary PCI)", "resuscitation team", "emergency cardiology review (pacing)",
                  "emergency hyperkalaemia treatment", "obstetric emergency team", "urgent specialist referral"]
EMERGENCY_PATHWAYS: frozenset[str] = frozenset({
    "cath lab activation (primary PCI)", "resuscitation team", "emergency cardiology review (pacing)",
    "emergency hyperkalaemia treatment", "obstetric emergency team"})
KIND_TITLES: dict[str, str] = {"ecg_12_lead": "12-lead ECG", "rhythm_strip": "ECG rhythm strip",
                               "ctg": "cardiotocograph (CTG)", "spirometry": "spirometry report",
                               "audiogram": "pure-tone audiogram"}
RECORD_FIELDS = ("interpretations", "escalations", "orders")


class Study(_Model):
    """One acquired image. Exactly one of the parameter fields is set, matching ``kind`` (``ecg`` for both ECG
    kinds); ``lead`` is a rhythm strip's lead; ``prior_of`` names the study this one is an earlier tracing for;
    ``layout`` is how the page is laid out: "standard" (12-lead 3 x 4, CTG at 1 cm/min, loop on the left, one chart
    per ear) or "alternate" (12-lead 6 x 2, CTG at 3 cm/min, loop on the right, both ears on one chart)."""

    study_id: str
    patient_id: str
    kind: StudyKind
    acquired: str
    setting: str
    ecg: EcgParams | None = None
    ctg: CtgParams | None = None
    spirometry: SpirometryParams | None = None
    audiogram: AudiogramParams | None = None
    lead: str | None = None
    prior_of: str | None = None
    layout: Literal["standard", "alternate"] = "standard"

    @model_validator(mode="after")
    def _one_kind(self) -> Study:
        field = {"ecg_12_lead": "ecg", "rhythm_strip": "ecg"}.get(self.kind, self.kind)
        present = [f for f in ("ecg", "ctg", "spirometry", "audiogram") if getattr(self, f) is not None]
        if present != [field]:
            raise ValueError(f"study {self.study_id}: a {self.kind} study needs exactly the {field!r} parameters, "
                             f"got {present}")
        if self.kind == "rhythm_strip" and not self.lead:
            raise ValueError(f"study {self.study_id}: a rhythm strip names its lead")
        return self

    @property
    def title(self) -> str:
        return KIND_TITLES[self.kind] + (f" (lead {self.lead})" if self.kind == "rhythm_strip" else "")


class Patient(_Model):
    """A patient as the requesting clinician describes them; ``pending_results`` are what ``order_test`` returns."""

    patient_id: str
    age: int = Field(ge=16, le=100)
    sex: Literal["female", "male"]
    presentation: str
    history: list[str] = Field(default_factory=list)
    medications: list[Medication] = Field(default_factory=list)
    allergies: list[Allergy] = Field(default_factory=list)
    vitals: VitalSigns | None = None
    results: list[LabResult] = Field(default_factory=list)
    pending_results: list[LabResult] = Field(default_factory=list)
    pregnant: bool = False
    gestation_weeks: int | None = None
    studies: list[str] = Field(default_factory=list)


class Interpretation(_Model):
    study_id: str
    patient_id: str
    findings: str
    conclusion: str
    time: str


class Escalation(_Model):
    patient_id: str
    pathway: Pathway
    reason: str
    time: str


class VisualDiagnosisDB(RecordListsDB):
    """The domain's state; ``clock`` is the fixed time of every episode (policy.md). Patients and studies are
    read-only; tools append to the record lists only."""

    record_fields: ClassVar[tuple[str, ...]] = RECORD_FIELDS
    clock: str
    patients: dict[str, Patient]
    studies: dict[str, Study]
    interpretations: list[Interpretation] = Field(default_factory=list)
    escalations: list[Escalation] = Field(default_factory=list)
    orders: list[Order] = Field(default_factory=list)

    @model_validator(mode="after")
    def _studies_belong(self) -> VisualDiagnosisDB:
        for study in self.studies.values():
            if study.patient_id not in self.patients:
                raise ValueError(f"study {study.study_id} names unknown patient {study.patient_id}")
        for patient in self.patients.values():
            missing = [s for s in patient.studies if s not in self.studies]
            if missing:
                raise ValueError(f"patient {patient.patient_id} lists unknown studies {missing}")
        return self
