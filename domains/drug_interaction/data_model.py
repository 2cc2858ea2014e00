"""The DrugInteraction database: patients (medications, allergies, results, weight, age, pregnancy) and what the
clinician writes during an episode (prescriptions, dose changes, discontinuations, interaction alerts). The drug
knowledge (monographs, interaction rules, allergy groups and cross-reactivity) is the one drug reference,
``clinical_gym.drugs.reference()``; the records it is made of are re-exported here under the names the domain first
used (``DrugMonograph`` is ``clinical_gym.drugs.Drug``)."""

from __future__ import annotations

import hashlib
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_gym.tool_env.database import RecordListsDB, canonical_json
from clinical_gym.domains import dosing, records
from clinical_gym.domains.records import AllergySeverity
from clinical_gym.drugs import Drug, reference
from clinical_gym.drugs.model import (  # noqa: F401  (re-exported: the domain's names for the reference's records)
    SEVERITY_RANK,
    AllergyGroup,
    CrossReactivity,
    Enzyme,
    EnzymeRole,
    InteractionRule,
    Metabolism,
    Regimen,
    RenalBand,
    Severity,
)

DrugMonograph = Drug
Frequency = Literal["once", "daily", "bid", "tid", "qid", "five times daily", "q4h", "q6h", "q8h", "q12h", "q24h",
                    "q48h", "weekly", "prn"]
DOSES_PER_DAY: dict[str, float | None] = {**dosing.DOSES_PER_DAY, "prn": None}  # as needed: no fixed count
DoseUnit = Literal["mg", "mcg", "g", "units", "mL", "mmol"]
Route = Literal["oral", "intravenous", "intramuscular", "subcutaneous", "inhaled", "sublingual", "topical", "rectal",
                "vaginal", "transdermal"]
HepaticImpairment = Literal["none", "mild", "moderate", "severe"]
RECORD_FIELDS = ("prescriptions", "dose_changes", "discontinuations", "alerts")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- patients --------------------------------------------------------------------------------------------------------
class Allergy(_Model):
    substance: str = Field(min_length=1)
    reaction: str
    severity: AllergySeverity


class Medication(_Model):
    """A current medicine; ``drug`` is the reference name."""

    drug: str
    dose: float = Field(gt=0)
    unit: DoseUnit
    frequency: Frequency
    route: Route
    indication: str = ""
    since: str = ""

    @property
    def regimen(self) -> Regimen:
        return Regimen(dose=self.dose, unit=self.unit, frequency=self.frequency, route=self.route)


class LabResult(records.LabResult):
    """A result: numeric (``value`` with unit and reference range) or a report (``text``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    test: str = Field(min_length=1)


class Patient(_Model):
    """One patient. ``pregnant`` is None when not applicable; creatinine (µmol/L) and eGFR (mL/min/1.73 m²) are
    among ``labs`` under the tests "Creatinine" and "eGFR"."""

    patient_id: str
    name: str
    age: int = Field(ge=0, le=120)
    sex: Literal["female", "male"]
    weight_kg: float = Field(gt=0)
    height_cm: float | None = None
    pregnant: bool | None = None
    gestation_weeks: float | None = None
    breastfeeding: bool = False
    hepatic_impairment: HepaticImpairment = "none"
    conditions: list[str] = Field(default_factory=list)
    allergies: list[Allergy] = Field(default_factory=list)
    medications: list[Medication] = Field(default_factory=list)
    labs: list[LabResult] = Field(default_factory=list)
    social_history: str = ""


# -- what the clinician writes ---------------------------------------------------------------------------------------
class _Record(_Model):
    """``seq`` orders every record written during an episode, whatever its kind."""

    seq: int
    patient_id: str


class Prescription(_Record):
    prescription_id: str
    drug: str
    dose: float
    unit: DoseUnit
    frequency: Frequency
    route: Route
    indication: str = ""

    @property
    def regimen(self) -> Regimen:
        return Regimen(dose=self.dose, unit=self.unit, frequency=self.frequency, route=self.route)


class DoseChange(_Record):
    drug: str
    previous: Regimen
    new: Regimen
    reason: str

    @property
    def raises_daily_dose(self) -> bool:
        """True unless both daily doses are known in mg and the new one is not higher."""
        before, after = self.previous.daily_mg, self.new.daily_mg
        return before is None or after is None or after > before


class Discontinuation(_Record):
    drug: str
    reason: str
    temporary: bool = False


class InteractionAlert(_Record):
    alert_id: str
    drug_a: str
    drug_b: str
    severity: Severity
    action: str


class ActiveMedication(_Model):
    """A medicine the patient is taking now: from the record, started this encounter, or with a changed dose."""

    drug: str
    regimen: Regimen
    indication: str = ""
    status: Literal["long-term", "started this encounter", "dose changed this encounter"]


class DrugInteractionDB(RecordListsDB):
    """The domain's state. ``clock`` is the fixed current time of every episode (see policy.md); every medicine
    names a drug of the drug reference.

    Tools never change the patients: everything written goes to the four record lists, so ``episode_copy()``
    copies only those lists (a reset costs microseconds) and the digest of the unchanging part is computed once and
    shared by all copies.
    """

    record_fields: ClassVar[tuple[str, ...]] = RECORD_FIELDS
    clock: str
    patients: dict[str, Patient]
    prescriptions: list[Prescription] = Field(default_factory=list)
    dose_changes: list[DoseChange] = Field(default_factory=list)
    discontinuations: list[Discontinuation] = Field(default_factory=list)
    alerts: list[InteractionAlert] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> DrugInteractionDB:
        wrong_keys = [k for k, p in self.patients.items() if k != p.patient_id]
        if wrong_keys:
            raise ValueError(f"keys must equal the patient id: {wrong_keys}")
        unknown = {m.drug for p in self.patients.values() for m in p.medications} - set(reference().drugs)
        if unknown:
            raise ValueError(f"medicines not in the drug reference: {sorted(unknown)}")
        return self

    def next_seq(self) -> int:
        """The sequence number of the next record written."""
        return len(self.prescriptions) + len(self.dose_changes) + len(self.discontinuations) + len(self.alerts) + 1

    def active_medications(self, patient_id: str) -> tuple[list[ActiveMedication], list[Discontinuation]]:
        """The patient's medicines now (the record with this episode's prescriptions, dose changes and
        discontinuations applied in order) and the discontinuations that removed one."""
        patient = self.patients[patient_id]
        active = {m.drug: ActiveMedication(drug=m.drug, regimen=m.regimen, indication=m.indication, status="long-term")
                  for m in patient.medications}
        stopped: list[Discontinuation] = []
        events: list[Prescription | DoseChange | Discontinuation] = [
            *self.prescriptions, *self.dose_changes, *self.discontinuations]
        for event in sorted((e for e in events if e.patient_id == patient_id), key=lambda e: e.seq):
            if isinstance(event, Prescription):
                active[event.drug] = ActiveMedication(drug=event.drug, regimen=event.regimen,
                                                      indication=event.indication, status="started this encounter")
            elif isinstance(event, DoseChange):
                active[event.drug] = active[event.drug].model_copy(
                    update={"regimen": event.new, "status": "dose changed this encounter"})
            elif active.pop(event.drug, None) is not None:
                stopped.append(event)
        return list(active.values()), stopped

    def get_hash(self) -> str:
        static = self.shared("static_digest", lambda: hashlib.sha256(canonical_json(self.model_dump(
            mode="json", include={"clock", "patients"})).encode()).hexdigest())
        written = self.model_dump_json(include=set(RECORD_FIELDS))
        return hashlib.sha256(f"{static}:{written}".encode()).hexdigest()
