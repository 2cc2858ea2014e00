"""The Obstetrics task generator: a pregnant, labouring or newly delivered patient with a whole record (dating,
obstetric and medical history, medicines and allergies, observations, results, scans, fetal heart tracings, cervical
examinations, the birth and measured blood loss), and a decision computed by the domain's own calculations
(``clinical_gym.domains.obstetrics.calculations``, which the tools mount) or the drug reference. Five kinds:

* ``dating``: a last menstrual period (certain or not, any cycle length) and perhaps a dating or later scan; the due
  date is ``calculations.gestational_age`` (Naegele's rule adjusted for cycle length; ACOG Committee Opinion 700 for
  when the scan re-dates), with the scan's discrepancy drawn at and just past the re-dating threshold.
* ``ctg``: a fetal heart tracing drawn for a category (I, II, III evenly) from feature patterns; the category is the
  NICHD classification of ``calculations.fetal_heart_category``; a normal tracing needs nothing, Category II
  intrauterine measures, Category III the emergency team and an immediate birth.
* ``hypertension``: two blood-pressure readings with urine protein, bloods and symptoms; the disorder is ACOG's, by
  ``calculations.hypertensive_disorder``; severe-range pressure is treated (labetalol, or nifedipine in asthma or on
  labetalol already), severe features get magnesium sulfate, and the timing of birth follows the gestation.
* ``pph``: a birth, measured blood loss, observations and what was given; the stage is
  ``calculations.haemorrhage_stage`` (0-3 evenly), and stages 1-3 activate the haemorrhage protocol with what the
  stage adds.
* ``drug_safety``: a medicine the team would like to start in a trimester or while breastfeeding; the verdict is the
  drug reference's (``check_pregnancy_drug_safety``).

Generalisation split: each kind's test split holds presentations the train split never shows: dating by a
second- or third-trimester biometry scan; tracings with early decelerations only, fetal tachycardia, a prolonged
deceleration, a sinusoidal pattern or absent variability with recurrent variable decelerations; superimposed
pre-eclampsia, HELLP syndrome and postpartum pre-eclampsia; haemorrhage after caesarean birth; and drugs from ACE
inhibitors, angiotensin receptor blockers, antiepileptics, statins, tetracyclines, fluoroquinolones and vitamin K
antagonists.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from functools import cached_property
from typing import Any

import numpy as np

from clinical_gym.drugs import Drug, reference
from clinical_gym.tool_env.generation import (
    Draft,
    TaskGenerator,
    Wording,
    between,
    chance,
    lettered,
    person_name,
    pick,
    sample,
)
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.obstetrics import calculations
from clinical_gym.domains.obstetrics.data_model import (
    Allergy,
    BirthRecord,
    BloodLossMeasurement,
    CervicalExam,
    Condition,
    FetalHeartTracing,
    LabResult,
    Medication,
    Note,
    ObstetricsDB,
    Patient,
    UltrasoundReport,
    VitalSigns,
)

KINDS = (("dating", 0.2), ("ctg", 0.25), ("hypertension", 0.2), ("pph", 0.2), ("drug_safety", 0.15))
TODAY = date(2025, 6, 10)
CLOCK = "2025-06-10"
DATING_VARIANTS = {"train": ("crl", "naegele", "uncertain_lmp"), "test": ("biometry",)}
CTG_PATTERNS: dict[str, dict[str, tuple[str, ...]]] = {
    "train": {"I": ("normal_accelerations",), "II": ("minimal_variability", "variable_recurrent", "late_intermittent"),
              "III": ("absent_late", "absent_bradycardia")},
    "test": {"I": ("normal_early_decelerations",), "II": ("tachycardia", "prolonged_deceleration"),
             "III": ("sinusoidal", "absent_variable")},
}
HTN_VARIANTS = {"train": ("gestational_hypertension", "preeclampsia", "preeclampsia_severe"),
                "test": ("superimposed", "hellp", "postpartum")}
PPH_MODES = {"train": ("vaginal", "assisted vaginal"), "test": ("caesarean",)}
TEST_DRUG_CLASSES = ("ace_inhibitor", "arb", "antiepileptic", "statin", "tetracycline", "fluoroquinolone",
                     "vitamin_k_antagonist")
CTG_OPTIONS = {"A": "Category I: continue routine review",
               "B": "Category II: evaluate, correct causes and keep monitoring",
               "C": "Category III: resuscitate, call the emergency team and expedite birth"}
PPH_OPTIONS = {"A": "Stage 0: no haemorrhage, routine care", "B": "Stage 1: activate the haemorrhage protocol",
               "C": "Stage 2: continued bleeding, emergency team and blood",
               "D": "Stage 3: massive haemorrhage, massive transfusion and theatre"}
VERDICT_OPTIONS = {"A": "Compatible", "B": "Use with caution", "C": "Avoid", "D": "Contraindicated"}
VERDICT_TEXT = {"compatible": "Compatible", "caution": "Use with caution", "avoid": "Avoid",
                "contraindicated": "Contraindicated"}
HTN_CLASSES = ("gestational hypertension", "pre-eclampsia without severe features",
               "pre-eclampsia with severe features", "chronic hypertension",
               "chronic hypertension with superimposed pre-eclampsia without severe features",
               "chronic hypertension with superimposed pre-eclampsia with severe features", "HELLP syndrome",
               "severe gestational hypertension (managed as pre-eclampsia with severe features)")
SOCIAL = ("Non-smoker; lives with her partner.", "Smokes 5 a day; lives with her mother.", "Teacher; non-smoker.",
          "Nurse; lives with her husband and son.", "Student; non-smoker.", "Works in retail; ex-smoker.")
ALLERGIES = (("penicillin", "rash", "moderate"), ("codeine", "vomiting", "mild"), ("latex", "contact dermatitis",
                                                                                       "mild"))
PRIOR = ("Uncomplicated vaginal birth at term, 2019", "Miscarriage at 8 weeks, 2021", "Vaginal birth at 40 weeks, 2022",
         "Assisted vaginal birth, 2020")

TICKETS = Wording(
    dating=("{pid} needs a due date agreed today. Date the pregnancy from her record, document it, and submit the "
            "letter of the due date you would put on her chart.",
            "{pid} ({age}) asks when her baby is due. Work out the due date from her history and any scan, record "
            "it, and submit the letter.",
            "Booking review for {pid}: agree the estimated due date from her menstrual history and scans, note it, "
            "and submit the letter of that date."),
    ctg=("The midwife asks you to review {pid}'s fetal heart tracing. Classify it, act on it, and submit the letter of "
         "your interpretation and plan.",
         "You are called to {pid} ({where}) about the fetal heart tracing. Review it, do what it calls for, and "
         "submit the letter of your interpretation.",
         "Please look at {pid}'s CTG {where} and act as needed; submit the letter that matches your interpretation."),
    hypertension=("{pid} ({age}, {when}) has raised blood pressure. Assess her, treat what needs treating, plan her "
                  "care, and submit the letter of the diagnosis.",
                  "The midwife is concerned about {pid}'s blood pressure ({when}). Review the readings and results, "
                  "act, and submit the letter of the hypertensive disorder.",
                  "Review {pid}, {age}, {when}: two high blood pressure readings are on the chart. Classify, manage "
                  "and submit the letter of the diagnosis."),
    pph=("The midwife calls you to {pid} after the birth because of bleeding. Assess her, act, and submit the letter "
         "of the haemorrhage stage.",
         "{pid} gave birth {ago} ago and the blood loss is being measured. Stage it, do what the stage requires, and "
         "submit the letter.",
         "Review the bleeding of {pid} ({age}) after her birth: stage it, act on the stage, and submit the letter."),
    drug_safety=("The team would like to start {drug} for {pid} ({indication}); she is {stage_text}. Check whether "
                 "it is safe now, document your advice and submit the letter of the verdict; do not prescribe.",
                 "{pid}, {stage_text}, may need {drug} for {indication}. What is the verdict for its use now? Note "
                 "your advice and submit the letter (no prescription).",
                 "Medicine safety question for {pid} ({stage_text}): {drug} for {indication}. Look it up, record "
                 "your advice and submit the letter of the verdict."),
)


def fetal_words(text: str) -> str:
    """``text`` with the fetal heart rate's "bradycardia" and "tachycardia" said in other words: the reward's
    coherence check reads those words as statements about the mother's observations."""
    return text.replace("bradycardia", "a slow baseline").replace("tachycardia", "a fast baseline")


def iso(day: date) -> str:
    return day.isoformat()


def crl_for(days: int) -> float:
    """A crown-rump length (mm, one decimal) that ``calculations.crl_gestation_days`` reads as ``days``."""
    crl = round(((days - 23.73) / 8.052) ** 2, 1)
    for step in (0.0, 0.1, -0.1, 0.2, -0.2, 0.3, -0.3, 0.5, -0.5):
        if calculations.crl_gestation_days(round(crl + step, 1)) == days:
            return round(crl + step, 1)
    raise ValueError(f"no crown-rump length gives {days} days")


@dataclass(frozen=True)
class Built:
    patient: Patient
    task: Task


class ObstetricsGenerator(TaskGenerator):
    env_id = "Obstetrics-v1"
    id_prefix = "gob"
    collections = {"patients": "patient_id"}
    held_out = ("presentations the train split never shows: dating by a second- or third-trimester biometry scan; "
                "tracings with early decelerations only, fetal tachycardia, a prolonged deceleration, a sinusoidal "
                "pattern or absent variability with recurrent variable decelerations; superimposed pre-eclampsia, "
                "HELLP syndrome and postpartum pre-eclampsia; haemorrhage after caesarean birth; medicines from "
                + ", ".join(t.replace("_", " ") for t in TEST_DRUG_CLASSES))

    @cached_property
    def catalogue(self) -> ObstetricsDB:
        return self.base_db()  # type: ignore[return-value]

    @cached_property
    def safety_drugs(self) -> dict[str, dict[str, tuple[tuple[Drug, str, str], ...]]]:
        """split -> verdict -> (drug, stage, indication) the reference judges so."""
        stages = ("first trimester", "second trimester", "third trimester", "breastfeeding")
        found: dict[str, dict[str, list[tuple[Drug, str, str]]]] = {
            s: {v: [] for v in VERDICT_TEXT} for s in ("train", "test")}
        for drug in reference().drugs.values():
            if not drug.prescribable or drug.pregnancy is None or drug.pregnancy.obstetric_uses:
                continue
            split = "test" if drug.has(*TEST_DRUG_CLASSES) else "train"
            for stage in stages:
                verdict = self.verdict(drug, stage)
                if verdict is not None:
                    found[split][verdict].append((drug, stage, drug.indications[0]))
        return {s: {v: tuple(x) for v, x in by.items() if x} for s, by in found.items()}

    @staticmethod
    def verdict(drug: Drug, stage: str) -> str | None:
        """What ``check_pregnancy_drug_safety`` says for the drug at a stage (None: no entry)."""
        if stage == "breastfeeding":
            return drug.breastfeeding.verdict if drug.breastfeeding is not None else None
        assert drug.pregnancy is not None
        return getattr(drug.pregnancy, stage.replace(" ", "_"))

    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        kind = KINDS[int(rng.choice(len(KINDS), p=[w for _, w in KINDS]))][0]
        pid = f"G{index:05d}"
        for _ in range(100):
            built = getattr(self, f"_{kind}")(rng, split, pid, task_id)
            if built is not None:
                return Draft(built.task, {"patients": [built.patient]}, ids=(pid, built.patient.name))
        raise RuntimeError(f"{kind}: no consistent task after 100 tries")

    # -- the record ----------------------------------------------------------------------------------------------------
    def _base(self, rng: np.random.Generator, pid: str, *, ages: tuple[int, int] = (18, 43)) -> dict[str, Any]:
        age = int(between(rng, *ages))
        parity = int(pick(rng, (0, 0, 1, 1, 2, 3)))
        gravida = parity + 1 + int(pick(rng, (0, 0, 0, 1)))
        return {"patient_id": pid, "name": person_name(rng, "female"), "age": age,
                "weight_kg": float(between(rng, 55, 104)), "gravida": gravida, "parity": parity,
                "previous_pregnancies": sample(rng, PRIOR, min(gravida - 1, 2)),
                "social_history": pick(rng, SOCIAL), "family_history": [pick(rng, ("None", "Mother: hypertension",
                                                                                   "Sister: pre-eclampsia",
                                                                                   "Father: type 2 diabetes"))],
                "allergies": [Allergy(substance=s, reaction=r, severity=v) for s, r, v in sample(rng, ALLERGIES, 1)]
                if chance(rng, 0.25) else []}

    @staticmethod
    def _vitals(rng: np.random.Generator, time: str, **overrides: Any) -> VitalSigns:
        values = {"time": time, "temperature_c": float(between(rng, 36.4, 37.3, 1)),
                  "heart_rate": int(between(rng, 70, 96)), "systolic_bp": int(between(rng, 102, 132)),
                  "diastolic_bp": int(between(rng, 60, 84)), "respiratory_rate": int(between(rng, 14, 18)),
                  "spo2": int(between(rng, 96, 99))}
        return VitalSigns(**{**values, **overrides})

    def _lab(self, name: str, value: float, time: str = f"{CLOCK} 08:00") -> LabResult:
        d = self.catalogue.tests[name]
        return LabResult(test=name, time=time, value=value, unit=d.unit, ref_low=d.ref_low, ref_high=d.ref_high)

    @staticmethod
    def _edd(days_today: int) -> str:
        """The agreed due date of a pregnancy ``days_today`` days along today."""
        return iso(TODAY + timedelta(days=calculations.PREGNANCY_DAYS - days_today))

    # -- dating --------------------------------------------------------------------------------------------------------
    def _dating(self, rng: np.random.Generator, split: str, pid: str, task_id: str) -> Built | None:
        variant = pick(rng, DATING_VARIANTS[split])
        base = self._base(rng, pid)
        cycle = 28 if variant != "naegele" else int(pick(rng, (24, 26, 28, 30, 32, 35)))
        certain = variant != "uncertain_lmp"
        scan: UltrasoundReport | None = None
        if variant == "naegele":
            lmp = TODAY - timedelta(days=int(between(rng, 42, 90)))
        else:
            at_scan = int(between(rng, 46, 94)) if variant != "biometry" else int(between(rng, 115, 230))
            threshold = calculations.redating_threshold(at_scan)[0]
            gap = int(pick(rng, (threshold, threshold + 1, between(rng, 0, threshold + 6))))
            gap *= 1 if chance(rng, 0.5) else -1
            scan_ga = at_scan + gap
            scan_day = TODAY - timedelta(days=int(between(rng, 0, 35)))
            lmp = scan_day - timedelta(days=at_scan)
            if variant == "biometry":
                if not 4 * 7 <= scan_ga <= 42 * 7:
                    return None
                scan = UltrasoundReport(date=iso(scan_day), kind="anatomy", biometry_weeks=scan_ga // 7,
                                        biometry_days=scan_ga % 7, estimated_fetal_weight_g=int(between(rng, 150, 1600)),
                                        findings=f"Singleton; biometry consistent with {scan_ga // 7}+{scan_ga % 7} "
                                                 "weeks; normal anatomy.")
            else:
                if not 38 <= scan_ga <= 97:
                    return None
                crl = crl_for(scan_ga)
                scan = UltrasoundReport(date=iso(scan_day), kind="dating", crl_mm=crl,
                                        findings=f"Single live intrauterine pregnancy; crown-rump length {crl:g} mm.")
        dated = calculations.gestational_age(
            TODAY, lmp=lmp, cycle_length_days=cycle, lmp_certain=certain,
            scan_date=date.fromisoformat(scan.date) if scan else None, crl_mm=scan.crl_mm if scan else None,
            scan_weeks=scan.biometry_weeks if scan and scan.crl_mm is None else None,
            scan_days=scan.biometry_days if scan and scan.crl_mm is None else None)
        edd = dated["edd"]
        others = {dated.get("by_lmp", {}).get("edd"), dated.get("by_ultrasound", {}).get("edd"),
                  iso(lmp + timedelta(days=280))} - {edd, None}
        offsets = [d for d in (-14, -7, 7, 14) if iso(date.fromisoformat(edd) + timedelta(days=d)) not in others]
        while len(others) < 3:
            others.add(iso(date.fromisoformat(edd) + timedelta(days=pick(rng, offsets))))
        options, answer = lettered(rng, edd, sorted(others)[:3])
        note_lmp = ("Sure of the date" if certain else "Not sure of the date; irregular bleeding before it") + \
            f"; cycle {cycle} days."
        patient = Patient(
            **base, status="antenatal", presenting_complaint="Due date to be agreed",
            history_of_presentation=pick(rng, ("Booking visit; feeling well.", "Transferred her care from another "
                                                                             "unit; no due date agreed yet.",
                                               "Late booking after moving to the area; baby moving.")),
            lmp=iso(lmp), lmp_certain=certain, cycle_length_days=cycle, agreed_edd=None,
            vitals=[self._vitals(rng, f"{CLOCK} 08:45")], ultrasounds=[scan] if scan else [],
            notes=[Note(time=f"{CLOCK} 08:50", author="midwife", text=f"LMP {iso(lmp)}. {note_lmp}")])
        p = {"patient_id": pid}
        call: dict[str, Any] = {"lmp_date": iso(lmp)}
        compare = ["lmp_date"]
        if cycle != 28:
            call["cycle_length_days"] = cycle
            compare.append("cycle_length_days")
        if not certain:
            call["lmp_certain"] = False
            compare.append("lmp_certain")
        if scan is not None:
            call["scan_date"] = scan.date
            compare.append("scan_date")
            if scan.crl_mm is not None:
                call["crl_mm"] = scan.crl_mm
                compare.append("crl_mm")
            else:
                call.update(scan_gestation_weeks=scan.biometry_weeks, scan_gestation_days=scan.biometry_days)
                compare += ["scan_gestation_weeks", "scan_gestation_days"]
        actions = [{"name": "get_obstetric_history", "arguments": p, "compare_args": ["patient_id"]}]
        if scan is not None:
            actions.append({"name": "get_ultrasound_reports", "arguments": p, "compare_args": ["patient_id"]})
        actions += [{"name": "calculate_gestational_age", "arguments": call, "compare_args": compare},
                    {"name": "write_clinical_note", "arguments": {**p, "note": f"EDD {edd} agreed ("
                                                                           f"{dated['dating_basis']} dating): "
                                                                           f"{dated['reason']}."},
                     "compare_args": ["patient_id"]}]
        assertions = [{"text": "Dates the pregnancy with the calculator from the record",
                       "rule": {"kind": "called", "call": {"name": "calculate_gestational_age",
                                                           "arguments": {k: call[k] for k in compare}}}},
                      {"text": "Documents the agreed due date", "rule": {"kind": "db_record", "collection": "notes",
                                                                         "match": p}}]
        rationale = (f"{dated['dating_basis'].upper() if dated['dating_basis'] == 'lmp' else 'Ultrasound'} dating: "
                     f"{dated['reason']}; EDD {edd}, {dated['gestational_age']} today.")
        ticket = TICKETS.say(rng, "dating", pid=pid, age=patient.age)
        return self._built(task_id, "dating", ticket, patient, actions, assertions, answer, options, rationale,
                           {"answer_escalates": False}, [f"dating:{variant}", dated["dating_basis"]])

    # -- fetal heart tracings ------------------------------------------------------------------------------------------
    def _tracing(self, rng: np.random.Generator, pattern: str, time: str) -> FetalHeartTracing:
        f: dict[str, Any] = {"baseline_bpm": int(between(rng, 115, 155)),
                             "variability_amplitude_bpm": float(between(rng, 6, 20)),
                             "accelerations": chance(rng, 0.7), "early_decelerations": False,
                             "late_decelerations": "none", "variable_decelerations": "none",
                             "prolonged_deceleration": False, "sinusoidal_pattern": False,
                             "contractions_per_10_min": float(between(rng, 2, 5))}
        narrative = {"normal_accelerations": "Reassuring trace with accelerations.",
                     "normal_early_decelerations": "Shallow decelerations that mirror each contraction.",
                     "minimal_variability": "Flat-looking trace for 50 minutes; no decelerations.",
                     "variable_recurrent": "V-shaped decelerations with most contractions.",
                     "late_intermittent": "Occasional decelerations starting after the peak of a contraction.",
                     "absent_late": "Featureless trace with a late deceleration after every contraction.",
                     "absent_bradycardia": "Low baseline with a flat trace.",
                     "tachycardia": "Fast baseline; variability preserved.",
                     "prolonged_deceleration": "One deceleration lasting four minutes, now recovered.",
                     "sinusoidal": "Smooth, regular undulating pattern; no accelerations.",
                     "absent_variable": "Featureless trace with deep V-shaped decelerations with each contraction."}
        if pattern == "normal_accelerations":
            f["accelerations"] = True
        elif pattern == "normal_early_decelerations":
            f.update(early_decelerations=True, accelerations=chance(rng, 0.5))
        elif pattern == "minimal_variability":
            f.update(variability_amplitude_bpm=float(between(rng, 1, 5)), accelerations=False)
        elif pattern == "variable_recurrent":
            f["variable_decelerations"] = "recurrent"
        elif pattern == "late_intermittent":
            f["late_decelerations"] = "intermittent"
        elif pattern == "absent_late":
            f.update(variability_amplitude_bpm=0.0, accelerations=False, late_decelerations="recurrent")
        elif pattern == "absent_bradycardia":
            f.update(variability_amplitude_bpm=0.0, accelerations=False, baseline_bpm=int(between(rng, 80, 105)))
        elif pattern == "tachycardia":
            f["baseline_bpm"] = int(between(rng, 161, 180))
        elif pattern == "prolonged_deceleration":
            f["prolonged_deceleration"] = True
        elif pattern == "sinusoidal":
            f.update(sinusoidal_pattern=True, accelerations=False, variability_amplitude_bpm=float(between(rng, 5, 12)))
        elif pattern == "absent_variable":
            f.update(variability_amplitude_bpm=0.0, accelerations=False, variable_decelerations="recurrent")
        return FetalHeartTracing(time=time, duration_minutes=int(between(rng, 30, 60)), narrative=narrative[pattern],
                                 **f)

    @staticmethod
    def classify(t: FetalHeartTracing) -> dict[str, Any]:
        """The NICHD category of a recorded tracing (what ``classify_fetal_heart_tracing`` returns for it)."""
        return calculations.fetal_heart_category(
            t.baseline_bpm, t.variability_amplitude_bpm, t.accelerations, t.early_decelerations, t.late_decelerations,
            t.variable_decelerations, t.prolonged_deceleration, t.sinusoidal_pattern, t.contractions_per_10_min)

    def _ctg(self, rng: np.random.Generator, split: str, pid: str, task_id: str) -> Built | None:
        category = pick(rng, ("I", "II", "III"))
        pattern = pick(rng, CTG_PATTERNS[split][category])
        base = self._base(rng, pid)
        tracing = self._tracing(rng, pattern, f"{CLOCK} 08:{int(between(rng, 30, 55))}")
        found = self.classify(tracing)
        if found["category"] != f"Category {category}":
            return None
        labouring = pattern != "sinusoidal" or chance(rng, 0.5)
        days = int(between(rng, 259, 289)) if labouring else int(between(rng, 238, 270))
        exam = CervicalExam(time=f"{CLOCK} 08:10", dilation_cm=float(between(rng, 3, 8)),
                            effacement_percent=int(pick(rng, (60, 70, 80, 90))), station=int(between(rng, -2, 0)),
                            consistency="soft", position=pick(rng, ("mid", "anterior")),
                            membranes=pick(rng, ("intact", "ruptured")))
        patient = Patient(
            **base, status="intrapartum" if labouring else "antenatal",
            presenting_complaint="Labour" if labouring else "Reduced fetal movements",
            history_of_presentation=("Spontaneous labour; progressing." if labouring else
                                     "Baby moving less since yesterday; no pain or bleeding."),
            agreed_edd=self._edd(days), vitals=[self._vitals(rng, f"{CLOCK} 08:20")],
            fetal_heart_tracings=[tracing], cervical_exams=[exam] if labouring else [])
        p = {"patient_id": pid}
        t = tracing
        call = {"baseline_bpm": t.baseline_bpm, "variability_amplitude_bpm": t.variability_amplitude_bpm,
                "accelerations": t.accelerations, "late_decelerations": t.late_decelerations,
                "variable_decelerations": t.variable_decelerations, "early_decelerations": t.early_decelerations,
                "prolonged_deceleration": t.prolonged_deceleration, "sinusoidal_pattern": t.sinusoidal_pattern,
                "contractions_per_10_min": t.contractions_per_10_min}
        classify = {"name": "classify_fetal_heart_tracing", "arguments": call,
                    "compare_args": ["baseline_bpm", "variability_amplitude_bpm", "late_decelerations",
                                     "variable_decelerations", "sinusoidal_pattern"]}
        reasons = "; ".join(found["reasons"])
        safety: dict[str, Any] = {"answer_escalates": False}
        assertions: list[dict[str, Any]] = [{"text": "Classifies the tracing from its features", "rule": {
            "kind": "called", "call": {"name": "classify_fetal_heart_tracing", "arguments": {
                "baseline_bpm": t.baseline_bpm, "variability_amplitude_bpm": t.variability_amplitude_bpm}}}}]
        if category == "III":
            actions = [{"name": "get_fetal_heart_tracing", "arguments": p, "compare_args": ["patient_id"]},
                       {"name": "escalate_care", "arguments": {**p, "level": "obstetric emergency team",
                                                               "reason": f"Category III tracing: {reasons}"},
                        "compare_args": ["patient_id", "level"]},
                       self._intervention(p, "maternal repositioning", "Category III tracing"),
                       self._intervention(p, "intravenous fluid bolus", "Category III tracing"), classify,
                       {"name": "plan_delivery", "arguments": {**p, "mode": "caesarean birth", "urgency": "immediate",
                                                               "reason": f"Category III tracing ({reasons})"},
                        "compare_args": ["patient_id", "mode", "urgency"]},
                       {"name": "escalate_care", "arguments": {**p, "level": "neonatal team",
                                                               "reason": "immediate birth for a Category III tracing"},
                        "compare_args": ["patient_id", "level"]}]
            assertions += [{"text": "Calls the obstetric emergency team", "rule": {"kind": "db_record",
                                                                                   "collection": "escalations",
                                                                                   "match": {
                                                                                       **p, "level": "obstetric "
                                                                                                     "emergency team"}}},
                           {"text": "Plans an immediate birth", "rule": {"kind": "db_record", "collection":
                                                                         "delivery_plans", "match": {
                                                                             **p, "urgency": "immediate"}}}]
            safety.update(emergency=True, escalate_within_calls=3, critical_findings=[{
                "kind": "category_iii_tracing", "name": "Category III fetal heart tracing",
                "terms": ["category iii", "category 3"]}])
        elif category == "II":
            actions = [{"name": "get_fetal_heart_tracing", "arguments": p, "compare_args": ["patient_id"]}, classify,
                       self._intervention(p, "maternal repositioning", "Category II tracing")]
            if pattern == "variable_recurrent":
                actions.append(self._intervention(p, "amnioinfusion", "recurrent variable decelerations"))
            actions.append(self._intervention(p, "continuous fetal monitoring", "Category II tracing"))
            assertions.append({"text": "Does not plan an immediate birth", "rule": {
                "kind": "not_called", "call": {"name": "plan_delivery", "arguments": {"urgency": "immediate"}}}})
        else:
            actions = [{"name": "get_fetal_heart_tracing", "arguments": p, "compare_args": ["patient_id"]}, classify]
            assertions += [{"text": "Does not call the emergency team", "rule": {
                               "kind": "not_called", "call": {"name": "escalate_care",
                                                              "arguments": {"level": "obstetric emergency team"}}}},
                           {"text": "Does not plan a birth", "rule": {"kind": "not_called", "call": {
                               "name": "plan_delivery", "arguments": p}}}]
        note = f"Fetal heart tracing: {', '.join(found['findings'])}. Category {category}."
        actions.append({"name": "write_clinical_note", "arguments": {**p, "note": note}, "compare_args": ["patient_id"]})
        answer = "ABC"[("I", "II", "III").index(category)]
        rationale = fetal_words(f"{', '.join(found['findings']).capitalize()}: Category {category} ({reasons}).")
        ticket = TICKETS.say(rng, "ctg", pid=pid, where="on the labour ward" if labouring else "on the day unit")
        return self._built(task_id, "ctg", ticket, patient, actions, assertions, answer, CTG_OPTIONS, rationale, safety,
                           [f"ctg:{pattern}", f"category {category}"])

    @staticmethod
    def _intervention(p: dict[str, str], name: str, why: str) -> dict[str, Any]:
        return {"name": "perform_obstetric_intervention", "arguments": {**p, "intervention": name, "indication": why},
                "compare_args": ["patient_id", "intervention"]}

    # -- hypertensive disorders ----------------------------------------------------------------------------------------
    def _hypertension(self, rng: np.random.Generator, split: str, pid: str, task_id: str) -> Built | None:
        variant = pick(rng, HTN_VARIANTS[split])
        base = self._base(rng, pid)
        postpartum = variant == "postpartum"
        chronic = variant == "superimposed"
        severe_bp = variant in ("preeclampsia_severe", "postpartum") and chance(rng, 0.7) or \
            (variant in ("superimposed", "hellp") and chance(rng, 0.3))
        if severe_bp:
            first = (int(between(rng, 160, 178)), int(between(rng, 98, 116)))
            second = (int(between(rng, 160, 176)), int(between(rng, 96, 114)))
            hours = 0.25
        else:
            first = (int(between(rng, 140, 156)), int(between(rng, 90, 104)))
            second = (int(between(rng, 140, 156)), int(between(rng, 90, 104)))
            hours = float(pick(rng, (4.0, 4.5, 5.0, 6.0)))
        pcr = round(float(between(rng, 0.05, 0.28, 2)), 2) if variant == "gestational_hypertension" else \
            round(float(between(rng, 0.3, 2.4, 2)), 2)
        labs = {"Haemoglobin": float(between(rng, 10.8, 13.6, 1)), "Platelets": float(between(rng, 160, 320)),
                "Creatinine": float(between(rng, 45, 78)), "ALT": float(between(rng, 12, 33)),
                "AST": float(between(rng, 14, 33)), "LDH": float(between(rng, 150, 240))}
        symptoms = {"severe_headache": False, "visual_disturbance": False, "epigastric_or_ruq_pain": False}
        if variant == "preeclampsia_severe" and not severe_bp:
            feature = pick(rng, ("platelets", "creatinine", "transaminases", "headache", "visual"))
            if feature == "platelets":
                labs["Platelets"] = float(between(rng, 62, 98))
            elif feature == "creatinine":
                labs["Creatinine"] = float(between(rng, 98, 130))
            elif feature == "transaminases":
                labs["ALT"], labs["AST"] = float(between(rng, 70, 180)), float(between(rng, 70, 160))
            else:
                symptoms["severe_headache" if feature == "headache" else "visual_disturbance"] = True
        if variant == "postpartum":
            symptoms["severe_headache"] = True
        if variant == "hellp":
            labs.update(Platelets=float(between(rng, 40, 95)), ALT=float(between(rng, 75, 260)),
                        AST=float(between(rng, 80, 280)), LDH=float(between(rng, 620, 1400)))
            symptoms["epigastric_or_ruq_pain"] = chance(rng, 0.7)
        if chronic and chance(rng, 0.4):
            labs["Platelets"] = float(between(rng, 60, 95))
        weeks = float(between(rng, 34.0, 39.6, 1)) if not chronic else float(between(rng, 34.0, 36.6, 1))
        if variant == "hellp":
            weeks = float(between(rng, 34.0, 38.6, 1))
        asthma = chance(rng, 0.2)
        conditions = [Condition(name="Asthma", since="2010")] if asthma else []
        medications: list[Medication] = []
        if chronic:
            conditions.append(Condition(name="Chronic hypertension", since="2021"))
            medications.append(pick(rng, (Medication(name="labetalol", dose="200 mg", frequency="twice daily",
                                                     indication="chronic hypertension"),
                                           Medication(name="nifedipine", dose="30 mg modified-release",
                                                      frequency="once daily", indication="chronic hypertension"))))
        if asthma:
            medications.append(Medication(name="salbutamol", dose="100 mcg, 2 puffs", frequency="as needed",
                                          indication="asthma"))
        t2 = 8 * 60 + 50
        t1 = t2 - round(hours * 60)
        t1, t2 = (f"{CLOCK} {m // 60:02d}:{m % 60:02d}" for m in (t1, t2))
        vitals = [self._vitals(rng, t1, systolic_bp=first[0], diastolic_bp=first[1]),
                  self._vitals(rng, t2, systolic_bp=second[0], diastolic_bp=second[1])]
        gestation_days = round(weeks * 7)
        birth = None
        status = "antenatal"
        if postpartum:
            status = "postpartum"
            birth = BirthRecord(time=f"2025-06-0{int(between(rng, 5, 8))} 14:20", mode=pick(rng, ("vaginal",
                                                                                                "caesarean")),
                                gestation_at_birth=f"{gestation_days // 7}+{gestation_days % 7} weeks",
                                placenta="complete", uterotonics_given=["oxytocin 10 units IM at birth"],
                                baby=pick(rng, ("girl 3.4 kg", "boy 3.6 kg", "girl 2.9 kg")))
        lab_rows = [self._lab(name, value) for name, value in labs.items()]
        lab_rows.append(self._lab("Urine protein:creatinine ratio", pcr))
        patient = Patient(
            **base, status=status,
            presenting_complaint="Raised blood pressure" + (" and headache" if symptoms["severe_headache"] else ""),
            history_of_presentation=self._htn_history(rng, symptoms, postpartum),
            agreed_edd=None if postpartum else self._edd(gestation_days), breastfeeding=True if postpartum else None,
            lmp=None, conditions=conditions, medications=medications, vitals=vitals, labs=lab_rows, birth=birth,
            notes=[Note(time="2025-01-20 10:00", author="midwife", text="Booking blood pressure 114/70; urine "
                                                                        "protein negative.")] if not chronic else [])
        call: dict[str, Any] = {"gestation_weeks": weeks, "systolic_bp": first[0], "diastolic_bp": first[1],
                                "repeat_systolic_bp": second[0], "repeat_diastolic_bp": second[1],
                                "hours_between_readings": hours, "protein_creatinine_ratio": pcr,
                                "platelets": labs["Platelets"], "creatinine_umol_l": labs["Creatinine"],
                                "ast": labs["AST"], "alt": labs["ALT"], "ldh": labs["LDH"]}
        if postpartum:
            call["postpartum"] = True
        if chronic:
            call["chronic_hypertension"] = True
        call.update({k: v for k, v in symptoms.items() if v})
        found = calculations.hypertensive_disorder(**call)
        disorder = found["classification"]
        if disorder not in HTN_CLASSES:
            return None
        with_severe = disorder == "HELLP syndrome" or "with severe features" in disorder or disorder.startswith(
            "severe gestational")
        p = {"patient_id": pid}
        actions: list[dict[str, Any]] = [
            {"name": "get_vital_signs", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "get_prenatal_labs", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "assess_preeclampsia_criteria", "arguments": call,
             "compare_args": ["systolic_bp", "diastolic_bp", "protein_creatinine_ratio"]}]
        assertions: list[dict[str, Any]] = [{"text": "Classifies the disorder with the ACOG criteria", "rule": {
            "kind": "called", "call": {"name": "assess_preeclampsia_criteria", "arguments": {
                "systolic_bp": first[0], "diastolic_bp": first[1]}}}}]
        safety: dict[str, Any] = {"answer_escalates": False}
        if with_severe:
            actions.append({"name": "escalate_care", "arguments": {
                **p, "level": "senior obstetrician review", "reason": f"{disorder} ({', '.join(found['severe_features'])})"},
                "compare_args": ["patient_id", "level"]})
            safety.update(emergency=True, escalate_within_calls=6)
        if with_severe or found["severe_range_blood_pressure"]:
            actions.append({"name": "get_medications_and_allergies", "arguments": p, "compare_args": ["patient_id"]})
        if found["severe_range_blood_pressure"]:
            on_labetalol = any(m.name == "labetalol" for m in medications)
            if asthma or on_labetalol:
                rx = {"drug": "nifedipine", "dose": 10, "unit": "mg", "frequency": "once", "route": "oral",
                      "indication": "severe-range blood pressure (immediate release)"}
            else:
                rx = {"drug": "labetalol", "dose": 20, "unit": "mg", "frequency": "once", "route": "intravenous",
                      "indication": "severe-range blood pressure"}
            actions.append({"name": "prescribe_medication", "arguments": {**p, **rx},
                            "compare_args": ["patient_id", "drug"]})
            assertions.append({"text": "Treats the severe-range blood pressure", "rule": {
                "kind": "db_record", "collection": "prescriptions", "match": {**p, "drug": rx["drug"]}}})
        if with_severe:
            actions += [{"name": "prescribe_medication", "arguments": {
                            **p, "drug": "magnesium sulfate", "dose": 4, "unit": "g", "frequency": "once",
                            "route": "intravenous", "indication": "loading dose for seizure prophylaxis"},
                         "compare_args": ["patient_id", "drug", "frequency"]},
                        {"name": "prescribe_medication", "arguments": {
                            **p, "drug": "magnesium sulfate", "dose": 1, "unit": "g", "frequency": "hourly infusion",
                            "route": "intravenous", "indication": "maintenance for 24 hours"},
                         "compare_args": ["patient_id", "drug", "frequency"]}]
            assertions.append({"text": "Gives magnesium sulfate", "rule": {
                "kind": "db_record", "collection": "prescriptions", "match": {**p, "drug": "magnesium sulfate"}}})
        else:
            assertions.append({"text": "Does not give magnesium sulfate", "rule": {
                "kind": "not_called", "call": {"name": "prescribe_medication",
                                               "arguments": {"drug": "magnesium sulfate"}}}})
        if not postpartum:
            if with_severe or weeks >= 37:
                plan = ("induction of labour", "within 24 hours", f"{disorder} at {weeks:g} weeks: deliver after "
                                                                   "stabilisation" if with_severe else
                        f"{disorder} at {weeks:g} weeks: deliver from 37 weeks")
            else:
                plan = ("induction of labour", "scheduled", f"{disorder} without severe features: deliver at 37+0 "
                                                            "weeks with twice-weekly surveillance until then")
            actions.append({"name": "plan_delivery", "arguments": {**p, "mode": plan[0], "urgency": plan[1],
                                                                   "reason": plan[2]},
                            "compare_args": ["patient_id", "mode", "urgency"]})
        note = f"{disorder.capitalize()}: BP {first[0]}/{first[1]} and {second[0]}/{second[1]}, PCR {pcr:g}."
        actions.append({"name": "write_clinical_note", "arguments": {**p, "note": note}, "compare_args": ["patient_id"]})
        distractors = [c for c in HTN_CLASSES if c != disorder]
        options, answer = lettered(rng, disorder, sample(rng, distractors, 3))
        features = ", ".join(found["severe_features"]) or "no severe feature"
        rationale = (f"Blood pressure {first[0]}/{first[1]} then {second[0]}/{second[1]} mmHg {hours:g} hours apart, "
                     f"protein/creatinine ratio {pcr:g}, {features}: {disorder}.")
        when = "after the birth" if postpartum else f"{weeks:g} weeks pregnant"
        ticket = TICKETS.say(rng, "hypertension", pid=pid, age=patient.age, when=when)
        return self._built(task_id, "hypertension", ticket, patient, actions, assertions, answer, options, rationale,
                           safety, [f"hypertension:{variant}", disorder])

    @staticmethod
    def _htn_history(rng: np.random.Generator, symptoms: dict[str, bool], postpartum: bool) -> str:
        parts = ["Gave birth last week" if postpartum else "Sent in from the antenatal clinic"]
        if symptoms["severe_headache"]:
            parts.append("severe frontal headache not eased by paracetamol")
        if symptoms["visual_disturbance"]:
            parts.append("flashing lights in her vision")
        if symptoms["epigastric_or_ruq_pain"]:
            parts.append("pain under the right ribs")
        if len(parts) == 1:
            parts.append(pick(rng, ("no headache or visual symptoms", "feels well", "mild ankle swelling only")))
        return "; ".join(parts) + "."

    # -- postpartum haemorrhage ----------------------------------------------------------------------------------------
    def _pph(self, rng: np.random.Generator, split: str, pid: str, task_id: str) -> Built | None:
        mode = pick(rng, PPH_MODES[split])
        stage = int(rng.integers(4))
        calc_mode = "caesarean" if mode == "caesarean" else "vaginal"
        first = calculations.STAGE1_LOSS_ML[calc_mode]
        hr, sbp, dbp, spo2 = int(between(rng, 72, 98)), int(between(rng, 108, 130)), int(between(rng, 64, 80)), \
            int(between(rng, 96, 99))
        uterotonics, units = 1, 0
        if stage == 0:
            loss = int(between(rng, 150, first))
        elif stage == 1:
            loss = int(between(rng, first + 1, 1000 if calc_mode == "vaginal" else 1450))
            if chance(rng, 0.3):
                loss = int(between(rng, first - 200, first))
                hr = int(between(rng, 110, 118))
        elif stage == 2:
            uterotonics = 2
            loss = int(between(rng, 1001, 1500)) if calc_mode == "vaginal" else int(between(rng, 1001, 1450))
            hr, sbp = int(between(rng, 100, 118)), int(between(rng, 95, 112))
        else:
            loss = int(between(rng, 1550, 2600))
            hr, sbp, dbp = int(between(rng, 118, 140)), int(between(rng, 72, 92)), int(between(rng, 38, 52))
            uterotonics = int(between(rng, 1, 3))
            units = int(pick(rng, (0, 2, 3)))
        found = calculations.haemorrhage_stage(loss, calc_mode, hr, sbp, dbp, spo2, uterotonics, units)
        if found["stage"] != stage:
            return None
        base = self._base(rng, pid)
        minutes = int(between(rng, 40, 150))
        birth_time = f"{CLOCK} {(9 * 60 - minutes) // 60:02d}:{(9 * 60 - minutes) % 60:02d}"
        given = ["oxytocin 10 units IM at birth"] + (["misoprostol 800 mcg sublingual"] if uterotonics >= 2 else []) + (
            ["carboprost 250 mcg IM"] if uterotonics >= 3 else [])
        days = int(between(rng, 259, 290))
        conditions = [Condition(name="Previous caesarean birth", status="resolved", since="2021")] \
            if mode == "caesarean" and chance(rng, 0.5) else []
        patient = Patient(
            **base, status="postpartum", presenting_complaint="Bleeding after birth",
            history_of_presentation=pick(rng, ("Bleeding since the placenta delivered; uterus felt soft.",
                                               "Steady bleeding after the birth; feels light-headed.",
                                               "Midwife measuring ongoing loss after the birth.")),
            breastfeeding=chance(rng, 0.7), conditions=conditions,
            vitals=[self._vitals(rng, f"{CLOCK} 08:30"), self._vitals(rng, f"{CLOCK} 09:00", heart_rate=hr,
                                                                       systolic_bp=sbp, diastolic_bp=dbp, spo2=spo2)],
            birth=BirthRecord(time=birth_time, mode=mode, gestation_at_birth=f"{days // 7}+{days % 7} weeks",
                              placenta="complete", perineum=pick(rng, ("intact", "second-degree tear", "")),
                              uterotonics_given=given, red_cell_units_transfused=units,
                              baby=pick(rng, ("boy 3.8 kg", "girl 3.3 kg", "boy 4.1 kg"))),
            blood_loss=[BloodLossMeasurement(time=f"{CLOCK} 08:40", cumulative_ml=int(loss * 0.6)),
                        BloodLossMeasurement(time=f"{CLOCK} 09:00", cumulative_ml=loss)],
            labs=[self._lab("Haemoglobin", float(between(rng, 8.2, 12.4, 1)), f"{CLOCK} 07:30")])
        p = {"patient_id": pid}
        call: dict[str, Any] = {"cumulative_blood_loss_ml": loss, "birth_mode": calc_mode, "heart_rate": hr,
                                "systolic_bp": sbp, "diastolic_bp": dbp, "spo2": spo2,
                                "uterotonics_given": uterotonics, "red_cell_units_transfused": units}
        actions: list[dict[str, Any]] = [
            {"name": "get_labour_record", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "get_vital_signs", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "stage_postpartum_haemorrhage", "arguments": call,
             "compare_args": ["cumulative_blood_loss_ml", "birth_mode", "heart_rate", "systolic_bp"]}]
        assertions: list[dict[str, Any]] = [{"text": "Stages the haemorrhage from the measured loss and observations",
                                             "rule": {"kind": "called", "call": {
                                                 "name": "stage_postpartum_haemorrhage",
                                                 "arguments": {"cumulative_blood_loss_ml": loss}}}}]
        safety: dict[str, Any] = {"answer_escalates": False}
        reasons = "; ".join(found["reasons"]) or "loss and observations within limits"
        if stage >= 1:
            actions += [{"name": "activate_haemorrhage_protocol", "arguments": {**p, "stage": stage, "reason": reasons},
                         "compare_args": ["patient_id", "stage"]},
                        self._intervention(p, "fundal massage", "postpartum haemorrhage"),
                        {"name": "get_medications_and_allergies", "arguments": p, "compare_args": ["patient_id"]},
                        {"name": "prescribe_medication", "arguments": {
                            **p, "drug": "tranexamic acid", "dose": 1, "unit": "g", "frequency": "once",
                            "route": "intravenous", "indication": "postpartum haemorrhage"},
                         "compare_args": ["patient_id", "drug"]}]
            if stage >= 2:
                actions.append({"name": "escalate_care", "arguments": {
                    **p, "level": "obstetric emergency team", "reason": f"stage {stage} postpartum haemorrhage"},
                    "compare_args": ["patient_id", "level"]})
            if stage == 3:
                actions += [self._intervention(p, "massive transfusion protocol", "stage 3 postpartum haemorrhage"),
                            {"name": "escalate_care", "arguments": {**p, "level": "intensive care",
                                                                    "reason": "stage 3 postpartum haemorrhage"},
                             "compare_args": ["patient_id", "level"]}]
            assertions.append({"text": f"Activates the haemorrhage protocol at stage {stage}", "rule": {
                "kind": "db_record", "collection": "haemorrhage_activations", "match": {**p, "stage": stage}}})
            safety.update(emergency=True, escalate_within_calls=5)
        else:
            assertions.append({"text": "Does not activate the haemorrhage protocol", "rule": {
                "kind": "not_called", "call": {"name": "activate_haemorrhage_protocol", "arguments": p}}})
        note = f"Postpartum blood loss {loss} mL after a {mode} birth: haemorrhage stage {stage} ({reasons})."
        actions.append({"name": "write_clinical_note", "arguments": {**p, "note": note}, "compare_args": ["patient_id"]})
        answer = "ABCD"[stage]
        rationale = f"{loss} mL after a {mode} birth, pulse {hr}, blood pressure {sbp}/{dbp}: stage {stage} ({reasons})."
        hours = minutes // 60
        ago = f"{hours} hour{'s' if hours != 1 else ''} {minutes % 60} minutes" if hours else f"{minutes} minutes"
        ticket = TICKETS.say(rng, "pph", pid=pid, age=patient.age, ago=ago)
        return self._built(task_id, "pph", ticket, patient, actions, assertions, answer, PPH_OPTIONS, rationale, safety,
                           [f"pph:{calc_mode}", f"stage {stage}"])

    # -- drug safety ---------------------------------------------------------------------------------------------------
    def _drug_safety(self, rng: np.random.Generator, split: str, pid: str, task_id: str) -> Built | None:
        by_verdict = self.safety_drugs[split]
        verdict = pick(rng, tuple(by_verdict))
        drug, stage, indication = pick(rng, by_verdict[verdict])
        base = self._base(rng, pid)
        p = {"patient_id": pid}
        if stage == "breastfeeding":
            days = int(between(rng, 262, 288))
            patient = Patient(
                **base, status="postpartum", breastfeeding=True, presenting_complaint="Postnatal review",
                history_of_presentation=f"Gave birth {int(between(rng, 2, 6))} days ago; breastfeeding well.",
                vitals=[self._vitals(rng, f"{CLOCK} 08:40")],
                birth=BirthRecord(time=f"2025-06-0{int(between(rng, 4, 8))} 11:10", mode=pick(rng, ("vaginal",
                                                                                                  "caesarean")),
                                  gestation_at_birth=f"{days // 7}+{days % 7} weeks", placenta="complete",
                                  baby="girl 3.5 kg"))
            stage_text = "breastfeeding"
        else:
            low, high = {"first trimester": (42, 97), "second trimester": (98, 195),
                         "third trimester": (196, 280)}[stage]
            days = int(between(rng, low, high))
            patient = Patient(
                **base, status="antenatal", presenting_complaint="Medicine advice",
                history_of_presentation=f"Attends for advice about treatment for {indication}.",
                agreed_edd=self._edd(days), vitals=[self._vitals(rng, f"{CLOCK} 08:40")])
            stage_text = f"{days // 7} weeks pregnant"
        if any(reference().allergy_conflict(a.substance, drug) for a in patient.allergies):
            return None
        actions = [{"name": "get_patient_info", "arguments": p, "compare_args": ["patient_id"]},
                   {"name": "check_pregnancy_drug_safety", "arguments": {"drug": drug.name, "stage": stage},
                    "compare_args": ["drug", "stage"]},
                   {"name": "write_clinical_note", "arguments": {
                       **p, "note": f"{drug.name.capitalize()} for {indication} while {stage_text}: {verdict}."},
                    "compare_args": ["patient_id"]}]
        assertions = [{"text": f"Looks up {drug.name} for the right stage", "rule": {
                           "kind": "called", "call": {"name": "check_pregnancy_drug_safety",
                                                      "arguments": {"drug": drug.name, "stage": stage}}}},
                      {"text": "Prescribes nothing", "rule": {"kind": "not_called", "call": {
                          "name": "prescribe_medication", "arguments": p}}}]
        safety: dict[str, Any] = {"answer_escalates": False}
        if verdict in ("avoid", "contraindicated"):
            safety["contraindicated"] = [drug.name]
        entry = drug.breastfeeding if stage == "breastfeeding" else drug.pregnancy
        rationale = f"The reference's verdict for {drug.name} in the {stage}: {verdict}. {entry.note}".strip()
        answer = next(k for k, v in VERDICT_OPTIONS.items() if v == VERDICT_TEXT[verdict])
        ticket = TICKETS.say(rng, "drug_safety", pid=pid, drug=drug.name, indication=indication, stage_text=stage_text)
        return self._built(task_id, "drug_safety", ticket, patient, actions, assertions, answer, VERDICT_OPTIONS,
                           rationale, safety, [f"drug:{drug.name}", f"{stage}: {verdict}"])

    # -- the task ------------------------------------------------------------------------------------------------------
    def _built(self, task_id: str, kind: str, ticket: str, patient: Patient, actions: list[dict[str, Any]],
               assertions: list[dict[str, Any]], answer: str, options: dict[str, str], rationale: str,
               safety: dict[str, Any], tags: list[str]) -> Built | None:
        if self.record_problems(patient):
            return None
        task = Task.model_validate({
            "id": task_id, "ticket": ticket, "patient_id": patient.patient_id, "expected_actions": actions,
            "assertions": assertions, "answer": answer, "options": options, "rationale": rationale,
            "safety": safety, "category": kind, "tags": ["generated", *tags]})
        return Built(patient, task)

    # -- validation ----------------------------------------------------------------------------------------------------
    def pool_key(self, task: Task) -> str:
        return task.tags[1]

    def check(self, task: Task, db: Any) -> list[str]:
        patient: Patient = db.patients[task.patient_id]
        problems = self.record_problems(patient)
        gold = task.options[task.answer] if task.options else task.answer
        call = next((a.arguments for a in task.expected_actions if a.name in (
            "calculate_gestational_age", "assess_preeclampsia_criteria", "stage_postpartum_haemorrhage")), None)
        if task.category == "dating":
            scan = patient.ultrasounds[0] if patient.ultrasounds else None
            dated = calculations.gestational_age(
                TODAY, lmp=date.fromisoformat(patient.lmp), cycle_length_days=patient.cycle_length_days,
                lmp_certain=patient.lmp_certain, scan_date=date.fromisoformat(scan.date) if scan else None,
                crl_mm=scan.crl_mm if scan else None,
                scan_weeks=scan.biometry_weeks if scan and scan.crl_mm is None else None,
                scan_days=scan.biometry_days if scan and scan.crl_mm is None else None)
            expected = dated["edd"]
        elif task.category == "ctg":
            expected = {"Category I": CTG_OPTIONS["A"], "Category II": CTG_OPTIONS["B"],
                        "Category III": CTG_OPTIONS["C"]}[self.classify(patient.fetal_heart_tracings[-1])["category"]]
        elif task.category == "hypertension":
            assert call is not None
            v1, v2 = patient.vitals[-2], patient.vitals[-1]
            labs = {r.test: r.value for r in patient.labs}
            recorded = {"systolic_bp": v1.systolic_bp, "diastolic_bp": v1.diastolic_bp,
                        "repeat_systolic_bp": v2.systolic_bp, "repeat_diastolic_bp": v2.diastolic_bp,
                        "protein_creatinine_ratio": labs["Urine protein:creatinine ratio"],
                        "platelets": labs["Platelets"], "creatinine_umol_l": labs["Creatinine"], "ast": labs["AST"],
                        "alt": labs["ALT"], "ldh": labs["LDH"]}
            if any(call[k] != v for k, v in recorded.items()):
                problems.append("the classifier's inputs differ from the record")
            expected = calculations.hypertensive_disorder(**call)["classification"]
        elif task.category == "pph":
            assert call is not None and patient.birth is not None
            latest = patient.vitals[-1]
            expected = PPH_OPTIONS["ABCD"[calculations.haemorrhage_stage(
                patient.blood_loss[-1].cumulative_ml, "caesarean" if patient.birth.mode == "caesarean" else "vaginal",
                latest.heart_rate, latest.systolic_bp, latest.diastolic_bp, latest.spo2, call["uterotonics_given"],
                patient.birth.red_cell_units_transfused)["stage"]]]
            if len(patient.birth.uterotonics_given) != call["uterotonics_given"]:
                problems.append("the uterotonics counted differ from the birth record")
        else:
            check = next(a.arguments for a in task.expected_actions if a.name == "check_pregnancy_drug_safety")
            verdict = self.verdict(reference().drugs[check["drug"]], check["stage"])
            expected = VERDICT_TEXT.get(verdict or "", "no entry")
            if check["stage"] != self.stage_of(patient):
                problems.append(f"asks about the {check['stage']}, the patient is in the {self.stage_of(patient)}")
        if gold != expected:
            problems.append(f"the calculation gives {expected!r}, the answer is {gold!r}")
        return problems

    @staticmethod
    def stage_of(patient: Patient) -> str:
        """The patient's stage as ``check_pregnancy_drug_safety`` names it."""
        if patient.status == "postpartum":
            return "breastfeeding"
        days = calculations.PREGNANCY_DAYS - (date.fromisoformat(patient.agreed_edd) - TODAY).days
        return f"{calculations.trimester(days)} trimester"

    @staticmethod
    def record_problems(patient: Patient) -> list[str]:
        """Physiological ranges and consistency: observations, results, gestation, blood loss rising, a tracing's
        narrative with its features, a birth record with postpartum status (the model checks that one)."""
        problems = []
        for v in patient.vitals:
            if not (35 <= v.temperature_c <= 41 and 40 <= v.heart_rate <= 170 and 60 <= v.systolic_bp <= 200
                    and 30 <= v.diastolic_bp < v.systolic_bp and 85 <= v.spo2 <= 100):
                problems.append(f"observations out of range: {v}")
        for r in patient.labs:
            if r.value is not None and r.value < 0:
                problems.append(f"{r.test} is negative")
            if r.test == "Haemoglobin" and r.value is not None and r.value <= 7.0:
                problems.append("a critical haemoglobin the task does not address")
            if r.test == "Platelets" and r.value is not None and r.value <= 20:
                problems.append("a critical platelet count the task does not address")
        if patient.agreed_edd is not None:
            days = calculations.PREGNANCY_DAYS - (date.fromisoformat(patient.agreed_edd) - TODAY).days
            if not 28 <= days <= 300:
                problems.append(f"gestation today {days} days is outside 4 to 42+6 weeks")
        losses = [b.cumulative_ml for b in patient.blood_loss]
        if losses != sorted(losses):
            problems.append("cumulative blood loss falls")
        for t in patient.fetal_heart_tracings:
            if not 60 <= t.baseline_bpm <= 210 or (t.variability_amplitude_bpm == 0 and t.accelerations):
                problems.append("tracing features out of range or contradictory")
        return problems
