"""The ClinicalDiagnosis tools: reading the chart (READ), ordering tests, prescribing, recording a diagnosis,
writing notes and escalating care (WRITE), drug safety checks (READ), and a differential generator (THINK).

Tools refuse with ``KeyError`` / ``ValueError`` messages meant for the agent (unknown patient, test or drug).
Every WRITE tool changes only the database it was built with: the environment gives each episode its own copy.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any

from annotated_types import Interval, MinLen

from clinical_gym.cases.disease_table import disease_table
from clinical_gym.cases.schema import normalize
from clinical_gym.drugs import reference
from clinical_gym.domains.clinical_diagnosis.data_model import (
    ClinicalDiagnosisDB,
    DiagnosisRecord,
    DoseUnit,
    Escalation,
    EscalationLevel,
    Frequency,
    LabResult,
    Order,
    Patient,
    Prescription,
    Route,
    TestCategory,
    TestDefinition,
    WrittenNote,
)
from clinical_gym.domains.lookups import PatientLookup, did_you_mean, drug_facts, formulary_drug
from clinical_gym.domains.records import result_view
from clinical_gym.tools import ToolKind, Toolkit, tool

PatientId = Annotated[str, MinLen(1)]
Text = Annotated[str, MinLen(1)]


class ClinicalDiagnosisTools(PatientLookup[Patient], Toolkit):
    """The domain's tools over one database (an episode's copy)."""

    patient_id_example = "P001"
    find_drug = staticmethod(formulary_drug)

    def __init__(self, db: ClinicalDiagnosisDB) -> None:
        self.db = db

    # -- helpers ---------------------------------------------------------------------------------------------------
    def find_test(self, name: str) -> TestDefinition:
        """The catalogue test ``name`` (or an alias) refers to; ValueError with close names otherwise."""
        index = self.db.test_index()
        definition = index.get(normalize(name))
        if definition is None:
            hint = did_you_mean(name, index, lambda c: index[c].name, unique=False)
            raise ValueError(f"unknown test {name!r}.{hint} Use list_available_tests to see the catalogue.")
        return definition

    def _new_prescriptions(self, patient_id: str) -> list[Prescription]:
        return [p for p in self.db.prescriptions if p.patient_id == patient_id]

    # -- READ: the chart ---------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def get_patient_info(self, patient_id: PatientId) -> dict[str, Any]:
        """Demographics of a patient: name, age, sex, weight, pregnancy status and social history.

        Args:
            patient_id: The patient's id, e.g. "P001".
        """
        p = self._patient(patient_id)
        info: dict[str, Any] = {"patient_id": p.patient_id, "name": p.name, "age": p.age, "sex": p.sex,
                                "weight_kg": p.weight_kg}
        if p.sex == "female":
            info["pregnant"] = "unknown" if p.pregnant is None else p.pregnant
            if p.gestation_weeks is not None:
                info["gestation_weeks"] = p.gestation_weeks
        info["social_history"] = p.social_history
        return info

    @tool(kind=ToolKind.READ)
    def get_medical_history(self, patient_id: PatientId) -> dict[str, Any]:
        """Past and current medical conditions and the family history of a patient.

        Args:
            patient_id: The patient's id, e.g. "P001".
        """
        p = self._patient(patient_id)
        return {"conditions": [c.model_dump() for c in p.conditions], "family_history": p.family_history}

    @tool(kind=ToolKind.READ)
    def get_allergies(self, patient_id: PatientId) -> dict[str, Any]:
        """Documented allergies of a patient, with the reaction and its severity.

        Args:
            patient_id: The patient's id, e.g. "P001".
        """
        p = self._patient(patient_id)
        if not p.allergies:
            return {"allergies": [], "summary": "No known drug allergies."}
        return {"allergies": [a.model_dump() for a in p.allergies]}

    @tool(kind=ToolKind.READ)
    def get_medications(self, patient_id: PatientId) -> dict[str, Any]:
        """The patient's current medications, and anything prescribed during this encounter.

        Args:
            patient_id: The patient's id, e.g. "P001".
        """
        p = self._patient(patient_id)
        return {"current": [m.model_dump() for m in p.medications],
                "started_this_encounter": [rx.model_dump(exclude={"patient_id"})
                                           for rx in self._new_prescriptions(p.patient_id)]}

    @tool(kind=ToolKind.READ)
    def get_vital_signs(self, patient_id: PatientId) -> list[dict[str, Any]]:
        """The patient's recorded vital signs, oldest first: temperature (°C), heart rate, blood pressure, respiratory
        rate, SpO2 (%), supplemental oxygen and level of consciousness.

        Args:
            patient_id: The patient's id, e.g. "P001".
        """
        return [v.model_dump() for v in self._patient(patient_id).vitals]

    @tool(kind=ToolKind.READ)
    def get_lab_results(self, patient_id: PatientId, test: str | None = None) -> list[dict[str, Any]]:
        """Available results (laboratory, imaging, ECG, microbiology) with units, reference ranges and flags; tests
        ordered this encounter appear once resulted.

        Args:
            patient_id: The patient's id, e.g. "P001".
            test: Only results of this test, e.g. "Potassium" (all results when omitted).
        """
        p = self._patient(patient_id)
        results = p.labs
        if test is not None:
            wanted = self.find_test(test).name
            results = [r for r in results if r.test == wanted]
            if not results:
                return [{"test": wanted, "result": "no result available; order the test to get one"}]
        return [result_view(r) for r in results]

    @tool(kind=ToolKind.READ)
    def get_clinical_notes(self, patient_id: PatientId) -> list[dict[str, Any]]:
        """The patient's clinical notes (triage, nursing and medical notes), oldest first, then notes written
        during this encounter.

        Args:
            patient_id: The patient's id, e.g. "P001".
        """
        p = self._patient(patient_id)
        written = [{"time": self.db.clock, "author": "you", "text": n.text} for n in self.db.notes
                   if n.patient_id == p.patient_id]
        return [n.model_dump() for n in p.notes] + written

    @tool(kind=ToolKind.READ)
    def list_available_tests(self, category: TestCategory | None = None) -> dict[str, list[str]]:
        """The tests that can be ordered, by category.

        Args:
            category: Only this category: "laboratory", "imaging", "cardiac", "microbiology", "bedside" or
                "pathology" (all when omitted).
        """
        listed: dict[str, list[str]] = {}
        for definition in self.db.tests.values():
            if category is None or definition.category == category:
                listed.setdefault(definition.category, []).append(definition.name)
        return listed

    # -- READ: drug safety -----------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def check_drug_allergy(self, patient_id: PatientId, drug: Text) -> dict[str, Any]:
        """Check a drug against the patient's documented allergies, including cross-reactive drug groups.

        Args:
            patient_id: The patient's id, e.g. "P001".
            drug: Generic drug name, e.g. "cefalexin".
        """
        p, d = self._patient(patient_id), self.find_drug(drug)
        conflicts = []
        for allergy in p.allergies:
            conflict = reference().allergy_conflict(allergy.substance, d)
            if conflict:
                conflicts.append({"allergen": allergy.substance, "reaction": allergy.reaction,
                                  "severity": allergy.severity,
                                  "conflict": "same drug or drug group" if conflict == "same"
                                  else "cross-reactive drug group"})
        return {"drug": d.name, "allergy_group": d.allergy_group, "conflicts": conflicts,
                "summary": "no documented allergy conflicts" if not conflicts else "ALLERGY CONFLICT"}

    @tool(kind=ToolKind.READ)
    def check_drug_interactions(self, patient_id: PatientId, drug: Text) -> dict[str, Any]:
        """Check a drug against the patient's current medications and this encounter's prescriptions for
        interactions, with severity and mechanism.

        Args:
            patient_id: The patient's id, e.g. "P001".
            drug: Generic drug name, e.g. "clarithromycin".
        """
        p, d = self._patient(patient_id), self.find_drug(drug)
        others = [m.name for m in p.medications] + [rx.drug for rx in self._new_prescriptions(p.patient_id)]
        found = reference().interactions_with(d, others)
        return {"drug": d.name, "checked_against": others,
                "interactions": [{"with": i.drugs[1], "severity": i.severity, "mechanism": i.mechanism,
                                  "management": i.management} for i in found]}

    @tool(kind=ToolKind.READ)
    def get_drug_information(self, drug: Text) -> dict[str, Any]:
        """Reference information on a drug: classes, allergy group, maximum adult daily dose and limits by
        indication, renal dosing bands, and pregnancy and breastfeeding advice.

        Args:
            drug: Generic drug name, e.g. "nitrofurantoin".
        """
        return drug_facts(self.find_drug(drug))

    # -- WRITE -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def order_lab_test(self, patient_id: PatientId, test: Text) -> dict[str, Any]:
        """Order a test or panel (laboratory, imaging, ECG, microbiology, bedside); results come back at once and
        are added to the patient's results.

        Args:
            patient_id: The patient's id, e.g. "P001".
            test: The test or panel name from the catalogue, e.g. "Troponin", "Full blood count", "ECG" or
                "Chest X-ray".
        """
        definition = self.find_test(test)
        p = self.db.patient_for_update(self._patient(patient_id).patient_id)
        order = Order(order_id=f"ORD-{len(self.db.orders) + 1:03d}", patient_id=p.patient_id, test=definition.name,
                      time=self.db.clock)
        self.db.orders.append(order)
        parts = [self.db.tests[c] for c in definition.components] or [definition]
        results = [p.pending_results.pop(part.name, None) or LabResult(
            test=part.name, time=self.db.clock, value=part.normal_value, unit=part.unit, ref_low=part.ref_low,
            ref_high=part.ref_high, text=part.normal_text) for part in parts]
        p.labs.extend(results)
        return {"order_id": order.order_id, "results": [result_view(r) for r in results]}

    @tool(kind=ToolKind.WRITE)
    def prescribe_medication(self, patient_id: PatientId, drug: Text, dose: Annotated[float, Interval(gt=0)],
                             unit: DoseUnit, frequency: Frequency, route: Route, indication: str = "") -> dict[str, Any]:
        """Prescribe a medication. The prescription is recorded as written; check allergies and interactions first.

        Args:
            patient_id: The patient's id, e.g. "P001".
            drug: Generic drug name, e.g. "doxycycline".
            dose: The amount per dose, e.g. 100.
            unit: The unit of the dose: "mg", "mcg", "g", "units", "mL" or "mmol".
            frequency: How often: "once" (a single dose), "daily", "bid", "tid", "qid", "q4h", "q6h", "q8h", "q12h"
                or "weekly".
            route: "oral", "intravenous", "intramuscular", "subcutaneous", "inhaled", "nebulised", "sublingual",
                "topical" or "rectal".
            indication: What it is for, e.g. "community-acquired pneumonia".
        """
        p, d = self._patient(patient_id), self.find_drug(drug)
        rx = Prescription(prescription_id=f"RX-{len(self.db.prescriptions) + 1:03d}", patient_id=p.patient_id,
                          drug=d.name, dose=dose, unit=unit, frequency=frequency, route=route, indication=indication)
        self.db.prescriptions.append(rx)
        return {"prescription_id": rx.prescription_id, "status": "prescribed",
                "prescription": rx.model_dump(exclude={"patient_id"})}

    @tool(kind=ToolKind.WRITE)
    def record_diagnosis(self, patient_id: PatientId, diagnosis: Text, icd10: str = "") -> str:
        """Record a diagnosis in the patient's chart.

        Args:
            patient_id: The patient's id, e.g. "P001".
            diagnosis: The diagnosis, e.g. "Community-acquired pneumonia".
            icd10: Its ICD-10 code if known, e.g. "J18.9".
        """
        p = self._patient(patient_id)
        self.db.diagnoses.append(DiagnosisRecord(patient_id=p.patient_id, diagnosis=diagnosis, icd10=icd10))
        return f"Diagnosis recorded for {p.patient_id}."

    @tool(kind=ToolKind.WRITE)
    def write_clinical_note(self, patient_id: PatientId, note: Text) -> str:
        """Write a note in the patient's chart (assessment, plan, safety-netting).

        Args:
            patient_id: The patient's id, e.g. "P001".
            note: The note text.
        """
        p = self._patient(patient_id)
        self.db.notes.append(WrittenNote(patient_id=p.patient_id, text=note))
        return f"Note added to the chart of {p.patient_id}."

    @tool(kind=ToolKind.WRITE)
    def escalate_care(self, patient_id: PatientId, level: EscalationLevel, reason: Text) -> str:
        """Escalate the patient's care now: call the emergency team, intensive care, emergency surgery, the cardiac
        catheterisation team or the stroke team, or make a specialist referral.

        Args:
            patient_id: The patient's id, e.g. "P001".
            level: "emergency team", "intensive care", "emergency surgery", "cardiac catheterisation", "stroke team"
                or "specialist referral".
            reason: Why, in a sentence.
        """
        p = self._patient(patient_id)
        self.db.escalations.append(Escalation(patient_id=p.patient_id, level=level, reason=reason))
        return f"Escalated to {level} for {p.patient_id}."

    # -- THINK -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.THINK)
    def generate_differential(self, findings: Annotated[list[str], MinLen(1)],
                              k: Annotated[int, Interval(ge=1, le=10)] = 5) -> list[dict[str, Any]]:
        """Rank conditions from the disease knowledge table by how many of the given findings they typically show.

        Args:
            findings: Findings in plain words, e.g. ["fever", "productive cough", "crackles"].
            k: How many conditions to return, 1 to 10.
        """
        ranked = []
        for disease, features in _disease_features():
            matched = [f for f in findings if _words(f) and _words(f) <= features]
            if matched:
                ranked.append((-len(matched), disease, matched))
        ranked.sort(key=lambda item: (item[0], item[1]))
        return [{"condition": name, "matched_findings": matched, "of": len(findings)}
                for _, name, matched in ranked[:k]]


_STOP = frozenset("a an and the of with in on to or at for left right".split())


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in normalize(text).split() if w not in _STOP)


@lru_cache(maxsize=1)
def _disease_features() -> tuple[tuple[str, frozenset[str]], ...]:
    """(name, words of its complaint, symptoms, exam findings and results) per disease of the table."""
    features = []
    for d in disease_table():
        texts = [d.chief_complaint, *(s.symptom.replace("_", " ") for s in d.symptoms),
                 *(f.text for f in d.exam_findings), *(r.text for r in d.results), *(lab.component for lab in d.labs)]
        features.append((d.name, frozenset().union(*(_words(t) for t in texts))))
    return tuple(features)
