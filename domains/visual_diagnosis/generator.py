"""Generated VisualDiagnosis tasks: task ``i`` of seed ``s`` is a pure function of ``(s, i)``: a condition (taken in
turn from ``CONDITIONS``), a patient whose story and vital signs fit it, the study drawn from the condition's
parameters (sampled inside its real ranges), an earlier study to compare with, the options (the answer and
confusable alternatives), the reference solution and the rule-graded assertions.

A ``TaskGenerator`` (``clinical_gym.tool_env.generation``): ids are task ``vd-<s>-<i>``, patient ``VD<s><i:05d>``,
study ``<KIND>-<s>-<i>`` (prior: ``...-P``). The split is the hash of the task id (20% test), and the test pool holds
presentations the train pool never shows (``HELD_OUT``):
cardiotocographs at 3 cm/min (train: 1 cm/min) and arrhythmias shown as a single-lead rhythm strip (train: the
12-lead page), so the test split measures reading an unfamiliar layout.

``generate(n, seed, split)`` returns the database and the tasks; ``python -m
clinical_gym.domains.visual_diagnosis.generator --write`` regenerates the bundled ``data/`` (seed 0).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from clinical_gym.domains.records import LabResult, Medication, VitalSigns
from clinical_gym.domains.visual_diagnosis import studies
from clinical_gym.domains.visual_diagnosis.conditions import CONDITIONS, Condition
from clinical_gym.domains.visual_diagnosis.data_model import Patient, Study, VisualDiagnosisDB
from clinical_gym.imaging import audiogram, criteria, ctg, ecg_rhythms, spirometry
from clinical_gym.tool_env.database import DomainDB
from clinical_gym.tool_env.generation import Draft, TaskGenerator
from clinical_gym.tool_env.tasks import Task

CLOCK = "2025-03-14 10:00"
BUNDLED_TASKS = 48
HELD_OUT = ("page layouts the train pool never shows: 12-lead ECGs in the 6 x 2 layout and arrhythmias as a single "
            "lead II rhythm strip (train: the 3 x 4 page), CTGs at 3 cm/min (train: 1 cm/min), the flow-volume loop on "
            "the right of the spirometry report (train: left), both ears on one audiogram chart (train: one chart "
            "per ear)")
STRIP_RHYTHMS = frozenset({"atrial_fibrillation", "atrial_flutter", "complete_heart_block", "sinus_bradycardia",
                           "sinus_tachycardia", "first_degree_av_block", "ventricular_tachycardia"})
LETTERS = "ABCDE"

# Why each study was done, and what the rest of the record says (never the answer).
STORIES: dict[str, tuple[str, list[str], list[tuple[str, str, str]]]] = {
    "ecg:normal_sinus_rhythm": ("pre-operative assessment before a knee replacement; no cardiac symptoms",
                                ["osteoarthritis of the knee"], [("paracetamol", "1 g", "qid")]),
    "ecg:sinus_tachycardia": ("fever, productive cough and breathlessness for three days",
                              ["asthma"], [("salbutamol inhaler", "2 puffs", "as needed")]),
    "ecg:sinus_bradycardia": ("dizziness on standing; on a beta-blocker for angina",
                              ["stable angina"], [("bisoprolol", "10 mg", "daily")]),
    "ecg:atrial_fibrillation": ("palpitations and breathlessness since yesterday",
                                ["hypertension", "hyperthyroidism on treatment"], [("amlodipine", "5 mg", "daily")]),
    "ecg:atrial_flutter": ("palpitations for six hours after a heavy night of drinking",
                           ["previous cardiac surgery"], []),
    "ecg:first_degree_av_block": ("routine check before starting a new medicine; no symptoms",
                                  ["hypertension"], [("diltiazem", "120 mg", "daily")]),
    "ecg:complete_heart_block": ("two blackouts today without warning; feels light-headed",
                                 ["hypertension", "type 2 diabetes"], [("metformin", "500 mg", "bid")]),
    "ecg:left_bundle_branch_block": ("pre-operative assessment before a hernia repair; no chest pain",
                                     ["hypertension", "aortic stenosis, mild"], [("ramipril", "5 mg", "daily")]),
    "ecg:right_bundle_branch_block": ("insurance medical; no symptoms", ["none significant"], []),
    "ecg:inferior_stemi": ("central crushing chest pain for 40 minutes with sweating and nausea",
                           ["smoker, 30 pack-years", "hypercholesterolaemia"], [("atorvastatin", "20 mg", "daily")]),
    "ecg:anterior_stemi": ("chest pain radiating to the left arm for one hour, clammy",
                           ["type 2 diabetes", "hypertension"], [("metformin", "1 g", "bid")]),
    "ecg:hyperkalaemia": ("generalised weakness and nausea; blood tests sent, results awaited",
                          ["chronic kidney disease stage 4", "heart failure"],
                          [("spironolactone", "25 mg", "daily"), ("ramipril", "10 mg", "daily")]),
    "ecg:long_qt": ("brief collapse while walking; recently started on a new antidepressant and an antibiotic",
                    ["depression"], [("citalopram", "40 mg", "daily"), ("clarithromycin", "500 mg", "bid")]),
    "ecg:ventricular_tachycardia": ("palpitations and light-headedness for 20 minutes",
                                    ["myocardial infarction five years ago"], [("aspirin", "75 mg", "daily")]),
    "ecg:wolff_parkinson_white": ("episodes of sudden fast palpitations that stop on their own; well now",
                                  ["none significant"], []),
    "spirometry:normal": ("pre-employment health check; never smoked", ["none significant"], []),
    "spirometry:obstructive": ("chronic productive cough and breathlessness on exertion",
                               ["smoker, 40 pack-years"], [("salbutamol inhaler", "2 puffs", "as needed")]),
    "spirometry:restrictive": ("slowly progressive breathlessness and a dry cough; fine crackles at both bases",
                               ["rheumatoid arthritis"], [("methotrexate", "15 mg", "weekly")]),
    "spirometry:upper_airway": ("noisy breathing on exertion since a long intensive care stay with a breathing tube",
                                ["intensive care admission with intubation for 3 weeks last year"], []),
    "audiogram:normal": ("occupational screening; no hearing complaints", ["none significant"], []),
    "audiogram:presbycusis": ("gradually worsening hearing over years, worse in noisy rooms",
                              ["hypertension"], [("amlodipine", "5 mg", "daily")]),
    "audiogram:noise_induced": ("ringing in both ears; works in a metal-pressing factory for 25 years",
                                ["none significant"], []),
    "audiogram:conductive": ("one ear feels blocked and muffled for two months after a cold",
                             ["recurrent ear infections in childhood"], []),
    "audiogram:asymmetric_sensorineural": ("hearing worse in one ear for months with tinnitus in that ear",
                                           ["none significant"], []),
}
CTG_STORY = ("in labour at {weeks} weeks, {dilation} cm dilated; {extra}", ["uncomplicated pregnancy"])
CTG_EXTRAS = ("on an oxytocin infusion", "membranes ruptured 4 hours ago, clear liquor",
              "epidural sited 30 minutes ago", "spontaneous labour, no infusion")


def _ecg_rate(params: ecg_rhythms.EcgParams) -> int:
    return int(ecg_rhythms.measurements(params)["ventricular_rate_bpm"])


def _vitals(condition: Condition, rng: np.random.Generator, heart_rate: int) -> VitalSigns:
    systolic = int(rng.integers(112, 146))
    if condition.finding in ("inferior_stemi", "anterior_stemi", "complete_heart_block", "ventricular_tachycardia"):
        systolic = int(rng.integers(96, 118))
    temperature = round(float(rng.uniform(38.3, 39.0)), 1) if condition.finding == "sinus_tachycardia" else round(
        float(rng.uniform(36.4, 37.2)), 1)
    spo2 = int(rng.integers(95, 100))
    return VitalSigns(time=CLOCK, temperature_c=temperature, heart_rate=heart_rate, systolic_bp=systolic,
                      diastolic_bp=int(systolic * rng.uniform(0.58, 0.68)), respiratory_rate=int(rng.integers(14, 20)),
                      spo2=spo2)


def _lab(test: str, value: float, unit: str, low: float | None, high: float | None) -> LabResult:
    return LabResult(test=test, time=CLOCK, value=value, unit=unit, ref_low=low, ref_high=high)


def _pending(condition: Condition, rng: np.random.Generator, study: Study) -> list[LabResult]:
    """What each orderable test returns for this patient."""
    potassium = study.ecg.potassium_mmol_l if study.ecg is not None and study.ecg.potassium_mmol_l else round(
        float(rng.uniform(3.8, 4.9)), 1)
    troponin = int(rng.integers(120, 900)) if condition.finding in ("inferior_stemi", "anterior_stemi") else int(
        rng.integers(2, 12))
    return [_lab("serum potassium", potassium, "mmol/L", 3.5, 5.3),
            _lab("serum magnesium", round(float(rng.uniform(0.75, 0.95)), 2), "mmol/L", 0.7, 1.0),
            _lab("troponin", troponin, "ng/L", None, 14),
            _lab("full blood count", round(float(rng.uniform(12.5, 15.5)), 1), "g/dL", 12.0, 17.0),
            _lab("renal function", int(rng.integers(28, 40)) if condition.finding == "hyperkalaemia"
                 else int(rng.integers(70, 100)), "mL/min/1.73m2", 60, None),
            _lab("thyroid function", round(float(rng.uniform(0.8, 3.5)), 2), "mU/L", 0.4, 4.0)]


def _sex_age(condition: Condition, rng: np.random.Generator) -> tuple[str, int]:
    if condition.kind == "ctg":
        return "female", int(rng.integers(21, 41))
    sex = "male" if rng.random() < 0.6 else "female"
    low, high = {"wolff_parkinson_white": (18, 35), "presbycusis": (68, 86), "noise_induced": (42, 60),
                 "long_qt": (30, 60), "normal": (24, 55)}.get(condition.finding, (45, 82))
    return sex, int(rng.integers(low, high + 1))


def _study(condition: Condition, rng: np.random.Generator, study_id: str, patient_id: str, sex: str, age: int,
           split: str) -> Study:
    setting = {"ecg_12_lead": "emergency department", "ctg": "labour ward", "spirometry": "lung function laboratory",
               "audiogram": "audiology clinic"}[condition.kind]
    common = {"study_id": study_id, "patient_id": patient_id, "acquired": CLOCK, "setting": setting,
              "layout": "alternate" if split == "test" else "standard"}
    if condition.kind == "ecg_12_lead":
        params = ecg_rhythms.sample_params(condition.finding, rng, sex=sex)
        for _ in range(20):  # a draw a reader would measure otherwise (about 1 in 100) is drawn again
            if not criteria.ecg_problems(params, sex, age):
                break
            params = ecg_rhythms.sample_params(condition.finding, rng, sex=sex)
        strip = split == "test" and condition.finding in STRIP_RHYTHMS
        return Study(kind="rhythm_strip" if strip else "ecg_12_lead", ecg=params, lead="II" if strip else None,
                     **common)
    if condition.kind == "ctg":
        params_ctg = ctg.sample_params(condition.finding, rng, paper_speed_cm_min=3 if split == "test" else 1)
        return Study(kind="ctg", ctg=params_ctg, **common)
    if condition.kind == "spirometry":
        return Study(kind="spirometry", spirometry=spirometry.sample_params(condition.finding, rng, sex, age),
                     **common)  # type: ignore[arg-type]
    return Study(kind="audiogram", audiogram=audiogram.sample_params(condition.finding, rng, age), **common)


def _prior(condition: Condition, rng: np.random.Generator, current: Study, sex: str, age: int) -> Study:
    """An earlier study: the same chronic pattern for conduction findings, else a normal one."""
    chronic = condition.finding in ("left_bundle_branch_block", "right_bundle_branch_block", "first_degree_av_block",
                                    "wolff_parkinson_white", "presbycusis", "restrictive", "obstructive")
    common = {"study_id": f"{current.study_id}-P", "patient_id": current.patient_id, "setting": "outpatient clinic",
              "prior_of": current.study_id, "layout": current.layout}
    if condition.kind == "ecg_12_lead":
        rhythm = condition.finding if chronic else "normal_sinus_rhythm"
        return Study(kind="ecg_12_lead", acquired="2024-02-20 09:30", ecg=ecg_rhythms.sample_params(rhythm, rng),
                     **common)
    if condition.kind == "ctg":
        assert current.ctg is not None
        return Study(kind="ctg", acquired="2025-03-14 09:20", setting="labour ward",
                     ctg=ctg.sample_params("reassuring", rng, current.ctg.paper_speed_cm_min),
                     **{k: v for k, v in common.items() if k != "setting"})
    if condition.kind == "spirometry":
        pattern = condition.finding if chronic else "normal"
        return Study(kind="spirometry", acquired="2023-05-11 11:00",
                     spirometry=spirometry.sample_params(pattern, rng, sex, max(20, age - 2)),  # type: ignore[arg-type]
                     **common)
    pattern = "normal" if not chronic else "presbycusis"
    return Study(kind="audiogram", acquired="2022-09-02 14:00",
                 audiogram=audiogram.sample_params(pattern, rng, max(20, age - 3)), **common)


def _options(condition: Condition, rng: np.random.Generator) -> tuple[dict[str, str], str]:
    alternatives = list(condition.alternatives)
    chosen = [alternatives[int(i)] for i in rng.permutation(len(alternatives))[:4]]
    texts = [condition.answer, *chosen]
    order = rng.permutation(len(texts))
    options = {LETTERS[i]: texts[int(j)] for i, j in enumerate(order)}
    return options, next(k for k, v in options.items() if v == condition.answer)


def _ticket(condition: Condition, patient: Patient, study: Study, rng: np.random.Generator) -> str:
    opening = str(rng.choice([
        f"{patient.patient_id}, a {patient.age}-year-old {patient.sex}: {patient.presentation}.",
        f"Please read study {study.study_id} for {patient.patient_id} ({patient.age} y, {patient.sex}), "
        f"{patient.presentation}.",
        f"The team looking after {patient.patient_id} ({patient.age}, {patient.sex}) asks you to review a study: "
        f"{patient.presentation}."]))
    what = f"A {study.title} was recorded in the {study.setting} (study {study.study_id})."
    ask = str(rng.choice([
        "Read it, act on it if it needs emergency care, file your report and submit the letter of your diagnosis.",
        "Interpret it, escalate at once if the finding is an emergency, record your interpretation and submit the "
        "letter of the best answer."]))
    return f"{opening} {what} {ask}"


def _call(name: str, arguments: dict[str, Any], compare: list[str] | None = None) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, **({"compare_args": compare} if compare is not None else {})}


def _solution(condition: Condition, patient: Patient, study: Study) -> tuple[list[dict[str, Any]], list[dict]]:
    """The reference calls and the rule assertions."""
    pid, sid = patient.patient_id, study.study_id
    calls = [_call("get_clinical_context", {"patient_id": pid}), _call("get_measurements", {"study_id": sid})]
    measured = studies.measurements(study)
    if condition.kind == "ecg_12_lead":
        params = study.ecg
        assert params is not None
        if condition.critical == "stemi":
            st = {lead: round(10 * v, 1) for lead, v in ecg_rhythms.st_at_j_mv(params).items() if abs(v) >= 0.05}
            calls.append(_call("check_stemi_criteria", {"st_elevation_mm": st, "sex": patient.sex, "age": patient.age},
                               ["sex", "age"]))
        elif condition.finding == "long_qt":
            calls.append(_call("calculate_qtc", {"qt_ms": params.qt_ms,
                                                 "heart_rate_bpm": measured["ventricular_rate_bpm"]}, ["qt_ms"]))
        elif condition.finding == "hyperkalaemia":
            calls.append(_call("order_test", {"patient_id": pid, "test": "serum potassium"}))
        elif condition.finding in ("left_bundle_branch_block", "right_bundle_branch_block",
                                   "wolff_parkinson_white", "first_degree_av_block"):
            calls.append(_call("get_prior_study", {"patient_id": pid}))
        elif study.kind == "rhythm_strip" or condition.finding in STRIP_RHYTHMS:
            calls.append(_call("get_rhythm_strip", {"study_id": sid, "lead": "II"}, ["study_id"]))
    elif condition.kind == "ctg":
        p = study.ctg
        assert p is not None
        calls.append(_call("classify_ctg", {
            "baseline_bpm": p.baseline_bpm, "variability_amplitude_bpm": p.variability_bpm,
            "accelerations": p.accelerations, "late_decelerations": p.late_decelerations,
            "variable_decelerations": p.variable_decelerations, "early_decelerations": p.early_decelerations,
            "prolonged_deceleration": p.prolonged_deceleration, "sinusoidal_pattern": p.sinusoidal,
            "contractions_per_10_min": measured["contractions_per_10_min"]},
            ["late_decelerations", "variable_decelerations", "sinusoidal_pattern"]))
    elif condition.kind == "spirometry":
        calls.append(_call("interpret_spirometry", {
            "fev1_l": measured["fev1_l"], "fvc_l": measured["fvc_l"],
            "fev1_pct_predicted": measured["fev1_pct_predicted"], "fvc_pct_predicted": measured["fvc_pct_predicted"],
            "pef_l_min": measured["pef_l_min"]}, ["fev1_l", "fvc_l"]))
    else:
        a = study.audiogram
        assert a is not None
        calls.append(_call("assess_hearing", {
            "right_air_db": list(a.right_air.values()), "left_air_db": list(a.left_air.values()),
            "right_bone_db": list(a.right_bone.values()), "left_bone_db": list(a.left_bone.values())}, []))
        if condition.finding == "asymmetric_sensorineural":
            calls.append(_call("order_test", {"patient_id": pid, "test": "MRI internal auditory meatus"}))
    if condition.pathway is not None:
        escalation = _call("escalate_care", {"patient_id": pid, "pathway": condition.pathway,
                                             "reason": f"{condition.answer} on {study.title}"},
                           ["patient_id", "pathway"])
        calls.insert(2 if condition.emergency else len(calls), escalation)
    calls.append(_call("record_interpretation", {"study_id": sid, "findings": studies.describe(study),
                                                 "conclusion": condition.answer}, ["study_id"]))
    assertions: list[dict[str, Any]] = [
        {"text": "Files a report of the study",
         "rule": {"kind": "db_record", "collection": "interpretations", "match": {"study_id": sid}}}]
    if condition.pathway is not None:
        assertions.append({"text": f"Escalates: {condition.pathway}",
                           "rule": {"kind": "called", "call": {"name": "escalate_care",
                                                               "arguments": {"pathway": condition.pathway}}}})
    assertions.append({"text": "Reads the study's measurements before filing the report",
                       "rule": {"kind": "called_before",
                                "first": {"name": "get_measurements", "arguments": {"study_id": sid}},
                                "then": {"name": "record_interpretation", "arguments": {"study_id": sid}}}})
    if condition.finding == "asymmetric_sensorineural":
        assertions.append({"text": "Requests an MRI of the internal auditory meatus",
                           "rule": {"kind": "called", "call": {"name": "order_test", "arguments": {
                               "test": "MRI internal auditory meatus"}}}})
    return calls, assertions


def _rationale(condition: Condition, study: Study) -> str:
    return f"{studies.describe(study)} These findings meet the criteria: {condition.criteria}"


class VisualDiagnosisGenerator(TaskGenerator):
    """The VisualDiagnosis task generator (see the module docstring)."""

    env_id = "VisualDiagnosis-v0"
    id_prefix = "vd"
    collections = {"patients": "patient_id", "studies": "study_id"}
    held_out = HELD_OUT

    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        condition = CONDITIONS[index % len(CONDITIONS)]
        sex, age = _sex_age(condition, rng)
        seed = task_id.split("-")[1]
        patient_id = f"VD{seed}{index:05d}"
        prefix = {"ecg_12_lead": "ECG", "ctg": "CTG", "spirometry": "SPI", "audiogram": "AUD"}[condition.kind]
        study = _study(condition, rng, f"{prefix}-{seed}-{index}", patient_id, sex, age, split)
        prior = _prior(condition, rng, study, sex, age)
        if condition.kind == "ctg":
            weeks = study.ctg.gestation_weeks if study.ctg else 39
            presentation = CTG_STORY[0].format(weeks=weeks, dilation=int(rng.integers(3, 9)),
                                               extra=str(rng.choice(CTG_EXTRAS)))
            history, medications = list(CTG_STORY[1]), []
        else:
            presentation, history, medications = STORIES[condition.key]
        heart_rate = _ecg_rate(study.ecg) if study.ecg is not None else int(rng.integers(70, 96))
        patient = Patient(
            patient_id=patient_id, age=age, sex=sex, presentation=presentation,  # type: ignore[arg-type]
            history=list(history), medications=[Medication(name=n, dose=d, frequency=f) for n, d, f in medications],
            vitals=_vitals(condition, rng, heart_rate), pending_results=_pending(condition, rng, study),
            pregnant=condition.kind == "ctg", gestation_weeks=study.ctg.gestation_weeks if study.ctg else None,
            studies=[prior.study_id, study.study_id])
        options, answer = _options(condition, rng)
        calls, assertions = _solution(condition, patient, study)
        task = Task.model_validate({
            "id": task_id, "ticket": _ticket(condition, patient, study, rng), "patient_id": patient_id,
            "expected_actions": calls, "assertions": assertions, "answer": answer, "options": options,
            "rationale": _rationale(condition, study),
            "safety": {"emergency": condition.emergency, "escalate_within_calls": 4,
                       "critical_findings": ([{"kind": condition.critical, "name": condition.answer,
                                               "terms": list(condition.terms)}] if condition.critical else [])},
            "category": condition.kind, "tags": [f"study:{study.study_id}", condition.key, f"layout:{study.layout}"]})
        return Draft(task, {"patients": [patient], "studies": [study, prior]},
                     ids=(patient_id, study.study_id, prior.study_id))

    def pool_key(self, task: Task) -> str:
        """The study kind and page layout: the test pool's layouts never appear in train."""
        layout = next(t.split(":", 1)[1] for t in task.tags if t.startswith("layout:"))
        return f"{task.category}:{layout}"

    def base_db(self) -> VisualDiagnosisDB:
        """The generated records are the whole database (the domain has no catalogues to keep)."""
        return VisualDiagnosisDB(clock=CLOCK, patients={}, studies={})

    def check(self, task: Task, db: DomainDB) -> list[str]:
        """The study behind the task meets its finding's textbook criteria, measured as a reader measures them
        (``clinical_gym.imaging.criteria``)."""
        study = db.studies[study_of(task)]  # type: ignore[attr-defined]
        return study_problems(study, db.patients[study.patient_id])  # type: ignore[attr-defined]


def study_problems(study: Study, patient: Patient) -> list[str]:
    """Where a study fails its finding's criteria (empty: it meets them)."""
    if study.ecg is not None:
        return criteria.ecg_problems(study.ecg, patient.sex, patient.age)
    if study.ctg is not None:
        return criteria.ctg_problems(study.ctg)
    if study.spirometry is not None:
        return criteria.spirometry_problems(study.spirometry)
    assert study.audiogram is not None
    return criteria.audiogram_problems(study.audiogram)


def generate(n: int, seed: int = 0, split: str | None = None) -> tuple[VisualDiagnosisDB, list[Task]]:
    """``n`` tasks of ``seed`` (of ``split`` when given: the first ``n`` of that split) and their database."""
    generated = VisualDiagnosisGenerator().generate(n, seed, split)
    return generated.db, list(generated.tasks)  # type: ignore[return-value]


def study_of(task: Task) -> str:
    """The id of the study a task is about (its ``study:`` tag)."""
    return next(t.split(":", 1)[1] for t in task.tags if t.startswith("study:"))


def write_bundled(folder: Path, n: int = BUNDLED_TASKS) -> None:
    db, tasks = generate(n, seed=0)
    folder.mkdir(parents=True, exist_ok=True)
    db.dump(folder / "db.json")
    (folder / "tasks.json").write_text(json.dumps([t.model_dump(mode="json", exclude_unset=True) for t in tasks],
                                                  indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the bundled VisualDiagnosis data (seed 0).")
    parser.add_argument("--write", action="store_true", help="write data/db.json and data/tasks.json")
    parser.add_argument("-n", type=int, default=BUNDLED_TASKS)
    args = parser.parse_args(argv)
    if args.write:
        write_bundled(Path(__file__).resolve().parent / "data", args.n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
