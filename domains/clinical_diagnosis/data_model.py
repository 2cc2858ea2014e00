"""The ClinicalDiagnosis database: patients (demographics, allergies with severity, medications, conditions, vital
signs, results with reference ranges, notes), the test catalogue, and what clinicians write during an episode
(orders, prescriptions, diagnoses, notes, escalations)."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import Field, PrivateAttr

from clinical_gym.cases.schema import normalize
from clinical_gym.tool_env.database import DomainDB, canonical_json, sha256_hex
from clinical_gym.domains.records import (
    Condition,
    Consciousness,
    DiagnosisRecord,
    LabResult,
    Medication,
    Note,
    Order,
    WrittenNote,
)
from clinical_gym.domains.records import StrictModel as _Model

T = TypeVar("T")

Frequency = Literal["once", "daily", "bid", "tid", "qid", "q4h", "q6h", "q8h", "q12h", "weekly"]
DoseUnit = Literal["mg", "mcg", "g", "units", "mL", "mmol"]
Route = Literal["oral", "intravenous", "intramuscular", "subcutaneous", "inhaled", "nebulised", "sublingual",
                "topical", "rectal"]
EscalationLevel = Literal["emergency team", "intensive care", "emergency surgery", "cardiac catheterisation",
                          "stroke team", "specialist referral"]
TestCategory = Literal["laboratory", "imaging", "cardiac", "microbiology", "bedside", "pathology"]


class Allergy(_Model):
    substance: str
    reaction: str
    severity: Literal["mild", "moderate", "severe", "life-threatening", "not recorded"]


class VitalSigns(_Model):
    time: str
    temperature_c: float
    heart_rate: int
    systolic_bp: int
    diastolic_bp: int
    respiratory_rate: int
    spo2: int
    on_oxygen: bool = False
    consciousness: Consciousness = "alert"


class Patient(_Model):
    """One patient. ``pending_results`` (by test name) are what ordering a test returns; they are hidden from READ
    tools until the test is ordered. ``pregnant`` is None when not applicable."""

    patient_id: str
    name: str
    age: int = Field(ge=0, le=120)
    sex: Literal["female", "male"]
    weight_kg: float | None = Field(default=None, gt=0)  # None: not recorded (converted cases)
    pregnant: bool | None = None
    gestation_weeks: float | None = None
    allergies: list[Allergy] = Field(default_factory=list)
    medications: list[Medication] = Field(default_factory=list)
    conditions: list[Condition] = Field(default_factory=list)
    family_history: list[str] = Field(default_factory=list)
    social_history: str = ""
    vitals: list[VitalSigns] = Field(default_factory=list)
    labs: list[LabResult] = Field(default_factory=list)
    notes: list[Note] = Field(default_factory=list)
    pending_results: dict[str, LabResult] = Field(default_factory=dict)


class TestDefinition(_Model):
    """An orderable test: its canonical name, other names, and what it shows when the patient has no recorded
    result for it (a normal value or a normal report). A panel lists the tests it orders in ``components``."""

    name: str
    aliases: list[str] = Field(default_factory=list)
    category: TestCategory
    components: list[str] = Field(default_factory=list)
    unit: str = ""
    ref_low: float | None = None
    ref_high: float | None = None
    normal_value: float | None = None
    normal_text: str = ""


class Prescription(_Model):
    prescription_id: str
    patient_id: str
    drug: str
    dose: float
    unit: DoseUnit
    frequency: Frequency
    route: Route
    indication: str = ""


class Escalation(_Model):
    patient_id: str
    level: EscalationLevel
    reason: str


class ClinicalDiagnosisDB(DomainDB):
    """The domain's state. ``clock`` is the fixed current time of every episode (see policy.md).

    ``episode_copy()`` is copy-on-write: the record lists and the patient mapping are new, and a patient is copied
    the first time a tool changes it (``patient_for_update``: new containers, shared items), so a reset costs
    microseconds and tools never change the loaded database. Tools get a patient through ``patient_for_update``
    before changing it, and add or remove items rather than changing one in place. Derived data that never changes
    (the test-name index, digests of unchanged patients) is cached once and shared by all copies.
    """

    clock: str
    patients: dict[str, Patient]
    tests: dict[str, TestDefinition]
    orders: list[Order] = Field(default_factory=list)
    prescriptions: list[Prescription] = Field(default_factory=list)
    diagnoses: list[DiagnosisRecord] = Field(default_factory=list)
    notes: list[WrittenNote] = Field(default_factory=list)
    escalations: list[Escalation] = Field(default_factory=list)
    _owned: set[str] = PrivateAttr(default_factory=set)
    _cache: dict[str, Any] = PrivateAttr(default_factory=dict)

    def episode_copy(self) -> ClinicalDiagnosisDB:
        # private attributes read through the pydantic dict holding them: attribute access costs ~1.5 us
        return self.copy_with({
            "patients": dict(self.patients), "orders": list(self.orders), "prescriptions": list(self.prescriptions),
            "diagnoses": list(self.diagnoses), "notes": list(self.notes), "escalations": list(self.escalations)},
            {"_owned": set(), "_cache": self.__pydantic_private__["_cache"]})

    def patient_for_update(self, patient_id: str) -> Patient:
        """The patient, copied into this database first if it is still shared with the one it was copied from."""
        owned = self.__pydantic_private__["_owned"]
        if patient_id not in owned:
            patient = self.patients[patient_id]
            self.patients[patient_id] = patient.model_copy(update={
                name: copy.copy(value) for name, value in patient if isinstance(value, (list, dict))})
            owned.add(patient_id)
        return self.patients[patient_id]

    def unchanged_derived(self, patient_id: str, key: str, build: Callable[[], T]) -> T:
        """``build()`` for a patient no tool has changed in this copy, built once per loaded database and shared by
        its copies (the patient is then the loaded database's own record); built afresh for a changed patient."""
        private = self.__pydantic_private__
        if patient_id in private["_owned"]:
            return build()
        shared = private["_cache"].setdefault(key, {})
        if patient_id not in shared:
            shared[patient_id] = build()
        return shared[patient_id]  # type: ignore[no-any-return]

    def test_index(self) -> dict[str, TestDefinition]:
        """Catalogue tests by normalised name and alias."""
        cache = self.__pydantic_private__["_cache"]
        index = cache.get("test_index")
        if index is None:
            index = {normalize(name): t for t in self.tests.values() for name in (t.name, *t.aliases)}
            cache["test_index"] = index
        return index

    def get_hash(self) -> str:
        private, patients = self.__pydantic_private__, self.patients  # private attributes are slow to read
        cache, owned = private["_cache"], private["_owned"]
        head = self._head(cache)
        if not owned:  # every patient is the loaded database's own: the rest of the content decides the hash
            known: dict[tuple[str, tuple[str, ...]], str] = cache.setdefault("unchanged_patients_hashes", {})
            key = (head, tuple(patients))
            if key not in known:
                if len(known) >= 256:
                    known.clear()
                known[key] = self._digest(head, cache, owned, patients)
            return known[key]
        return self._digest(head, cache, owned, patients)

    def _head(self, cache: dict[str, Any]) -> str:
        """The JSON of everything but the patients and the tests. With every record list empty (nothing written,
        e.g. an episode that only read) it depends on the other values alone, so it is written once for them
        (serialising took ~2.5 us a final step)."""
        values = self.__dict__
        key = []
        for name in type(self).__pydantic_fields__:
            if name in ("patients", "tests"):
                continue
            value = values[name]
            if type(value) is list:
                if value:
                    return self.model_dump_json(exclude={"patients", "tests"})
            elif type(value) is str:
                key.append(value)
            else:
                return self.model_dump_json(exclude={"patients", "tests"})
        heads: dict[tuple[str, ...], str] = cache.setdefault("empty_record_heads", {})
        head = heads.get(tuple(key))
        if head is None:
            if len(heads) >= 64:
                heads.clear()
            head = heads[tuple(key)] = self.model_dump_json(exclude={"patients", "tests"})
        return head

    def _digest(self, head: str, cache: dict[str, Any], owned: set[str], patients: dict[str, Patient]) -> str:
        digest = hashlib.sha256(head.encode())
        digests: dict[str, str] = cache.setdefault("digests", {})
        if "tests" not in digests:
            digests["tests"] = sha256_hex(canonical_json({k: t.model_dump(mode="json") for k, t in self.tests.items()}))
        digest.update(digests["tests"].encode())
        # One update with every "id:digest" joined is the same hash as one update each. Unchanged patients' part is
        # joined once per loaded database (keyed by the patient ids, in case a copy ever adds one).
        shared_key = ("patients_part", tuple(patients))
        part = None if owned else cache.get(shared_key)
        if part is None:
            parts = []
            for patient_id in sorted(patients):
                patient = patients[patient_id]
                if patient_id in owned:
                    digest_of = sha256_hex(patient.model_dump_json())
                else:
                    digest_of = digests.get(patient_id) or digests.setdefault(patient_id,
                                                                              sha256_hex(patient.model_dump_json()))
                parts.append(f"{patient_id}:{digest_of}")
            part = "".join(parts).encode()
            if not owned:
                cache[shared_key] = part
        digest.update(part)
        return digest.hexdigest()
