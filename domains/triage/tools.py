"""The Triage tools: the arriving patient's presentation, vital signs, history, red flags, primary survey and
expected resources, and the ESI reference (READ); a danger-zone vital-sign check (THINK); bedside tests,
immediate interventions, the ESI level, code activation, physician escalation and the triage note (WRITE).

Tools refuse with ``KeyError`` / ``ValueError`` messages meant for the agent (unknown patient, test or
intervention). Every WRITE tool appends to the database it was built with: the environment gives each episode its
own copy.
"""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import Interval, MinLen

from clinical_gym.cases.schema import normalize
from clinical_gym.domains.lookups import PatientLookup, did_you_mean
from clinical_gym.domains.triage.esi import danger_zone, expected_resources
from clinical_gym.domains.triage.data_model import (
    BedsideResult,
    BedsideTestDefinition,
    BedsideTestRecord,
    Catalogue,
    CodeActivation,
    EsiAssignment,
    InterventionDefinition,
    InterventionRecord,
    Patient,
    PhysicianEscalation,
    ReferenceTopic,
    TriageCode,
    TriageDB,
    TriageNote,
    Urgency,
)
from clinical_gym.tools import ToolKind, Toolkit, tool

PatientId = Annotated[str, MinLen(1)]
Text = Annotated[str, MinLen(1)]

# Where each ESI level sends the patient; ESI 3-5 wait in the waiting room.
PLACEMENT: dict[int, str] = {
    1: "resuscitation bay now; physician at the bedside immediately",
    2: "acute bed now; nurse assessment immediately and physician review within minutes",
    3: "majors area when a cubicle is free; repeat vital signs while waiting",
    4: "waiting room for the minor-injuries stream; reassess if anything changes",
    5: "waiting room for the minor-illness stream; reassess if anything changes",
}
CODE_TEAMS: dict[str, str] = {
    "stroke": "stroke team and CT scanner alerted",
    "STEMI": "cardiology and the catheterisation laboratory alerted",
    "sepsis": "sepsis pathway started: cultures, lactate and antibiotics within the hour",
    "trauma": "trauma team assembling in the resuscitation bay",
    "cardiac arrest": "resuscitation team called to the patient",
}


def result_view(test: str, result: BedsideResult) -> dict[str, Any]:
    """A bedside result as the agent sees it: the value with unit, reference limits and flag, or the report."""
    view: dict[str, Any] = {"test": test, **result.model_dump(exclude_defaults=True)}
    if result.value is not None:
        view["flag"] = result.flag
    return view


class TriageTools(PatientLookup[Patient], Toolkit):
    """The domain's tools over one database (an episode's copy)."""

    patient_id_example = "E001"

    def __init__(self, db: TriageDB) -> None:
        self.db = db

    # -- helpers ---------------------------------------------------------------------------------------------------
    def _lookup(self, catalogue: Catalogue, name: str, what: str) -> str:
        index = self.db.name_index(catalogue)
        canonical = index.get(normalize(name))
        if canonical is None:
            hint = did_you_mean(name, index, index.__getitem__)
            raise ValueError(f"unknown {what} {name!r}.{hint} Choose one of: {', '.join(getattr(self.db, catalogue))}.")
        return canonical

    def find_test(self, name: str) -> tuple[str, BedsideTestDefinition]:
        """The catalogue bedside test ``name`` (or another name for it) refers to; ValueError with close names
        otherwise."""
        canonical = self._lookup("bedside_tests_catalogue", name, "bedside test")
        return canonical, self.db.bedside_tests_catalogue[canonical]

    def find_intervention(self, name: str) -> tuple[str, InterventionDefinition]:
        """The catalogue intervention ``name`` (or another name for it) refers to; ValueError with close names
        otherwise."""
        canonical = self._lookup("interventions_catalogue", name, "intervention")
        return canonical, self.db.interventions_catalogue[canonical]

    # -- READ: the patient -------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def get_patient_presentation(self, patient_id: PatientId) -> dict[str, Any]:
        """The arriving patient's presentation: demographics, how and when they arrived, the chief complaint and the
        history of the complaint as told at the triage desk.

        Args:
            patient_id: The patient's id, e.g. "E001".
        """
        p = self._patient(patient_id)
        view: dict[str, Any] = {"patient_id": p.patient_id, "name": p.name, "age": p.age_text, "sex": p.sex,
                                "weight_kg": p.weight_kg}
        if p.sex == "female" and 12 <= p.age_years <= 55:
            view["pregnant"] = "unknown" if p.pregnant is None else p.pregnant
            if p.gestation_weeks is not None:
                view["gestation_weeks"] = p.gestation_weeks
        view.update(arrival_time=p.arrival_time, arrival_mode=p.arrival_mode, chief_complaint=p.chief_complaint,
                    history=p.history)
        return view

    @tool(kind=ToolKind.READ)
    def get_vital_signs(self, patient_id: PatientId) -> list[dict[str, Any]]:
        """The patient's triage observations, oldest first: temperature (°C), heart rate, blood pressure,
        respiratory rate, SpO2 (%), supplemental oxygen, pain score (0-10) and level of consciousness (ACVPU).
        A null value could not be measured.

        Args:
            patient_id: The patient's id, e.g. "E001".
        """
        return [v.model_dump() for v in self._patient(patient_id).vitals]

    @tool(kind=ToolKind.READ)
    def get_medical_history(self, patient_id: PatientId) -> dict[str, Any]:
        """The patient's past medical history, current medications, allergies (with reaction and severity), social
        history and, for children, immunisations.

        Args:
            patient_id: The patient's id, e.g. "E001".
        """
        p = self._patient(patient_id)
        view: dict[str, Any] = {
            "past_history": p.past_history or ["none"],
            "medications": [m.model_dump() for m in p.medications],
            "allergies": [a.model_dump() for a in p.allergies] or "no known drug allergies",
            "social_history": p.social_history,
        }
        if p.immunisations:
            view["immunisations"] = p.immunisations
        return view

    @tool(kind=ToolKind.READ)
    def check_red_flags(self, patient_id: PatientId) -> dict[str, Any]:
        """Screen the presentation for red flags: findings that signal a high-risk or time-critical situation,
        including suicide and self-harm risk.

        Args:
            patient_id: The patient's id, e.g. "E001".
        """
        p = self._patient(patient_id)
        if not p.red_flags:
            return {"red_flags": [], "summary": "No red flags found in the presentation; continue the ESI "
                                                "algorithm."}
        return {"red_flags": [f.model_dump() for f in p.red_flags],
                "summary": f"{len(p.red_flags)} red flag(s): decide whether this is a high-risk situation."}

    @tool(kind=ToolKind.READ)
    def assess_airway_breathing_circulation(self, patient_id: PatientId) -> dict[str, Any]:
        """The primary survey at triage: airway, breathing, circulation, disability (level of consciousness, the
        Glasgow Coma Scale components observed, pupils) and exposure.

        Args:
            patient_id: The patient's id, e.g. "E001".
        """
        s = self._patient(patient_id).primary_survey
        return {"airway": s.airway, "breathing": s.breathing, "circulation": s.circulation,
                "disability": s.disability, "gcs_components": {"eye": s.gcs_eye, "verbal": s.gcs_verbal,
                                                               "motor": s.gcs_motor},
                "exposure": s.exposure}

    @tool(kind=ToolKind.READ)
    def count_expected_resources(self, patient_id: PatientId) -> dict[str, Any]:
        """The care this presentation is expected to need before a disposition, each item classified by ESI
        resource category, and the resource count: distinct categories that are resources (a complex procedure
        counts two; history and examination, point-of-care tests, oral drugs, prescriptions, tetanus, simple
        dressings, splints and crutches count none).

        Args:
            patient_id: The patient's id, e.g. "E001".
        """
        return expected_resources(self.db, self._patient(patient_id))

    @tool(kind=ToolKind.READ)
    def get_esi_reference(self, topic: ReferenceTopic) -> dict[str, Any] | str:
        """Reference for the Emergency Severity Index: the algorithm's decision points, danger-zone vital signs by
        age, what counts as a resource, life-saving interventions, code activation criteria, or fever in infants.

        Args:
            topic: "algorithm", "danger_zone_vitals", "resources", "life_saving_interventions", "codes" or
                "paediatric_fever".
        """
        db = self.db
        if topic == "danger_zone_vitals":
            return {"bands": [b.model_dump() for b in db.danger_zone], "spo2_below": db.danger_zone_spo2_below,
                    "note": db.protocol[topic]}
        if topic == "resources":
            return {"categories": {name: {"counts": c.counts, "description": c.description,
                                          "examples": [i for i, cat in db.care_items.items() if cat == name]}
                                   for name, c in db.resource_categories.items()},
                    "note": db.protocol[topic]}
        if topic == "life_saving_interventions":
            return {"life_saving": {n: i.description for n, i in db.interventions_catalogue.items() if i.life_saving},
                    "not_life_saving": {n: i.description for n, i in db.interventions_catalogue.items()
                                        if not i.life_saving},
                    "note": db.protocol[topic]}
        return db.protocol[topic]

    # -- THINK -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.THINK)
    def check_danger_zone_vitals(self, age_years: Annotated[float, Interval(ge=0, le=120)],
                                 heart_rate: Annotated[int, Interval(ge=0, le=350)],
                                 respiratory_rate: Annotated[int, Interval(ge=0, le=120)],
                                 spo2: Annotated[int, Interval(ge=0, le=100)]) -> dict[str, Any]:
        """Compare vital signs with the ESI danger-zone limits for the patient's age (decision point D: a patient
        needing two or more resources with danger-zone vital signs is considered for ESI 2).

        Args:
            age_years: Age in years, fractions for infants, e.g. 67 or 0.5 (six months).
            heart_rate: Heart rate in beats/min, e.g. 112.
            respiratory_rate: Respiratory rate in breaths/min, e.g. 24.
            spo2: Oxygen saturation in percent, e.g. 95.
        """
        return danger_zone(self.db, age_years, heart_rate, respiratory_rate, spo2)

    # -- WRITE -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def perform_bedside_test(self, patient_id: PatientId, test: Text) -> dict[str, Any]:
        """Perform a point-of-care test at triage (12-lead ECG, capillary blood glucose, blood ketones, venous
        lactate, urine pregnancy test, urine dipstick, peak expiratory flow); the result comes back at once.

        Args:
            patient_id: The patient's id, e.g. "E001".
            test: The bedside test, e.g. "12-lead ECG" or "capillary blood glucose".
        """
        p = self._patient(patient_id)
        name, definition = self.find_test(test)
        if definition.sex is not None and definition.sex != p.sex:
            raise ValueError(f"{name} does not apply to a {p.sex} patient")
        result = p.bedside_results.get(name, definition.normal)
        self.db.bedside_tests.append(BedsideTestRecord(patient_id=p.patient_id, test=name, result=result,
                                                       time=self.db.clock))
        return result_view(name, result)

    @tool(kind=ToolKind.WRITE)
    def order_immediate_intervention(self, patient_id: PatientId, intervention: Text,
                                     indication: str = "") -> dict[str, Any]:
        """Start an intervention at once: a life-saving one (ventilation, defibrillation, pacing, decompression,
        haemorrhage control, fluid resuscitation, intravenous glucose, intramuscular adrenaline, naloxone, ...) or
        a standing order (oxygen, monitoring, cannula, aspirin, nebulised salbutamol, observation, splint, ...).
        A drug is given at its standard single adult dose; check allergies first.

        Args:
            patient_id: The patient's id, e.g. "E001".
            intervention: The intervention, e.g. "intramuscular adrenaline" or "supplemental oxygen";
                get_esi_reference("life_saving_interventions") lists them all.
            indication: Why, e.g. "anaphylaxis with stridor".
        """
        p = self._patient(patient_id)
        name, definition = self.find_intervention(intervention)
        self.db.interventions.append(InterventionRecord(patient_id=p.patient_id, intervention=name,
                                                        indication=indication, time=self.db.clock))
        given: dict[str, Any] = {"intervention": name, "life_saving": definition.life_saving}
        if definition.drug is not None:
            given["drug"] = {"name": definition.drug, "dose_mg": definition.dose_mg, "route": definition.route}
        given["response"] = p.intervention_responses.get(name, definition.default_response)
        return given

    @tool(kind=ToolKind.WRITE)
    def assign_esi_level(self, patient_id: PatientId, level: Annotated[int, Interval(ge=1, le=5)],
                         reason: Text) -> dict[str, Any]:
        """Assign the patient's ESI triage level (1 most urgent to 5 least); it decides where the patient goes and
        how soon they are seen. A later assignment replaces an earlier one.

        Args:
            patient_id: The patient's id, e.g. "E001".
            level: The ESI level, 1 to 5.
            reason: The decision point that sets it, e.g. "high-risk situation: possible stroke within the window".
        """
        p = self._patient(patient_id)
        earlier = [a.esi_level for a in self.db.esi_assignments if a.patient_id == p.patient_id]
        self.db.esi_assignments.append(EsiAssignment(patient_id=p.patient_id, esi_level=level, reason=reason,
                                                     time=self.db.clock))
        view: dict[str, Any] = {"patient_id": p.patient_id, "esi_level": level, "placement": PLACEMENT[level]}
        if earlier:
            view["replaces_esi_level"] = earlier[-1]
        return view

    @tool(kind=ToolKind.WRITE)
    def activate_code(self, patient_id: PatientId, code: TriageCode, reason: Text) -> str:
        """Activate a time-critical pathway: the stroke, STEMI, sepsis, trauma or cardiac arrest code, which calls
        its team to the patient.

        Args:
            patient_id: The patient's id, e.g. "E001".
            code: "stroke", "STEMI", "sepsis", "trauma" or "cardiac arrest".
            reason: The criteria met, e.g. "right arm weakness and dysphasia, last known well 45 minutes ago".
        """
        p = self._patient(patient_id)
        self.db.code_activations.append(CodeActivation(patient_id=p.patient_id, code=code, reason=reason,
                                                       time=self.db.clock))
        return f"{code} code activated for {p.patient_id}: {CODE_TEAMS[code]}."

    @tool(kind=ToolKind.WRITE)
    def escalate_to_physician(self, patient_id: PatientId, urgency: Urgency, reason: Text) -> str:
        """Ask the emergency physician to see the patient: "immediate" (come to the bedside now) or "urgent" (next
        patient seen).

        Args:
            patient_id: The patient's id, e.g. "E001".
            urgency: "immediate" or "urgent".
            reason: Why, in a sentence.
        """
        p = self._patient(patient_id)
        self.db.physician_escalations.append(PhysicianEscalation(patient_id=p.patient_id, urgency=urgency,
                                                                 reason=reason, time=self.db.clock))
        return f"Physician asked to see {p.patient_id} ({urgency})."

    @tool(kind=ToolKind.WRITE)
    def record_triage_note(self, patient_id: PatientId, note: Text) -> str:
        """Write the triage note: the assessment, the ESI level and why, what was started and the plan.

        Args:
            patient_id: The patient's id, e.g. "E001".
            note: The note text.
        """
        p = self._patient(patient_id)
        self.db.triage_notes.append(TriageNote(patient_id=p.patient_id, note=note, time=self.db.clock))
        return f"Triage note recorded for {p.patient_id}."
