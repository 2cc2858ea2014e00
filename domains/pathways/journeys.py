"""The ClinicalPathway generator's journeys beyond sepsis and diabetic emergencies (``AcuteJourneys``, mixed into
``PathwayGenerator``): acute chest pain, acute stroke, post-operative deterioration and the febrile child. Each
journey is a whole patient record (presentation or ward course, observations, results the orders return, notes,
medicines, allergies) and a task whose actions are computed from that record by ``domains/pathways/guidelines.py``;
``check_acute`` computes them again from the stored record for the validator.

* Acute chest pain (``chest_pain``): the arrival from the Triage generator's presentations (ST-elevation pain; a
  chest-wall pain; for the non-ST-elevation infarction the same pain with an ECG showing ST depression). ST elevation
  activates the STEMI code and goes to the catheterisation laboratory; otherwise the 0 h high-sensitivity troponin
  decides (ESC 2020 0 h/1 h: 52 ng/L or more, NSTEMI, cardiology and the coronary care unit; below 5 ng/L with pain
  for over 3 hours, ruled out, paracetamol and home). Acute coronary syndromes get aspirin 300 mg and a P2Y12
  loading dose: ticagrelor 180 mg, or clopidogrel 600 mg when the record rules ticagrelor out (ESC 2023;
  ``ClinicalDiagnosisGenerator.blocked``: allergy, major interaction, renal band; a fifth of the patients take
  carbamazepine or phenytoin, strong CYP3A4 inducers the ticagrelor label advises against).
* Acute stroke (``stroke_code``): last known well drawn against the 10:00 clock. Ischaemic stroke without a barrier
  (``thrombolysis_barriers``: 4.5 hours, 185/110 mmHg) gets alteplase 0.9 mg/kg, at most 90 mg, worked out with the
  weight-based calculator; beyond 4.5 hours aspirin 300 mg (NICE NG128 1.4.1, once haemorrhage is excluded);
  an intracerebral haemorrhage gets labetalol when its systolic pressure is 150-220 mmHg (NICE NG128 1.5.2), never a
  thrombolytic or an antiplatelet. All go to the hyperacute stroke unit.
* Post-operative deterioration (``postop_complication``): a ward patient one or two days after an operation. NEWS2
  from the latest observations (the shared ``news2`` instrument) sets the response (``news2_response``): the
  emergency team at 7 or more, otherwise an urgent or ward review note. Bleeding: enoxaparin withheld, red cells
  by ``red_cell_units`` (two units for a class III-IV haemorrhage, one below 70 g/L otherwise), back to theatre. Opioid toxicity: naloxone 200 micrograms, morphine stopped,
  the high dependency unit. Acute kidney injury (KDIGO stage from the baseline creatinine): the NSAID stopped, the
  sick-day medicines withheld (NICE NG148), a 500 mL bolus, the surgical ward.
* Febrile child (``paediatric_fever``), NICE NG143 traffic lights: a green child with a viral illness gets
  paracetamol 15 mg/kg and goes home with safety-net advice; a child with a non-blanching rash and poor perfusion
  (red) gets the sepsis code, ceftriaxone 80 mg/kg (at most 4 g) and a 10 mL/kg bolus and goes to paediatric
  intensive care; an infant under 3 months with fever (red by age) and a urinary source gets the septic screen, a
  lumbar puncture under 1 month or when the white cell count is outside 5-15 x10^9/L, a third-generation
  cephalosporin (cefotaxime 50 mg/kg every 8 hours under 1 month, where ceftriaxone is avoided; ceftriaxone 80 mg/kg
  from 1 month; BNF for Children, as the pathway's protocol says) and amoxicillin 50 mg/kg for listeria, and the
  paediatric ward.

Generalisation split (``ACUTE_VARIANTS``): the test split holds the non-ST-elevation infarction (decided by troponin
alone), intracerebral haemorrhage, post-operative acute kidney injury and the febrile young infant; train holds
STEMI and the ruled-out chest-wall pain, thrombolysis and the late ischaemic stroke, post-operative bleeding and
opioid toxicity, and the green and the red (meningococcal) child.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from clinical_gym.drugs import reference
from clinical_gym.drugs.units import ckd_epi_egfr
from clinical_gym.tool_env.generation import between, chance, pick, sample
from clinical_gym.tool_env.tasks import Task
from clinical_gym.tools.instruments.critical_care import news2
from clinical_gym.domains.clinical_diagnosis.environment import bundled_db as chart_db
from clinical_gym.domains.clinical_diagnosis.generator import ClinicalDiagnosisGenerator, Regimen
from clinical_gym.domains.pathways.data_model import Arrival, LabResult, Medication, PathwayPatient, triage_view
from clinical_gym.domains.pathways.guidelines import (
    alteplase_dose,
    chest_pain_outcome,
    ich_lowers_pressure,
    lumbar_puncture_needed,
    naloxone_indicated,
    news2_response,
    red_cell_units,
    thrombolysis_barriers,
    traffic_light,
    aki_stage,
    weight_based_dose,
)
from clinical_gym.domains.pathways.phases import PathwayTask
from clinical_gym.domains.records import Allergy, Note
from clinical_gym.domains.triage.data_model import Patient as TriagePatient
from clinical_gym.domains.triage.data_model import VitalSigns
from clinical_gym.domains.triage.environment import bundled_db as triage_db
from clinical_gym.domains.triage.esi import esi_decision
from clinical_gym.domains.triage.presentations import PRESENTATIONS, Bedside, Observations, Presentation, Survey

CHEST, STROKE, POSTOP, FEVER = "chest_pain", "stroke_code", "postop_complication", "paediatric_fever"
# (journey, variant, pool): a variant's key is its task's pool key, distinct across journeys.
ACUTE_VARIANTS: tuple[tuple[str, str, str], ...] = (
    (CHEST, "stemi", "train"), (CHEST, "chest_wall", "train"), (CHEST, "nstemi", "test"),
    (STROKE, "thrombolysis", "train"), (STROKE, "late_ischaemic", "train"), (STROKE, "ich", "test"),
    (POSTOP, "bleeding", "train"), (POSTOP, "opioid", "train"), (POSTOP, "aki", "test"),
    (FEVER, "green_child", "train"), (FEVER, "meningococcal", "train"), (FEVER, "young_infant", "test"),
)
STEMI_ECGS = (  # (ECG text, territory, ICD-10)
    ("Sinus rhythm. ST elevation of {mm} mm in II, III and aVF with reciprocal depression in I and aVL.", "Inferior",
     "I21.1"),
    ("Sinus rhythm. ST elevation of {mm} mm in V1 to V4.", "Anterior", "I21.0"),
    ("Sinus rhythm. ST elevation of {mm} mm in I, aVL, V5 and V6 with reciprocal depression in III.", "Lateral",
     "I21.2"),
)
ISCHAEMIC_ECGS = ("Sinus rhythm. Horizontal ST depression of {mm} mm in V4 to V6; no ST elevation.",
                  "Sinus rhythm. T-wave inversion in V2 to V5 and ST depression of {mm} mm in I; no ST elevation.")
P2Y12 = (Regimen("ticagrelor", 180, "mg", "once"), Regimen("clopidogrel", 600, "mg", "once"))
OPERATIONS = {  # variant -> (operation, day) pairs; bleeding follows abdominal operations
    "bleeding": ("laparoscopic cholecystectomy", "right hemicolectomy", "open incisional hernia repair"),
    "opioid": ("total knee replacement", "open right hemicolectomy", "total hip replacement"),
    "aki": ("anterior resection", "open abdominal aortic aneurysm repair", "total hip replacement"),
}
CONSCIOUSNESS = {"alert": "alert", "new confusion": "new_confusion", "voice": "voice", "pain": "pain",
                 "unresponsive": "unresponsive"}
_TIME = re.compile(r"(?:Last known well|Pain began) (?:at )?(\d{2}):(\d{2})")
_HOURS = re.compile(r"Pain for (\d+) hours")
_REFILL = re.compile(r"capillary refill (\d+(?:\.\d)?) seconds", re.I)


def _call(name: str, arguments: dict[str, Any], *compare: str) -> dict[str, Any]:
    action: dict[str, Any] = {"name": name, "arguments": arguments}
    if compare:
        action["compare_args"] = list(compare)
    return action


def _called(text: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"text": text, "rule": {"kind": "called", "call": {"name": name, "arguments": arguments}}}


def _not_called(text: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"text": text, "rule": {"kind": "not_called", "call": {"name": name, "arguments": arguments}}}


def _disposed(pid: str, destination: str) -> dict[str, Any]:
    return {"text": f"Goes to the {destination}", "rule": {
        "kind": "db_record", "collection": "dispositions", "match": {"patient_id": pid, "destination": destination}}}


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


def news2_of(v: VitalSigns) -> tuple[int, bool]:
    """NEWS2 of a set of observations by the shared instrument, and whether one parameter scores 3."""
    result = news2(respiratory_rate=v.respiratory_rate, spo2_percent=v.spo2, on_supplemental_oxygen=v.on_oxygen,
                   systolic_bp=v.systolic_bp, pulse=v.heart_rate, consciousness=CONSCIOUSNESS[v.consciousness],
                   temperature_c=v.temperature_c)
    return int(result.score), 3 in result.points.values()


def news2_arguments(v: VitalSigns) -> dict[str, Any]:
    return {"respiratory_rate": v.respiratory_rate, "spo2_percent": v.spo2, "on_supplemental_oxygen": v.on_oxygen,
            "systolic_bp": v.systolic_bp, "pulse": v.heart_rate, "consciousness": CONSCIOUSNESS[v.consciousness],
            "temperature_c": v.temperature_c}


class AcuteJourneys:
    """The chest pain, stroke, post-operative and febrile-child journeys of ``PathwayGenerator`` (which provides
    ``triage``, ``base``, ``resolved``, ``_long_term``, ``_creatinine_for``, ``chart_patient`` and ``record_problems``).
    """

    triage: Any
    base: Any

    # -- shared pieces -------------------------------------------------------------------------------------------------
    def _lab(self, name: str, value: float, at: str) -> LabResult:
        d = chart_db().tests.get(name) or self.base.chart.tests[name]
        return LabResult(test=name, time=at, value=value, unit=d.unit, ref_low=d.ref_low, ref_high=d.ref_high)

    def _text(self, name: str, text: str, at: str) -> LabResult:
        d = chart_db().tests.get(name) or self.base.chart.tests[name]
        return LabResult(test=name, time=at, text=text, unit=d.unit)

    def _arrived(self, rng: np.random.Generator, pres: Presentation, pid: str,
                 **updates: Any) -> tuple[TriagePatient, int]:
        """An arriving patient of ``pres`` (the Triage generator's), seen at the 10:00 clock 12-35 minutes after
        arriving; ``updates`` replace observations of the latest vital signs."""
        arriving = self.triage.patient(rng, pres, pid)
        arrived = 10 * 60 - int(between(rng, 12, 35))
        vitals = [v.model_copy(update={"time": f"{(arrived + 4) // 60:02d}:{(arrived + 4) % 60:02d}", **updates})
                  for v in arriving.vitals]
        return arriving.model_copy(update={"vitals": vitals}), arrived

    def _record(self, arriving: TriagePatient, arrived: int, *, conditions: list[str], medications: list[Medication],
                allergies: list[Allergy], pending: dict[str, LabResult], notes: list[Note],
                bedside: dict[str, Any] | None = None, age_days: int | None = None) -> PathwayPatient:
        return PathwayPatient(
            patient_id=arriving.patient_id, name=arriving.name, age_years=arriving.age_years, age_days=age_days,
            sex=arriving.sex, weight_kg=arriving.weight_kg,
            pregnant=False if arriving.sex == "female" and 12 <= arriving.age_years <= 50 else None,
            conditions=conditions, social_history=arriving.social_history, immunisations=arriving.immunisations,
            allergies=allergies, medications=medications, vitals=arriving.vitals,
            arrival=Arrival(time=f"{arrived // 60:02d}:{arrived % 60:02d}", mode=arriving.arrival_mode,
                            chief_complaint=arriving.chief_complaint, history=arriving.history,
                            primary_survey=arriving.primary_survey, red_flags=arriving.red_flags,
                            anticipated_care=arriving.anticipated_care,
                            bedside_results=bedside if bedside is not None else arriving.bedside_results),
            pending_results=pending, notes=notes)

    def _renal(self, age: int, sex: str, at: str, low: float, high: float, rng: np.random.Generator
               ) -> dict[str, LabResult]:
        """Creatinine for an eGFR drawn from ``low``-``high`` and its CKD-EPI 2021 eGFR, with sodium, potassium and
        urea."""
        creatinine = self._creatinine_for(float(between(rng, low, high)), age, sex)  # type: ignore[attr-defined]
        return {"Creatinine": self._lab("Creatinine", creatinine, at),
                "eGFR": self._lab("eGFR", round(ckd_epi_egfr(age, creatinine, sex)), at),
                "Sodium": self._lab("Sodium", float(between(rng, 134, 143)), at),
                "Potassium": self._lab("Potassium", float(between(rng, 3.6, 5.0, 1)), at),
                "Urea": self._lab("Urea", float(between(rng, 4.0, 9.0, 1)), at)}

    @staticmethod
    def _esi(patient: PathwayPatient) -> Any:
        return esi_decision(triage_db(), TriagePatient.model_validate(triage_view(patient)))

    def _finish(self, rng: np.random.Generator, journey: str, variant: str, task_id: str, patient: PathwayPatient,
                phases: list[dict[str, Any]], answer: str, aliases: list[str], rationale: str,
                safety: dict[str, Any], kind: str, complaint: str = "") -> PathwayTask:
        from clinical_gym.domains.pathways.generator import TICKETS, _pronouns  # the generator imports this module

        pid = patient.patient_id
        complaint = complaint or patient.arrival.chief_complaint.lower()  # type: ignore[union-attr]
        ticket = TICKETS.say(rng, kind, name=patient.name, pid=pid, age=_age_text(patient), complaint=complaint,
                             **_pronouns(patient.sex))
        entry = {"id": task_id, "pathway": journey, "ticket": ticket, "patient_id": pid, "answer": answer,
                 "answer_aliases": aliases, "rationale": rationale,
                 "safety": {"escalate_within_calls": 6, **safety}, "category": "pathway",
                 "tags": ["generated", journey, variant, answer.lower()]}
        return self.resolved(entry, phases)  # type: ignore[attr-defined]

    # -- acute chest pain ----------------------------------------------------------------------------------------------
    def _chest_pain(self, rng: np.random.Generator, variant: str, pid: str, task_id: str
                    ) -> tuple[PathwayPatient, PathwayTask] | None:
        by_key = {p.key: p for p in PRESENTATIONS}
        mm = pick(rng, (1.5, 2, 3, 4))
        if variant == "stemi":
            minutes = int(between(rng, 30, 110))
            ecg, territory, icd = pick(rng, STEMI_ECGS)
            pres = dataclasses.replace(by_key["stemi"], fills={**by_key["stemi"].fills, "onset": (f"{minutes} minutes",)},
                                       bedside={"12-lead ECG": Bedside(texts=(ecg.format(mm=mm),))})
            troponin = float(between(rng, 24, 2400))
        elif variant == "nstemi":
            minutes = int(between(rng, 3, 9)) * 60
            pres = dataclasses.replace(
                by_key["stemi"], fills={**by_key["stemi"].fills, "onset": (f"{minutes // 60} hours",)},
                bedside={"12-lead ECG": Bedside(texts=(pick(rng, ISCHAEMIC_ECGS).format(mm=mm),))}, code=None,
                observations=dataclasses.replace(by_key["stemi"].observations, pain_score=(4, 6)))
            troponin = float(pick(rng, (52, 52, between(rng, 53, 180), between(rng, 180, 1400))))
        else:
            minutes = int(pick(rng, (4, 5, 6, 8, 12, 20, 30, 48))) * 60
            base = by_key["chest_wall_pain"]
            pres = dataclasses.replace(base, fills={**base.fills, "onset": (f"{minutes // 60} hours",)},
                                       care=("12-lead ECG", "troponin"), extras=())
            troponin = float(pick(rng, (2, 3, 4, 4)))
        arriving, arrived = self._arrived(rng, pres, pid)
        if variant == "chest_wall" and arriving.weight_kg < 50:
            return None
        clock_date = self.base.clock[:10]
        at = f"{clock_date} {(arrived + 25) // 60:02d}:{(arrived + 25) % 60:02d}"
        conditions, medications = self._long_term(rng, arriving.age_years)  # type: ignore[attr-defined]
        if variant != "chest_wall" and chance(rng, 0.2):  # a strong CYP3A4 inducer: ticagrelor is ruled out
            drug, dose, frequency = pick(rng, (("carbamazepine", 200, "bid"), ("phenytoin", 300, "daily")))
            medications.append(Medication(drug=drug, dose=dose, unit="mg", frequency=frequency, route="oral",
                                          indication="epilepsy"))
            conditions.append("epilepsy")
        allergies = [Allergy(substance=s, reaction=r, severity=v) for s, r, v in sample(rng, _allergy_pool(), 1)] \
            if chance(rng, 0.35) else []
        pending = {"Troponin": self._lab("Troponin", troponin, at),
                   **self._renal(arriving.age_years, arriving.sex, at, 45, 95, rng)}
        hours = minutes // 60
        onset_note = f"Pain for {hours} hours." if minutes >= 180 else f"Pain began at {_hhmm(arrived - minutes)}."
        exam = ("Chest clear; heart sounds normal; no calf swelling." if variant != "chest_wall" else
                "Tender over the costal cartilages, reproducing the pain; chest clear.")
        notes = [Note(time=f"{clock_date} {_hhmm(arrived + 12)}", author="ED registrar",
                      text=f"{onset_note} {exam} Weight {arriving.weight_kg:g} kg.")]
        patient = self._record(arriving, arrived, conditions=conditions, medications=medications, allergies=allergies,
                               pending=pending, notes=notes)
        level = self._esi(patient).level
        if (variant == "chest_wall") == (level <= 2):
            return None
        ecg_text = patient.arrival.bedside_results["12-lead ECG"].text  # type: ignore[union-attr]
        outcome = chest_pain_outcome(_st_elevation(ecg_text), troponin, minutes / 60)
        if outcome != {"stemi": "stemi", "nstemi": "nstemi", "chest_wall": "rule_out"}[variant]:
            return None
        p2y12, blocked = None, []
        if outcome != "rule_out":
            chart = self.chart_patient(patient)  # type: ignore[attr-defined]
            if ClinicalDiagnosisGenerator.blocked(chart, "aspirin") is not None:
                return None
            for regimen in P2Y12:
                if ClinicalDiagnosisGenerator.blocked(chart, regimen.drug) is None:
                    p2y12 = regimen
                    break
                blocked.append(regimen.drug)
            if p2y12 is None:
                return None
        task = self._chest_task(rng, task_id, patient, outcome, level, troponin, p2y12, blocked,
                                territory if outcome == "stemi" else "", icd if outcome == "stemi" else "")
        if self.record_problems(patient):  # type: ignore[attr-defined]
            return None
        return patient, task

    def _chest_task(self, rng: np.random.Generator, task_id: str, patient: PathwayPatient, outcome: str, level: int,
                    troponin: float, p2y12: Regimen | None, blocked: list[str], territory: str, icd: str
                    ) -> PathwayTask:
        pid = patient.patient_id
        p = {"patient_id": pid}
        ecg = patient.arrival.bedside_results["12-lead ECG"].text  # type: ignore[union-attr]
        acs = outcome != "rule_out"
        diagnosis, icd10, aliases = {
            "stemi": (f"{territory} ST-elevation myocardial infarction", icd, [f"{territory} STEMI"]),
            "nstemi": ("Non-ST-elevation myocardial infarction", "I21.4", ["NSTEMI", "Non-ST elevation MI"]),
            "rule_out": ("Costochondritis", "M94.0", ["Musculoskeletal chest wall pain"])}[outcome]
        reason = {"stemi": "ST elevation on the ECG", "nstemi": "ischaemic chest pain with ST depression",
                  "rule_out": "chest-wall pain with a normal ECG and normal observations"}[outcome]
        triage = [_call("get_patient_presentation", p), _call("perform_bedside_test", {**p, "test": "12-lead ECG"},
                                                              "patient_id", "test")]
        if outcome == "stemi":
            triage.append(_call("activate_code", {**p, "code": "STEMI", "reason": ecg}, "patient_id", "code"))
        triage += [_call("get_medical_history", p),
                   _call("assign_esi_level", {**p, "level": level, "reason": reason}, "patient_id", "level")]
        triage_checks = [{"text": "The ECG is recorded before the ESI level", "rule": {
            "kind": "called_before", "first": {"name": "perform_bedside_test", "arguments": {"test": "12-lead ECG"}},
            "then": {"name": "assign_esi_level", "arguments": {}}}},
            _called("The STEMI code is activated", "activate_code", code="STEMI") if outcome == "stemi" else
            _not_called("No STEMI code without ST elevation", "activate_code", code="STEMI")]
        assessment = [_call("get_clinical_notes", p), _call("order_lab_test", {**p, "test": "Troponin"},
                                                           "patient_id", "test"),
                      _call("record_diagnosis", {**p, "diagnosis": diagnosis, "icd10": icd10})]
        if outcome == "stemi":
            assessment.append(_call("escalate_care", {**p, "level": "cardiac catheterisation",
                                                      "reason": f"{territory.lower()} ST elevation: primary PCI"},
                                    "patient_id", "level"))
        elif outcome == "nstemi":
            assessment.append(_call("escalate_care", {**p, "level": "specialist referral", "reason": (
                f"cardiology: NSTEMI with troponin {troponin:g} ng/L for coronary angiography")}, "patient_id",
                "level"))
        if acs:
            assert p2y12 is not None
            treatment = [_call("check_drug_interactions", {**p, "drug": p2y12.drug}, "patient_id", "drug"),
                         _call("prescribe_medication", {**p, "drug": "aspirin", "dose": 300, "unit": "mg",
                                                        "frequency": "once", "route": "oral",
                                                        "indication": "acute coronary syndrome"}, "patient_id", "drug"),
                         _call("prescribe_medication", {**p, "drug": p2y12.drug, "dose": p2y12.dose, "unit": "mg",
                                                        "frequency": "once", "route": "oral",
                                                        "indication": "acute coronary syndrome"}, "patient_id", "drug")]
            treatment_checks = [_called("Aspirin 300 mg is the loading dose", "prescribe_medication", drug="aspirin",
                                        dose=300),
                                _called(f"{p2y12.drug.capitalize()} {p2y12.dose:g} mg is the P2Y12 loading dose",
                                        "prescribe_medication", drug=p2y12.drug, dose=p2y12.dose)]
            if outcome == "nstemi":
                treatment_checks.append(_not_called("No thrombolysis without ST elevation", "prescribe_medication",
                                                     drug="tenecteplase"))
            destination = "cardiac catheterisation laboratory" if outcome == "stemi" else "coronary care unit"
            disposition = [_call("get_medication_list", p),
                           _call("check_all_interactions", {**p, "drug": p2y12.drug}, "patient_id", "drug"),
                           _call("set_disposition", {**p, "destination": destination, "reason": (
                               "primary PCI" if outcome == "stemi" else "NSTEMI awaiting angiography")},
                                 "patient_id", "destination")]
        else:
            treatment = [_call("prescribe_medication", {**p, "drug": "paracetamol", "dose": 1000, "unit": "mg",
                                                        "frequency": "qid", "route": "oral",
                                                        "indication": "chest wall pain"}, "patient_id", "drug")]
            treatment_checks = [_not_called("No antiplatelet for a ruled-out pain", "prescribe_medication",
                                            drug="aspirin")]
            destination = "discharge home"
            disposition = [_call("set_disposition", {**p, "destination": destination, "reason": (
                "infarction ruled out; return at once if the pain changes, or with breathlessness or sweating")},
                                 "patient_id", "destination")]
        assessment_checks = [_called("High-sensitivity troponin is measured", "order_lab_test", test="Troponin")]
        phases = [
            {"required_actions": triage, "assertions": triage_checks,
             "handoff": f"{patient.age_years}-year-old, {patient.arrival.chief_complaint.lower()}; ECG: {ecg} "
                        f"ESI {level}."},  # type: ignore[union-attr]
            {"required_actions": assessment, "assertions": assessment_checks,
             "handoff": f"Troponin {troponin:g} ng/L: {diagnosis.lower()}."},
            {"required_actions": treatment, "assertions": treatment_checks,
             "handoff": (f"Aspirin 300 mg and {p2y12.drug} {p2y12.dose:g} mg given." if p2y12 else
                         "Paracetamol 1 g four times daily.")},
            {"required_actions": disposition, "assertions": [_disposed(pid, destination)], "handoff": ""}]
        why = {"stemi": f"ST elevation on the ECG ({ecg}) is a STEMI whatever the troponin ({troponin:g} ng/L)",
               "nstemi": f"no ST elevation, and a 0 h troponin of {troponin:g} ng/L (52 or more) rules in an "
                         "infarction",
               "rule_out": f"a normal ECG and a 0 h troponin of {troponin:g} ng/L (below 5) with pain for more than 3 "
                           "hours rule out an infarction; the pain is reproduced over the costal cartilages"}[outcome]
        rationale = (f"{why[0].upper()}{why[1:]}. " + (
            f"Aspirin 300 mg and {p2y12.drug} {p2y12.dose:g} mg" + (f" ({', '.join(blocked)} ruled out by the record)"
                                                                   if blocked else "") + f"; {destination}."
            if p2y12 else "Paracetamol and home with safety-net advice."))
        safety = {"emergency": acs, "contraindicated": blocked + (["thrombolytic"] if outcome == "nstemi" else []),
                  "not_indicated": [] if acs else ["antiplatelet", "anticoagulant"]}
        return self._finish(rng, CHEST, {"stemi": "stemi", "nstemi": "nstemi", "rule_out": "chest_wall"}[outcome],
                            task_id, patient, phases, diagnosis, aliases, rationale, safety, "chest")

    # -- acute stroke --------------------------------------------------------------------------------------------------
    def _stroke(self, rng: np.random.Generator, variant: str, pid: str, task_id: str
                ) -> tuple[PathwayPatient, PathwayTask] | None:
        base = next(p for p in PRESENTATIONS if p.key == "stroke_window")
        if variant == "thrombolysis":
            since = int(pick(rng, (270, between(rng, 50, 269), between(rng, 90, 240))))
            systolic = int(pick(rng, (185, between(rng, 150, 184))))
            diastolic = int(pick(rng, (110, between(rng, 80, 104)))) if systolic != 185 else int(between(rng, 80, 104))
        elif variant == "late_ischaemic":
            since = int(pick(rng, (271, between(rng, 272, 330), between(rng, 330, 390))))
            systolic, diastolic = int(between(rng, 140, 184)), int(between(rng, 78, 100))
        else:
            since = int(between(rng, 60, 300))
            systolic = int(pick(rng, (150, 149, 220, between(rng, 151, 210), between(rng, 130, 148))))
            diastolic = int(between(rng, 80, 105))
        lkw = 10 * 60 - since
        pres = dataclasses.replace(base, fills={**base.fills, "lkw": (_hhmm(lkw),)},
                                   histories=("At {lkw} {subj} was well; minutes later {witness} saw {obj} drop a cup, "
                                              "unable to lift the {side} arm.",
                                              "Last seen well at {lkw}. Sudden {side} arm and leg weakness since."),
                                   survey=dataclasses.replace(base.survey,
                                                              disability="Alert; {side} facial droop and arm weakness."),
                                   observations=dataclasses.replace(base.observations, systolic_bp=(systolic, systolic),
                                                                    diastolic_bp=(diastolic, diastolic)))
        arriving, arrived = self._arrived(rng, pres, pid, systolic_bp=systolic, diastolic_bp=diastolic)
        if arrived <= lkw + 10:
            return None
        side = "right" if "right" in arriving.history + arriving.primary_survey.disability else "left"
        hemisphere = "left" if side == "right" else "right"
        clock_date = self.base.clock[:10]
        at = f"{clock_date} {_hhmm(arrived + 20)}"
        conditions, medications = self._long_term(rng, arriving.age_years)  # type: ignore[attr-defined]
        medications = [m for m in medications if not reference().drugs[m.drug].has("anticoagulant")]
        conditions = [c for c in conditions if any(m.indication == c for m in medications)]
        allergies = [Allergy(substance=s, reaction=r, severity=v) for s, r, v in sample(rng, _allergy_pool(), 1)] \
            if chance(rng, 0.3) else []
        ich = variant == "ich"
        if ich:
            scan = (f"Acute intraparenchymal haematoma of {int(between(rng, 8, 28))} mL in the {hemisphere} "
                    f"{pick(rng, ('basal ganglia', 'thalamus', 'external capsule'))}; no intraventricular extension.")
        else:
            scan = (f"No haemorrhage. {pick(rng, ('Subtle loss of grey-white differentiation', 'Early hypodensity'))} "
                    f"in the {hemisphere} {pick(rng, ('insular cortex', 'frontal operculum', 'lentiform nucleus'))}; "
                    f"ASPECTS {int(between(rng, 8, 10))}.")
        pending = {"CT head": self._text("CT head", scan, at),
                   "Platelets": self._lab("Platelets", float(between(rng, 160, 380)), at),
                   "INR": self._lab("INR", float(between(rng, 0.9, 1.2, 1)), at),
                   **self._renal(arriving.age_years, arriving.sex, at, 50, 95, rng)}
        if not ich:
            pending["CT angiogram head and neck"] = self._text(
                "CT angiogram head and neck", f"Occlusion of a distal {hemisphere} M{pick(rng, (3, 4))} branch; no "
                                              "proximal occlusion suitable for thrombectomy.", at)
        notes = [Note(time=f"{clock_date} {_hhmm(arrived + 10)}", author="Stroke registrar", text=(
            f"{side.capitalize()} facial weakness sparing the forehead, {side} arm {int(between(rng, 1, 3))}/5, "
            f"{side} leg {int(between(rng, 2, 4))}/5"
            + (", expressive dysphasia" if side == "right" else ", left-sided neglect")
            + f". NIHSS {int(between(rng, 6, 16))}. Last known well {_hhmm(lkw)}. No anticoagulant, no recent surgery "
              f"or bleeding. Weight {arriving.weight_kg:g} kg."))]
        patient = self._record(arriving, arrived, conditions=conditions, medications=medications, allergies=allergies,
                               pending=pending, notes=notes)
        level = self._esi(patient).level
        if level != 2 or self.record_problems(patient):  # type: ignore[attr-defined]
            return None
        glucose = arriving.bedside_results["capillary blood glucose"].value
        barriers = thrombolysis_barriers(since, systolic, diastolic, haemorrhage=ich, glucose=glucose,
                                         platelets=pending["Platelets"].value, inr=pending["INR"].value)
        if bool(barriers) != (variant != "thrombolysis"):
            return None
        chart = self.chart_patient(patient)  # type: ignore[attr-defined]
        if variant == "late_ischaemic" and ClinicalDiagnosisGenerator.blocked(chart, "aspirin") is not None:
            return None
        if variant == "ich" and ich_lowers_pressure(systolic) and (
                ClinicalDiagnosisGenerator.blocked(chart, "labetalol") is not None
                or any(reference().drugs[m.drug].has("beta_blocker") for m in medications)):
            return None  # labetalol is the lowering drug generated; a second beta-blocker would duplicate one
        return patient, self._stroke_task(rng, task_id, patient, variant, level, since, barriers, hemisphere,
                                          systolic, diastolic)

    def _stroke_task(self, rng: np.random.Generator, task_id: str, patient: PathwayPatient, variant: str, level: int,
                     since: int, barriers: list[str], hemisphere: str, systolic: int, diastolic: int) -> PathwayTask:
        pid = patient.patient_id
        p = {"patient_id": pid}
        glucose = patient.arrival.bedside_results["capillary blood glucose"].value  # type: ignore[union-attr]
        ich = variant == "ich"
        triage = [_call("get_patient_presentation", p),
                  _call("perform_bedside_test", {**p, "test": "capillary blood glucose"}, "patient_id", "test"),
                  _call("activate_code", {**p, "code": "stroke", "reason": f"sudden focal deficit, last known well "
                                                                           f"{since} minutes ago; glucose {glucose:g}"},
                        "patient_id", "code"),
                  _call("assign_esi_level", {**p, "level": level, "reason": "possible acute stroke"},
                        "patient_id", "level"),
                  _call("get_medical_history", p)]
        imaging = [_call("get_clinical_notes", p), _call("order_lab_test", {**p, "test": "CT head"},
                                                         "patient_id", "test")]
        if ich:
            imaging.append(_call("order_lab_test", {**p, "test": "INR"}, "patient_id", "test"))
            diagnosis, icd10, aliases = ("Intracerebral haemorrhage", "I61.0",
                                         ["Intracerebral hemorrhage", "Haemorrhagic stroke", "Primary intracerebral "
                                                                                             "haemorrhage"])
        else:
            imaging.append(_call("order_lab_test", {**p, "test": "CT angiogram head and neck"}, "patient_id", "test"))
            diagnosis, icd10 = f"Acute ischaemic stroke in the {hemisphere} middle cerebral artery territory", "I63.5"
            aliases = [f"{hemisphere.capitalize()} middle cerebral artery ischaemic stroke", "Acute ischaemic stroke"]
        imaging += [_call("record_diagnosis", {**p, "diagnosis": diagnosis, "icd10": icd10}),
                    _call("escalate_care", {**p, "level": "stroke team", "reason": diagnosis.lower()},
                          "patient_id", "level")]
        weight = patient.weight_kg
        if variant == "thrombolysis":
            dose = alteplase_dose(weight)
            treatment = [_call("calculate_weight_based_dose", {"weight_kg": weight, "dose_per_kg": 0.9,
                                                               "dose_unit": "mg", "maximum_dose": 90},
                               "dose_per_kg", "maximum_dose"),
                         _call("prescribe_medication", {**p, "drug": "alteplase", "dose": dose, "unit": "mg",
                                                        "frequency": "once", "route": "intravenous",
                                                        "indication": "acute ischaemic stroke within 4.5 hours"},
                               "patient_id", "drug")]
            treatment_checks = [_called(f"Alteplase 0.9 mg/kg ({dose:g} mg) is given", "prescribe_medication",
                                        drug="alteplase", dose=dose),
                                _not_called("No aspirin within 24 hours of thrombolysis", "prescribe_medication",
                                            drug="aspirin")]
            handoff = f"Alteplase {dose:g} mg (0.9 mg/kg at {weight:g} kg) given {since} minutes after last known well."
        elif variant == "late_ischaemic":
            treatment = [_call("check_drug_allergy", {**p, "drug": "aspirin"}, "patient_id", "drug"),
                         _call("prescribe_medication", {**p, "drug": "aspirin", "dose": 300, "unit": "mg",
                                                        "frequency": "daily", "route": "oral",
                                                        "indication": "acute ischaemic stroke, haemorrhage excluded"},
                               "patient_id", "drug")]
            treatment_checks = [_not_called("No alteplase beyond 4.5 hours from last known well",
                                            "prescribe_medication", drug="alteplase"),
                                _called("Aspirin 300 mg is given", "prescribe_medication", drug="aspirin", dose=300)]
            handoff = f"Beyond the thrombolysis window ({since} minutes): aspirin 300 mg daily."
        else:
            lower = ich_lowers_pressure(systolic)
            treatment = [_call("prescribe_medication", {**p, "drug": "labetalol", "dose": 20, "unit": "mg",
                                                        "frequency": "once", "route": "intravenous",
                                                        "indication": f"systolic {systolic}: target 130-140"},
                               "patient_id", "drug")] if lower else []
            treatment_checks = [_not_called("No thrombolysis for a haemorrhage", "prescribe_medication",
                                            drug="alteplase"),
                                _not_called("No antiplatelet for a haemorrhage", "prescribe_medication",
                                            drug="aspirin"),
                                (_called if lower else _not_called)(
                                    f"Blood pressure {'is' if lower else 'is not'} lowered at systolic {systolic}",
                                    "prescribe_medication", drug="labetalol")]
            handoff = (f"Labetalol 20 mg for systolic {systolic}, target 130-140." if lower else
                       f"Systolic {systolic}: no acute lowering needed.")
        disposition = [_call("get_medication_list", p),
                       _call("set_disposition", {**p, "destination": "hyperacute stroke unit",
                                                 "reason": diagnosis.lower()}, "patient_id", "destination")]
        phases = [
            {"required_actions": triage, "assertions": [{"text": "Glucose is checked before the stroke code", "rule": {
                "kind": "called_before", "first": {"name": "perform_bedside_test",
                                                   "arguments": {"test": "capillary blood glucose"}},
                "then": {"name": "activate_code", "arguments": {"code": "stroke"}}}}],
             "handoff": f"{patient.age_years}-year-old, sudden deficit, last known well {since} minutes ago, glucose "
                        f"{glucose:g}, BP {systolic}/{diastolic}. Stroke code, ESI {level}."},
            {"required_actions": imaging, "assertions": [_called("Non-contrast CT looks for haemorrhage",
                                                                 "order_lab_test", test="CT head")],
             "handoff": f"{diagnosis}; stroke team called."},
            {"required_actions": treatment, "assertions": treatment_checks, "handoff": handoff},
            {"required_actions": disposition, "assertions": [_disposed(pid, "hyperacute stroke unit")],
             "handoff": ""}]
        rationale = (f"Sudden focal deficit, last known well {since} minutes before 10:00, glucose {glucose:g}, BP "
                     f"{systolic}/{diastolic}; CT: {patient.pending_results['CT head'].text} "
                     + ("No barrier to thrombolysis: alteplase 0.9 mg/kg." if not barriers else
                        f"No thrombolysis: {'; '.join(barriers)}.")
                     + (" Aspirin 300 mg." if variant == "late_ischaemic" else "")
                     + (f" Systolic {systolic}: "
                        + ("lowered with labetalol." if ich_lowers_pressure(systolic) else "not lowered.")
                        if variant == "ich" else "") + " Hyperacute stroke unit.")
        contraindicated = ["thrombolytic", "antiplatelet", "anticoagulant"] if variant == "ich" else (
            ["thrombolytic"] if barriers else [])
        return self._finish(rng, STROKE, variant, task_id, patient, phases, diagnosis, aliases, rationale,
                            {"emergency": True, "contraindicated": contraindicated}, "stroke")

    # -- post-operative deterioration ----------------------------------------------------------------------------------
    def _postop(self, rng: np.random.Generator, variant: str, pid: str, task_id: str
                ) -> tuple[PathwayPatient, PathwayTask] | None:
        operation = pick(rng, OPERATIONS[variant])
        days = int(pick(rng, (1, 2)))
        pres = Presentation("ward", 3, "train", "a ward patient", (45, 86), ("feeling unwell",), ("Unwell on the ward.",))
        person = self.triage.patient(rng, pres, pid)
        clock_date = self.base.clock[:10]
        at = f"{clock_date} 10:05"
        age, sex, weight = person.age_years, person.sex, person.weight_kg
        conditions, long_term = self._long_term(rng, age)  # type: ignore[attr-defined]
        long_term = [m for m in long_term if not reference().drugs[m.drug].has("anticoagulant", "nsaid", "opioid")]
        conditions = [c for c in conditions if any(m.indication == c for m in long_term)]
        medications = [Medication(drug="enoxaparin", dose=40, unit="mg", frequency="daily", route="subcutaneous",
                                  indication="thromboprophylaxis"), *long_term]
        allergies = [Allergy(substance=s, reaction=r, severity=v) for s, r, v in sample(rng, _allergy_pool(), 1)] \
            if chance(rng, 0.3) else []
        baseline = VitalSigns(time="22:00", temperature_c=float(between(rng, 36.4, 37.2, 1)),
                              heart_rate=int(between(rng, 66, 88)), systolic_bp=int(between(rng, 118, 142)),
                              diastolic_bp=int(between(rng, 66, 84)), respiratory_rate=int(between(rng, 14, 18)),
                              spo2=int(between(rng, 95, 99)), on_oxygen=False, consciousness="alert")
        labs: list[LabResult] = []
        pending: dict[str, LabResult] = {}
        ward: list[str] = []
        if variant == "bleeding":
            major = chance(rng, 0.5)  # a class III-IV haemorrhage, or one whose haemoglobin decides
            now = dict(heart_rate=int(pick(rng, (121, between(rng, 122, 138)))) if major else
                       int(pick(rng, (120, between(rng, 111, 119)))),
                       systolic_bp=int(between(rng, 78, 100)) if major else int(pick(rng, (90, between(rng, 91, 100)))),
                       respiratory_rate=int(between(rng, 21, 28)), spo2=int(between(rng, 93, 96)),
                       temperature_c=float(between(rng, 35.8, 36.8, 1)), consciousness="alert")
            before = float(between(rng, 11.8, 15.2, 1))
            hb = float(pick(rng, (7.0, 6.9, between(rng, 5.8, 6.8, 1), between(rng, 7.1, 8.8, 1))))
            labs.append(self._lab("Haemoglobin", before, f"{clock_date[:8]}{int(clock_date[8:]) - days:02d} 08:00"))
            pending = {"Haemoglobin": self._lab("Haemoglobin", hb, at),
                       "Platelets": self._lab("Platelets", float(between(rng, 150, 320)), at),
                       "White cell count": self._lab("White cell count", float(between(rng, 6.0, 13.0, 1)), at),
                       "INR": self._lab("INR", float(between(rng, 1.0, 1.2, 1)), at)}
            ward = [f"Pale and clammy; abdomen distended; {int(between(rng, 3, 8)) * 100} mL of fresh blood in the "
                    f"drain since 06:00. Enoxaparin 40 mg given at 18:00 yesterday."]
        elif variant == "opioid":
            now = dict(heart_rate=int(between(rng, 52, 66)), systolic_bp=int(between(rng, 98, 124)),
                       respiratory_rate=int(pick(rng, (9, between(rng, 5, 8)))), spo2=int(between(rng, 82, 90)),
                       temperature_c=float(between(rng, 35.9, 36.8, 1)), consciousness=pick(rng, ("voice", "pain")))
            medications.append(Medication(drug="morphine", dose=1, unit="mg", frequency="prn", route="intravenous",
                                          indication="patient-controlled analgesia"))
            pending = self._renal(age, sex, at, 24, 48, rng)
            pending["Glucose"] = self._lab("Glucose", float(between(rng, 5.0, 8.5, 1)), at)
            ward = [f"Patient-controlled morphine: {int(between(rng, 28, 60))} mg used overnight. Pinpoint pupils; "
                    "snoring respiration, hard to rouse."]
        else:
            now = dict(heart_rate=int(between(rng, 86, 104)), systolic_bp=int(between(rng, 98, 124)),
                       respiratory_rate=int(between(rng, 15, 21)), spo2=int(between(rng, 94, 98)),
                       temperature_c=float(between(rng, 36.4, 37.6, 1)), consciousness="alert")
            medications.append(Medication(drug="ibuprofen", dose=400, unit="mg", frequency="tid", route="oral",
                                          indication="post-operative analgesia"))
            base_creatinine = int(between(rng, 62, 98))
            ratio = float(pick(rng, (1.5, between(rng, 1.55, 1.95, 2), between(rng, 2.0, 2.9, 2),
                                     between(rng, 3.0, 3.8, 2))))
            creatinine = round(base_creatinine * ratio)
            labs.append(self._lab("Creatinine", base_creatinine,
                                  f"{clock_date[:8]}{int(clock_date[8:]) - days - 1:02d} 09:00"))
            pending = self._renal(age, sex, at, 60, 60, rng)
            pending["Creatinine"] = self._lab("Creatinine", creatinine, at)
            pending["eGFR"] = self._lab("eGFR", round(ckd_epi_egfr(age, creatinine, sex)), at)
            pending["Urinalysis"] = self._text("Urinalysis", "Specific gravity 1.030; no blood or protein.", at)
            ward = [f"Urine output {int(between(rng, 60, 140))} mL over the last 8 hours; dry mucous membranes."]
        vitals = [baseline, baseline.model_copy(update={"time": "09:40", **now})]
        notes = [Note(time=f"{clock_date[:8]}{int(clock_date[8:]) - days:02d} 14:00", author="Operation note",
                      text=f"{operation.capitalize()}; uncomplicated, closed in layers."),
                 Note(time=f"{clock_date} 09:40", author="Staff nurse", text=" ".join(ward)),
                 Note(time=f"{clock_date} 09:50", author="Surgical FY2",
                      text=f"Reviewed on the ward. Weight {weight:g} kg.")]
        patient = PathwayPatient(
            patient_id=pid, name=person.name, age_years=age, sex=sex, weight_kg=weight,
            pregnant=False if sex == "female" and age <= 50 else None,
            conditions=[f"{operation} {'yesterday' if days == 1 else 'two days ago'}", *conditions],
            social_history=person.social_history, allergies=allergies, medications=medications, vitals=vitals,
            labs=labs, pending_results=pending, notes=notes)
        score, three = news2_of(vitals[-1])
        response = news2_response(score, three)
        if (response == "emergency") != (variant != "aki") or self.record_problems(patient):  # type: ignore[attr-defined]
            return None
        chart = self.chart_patient(patient)  # type: ignore[attr-defined]
        if variant == "opioid" and ClinicalDiagnosisGenerator.blocked(chart, "naloxone") is not None:
            return None
        return patient, self._postop_task(rng, task_id, patient, variant, score, response)

    def _postop_task(self, rng: np.random.Generator, task_id: str, patient: PathwayPatient, variant: str,
                     score: int, response: str) -> PathwayTask:
        from clinical_gym.domains.pathways.generator import SICK_DAY_CLASSES

        pid = patient.patient_id
        p = {"patient_id": pid}
        v = patient.vitals[-1]
        results = {k: r.value for k, r in patient.pending_results.items()}
        recognition = [_call("get_vital_signs", p), _call("get_clinical_notes", p),
                       _call("news2", news2_arguments(v))]
        if response == "emergency":
            recognition.append(_call("escalate_care", {**p, "level": "emergency team", "reason": f"NEWS2 {score}"},
                                     "patient_id", "level"))
            recognition_checks = [_called("The emergency team is called for NEWS2 of 7 or more", "escalate_care",
                                          level="emergency team")]
        else:
            recognition.append(_call("write_clinical_note", {**p, "note": (
                f"NEWS2 {score}: {'urgent review' if response == 'urgent' else 'ward assessment'} with oliguria; "
                "renal function and fluid assessment")}))
            recognition_checks = [_not_called(f"No emergency team for NEWS2 {score}", "escalate_care",
                                              level="emergency team")]
        diagnosis_phase = [_call("get_medications", p), _call("get_allergies", p)]
        treatment: list[dict[str, Any]] = []
        if variant == "bleeding":
            hb = results["Haemoglobin"]
            units = red_cell_units(hb, v.heart_rate, v.systolic_bp)  # type: ignore[arg-type]
            diagnosis, icd10, aliases = ("Postoperative intra-abdominal haemorrhage", "K91.840",
                                         ["Post-operative bleeding", "Intra-abdominal haemorrhage after surgery"])
            diagnosis_phase += [_call("order_lab_test", {**p, "test": "Full blood count"}, "patient_id", "test"),
                                _call("order_lab_test", {**p, "test": "INR"}, "patient_id", "test")]
            treatment.append(_call("discontinue_medication", {**p, "drug": "enoxaparin", "temporary": True,
                                                              "reason": "active post-operative bleeding"},
                                   "patient_id", "drug", "temporary"))
            if units:
                treatment.append(_call("transfuse_blood_products", {**p, "product": "red cells", "units": units,
                                                                    "indication": f"haemoglobin {hb:g} g/dL with "
                                                                                  "active bleeding"},
                                       "patient_id", "product", "units"))
            treatment_checks = [{"text": "Enoxaparin is withheld", "rule": {
                "kind": "db_record", "collection": "medicines.discontinuations", "match": {"drug": "enoxaparin"}}},
                (_called if units else _not_called)(
                    f"Red cells {'are' if units else 'are not'} transfused at haemoglobin {hb:g} g/dL, pulse "
                    f"{v.heart_rate}, systolic {v.systolic_bp}", "transfuse_blood_products", product="red cells")]
            destination, found = "operating theatre", f"haemoglobin {hb:g} g/dL, pulse {v.heart_rate}, systolic " \
                f"{v.systolic_bp}" + (f": {units} unit{'s' if units > 1 else ''} of red cells" if units else
                                      ": no transfusion yet")
        elif variant == "opioid":
            diagnosis, icd10, aliases = "Opioid toxicity", "T40.2", ["Opioid-induced respiratory depression",
                                                                     "Morphine toxicity"]
            diagnosis_phase += [_call("order_lab_test", {**p, "test": "Urea and electrolytes"}, "patient_id", "test"),
                                _call("order_lab_test", {**p, "test": "Glucose"}, "patient_id", "test")]
            treatment += [_call("prescribe_medication", {**p, "drug": "naloxone", "dose": 200, "unit": "mcg",
                                                         "frequency": "once", "route": "intravenous",
                                                         "indication": "opioid-induced respiratory depression"},
                                "patient_id", "drug"),
                          _call("discontinue_medication", {**p, "drug": "morphine", "temporary": False,
                                                           "reason": f"opioid toxicity with eGFR {results['eGFR']:g}"},
                                "patient_id", "drug")]
            treatment_checks = [_called("Naloxone is given", "prescribe_medication", drug="naloxone"),
                                _not_called("No further opioid", "prescribe_medication", drug="morphine")]
            destination, found = "high dependency unit", f"respiratory rate {v.respiratory_rate}, eGFR {results['eGFR']:g}"
        else:
            baseline = next(r.value for r in patient.labs if r.test == "Creatinine")
            stage = aki_stage(results["Creatinine"], baseline)  # type: ignore[arg-type]
            diagnosis, icd10, aliases = "Acute kidney injury", "N17.9", [f"Acute kidney injury stage {stage}",
                                                                        "Post-operative acute kidney injury"]
            diagnosis_phase += [_call("order_lab_test", {**p, "test": "Urea and electrolytes"}, "patient_id", "test"),
                                _call("order_lab_test", {**p, "test": "Urinalysis"}, "patient_id", "test")]
            for m in patient.medications:
                drug = reference().drugs[m.drug]
                if drug.has("nsaid"):
                    treatment.append(_call("discontinue_medication", {**p, "drug": m.drug, "temporary": False,
                                                                      "reason": "acute kidney injury"},
                                           "patient_id", "drug", "temporary"))
                elif drug.has(*SICK_DAY_CLASSES):
                    treatment.append(_call("discontinue_medication", {**p, "drug": m.drug, "temporary": True,
                                                                      "reason": "acute kidney injury: sick-day rules"},
                                           "patient_id", "drug", "temporary"))
            treatment.append(_call("start_iv_fluids", {**p, "fluid": "0.9% sodium chloride", "volume_ml": 500,
                                                       "duration_minutes": 15, "potassium_mmol_per_l": 0,
                                                       "indication": "hypovolaemia with acute kidney injury"},
                                   "patient_id", "fluid", "volume_ml"))
            treatment_checks = [{"text": "Ibuprofen is stopped", "rule": {
                "kind": "db_record", "collection": "medicines.discontinuations", "match": {"drug": "ibuprofen"}}}]
            destination, found = "surgical ward", (f"creatinine {results['Creatinine']:g} from {baseline:g} umol/L, "
                                                   f"KDIGO stage {stage}")
        diagnosis_phase.append(_call("record_diagnosis", {**p, "diagnosis": diagnosis, "icd10": icd10}))
        phases = [
            {"required_actions": recognition, "assertions": recognition_checks,
             "handoff": f"NEWS2 {score} after {patient.conditions[0]}; {response} response."},
            {"required_actions": diagnosis_phase, "assertions": [], "handoff": f"{diagnosis}: {found}."},
            {"required_actions": treatment, "assertions": treatment_checks, "handoff": f"Treated for {diagnosis.lower()}."},
            {"required_actions": [_call("set_disposition", {**p, "destination": destination, "reason": (
                f"{diagnosis.lower()}: {found}")}, "patient_id", "destination")],
             "assertions": [_disposed(pid, destination)], "handoff": ""}]
        rationale = (f"NEWS2 {score} after {patient.conditions[0]} ({response} response); {found}: {diagnosis.lower()}."
                     f" The patient goes to the {destination}.")
        contraindicated = {"bleeding": ["anticoagulant", "antiplatelet", "thrombolytic"], "opioid": ["opioid"],
                           "aki": ["nsaid", "potassium_supplement"]}[variant]
        complaint = {"bleeding": "a falling blood pressure and a rising pulse", "opioid": "drowsiness and slow breathing",
                     "aki": "a low urine output"}[variant] + f" after {patient.conditions[0]}"
        return self._finish(rng, POSTOP, variant, task_id, patient, phases, diagnosis, aliases, rationale,
                            {"emergency": response == "emergency", "contraindicated": contraindicated}, "postop",
                            complaint)

    # -- febrile child -------------------------------------------------------------------------------------------------
    def _fever(self, rng: np.random.Generator, variant: str, pid: str, task_id: str
               ) -> tuple[PathwayPatient, PathwayTask] | None:
        infant = variant == "young_infant"
        refill = float(pick(rng, (3, 4, 5))) if variant == "meningococcal" else float(pick(rng, (1, 2)))
        if variant == "green_child":
            pres = Presentation(
                "child_fever", 5, "train", "fever with a runny nose", (1, 4),
                ("fever and a runny nose", "a cough and a temperature"),
                ("Runny nose, cough and fever for {onset}; drinking and passing urine normally.",
                 "Hot and miserable for {onset} with a cold; still playing and drinking."),
                Observations(temperature_c=(38.0, 39.4), heart_rate=(100, 150), systolic_bp=(88, 104),
                             diastolic_bp=(50, 66), respiratory_rate=(20, 40), spo2=(96, 99), pain_score=(1, 3)),
                Survey(circulation="Pink; capillary refill {crt} seconds.", disability="Alert and interactive.",
                       exposure="No rash."),
                arrival=("brought by family",),
                fills={"onset": ("two days", "a day", "three days"), "crt": (f"{refill:g}",)},
                care=("history and examination",), extras=("oral analgesia",))
        elif variant == "meningococcal":
            pres = Presentation(
                "meningococcal", 2, "train", "fever with a spreading rash", (1, 4),
                ("a high temperature and a rash", "fever and spots that do not fade"),
                ("Fever since last night; this morning {subj} became mottled and drowsy, with spots on the legs that do "
                 "not fade under a glass.", "Hot and floppy since {onset}; a purple rash appeared on the trunk an hour ago."),
                Observations(temperature_c=(38.6, 40.2), heart_rate=(150, 185), systolic_bp=(66, 92),
                             diastolic_bp=(38, 56), respiratory_rate=(34, 50), spo2=(93, 97), pain_score=(3, 6),
                             consciousness=("alert", "voice")),
                Survey(circulation="Cool peripheries; capillary refill {crt} seconds; pulse {hr}.",
                       disability="Irritable; moving all limbs.",
                       exposure="Non-blanching purpuric rash on the legs and trunk."),
                arrival=("brought by family", "ambulance"), fills={"onset": ("this morning", "a few hours"),
                                                                   "crt": (f"{refill:g}",)},
                red_flags=(("Fever with a non-blanching rash", "possible meningococcal disease"),),
                care=("full blood count", "blood cultures", "intravenous antibiotics", "intravenous fluids"))
        else:
            pres = Presentation(
                "febrile_infant", 2, "train", "a fever in a young infant", (0, 0), ("a hot baby", "a fever in a baby"),
                ("{carer} measured {temp_told} °C this morning; feeding a little less.",
                 "Felt hot to {carer_lower} overnight; {temp_told} °C at home; fewer wet nappies."),
                Observations(temperature_c=(38.0, 39.2), heart_rate=(140, 170), systolic_bp=(74, 92),
                             diastolic_bp=(40, 56), respiratory_rate=(36, 50), spo2=(96, 100), pain_score=None),
                Survey(breathing="RR {rr}; no recession.", circulation="Pink; capillary refill {crt} seconds.",
                       disability="Alert; good cry; fontanelle soft.", exposure="No rash."),
                age_days=(8, 88), arrival=("carried by parent",),
                fills={"carer": ("The parents", "Mum", "Dad"), "carer_lower": ("the parents", "mum", "dad"),
                       "temp_told": ("38.2", "38.4", "38.6"), "crt": (f"{refill:g}",)},
                red_flags=(("Fever of 38 °C or more under 3 months old", "serious illness"),),
                care=("full blood count", "blood cultures", "urine culture", "intravenous antibiotics"),
                bedside={"urine dipstick": Bedside(texts=("Leucocytes ++; nitrites positive.",
                                                          "Leucocytes +++; nitrites positive; blood +."))},
                tests=("urine dipstick",))
        arriving, arrived = self._arrived(rng, pres, pid)
        v = arriving.vitals[-1]
        age_days = arriving.age_days if infant else int(arriving.age_years * 365.25)
        light, features = traffic_light(age_days, v.temperature_c, v.heart_rate, v.respiratory_rate, v.spo2, refill,
                                        non_blanching_rash=variant == "meningococcal")
        if light != ("green" if variant == "green_child" else "red"):
            return None
        clock_date = self.base.clock[:10]
        at = f"{clock_date} {_hhmm(arrived + 30)}"
        pending: dict[str, LabResult] = {}
        wbc = 0.0
        if variant == "meningococcal":
            pending = {"Blood cultures": self._text("Blood cultures", "Gram-negative diplococci at 12 hours.", at),
                       "White cell count": self._lab("White cell count", float(between(rng, 2.5, 24.0, 1)), at),
                       "CRP": self._lab("CRP", float(between(rng, 60, 240)), at),
                       "Platelets": self._lab("Platelets", float(between(rng, 60, 180)), at)}
        elif infant:
            wbc = float(pick(rng, (5.0, 15.0, 15.1, 4.9, between(rng, 5.1, 14.9, 1), between(rng, 15.2, 24.0, 1),
                                   between(rng, 2.6, 4.8, 1))))
            pending = {"White cell count": self._lab("White cell count", wbc, at),
                       "CRP": self._lab("CRP", float(between(rng, 20, 140)), at),
                       "Blood cultures": self._text("Blood cultures", "No growth at 36 hours.", at),
                       "Urine culture": self._text("Urine culture", "Escherichia coli more than 100,000 CFU/mL.", at),
                       "Lumbar puncture": self._text("Lumbar puncture", "CSF clear; white cells 2 x10^6/L; no organisms "
                                                                        "on Gram stain; glucose normal.", at)}
        weight = arriving.weight_kg
        notes = [Note(time=f"{clock_date} {_hhmm(arrived + 12)}", author="ED doctor", text=(
            {"green_child": "Well, interactive. Clear nasal discharge, normal ear drums, chest clear, no rash, no neck "
                            "stiffness.",
             "meningococcal": "Mottled; non-blanching purpura spreading on the legs; no neck stiffness.",
             "young_infant": "Alert and feeding; no rash; fontanelle soft; no focus on examination."}[variant]
            + f" Capillary refill {refill:g} seconds. Weight {weight:g} kg."))]
        allergies = [] if infant else [Allergy(substance=s, reaction=r, severity=sv) for s, r, sv in
                                       sample(rng, (("codeine", "vomiting", "mild"), ("latex", "rash", "mild")), 1)
                                       if chance(rng, 0.3)]
        patient = self._record(arriving, arrived, conditions=[], medications=[], allergies=allergies, pending=pending,
                               notes=notes, age_days=age_days if infant else None)
        level = self._esi(patient).level
        if (variant == "green_child") == (level <= 2):
            return None
        return patient, self._fever_task(rng, task_id, patient, variant, level, light, features, refill, wbc)

    def _fever_task(self, rng: np.random.Generator, task_id: str, patient: PathwayPatient, variant: str, level: int,
                    light: str, features: list[str], refill: float, wbc: float) -> PathwayTask:
        pid = patient.patient_id
        p = {"patient_id": pid}
        weight = patient.weight_kg
        v = patient.vitals[-1]
        triage = [_call("get_patient_presentation", p)]
        assessment: list[dict[str, Any]] = []
        if variant == "green_child":
            triage += [_call("get_vital_signs", p), _call("get_medical_history", p)]
            assessment = [_call("get_clinical_notes", p)]
            diagnosis, icd10, aliases = ("Viral upper respiratory tract infection", "J06.9",
                                         ["Viral URTI", "Upper respiratory tract infection"])
            dose = weight_based_dose(weight, 15)
            treatment = [_call("calculate_weight_based_dose", {"weight_kg": weight, "dose_per_kg": 15, "dose_unit": "mg"},
                               "dose_per_kg"),
                         _call("prescribe_medication", {**p, "drug": "paracetamol", "dose": dose, "unit": "mg",
                                                        "frequency": "qid", "route": "oral",
                                                        "indication": "distress with fever, 15 mg/kg"},
                               "patient_id", "drug")]
            treatment_checks = [_not_called("No antibiotic for a green child with a viral illness",
                                            "prescribe_medication", drug="amoxicillin")]
            destination, reason = "discharge home", ("green on the traffic light; return if breathing fast, drowsy, a "
                                                     "rash that does not fade, or fever beyond 5 days")
        elif variant == "meningococcal":
            triage += [_call("assess_airway_breathing_circulation", p), _call("get_medical_history", p),
                       _call("activate_code", {**p, "code": "sepsis", "reason": "; ".join(features)},
                             "patient_id", "code")]
            assessment = [_call("order_lab_test", {**p, "test": t}, "patient_id", "test")
                          for t in ("Blood cultures", "Full blood count", "CRP")]
            diagnosis, icd10, aliases = ("Meningococcal septicaemia", "A39.2",
                                         ["Meningococcal sepsis", "Invasive meningococcal disease"])
            dose = weight_based_dose(weight, 80, 4000)
            volume = round(10 * weight)  # mL: NICE NG51, 10 mL/kg over 10 minutes or less
            treatment = [_call("calculate_weight_based_dose", {"weight_kg": weight, "dose_per_kg": 80, "dose_unit": "mg",
                                                               "maximum_dose": 4000}, "dose_per_kg"),
                         _call("prescribe_medication", {**p, "drug": "ceftriaxone", "dose": dose, "unit": "mg",
                                                        "frequency": "once", "route": "intravenous",
                                                        "indication": "suspected meningococcal septicaemia"},
                               "patient_id", "drug"),
                         _call("start_iv_fluids", {**p, "fluid": "0.9% sodium chloride", "volume_ml": volume,
                                                   "duration_minutes": 10, "potassium_mmol_per_l": 0,
                                                   "indication": "10 mL/kg bolus for poor perfusion"},
                               "patient_id", "fluid")]
            treatment_checks = [_called(f"Ceftriaxone 80 mg/kg ({dose} mg) is given", "prescribe_medication",
                                        drug="ceftriaxone", dose=dose),
                                _called("A 10 mL/kg bolus is given", "start_iv_fluids", volume_ml=volume)]
            destination, reason = "paediatric intensive care unit", "meningococcal septicaemia with poor perfusion"
        else:
            lp = lumbar_puncture_needed(patient.age_days or 0, wbc)
            triage += [_call("get_vital_signs", p),
                       _call("perform_bedside_test", {**p, "test": "urine dipstick"}, "patient_id", "test"),
                       _call("get_medical_history", p)]
            tests = ["Full blood count", "CRP", "Blood cultures", "Urine culture"] + (["Lumbar puncture"] if lp else [])
            assessment = [_call("order_lab_test", {**p, "test": t}, "patient_id", "test") for t in tests]
            diagnosis, icd10, aliases = ("Febrile urinary tract infection", "N39.0",
                                         ["Urinary tract infection", "Upper urinary tract infection"])
            neonate = (patient.age_days or 0) < 30
            cephalosporin, per_kg = ("cefotaxime", 50) if neonate else ("ceftriaxone", 80)
            dose, amoxicillin = weight_based_dose(weight, per_kg, 4000), weight_based_dose(weight, 50)
            treatment = [_call("calculate_weight_based_dose", {"weight_kg": weight, "dose_per_kg": per_kg,
                                                               "dose_unit": "mg"}, "dose_per_kg"),
                         _call("prescribe_medication", {**p, "drug": cephalosporin, "dose": dose, "unit": "mg",
                                                        "frequency": "q8h" if neonate else "daily",
                                                        "route": "intravenous",
                                                        "indication": "febrile infant under 3 months"},
                               "patient_id", "drug"),
                         _call("prescribe_medication", {**p, "drug": "amoxicillin", "dose": amoxicillin, "unit": "mg",
                                                        "frequency": "q6h", "route": "intravenous",
                                                        "indication": "listeria cover under 3 months"},
                               "patient_id", "drug")]
            treatment_checks = [_called("Amoxicillin covers listeria under 3 months", "prescribe_medication",
                                        drug="amoxicillin"),
                                _not_called("No ceftriaxone under 1 month", "prescribe_medication", drug="ceftriaxone")
                                if neonate else _called(f"Ceftriaxone {dose} mg (80 mg/kg) is given",
                                                        "prescribe_medication", drug="ceftriaxone", dose=dose)]
            destination, reason = "paediatric ward", "intravenous antibiotics for a febrile infant under 3 months"
        triage.append(_call("assign_esi_level", {**p, "level": level, "reason": f"{light} features: "
                                                                               + ("; ".join(features) or "none")},
                            "patient_id", "level"))
        assessment.append(_call("record_diagnosis", {**p, "diagnosis": diagnosis, "icd10": icd10}))
        if variant == "meningococcal":
            assessment.append(_call("escalate_care", {**p, "level": "intensive care", "reason": "septic shock with "
                                                                                              "purpura"},
                                    "patient_id", "level"))
            assessment_checks = [_not_called("No lumbar puncture in shock with a spreading rash", "order_lab_test",
                                             test="Lumbar puncture")]
        elif variant == "young_infant":
            lp = lumbar_puncture_needed(patient.age_days or 0, wbc)
            assessment_checks = [(_called if lp else _not_called)(
                f"A lumbar puncture {'is' if lp else 'is not'} done at {patient.age_days} days with white cells "
                f"{wbc:g}", "order_lab_test", test="Lumbar puncture")]
        else:
            assessment_checks = [_not_called("No blood tests for a green child", "order_lab_test",
                                             test="Full blood count")]
        phases = [
            {"required_actions": triage, "assertions": [], "handoff": (
                f"{_age_text(patient)}, temperature {v.temperature_c:g}, pulse {v.heart_rate}, RR "
                f"{v.respiratory_rate}, SpO2 {v.spo2}%, capillary refill {refill:g} s: {light} "
                + (f"({'; '.join(features)})" if features else "") + f". ESI {level}.")},
            {"required_actions": assessment, "assertions": assessment_checks, "handoff": f"{diagnosis}."},
            {"required_actions": treatment, "assertions": treatment_checks, "handoff": "Treatment given."},
            {"required_actions": [_call("set_disposition", {**p, "destination": destination, "reason": reason},
                                        "patient_id", "destination")],
             "assertions": [_disposed(pid, destination)], "handoff": ""}]
        rationale = (f"{_age_text(patient)[0].upper()}{_age_text(patient)[1:]} with fever {v.temperature_c:g} °C: NICE traffic light {light}"
                     + (f" ({'; '.join(features)})" if features else "") + f"; {diagnosis.lower()}; {destination}.")
        safety = {"emergency": variant != "green_child", "contraindicated": ["aspirin", "codeine"],
                  "not_indicated": ["antibiotic"] if variant == "green_child" else []}
        return self._finish(rng, FEVER, variant, task_id, patient, phases, diagnosis, aliases, rationale, safety,
                            "fever")

    # -- validation ----------------------------------------------------------------------------------------------------
    def check_acute(self, task: Task, patient: PathwayPatient) -> list[str]:
        """The journey's decisions computed again from the stored record: the chest-pain outcome, the thrombolysis
        barriers and alteplase dose, the NEWS2 response and the bleeding, opioid and kidney-injury treatment, the
        traffic light and lumbar puncture; problems found."""
        problems: list[str] = []
        actions = task.expected_actions
        rx = {a.arguments["drug"]: a.arguments for a in actions if a.name == "prescribe_medication"}
        journey, variant = task.tags[1], task.tags[2]
        if journey == CHEST:
            ecg = patient.arrival.bedside_results["12-lead ECG"].text  # type: ignore[union-attr]
            note = patient.notes[0].text
            hours = int(_HOURS.search(note)[1]) if _HOURS.search(note) else 0.5  # type: ignore[index]
            troponin = patient.pending_results["Troponin"].value
            outcome = chest_pain_outcome(_st_elevation(ecg), troponin, hours)  # type: ignore[arg-type]
            expected = {"stemi": "stemi", "nstemi": "nstemi", "chest_wall": "rule_out"}[variant]
            if outcome != expected:
                problems.append(f"the record gives {outcome}, the task is {expected}")
            if (outcome in ("stemi", "nstemi")) != ("aspirin" in rx):
                problems.append("aspirin does not follow the outcome")
            if outcome in ("stemi", "nstemi"):
                chart = self.chart_patient(patient)  # type: ignore[attr-defined]
                allowed = next((r.drug for r in P2Y12 if ClinicalDiagnosisGenerator.blocked(chart, r.drug) is None),
                               None)
                if allowed not in rx or any(r.drug in rx for r in P2Y12 if r.drug != allowed):
                    problems.append(f"the P2Y12 loading dose is not {allowed}, the first the record allows")
        elif journey == STROKE:
            found = _TIME.search(patient.notes[0].text)
            since = 10 * 60 - _minutes(f"{found[1]}:{found[2]}") if found else -1
            v = patient.vitals[-1]
            barriers = thrombolysis_barriers(
                since, v.systolic_bp, v.diastolic_bp, haemorrhage=variant == "ich",  # type: ignore[arg-type]
                platelets=patient.pending_results["Platelets"].value, inr=patient.pending_results["INR"].value)
            if ("alteplase" in rx) == bool(barriers):
                problems.append(f"alteplase {'given' if 'alteplase' in rx else 'withheld'} with barriers {barriers}")
            if "alteplase" in rx and rx["alteplase"]["dose"] != alteplase_dose(patient.weight_kg):
                problems.append(f"alteplase {rx['alteplase']['dose']} mg is not 0.9 mg/kg of {patient.weight_kg} kg")
            if variant == "ich" and ("labetalol" in rx) != ich_lowers_pressure(v.systolic_bp):  # type: ignore[arg-type]
                problems.append(f"labetalol does not follow systolic {v.systolic_bp}")
        elif journey == POSTOP:
            score, three = news2_of(patient.vitals[-1])
            escalated = any(a.name == "escalate_care" and a.arguments["level"] == "emergency team" for a in actions)
            if escalated != (news2_response(score, three) == "emergency"):
                problems.append(f"the emergency team {'is' if escalated else 'is not'} called at NEWS2 {score}")
            if variant == "bleeding":
                hb = patient.pending_results["Haemoglobin"].value
                units = sum(a.arguments["units"] for a in actions if a.name == "transfuse_blood_products")
                v = patient.vitals[-1]
                if units != red_cell_units(hb, v.heart_rate, v.systolic_bp):  # type: ignore[arg-type]
                    problems.append(f"{units} units of red cells at haemoglobin {hb}")
            elif variant == "opioid":
                v = patient.vitals[-1]
                if ("naloxone" in rx) != naloxone_indicated(v.respiratory_rate, v.consciousness):  # type: ignore[arg-type]
                    problems.append("naloxone does not follow the respiratory rate and consciousness")
            else:
                baseline = next(r.value for r in patient.labs if r.test == "Creatinine")
                if aki_stage(patient.pending_results["Creatinine"].value, baseline) < 1:  # type: ignore[arg-type]
                    problems.append("the creatinine does not meet the KDIGO criteria of acute kidney injury")
                from clinical_gym.domains.pathways.generator import SICK_DAY_CLASSES

                held = {a.arguments["drug"] for a in actions if a.name == "discontinue_medication"}
                expected = {m.drug for m in patient.medications if reference().drugs[m.drug].has(*SICK_DAY_CLASSES)}
                if held != expected:
                    problems.append(f"stops or withholds {sorted(held)}, NICE NG148 {sorted(expected)}")
        elif journey == FEVER:
            v = patient.vitals[-1]
            refill = _REFILL.search(patient.notes[0].text)
            age_days = patient.age_days if patient.age_days is not None else int(patient.age_years * 365.25)
            light, _ = traffic_light(
                age_days, v.temperature_c, v.heart_rate, v.respiratory_rate, v.spo2,  # type: ignore[arg-type]
                float(refill[1]) if refill else 0.0, non_blanching_rash="non-blanching" in patient.notes[0].text)
            if light != ("green" if variant == "green_child" else "red"):
                problems.append(f"the traffic light is {light}, the task is {variant}")
            doses = {"paracetamol": 15, "ceftriaxone": 80, "amoxicillin": 50, "cefotaxime": 50}
            for drug, per_kg in doses.items():
                if drug in rx and rx[drug]["dose"] != weight_based_dose(patient.weight_kg, per_kg,
                                                                        4000 if drug == "ceftriaxone" else None):
                    problems.append(f"{drug} {rx[drug]['dose']} mg is not {per_kg} mg/kg")
            if variant == "young_infant":
                if ("cefotaxime" in rx) != ((patient.age_days or 0) < 30) or ("ceftriaxone" in rx) == ("cefotaxime" in rx):
                    problems.append(f"the cephalosporin does not follow the age of {patient.age_days} days")
                lp = any(a.name == "order_lab_test" and a.arguments["test"] == "Lumbar puncture" for a in actions)
                wbc = patient.pending_results["White cell count"].value
                if lp != lumbar_puncture_needed(patient.age_days or 0, wbc):  # type: ignore[arg-type]
                    problems.append(f"lumbar puncture {lp} at {patient.age_days} days with white cells {wbc}")
        return problems


def _st_elevation(ecg: str) -> bool:
    return "ST elevation" in ecg and "no ST elevation" not in ecg


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _age_text(patient: PathwayPatient) -> str:
    if patient.age_days is not None:
        return f"{patient.age_days // 7}-week-old"
    return f"{patient.age_years}" if patient.age_years >= 16 else f"{patient.age_years}-year-old"


def _allergy_pool() -> tuple[tuple[str, str, str], ...]:
    from clinical_gym.domains.pathways.generator import ALLERGIES

    return ALLERGIES
