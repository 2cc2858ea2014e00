"""The ClinicalPathway database: one record per patient (``PathwayPatient``: demographics, background, medicines,
allergies, observations, the emergency-department presentation when the journey starts at triage, available and
pending results, notes), the views of those records that the wave-1 domains' toolkits read (a ``TriageDB``, a
``ClinicalDiagnosisDB`` and a ``DrugInteractionDB`` holding the pathway's patients with each domain's bundled
catalogues), and what the pathway's own tools write (handovers, fluids, infusions, blood products, dispositions).

``data/db.json`` holds only the patient records, the clock, and the tests the pathways add to the
clinical-diagnosis catalogue (``PathwaySource``); drugs are those of the drug reference (``clinical_gym.drugs``).
``PathwayDB.build`` derives the domain views from them once.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, model_validator

from clinical_gym.tool_env.database import DomainDB, RecordListsDB, canonical_json, sha256_hex
from clinical_gym.domains.clinical_diagnosis.data_model import ClinicalDiagnosisDB, TestDefinition
from clinical_gym.domains.drug_interaction.data_model import (
    DoseUnit,
    DrugInteractionDB,
    Frequency,
    HepaticImpairment,
    Route,
)
from clinical_gym.domains.records import Allergy, LabResult, Note
from clinical_gym.domains.records import StrictModel as _Model
from clinical_gym.domains.triage.data_model import RECORD_FIELDS as TRIAGE_RECORDS
from clinical_gym.drugs import reference
from clinical_gym.domains.triage.data_model import ArrivalMode, BedsideResult, PrimarySurvey, RedFlag, TriageDB, VitalSigns

FREQUENCY_TEXT = {"once": "single dose", "daily": "once daily", "bid": "twice daily", "tid": "three times daily",
                  "qid": "four times daily", "five times daily": "five times daily", "q4h": "every 4 hours",
                  "q6h": "every 6 hours", "q8h": "every 8 hours", "q12h": "every 12 hours", "q24h": "every 24 hours",
                  "q48h": "every 48 hours", "weekly": "once weekly", "prn": "as needed"}
Fluid = Literal["0.9% sodium chloride", "Hartmann's solution", "10% glucose", "5% glucose"]
RateUnit = Literal["units/kg/hour", "units/hour", "mg/hour", "mg/kg/hour", "micrograms/kg/minute", "mL/hour"]
BloodProduct = Literal["red cells", "platelets", "fresh frozen plasma", "cryoprecipitate"]
Destination = Literal["cardiac catheterisation laboratory", "coronary care unit", "intensive care unit",
                      "high dependency unit", "hyperacute stroke unit", "thrombectomy centre", "neurosurgical unit",
                      "operating theatre", "paediatric intensive care unit", "paediatric ward", "medical ward",
                      "surgical ward", "discharge home"]
RECORD_FIELDS = ("handoffs", "fluids", "infusions", "transfusions", "dispositions")
View = Literal["triage", "chart", "medicines"]


class Medication(_Model):
    """A long-term medicine: generic name, regimen and indication."""

    drug: str = Field(min_length=1)
    dose: float = Field(gt=0)
    unit: DoseUnit
    frequency: Frequency
    route: Route
    indication: str = ""

    @property
    def text(self) -> str:
        return f"{self.dose:g} {self.unit} {FREQUENCY_TEXT[self.frequency]}"


class Arrival(_Model):
    """The emergency-department presentation, for journeys that start at triage: arrival, the complaint as told at
    the desk, the primary survey, red flags, the care the presentation is expected to need (triage care items), and
    what bedside tests and immediate interventions show (by the triage catalogues' names)."""

    time: str
    mode: ArrivalMode
    chief_complaint: str = Field(min_length=1)
    history: str = Field(min_length=1)
    primary_survey: PrimarySurvey
    red_flags: list[RedFlag] = Field(default_factory=list)
    anticipated_care: list[str] = Field(default_factory=list)
    bedside_results: dict[str, BedsideResult] = Field(default_factory=dict)
    intervention_responses: dict[str, str] = Field(default_factory=dict)


class PathwayPatient(_Model):
    """One patient of a pathway task. ``vitals`` are oldest first (all values measured); ``labs`` are results
    available from the start, ``pending_results`` (by clinical-diagnosis catalogue test name) what ordering a test
    returns; ``notes`` are the clinical notes (examination findings, operation notes, ward notes)."""

    patient_id: str = Field(pattern=r"^[A-Z]{2}\d{2,7}$")
    name: str = Field(min_length=1)
    age_years: int = Field(ge=0, le=120)
    age_days: int | None = Field(default=None, ge=0, le=365)
    sex: Literal["female", "male"]
    weight_kg: float = Field(gt=0)
    height_cm: float | None = None
    pregnant: bool | None = None
    gestation_weeks: float | None = None
    conditions: list[str] = Field(default_factory=list)
    family_history: list[str] = Field(default_factory=list)
    social_history: str = ""
    immunisations: str = ""
    hepatic_impairment: HepaticImpairment = "none"
    allergies: list[Allergy] = Field(default_factory=list)
    medications: list[Medication] = Field(default_factory=list)
    vitals: list[VitalSigns] = Field(min_length=1)
    arrival: Arrival | None = None
    labs: list[LabResult] = Field(default_factory=list)
    pending_results: dict[str, LabResult] = Field(default_factory=dict)
    notes: list[Note] = Field(default_factory=list)

    @model_validator(mode="after")
    def _measured(self) -> PathwayPatient:
        unmeasured = [v.time for v in self.vitals if None in (v.temperature_c, v.heart_rate, v.systolic_bp,
                                                              v.diastolic_bp, v.respiratory_rate, v.spo2)]
        if unmeasured:
            raise ValueError(f"{self.patient_id}: every vital sign must be measured (sets at {unmeasured})")
        return self

    @property
    def age(self) -> float:
        """Age in years (fractional for infants)."""
        return self.age_days / 365.25 if self.age_days is not None else float(self.age_years)


# -- the domain views --------------------------------------------------------------------------------------------------
def triage_view(p: PathwayPatient) -> dict[str, Any]:
    """The patient as the triage tools read it (``clinical_gym.domains.triage`` Patient fields)."""
    a = p.arrival
    assert a is not None
    return {"patient_id": p.patient_id, "name": p.name, "age_years": p.age_years, "age_days": p.age_days,
            "sex": p.sex, "weight_kg": p.weight_kg, "pregnant": p.pregnant, "gestation_weeks": p.gestation_weeks,
            "arrival_time": a.time, "arrival_mode": a.mode, "chief_complaint": a.chief_complaint,
            "history": a.history, "past_history": p.conditions,
            "medications": [{"name": m.drug, "dose": m.text} for m in p.medications],
            "allergies": p.allergies, "social_history": p.social_history, "immunisations": p.immunisations,
            "vitals": p.vitals, "primary_survey": a.primary_survey, "red_flags": a.red_flags,
            "anticipated_care": a.anticipated_care, "bedside_results": a.bedside_results,
            "intervention_responses": a.intervention_responses}


def chart_view(p: PathwayPatient) -> dict[str, Any]:
    """The patient as the clinical-diagnosis tools read it (``clinical_gym.domains.clinical_diagnosis`` Patient fields)."""
    return {"patient_id": p.patient_id, "name": p.name, "age": p.age_years, "sex": p.sex, "weight_kg": p.weight_kg,
            "pregnant": p.pregnant, "gestation_weeks": p.gestation_weeks,
            "allergies": [a.model_dump() for a in p.allergies],
            "medications": [{"name": m.drug, "dose": f"{m.dose:g} {m.unit}", "frequency": FREQUENCY_TEXT[m.frequency],
                             "indication": m.indication} for m in p.medications],
            "conditions": [{"name": c} for c in p.conditions], "family_history": p.family_history,
            "social_history": p.social_history,
            "vitals": [v.model_dump(exclude={"pain_score"}) for v in p.vitals],
            "labs": p.labs, "notes": p.notes, "pending_results": p.pending_results}


def medicines_view(p: PathwayPatient, known: set[str] | dict[str, Any]) -> dict[str, Any]:
    """The patient as the drug-interaction tools read it (``clinical_gym.domains.drug_interaction`` Patient fields):
    the medicines the drug reference knows, and every result of the encounter (available and pending) as
    resulted."""
    return {"patient_id": p.patient_id, "name": p.name, "age": p.age_years, "sex": p.sex, "weight_kg": p.weight_kg,
            "height_cm": p.height_cm, "pregnant": p.pregnant, "gestation_weeks": p.gestation_weeks,
            "hepatic_impairment": p.hepatic_impairment, "conditions": p.conditions,
            "allergies": [a.model_dump() for a in p.allergies],
            "medications": [m.model_dump() for m in p.medications if m.drug in known],
            "labs": [r.model_dump() for r in (*p.labs, *p.pending_results.values())],
            "social_history": p.social_history}


# -- what the pathway's tools write ------------------------------------------------------------------------------------
class Handoff(_Model):
    phase: str
    summary: str
    time: str


class FluidOrder(_Model):
    order_id: str
    patient_id: str
    fluid: Fluid
    volume_ml: float
    duration_minutes: float
    potassium_mmol_per_l: int = 0
    indication: str = ""
    time: str


class InfusionOrder(_Model):
    order_id: str
    patient_id: str
    drug: str
    rate: float
    rate_unit: RateUnit
    indication: str = ""
    time: str


class TransfusionOrder(_Model):
    order_id: str
    patient_id: str
    product: BloodProduct
    units: int
    indication: str = ""
    time: str


class Disposition(_Model):
    patient_id: str
    destination: Destination
    reason: str
    time: str


class PathwaySource(DomainDB):
    """What ``data/db.json`` holds: the clock, the patient records, and the tests (``extra_tests``) the pathways add
    to the clinical-diagnosis catalogue."""

    clock: str
    patients: dict[str, PathwayPatient]
    extra_tests: dict[str, TestDefinition] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _keys(self) -> PathwaySource:
        wrong = [k for k, p in self.patients.items() if k != p.patient_id]
        wrong += [k for k, t in self.extra_tests.items() if k != t.name]
        if wrong:
            raise ValueError(f"keys must equal the patient id or test name: {wrong}")
        return self


class PathwayDB(RecordListsDB):
    """The domain's state: the patient records and clock, the three domain views (``triage``: patients with an
    ``arrival``; ``chart``; ``medicines``) and the pathway's record lists (``RECORD_FIELDS``).

    ``episode_copy()`` is copy-on-write: the record lists are new and the views are shared with the original until
    ``view_for_update`` first hands one out for writing (then it takes the view's own episode copy), so a reset
    costs microseconds and no episode changes the loaded database. READ and THINK tools may read a shared view;
    anything that writes gets its view through ``view_for_update``. ``get_hash()`` combines the views' hashes with
    a digest of the records, the unchanging patient digest being computed once and shared by every copy.
    """

    record_fields: ClassVar[tuple[str, ...]] = RECORD_FIELDS
    clock: str
    patients: dict[str, PathwayPatient]
    triage: TriageDB
    chart: ClinicalDiagnosisDB
    medicines: DrugInteractionDB
    handoffs: list[Handoff] = Field(default_factory=list)
    fluids: list[FluidOrder] = Field(default_factory=list)
    infusions: list[InfusionOrder] = Field(default_factory=list)
    transfusions: list[TransfusionOrder] = Field(default_factory=list)
    dispositions: list[Disposition] = Field(default_factory=list)
    _owned: set[str] = PrivateAttr(default_factory=set)

    @classmethod
    def build(cls, source: PathwaySource, triage: TriageDB, chart: ClinicalDiagnosisDB,
              medicines: DrugInteractionDB) -> PathwayDB:
        """The pathway database over ``source``'s patients, with the catalogues of the given domain databases (the
        medicines view takes its drugs from the drug reference; ``medicines`` is kept for callers' sake)."""
        patients = source.patients
        triage_view_db = TriageDB.model_validate({
            **triage.model_dump(exclude={"patients", "clock", *TRIAGE_RECORDS}), "clock": source.clock,
            "patients": {pid: triage_view(p) for pid, p in patients.items() if p.arrival is not None}})
        chart_view_db = ClinicalDiagnosisDB.model_validate({
            "clock": source.clock, "tests": {**chart.tests, **source.extra_tests},
            "patients": {pid: chart_view(p) for pid, p in patients.items()}})
        drugs = reference().drugs
        medicines_view_db = DrugInteractionDB.model_validate({
            "clock": source.clock, "patients": {pid: medicines_view(p, drugs) for pid, p in patients.items()}})
        return cls(clock=source.clock, patients=patients, triage=triage_view_db, chart=chart_view_db,
                   medicines=medicines_view_db)

    def episode_copy(self) -> PathwayDB:
        copy = super().episode_copy()
        copy._owned = set()
        return copy

    def view_for_update(self, view: View) -> tuple[DomainDB, bool]:
        """The view, first replaced by its own episode copy if it is still shared with the database this one was
        copied from; and whether it was copied just now."""
        if view in self._owned:
            return getattr(self, view), False
        setattr(self, view, getattr(self, view).episode_copy())
        self._owned.add(view)
        return getattr(self, view), True

    def next_id(self, prefix: str, collection: str) -> str:
        """The id of the next item of ``collection``, e.g. "FL-001"."""
        return f"{prefix}-{len(getattr(self, collection)) + 1:03d}"

    def get_hash(self) -> str:
        static = self.shared("patients_digest", lambda: sha256_hex(canonical_json(
            {k: p.model_dump(mode="json") for k, p in self.patients.items()})))
        records = self.model_dump_json(include={"clock", *RECORD_FIELDS})
        return sha256_hex(":".join((static, *(self._view_hash(v) for v in ("triage", "chart", "medicines")), records)))

    def _view_hash(self, view: View) -> str:
        """A view's hash; a view still shared with the original is unchanged, so its hash is computed once."""
        if view in self._owned:
            return getattr(self, view).get_hash()  # type: ignore[no-any-return]
        return self.shared(f"{view}_hash", getattr(self, view).get_hash)  # type: ignore[no-any-return]
