"""The Obstetrics database: pregnant and postpartum patients (demographics, obstetric and medical history, dating,
medications and allergies, vital signs, prenatal labs, ultrasound reports, fetal heart-rate tracings, the labour
and birth record, notes), the reference catalogues (orderable tests, obstetric interventions, protocol text; drug
safety in pregnancy and lactation is the drug reference's, ``clinical_gym.drugs``), and what the clinician writes during an episode (orders and their
results, prescriptions, stopped medications, interventions, escalations, haemorrhage protocol activations,
delivery plans, notes)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from clinical_gym.cases.schema import normalize
from clinical_gym.tool_env.database import RecordListsDB
from clinical_gym.domains import dosing
from clinical_gym.domains.records import (
    Allergy,
    Condition,
    InterventionRecord,
    LabResult,
    Medication,
    Note,
    Order,
    VitalSigns,
    WrittenNote,
)
from clinical_gym.domains.records import StrictModel as _Model

Status = Literal["antenatal", "intrapartum", "postpartum"]
Frequency = Literal["once", "daily", "bid", "tid", "qid", "q4h", "q6h", "q8h", "q12h", "hourly infusion", "weekly"]
DOSES_PER_DAY: dict[str, float] = {**dosing.DOSES_PER_DAY, "hourly infusion": 24}
DoseUnit = Literal["mg", "mcg", "g", "units", "mL"]
Route = Literal["oral", "intravenous", "intramuscular", "subcutaneous", "sublingual", "rectal", "vaginal", "topical"]
EscalationLevel = Literal["obstetric emergency team", "senior obstetrician review", "obstetric anaesthetist",
                          "neonatal team", "intensive care", "maternal-fetal medicine referral"]
DeliveryMode = Literal["expectant management", "induction of labour", "augmentation of labour",
                       "assisted vaginal birth", "caesarean birth"]
DeliveryUrgency = Literal["immediate", "within 24 hours", "scheduled"]
TestCategory = Literal["laboratory", "imaging", "bedside", "microbiology"]
InterventionCategory = Literal["fetal", "haemorrhage", "hypertension", "labour", "general"]
SafetyVerdict = Literal["compatible", "caution", "avoid", "contraindicated"]
PregnancyStage = Literal["first trimester", "second trimester", "third trimester", "breastfeeding"]
ProtocolTopic = Literal["dating", "fetal_heart_rate", "hypertension", "postpartum_haemorrhage", "induction",
                        "medications"]
Catalogue = Literal["tests", "interventions"]

RECORD_FIELDS = ("orders", "results", "prescriptions", "discontinuations", "interventions", "escalations",
                 "haemorrhage_activations", "delivery_plans", "notes")


class UltrasoundReport(_Model):
    """An ultrasound: a first-trimester dating scan gives the crown-rump length, a later scan its biometry
    gestation (weeks and days); ``findings`` is the report text."""

    date: str
    kind: Literal["dating", "anatomy", "growth", "bedside"]
    crl_mm: float | None = None
    biometry_weeks: int | None = None
    biometry_days: int | None = Field(default=None, ge=0, le=6)
    estimated_fetal_weight_g: int | None = None
    findings: str


class FetalHeartTracing(_Model):
    """A summary of a fetal heart-rate (CTG) tracing as the midwife describes it: the features, not the category."""

    time: str
    duration_minutes: int
    baseline_bpm: int
    variability_amplitude_bpm: float
    accelerations: bool
    early_decelerations: bool = False
    late_decelerations: Literal["none", "intermittent", "recurrent"] = "none"
    variable_decelerations: Literal["none", "intermittent", "recurrent"] = "none"
    prolonged_deceleration: bool = False
    sinusoidal_pattern: bool = False
    contractions_per_10_min: float | None = None
    narrative: str = ""


class CervicalExam(_Model):
    time: str
    dilation_cm: float = Field(ge=0, le=10)
    effacement_percent: int = Field(ge=0, le=100)
    station: int = Field(ge=-3, le=3)
    consistency: Literal["firm", "medium", "soft"]
    position: Literal["posterior", "mid", "anterior"]
    membranes: Literal["intact", "ruptured"] = "intact"
    presentation: str = "cephalic"


class BloodLossMeasurement(_Model):
    time: str
    cumulative_ml: int = Field(ge=0)
    method: Literal["quantitative", "estimated"] = "quantitative"


class BirthRecord(_Model):
    """The birth of a postpartum patient (and what was given for the third stage or bleeding so far)."""

    time: str
    mode: Literal["vaginal", "assisted vaginal", "caesarean"]
    gestation_at_birth: str
    placenta: str
    perineum: str = ""
    uterotonics_given: list[str] = Field(default_factory=list)
    red_cell_units_transfused: int = Field(default=0, ge=0)
    baby: str = ""


class Patient(_Model):
    """One patient. ``lmp`` (YYYY-MM-DD), ``cycle_length_days`` and ``lmp_certain`` are the menstrual dating;
    ``agreed_edd`` is the due date already agreed on the chart (None until the pregnancy is dated).
    ``pending_results`` (by test name) are what ordering a test returns; other tests return the catalogue's
    normal result. ``breastfeeding`` is None when not applicable."""

    patient_id: str
    name: str
    age: int = Field(ge=12, le=60)
    weight_kg: float = Field(gt=0)
    status: Status
    gravida: int = Field(ge=1)
    parity: int = Field(ge=0)
    presenting_complaint: str
    history_of_presentation: str
    lmp: str | None = None
    lmp_certain: bool = True
    cycle_length_days: int = Field(default=28, ge=20, le=45)
    agreed_edd: str | None = None
    breastfeeding: bool | None = None
    previous_pregnancies: list[str] = Field(default_factory=list)
    conditions: list[Condition] = Field(default_factory=list)
    family_history: list[str] = Field(default_factory=list)
    social_history: str = ""
    allergies: list[Allergy] = Field(default_factory=list)
    medications: list[Medication] = Field(default_factory=list)
    vitals: list[VitalSigns] = Field(min_length=1)
    labs: list[LabResult] = Field(default_factory=list)
    pending_results: dict[str, LabResult] = Field(default_factory=dict)
    ultrasounds: list[UltrasoundReport] = Field(default_factory=list)
    fetal_heart_tracings: list[FetalHeartTracing] = Field(default_factory=list)
    cervical_exams: list[CervicalExam] = Field(default_factory=list)
    birth: BirthRecord | None = None
    blood_loss: list[BloodLossMeasurement] = Field(default_factory=list)
    notes: list[Note] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Patient:
        if (self.status == "postpartum") != (self.birth is not None):
            raise ValueError(f"{self.patient_id}: a birth record goes with postpartum status, and only with it")
        if self.status != "postpartum" and self.lmp is None and self.agreed_edd is None and not self.ultrasounds:
            raise ValueError(f"{self.patient_id}: a pregnancy needs an LMP, an agreed due date or an ultrasound")
        return self


class TestDefinition(_Model):
    """An orderable test: its canonical name, other names, and what it shows when the patient has no recorded
    result for it (a normal value or a normal report). A panel lists the tests it orders in ``components``;
    ``key`` is the canonical lab key of ``clinical_gym.rewards.episode`` its value maps to."""

    name: str
    aliases: list[str] = Field(default_factory=list)
    category: TestCategory
    components: list[str] = Field(default_factory=list)
    key: str | None = None
    unit: str = ""
    ref_low: float | None = None
    ref_high: float | None = None
    normal_value: float | None = None
    normal_text: str = ""


class InterventionDefinition(_Model):
    """A bedside obstetric intervention (not a drug) and other names it goes by."""

    category: InterventionCategory
    description: str
    aliases: list[str] = Field(default_factory=list)


class OrderedResult(_Model):
    """A result that came back for a test ordered this episode."""

    order_id: str
    patient_id: str
    result: LabResult


class Prescription(_Model):
    prescription_id: str
    patient_id: str
    drug: str
    dose: float
    unit: DoseUnit
    frequency: Frequency
    route: Route
    indication: str = ""


class Discontinuation(_Model):
    patient_id: str
    medication: str
    reason: str


class Escalation(_Model):
    patient_id: str
    level: EscalationLevel
    reason: str
    time: str


class HaemorrhageActivation(_Model):
    patient_id: str
    stage: int = Field(ge=1, le=3)
    reason: str
    time: str


class DeliveryPlan(_Model):
    patient_id: str
    mode: DeliveryMode
    urgency: DeliveryUrgency
    reason: str
    time: str


class ObstetricsDB(RecordListsDB):
    """The domain's state. ``clock`` is the fixed current time of every episode (see policy.md).

    Patients and the catalogues are read-only: tools only append to the record lists (``RECORD_FIELDS``), and a
    test's result is recorded in ``results`` rather than in the patient. ``episode_copy()`` therefore copies just
    those lists (a reset costs microseconds), and ``get_hash()`` digests the read-only part once and shares that
    digest with every copy.
    """

    record_fields: ClassVar[tuple[str, ...]] = RECORD_FIELDS
    clock: str
    patients: dict[str, Patient]
    tests: dict[str, TestDefinition]
    interventions_catalogue: dict[str, InterventionDefinition]
    protocol: dict[ProtocolTopic, str]
    orders: list[Order] = Field(default_factory=list)
    results: list[OrderedResult] = Field(default_factory=list)
    prescriptions: list[Prescription] = Field(default_factory=list)
    discontinuations: list[Discontinuation] = Field(default_factory=list)
    interventions: list[InterventionRecord] = Field(default_factory=list)
    escalations: list[Escalation] = Field(default_factory=list)
    haemorrhage_activations: list[HaemorrhageActivation] = Field(default_factory=list)
    delivery_plans: list[DeliveryPlan] = Field(default_factory=list)
    notes: list[WrittenNote] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> ObstetricsDB:
        unknown = {f"{t.name}: component {c!r}" for t in self.tests.values() for c in t.components
                   if c not in self.tests}
        unknown |= {f"test key {name!r} != name {t.name!r}" for name, t in self.tests.items() if name != t.name}
        for patient in self.patients.values():
            unknown |= {f"{patient.patient_id}: pending test {name!r}" for name in patient.pending_results
                        if name not in self.tests}
            unknown |= {f"{patient.patient_id}: lab {r.test!r}" for r in patient.labs if r.test not in self.tests}
        if unknown:
            raise ValueError(f"unresolved references: {sorted(unknown)}")
        return self

    def name_index(self, catalogue: Catalogue) -> dict[str, str]:
        """A catalogue's canonical names by normalised name and alias (built once, shared by every copy)."""
        entries: dict[str, TestDefinition | InterventionDefinition] = (
            self.tests if catalogue == "tests" else self.interventions_catalogue)
        return self.shared(catalogue, lambda: {normalize(alias): name for name, entry in entries.items()
                                               for alias in (name, *entry.aliases)})

    def patient_results(self, patient_id: str) -> list[LabResult]:
        """The patient's recorded results, then the results of tests ordered this episode (oldest first)."""
        return [*self.patients[patient_id].labs, *(r.result for r in self.results if r.patient_id == patient_id)]
