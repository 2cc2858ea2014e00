"""The DrugInteraction database: the drug reference (monographs with class, indications, usual dose, maximum daily
dose, renal dose bands, hepatic and pregnancy advice, CYP450 / P-glycoprotein roles and allergy group), interaction
rules (pair, severity, mechanism, management), allergy groups and their cross-reactivity, patients (medications,
allergies, results, weight, age, pregnancy), and what the clinician writes during an episode (prescriptions, dose
changes, discontinuations, interaction alerts)."""

from __future__ import annotations

import hashlib
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_gym.tool_env.database import RecordListsDB, canonical_json
from clinical_gym.domains import dosing, records
from clinical_gym.domains.dosing import MG_PER_UNIT
from clinical_gym.domains.records import AllergySeverity

Frequency = Literal["once", "daily", "bid", "tid", "qid", "five times daily", "q4h", "q6h", "q8h", "q12h", "q24h",
                    "q48h", "weekly", "prn"]
DOSES_PER_DAY: dict[str, float | None] = {**dosing.DOSES_PER_DAY, "prn": None}  # as needed: no fixed count
DoseUnit = Literal["mg", "mcg", "g", "units", "mL", "mmol"]
Route = Literal["oral", "intravenous", "intramuscular", "subcutaneous", "inhaled", "sublingual", "topical", "rectal",
                "vaginal", "transdermal"]
Severity = Literal["contraindicated", "major", "moderate", "minor"]
SEVERITY_RANK: dict[str, int] = {"minor": 1, "moderate": 2, "major": 3, "contraindicated": 4}
Enzyme = Literal["CYP1A2", "CYP2C9", "CYP2C19", "CYP2D6", "CYP3A4", "P-gp"]
Strength = Literal["strong", "moderate", "weak"]
RenalMeasure = Literal["eGFR", "CrCl"]
PregnancyAdvice = Literal["compatible", "caution", "avoid", "contraindicated"]
HepaticAdvice = Literal["no adjustment", "caution", "reduce dose", "avoid in severe impairment", "avoid"]
HepaticImpairment = Literal["none", "mild", "moderate", "severe"]
CrossReactivityRisk = Literal["high", "low", "negligible"]
RECORD_FIELDS = ("prescriptions", "dose_changes", "discontinuations", "alerts")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- the drug reference ------------------------------------------------------------------------------------------------
class Regimen(_Model):
    """One dosing regimen: amount per administration, unit, frequency and route."""

    dose: float = Field(gt=0)
    unit: DoseUnit
    frequency: Frequency
    route: Route

    @property
    def daily_mg(self) -> float | None:
        """Milligrams a day (a single dose for "once"); None for non-mass units or as-needed use."""
        factor, per_day = MG_PER_UNIT.get(self.unit), DOSES_PER_DAY[self.frequency]
        if factor is None or per_day is None:
            return None
        return self.dose * factor * (1 if self.frequency == "once" else per_day)

    @property
    def text(self) -> str:
        return f"{self.dose:g} {self.unit} {self.frequency} {self.route}"


class RenalBand(_Model):
    """Dosing from ``low`` (inclusive) up to ``high`` (exclusive; None: no upper limit) of the monograph's renal
    measure (eGFR in mL/min/1.73 m², or Cockcroft-Gault creatinine clearance in mL/min)."""

    low: float = Field(ge=0)
    high: float | None = None
    advice: str = Field(min_length=1)
    regimen: Regimen | None = None
    max_daily_mg: float | None = None
    avoid: bool = False

    def contains(self, value: float) -> bool:
        return self.low <= value and (self.high is None or value < self.high)

    @property
    def range_text(self) -> str:
        return f">= {self.low:g}" if self.high is None else f"{self.low:g} to < {self.high:g}"


class EnzymeRole(_Model):
    enzyme: Enzyme
    strength: Strength


class Metabolism(_Model):
    """CYP450 and P-glycoprotein roles: the pathways that clear the drug (``substrate_of``), the enzymes that
    activate a prodrug (``activated_by``), and the enzymes it inhibits or induces."""

    substrate_of: list[Enzyme] = Field(default_factory=list)
    activated_by: list[Enzyme] = Field(default_factory=list)
    inhibits: list[EnzymeRole] = Field(default_factory=list)
    induces: list[EnzymeRole] = Field(default_factory=list)
    note: str = ""


class DrugMonograph(_Model):
    """One drug. ``classes`` are the tags interaction rules may name (besides the drug's own name and the tags its
    CYP450 roles imply); ``renal_bands`` (ascending, from 0 with no gap) are empty when no renal adjustment is
    needed; ``max_daily_mg`` is the highest adult daily dose in any indication or route."""

    name: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    drug_class: str = Field(min_length=1)
    classes: list[str] = Field(default_factory=list)
    indications: list[str] = Field(min_length=1)
    usual_dose: Regimen
    usual_dose_note: str = ""
    max_daily_mg: float | None = None
    renal_measure: RenalMeasure = "eGFR"
    renal_bands: list[RenalBand] = Field(default_factory=list)
    hepatic: HepaticAdvice = "no adjustment"
    hepatic_note: str = ""
    pregnancy: PregnancyAdvice
    pregnancy_note: str = ""
    allergy_group: str | None = None
    avoid_in_conditions: list[str] = Field(default_factory=list)
    metabolism: Metabolism = Field(default_factory=Metabolism)
    cautions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _bands_tile_the_range(self) -> DrugMonograph:
        bands = self.renal_bands
        if bands:
            edges_ok = bands[0].low == 0 and bands[-1].high is None and all(
                a.high == b.low for a, b in zip(bands, bands[1:]))
            if not edges_ok:
                raise ValueError(f"{self.name}: renal bands must run from 0 upwards without gaps or overlaps")
        return self


class InteractionRule(_Model):
    """An interaction between anything matching ``between[0]`` and anything matching ``between[1]``: each a drug name
    or a class tag (``DrugMonograph.classes`` or a CYP450 tag such as ``strong_cyp3a4_inhibitor``)."""

    between: tuple[str, str]
    severity: Severity
    mechanism: str = Field(min_length=1)
    management: str = Field(min_length=1)


class AllergyGroup(_Model):
    """A group of drugs that share allergenic structure; ``labels`` are how an allergy to the group is recorded."""

    name: str = Field(min_length=1)
    labels: list[str] = Field(default_factory=list)
    description: str = ""


class CrossReactivity(_Model):
    """How likely an allergy to ``allergy_group`` extends to drugs of ``drug_group``, and what to do."""

    allergy_group: str
    drug_group: str
    risk: CrossReactivityRisk
    advice: str = Field(min_length=1)


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
    """The domain's state. ``clock`` is the fixed current time of every episode (see policy.md).

    Tools never change the reference or the patients: everything written goes to the four record lists, so
    ``episode_copy()`` copies only those lists (a reset costs microseconds) and the digest of the unchanging part
    is computed once and shared by all copies.
    """

    record_fields: ClassVar[tuple[str, ...]] = RECORD_FIELDS
    clock: str
    drugs: dict[str, DrugMonograph]
    interactions: list[InteractionRule]
    allergy_groups: dict[str, AllergyGroup]
    cross_reactivity: list[CrossReactivity] = Field(default_factory=list)
    patients: dict[str, Patient]
    prescriptions: list[Prescription] = Field(default_factory=list)
    dose_changes: list[DoseChange] = Field(default_factory=list)
    discontinuations: list[Discontinuation] = Field(default_factory=list)
    alerts: list[InteractionAlert] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> DrugInteractionDB:
        wrong_keys = [k for k, d in self.drugs.items() if k != d.name]
        wrong_keys += [k for k, g in self.allergy_groups.items() if k != g.name]
        wrong_keys += [k for k, p in self.patients.items() if k != p.patient_id]
        if wrong_keys:
            raise ValueError(f"keys must equal the item's name or id: {wrong_keys}")
        groups = set(self.allergy_groups)
        unknown = {d.allergy_group for d in self.drugs.values() if d.allergy_group} - groups
        unknown |= {g for c in self.cross_reactivity for g in (c.allergy_group, c.drug_group)} - groups
        unknown |= {m.drug for p in self.patients.values() for m in p.medications} - set(self.drugs)
        if unknown:
            raise ValueError(f"unknown drugs or allergy groups referenced: {sorted(unknown)}")
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
            mode="json", include={"clock", "drugs", "interactions", "allergy_groups", "cross_reactivity",
                                  "patients"})).encode()).hexdigest())
        written = self.model_dump_json(include=set(RECORD_FIELDS))
        return hashlib.sha256(f"{static}:{written}".encode()).hexdigest()
