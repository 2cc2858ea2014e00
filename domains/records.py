"""Patient-record models that several tool domains share (allergies, medications, conditions, vital signs, results,
notes) and the records their WRITE tools append (test orders, diagnoses, written notes, interventions), with the
view of a result the agent sees and the facts the reward reads from a record (``allergy_facts``, ``vital_facts``).
A domain whose record differs keeps its own model (or subclasses one of these, adding fields after the shared
ones)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from clinical_gym.rewards.episode import AllergyFact

Consciousness = Literal["alert", "new confusion", "voice", "pain", "unresponsive"]
AllergySeverity = Literal["mild", "moderate", "severe", "life-threatening"]
Flag = Literal["high", "low", "normal"]
VITAL_KEYS = ("temperature_c", "heart_rate", "systolic_bp", "diastolic_bp", "respiratory_rate", "spo2")


class StrictModel(BaseModel):
    """A record model that refuses unknown fields."""

    model_config = ConfigDict(extra="forbid")


# -- the patient's record ----------------------------------------------------------------------------------------------
class Allergy(StrictModel):
    substance: str
    reaction: str
    severity: AllergySeverity


class Medication(StrictModel):
    name: str
    dose: str
    frequency: str
    indication: str = ""


class Condition(StrictModel):
    name: str
    status: Literal["active", "resolved"] = "active"
    since: str = ""


class VitalSigns(StrictModel):
    time: str
    temperature_c: float
    heart_rate: int
    systolic_bp: int
    diastolic_bp: int
    respiratory_rate: int
    spo2: int
    consciousness: Consciousness = "alert"


class LabResult(StrictModel):
    """A result: numeric (``value`` with unit and reference range) or descriptive (``text``), or both."""

    test: str
    time: str
    value: float | None = None
    unit: str = ""
    ref_low: float | None = None
    ref_high: float | None = None
    text: str = ""

    @property
    def flag(self) -> Flag | None:
        """Where a numeric value lies against its reference range."""
        return range_flag(self.value, self.ref_low, self.ref_high)


class Note(StrictModel):
    time: str
    author: str
    text: str


def range_flag(value: float | None, low: float | None, high: float | None) -> Flag | None:
    """Where ``value`` lies against the range [``low``, ``high``] (either may be open); None without a value."""
    if value is None:
        return None
    if high is not None and value > high:
        return "high"
    if low is not None and value < low:
        return "low"
    return "normal"


def result_view(result: LabResult) -> dict[str, Any]:
    """A result as the agent sees it: value, unit, reference range and flag, or the report text."""
    view: dict[str, Any] = {"test": result.test, "time": result.time}
    if result.value is not None:
        view.update(value=result.value, unit=result.unit)
        low, high = result.ref_low, result.ref_high
        if low is not None and high is not None:
            view["reference_range"] = f"{low:g}-{high:g}"
        elif high is not None:
            view["reference_range"] = f"<{high:g}"
        elif low is not None:
            view["reference_range"] = f">{low:g}"
        view["flag"] = result.flag
    if result.text:
        view["report"] = result.text
    return view


# -- what the reward reads from a record (clinical_gym.rewards.episode.PatientFacts) ----------------------------------
def allergy_facts(allergies: Iterable[Any]) -> list[AllergyFact]:
    """The recorded allergies (anything with ``substance``, ``severity`` and ``reaction``) as the safety rules read
    them."""
    return [AllergyFact(substance=a.substance, severity=a.severity, reaction=a.reaction) for a in allergies]


def vital_facts(vitals: Any) -> dict[str, float]:
    """The measured values of one set of vital signs by ``VITAL_KEYS`` (a value that could not be measured is
    left out)."""
    return {k: float(v) for k in VITAL_KEYS if (v := getattr(vitals, k)) is not None}


# -- what clinicians write during an episode ---------------------------------------------------------------------------
class Order(StrictModel):
    order_id: str
    patient_id: str
    test: str
    time: str


class DiagnosisRecord(StrictModel):
    patient_id: str
    diagnosis: str
    icd10: str = ""


class WrittenNote(StrictModel):
    patient_id: str
    text: str


class InterventionRecord(StrictModel):
    patient_id: str
    intervention: str
    indication: str
    time: str
