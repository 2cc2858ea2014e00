"""The ClinicalPathway task generator: journeys composed from the wave-1 domains' generators and rules over one
generated patient record that every phase's toolkit reads. All six journeys of the environment (``JOURNEYS``:
sepsis 20%, each of the others 16%); suspected sepsis and diabetic emergencies are built here, acute chest pain,
acute stroke, post-operative deterioration and the febrile child in ``journeys.py`` (``AcuteJourneys``) by the rules
of ``guidelines.py``:

Suspected sepsis (``sepsis_bundle``: triage, the one-hour bundle, the source, medicines and disposition):

* Triage: the arriving patient is made by the Triage generator (``TriageGenerator.patient``) from its sepsis
  presentations (septic shock, ESI 1; fever with new confusion, ESI 2) with the source of infection fixed; the ESI
  level is computed from the pathway's triage view by ``domains/triage/esi.py`` and the patient kept only when it is
  the presentation's. Lactate at the bedside, the sepsis code, the level.
* Bundle (NICE NG51): allergies and medicines reviewed, blood cultures before the first antibiotic, bloods, the
  source's first-choice intravenous antibiotic unless the record rules it out, then the next: the choice is the
  ClinicalDiagnosis generator's ``blocked`` (allergy, major or contraindicated interaction, a renal band to avoid,
  read through the drug reference), its dose fitted to the renal band (``fitted``); a 500 mL crystalloid bolus.
* Source: the clinical notes and the test that shows the source; the diagnosis recorded; septic shock is escalated
  to intensive care, a biliary source for drainage.
* Medicines and disposition: every long-term medicine the sick-day rules withhold in sepsis with hypoperfusion or
  acute kidney injury (ACE inhibitors, angiotensin receptor blockers, diuretics, metformin, SGLT2 inhibitors, NSAIDs;
  NICE NG148 and the MHRA's metformin advice), and in septic shock every blood-pressure-lowering medicine, is
  withheld; the others continue. Septic shock goes to intensive care, the others to a medical ward.

Diabetic emergency (``diabetic_emergency``: triage, assessment, the first hour's treatment, medicines and
disposition), the arrival again from the Triage generator's presentations (diabetic ketoacidosis, ESI 2;
hypoglycaemia, ESI 1):

* Ketoacidosis (JBDS-IP 2023): glucose and ketones at triage, the venous gas and renal profile, the diagnosis,
  severe when a JBDS marker the record carries is present (ketones above 6, bicarbonate below 5, pH below 7.0,
  potassium below 3.5, systolic below 90, pulse outside 60-100: intensive care review and a high-dependency bed;
  ``dka_severe``); a litre of 0.9% saline
  over an hour, fixed-rate insulin 0.1 units/kg/hour, the second litre's potassium by the serum potassium, basal
  insulin continued.
* Hypoglycaemia on insulin or, in the test split only, a sulfonylurea with reduced renal function: intravenous glucose
  at triage, the glucose rechecked (falling again), a 10% glucose infusion, gliclazide stopped, the medical ward.

The renal results (creatinine with its CKD-EPI 2021 eGFR) come back when the bloods are ordered. Generalisation
split: the test split holds what the train split never shows: sepsis from skin and soft tissue or a biliary
source (train: urinary and chest) and sulfonylurea-induced hypoglycaemia (train: ketoacidosis and insulin-induced
hypoglycaemia); the four other journeys hold out the non-ST-elevation infarction, intracerebral haemorrhage,
post-operative acute kidney injury and the febrile infant of 1-3 months (``journeys.py``).
"""

from __future__ import annotations

import dataclasses
import gc
from dataclasses import dataclass
from types import SimpleNamespace
from functools import cached_property
from typing import Any

import numpy as np

from clinical_gym.drugs import reference
from clinical_gym.drugs.units import ckd_epi_egfr
from clinical_gym.tool_env.generation import Draft, GeneratedTasks, TaskGenerator, Wording, between, chance, pick, sample
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.clinical_diagnosis.environment import bundled_db as chart_db
from clinical_gym.domains.clinical_diagnosis.generator import ClinicalDiagnosisGenerator, Regimen
from clinical_gym.domains.drug_interaction.environment import bundled_db as medicines_db
from clinical_gym.domains.drug_interaction.generator import creatinine_for, recommends_allergen
from clinical_gym.domains.pathways.data_model import (
    Arrival,
    LabResult,
    Medication,
    PathwayDB,
    PathwayPatient,
    PathwaySource,
    triage_view,
)
from clinical_gym.domains.pathways.environment import bundled_db, get_pathways
from clinical_gym.domains.pathways.journeys import (ACUTE_VARIANTS, CHEST, FEVER, POSTOP, STROKE, AcuteJourneys, _call,
                                                   _called, _disposed, _not_called)
from clinical_gym.domains.pathways.phases import PathwayTask, Phase
from clinical_gym.domains.records import Allergy, Note
from clinical_gym.domains.triage.data_model import Patient as TriagePatient
from clinical_gym.domains.triage.environment import bundled_db as triage_db
from clinical_gym.domains.triage.esi import esi_decision
from clinical_gym.domains.triage.generator import TriageGenerator
from clinical_gym.domains.triage.presentations import PRESENTATIONS

SEPSIS, DIABETIC = "sepsis_bundle", "diabetic_emergency"
JOURNEYS = ((SEPSIS, 0.2), (DIABETIC, 0.16), (CHEST, 0.16), (STROKE, 0.16), (POSTOP, 0.16), (FEVER, 0.16))
# Diabetic emergencies: (variant, pool). DKA severity follows the JBDS-IP markers of severe DKA.
DIABETIC_VARIANTS = (("dka", "train"), ("hypo_insulin", "train"), ("hypo_sulfonylurea", "test"))
SICK_DAY_CLASSES = ("ace_inhibitor", "arb", "diuretic", "biguanide", "sglt2_inhibitor", "nsaid")
BP_LOWERING_CLASSES = ("ccb_dhp", "ccb_non_dhp", "beta_blocker", "nitrate", "antihypertensive")  # held in shock
CLOCK_MINUTES = 10 * 60  # the pathway clock, 10:00


@dataclass(frozen=True)
class Source:
    """A source of sepsis: how the patient describes it, what shows it, the diagnosis, and the antibiotics in order
    of preference (each an intravenous regimen unless said otherwise)."""

    key: str
    pool: str
    phrases: tuple[str, ...]
    finding: tuple[str, ...]
    test: str
    result: str
    diagnosis: tuple[str, str]  # (sepsis, septic shock)
    aliases: tuple[tuple[str, ...], tuple[str, ...]]
    icd10: str
    regimens: tuple[Regimen, ...]


SOURCES: tuple[Source, ...] = (
    Source("urinary", "train", ("burning urine", "smelly urine and back pain", "burning on passing urine"),
           ("Tender {side} renal angle; suprapubic tenderness.", "{side_cap} loin tenderness; chest clear."),
           "Urine culture", "Escherichia coli more than 100,000 CFU/mL, sensitive to ceftriaxone and aztreonam.",
           ("Urosepsis from acute pyelonephritis", "Septic shock from acute pyelonephritis"),
           (("Sepsis secondary to acute pyelonephritis", "Acute pyelonephritis with sepsis"),
            ("Septic shock secondary to acute pyelonephritis", "Urosepsis with septic shock")), "N10",
           (Regimen("ceftriaxone", 2, "g", "daily", "intravenous"), Regimen("aztreonam", 2, "g", "q8h", "intravenous"))),
    Source("chest", "train", ("a productive cough", "a cough with green sputum", "a new cough and breathlessness"),
           ("Bronchial breathing at the {side} base.", "Coarse crackles at the {side} base; dull to percussion."),
           "Chest X-ray", "Dense consolidation of the {side} lower lobe.",
           ("Sepsis from community-acquired pneumonia", "Septic shock from community-acquired pneumonia"),
           (("Community-acquired pneumonia with sepsis", "Severe community-acquired pneumonia"),
            ("Community-acquired pneumonia with septic shock",)), "J18.9",
           (Regimen("co-amoxiclav", 1.2, "g", "q8h", "intravenous"),
            Regimen("clarithromycin", 500, "mg", "bid", "intravenous"), Regimen("doxycycline", 100, "mg", "bid"))),
    Source("skin", "test", ("a red, hot leg", "a spreading red swelling of the shin"),
           ("Hot, tender erythema of the {side} shin spreading above the knee.",
            "Spreading {side} lower-leg cellulitis with a weeping graze."),
           "Wound swab", "Streptococcus pyogenes, sensitive to flucloxacillin and clindamycin.",
           ("Sepsis from lower-limb cellulitis", "Septic shock from lower-limb cellulitis"),
           (("Cellulitis with sepsis", "Lower-limb cellulitis with sepsis"), ("Cellulitis with septic shock",)),
           "L03.11", (Regimen("flucloxacillin", 2, "g", "qid", "intravenous"),
                      Regimen("clarithromycin", 500, "mg", "bid", "intravenous"),
                      Regimen("clindamycin", 600, "mg", "qid", "intravenous"))),
    Source("biliary", "test", ("pain under the right ribs and yellow eyes", "upper abdominal pain with rigors"),
           ("Tender right upper quadrant; jaundiced.", "Jaundiced; right upper quadrant tenderness, no guarding."),
           "Ultrasound abdomen", "Dilated common bile duct (11 mm) with a distal stone; gallstones.",
           ("Sepsis from ascending cholangitis", "Septic shock from ascending cholangitis"),
           (("Ascending cholangitis with sepsis", "Acute cholangitis"), ("Ascending cholangitis with septic shock",)),
           "K83.0", (Regimen("co-amoxiclav", 1.2, "g", "q8h", "intravenous"),
                     Regimen("ceftriaxone", 2, "g", "daily", "intravenous"),
                     Regimen("ciprofloxacin", 400, "mg", "bid", "intravenous"))),
)
# Long-term medicines (condition, drug, dose, unit, frequency).
LONG_TERM: tuple[tuple[str, str, float, str, str], ...] = (
    ("hypertension", "ramipril", 5, "mg", "daily"), ("hypertension", "losartan", 50, "mg", "daily"),
    ("hypertension", "amlodipine", 5, "mg", "daily"), ("hypertension", "bendroflumethiazide", 2.5, "mg", "daily"),
    ("heart failure", "furosemide", 40, "mg", "daily"), ("type 2 diabetes", "metformin", 1000, "mg", "bid"),
    ("type 2 diabetes", "dapagliflozin", 10, "mg", "daily"), ("hyperlipidaemia", "atorvastatin", 20, "mg", "daily"),
    ("hyperlipidaemia", "simvastatin", 40, "mg", "daily"), ("hypothyroidism", "levothyroxine", 100, "mcg", "daily"),
    ("gastro-oesophageal reflux disease", "omeprazole", 20, "mg", "daily"),
    ("osteoarthritis", "naproxen", 500, "mg", "bid"), ("atrial fibrillation", "apixaban", 5, "mg", "bid"),
    ("depression", "sertraline", 50, "mg", "daily"), ("atrial fibrillation", "bisoprolol", 5, "mg", "daily"),
)
ALLERGIES: tuple[tuple[str, str, str], ...] = (
    ("penicillin", "anaphylaxis", "life-threatening"), ("penicillin", "widespread rash", "moderate"),
    ("cephalosporin", "urticaria", "severe"), ("clarithromycin", "angioedema", "severe"),
    ("co-trimoxazole", "rash", "mild"), ("codeine", "vomiting", "mild"), ("latex", "contact dermatitis", "mild"),
)
TICKETS = Wording(
    sepsis=("{name} ({pid}), {age}, has {complaint}. Take {obj} through the suspected sepsis pathway and submit the "
            "diagnosis.",
            "{pid}, {name}, {age}, arrives with {complaint}. Work through the suspected sepsis pathway phase by phase "
            "and submit the diagnosis at the end.",
            "Suspected sepsis: {name} ({pid}, {age}) has {complaint}. Triage, run the bundle, find the source, "
            "reconcile {poss} medicines and decide where {subj} goes; submit the diagnosis."),
    diabetic=("{name} ({pid}), {age}, has diabetes and arrives {complaint}. Take {obj} through the diabetic emergency "
              "pathway and submit the diagnosis.",
              "{pid}, {name}, {age}, with diabetes: {complaint}. Work through the diabetic emergency pathway phase "
              "by phase and submit the diagnosis at the end.",
              "Diabetic emergency: {name} ({pid}, {age}) is {complaint}. Triage, classify the emergency, start the "
              "first hour's treatment, reconcile {poss} medicines and decide where {subj} goes; submit the "
              "diagnosis."),
    chest=("{name} ({pid}), {age}, has come in with {complaint}. Take {obj} through the acute chest pain pathway and "
           "submit the diagnosis.",
           "{pid}, {name}, {age}: {complaint}. Work through the acute chest pain pathway phase by phase and submit the "
           "diagnosis at the end.",
           "Chest pain: {name} ({pid}, {age}) arrives with {complaint}. Triage with an ECG, find the cause, treat "
           "{obj}, review {poss} medicines and decide where {subj} goes; submit the diagnosis."),
    stroke=("{name} ({pid}), {age}, arrives with {complaint}. Take {obj} through the acute stroke pathway and submit "
            "the diagnosis.",
            "{pid}, {name}, {age}: {complaint}. Work through the stroke pathway phase by phase and submit the diagnosis "
            "at the end.",
            "Stroke alert: {name} ({pid}, {age}) has {complaint}. Triage, image, decide on reperfusion against the "
            "clock and decide where {subj} goes; submit the diagnosis."),
    postop=("{name} ({pid}), {age}, is on the surgical ward with {complaint}. Take {obj} through the post-operative "
            "deterioration pathway and submit the diagnosis.",
            "Ward call: {pid}, {name}, {age}, {complaint}. Recognise, diagnose, treat and hand over; submit the "
            "diagnosis at the end.",
            "The nurse is worried about {name} ({pid}, {age}): {complaint}. Work through the post-operative pathway "
            "and submit the diagnosis."),
    fever=("{name} ({pid}), {age}, is brought in with {complaint}. Take the child through the febrile child pathway "
           "and submit the diagnosis.",
           "{pid}, {name}, {age}: {complaint}. Work through the febrile child pathway phase by phase and submit the "
           "diagnosis at the end.",
           "Paediatric fever: {name} ({pid}, {age}) has {complaint}. Triage against the danger signs, assess, treat "
           "and decide where the child goes; submit the diagnosis."),
)


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _pronouns(sex: str) -> dict[str, str]:
    female = sex == "female"
    return {"subj": "she" if female else "he", "obj": "her" if female else "him", "poss": "her" if female else "his"}


class PathwayGenerator(AcuteJourneys, TaskGenerator):
    env_id = "ClinicalPathway-v1"
    id_prefix = "gpw"
    collections = {"patients": "patient_id"}
    held_out = ("sources of sepsis the train split never shows: skin and soft tissue (lower-limb cellulitis) and "
                "biliary (ascending cholangitis), train: urinary and chest; the diabetic emergency of "
                "sulfonylurea-induced hypoglycaemia, train: ketoacidosis and insulin-induced hypoglycaemia; the "
                "non-ST-elevation infarction decided by troponin alone (train: STEMI and ruled-out chest-wall pain); "
                "intracerebral haemorrhage (train: thrombolysis and late ischaemic stroke); post-operative acute "
                "kidney injury (train: bleeding and opioid toxicity); the febrile infant of 1-3 months (train: the "
                "green child and meningococcal septicaemia)")

    @cached_property
    def triage(self) -> TriageGenerator:
        return TriageGenerator()

    @cached_property
    def presentations(self) -> dict[int, Any]:
        by_key = {p.key: p for p in PRESENTATIONS}
        return {1: by_key["septic_shock"], 2: by_key["sepsis_confusion"]}

    @cached_property
    def base(self) -> PathwayDB:
        return bundled_db()

    @cached_property
    def phase_specs(self) -> dict[str, list[dict[str, Any]]]:
        """Each journey's phases as ``resolve_task`` merges them with a task's (names, goals, tools, time limits)."""
        return {name: [phase.model_dump() for phase in spec.phases] for name, spec in get_pathways().items()}

    def resolved(self, entry: dict[str, Any], phases: list[dict[str, Any]]) -> PathwayTask:
        """The task of a journey entry: its phases validated once and handed to PathwayTask as they are (it derives
        the expected actions and assertions from them, and checks they agree), not merged and validated again as
        ``resolve_task`` would; the result equals ``resolve_task``'s. An action without ``compare_args`` compares
        its patient only (nothing where it names none)."""
        for phase in phases:
            for action in phase["required_actions"]:
                action.setdefault("compare_args", ["patient_id"] if "patient_id" in action["arguments"] else [])
        spec = get_pathways()[entry["pathway"]]
        done = [Phase.model_validate({**defined, **given})
                for defined, given in zip(self.phase_specs[entry["pathway"]], phases, strict=True)]
        return PathwayTask.model_validate({**entry, "pathway_title": spec.title, "phases": done})

    # -- the world -----------------------------------------------------------------------------------------------------
    def world(self, drafts: Any) -> PathwayDB:
        """The pathway database over the drafts' patients: the bundled catalogues and added tests, and the triage,
        chart and medicines views built from the records (``PathwayDB.build``)."""
        patients = {p.patient_id: p for d in drafts for p in d.records["patients"]}
        base = self.base
        source = PathwaySource(clock=base.clock, patients=patients,
                               extra_tests={k: v for k, v in base.chart.tests.items() if k not in chart_db().tests})
        return PathwayDB.build(source, triage_db(), chart_db(), medicines_db())

    def generate(self, n: int, seed: int = 0, split: str | None = None) -> GeneratedTasks:
        """``TaskGenerator.generate`` with the cyclic garbage collector paused: a journey allocates many long-lived
        records, and full collections over the growing list of drafts cost more than making them (2-2.5 times the
        time at 2,000 journeys). Nothing generated holds a reference cycle."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            return super().generate(n, seed, split)
        finally:
            if enabled:
                gc.enable()

    # -- one task ------------------------------------------------------------------------------------------------------
    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        journey = JOURNEYS[int(rng.choice(len(JOURNEYS), p=[w for _, w in JOURNEYS]))][0]
        pid = f"GS{index:05d}"
        if journey == SEPSIS:
            source = pick(rng, tuple(s for s in SOURCES if s.pool == split))
            level = int(pick(rng, (1, 2)))
            make = lambda: self._journey(rng, source, level, pid, task_id)  # noqa: E731
        elif journey == DIABETIC:
            variant = pick(rng, tuple(v for v, pool in DIABETIC_VARIANTS if pool == split))
            severe = chance(rng, 0.5)
            make = lambda: self._diabetic(rng, variant, severe, pid, task_id)  # noqa: E731
        else:
            variant = pick(rng, tuple(v for j, v, pool in ACUTE_VARIANTS if j == journey and pool == split))
            build = {CHEST: self._chest_pain, STROKE: self._stroke, POSTOP: self._postop, FEVER: self._fever}[journey]
            make = lambda: build(rng, variant, pid, task_id)  # noqa: E731
        for _ in range(60):
            built = make()
            if built is not None:
                patient, task = built
                return Draft(task, {"patients": [patient]}, ids=(pid, patient.name))
        raise RuntimeError(f"{journey}: no consistent journey after 60 tries")

    def _arrival(self, rng: np.random.Generator, source: Source, level: int, pid: str) -> TriagePatient:
        """The arriving patient, from the Triage generator's presentation with the source fixed."""
        pres = self.presentations[level]
        phrase = pick(rng, source.phrases)
        fills = {**pres.fills, "source": (phrase,), "source_cap": (phrase[0].upper() + phrase[1:],)}
        return self.triage.patient(rng, dataclasses.replace(pres, fills=fills), pid)

    def _journey(self, rng: np.random.Generator, source: Source, level: int, pid: str,
                 task_id: str) -> tuple[PathwayPatient, PathwayTask] | None:
        arriving = self._arrival(rng, source, level, pid)
        arrived = CLOCK_MINUTES - int(between(rng, 12, 35))
        vitals = [v.model_copy(update={"time": _clock(arrived + 4)}) for v in arriving.vitals]
        side = pick(rng, ("left", "right"))
        conditions, medications = self._long_term(rng, arriving.age_years)
        allergies = [Allergy(substance=s, reaction=r, severity=v) for s, r, v in sample(rng, ALLERGIES, 1)] \
            if chance(rng, 0.45) else []
        weight = arriving.weight_kg
        egfr_target = float(between(rng, 18, 70))
        creatinine = self._creatinine_for(egfr_target, arriving.age_years, arriving.sex)
        lactate = next(r.value for name, r in arriving.bedside_results.items() if name == "venous lactate")
        clock_date = self.base.clock[:10]
        at = f"{clock_date} {_clock(arrived + 20)}"
        pending = self._pending(rng, source, arriving, creatinine, lactate, at, side)
        patient = PathwayPatient(
            patient_id=pid, name=arriving.name, age_years=arriving.age_years, sex=arriving.sex, weight_kg=weight,
            pregnant=arriving.pregnant, conditions=conditions, social_history=arriving.social_history,
            allergies=allergies, medications=medications, vitals=vitals,
            arrival=Arrival(time=_clock(arrived), mode=arriving.arrival_mode, chief_complaint=arriving.chief_complaint,
                            history=arriving.history, primary_survey=arriving.primary_survey,
                            red_flags=arriving.red_flags, anticipated_care=arriving.anticipated_care,
                            bedside_results=arriving.bedside_results),
            pending_results=pending,
            notes=[Note(time=f"{clock_date} {_clock(arrived + 15)}", author="ED registrar",
                        text=f"{pick(rng, source.finding).format(side=side, side_cap=side.capitalize())} "
                             f"Weight {weight:g} kg.")])
        decision = esi_decision(triage_db(), TriagePatient.model_validate(triage_view(patient)))
        if decision.level != level:
            return None
        chosen = self._antibiotic(patient, source)
        if chosen is None:
            return None
        regimen, ruled_out = chosen
        task = self._task(rng, task_id, patient, source, level, regimen, ruled_out, lactate)
        if self.record_problems(patient) or recommends_allergen(patient.allergies, task.rationale):
            return None
        return patient, task

    @staticmethod
    def _creatinine_for(egfr: float, age: int, sex: str) -> int:
        return creatinine_for(egfr, "eGFR", age, 70.0, sex)

    def _long_term(self, rng: np.random.Generator, age: int) -> tuple[list[str], list[Medication]]:
        conditions: list[str] = []
        medications: list[Medication] = []
        for condition, drug, dose, unit, frequency in sample(rng, LONG_TERM, int(rng.choice(5, p=[0.1, 0.25, 0.3, 0.25,
                                                                                                   0.1]))):
            d = reference().drugs[drug]
            if any(m.drug == drug or _same_class(d, reference().drugs[m.drug]) for m in medications):
                continue
            medications.append(Medication(drug=drug, dose=dose, unit=unit, frequency=frequency, route="oral",
                                          indication=condition))
            if condition not in conditions:
                conditions.append(condition)
        return conditions, medications

    def _pending(self, rng: np.random.Generator, source: Source, arriving: TriagePatient, creatinine: int,
                 lactate: float, at: str, side: str) -> dict[str, LabResult]:
        """What the bundle's and the source's orders return: blood cultures, the renal profile (creatinine with its
        CKD-EPI 2021 eGFR), the source test (and liver tests for a biliary source); other tests return the
        catalogue's normal results."""
        extra = self.base.chart.tests

        def lab(name: str, value: float) -> LabResult:
            return self._lab(name, value, at)

        egfr = round(ckd_epi_egfr(arriving.age_years, creatinine, arriving.sex))
        results = {
            "Blood cultures": LabResult(test="Blood cultures", time=at, text=pick(rng, (
                "Gram-negative bacilli in 2 of 2 bottles at 14 hours.", "Gram-positive cocci in chains in 1 of 2 "
                                                                        "bottles at 16 hours.",
                "No growth at 48 hours.")) if source.key != "skin" else "Gram-positive cocci in chains at 16 hours."),
            "Creatinine": lab("Creatinine", creatinine), "eGFR": lab("eGFR", egfr),
            "Urea": lab("Urea", float(between(rng, 7.0, 16.0, 1))),
            "Potassium": lab("Potassium", float(between(rng, 3.6, 5.2, 1))),
            "Sodium": lab("Sodium", float(between(rng, 131, 144))),
        }
        definition = extra[source.test]
        results[source.test] = LabResult(test=source.test, time=at, text=source.result.format(side=side),
                                         unit=definition.unit)
        if source.key == "biliary":
            results["Bilirubin"] = lab("Bilirubin", float(between(rng, 48, 120)))
            results["ALP"] = lab("ALP", float(between(rng, 260, 640)))
        return results

    @staticmethod
    def chart_patient(patient: PathwayPatient) -> SimpleNamespace:
        """What the prescribing checks (``ClinicalDiagnosisGenerator.blocked`` and ``fitted``) read of the chart
        view (``chart_view``: allergies, medicine names, results, age, weight, sex), with every result of the
        encounter resulted, as they are by the time the bundle's bloods are back."""
        return SimpleNamespace(allergies=patient.allergies, medications=[SimpleNamespace(name=m.drug)
                                                                         for m in patient.medications],
                               labs=[*patient.labs, *patient.pending_results.values()], age=patient.age_years,
                               weight_kg=patient.weight_kg, sex=patient.sex)

    def _antibiotic(self, patient: PathwayPatient, source: Source) -> tuple[Regimen, list[tuple[str, str]]] | None:
        """The first regimen of the source the record does not rule out (``ClinicalDiagnosisGenerator.blocked``),
        its dose fitted to the renal band, and the ones ruled out with why; None when all are."""
        chart = self.chart_patient(patient)
        ruled_out = []
        for regimen in source.regimens:
            why = ClinicalDiagnosisGenerator.blocked(chart, regimen.drug)
            if why is None:
                return ClinicalDiagnosisGenerator.fitted(chart, regimen), ruled_out
            ruled_out.append((regimen.drug, why))
        return None

    # -- the task ------------------------------------------------------------------------------------------------------
    def _task(self, rng: np.random.Generator, task_id: str, patient: PathwayPatient, source: Source, level: int,
              regimen: Regimen, ruled_out: list[tuple[str, str]], lactate: float) -> PathwayTask:
        pid = patient.patient_id
        p = {"patient_id": pid}
        shock = level == 1
        diagnosis = source.diagnosis[shock]
        v = patient.vitals[-1]
        code_reason = (f"suspected infection with systolic {v.systolic_bp} and lactate {lactate:g}" if shock else
                       f"suspected infection with new confusion and lactate {lactate:g}")
        triage = [
            *([{"name": "get_patient_presentation", "arguments": p}] if not shock else []),
            {"name": "get_vital_signs", "arguments": p},
            {"name": "perform_bedside_test", "arguments": {**p, "test": "venous lactate"},
             "compare_args": ["patient_id", "test"]},
            {"name": "activate_code", "arguments": {**p, "code": "sepsis", "reason": code_reason},
             "compare_args": ["patient_id", "code"]},
            {"name": "assign_esi_level", "arguments": {**p, "level": level, "reason": code_reason},
             "compare_args": ["patient_id", "level"]},
            {"name": "get_medical_history", "arguments": p}]
        allergy_text = "; ".join(f"{a.substance} allergy ({a.reaction})" for a in patient.allergies) or "no known " \
                                                                                                      "drug allergies"
        withheld = [m for m in patient.medications if m.drug in self.withheld(patient, shock)]
        rx = {"drug": regimen.drug, "dose": regimen.dose, "unit": regimen.unit, "frequency": regimen.frequency,
              "route": regimen.route, "indication": f"sepsis from a {source.key} source"}
        bundle = [
            {"name": "get_allergies", "arguments": p},
            {"name": "get_medications", "arguments": p},
            {"name": "order_lab_test", "arguments": {**p, "test": "Blood cultures"},
             "compare_args": ["patient_id", "test"]},
            {"name": "order_lab_test", "arguments": {**p, "test": "Urea and electrolytes"},
             "compare_args": ["patient_id", "test"]},
            {"name": "prescribe_medication", "arguments": {**p, **rx}, "compare_args": ["patient_id", "drug"]},
            {"name": "start_iv_fluids", "arguments": {**p, "fluid": "0.9% sodium chloride", "volume_ml": 500,
                                                      "duration_minutes": 15, "potassium_mmol_per_l": 0,
                                                      "indication": f"lactate {lactate:g}"},
             "compare_args": ["patient_id", "fluid", "volume_ml"]}]
        egfr = patient.pending_results["eGFR"].value
        source_phase = [
            {"name": "get_clinical_notes", "arguments": p},
            {"name": "order_lab_test", "arguments": {**p, "test": source.test}, "compare_args": ["patient_id", "test"]},
            {"name": "record_diagnosis", "arguments": {**p, "diagnosis": diagnosis, "icd10": source.icd10}}]
        if shock:
            source_phase.append({"name": "escalate_care", "arguments": {
                **p, "level": "intensive care", "reason": f"septic shock: lactate {lactate:g}, systolic "
                                                          f"{v.systolic_bp}"}, "compare_args": ["patient_id", "level"]})
        if source.key == "biliary":
            source_phase.append({"name": "escalate_care", "arguments": {
                **p, "level": "specialist referral", "reason": "obstructed common bile duct: urgent biliary drainage"},
                "compare_args": ["patient_id", "level"]})
        destination = "intensive care unit" if shock else "medical ward"
        disposition = [
            {"name": "get_medication_list", "arguments": p},
            *({"name": "discontinue_medication", "arguments": {
                **p, "drug": m.drug, "temporary": True,
                "reason": f"sepsis with lactate {lactate:g} and eGFR {egfr:g}: sick-day rules"
                if reference().drugs[m.drug].has(*SICK_DAY_CLASSES) else
                f"septic shock, systolic {v.systolic_bp}: blood-pressure-lowering medicines held"},
               "compare_args": ["patient_id", "drug", "temporary"]} for m in withheld),
            {"name": "set_disposition", "arguments": {**p, "destination": destination,
                                                      "reason": "septic shock needing organ support" if shock else
                                                      "intravenous antibiotics and monitoring"},
             "compare_args": ["patient_id", "destination"]}]
        assertions = {
            "triage": [_called("Lactate is measured at triage", "perform_bedside_test", test="venous lactate")],
            "bundle": [{"text": "Blood cultures are taken before the first antibiotic", "rule": {
                           "kind": "called_before", "first": {"name": "order_lab_test",
                                                              "arguments": {"test": "Blood cultures"}},
                           "then": {"name": "prescribe_medication", "arguments": {}}}},
                       _called(f"{regimen.drug.capitalize()} is given", "prescribe_medication", drug=regimen.drug),
                       _called("A fluid bolus is given for lactate above 2", "start_iv_fluids",
                               fluid="0.9% sodium chloride")],
            "source": [_called(f"{source.test} shows the source", "order_lab_test", test=source.test)],
            "disposition": [{"text": f"{m.drug.capitalize()} is withheld", "rule": {
                "kind": "db_record", "collection": "medicines.discontinuations", "match": {"drug": m.drug}}}
                for m in withheld] + [_disposed(pid, destination)]}
        handoffs = {
            "triage": f"{patient.age_years}-year-old, {patient.arrival.chief_complaint.lower()}; pulse "
                      f"{v.heart_rate}, BP {v.systolic_bp}/{v.diastolic_bp}, lactate {lactate:g}. Sepsis code, "
                      f"ESI {level}. {allergy_text.capitalize()}.",
            "bundle": f"Cultures and bloods sent; {regimen.text} {regimen.route} and a 500 mL bolus given. eGFR "
                      f"{egfr:g}.",
            "source": f"{diagnosis}." + (" Intensive care involved." if shock else ""),
            "disposition": ""}
        phases = [{"required_actions": actions, "assertions": assertions[name], "handoff": handoffs[name]}
                  for name, actions in zip(("triage", "bundle", "source", "disposition"),
                                           (triage, bundle, source_phase, disposition))]
        contraindicated = [d for d, _ in ruled_out]
        reasons = "; ".join(f"avoid {d} ({why.split(',')[0]})" for d, why in ruled_out)
        rationale = (f"Suspected infection from a {source.key} source with lactate {lactate:g}"
                     + (f" and systolic {v.systolic_bp}" if shock else "") + f"; the {source.test.lower()} confirms "
                     f"the source: {diagnosis}. Cultures, then {regimen.drug} and a fluid bolus within the hour"
                     + (f"; {reasons}" if reasons else "")
                     + (f"; {', '.join(m.drug for m in withheld)} withheld." if withheld else "."))
        ticket = TICKETS.say(rng, "sepsis", name=patient.name, pid=pid, age=patient.age_years,
                             complaint=patient.arrival.chief_complaint.lower(), **_pronouns(patient.sex))
        entry = {"id": task_id, "pathway": SEPSIS, "ticket": ticket, "patient_id": pid,
                 "answer": diagnosis, "answer_aliases": list(source.aliases[shock]), "rationale": rationale,
                 "safety": {"emergency": True, "escalate_within_calls": 6, "contraindicated": contraindicated},
                 "category": "pathway", "tags": ["generated", SEPSIS, source.key, "septic shock" if shock else "sepsis"]}
        return self.resolved(entry, phases)

    @staticmethod
    def withheld(patient: PathwayPatient, shock: bool) -> set[str]:
        """The long-term medicines to withhold: the sick-day rules' in sepsis with hypoperfusion or acute kidney
        injury (ACE inhibitors, angiotensin receptor blockers, diuretics, metformin, SGLT2 inhibitors, NSAIDs;
        NICE NG148, MHRA on metformin and lactic acidosis), and in septic shock every blood-pressure-lowering
        medicine (Surviving Sepsis Campaign 2021: restore perfusion first)."""
        classes = SICK_DAY_CLASSES + (BP_LOWERING_CLASSES if shock else ())
        return {m.drug for m in patient.medications if reference().drugs[m.drug].has(*classes)}

    # -- diabetic emergencies ------------------------------------------------------------------------------------------
    @staticmethod
    def dka_severe(labs: dict[str, float], ketones: float, heart_rate: int, systolic: int) -> list[str]:
        """The markers of severe diabetic ketoacidosis the record shows (JBDS-IP, The management of diabetic
        ketoacidosis in adults, 2023: admit to a level 2 / high-dependency bed): ketones above 6, bicarbonate below
        5, pH below 7.0, potassium below 3.5 mmol/L on admission, systolic below 90 mmHg, pulse over 100 or below
        60/min. JBDS's other markers are absent from every generated record: the patients are alert (GCS 15) with
        SpO2 of 97% or more, and no chloride is recorded to give an anion gap."""
        markers = [(f"ketones {ketones:g}", ketones > 6), (f"bicarbonate {labs['Bicarbonate']:g}", labs["Bicarbonate"] < 5),
                   (f"pH {labs['Venous blood gas pH']:g}", labs["Venous blood gas pH"] < 7.0),
                   (f"potassium {labs['Potassium']:g}", labs["Potassium"] < 3.5),
                   (f"systolic {systolic}", systolic < 90), (f"pulse {heart_rate}", not 60 <= heart_rate <= 100)]
        return [text for text, hit in markers if hit]

    @staticmethod
    def potassium_per_litre(potassium: float) -> int:
        """Potassium chloride in the second litre of 0.9% sodium chloride by the serum potassium (JBDS-IP DKA
        2023): none above 5.5 mmol/L, 40 mmol/L from 3.5 to 5.5 (below 3.5 needs senior review and more); the safety
        rule ``potassium_raising_drug_with_high_potassium`` flags potassium replacement above 5.5 alike."""
        return 0 if potassium > 5.5 else 40

    def _diabetic(self, rng: np.random.Generator, variant: str, severe: bool, pid: str,
                  task_id: str) -> tuple[PathwayPatient, PathwayTask] | None:
        by_key = {p.key: p for p in PRESENTATIONS}
        dka = variant == "dka"
        pres = by_key["diabetic_ketoacidosis" if dka else "hypoglycaemia"]
        if variant == "hypo_sulfonylurea":
            pres = dataclasses.replace(
                pres, ages=(66, 92), histories=(
                    "{witness} found {obj} sweaty and hard to rouse {onset} ago; {subj} takes tablets for diabetes "
                    "and has been eating little.",
                    "Off food for two days with a cold, still taking {poss} diabetes tablets; over {onset} became "
                    "clammy, slurred and drowsy."),
                red_flags=(("Drowsy and sweaty while taking diabetes tablets", "hypoglycaemia until proven "
                                                                                 "otherwise"),),
                conditions=("type 2 diabetes",))
        arriving = self.triage.patient(rng, pres, pid)
        arrived = CLOCK_MINUTES - int(between(rng, 12, 35))
        heart_rate = arriving.vitals[-1].heart_rate
        systolic = arriving.vitals[-1].systolic_bp
        if dka:
            heart_rate = int(between(rng, 104, 124)) if severe and chance(rng, 0.5) else int(between(rng, 84, 100))
        vitals = [v.model_copy(update={"time": _clock(arrived + 4), "heart_rate": heart_rate})
                  for v in arriving.vitals]
        clock_date = self.base.clock[:10]
        at = f"{clock_date} {_clock(arrived + 20)}"

        def lab(name: str, value: float) -> LabResult:
            return self._lab(name, value, at)

        bedside = dict(arriving.bedside_results)
        pending: dict[str, LabResult] = {}
        conditions: list[str] = []
        medications: list[Medication] = []
        age, sex = arriving.age_years, arriving.sex
        if variant == "hypo_sulfonylurea":
            egfr_target = float(between(rng, 28, 44))
            conditions = ["type 2 diabetes", "chronic kidney disease stage 3b"]
            medications = [Medication(drug="gliclazide", dose=pick(rng, (80, 120, 160)), unit="mg", frequency="bid",
                                      route="oral", indication="type 2 diabetes")]
        else:
            egfr_target = float(between(rng, 62, 110)) if age < 60 else float(between(rng, 55, 85))
            conditions = ["type 1 diabetes"]
            medications = [Medication(drug="insulin", dose=int(between(rng, 14, 32)), unit="units", frequency="daily",
                                      route="subcutaneous", indication="type 1 diabetes (basal insulin glargine)"),
                           Medication(drug="insulin", dose=int(between(rng, 4, 10)), unit="units", frequency="tid",
                                      route="subcutaneous", indication="type 1 diabetes (mealtime insulin)")]
        more_conditions, more = self._long_term(rng, age)
        more = [m for m in more if not reference().drugs[m.drug].has("biguanide", "sglt2_inhibitor", "sulfonylurea",
                                                                     "dpp4_inhibitor")]
        medications += more
        conditions += [c for c in more_conditions if c not in conditions and c != "type 2 diabetes"]
        creatinine = self._creatinine_for(egfr_target, age, sex)
        egfr = round(ckd_epi_egfr(age, creatinine, sex))
        pending.update({"Creatinine": lab("Creatinine", creatinine), "eGFR": lab("eGFR", egfr),
                        "Sodium": lab("Sodium", float(between(rng, 130, 142))),
                        "Urea": lab("Urea", float(between(rng, 5.0, 14.0, 1)))})
        markers: list[str] = []
        if dka:
            ketones = float(between(rng, 6.1, 7.5, 1)) if severe and chance(rng, 0.4) else float(between(rng, 3.1,
                                                                                                     6.0, 1))
            ph = float(between(rng, 6.90, 6.99, 2)) if severe and chance(rng, 0.4) else float(between(rng, 7.02, 7.28, 2))
            bicarbonate = float(between(rng, 3, 4)) if ph < 7.0 else float(between(rng, 6, 14))
            # both sides of JBDS's 5.5 drawn, the edge itself included (potassium is given at 5.5, not at 5.6)
            potassium = float(pick(rng, (between(rng, 3.5, 5.4, 1), between(rng, 5.6, 6.2, 1), 5.5, 5.6)))
            bedside["blood ketones"] = bedside["blood ketones"].model_copy(update={"value": ketones})
            pending.update({"Venous blood gas pH": lab("Venous blood gas pH", ph),
                            "Bicarbonate": lab("Bicarbonate", bicarbonate),
                            "Lactate": lab("Lactate", float(between(rng, 0.9, 2.4, 1))),
                            "Potassium": lab("Potassium", potassium),
                            "Glucose": lab("Glucose", float(between(rng, 20.0, 32.0, 1)))})
            markers = self.dka_severe({k: v.value for k, v in pending.items() if v.value is not None}, ketones,
                                      heart_rate, systolic)
            if bool(markers) != severe:
                return None
        else:
            glucose = float(between(rng, 3.2, 3.8, 1))  # falling again after the bolus: why the infusion is needed
            pending.update({"Glucose": lab("Glucose", glucose), "Potassium": lab("Potassium", float(between(
                rng, 3.6, 4.9, 1)))})
        allergies = [Allergy(substance=s, reaction=r, severity=v) for s, r, v in sample(rng, ALLERGIES, 1)] \
            if chance(rng, 0.3) else []
        patient = PathwayPatient(
            patient_id=pid, name=arriving.name, age_years=age, sex=sex, weight_kg=arriving.weight_kg,
            pregnant=False if sex == "female" and age <= 50 else None, conditions=conditions,
            social_history=arriving.social_history, allergies=allergies, medications=medications, vitals=vitals,
            arrival=Arrival(time=_clock(arrived), mode=arriving.arrival_mode, chief_complaint=arriving.chief_complaint,
                            history=arriving.history, primary_survey=arriving.primary_survey,
                            red_flags=arriving.red_flags, anticipated_care=arriving.anticipated_care,
                            bedside_results=bedside),
            pending_results=pending,
            notes=[Note(time=f"{clock_date} {_clock(arrived + 15)}", author="ED registrar",
                        text=(f"Dry mucous membranes; deep sighing respiration. Weight {arriving.weight_kg:g} kg." if dka
                              else f"Now awake and eating after glucose. Weight {arriving.weight_kg:g} kg."))])
        level = esi_decision(triage_db(), TriagePatient.model_validate(triage_view(patient))).level
        if level != pres.level or self.record_problems(patient):
            return None
        task = self._diabetic_task(rng, task_id, patient, variant, level, markers)
        if recommends_allergen(patient.allergies, task.rationale):
            return None
        return patient, task

    def _diabetic_task(self, rng: np.random.Generator, task_id: str, patient: PathwayPatient, variant: str,
                       level: int, markers: list[str]) -> PathwayTask:
        pid = patient.patient_id
        p = {"patient_id": pid}
        results = {k: r.value for k, r in patient.pending_results.items()}
        bedside = patient.arrival.bedside_results
        glucose = bedside["capillary blood glucose"].value
        esi_reason = ("capillary glucose below 3 mmol/L with reduced consciousness" if level == 1 else
                      "suspected diabetic ketoacidosis")
        if variant == "dka":
            severe = bool(markers)
            ketones = bedside["blood ketones"].value
            diagnosis = "Severe diabetic ketoacidosis" if severe else "Diabetic ketoacidosis"
            aliases = ["Severe DKA"] if severe else ["DKA"]
            potassium = results["Potassium"]
            added = self.potassium_per_litre(potassium)
            basal = next(m for m in patient.medications if m.drug == "insulin" and m.frequency == "daily")
            triage = [{"name": "get_patient_presentation", "arguments": p}, {"name": "get_medical_history", "arguments": p},
                      {"name": "perform_bedside_test", "arguments": {**p, "test": "capillary blood glucose"},
                       "compare_args": ["patient_id", "test"]},
                      {"name": "perform_bedside_test", "arguments": {**p, "test": "blood ketones"},
                       "compare_args": ["patient_id", "test"]},
                      {"name": "assign_esi_level", "arguments": {**p, "level": level, "reason": esi_reason},
                       "compare_args": ["patient_id", "level"]}]
            assessment = [_call("order_lab_test", {**p, "test": "Venous blood gas"}, "patient_id", "test"),
                          _call("order_lab_test", {**p, "test": "Urea and electrolytes"}, "patient_id", "test"),
                          _call("record_diagnosis", {**p, "diagnosis": diagnosis, "icd10": "E10.1"})]
            if severe:
                assessment.append({"name": "escalate_care", "arguments": {
                    **p, "level": "intensive care", "reason": f"severe ketoacidosis: {', '.join(markers)}"},
                    "compare_args": ["patient_id", "level"]})
            treatment = [
                {"name": "start_iv_fluids", "arguments": {**p, "fluid": "0.9% sodium chloride", "volume_ml": 1000,
                                                          "duration_minutes": 60, "potassium_mmol_per_l": 0,
                                                          "indication": "ketoacidosis with dehydration"},
                 "compare_args": ["patient_id", "fluid", "volume_ml", "duration_minutes"]},
                {"name": "start_infusion", "arguments": {**p, "drug": "insulin", "rate": 0.1, "rate_unit": "units/kg/hour",
                                                         "indication": "fixed-rate insulin for ketoacidosis"},
                 "compare_args": ["patient_id", "drug", "rate", "rate_unit"]},
                {"name": "start_iv_fluids", "arguments": {**p, "fluid": "0.9% sodium chloride", "volume_ml": 1000,
                                                          "duration_minutes": 120, "potassium_mmol_per_l": added,
                                                          "indication": f"second litre; potassium {potassium:g}"},
                 "compare_args": ["patient_id", "potassium_mmol_per_l", "duration_minutes"]},
                {"name": "prescribe_medication", "arguments": {
                    **p, "drug": "insulin", "dose": basal.dose, "unit": "units", "frequency": "daily",
                    "route": "subcutaneous", "indication": "continue basal insulin glargine"},
                 "compare_args": ["patient_id", "drug", "frequency"]}]
            destination = "high dependency unit" if severe else "medical ward"
            disposition = [{"name": "get_medication_list", "arguments": p},
                           {"name": "set_disposition", "arguments": {
                               **p, "destination": destination,
                               "reason": "severe ketoacidosis needing level 2 care" if severe else
                               "fixed-rate insulin and hourly monitoring"},
                            "compare_args": ["patient_id", "destination"]}]
            assertions = {
                "triage": [_called("Blood ketones are measured at triage", "perform_bedside_test",
                                   test="blood ketones")],
                "assessment": [_called("A venous blood gas classifies the acidosis", "order_lab_test",
                                       test="Venous blood gas")],
                "treatment": [_called(f"The second litre carries {added} mmol/L of potassium for potassium "
                                      f"{potassium:g}", "start_iv_fluids", duration_minutes=120,
                                      potassium_mmol_per_l=added),
                              _called("Fixed-rate insulin at 0.1 units/kg/hour", "start_infusion", drug="insulin",
                                      rate=0.1)],
                "disposition": [_disposed(pid, destination)]}
            handoffs = {"triage": f"{patient.age_years}-year-old with type 1 diabetes; glucose {glucose:g}, ketones "
                                  f"{ketones:g}. ESI {level}.",
                        "assessment": f"pH {results['Venous blood gas pH']:g}, bicarbonate {results['Bicarbonate']:g}, "
                                      f"potassium {potassium:g}: {diagnosis.lower()}"
                                      + (f" ({', '.join(markers)})." if severe else "."),
                        "treatment": f"Saline 1 litre over an hour, then 1 litre over 2 hours with {added} mmol/L "
                                     "potassium; fixed-rate insulin 0.1 units/kg/hour; basal insulin continued.",
                        "disposition": ""}
            rationale = (f"Glucose {glucose:g}, ketones {ketones:g}, pH {results['Venous blood gas pH']:g}, bicarbonate "
                         f"{results['Bicarbonate']:g}: {diagnosis.lower()}"
                         + (f" by {', '.join(markers)}" if severe else ", no marker of severity")
                         + f". Fluids, fixed-rate insulin and {added} mmol/L potassium in the second litre for "
                           f"potassium {potassium:g}.")
        else:
            sulfonylurea = variant == "hypo_sulfonylurea"
            diagnosis = "Sulfonylurea-induced hypoglycaemia" if sulfonylurea else "Insulin-induced hypoglycaemia"
            aliases = (["Gliclazide-induced hypoglycaemia", "Hypoglycaemia due to gliclazide"] if sulfonylurea else
                       ["Insulin-induced hypoglycemia", "Severe hypoglycaemia on insulin"])
            triage = [{"name": "get_patient_presentation", "arguments": p},
                      {"name": "perform_bedside_test", "arguments": {**p, "test": "capillary blood glucose"},
                       "compare_args": ["patient_id", "test"]},
                      {"name": "get_medical_history", "arguments": p},
                      {"name": "order_immediate_intervention", "arguments": {
                          **p, "intervention": "intravenous glucose", "indication": f"glucose {glucose:g} with reduced "
                                                                                   "consciousness"},
                       "compare_args": ["patient_id", "intervention"]},
                      {"name": "assign_esi_level", "arguments": {**p, "level": level, "reason": esi_reason},
                       "compare_args": ["patient_id", "level"]}]
            assessment = [_call("order_lab_test", {**p, "test": "Glucose"}, "patient_id", "test"),
                          _call("order_lab_test", {**p, "test": "Urea and electrolytes"}, "patient_id", "test"),
                          _call("record_diagnosis", {**p, "diagnosis": diagnosis, "icd10": "E16.0"})]
            treatment = [{"name": "start_iv_fluids", "arguments": {
                **p, "fluid": "10% glucose", "volume_ml": 1000, "duration_minutes": 600, "potassium_mmol_per_l": 0,
                "indication": "prevent recurrent hypoglycaemia"}, "compare_args": ["patient_id", "fluid"]}]
            disposition = [{"name": "get_medication_list", "arguments": p}]
            if sulfonylurea:
                disposition.append({"name": "discontinue_medication", "arguments": {
                    **p, "drug": "gliclazide", "temporary": False,
                    "reason": f"recurrent hypoglycaemia with eGFR {results['eGFR']:g}"},
                    "compare_args": ["patient_id", "drug"]})
            disposition.append({"name": "set_disposition", "arguments": {
                **p, "destination": "medical ward", "reason": "glucose infusion and hourly capillary glucose"},
                "compare_args": ["patient_id", "destination"]})
            assertions = {
                "triage": [_called("Intravenous glucose is given at once", "order_immediate_intervention",
                                   intervention="intravenous glucose")],
                "assessment": [_called("The glucose is rechecked", "order_lab_test", test="Glucose")],
                "treatment": [_called("A 10% glucose infusion prevents a recurrence", "start_iv_fluids",
                                      fluid="10% glucose"),
                              _not_called("No insulin is given", "start_infusion", drug="insulin")],
                "disposition": ([{"text": "Gliclazide is stopped", "rule": {
                    "kind": "db_record", "collection": "medicines.discontinuations", "match": {"drug": "gliclazide"}}}]
                                if sulfonylurea else []) + [_disposed(pid, "medical ward")]}
            handoffs = {"triage": f"{patient.age_years}-year-old, glucose {glucose:g} with reduced consciousness; "
                                  f"intravenous glucose given. ESI {level}.",
                        "assessment": f"Glucose {results['Glucose']:g} after treatment; eGFR {results['eGFR']:g}.",
                        "treatment": "10% glucose at 100 mL/hour; hourly capillary glucose.", "disposition": ""}
            rationale = (f"Capillary glucose {glucose:g} with reduced consciousness on "
                         + ("gliclazide with eGFR " + f"{results['eGFR']:g}, glucose {results['Glucose']:g} again after "
                            "the bolus: accumulation; gliclazide stopped" if sulfonylurea else
                            f"insulin, glucose {results['Glucose']:g} again after intravenous glucose")
                         + f": {diagnosis.lower()}. A 10% glucose infusion and hourly glucose on the ward.")
        phases = [{"required_actions": actions, "assertions": assertions[name], "handoff": handoffs[name]}
                  for name, actions in zip(("triage", "assessment", "treatment", "disposition"),
                                           (triage, assessment, treatment, disposition))]
        contraindicated = ["insulin", "sulfonylurea"] if variant == "hypo_sulfonylurea" else (
            ["insulin"] if variant == "hypo_insulin" else [])
        ticket = TICKETS.say(rng, "diabetic", name=patient.name, pid=pid, age=patient.age_years,
                             complaint=patient.arrival.chief_complaint.lower(), **_pronouns(patient.sex))
        entry = {"id": task_id, "pathway": DIABETIC, "ticket": ticket, "patient_id": pid, "answer": diagnosis,
                 "answer_aliases": aliases, "rationale": rationale,
                 "safety": {"emergency": True, "escalate_within_calls": 6, "contraindicated": contraindicated},
                 "category": "pathway", "tags": ["generated", DIABETIC, variant, diagnosis.lower()]}
        return self.resolved(entry, phases)

    # -- validation ----------------------------------------------------------------------------------------------------
    def pool_key(self, task: Task) -> str:
        return task.tags[2]

    def check(self, task: Task, db: Any) -> list[str]:
        patient: PathwayPatient = db.patients[task.patient_id]
        problems = self.record_problems(patient)
        try:
            if PathwayTask.model_validate(task.model_dump()) != task:
                problems.append("the task differs from its validated form")
        except ValueError as e:
            problems.append(f"the task does not validate: {str(e).splitlines()[0]}")
        assigned = [a.arguments["level"] for a in task.expected_actions if a.name == "assign_esi_level"]
        level = esi_decision(triage_db(), db.triage.patients[patient.patient_id]).level if patient.arrival else None
        if assigned != ([level] if level is not None else []):
            problems.append(f"assigns ESI {assigned}, the ESI rules give {level}")
        if task.tags[1] == SEPSIS:
            problems += self._check_sepsis(task, patient, level)  # type: ignore[arg-type]
        elif task.tags[1] == DIABETIC:
            problems += self._check_diabetic(task, patient)
        else:
            problems += self.check_acute(task, patient)
        record = " ".join([*(n.text for n in patient.notes), *(r.text for r in patient.pending_results.values()),
                           patient.arrival.history if patient.arrival else ""]).lower()
        if task.answer.lower() in record:
            problems.append("the record names the diagnosis")
        return problems

    def _check_sepsis(self, task: Task, patient: PathwayPatient, level: int) -> list[str]:
        problems = []
        source = next(s for s in SOURCES if s.key == task.tags[2])
        if task.answer != source.diagnosis[level == 1]:
            problems.append(f"the answer {task.answer!r} is not the diagnosis for ESI {level}")
        chosen = self._antibiotic(patient, source)
        given = [a.arguments for a in task.expected_actions if a.name == "prescribe_medication"]
        if chosen is None or [g["drug"] for g in given] != [chosen[0].drug] or given[0]["dose"] != chosen[0].dose:
            problems.append(f"prescribes {given}, the record allows {chosen[0] if chosen else None}")
        withheld = {a.arguments["drug"] for a in task.expected_actions if a.name == "discontinue_medication"}
        expected = self.withheld(patient, level == 1)
        if withheld != expected:
            problems.append(f"withholds {sorted(withheld)}, the sick-day rules withhold {sorted(expected)}")
        return problems

    def _check_diabetic(self, task: Task, patient: PathwayPatient) -> list[str]:
        problems = []
        results = {k: r.value for k, r in patient.pending_results.items()}
        if task.tags[2] == "dka":
            markers = self.dka_severe(results, patient.arrival.bedside_results["blood ketones"].value,
                                      patient.vitals[-1].heart_rate, patient.vitals[-1].systolic_bp)
            expected = "Severe diabetic ketoacidosis" if markers else "Diabetic ketoacidosis"
            added = [a.arguments["potassium_mmol_per_l"] for a in task.expected_actions
                     if a.name == "start_iv_fluids" and a.arguments["duration_minutes"] == 120]
            if added != [self.potassium_per_litre(results["Potassium"])]:
                problems.append(f"adds {added} mmol/L potassium, the protocol {self.potassium_per_litre(results['Potassium'])}")
            if not (results["Venous blood gas pH"] < 7.3 and results["Bicarbonate"] < 15
                    and patient.arrival.bedside_results["blood ketones"].value >= 3):
                problems.append("the results do not meet the criteria of ketoacidosis")
        else:
            expected = ("Sulfonylurea-induced hypoglycaemia" if task.tags[2] == "hypo_sulfonylurea" else
                        "Insulin-induced hypoglycaemia")
            if patient.arrival.bedside_results["capillary blood glucose"].value >= 3.0:
                problems.append("the arrival glucose is not a hypoglycaemia needing intravenous glucose")
        if task.answer != expected:
            problems.append(f"the answer {task.answer!r} is not {expected!r}")
        return problems

    @staticmethod
    def record_problems(patient: PathwayPatient) -> list[str]:
        """Observations in range, creatinine and eGFR consistent (CKD-EPI 2021), no long-term medicine against a
        recorded allergy."""
        problems = []
        for v in patient.vitals:
            if not (34 <= v.temperature_c <= 42 and 30 <= v.heart_rate <= 200 and 50 <= v.systolic_bp <= 240
                    and v.diastolic_bp < v.systolic_bp and 70 <= v.spo2 <= 100):
                problems.append(f"observations out of range: {v}")
        results = patient.pending_results
        if "Creatinine" in results and abs(ckd_epi_egfr(patient.age_years, results["Creatinine"].value, patient.sex)
                                           - results["eGFR"].value) > 1:
            problems.append("eGFR does not follow from the creatinine")
        for r in (*patient.labs, *results.values()):
            if r.value is not None and r.value < 0:
                problems.append(f"{r.test} is negative")
        for m in patient.medications:
            drug = reference().drugs[m.drug]
            if any(reference().allergy_conflict(a.substance, drug) for a in patient.allergies):
                problems.append(f"{m.drug} is taken despite a recorded allergy")
        return problems


def _same_class(a: Any, b: Any) -> bool:
    return any(a.has(t) and b.has(t) for t in ("ace_inhibitor", "arb", "statin", "diuretic", "ssri", "nsaid"))
