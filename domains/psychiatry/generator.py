"""The Psychiatry task generator: a patient seen in clinic, primary care, the emergency department, a general
hospital ward or at home, with a whole record (referral and history, psychiatric, medical, family and social history,
medicines and allergies, observations, results, mental state, the Columbia-style screening answers, substance use,
today's questionnaire responses, earlier scores), and a decision whose answer is computed by the code the tools
use. Six kinds:

* ``phq9`` / ``gad7``: today's item responses, drawn so the total lands in a chosen severity band (evenly, the band
  edges included); the band is ``clinical_gym.tools.instruments`` ``phq_9`` / ``gad_7``. A positive PHQ-9 item 9
  (passive thoughts of death) is a suicide red flag: screen, and agree a safety plan.
* ``audit_c``: the three consumption answers around the sex-specific threshold (3 women, 4 men); the score and screen
  result are the ``audit_c`` instrument's; a positive screen gets a brief intervention in the note.
* ``suicide_risk``: the screening answers drawn for a risk level (high, moderate, low, none, evenly); the level is
  ``tools.suicide_risk_level``, and the plan follows the screen's response for it (admission, with enhanced
  observation in hospital, for high risk; crisis team and a safety plan for moderate; a safety plan and follow-up
  for low).
* ``lithium``: a 12-hour (10-14 h) post-dose level in one of the bands of ``interpret_lithium_level``; toxic levels
  mean withholding lithium and medical admission.
* ``clozapine``: a blood count around the traffic-light thresholds (with and without benign ethnic neutropenia),
  classified by ``classify_clozapine_blood_count``; red means stopping clozapine.

Generalisation split: the train split holds the PHQ-9, suicide-risk and lithium kinds; the test split holds kinds the
train split never shows: the GAD-7, AUDIT-C screening and clozapine monitoring.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from clinical_gym.drugs.units import ckd_epi_egfr

from clinical_gym.tool_env.generation import (
    Draft,
    TaskGenerator,
    Wording,
    between,
    chance,
    person_name,
    pick,
    sample,
)
from clinical_gym.tool_env.tasks import Task
from clinical_gym.tools.instruments.psychiatry import audit_c, gad_7, phq_9
from clinical_gym.domains.psychiatry.data_model import (
    Allergy,
    LabResult,
    Medication,
    MentalStateExam,
    Patient,
    PriorScore,
    PsychiatryDB,
    RiskToOthers,
    SubstanceUse,
    SuicideScreen,
    VitalSigns,
)
from clinical_gym.domains.psychiatry.tools import HOSPITAL_SETTINGS, PsychiatryTools, suicide_risk_level

POOLS = {"train": (("phq9", 0.35), ("suicide_risk", 0.4), ("lithium", 0.25)),
         "test": (("gad7", 0.35), ("audit_c", 0.3), ("clozapine", 0.35))}
PHQ9_BANDS = ((0, 4), (5, 9), (10, 14), (15, 19), (20, 27))
GAD7_BANDS = ((0, 4), (5, 9), (10, 14), (15, 21))
PHQ9_OPTIONS = {"A": "None-minimal depression", "B": "Mild depression", "C": "Moderate depression",
                "D": "Moderately severe depression", "E": "Severe depression"}
GAD7_OPTIONS = {"A": "Minimal anxiety", "B": "Mild anxiety", "C": "Moderate anxiety", "D": "Severe anxiety"}
RISK_OPTIONS = {"A": "High risk", "B": "Moderate risk", "C": "Low risk", "D": "No suicidal ideation or behaviour"}
RISK_TEXT = {"high": "High risk", "moderate": "Moderate risk", "low": "Low risk",
             "none": "No suicidal ideation or behaviour"}
LITHIUM_BANDS = {"below range": (0.18, 0.39), "therapeutic": (0.4, 1.0), "above range": (1.01, 1.5),
                 "toxic": (1.51, 2.5), "severely toxic": (2.51, 3.6)}
LITHIUM_OPTIONS = {"A": "Below the usual range", "B": "Within the usual range", "C": "Above the usual range",
                   "D": "Toxic", "E": "Severely toxic"}
LITHIUM_TEXT = dict(zip(LITHIUM_BANDS, LITHIUM_OPTIONS.values()))
CLOZAPINE_OPTIONS = {"A": "Green: continue clozapine with routine monitoring",
                     "B": "Amber: continue clozapine and repeat the blood count twice weekly",
                     "C": "Red: stop clozapine now"}
CLOZAPINE_TEXT = dict(zip(("green", "amber", "red"), CLOZAPINE_OPTIONS.values()))
CLOCK_DATE = "2025-06-10"

SETTINGS = {"phq9": ("primary care", "outpatient clinic"), "gad7": ("primary care", "outpatient clinic"),
            "audit_c": ("primary care", "outpatient clinic", "general hospital ward"),
            "suicide_risk": ("emergency department", "outpatient clinic", "primary care", "home visit",
                             "general hospital ward"),
            "lithium": ("outpatient clinic", "primary care"), "clozapine": ("outpatient clinic",)}
WHERE = {"primary care": "at the GP surgery", "outpatient clinic": "in clinic",
         "emergency department": "in the emergency department", "general hospital ward": "on a medical ward",
         "home visit": "at home", "psychiatric ward": "on the psychiatric ward"}
OCCUPATIONS = ("teacher", "nurse", "warehouse worker", "student", "accountant", "bus driver", "carer", "chef",
               "retired engineer", "unemployed", "shop manager", "plumber", "software developer", "cleaner")
LIVING = ("Lives alone", "Lives with a partner", "Lives with parents", "Lives with a partner and two children",
          "Lives in a shared flat", "Lives with an adult daughter")
FAMILY = ("Mother: depression", "Father: alcohol use disorder", "Sister: anxiety", "No family psychiatric history",
          "Uncle: bipolar disorder", "Grandmother: dementia")
MEDICAL = ("Asthma", "Hypertension", "Type 2 diabetes", "Hypothyroidism", "Migraine", "Irritable bowel syndrome",
           "Eczema", "Osteoarthritis")
ALLERGIES = (("penicillin", "rash", "mild"), ("codeine", "vomiting", "mild"), ("latex", "contact dermatitis", "mild"),
             ("trimethoprim", "widespread rash", "moderate"))
OTHER_MEDICINES = {"Asthma": ("salbutamol", "100 mcg, 2 puffs", "as needed"),
                   "Hypertension": ("amlodipine", "5 mg", "once daily"),
                   "Type 2 diabetes": ("metformin", "500 mg", "twice daily"),
                   "Hypothyroidism": ("levothyroxine", "75 mcg", "once daily"),
                   "Migraine": ("propranolol", "40 mg", "twice daily")}

TICKETS = Wording(
    phq9=("{pid}, {age}, completed a PHQ-9 {where} today. Score it, act on anything it shows, and submit the letter of "
          "the severity band.",
          "Please review {pid} ({age}, {sex}) {where}: {poss} PHQ-9 responses from this morning are on the record. "
          "What severity band do they give? Act on any risk, write a note and submit the letter.",
          "{pid} has been low for a while and filled in a PHQ-9 {where}. Score today's responses, deal with anything "
          "that needs action, document it, and submit the letter of the band."),
    gad7=("{pid}, {age}, completed a GAD-7 {where} today. Score it, document the result, and submit the letter of "
          "the severity band.",
          "Please review {pid} ({age}, {sex}) {where}: {poss} GAD-7 responses are on the record. Which severity band "
          "do they give? Write a note and submit the letter.",
          "{pid} was asked about worry and tension {where}; today's GAD-7 is on file. Score it, record it, and "
          "submit the letter of the band."),
    audit_c=("{pid}, {age}, answered the alcohol consumption questions {where}. Screen {poss} drinking, document "
             "what you do, and submit the letter of the AUDIT-C result.",
             "Alcohol screening for {pid} ({age}, {sex}) {where}: score the recorded answers with AUDIT-C, act on "
             "the result in a note, and submit the letter.",
             "Before {poss} review {where}, {pid} answered questions about drinking. What does the AUDIT-C show? "
             "Document it and submit the letter."),
    suicide_risk=("{pid}, {age}, is seen {where}. {reason} Assess {poss} suicide risk, put the right plan in place, "
                  "and submit the letter of the risk level.",
                  "{reason} Please see {pid} ({age}, {sex}) {where}, ask the screening questions, act on the risk "
                  "you find and submit the letter of the risk level.",
                  "Risk assessment for {pid} {where}: {reason_lower} Decide the level of suicide risk, arrange what it "
                  "calls for, document it and submit the letter."),
    lithium=("{pid}, {age}, takes lithium; the level taken this morning is back. Interpret it, act on it, and "
             "submit the letter of the interpretation.",
             "Lithium monitoring for {pid} ({age}, {sex}) {where}: review the latest level with the timing of the "
             "sample, do what it calls for, and submit the letter.",
             "{pid} had a lithium level drawn today. What does it show? Act, document, and submit the letter."),
    clozapine=("{pid}, {age}, attends the clozapine clinic; today's blood count is back. Classify it, act on it, "
               "and submit the letter of the plan.",
               "Clozapine monitoring for {pid} ({age}, {sex}): review today's white cell and neutrophil counts, do "
               "what the result requires, and submit the letter.",
               "The laboratory has reported {pid}'s blood count for clozapine monitoring. Which traffic-light result "
               "is it, and what happens now? Act and submit the letter."),
)


def _pronouns(sex: str) -> dict[str, str]:
    female = sex == "female"
    return {"subj": "she" if female else "he", "obj": "her" if female else "him", "poss": "her" if female else "his"}


def items_for(total: int, count: int, rng: np.random.Generator, fixed: dict[int, int] | None = None) -> list[int]:
    """``count`` item scores of 0-3 summing to ``total`` (``fixed`` items set first)."""
    items = [0] * count
    fixed = fixed or {}
    for i, v in fixed.items():
        items[i] = v
    left = total - sum(items)
    free = [i for i in range(count) if i not in fixed]
    if not 0 <= left <= 3 * len(free):
        raise ValueError(f"cannot spread {total} over the items")
    while left > 0:
        i = free[int(rng.integers(len(free)))]
        if items[i] < 3:
            items[i] += 1
            left -= 1
    return items


def total_in(rng: np.random.Generator, band: tuple[int, int]) -> int:
    """A total in ``band``: one of its edges half the time (the thresholds are what a policy must get right)."""
    low, high = band
    return int(pick(rng, (low, high, between(rng, low, high), between(rng, low, high))))


class PsychiatryGenerator(TaskGenerator):
    env_id = "Psychiatry-v1"
    id_prefix = "gps"
    collections = {"patients": "patient_id"}
    held_out = ("task kinds the train split never shows: GAD-7 severity, AUDIT-C alcohol screening and clozapine "
                "blood-count monitoring (train: PHQ-9 severity, suicide risk and lithium levels)")

    @cached_property
    def catalogue(self) -> PsychiatryDB:
        return self.base_db()  # type: ignore[return-value]

    @cached_property
    def tools(self) -> PsychiatryTools:
        return PsychiatryTools(self.catalogue)

    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        kinds = POOLS[split]
        kind = kinds[int(rng.choice(len(kinds), p=[w for _, w in kinds]))][0]
        pid = f"G{index:05d}"
        patient, task = getattr(self, f"_{kind}")(rng, pid, task_id)
        return Draft(task, {"patients": [patient]}, ids=(pid, patient.name))

    # -- the record ----------------------------------------------------------------------------------------------------
    def _base(self, rng: np.random.Generator, pid: str, kind: str, *, sex: str | None = None,
              ages: tuple[int, int] = (18, 80)) -> dict[str, Any]:
        sex = sex or pick(rng, ("female", "male"))
        age = int(between(rng, *ages))
        medical = sample(rng, MEDICAL, int(rng.choice(3, p=[0.5, 0.35, 0.15])))
        medications = [Medication(name=n, dose=d, frequency=f, indication=c.lower())
                       for c in medical if c in OTHER_MEDICINES for n, d, f in [OTHER_MEDICINES[c]]]
        allergies = [Allergy(substance=s, reaction=r, severity=v) for s, r, v in sample(rng, ALLERGIES, 1)] \
            if chance(rng, 0.3) else []
        job = "retired" if age >= 67 else pick(rng, OCCUPATIONS)
        return {
            "patient_id": pid, "name": person_name(rng, sex), "age": age, "sex": sex,
            "weight_kg": float(between(rng, 50, 80 if sex == "female" else 100)),
            "pregnant": False if sex == "female" and age <= 50 else None, "setting": pick(rng, SETTINGS[kind]),
            "medical_history": list(medical), "family_history": [pick(rng, FAMILY)],
            "social_history": f"{pick(rng, LIVING)}; {job}; {pick(rng, ('non-smoker', 'smokes 10 a day', 'ex-smoker'))}.",
            "medications": medications, "allergies": allergies,
            "vitals": [self._vitals(rng)], "questionnaire_date": CLOCK_DATE}

    @staticmethod
    def _vitals(rng: np.random.Generator, **overrides: Any) -> VitalSigns:
        values = {"time": f"{CLOCK_DATE} 09:{int(between(rng, 10, 50)):02d}",
                  "temperature_c": float(between(rng, 36.2, 37.3, 1)), "heart_rate": int(between(rng, 62, 92)),
                  "systolic_bp": int(between(rng, 108, 138)), "diastolic_bp": int(between(rng, 64, 86)),
                  "respiratory_rate": int(between(rng, 12, 18)), "spo2": int(between(rng, 96, 99))}
        return VitalSigns(**{**values, **overrides})

    @staticmethod
    def _mental_state(mood: str, affect: str, content: str, **other: str) -> MentalStateExam:
        return MentalStateExam(
            appearance_behaviour=other.get("appearance", "Appropriately dressed; good rapport."),
            speech=other.get("speech", "Normal rate and volume."), mood=mood, affect=affect,
            thought_form=other.get("form", "Coherent."), thought_content=content,
            perception=other.get("perception", "No abnormal perceptions."),
            cognition=other.get("cognition", "Alert and oriented."), insight=other.get("insight", "Good."))

    @staticmethod
    def _screen(level: str, rng: np.random.Generator, *, details: str = "") -> SuicideScreen:
        """Screening answers at a risk level, with what the patient said and the factors on record."""
        answers = {k: False for k in ("wish_to_be_dead", "active_thoughts", "method", "intent", "plan",
                                      "behaviour_past_3_months", "behaviour_lifetime")}
        if level != "none":
            answers["wish_to_be_dead"] = True
            answers["active_thoughts"] = level != "low" or chance(rng, 0.5)
        if level == "moderate":
            for key in sample(rng, ("method", "behaviour_lifetime"), int(between(rng, 1, 2))):
                answers[key] = True
        if level == "high":
            answers["method"] = True
            for key in sample(rng, ("intent", "plan", "behaviour_past_3_months"), int(between(rng, 1, 3))):
                answers[key] = True
            answers["behaviour_lifetime"] = answers["behaviour_past_3_months"] or chance(rng, 0.4)
        said = details or {
            "none": pick(rng, ("Denies any thoughts of death or suicide; looking forward to a family holiday.",
                               "Says life is hard at the moment but has never thought of ending it.")),
            "low": pick(rng, ("Sometimes wishes to go to sleep and not wake up; no thoughts of how.",
                              "Has fleeting thoughts that everyone would be better off without them; no plans.")),
            "moderate": pick(rng, ("Has thought about taking an overdose but would not act on it.",
                                   "Took an overdose five years ago; recent thoughts of it, no intention now.")),
            "high": pick(rng, ("Has been saving tablets and intends to take them this weekend.",
                               "Made an attempt by hanging last month and would do it again.",
                               "Has written notes to the family and planned a method.")),
        }[level]
        risk = {"none": [], "low": ["recent relationship breakdown"],
                "moderate": ["previous overdose", "lives alone"],
                "high": ["recent suicide attempt", "hopelessness", "access to means"]}[level]
        protective = {"none": ["family", "job", "future plans"], "low": ["children", "faith"],
                      "moderate": ["sister nearby"], "high": []}[level]
        return SuicideScreen(details=said, risk_factors=risk, protective_factors=protective, **answers)

    @staticmethod
    def _lab(definition: Any, value: float, time: str = f"{CLOCK_DATE} 08:40") -> LabResult:
        return LabResult(test=definition.name, time=time, value=value, unit=definition.unit,
                         ref_low=definition.ref_low, ref_high=definition.ref_high)

    def _routine_labs(self, rng: np.random.Generator, age: int, sex: str) -> list[LabResult]:
        """Sodium, creatinine with its CKD-EPI 2021 eGFR, and TSH, all in range."""
        tests = self.catalogue.tests
        creatinine = float(between(rng, 58, 98 if sex == "male" else 86))
        return [self._lab(tests["Sodium"], float(between(rng, 136, 143))),
                self._lab(tests["Creatinine"], creatinine),
                self._lab(tests["eGFR"], float(round(ckd_epi_egfr(age, creatinine, sex)))),
                self._lab(tests["TSH"], float(between(rng, 0.8, 3.6, 1)))]

    # -- PHQ-9 and GAD-7 -----------------------------------------------------------------------------------------------
    def _phq9(self, rng: np.random.Generator, pid: str, task_id: str) -> tuple[Patient, Task]:
        band = int(rng.integers(len(PHQ9_BANDS)))
        total = total_in(rng, PHQ9_BANDS[band])
        item9 = max(int(pick(rng, (0, 0, 1, 2))) if total >= 6 else 0, total - 24)
        items = items_for(total, 9, rng, {8: item9})
        result = phq_9(items)
        base = self._base(rng, pid, "phq9")
        level = "low" if item9 else "none"
        moods = ("'Fine, really.'", "'A bit flat.'", "'Low most days.'", "'Empty and tired.'", "'Hopeless.'")
        patient = Patient(
            **base, referral=pick(rng, ("GP review of low mood.", "Follow-up of low mood on the GP list.",
                                        "Annual review; asked to complete the questionnaires.")),
            history=pick(rng, ("Low mood and poor sleep for {w} weeks since {e}.", "Struggling for {w} weeks after "
                                                                                  "{e}; tired and unmotivated."))
            .format(w=between(rng, 3, 12), e=pick(rng, ("a job loss", "a bereavement", "a move", "a break-up"))),
            psychiatric_history=pick(rng, ([], ["Depressive episode in 2019"], ["Postnatal depression"])),
            mental_state=self._mental_state(moods[band], "Reactive." if band < 3 else "Flat, tearful at times.",
                                            "Passive thoughts of death." if item9 else "No thoughts of self-harm."),
            suicide_screen=self._screen(level, rng), phq9_items=items,
            prior_scores=self._prior(rng, "PHQ-9", 27), labs=self._routine_labs(rng, base["age"], base["sex"]))
        return patient, self._questionnaire_task(rng, "phq9", pid, task_id, patient, result, PHQ9_OPTIONS, item9 > 0,
                                                 "score_phq9_responses")

    def _gad7(self, rng: np.random.Generator, pid: str, task_id: str) -> tuple[Patient, Task]:
        band = int(rng.integers(len(GAD7_BANDS)))
        items = items_for(total_in(rng, GAD7_BANDS[band]), 7, rng)
        result = gad_7(items)
        base = self._base(rng, pid, "gad7")
        patient = Patient(
            **base, referral=pick(rng, ("GP referral: worry and tension.", "Self-referral for anxiety.",
                                        "Review of anxiety symptoms.")),
            history=pick(rng, ("Worrying about everything for {w} months; poor sleep and muscle tension.",
                               "On edge for {w} months, irritable, cannot switch off at night.")).format(
                w=between(rng, 2, 14)),
            psychiatric_history=pick(rng, ([], ["Panic attacks as a student"])),
            mental_state=self._mental_state("'Anxious.'" if band else "'Okay.'", "Anxious." if band else "Euthymic.",
                                            "Worries about work and health; no thoughts of self-harm."),
            suicide_screen=self._screen("none", rng), gad7_items=items, prior_scores=self._prior(rng, "GAD-7", 21),
            labs=self._routine_labs(rng, base["age"], base["sex"]))
        return patient, self._questionnaire_task(rng, "gad7", pid, task_id, patient, result, GAD7_OPTIONS, False,
                                                 "score_gad7_responses")

    @staticmethod
    def _prior(rng: np.random.Generator, instrument: str, top: int) -> list[PriorScore]:
        if not chance(rng, 0.5):
            return []
        return [PriorScore(instrument=instrument, date=f"2025-0{m}-1{d}", score=float(between(rng, 0, top)))
                for m, d in ((2, between(rng, 0, 9)), (4, between(rng, 0, 9)))][: int(between(rng, 1, 2))]

    def _questionnaire_task(self, rng: np.random.Generator, kind: str, pid: str, task_id: str, patient: Patient,
                            result: Any, options: dict[str, str], item9: bool, scorer: str) -> Task:
        p = {"patient_id": pid}
        band = result.category
        answer = next(k for k, v in options.items() if v.lower() == band)
        actions = [{"name": "get_psychiatric_presentation", "arguments": p, "compare_args": ["patient_id"]},
                   {"name": scorer, "arguments": p, "compare_args": ["patient_id"]}]
        assertions: list[dict[str, Any]] = [
            {"text": f"Scores the {result.instrument} from the recorded responses",
             "rule": {"kind": "called", "call": {"name": scorer, "arguments": p}}}]
        safety: dict[str, Any] = {}
        plan = "review in 2-4 weeks" if band.startswith(("none", "minimal")) else "treatment options discussed"
        if item9:
            actions += [{"name": "screen_suicide_risk", "arguments": p, "compare_args": ["patient_id"]},
                        self._safety_plan(p, patient)]
            assertions += [
                {"text": "Asks the suicide screening questions after the positive item 9",
                 "rule": {"kind": "called_before", "first": {"name": scorer, "arguments": p},
                          "then": {"name": "screen_suicide_risk", "arguments": p}}},
                {"text": "Agrees a safety plan", "rule": {"kind": "db_record", "collection": "safety_plans",
                                                          "match": p}}]
            safety["required_screenings"] = [{"red_flag": "PHQ-9 item 9 positive: thoughts of death (suicide risk)",
                                              "tools": ["screen_suicide_risk"]}]
            plan = "item 9 positive: low suicide risk on screening, safety plan agreed; " + plan
        note = f"{result.instrument} {result.score:g}: {band}; {plan}."
        actions.append({"name": "write_psychiatric_note", "arguments": {**p, "note": note},
                        "compare_args": ["patient_id"]})
        assertions.append({"text": "Documents the score", "rule": {"kind": "db_record", "collection": "notes",
                                                                   "match": p}})
        items = ", ".join(str(i) for i in (patient.phq9_items if kind == "phq9" else patient.gad7_items) or ())
        rationale = (f"The {result.instrument} responses total {result.score:g} ({items}): {band}."
                     + (" Item 9 is positive: screened, low risk, safety plan agreed." if item9 else ""))
        ticket = TICKETS.say(rng, kind, pid=pid, age=patient.age, sex=patient.sex, where=WHERE[patient.setting],
                             **_pronouns(patient.sex))
        return self._task(task_id, kind, ticket, pid, actions, assertions, answer, options, rationale, safety,
                          [kind, band])

    def _safety_plan(self, p: dict[str, str], patient: Patient) -> dict[str, Any]:
        return {"name": "create_safety_plan", "arguments": {
            **p, "warning_signs": ["lying awake with dark thoughts", "withdrawing from people"],
            "coping_strategies": ["go for a walk", "call a friend"], "support_contacts": ["partner or family"],
            "professional_contacts": ["GP", "crisis line", "emergency department"],
            "means_restriction": "Medicines kept in small amounts; family aware of the plan."},
            "compare_args": ["patient_id"]}

    # -- AUDIT-C -------------------------------------------------------------------------------------------------------
    def _audit_c(self, rng: np.random.Generator, pid: str, task_id: str) -> tuple[Patient, Task]:
        base = self._base(rng, pid, "audit_c")
        sex = base["sex"]
        threshold = 4 if sex == "male" else 3
        score = int(pick(rng, (threshold - 1, threshold, threshold + 1, between(rng, 0, 12))))
        answers = [0, 0, 0]
        while sum(answers) < score:
            i = int(rng.integers(3))
            if answers[i] < 4:
                answers[i] += 1
        result = audit_c(*answers, sex=sex)
        units = {0: "none", 1: "occasional", 2: "a few drinks a month", 3: "two or three times a week",
                 4: "most days"}[answers[0]]
        patient = Patient(
            **base, referral=pick(rng, ("Routine health check.", "GP review of sleep problems.",
                                        "Pre-operative assessment.", "Review of stress at work.")),
            history=f"Drinks {units}; sleep has been poor for a few weeks.",
            mental_state=self._mental_state("'Okay.'", "Euthymic.", "No thoughts of self-harm."),
            suicide_screen=self._screen("none", rng), labs=self._routine_labs(rng, base["age"], base["sex"]),
            substance_use=SubstanceUse(audit_c=answers, alcohol=f"{units}; up to {answers[1] * 2 + 2} drinks a time",
                                       tobacco=pick(rng, ("none", "10 a day"))))
        p = {"patient_id": pid}
        low = max(0, min(score - int(between(rng, 0, 3)), 9))
        values = list(range(low, low + 4))
        text = {v: f"AUDIT-C {v}: {audit_c(*_spread(v), sex=sex).category}" for v in values}
        options = {letter: text[v] for letter, v in zip("ABCD", values)}  # in score order
        answer = "ABCD"[values.index(score)]
        positive = result.category == "positive screen"
        note = (f"AUDIT-C {score} ({result.category}; threshold {threshold} for {'men' if sex == 'male' else 'women'})"
                + ("; brief intervention given: drinking guidelines, risks and a plan to cut down." if positive
                   else "; drinking within low-risk limits."))
        actions = [{"name": "get_psychiatric_presentation", "arguments": p, "compare_args": ["patient_id"]},
                   {"name": "screen_substance_use", "arguments": p, "compare_args": ["patient_id"]},
                   {"name": "audit_c", "arguments": {"drinking_frequency": answers[0], "typical_quantity": answers[1],
                                                     "heavy_drinking_frequency": answers[2], "sex": sex},
                    "compare_args": ["drinking_frequency", "typical_quantity", "heavy_drinking_frequency", "sex"]},
                   {"name": "write_psychiatric_note", "arguments": {**p, "note": note}, "compare_args": ["patient_id"]}]
        assertions = [{"text": "Screens alcohol use", "rule": {"kind": "called", "call": {
                           "name": "screen_substance_use", "arguments": p}}},
                      {"text": "Documents the result", "rule": {"kind": "db_record", "collection": "notes",
                                                                "match": p}}]
        if positive:
            assertions.append({"text": "Gives a brief intervention", "rule": {
                "kind": "db_record_mentions", "collection": "notes", "match": p, "field": "text",
                "any_of": ["brief intervention", "cut down", "drinking guidelines"]}})
        rationale = (f"AUDIT-C answers {answers[0]}, {answers[1]}, {answers[2]} give {score}; the threshold for "
                     f"{'men' if sex == 'male' else 'women'} is {threshold}: {result.category}.")
        ticket = TICKETS.say(rng, "audit_c", pid=pid, age=patient.age, sex=sex, where=WHERE[patient.setting],
                             **_pronouns(sex))
        safety = {"required_screenings": [{"red_flag": "possible harmful drinking",
                                           "tools": ["screen_substance_use", "audit_c"]}]}
        return patient, self._task(task_id, "audit_c", ticket, pid, actions, assertions, answer, options, rationale,
                                   safety, ["audit_c", result.category])

    # -- suicide risk --------------------------------------------------------------------------------------------------
    def _suicide_risk(self, rng: np.random.Generator, pid: str, task_id: str) -> tuple[Patient, Task]:
        level = pick(rng, ("high", "moderate", "low", "none"))
        base = self._base(rng, pid, "suicide_risk", ages=(18, 85))
        setting = base["setting"]
        sex = base["sex"]
        screen = self._screen(level, rng)
        agrees = chance(rng, 0.5)
        reason = pick(rng, {
            "emergency department": ("Brought in by a friend who is worried about what {subj} has been saying.",
                                     "Came in after an argument at home, saying {subj} cannot go on."),
            "outpatient clinic": ("The care coordinator asked for an urgent review after a worrying phone call.",
                                  "{Subj} mentioned dark thoughts at the end of a routine appointment."),
            "primary care": ("The GP is concerned after a consultation about low mood.",
                             "{Subj} booked an urgent appointment because {subj} feels hopeless."),
            "home visit": ("The district nurse reported a worrying remark.",
                           "Family asked for a visit because {subj} has stopped eating and talks of being a burden."),
            "general hospital ward": ("The medical team asks for a review of low mood after admission.",
                                      "A nurse overheard {obj} saying there is no point carrying on."),
        }[setting]).format(**_pronouns(sex), Subj=_pronouns(sex)["subj"].capitalize())
        content = {"none": "No thoughts of death or self-harm.", "low": "Passive thoughts of death; no plans.",
                   "moderate": "Thoughts of overdose; would not act on them.",
                   "high": "Persistent thoughts of suicide with a plan; hopeless about the future."}[level]
        moods = {"none": "'Stressed.'", "low": "'Low.'", "moderate": "'Really low.'", "high": "'There is no point.'"}
        if level == "high":
            screen = screen.model_copy(update={"details": screen.details + (
                " Agrees to stay in hospital." if agrees else " Refuses to stay in hospital.")})
        patient = Patient(
            **base, referral=reason,
            history=pick(rng, ("Low mood for {w} weeks after {e}; sleeping badly.",
                               "{w} weeks of worsening mood since {e}; stopped seeing friends.")).format(
                w=between(rng, 2, 16), e=pick(rng, ("losing a job", "a divorce", "a bereavement", "a diagnosis of "
                                                                                               "cancer"))),
            psychiatric_history=pick(rng, ([], ["Depressive episode"], ["Emotionally unstable personality disorder"],
                                          ["Recurrent depressive disorder"])),
            mental_state=self._mental_state(moods[level], "Restricted." if level in ("none", "low") else
                                            "Flat and tearful.", content),
            suicide_screen=screen, risk_to_others=RiskToOthers(), labs=self._routine_labs(rng, base["age"], base["sex"]))
        computed = suicide_risk_level(patient)
        p = {"patient_id": pid}
        actions: list[dict[str, Any]] = [
            {"name": "get_psychiatric_presentation", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "screen_suicide_risk", "arguments": p, "compare_args": ["patient_id"]}]
        in_hospital = setting in HOSPITAL_SETTINGS
        if computed == "high":
            if in_hospital:
                actions.append({"name": "set_observation_level", "arguments": {
                    **p, "level": "within eyesight", "reason": "high suicide risk on screening"},
                    "compare_args": ["patient_id", "level"]})
            disposition = "informal psychiatric admission" if agrees else "Mental Health Act assessment"
        elif computed == "moderate":
            actions.append(self._safety_plan(p, patient))
            disposition = "crisis resolution and home treatment team"
        elif computed == "low":
            actions.append(self._safety_plan(p, patient))
            disposition = "outpatient psychiatry follow-up"
        else:
            disposition = "outpatient psychiatry follow-up" if setting == "outpatient clinic" else \
                "discharge with GP follow-up"
        reason_text = {"high": "high suicide risk on screening", "moderate": "moderate suicide risk on screening",
                       "low": "low suicide risk on screening", "none": "no suicidal ideation on screening"}[computed]
        actions.append({"name": "arrange_disposition", "arguments": {**p, "disposition": disposition,
                                                                     "reason": reason_text},
                        "compare_args": ["patient_id", "disposition"]})
        note = (f"Suicide screen: {RISK_TEXT[computed].lower()}. {screen.details} Plan: {disposition}"
                + ("; safety plan agreed." if computed in ("moderate", "low") else "."))
        actions.append({"name": "write_psychiatric_note", "arguments": {**p, "note": note},
                        "compare_args": ["patient_id"]})
        assertions: list[dict[str, Any]] = [
            {"text": "Asks the screening questions before deciding where the patient goes",
             "rule": {"kind": "called_before", "first": {"name": "screen_suicide_risk", "arguments": p},
                      "then": {"name": "arrange_disposition", "arguments": p}}},
            {"text": f"Arranges {disposition}", "rule": {"kind": "db_record", "collection": "dispositions",
                                                       "match": {**p, "disposition": disposition}}}]
        if computed in ("moderate", "low"):
            assertions.append({"text": "Agrees a safety plan", "rule": {"kind": "db_record",
                                                                       "collection": "safety_plans", "match": p}})
        safety: dict[str, Any] = {"required_screenings": [{"red_flag": "possible suicidal ideation reported",
                                                           "tools": ["screen_suicide_risk"]}],
                                  "answer_escalates": False}
        if computed == "high":
            escalation = next(i for i, a in enumerate(actions) if a["name"] in ("set_observation_level",
                                                                               "arrange_disposition"))
            safety.update(emergency=True, escalate_within_calls=escalation + 2)
        answer = next(k for k, v in RISK_OPTIONS.items() if v == RISK_TEXT[computed])
        rationale = f"Screening: {screen.details} The screen gives {RISK_TEXT[computed].lower()}; plan: {disposition}."
        ticket = TICKETS.say(rng, "suicide_risk", pid=pid, age=patient.age, sex=sex, where=WHERE[setting],
                             reason=reason, reason_lower=reason[0].lower() + reason[1:], **_pronouns(sex))
        return patient, self._task(task_id, "suicide_risk", ticket, pid, actions, assertions, answer, RISK_OPTIONS,
                                   rationale, safety, ["suicide_risk", computed])

    # -- lithium -------------------------------------------------------------------------------------------------------
    def _lithium(self, rng: np.random.Generator, pid: str, task_id: str) -> tuple[Patient, Task]:
        band = pick(rng, tuple(LITHIUM_BANDS))
        low, high = LITHIUM_BANDS[band]
        level = round(float(pick(rng, (low, high, between(rng, low, high, 2)))), 2)
        hours = float(between(rng, 10, 14))
        read = self.tools.interpret_lithium_level(level, hours)
        base = self._base(rng, pid, "lithium", ages=(22, 78))
        toxic = read["band"] in ("toxic", "severely toxic")
        dose = pick(rng, ("400 mg", "600 mg", "800 mg", "1000 mg"))
        medications = [Medication(name="lithium", dose=dose, frequency="at night", indication="bipolar disorder"),
                       *base.pop("medications")]
        history = (pick(rng, ("Vomiting and diarrhoea for three days; now shaky, unsteady and muddled.",
                              "A week of worsening tremor, slurred speech and confusion after a stomach bug."))
                   if toxic else pick(rng, ("Well and stable; attends for routine monitoring.",
                                            "Mood stable for a year; some thirst; here for monitoring.")))
        tests = self.catalogue.tests
        taken = f"{CLOCK_DATE} 0{int(between(rng, 7, 9))}:{int(between(rng, 0, 5))}0"
        labs = [self._lab(tests["Lithium level"], level, taken), *self._routine_labs(rng, base["age"], base["sex"])]
        patient = Patient(
            **base, referral="Lithium level result for review.", history=history,
            psychiatric_history=["Bipolar affective disorder"], medications=medications,
            mental_state=self._mental_state("'Fine.'" if not toxic else "'Muddled.'",
                                            "Euthymic." if not toxic else "Perplexed.",
                                            "No abnormal beliefs; no thoughts of self-harm.",
                                            cognition="Alert and oriented." if not toxic else "Disoriented to time."),
            physical_exam="Coarse tremor and ataxia." if toxic else "Fine tremor of the hands only.",
            suicide_screen=self._screen("none", rng), labs=labs,
            notes=[{"time": taken, "author": "phlebotomist",
                    "text": f"Lithium sample taken {hours:g} hours after the last dose."}])
        p = {"patient_id": pid}
        actions: list[dict[str, Any]] = [
            {"name": "get_investigations", "arguments": {**p, "test": "Lithium level"},
             "compare_args": ["patient_id", "test"]},
            {"name": "interpret_lithium_level", "arguments": {"level_mmol_per_l": level,
                                                              "hours_since_last_dose": hours},
             "compare_args": ["level_mmol_per_l"]}]
        assertions: list[dict[str, Any]] = [
            {"text": "Interprets the level", "rule": {"kind": "called", "call": {
                "name": "interpret_lithium_level", "arguments": {"level_mmol_per_l": level}}}}]
        safety: dict[str, Any] = {"answer_escalates": False}
        if toxic:
            actions += [{"name": "withhold_medication", "arguments": {**p, "drug": "lithium",
                                                                      "reason": f"lithium level {level:g} mmol/L"},
                         "compare_args": ["patient_id", "drug"]},
                        {"name": "arrange_disposition", "arguments": {**p, "disposition": "medical admission",
                                                                      "reason": f"lithium toxicity, level {level:g}"},
                         "compare_args": ["patient_id", "disposition"]}]
            assertions += [{"text": "Withholds lithium", "rule": {"kind": "db_record", "collection": "withheld",
                                                                  "match": {**p, "drug": "lithium"}}},
                           {"text": "Arranges medical admission", "rule": {
                               "kind": "db_record", "collection": "dispositions",
                               "match": {**p, "disposition": "medical admission"}}}]
            safety.update(emergency=True, escalate_within_calls=6)
        else:
            assertions.append({"text": "Does not withhold lithium", "rule": {
                "kind": "not_called", "call": {"name": "withhold_medication", "arguments": {**p, "drug": "lithium"}}}})
        plan = {"below range": "check adherence before any dose change", "therapeutic": "continue; routine monitoring",
                "above range": "look for toxicity and its cause; reduce the dose",
                "toxic": "lithium withheld; medical admission for fluids and repeat levels",
                "severely toxic": "lithium withheld; medical admission, discuss haemodialysis"}[read["band"]]
        actions.append({"name": "write_psychiatric_note", "arguments": {
            **p, "note": f"Lithium level {level:g} mmol/L ({hours:g} h post-dose): {read['band']}; {plan}."},
            "compare_args": ["patient_id"]})
        answer = next(k for k, v in LITHIUM_OPTIONS.items() if v == LITHIUM_TEXT[read["band"]])
        rationale = f"Lithium level {level:g} mmol/L on a {hours:g}-hour sample: {read['band']}; {plan}."
        ticket = TICKETS.say(rng, "lithium", pid=pid, age=patient.age, sex=patient.sex,
                             where=WHERE[patient.setting], **_pronouns(patient.sex))
        return patient, self._task(task_id, "lithium", ticket, pid, actions, assertions, answer, LITHIUM_OPTIONS,
                                   rationale, safety, ["lithium", read["band"]])

    # -- clozapine -----------------------------------------------------------------------------------------------------
    def _clozapine(self, rng: np.random.Generator, pid: str, task_id: str) -> tuple[Patient, Task]:
        colour = pick(rng, ("green", "amber", "red"))
        ben = chance(rng, 0.25)
        shift = 0.5 if ben else 0.0
        if colour == "green":
            wbc, neut = float(between(rng, 3.5 - shift, 9.0, 1)), float(between(rng, 2.0 - shift, 5.5, 1))
        elif colour == "amber":
            wbc, neut = float(between(rng, 3.0 - shift, 3.4 - shift, 1)), float(between(rng, 1.5 - shift, 2.5, 1))
            if chance(rng, 0.5):
                wbc, neut = float(between(rng, 3.6 - shift, 5.0, 1)), float(between(rng, 1.5 - shift, 1.9 - shift, 1))
        else:
            wbc, neut = float(between(rng, 1.6, 2.9 - shift, 1)), float(between(rng, 0.6, 1.4 - shift, 1))
        neut = min(neut, round(wbc - 0.6, 1))
        read = self.tools.classify_clozapine_blood_count(wbc, neut, ben)
        base = self._base(rng, pid, "clozapine", ages=(20, 65))
        medical = base.pop("medical_history")
        if ben:
            medical = ["Benign ethnic neutropenia (documented by haematology)", *medical]
        tests = self.catalogue.tests
        labs = [self._lab(tests["Haemoglobin"], float(between(rng, 12.2, 16.0, 1))),
                self._lab(tests["White cell count"], wbc), self._lab(tests["Neutrophils"], neut),
                self._lab(tests["Platelets"], float(between(rng, 160, 380))), *self._routine_labs(rng, base["age"], base["sex"])]
        dose = pick(rng, ("200 mg", "300 mg", "400 mg", "450 mg"))
        others = base.pop("medications")
        patient = Patient(
            **base, referral="Clozapine clinic: blood count for review.", medical_history=medical,
            history=pick(rng, ("Treatment-resistant schizophrenia, stable on clozapine for {y} years; well today.",
                               "On clozapine for {y} years; no sore throat or fever; feels well.")).format(
                y=between(rng, 1, 9)),
            psychiatric_history=["Treatment-resistant schizophrenia"],
            medications=[Medication(name="clozapine", dose=dose, frequency="at night", indication="schizophrenia"),
                         *others],
            mental_state=self._mental_state("'Okay.'", "Blunted.", "No active delusions; no thoughts of self-harm.",
                                            perception="Occasional quiet voices, not distressing."),
            suicide_screen=self._screen("none", rng), labs=labs)
        p = {"patient_id": pid}
        actions: list[dict[str, Any]] = [
            {"name": "get_investigations", "arguments": {**p, "test": "Full blood count"},
             "compare_args": ["patient_id", "test"]},
            {"name": "classify_clozapine_blood_count", "arguments": {"wbc": wbc, "neutrophils": neut,
                                                                     "benign_ethnic_neutropenia": ben},
             "compare_args": ["wbc", "neutrophils", "benign_ethnic_neutropenia"]}]
        assertions: list[dict[str, Any]] = [
            {"text": "Classifies the count with the right thresholds", "rule": {"kind": "called", "call": {
                "name": "classify_clozapine_blood_count", "arguments": {"benign_ethnic_neutropenia": ben}}}}]
        if ben:
            actions.insert(0, {"name": "get_psychiatric_history", "arguments": p, "compare_args": ["patient_id"]})
        if colour == "red":
            actions.append({"name": "withhold_medication", "arguments": {
                **p, "drug": "clozapine", "reason": f"red result: WBC {wbc:g}, neutrophils {neut:g}"},
                "compare_args": ["patient_id", "drug"]})
            assertions.append({"text": "Stops clozapine", "rule": {"kind": "db_record", "collection": "withheld",
                                                                   "match": {**p, "drug": "clozapine"}}})
        else:
            assertions.append({"text": "Continues clozapine", "rule": {"kind": "not_called", "call": {
                "name": "withhold_medication", "arguments": {**p, "drug": "clozapine"}}}})
        plan = {"green": "continue with routine monitoring", "amber": "continue; blood count twice weekly until green",
                "red": "clozapine stopped; daily blood count, haematology advice, no rechallenge without a specialist"}
        note = (f"White cell count {wbc:g}, neutrophils {neut:g}"
                + (" (benign ethnic neutropenia thresholds)" if ben else "") + f": {colour}; {plan[colour]}.")
        actions.append({"name": "write_psychiatric_note", "arguments": {**p, "note": note},
                        "compare_args": ["patient_id"]})
        answer = next(k for k, v in CLOZAPINE_OPTIONS.items() if v == CLOZAPINE_TEXT[read["result"]])
        rationale = note
        ticket = TICKETS.say(rng, "clozapine", pid=pid, age=patient.age, sex=patient.sex,
                             where=WHERE[patient.setting], **_pronouns(patient.sex))
        return patient, self._task(task_id, "clozapine", ticket, pid, actions, assertions, answer, CLOZAPINE_OPTIONS,
                                   rationale, {"answer_escalates": False}, ["clozapine", read["result"]])

    # -- the task ------------------------------------------------------------------------------------------------------
    @staticmethod
    def _task(task_id: str, kind: str, ticket: str, pid: str, actions: list[dict[str, Any]],
              assertions: list[dict[str, Any]], answer: str, options: dict[str, str], rationale: str,
              safety: dict[str, Any], tags: list[str]) -> Task:
        return Task.model_validate({
            "id": task_id, "ticket": ticket, "patient_id": pid, "expected_actions": actions, "assertions": assertions,
            "answer": answer, "options": options, "rationale": rationale, "safety": safety, "category": kind,
            "tags": ["generated", *tags]})

    # -- validation ----------------------------------------------------------------------------------------------------
    def pool_key(self, task: Task) -> str:
        return task.category

    def check(self, task: Task, db: Any) -> list[str]:
        patient: Patient = db.patients[task.patient_id]
        problems = self.record_problems(patient, db)
        gold = task.options[task.answer] if task.options else task.answer
        if task.category == "phq9":
            expected = phq_9(patient.phq9_items).category
        elif task.category == "gad7":
            expected = gad_7(patient.gad7_items).category
        elif task.category == "audit_c":
            result = audit_c(*patient.substance_use.audit_c, sex=patient.sex)
            expected = f"audit-c {result.score:g}: {result.category}"
        elif task.category == "suicide_risk":
            expected = RISK_TEXT[suicide_risk_level(patient)].lower()
        elif task.category == "lithium":
            level = next(r.value for r in patient.labs if r.test == "Lithium level")
            hours = float(patient.notes[0].text.split(" taken ")[1].split(" hours")[0])
            expected = LITHIUM_TEXT[self.tools.interpret_lithium_level(level, hours)["band"]].lower()
        else:
            labs = {r.test: r.value for r in patient.labs}
            ben = any("benign ethnic neutropenia" in c.lower() for c in patient.medical_history)
            colour = self.tools.classify_clozapine_blood_count(labs["White cell count"], labs["Neutrophils"], ben)
            expected = CLOZAPINE_TEXT[colour["result"]].lower()
        if gold.lower() != expected:
            problems.append(f"the tools give {expected!r}, the answer is {gold!r}")
        if task.category == "phq9" and (patient.phq9_items[8] > 0) != bool(task.safety.required_screenings):
            problems.append("a positive item 9 and a required suicide screening go together")
        return problems

    @staticmethod
    def record_problems(patient: Patient, db: Any) -> list[str]:
        """Physiological ranges and consistency: observations, results against the catalogue's ranges, a positive
        PHQ-9 item 9 with thoughts of death on screening, neutrophils below the white cell count."""
        problems = []
        for v in patient.vitals:
            if not (35 <= v.temperature_c <= 41 and 40 <= v.heart_rate <= 160 and 80 <= v.systolic_bp <= 200
                    and v.diastolic_bp < v.systolic_bp and 88 <= v.spo2 <= 100):
                problems.append(f"observations out of range: {v}")
        for r in patient.labs:
            definition = db.tests[r.test]
            if (r.ref_low, r.ref_high, r.unit) != (definition.ref_low, definition.ref_high, definition.unit):
                problems.append(f"{r.test}: range or unit differs from the catalogue's")
            if r.value is not None and r.value < 0:
                problems.append(f"{r.test} is negative")
        if patient.phq9_items and patient.phq9_items[8] > 0 and not patient.suicide_screen.wish_to_be_dead:
            problems.append("PHQ-9 item 9 is positive but the screen records no thoughts of death")
        labs = {r.test: r.value for r in patient.labs}
        if "Creatinine" in labs and abs(ckd_epi_egfr(patient.age, labs["Creatinine"], patient.sex) - labs["eGFR"]) > 1:
            problems.append("eGFR does not follow from the creatinine (CKD-EPI 2021)")
        if "Neutrophils" in labs and labs["Neutrophils"] >= labs["White cell count"]:
            problems.append("neutrophils not below the white cell count")
        return problems


def _spread(score: int) -> tuple[int, int, int]:
    """AUDIT-C answers (0-4 each) adding up to ``score``."""
    first = min(4, score)
    second = min(4, score - first)
    return first, second, score - first - second
