"""The ClinicalDiagnosis task generator: two task kinds, each a whole chart in the domain database.

* ``diagnosis`` (60%): a patient sampled from the disease knowledge table (``clinical_gym.cases.generator``: history,
  examination, vital signs and results typical of the condition, pertinent negatives), charted as the case
  converter does (``task_conversion.chart_patient``: notes, SI results) with a name, weight, comorbidities, their
  medicines and allergies added; review the chart, record the diagnosis, submit it. Answer: the table's name, its
  synonyms as aliases.
* ``prescribing`` (40%): a patient with a recorded infection whose first-line antibiotic and its usual alternatives
  are each ruled out but one, by a documented allergy (same or cross-reactive group), a current medicine with a major
  or contraindicated interaction, or renal function in a band where the drug must be avoided; all three are read
  through the drug reference (``clinical_gym.drugs``, which the tools and the safety reward read), and the task is
  kept only when exactly one candidate is safe. The safe regimen's dose is reduced to fit the renal band's daily
  maximum where one applies. Choose it, check it, prescribe it, submit its letter; the ruled-out drugs are the
  task's contraindicated drugs and an unrelated antibiotic is not indicated.

Generalisation split: the test split holds conditions (12 of the table's 63, by a hash of the condition id) and
indications (streptococcal pharyngitis, dental abscess) that the train split never shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from clinical_gym.cases.generator import CaseGenerator
from clinical_gym.cases.schema import normalize
from clinical_gym.drugs import reference
from clinical_gym.drugs.units import creatinine_clearance
from clinical_gym.domains.dosing import DOSES_PER_DAY, MG_PER_UNIT
from clinical_gym.rewards.coherence import lab_statements
from clinical_gym.rewards.episode import contains_term
from clinical_gym.tool_env.generation import (
    Draft,
    TaskGenerator,
    Wording,
    between,
    case_sources,
    chance,
    condition_pools,
    lettered,
    person_name,
    pick,
    sample,
)
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.clinical_diagnosis.data_model import (
    Allergy,
    ClinicalDiagnosisDB,
    Condition,
    LabResult,
    Medication,
    Note,
    Patient,
    VitalSigns,
)
from clinical_gym.domains.clinical_diagnosis.environment import lab_key
from clinical_gym.domains.task_conversion import chart_patient

KINDS = (("diagnosis", 0.6), ("prescribing", 0.4))
UNSAFE_INTERACTIONS = ("major", "contraindicated")


@dataclass(frozen=True)
class Regimen:
    drug: str
    dose: float
    unit: str
    frequency: str
    route: str = "oral"

    @property
    def text(self) -> str:
        return f"{self.drug} {self.dose:g} {self.unit} {self.frequency}"


@dataclass(frozen=True)
class Indication:
    """An infection with its candidate regimens (first-line first; NICE antimicrobial guidance) and an antibiotic that
    does not treat it."""

    key: str
    pool: str
    condition: str
    complaint: str
    note: str
    candidates: tuple[Regimen, ...]
    not_indicated: str


INDICATIONS: tuple[Indication, ...] = (
    Indication("pneumonia", "train", "Community-acquired pneumonia, CURB-65 0", "a productive cough and fever",
               "Three days of productive cough and fever; focal crackles at the {side} base; CURB-65 0, for treatment at "
               "home. Chest X-ray: {side} lower-zone consolidation.",
               (Regimen("amoxicillin", 500, "mg", "tid"), Regimen("clarithromycin", 500, "mg", "bid"),
                Regimen("doxycycline", 100, "mg", "bid")), "nitrofurantoin"),
    Indication("cellulitis", "train", "Cellulitis of the lower leg", "a red, swollen shin",
               "Spreading redness, warmth and swelling of the {side} shin for two days from a graze; no abscess, no "
               "systemic upset.",
               (Regimen("flucloxacillin", 500, "mg", "qid"), Regimen("clarithromycin", 500, "mg", "bid"),
                Regimen("doxycycline", 100, "mg", "bid")), "nitrofurantoin"),
    Indication("cystitis", "train", "Acute uncomplicated lower urinary tract infection", "burning and frequency",
               "Dysuria and frequency for two days; no loin pain or fever; dipstick leucocytes and nitrites positive. "
               "Not pregnant.",
               (Regimen("nitrofurantoin", 100, "mg", "bid"), Regimen("trimethoprim", 200, "mg", "bid"),
                Regimen("cefalexin", 500, "mg", "bid")), "doxycycline"),
    Indication("pharyngitis", "test", "Streptococcal pharyngitis, FeverPAIN 4", "a very sore throat",
               "Sore throat for three days with fever, tonsillar exudate and no cough; FeverPAIN 4: antibiotic "
               "indicated.",
               (Regimen("phenoxymethylpenicillin", 500, "mg", "qid"), Regimen("clarithromycin", 250, "mg", "bid"),
                Regimen("azithromycin", 500, "mg", "daily")), "nitrofurantoin"),
    Indication("dental_abscess", "test", "Dental abscess with spreading infection", "a swollen jaw and toothache",
               "Throbbing {side} lower molar pain for four days with facial swelling; dentist arranged for tomorrow; "
               "antibiotic needed meanwhile.",
               (Regimen("amoxicillin", 500, "mg", "tid"), Regimen("metronidazole", 400, "mg", "tid"),
                Regimen("clarithromycin", 500, "mg", "bid")), "nitrofurantoin"),
)

# Long-term medicines a chart may list (condition, drug, dose, frequency).
COMORBIDITIES: tuple[tuple[str, str, str, str], ...] = (
    ("Hypertension", "amlodipine", "5 mg", "once daily"), ("Hypertension", "ramipril", "5 mg", "once daily"),
    ("Type 2 diabetes mellitus", "metformin", "1 g", "twice daily"),
    ("Hypercholesterolaemia", "simvastatin", "40 mg", "at night"),
    ("Hypercholesterolaemia", "atorvastatin", "20 mg", "at night"),
    ("Atrial fibrillation", "warfarin", "as per INR", "once daily"), ("Atrial fibrillation", "apixaban", "5 mg", "twice daily"),
    ("Hypothyroidism", "levothyroxine", "75 micrograms", "once daily"), ("Depression", "citalopram", "20 mg", "once daily"),
    ("Depression", "sertraline", "50 mg", "once daily"), ("Rheumatoid arthritis", "methotrexate", "15 mg", "weekly"),
    ("Heart failure", "digoxin", "125 micrograms", "once daily"), ("Gastro-oesophageal reflux", "omeprazole", "20 mg", "once daily"),
)
# Allergies that rule out a drug group (substance, reaction, severity).
GROUP_ALLERGIES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "penicillins": (("penicillin", "anaphylaxis", "life-threatening"), ("amoxicillin", "urticaria and wheeze", "severe"),
                    ("flucloxacillin", "widespread rash", "moderate")),
    "macrolides": (("clarithromycin", "angioedema", "severe"), ("erythromycin", "widespread rash", "moderate")),
    "tetracyclines": (("doxycycline", "widespread rash", "moderate"),),
    "cephalosporins": (("cefalexin", "urticaria", "severe"),),
}
DRUG_ALLERGIES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "nitrofurantoin": (("nitrofurantoin", "acute lung reaction", "severe"),),
    "trimethoprim": (("trimethoprim", "widespread rash", "moderate"),),
    "metronidazole": (("metronidazole", "widespread rash", "moderate"),),
}
HARMLESS_ALLERGIES = (("latex", "contact dermatitis", "mild"), ("elastoplast", "skin irritation", "mild"))
CLOCK_DATE = "2025-03-14"

TICKETS = Wording(
    diagnosis=(
        "Patient {pid} presents with {complaint}. Review the chart, record your working diagnosis and submit it.",
        "{pid}, {who}, has come in with {complaint}. Work through the notes, observations and results, record the most "
        "likely diagnosis in the chart and submit it.",
        "New patient on your list: {pid} ({who}) with {complaint}. What is the diagnosis? Record it and submit it.",
        "Please see {pid}, {who}, who reports {complaint}. Review everything available, then record and submit the "
        "diagnosis."),
    prescribing=(
        "{pid} has {condition_lower} and needs an antibiotic today. Check the chart for anything that rules a drug "
        "out, prescribe the one that is safe for {obj} and submit its letter.",
        "Prescribe for {pid} ({who}): {condition_lower}. Choose the antibiotic that is safe given the allergies, "
        "medicines and kidney function on record, prescribe it and submit the letter.",
        "{pid}, {who}, has {condition_lower}. Review allergies, current medicines and renal function, then prescribe "
        "the single safe antibiotic of the options and submit its letter."),
)


def _pronoun(sex: str) -> str:
    return "her" if sex == "female" else "him"


def _who(age: int, sex: str) -> str:
    noun = ("girl" if sex == "female" else "boy") if age < 16 else ("woman" if sex == "female" else "man")
    return f"a {age}-year-old {noun}"


@lru_cache(maxsize=64)
def _interacting(drug: str) -> tuple[tuple[str, str, str, str], ...]:
    """The long-term medicines of ``COMORBIDITIES`` that ``drug`` has a major or contraindicated interaction with."""
    found = reference().resolve(drug)
    return tuple(c for c in COMORBIDITIES if any(i.severity in UNSAFE_INTERACTIONS
                                                 for i in reference().interactions_with(found, [c[1]])))


def _lab(definition: Any, value: float, time: str) -> LabResult:
    return LabResult(test=definition.name, time=time, value=value, unit=definition.unit, ref_low=definition.ref_low,
                     ref_high=definition.ref_high)


class ClinicalDiagnosisGenerator(TaskGenerator):
    env_id = "ClinicalDiagnosis-v1"
    id_prefix = "gcd"
    collections = {"patients": "patient_id"}

    @cached_property
    def held_out(self) -> str:  # type: ignore[override]
        return ("conditions the train split never shows: " + ", ".join(d.name for d in self.diseases["test"])
                + "; indications: " + ", ".join(i.condition for i in INDICATIONS if i.pool == "test"))

    @property
    def diseases(self) -> dict[str, tuple[Any, ...]]:
        return condition_pools()

    @property
    def case_sources(self) -> dict[str, CaseGenerator]:
        return case_sources()

    @cached_property
    def catalogue(self) -> ClinicalDiagnosisDB:
        return self.base_db()  # type: ignore[return-value]

    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        kind = KINDS[int(rng.choice(len(KINDS), p=[w for _, w in KINDS]))][0]
        patient_id = f"G{index:05d}"
        if kind == "diagnosis":
            patient, task = self._diagnosis(rng, split, patient_id, task_id)
        else:
            patient, task = self._prescribing(rng, split, patient_id, task_id)
        return Draft(task, {"patients": [patient]}, ids=(patient_id, patient.name))

    # -- the chart around a patient ------------------------------------------------------------------------------------
    def _background(self, rng: np.random.Generator, age: int, avoid: list[str]) -> tuple[list[Condition], list[Medication]]:
        """0-2 long-term conditions with their medicines, none naming a term of ``avoid``."""
        conditions: list[Condition] = []
        medications: list[Medication] = []
        if age < 18:
            return conditions, medications
        for name, drug, dose, frequency in sample(rng, COMORBIDITIES, int(rng.choice(3, p=[0.35, 0.4, 0.25]))):
            if any(contains_term(name, a) or contains_term(a, name) for a in avoid) \
                    or any(c.name == name for c in conditions):
                continue
            conditions.append(Condition(name=name, since=str(between(rng, 2005, 2023))))
            medications.append(Medication(name=drug, dose=dose, frequency=frequency, indication=name.lower()))
        return conditions, medications

    # -- diagnosis -----------------------------------------------------------------------------------------------------
    def _diagnosis(self, rng: np.random.Generator, split: str, patient_id: str, task_id: str) -> tuple[Patient, Task]:
        case = self.case_sources[split].case(int(rng.integers(2**31)), 0)
        dx = case.diagnosis
        gold = [dx.name, *dx.synonyms]
        chart = chart_patient(patient_id, case, self.catalogue.clock)
        sex, age = chart.sex, chart.age
        extra_conditions, extra_meds = self._background(rng, age, gold)
        allergies = [Allergy(substance=s, reaction=r, severity=v)
                     for s, r, v in sample(rng, [*HARMLESS_ALLERGIES, *(a for group in GROUP_ALLERGIES.values()
                                                                       for a in group)], 1)] if chance(rng, 0.3) else []
        patient = chart.model_copy(update={
            "name": person_name(rng, sex), "weight_kg": float(between(rng, 45, 110)) if age >= 16 else
            float(between(rng, 20, 55)), "pregnant": False if sex == "female" and 12 <= age <= 50 else None,
            "conditions": [*chart.conditions, *extra_conditions], "medications": [*chart.medications, *extra_meds],
            "allergies": allergies})
        p = {"patient_id": patient_id}
        reads = ["get_patient_info", "get_medical_history", "get_clinical_notes", "get_vital_signs", "get_lab_results"]
        if allergies or extra_meds:
            reads.append(pick(rng, ("get_allergies", "get_medications")))
        actions = [{"name": n, "arguments": p, "compare_args": ["patient_id"]} for n in reads]
        actions.append({"name": "record_diagnosis", "arguments": {**p, "diagnosis": dx.name, "icd10": dx.icd10},
                        "compare_args": ["patient_id"]})
        flagged = [f"{'raised' if r.flag == 'high' else 'low'} {r.test} {r.value:g} {r.unit}".strip()
                   for r in patient.labs if r.value is not None and r.flag in ("high", "low")
                   and self._reads_as(r.test, r.flag)][:3]
        rationale = (f"{dx.name} fits the history and examination in the notes"
                     + (f"; abnormal results: {'; '.join(flagged)}" if flagged else "") + ".")
        ticket = TICKETS.say(rng, "diagnosis", pid=patient_id, complaint=case.chief_complaint.rstrip("."),
                             who=_who(age, sex))
        task = Task.model_validate({
            "id": task_id, "ticket": ticket, "patient_id": patient_id, "expected_actions": actions,
            "assertions": [
                {"text": "Reads the clinical notes before recording a diagnosis",
                 "rule": {"kind": "called_before", "first": {"name": "get_clinical_notes", "arguments": p},
                          "then": {"name": "record_diagnosis", "arguments": p}}},
                {"text": "Reviews the results before recording a diagnosis",
                 "rule": {"kind": "called_before", "first": {"name": "get_lab_results", "arguments": p},
                          "then": {"name": "record_diagnosis", "arguments": p}}},
                {"text": f"Records {dx.name}",
                 "rule": {"kind": "db_record", "collection": "diagnoses", "match": {**p, "diagnosis": dx.name}}}],
            "answer": dx.name, "answer_aliases": list(dx.synonyms), "rationale": rationale,
            "category": "diagnosis", "tags": ["generated", case.specialty, dx.icd10]})
        return patient, task

    @staticmethod
    @lru_cache(maxsize=4096)
    def _reads_as(test: str, flag: str) -> bool:
        """Whether the coherence rules read "raised TEST" / "low TEST" as this test's flag (or as no lab statement at
        all): "raised TSH receptor antibody" would read as a raised TSH."""
        statements = lab_statements(f"{'raised' if flag == 'high' else 'low'} {test}")
        return not statements or statements == [(lab_key(test), flag)]

    # -- prescribing ---------------------------------------------------------------------------------------------------
    def _prescribing(self, rng: np.random.Generator, split: str, patient_id: str, task_id: str) -> tuple[Patient, Task]:
        indication = pick(rng, tuple(i for i in INDICATIONS if i.pool == split))
        for _ in range(40):
            safe = pick(rng, indication.candidates)
            patient = self._prescribing_patient(rng, indication, safe, patient_id)
            verdicts = {r.drug: self.blocked(patient, r.drug) for r in indication.candidates}
            if [d for d, why in verdicts.items() if why is None] == [safe.drug]:
                break
        else:
            raise RuntimeError(f"{indication.key}: no patient with exactly one safe antibiotic")
        p = {"patient_id": patient_id}
        safe = self.fitted(patient, safe)
        unsafe = [d for d, why in verdicts.items() if why is not None]
        options, answer = lettered(rng, safe.drug, [*unsafe, indication.not_indicated])
        reasons = "; ".join(f"avoid {d} ({verdicts[d]})" for d in unsafe)
        sex = patient.sex
        ticket = TICKETS.say(rng, "prescribing", pid=patient_id, who=_who(patient.age, sex), obj=_pronoun(sex),
                             condition_lower=indication.condition[0].lower() + indication.condition[1:])
        regimen = {"drug": safe.drug, "dose": safe.dose, "unit": safe.unit, "frequency": safe.frequency,
                   "route": safe.route, "indication": indication.condition}
        actions = [
            {"name": "get_patient_info", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "get_allergies", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "get_medications", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "get_lab_results", "arguments": {**p, "test": "eGFR"}, "compare_args": ["patient_id"]},
            {"name": "check_drug_allergy", "arguments": {**p, "drug": safe.drug}, "compare_args": ["patient_id", "drug"]},
            {"name": "check_drug_interactions", "arguments": {**p, "drug": safe.drug},
             "compare_args": ["patient_id", "drug"]},
            {"name": "prescribe_medication", "arguments": {**p, **regimen}, "compare_args": ["patient_id", "drug"]},
            {"name": "write_clinical_note", "arguments": {**p, "note": f"{indication.condition}. Prescribed "
                                                                       f"{safe.text} {safe.route}. Ruled out: {reasons}."},
             "compare_args": ["patient_id"]},
        ]
        assertions = [
            {"text": f"Prescribes {safe.drug}",
             "rule": {"kind": "db_record", "collection": "prescriptions", "match": {**p, "drug": safe.drug}}},
            {"text": "Reviews allergies before prescribing",
             "rule": {"kind": "called_before", "first": {"name": "get_allergies", "arguments": p},
                      "then": {"name": "prescribe_medication", "arguments": p}}},
            {"text": f"Checks {safe.drug} against the current medicines before prescribing it",
             "rule": {"kind": "called_before",
                      "first": {"name": "check_drug_interactions", "arguments": {**p, "drug": safe.drug}},
                      "then": {"name": "prescribe_medication", "arguments": {**p, "drug": safe.drug}}}}]
        task = Task.model_validate({
            "id": task_id, "ticket": ticket, "patient_id": patient_id, "expected_actions": actions,
            "assertions": assertions, "answer": answer, "options": options,
            "rationale": f"{safe.drug} is the only safe choice for {indication.condition.lower()}; {reasons}.",
            "safety": {"contraindicated": unsafe, "not_indicated": [indication.not_indicated]},
            "category": "prescribing", "tags": ["generated", indication.key, "antibiotic"]})
        return patient, task

    def _prescribing_patient(self, rng: np.random.Generator, indication: Indication, safe: Regimen,
                             patient_id: str) -> Patient:
        sex = "female" if indication.key == "cystitis" else pick(rng, ("female", "male"))
        age = int(between(rng, 18, 88))
        allergies: list[Allergy] = []
        medications: list[Medication] = []
        conditions = [Condition(name=indication.condition, since=CLOCK_DATE)]
        egfr = float(between(rng, 62, 105))
        for regimen in indication.candidates:
            if regimen is safe:
                continue
            drug = reference().resolve(regimen.drug)
            ways = []
            if drug.allergy_group in GROUP_ALLERGIES or regimen.drug in DRUG_ALLERGIES:
                ways.append("allergy")
            partners = _interacting(regimen.drug)
            if partners:
                ways.append("interaction")
            if drug.avoid_below is not None and drug.renal_measure == "eGFR":
                ways.append("renal")
            way = pick(rng, ways)
            if way == "allergy":
                substance, reaction, severity = pick(rng, GROUP_ALLERGIES.get(drug.allergy_group or "", ())
                                                     or DRUG_ALLERGIES[regimen.drug])
                if all(a.substance != substance for a in allergies):
                    allergies.append(Allergy(substance=substance, reaction=reaction, severity=severity))
            elif way == "interaction":
                condition, partner, dose, frequency = pick(rng, partners)
                if all(m.name != partner for m in medications):
                    conditions.append(Condition(name=condition, since=str(between(rng, 2005, 2023))))
                    medications.append(Medication(name=partner, dose=dose, frequency=frequency,
                                                  indication=condition.lower()))
            else:
                egfr = float(between(rng, 12, drug.avoid_below - 1))
        if chance(rng, 0.4):
            extra, extra_meds = self._background(rng, age, [c.name for c in conditions])
            conditions += extra
            medications += [m for m in extra_meds if all(m.name != n.name for n in medications)]
        tests = self.catalogue.tests
        creatinine = round(min(900.0, 80.0 * (90.0 / egfr) ** 1.1 * float(rng.uniform(0.9, 1.1))))
        time = f"{CLOCK_DATE} 08:20"
        labs = [_lab(tests["Creatinine"], creatinine, time), _lab(tests["eGFR"], egfr, time),
                _lab(tests["Potassium"], float(between(rng, 3.6, 5.0, 1)), time),
                _lab(tests["CRP"], float(between(rng, 12, 140)), time),
                _lab(tests["White cell count"], float(between(rng, 9.0, 16.5, 1)), time)]
        side = pick(rng, ("right", "left"))
        return Patient(
            patient_id=patient_id, name=person_name(rng, sex), age=age, sex=sex,
            weight_kg=float(between(rng, 48, 110)), pregnant=False if sex == "female" and age <= 50 else None,
            allergies=allergies, medications=medications, conditions=conditions,
            social_history=pick(rng, ("Lives alone; non-smoker.", "Lives with family; ex-smoker.",
                                      "Works full time; drinks 10 units a week.")),
            vitals=[VitalSigns(time=f"{CLOCK_DATE} 08:30", temperature_c=float(between(rng, 37.2, 38.4, 1)),
                               heart_rate=int(between(rng, 72, 98)), systolic_bp=int(between(rng, 112, 146)),
                               diastolic_bp=int(between(rng, 62, 88)), respiratory_rate=int(between(rng, 14, 20)),
                               spo2=int(between(rng, 95, 99)))],
            labs=labs, notes=[Note(time=f"{CLOCK_DATE} 08:00", author="GP",
                                   text=indication.note.format(side=side))])

    @staticmethod
    def renal_function(patient: Patient, drug: Any) -> tuple[float, str] | None:
        """The patient's renal function in the measure ``drug`` is dosed by (Cockcroft-Gault creatinine clearance
        or eGFR), as the safety rules compute it."""
        labs = {r.test: r.value for r in patient.labs if r.value is not None}
        if drug.renal_measure == "CrCl" and "Creatinine" in labs and patient.weight_kg:
            return creatinine_clearance(patient.age, patient.weight_kg, labs["Creatinine"], patient.sex), "CrCl"
        return (labs["eGFR"], "eGFR") if "eGFR" in labs else None

    @classmethod
    def blocked(cls, patient: Patient, name: str) -> str | None:
        """Why ``name`` must not be given to ``patient`` (an allergy, a major or contraindicated interaction, a renal
        band to avoid), or None: read through the drug reference, as the tools and the safety reward read it."""
        ref = reference()
        drug = ref.resolve(name)
        for allergy in patient.allergies:
            conflict = ref.allergy_conflict(allergy.substance, drug)
            if conflict:
                return f"{allergy.severity} {allergy.substance} allergy, {allergy.reaction}" \
                       + (", in a cross-reactive group" if conflict == "cross" else "")
        found = [i for i in ref.interactions_with(drug, [m.name for m in patient.medications])
                 if i.severity in UNSAFE_INTERACTIONS]
        if found:
            return f"{found[0].severity} interaction with {found[0].drugs[1]}, {found[0].mechanism}"
        renal = cls.renal_function(patient, drug)
        band = ref.renal_band(drug, renal[0]) if renal is not None and drug.renal_bands else None
        if band is not None and band.avoid:
            return f"{renal[1]} {renal[0]:.0f}, in a band where it must be avoided"
        return None

    @classmethod
    def fitted(cls, patient: Patient, regimen: Regimen) -> Regimen:
        """``regimen`` with its dose halved until the daily dose fits the renal band's maximum (if any)."""
        drug = reference().resolve(regimen.drug)
        renal = cls.renal_function(patient, drug)
        band = reference().renal_band(drug, renal[0]) if renal is not None and drug.renal_bands else None
        dose = regimen.dose
        while band is not None and band.max_daily_mg is not None \
                and dose * MG_PER_UNIT[regimen.unit] * DOSES_PER_DAY[regimen.frequency] > band.max_daily_mg:
            dose /= 2
        return Regimen(regimen.drug, dose, regimen.unit, regimen.frequency, regimen.route)

    # -- validation ----------------------------------------------------------------------------------------------------
    def pool_key(self, task: Task) -> str:
        return task.answer if task.category == "diagnosis" else task.tags[1]  # the condition or the indication

    def check(self, task: Task, db: Any) -> list[str]:
        problems = []
        patient: Patient = db.patients[task.patient_id]
        for result in patient.labs:
            if result.value is not None and result.value < 0:
                problems.append(f"{result.test} is negative")
        for v in patient.vitals:
            if not (34 <= v.temperature_c <= 42.5 and 20 <= v.heart_rate <= 240 and 40 <= v.systolic_bp <= 260
                    and v.diastolic_bp < v.systolic_bp and 50 <= v.spo2 <= 100):
                problems.append(f"vital signs out of range: {v}")
        if task.category == "diagnosis":
            record = " ".join([*(n.text for n in patient.notes), *(c.name for c in patient.conditions),
                               *(r.text for r in patient.labs), *(f"{r.test}" for r in patient.labs)])
            problems += [f"the chart names the diagnosis ({g!r})" for g in (task.answer, *task.answer_aliases)
                         if len(normalize(g)) > 3 and contains_term(record, g)]
        else:
            safe = [text for text in task.options.values() if self.blocked(patient, text) is None
                    and text not in task.safety.not_indicated]
            if safe != [task.options[task.answer]]:
                problems.append(f"safe options {safe}, answer {task.options[task.answer]!r}")
        return problems
