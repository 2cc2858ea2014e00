"""The Psychiatry database: patients seen by a psychiatrist (referral and history, psychiatric, medical, family and
social history, medications and allergies, observations, results, the mental state, Columbia-style suicide screening
answers, risk to others, substance use with AUDIT-C, CAGE and DAST-10 answers, questionnaire item responses and
prior scores, clinic letters), the investigation catalogue, psychotropic drug profiles, and what the psychiatrist
writes during an episode (investigation orders, prescriptions, withheld medications, safety plans, observation
levels, dispositions, referrals, diagnoses, notes)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from clinical_gym.cases.schema import normalize
from clinical_gym.tool_env.database import RecordListsDB
from clinical_gym.domains import records
from clinical_gym.domains.records import Allergy, DiagnosisRecord, LabResult, Note
from clinical_gym.domains.records import StrictModel as _Model

Setting = Literal["outpatient clinic", "emergency department", "psychiatric ward", "general hospital ward",
                  "primary care", "home visit"]
Frequency = Literal["once", "daily", "nightly", "bid", "tid", "qid", "weekly"]
DoseUnit = Literal["mg", "mcg", "g"]
Route = Literal["oral", "intramuscular", "intravenous", "sublingual", "buccal", "transdermal"]
TestCategory = Literal["blood", "drug level", "urine", "cardiac", "imaging"]
ObservationLevel = Literal["general", "intermittent", "within eyesight", "arm's length"]
Disposition = Literal["discharge with GP follow-up", "outpatient psychiatry follow-up",
                      "crisis resolution and home treatment team", "informal psychiatric admission",
                      "Mental Health Act assessment", "medical admission", "emergency department transfer"]
Service = Literal["psychological therapies", "community mental health team", "early intervention in psychosis",
                  "addiction services", "perinatal mental health", "eating disorder service", "memory clinic",
                  "dialectical behaviour therapy programme", "GP for physical health review"]
Instrument = Literal["PHQ-9", "GAD-7", "AUDIT-C", "CIWA-Ar", "C-SSRS screen", "MoCA", "YMRS", "BMI"]

# Where the patient goes: the dispositions that escalate care (the others leave the patient in the community).
ESCALATING_DISPOSITIONS = frozenset({"informal psychiatric admission", "Mental Health Act assessment",
                                     "medical admission", "emergency department transfer"})
ENHANCED_OBSERVATION = frozenset({"within eyesight", "arm's length"})

RECORD_FIELDS = ("orders", "prescriptions", "withheld", "safety_plans", "observation_levels", "dispositions",
                 "referrals", "diagnoses", "notes")


class Medication(records.Medication):
    since: str = ""


class VitalSigns(records.VitalSigns):
    weight_kg: float | None = None
    bmi: float | None = None
    lying_standing: str = ""


class MentalStateExam(_Model):
    appearance_behaviour: str
    speech: str
    mood: str
    affect: str
    thought_form: str
    thought_content: str
    perception: str
    cognition: str
    insight: str


class SuicideScreen(_Model):
    """The answers to the Columbia-style screening questions (past month; behaviour: past 3 months and lifetime),
    what the patient said, and the factors that raise or lower risk."""

    wish_to_be_dead: bool
    active_thoughts: bool
    method: bool = False
    intent: bool = False
    plan: bool = False
    behaviour_past_3_months: bool = False
    behaviour_lifetime: bool = False
    details: str
    risk_factors: list[str] = Field(default_factory=list)
    protective_factors: list[str] = Field(default_factory=list)


class RiskToOthers(_Model):
    command_hallucinations: str = "none"
    thoughts_of_harming_others: str = "none"
    access_to_weapons: bool = False
    violence_history: str = "none"
    safeguarding: str = "no dependants at risk"


class SubstanceUse(_Model):
    """Substance use as recorded: AUDIT-C answers (frequency, typical quantity, six-or-more frequency; 0-4 each),
    CAGE answers (cut down, annoyed, guilty, eye-opener), the DAST-10 total, and what was said."""

    audit_c: list[int] | None = Field(default=None, min_length=3, max_length=3)
    cage: list[bool] | None = Field(default=None, min_length=4, max_length=4)
    dast_10: int | None = Field(default=None, ge=0, le=10)
    alcohol: str = "none"
    drugs: str = "none"
    tobacco: str = "none"
    last_use: str = ""
    withdrawal_history: str = "none"

    @model_validator(mode="after")
    def _audit_items(self) -> SubstanceUse:
        if self.audit_c is not None and not all(0 <= v <= 4 for v in self.audit_c):
            raise ValueError("AUDIT-C answers are 0-4")
        return self


class PriorScore(_Model):
    instrument: Instrument
    date: str
    score: float
    note: str = ""


class Patient(_Model):
    """One patient. ``phq9_items`` / ``gad7_items`` are today's questionnaire item responses (None: not completed).
    ``withdrawal_signs`` are observed CIWA-Ar item scores. ``pending_results`` (by test name) are what ordering a
    test returns; hidden from READ tools until ordered. ``pregnant`` is None when not applicable or unknown."""

    patient_id: str
    name: str
    age: int = Field(ge=16, le=110)
    sex: Literal["female", "male"]
    weight_kg: float = Field(gt=0)
    pregnant: bool | None = None
    gestation_weeks: float | None = None
    setting: Setting
    referral: str
    history: str
    psychiatric_history: list[str] = Field(default_factory=list)
    medical_history: list[str] = Field(default_factory=list)
    family_history: list[str] = Field(default_factory=list)
    social_history: str = ""
    medications: list[Medication] = Field(default_factory=list)
    allergies: list[Allergy] = Field(default_factory=list)
    vitals: list[VitalSigns] = Field(min_length=1)
    physical_exam: str = ""
    withdrawal_signs: dict[str, int] | None = None
    labs: list[LabResult] = Field(default_factory=list)
    pending_results: dict[str, LabResult] = Field(default_factory=dict)
    mental_state: MentalStateExam
    suicide_screen: SuicideScreen
    risk_to_others: RiskToOthers = Field(default_factory=RiskToOthers)
    substance_use: SubstanceUse = Field(default_factory=SubstanceUse)
    questionnaire_date: str = ""
    phq9_items: list[int] | None = Field(default=None, min_length=9, max_length=9)
    gad7_items: list[int] | None = Field(default=None, min_length=7, max_length=7)
    prior_scores: list[PriorScore] = Field(default_factory=list)
    notes: list[Note] = Field(default_factory=list)

    @model_validator(mode="after")
    def _item_ranges(self) -> Patient:
        for items in (self.phq9_items, self.gad7_items):
            if items is not None and not all(0 <= v <= 3 for v in items):
                raise ValueError(f"{self.patient_id}: questionnaire items are 0-3")
        return self


class TestDefinition(_Model):
    """An orderable investigation: canonical name, other names, category, what it shows when the patient has no
    recorded result (a normal value or report), and ``key``, the canonical lab key of its value
    (``clinical_gym.rewards.episode``). A panel lists the tests it orders in ``components``."""

    name: str
    aliases: list[str] = Field(default_factory=list)
    category: TestCategory
    components: list[str] = Field(default_factory=list)
    unit: str = ""
    ref_low: float | None = None
    ref_high: float | None = None
    normal_value: float | None = None
    normal_text: str = ""
    key: str | None = None
    sex: Literal["female", "male"] | None = None


class InvestigationOrder(_Model):
    order_id: str
    patient_id: str
    test: str
    results: list[LabResult]
    time: str


class PrescriptionRecord(_Model):
    prescription_id: str
    patient_id: str
    drug: str
    dose: float
    unit: DoseUnit
    frequency: Frequency
    route: Route
    indication: str = ""
    time: str


class WithheldMedication(_Model):
    patient_id: str
    drug: str
    reason: str
    time: str


class SafetyPlan(_Model):
    patient_id: str
    warning_signs: list[str]
    coping_strategies: list[str]
    support_contacts: list[str]
    professional_contacts: list[str]
    means_restriction: str
    time: str


class ObservationRecord(_Model):
    patient_id: str
    level: ObservationLevel
    reason: str
    time: str


class DispositionRecord(_Model):
    patient_id: str
    disposition: Disposition
    reason: str
    time: str


class ReferralRecord(_Model):
    patient_id: str
    service: Service
    reason: str
    time: str


class WrittenNote(records.WrittenNote):
    time: str


class PsychiatryDB(RecordListsDB):
    """The domain's state. ``clock`` is the fixed current time of every episode (see policy.md).

    Patients and the investigation catalogue are read-only (drug knowledge is the drug reference,
    ``clinical_gym.drugs``): tools only append to the record lists
    (``RECORD_FIELDS``). ``episode_copy()`` therefore copies just those lists (a reset costs microseconds), and
    ``get_hash()`` digests the read-only part once and shares that digest with every copy.
    """

    record_fields: ClassVar[tuple[str, ...]] = RECORD_FIELDS
    clock: str
    patients: dict[str, Patient]
    tests: dict[str, TestDefinition]
    orders: list[InvestigationOrder] = Field(default_factory=list)
    prescriptions: list[PrescriptionRecord] = Field(default_factory=list)
    withheld: list[WithheldMedication] = Field(default_factory=list)
    safety_plans: list[SafetyPlan] = Field(default_factory=list)
    observation_levels: list[ObservationRecord] = Field(default_factory=list)
    dispositions: list[DispositionRecord] = Field(default_factory=list)
    referrals: list[ReferralRecord] = Field(default_factory=list)
    diagnoses: list[DiagnosisRecord] = Field(default_factory=list)
    notes: list[WrittenNote] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> PsychiatryDB:
        unknown = {f"{name}: component {c!r}" for name, t in self.tests.items() for c in t.components
                   if c not in self.tests}
        unknown |= {f"test key {name!r} != name {t.name!r}" for name, t in self.tests.items() if name != t.name}
        for patient in self.patients.values():
            unknown |= {f"{patient.patient_id}: pending {t!r}" for t in patient.pending_results if t not in self.tests}
            unknown |= {f"{patient.patient_id}: result {r.test!r}" for r in patient.labs if r.test not in self.tests}
        if unknown:
            raise ValueError(f"unresolved references: {sorted(unknown)}")
        return self

    def test_index(self) -> dict[str, TestDefinition]:
        """Catalogue tests by normalised name and alias (built once, shared by every copy)."""
        return self.shared("test_index", lambda: {normalize(name): t for t in self.tests.values()
                                                  for name in (t.name, *t.aliases)})
