"""The Triage database: patients arriving at the emergency department (presentation, vital signs with pain score,
history, primary survey, red flags, the care their presentation is expected to need, bedside results), the reference
catalogues the ESI algorithm uses (resource categories, care items, interventions, bedside tests, danger-zone
vital signs by age, protocol text), and what the triage nurse writes during an episode (ESI levels, code
activations, physician escalations, interventions, bedside tests, notes)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from clinical_gym.cases.schema import normalize
from clinical_gym.tool_env.database import RecordListsDB
from clinical_gym.domains.records import Allergy, Consciousness, Flag, InterventionRecord, range_flag
from clinical_gym.domains.records import StrictModel as _Model

TriageCode = Literal["stroke", "STEMI", "sepsis", "trauma", "cardiac arrest"]
Urgency = Literal["immediate", "urgent"]
ReferenceTopic = Literal["algorithm", "danger_zone_vitals", "resources", "life_saving_interventions", "codes",
                         "paediatric_fever"]
Catalogue = Literal["interventions_catalogue", "bedside_tests_catalogue"]
ArrivalMode = Literal["walk-in", "ambulance", "carried by parent", "brought by family", "already in department"]

RECORD_FIELDS = ("esi_assignments", "code_activations", "physician_escalations", "interventions", "bedside_tests",
                 "triage_notes")


class Medication(_Model):
    name: str
    dose: str = ""


class VitalSigns(_Model):
    """One set of observations; a value is None when it cannot be measured (e.g. no pulse). ``pain_score`` is the
    patient's 0-10 rating (None when the patient cannot give one)."""

    time: str
    temperature_c: float | None
    heart_rate: int | None
    systolic_bp: int | None
    diastolic_bp: int | None
    respiratory_rate: int | None
    spo2: int | None
    on_oxygen: bool = False
    pain_score: int | None = Field(default=None, ge=0, le=10)
    consciousness: Consciousness = "alert"


class PrimarySurvey(_Model):
    """The triage nurse's airway-breathing-circulation-disability-exposure look, with the Glasgow Coma Scale
    components observed."""

    airway: str
    breathing: str
    circulation: str
    disability: str
    exposure: str
    gcs_eye: int = Field(ge=1, le=4)
    gcs_verbal: int = Field(ge=1, le=5)
    gcs_motor: int = Field(ge=1, le=6)


class RedFlag(_Model):
    finding: str
    concern: str


class BedsideResult(_Model):
    """A point-of-care result: numeric (``value`` with unit and reference range) or descriptive (``text``)."""

    value: float | None = None
    unit: str = ""
    ref_low: float | None = None
    ref_high: float | None = None
    text: str = ""

    @property
    def flag(self) -> Flag | None:
        """Where a numeric value lies against its reference range."""
        return range_flag(self.value, self.ref_low, self.ref_high)


class Patient(_Model):
    """One arriving patient. ``age_days`` is given for infants under one year. ``anticipated_care`` names the care
    items (``TriageDB.care_items``) the presentation is expected to need before a disposition.
    ``bedside_results`` (by test name) are what performing a bedside test returns; a test without one returns the
    catalogue's normal result. ``intervention_responses`` (by intervention name) say how the patient responds."""

    patient_id: str
    name: str
    age_years: int = Field(ge=0, le=120)
    age_days: int | None = Field(default=None, ge=0, le=365)
    sex: Literal["female", "male"]
    weight_kg: float = Field(gt=0)
    pregnant: bool | None = None
    gestation_weeks: float | None = None
    arrival_time: str
    arrival_mode: ArrivalMode
    chief_complaint: str
    history: str
    past_history: list[str] = Field(default_factory=list)
    medications: list[Medication] = Field(default_factory=list)
    allergies: list[Allergy] = Field(default_factory=list)
    social_history: str = ""
    immunisations: str = ""
    vitals: list[VitalSigns] = Field(min_length=1)
    primary_survey: PrimarySurvey
    red_flags: list[RedFlag] = Field(default_factory=list)
    anticipated_care: list[str] = Field(default_factory=list)
    bedside_results: dict[str, BedsideResult] = Field(default_factory=dict)
    intervention_responses: dict[str, str] = Field(default_factory=dict)

    @property
    def age(self) -> float:
        """Age in years (fractional for infants)."""
        return self.age_days / 365.25 if self.age_days is not None else float(self.age_years)

    @property
    def age_text(self) -> str:
        """Age as a triage nurse says it: days for newborns, months for infants, else years."""
        if self.age_days is None:
            return f"{self.age_years} years"
        if self.age_days < 60:
            return f"{self.age_days} days"
        return f"{round(self.age_days / 30.44)} months"


class ResourceCategory(_Model):
    """A kind of ED resource in the ESI count: ``counts`` is how many resources it adds (0: not a resource)."""

    counts: int = Field(ge=0, le=2)
    description: str


class InterventionDefinition(_Model):
    """An intervention the triage nurse can start, with other names it goes by. ``life_saving``: an ESI
    life-saving intervention (its need makes a patient ESI 1). A drug intervention names the formulary ``drug``
    with a single ``dose_mg`` and ``route``."""

    life_saving: bool
    description: str
    aliases: list[str] = Field(default_factory=list)
    drug: str | None = None
    dose_mg: float | None = None
    route: str = ""
    default_response: str = "Started."


class BedsideTestDefinition(_Model):
    """A point-of-care test (and other names it goes by) and the result it gives a patient without a recorded one;
    ``key`` is the canonical lab key of its numeric value (``clinical_gym.rewards.episode``). ``sex`` restricts who
    it applies to."""

    normal: BedsideResult
    aliases: list[str] = Field(default_factory=list)
    key: str | None = None
    sex: Literal["female", "male"] | None = None


class DangerZoneBand(_Model):
    """Danger-zone heart and respiratory rates for ages below ``below_age_years`` (None: no upper age)."""

    label: str
    below_age_years: float | None
    heart_rate_above: int
    respiratory_rate_above: int


class EsiAssignment(_Model):
    patient_id: str
    esi_level: int = Field(ge=1, le=5)
    reason: str
    time: str


class CodeActivation(_Model):
    patient_id: str
    code: TriageCode
    reason: str
    time: str


class PhysicianEscalation(_Model):
    patient_id: str
    urgency: Urgency
    reason: str
    time: str


class BedsideTestRecord(_Model):
    patient_id: str
    test: str
    result: BedsideResult
    time: str


class TriageNote(_Model):
    patient_id: str
    note: str
    time: str


class TriageDB(RecordListsDB):
    """The domain's state. ``clock`` is the fixed current time of every episode (see policy.md).

    Patients and the catalogues are read-only: tools only append to the record lists (``RECORD_FIELDS``).
    ``episode_copy()`` therefore copies just those lists (a reset costs microseconds), and ``get_hash()`` digests
    the read-only part once and shares that digest with every copy.
    """

    record_fields: ClassVar[tuple[str, ...]] = RECORD_FIELDS
    clock: str
    patients: dict[str, Patient]
    resource_categories: dict[str, ResourceCategory]
    care_items: dict[str, str]
    interventions_catalogue: dict[str, InterventionDefinition]
    bedside_tests_catalogue: dict[str, BedsideTestDefinition]
    danger_zone: list[DangerZoneBand] = Field(min_length=1)
    danger_zone_spo2_below: int
    protocol: dict[ReferenceTopic, str]
    esi_assignments: list[EsiAssignment] = Field(default_factory=list)
    code_activations: list[CodeActivation] = Field(default_factory=list)
    physician_escalations: list[PhysicianEscalation] = Field(default_factory=list)
    interventions: list[InterventionRecord] = Field(default_factory=list)
    bedside_tests: list[BedsideTestRecord] = Field(default_factory=list)
    triage_notes: list[TriageNote] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> TriageDB:
        unknown = {c for c in self.care_items.values() if c not in self.resource_categories}
        for patient in self.patients.values():
            unknown |= {f"{patient.patient_id}: care item {c!r}" for c in patient.anticipated_care
                        if c not in self.care_items}
            unknown |= {f"{patient.patient_id}: test {t!r}" for t in patient.bedside_results
                        if t not in self.bedside_tests_catalogue}
            unknown |= {f"{patient.patient_id}: intervention {i!r}" for i in patient.intervention_responses
                        if i not in self.interventions_catalogue}
        if unknown:
            raise ValueError(f"unresolved references: {sorted(unknown)}")
        *bounded, last = self.danger_zone
        ages = [b.below_age_years for b in bounded if b.below_age_years is not None]
        if last.below_age_years is not None or len(ages) < len(bounded) or ages != sorted(ages):
            raise ValueError("danger_zone bands must ascend by age and end with an open-ended band")
        return self

    def danger_zone_band(self, age_years: float) -> DangerZoneBand:
        """The danger-zone band that covers ``age_years``."""
        return next(b for b in self.danger_zone if b.below_age_years is None or age_years < b.below_age_years)

    def name_index(self, catalogue: Catalogue) -> dict[str, str]:
        """A catalogue's canonical names by normalised name and alias (built once, shared by every copy)."""
        entries: dict[str, InterventionDefinition | BedsideTestDefinition] = getattr(self, catalogue)
        return self.shared(catalogue, lambda: {normalize(alias): name for name, entry in entries.items()
                                               for alias in (name, *entry.aliases)})
