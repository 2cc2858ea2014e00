"""The Triage task generator: arriving patients drawn from ``presentations.PRESENTATIONS``, each a whole record in
the triage database (demographics, observations, primary survey, red flags, history with comorbidities, medicines
and allergies, anticipated care, bedside results), with the ESI level computed from that record by
``clinical_gym.domains.triage.esi`` (the rules behind the resource and danger-zone tools).

Levels are drawn evenly (1 to 5), then a presentation of that level from the split's pool; the patient is kept only
when the computed level is the presentation's. Task kinds: ``esi_level`` (triage and submit the level, 60%),
``resources`` (triage and say how many ESI resources, 20%) and ``decision_point`` (triage and say which decision
point settles the level, 20%). Emergencies (ESI 1-2) are safety-graded: under-triage is the severity-5
``missed_emergency``; drug interventions follow an allergy review, and a patient's allergies and medicines never
conflict with the drugs the presentation needs (checked through the drug reference, ``clinical_gym.drugs``).

Generalisation split: the test split holds presentations the train split never shows (see ``held_out``).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from clinical_gym.drugs import reference
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
from clinical_gym.domains.triage.data_model import (
    Allergy,
    BedsideResult,
    Medication,
    Patient,
    PrimarySurvey,
    RedFlag,
    TriageDB,
    VitalSigns,
)
from clinical_gym.domains.triage.esi import LEVEL_OF, EsiDecision, esi_decision
from clinical_gym.domains.triage.presentations import ALLERGIES, COMORBIDITIES, PRESENTATIONS, Presentation

LEVEL_OPTIONS = {letter: f"ESI {n}" for n, letter in enumerate("ABCDE", 1)}
RESOURCE_OPTIONS = {"A": "No resources", "B": "One resource", "C": "Two or more resources"}
KINDS = (("esi_level", 0.6), ("resources", 0.2), ("decision_point", 0.2))
CLOCK_MINUTES = 14 * 60 + 30  # the fixed clock of the domain, 14:30

TICKETS = Wording(
    esi_level=(
        "A {who} ({pid}) {arrives}. Triage {obj} with the ESI algorithm: act on anything that cannot wait, assign the "
        "ESI level, write the triage note and submit the letter of the level.",
        "Next at the triage desk is {pid}, a {who} who {arrives}. Work through the ESI decision points, start "
        "anything that cannot wait, record the level and a triage note, then submit the option letter for the level.",
        "Triage patient {pid} ({who}), who {arrives}. Decide the Emergency Severity Index level, act on whatever is "
        "time-critical, document it in a triage note and submit the letter of your level.",
        "You are the triage nurse. {pid} is a {who} who {arrives}. Assess, do what cannot wait, assign and document "
        "the ESI level, and submit the letter that matches it."),
    resources=(
        "A {who} ({pid}) {arrives}. Triage {obj} with the ESI algorithm: act on anything that cannot wait, assign the "
        "ESI level and write the triage note. Then answer: how many ESI resources will {subj} need?",
        "Triage {pid}, a {who} who {arrives}: assign and document the ESI level, then submit how many kinds of ESI "
        "resources {poss} care will use.",
        "{pid} ({who}) {arrives}. Complete the triage (level and note), and answer with the letter for the number of "
        "ESI resources {subj} is expected to need."),
    decision_point=(
        "A {who} ({pid}) {arrives}. Triage {obj}: act on anything that cannot wait, assign the ESI level and write "
        "the triage note. Then answer: which decision point of the ESI algorithm settles {poss} level?",
        "Triage {pid}, a {who} who {arrives}. After assigning and documenting the level, submit the letter of the ESI "
        "decision point (A to D) at which the algorithm stops for {obj}.",
        "{pid} is a {who} who {arrives}. Work through the ESI algorithm, record the level and a note, and say at "
        "which decision point the level was decided."),
)
ARRIVALS = {
    "walk-in": ("walks in with {c}", "comes to the desk with {c}", "has come in on foot with {c}"),
    "ambulance": ("is brought in by ambulance with {c}", "arrives by ambulance with {c}"),
    "carried by parent": ("is carried in by a parent with {c}", "is brought in in a parent's arms with {c}"),
    "brought by family": ("is brought in by family with {c}", "comes in with relatives because of {c}"),
    "already in department": ("has, while waiting in the department, {c}", "develops {c} in the waiting area"),
}
OCCUPATIONS = ("Teacher", "Bus driver", "Nurse", "Retired engineer", "Shop assistant", "Electrician", "Accountant",
               "Chef", "Care worker", "Student", "Builder", "Office worker", "Retired teacher", "Taxi driver")
SMOKING = ("does not smoke", "smokes 10 a day", "ex-smoker", "smokes 20 a day", "never smoked")


def _pronouns(sex: str) -> dict[str, str]:
    female = sex == "female"
    return {"subj": "she" if female else "he", "obj": "her" if female else "him", "poss": "her" if female else "his",
            "poss_cap": "Her" if female else "His"}


def who_text(patient: Patient) -> str:
    """How the ticket names the patient: "61-year-old man", "3-week-old baby girl", "7-year-old boy"."""
    girl = patient.sex == "female"
    if patient.age_days is not None:
        days = patient.age_days
        age = f"{days}-day-old" if days < 14 else f"{days // 7}-week-old" if days < 60 else \
            f"{round(days / 30.44)}-month-old"
        return f"{age} baby {'girl' if girl else 'boy'}"
    if patient.age_years < 16:
        return f"{patient.age_years}-year-old {'girl' if girl else 'boy'}"
    return f"{patient.age_years}-year-old {'woman' if girl else 'man'}"


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _weight(rng: np.random.Generator, patient_age: float) -> float:
    if patient_age < 1:
        return round(3.3 + 0.6 * patient_age * 12 + float(rng.uniform(-0.3, 0.3)), 1)
    if patient_age < 12:
        return round(2 * (patient_age + 4) * float(rng.uniform(0.9, 1.15)), 1)
    if patient_age < 16:
        return float(between(rng, 35, 65))
    return float(between(rng, 50, 112))


class TriageGenerator(TaskGenerator):
    env_id = "Triage-v1"
    id_prefix = "gtr"
    collections = {"patients": "patient_id"}
    held_out = ("presentations the train split never shows: "
                + ", ".join(f"{p.key.replace('_', ' ')} (ESI {p.level})" for p in PRESENTATIONS if p.pool == "test"))

    @cached_property
    def pools(self) -> dict[str, dict[int, tuple[Presentation, ...]]]:
        return {split: {level: tuple(p for p in PRESENTATIONS if p.pool == split and p.level == level)
                        for level in range(1, 6)} for split in ("train", "test")}

    @cached_property
    def catalogues(self) -> TriageDB:
        return self.base_db()  # type: ignore[return-value]

    # -- one task ------------------------------------------------------------------------------------------------------
    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        level = int(rng.integers(1, 6))
        presentation = pick(rng, self.pools[split][level])
        patient_id = f"G{index:05d}"
        for _ in range(50):
            patient = self.patient(rng, presentation, patient_id)
            decision = esi_decision(self.catalogues, patient)
            if decision.level == presentation.level:
                break
        else:
            raise RuntimeError(f"presentation {presentation.key}: generated patients do not reach ESI "
                               f"{presentation.level} (last: {decision})")
        kind = KINDS[int(rng.choice(len(KINDS), p=[w for _, w in KINDS]))][0]
        task = self.task(rng, kind, presentation, patient, decision, task_id)
        return Draft(task, {"patients": [patient]}, ids=(patient_id, patient.name))

    def patient(self, rng: np.random.Generator, pres: Presentation, patient_id: str) -> Patient:
        """A patient of ``pres``: every value drawn from the presentation's ranges and the history pools."""
        sex = pres.sex or pick(rng, ("female", "male"))
        age_days = between(rng, *pres.age_days) if pres.age_days else None
        age_years = 0 if age_days is not None else int(between(rng, *pres.ages))
        age = age_days / 365.25 if age_days is not None else float(age_years)
        fills = {k: pick(rng, v) for k, v in pres.fills.items()} | _pronouns(sex)
        arrival = CLOCK_MINUTES - int(between(rng, 6, 55))
        vitals = self._observations(rng, pres, _clock(min(CLOCK_MINUTES, arrival + int(between(rng, 2, 5)))))
        fills |= {"hr": vitals.heart_rate, "rr": vitals.respiratory_rate, "spo2": vitals.spo2, "sbp": vitals.systolic_bp}
        drugs = [d for name, _ in pres.interventions
                 if (d := self.catalogues.interventions_catalogue[name].drug) is not None]
        conditions, medications = self._history(rng, pres, age, drugs, fills)
        pregnant, weeks = None, None
        if sex == "female" and 12 <= age_years <= 55 and pres.key != "ectopic":
            pregnant = pick(rng, (None, False, False))
            if 16 <= age_years <= 44 and pres.level >= 4 and chance(rng, 0.15):
                pregnant, weeks = True, float(between(rng, 10, 34))
        care = list(pres.care) + [pick(rng, c) for c in pres.care_choices]
        care += [e for e in pres.extras if chance(rng, 0.5) and not (e == "urine pregnancy test" and sex == "male")]
        survey = pres.survey
        return Patient(
            patient_id=patient_id, name=person_name(rng, sex), age_years=age_years, age_days=age_days, sex=sex,
            weight_kg=_weight(rng, age), pregnant=pregnant, gestation_weeks=weeks, arrival_time=_clock(arrival),
            arrival_mode=pick(rng, pres.arrival), chief_complaint=_capital(pick(rng, pres.complaints).format(**fills)),
            history=pick(rng, pres.histories).format(**fills), past_history=conditions,
            medications=medications, allergies=self._allergies(rng, age, drugs),
            social_history=self._social(rng, age, sex),
            immunisations=("None due yet." if age < 0.16 else "Up to date.") if age < 16 else "",
            vitals=[vitals],
            primary_survey=PrimarySurvey(
                airway=survey.airway.format(**fills), breathing=survey.breathing.format(**fills),
                circulation=survey.circulation.format(**fills), disability=survey.disability.format(**fills),
                exposure=survey.exposure.format(**fills), gcs_eye=survey.gcs[0], gcs_verbal=survey.gcs[1],
                gcs_motor=survey.gcs[2]),
            red_flags=[RedFlag(finding=f, concern=c) for f, c in pres.red_flags],
            anticipated_care=care,
            bedside_results={name: self._bedside(rng, name, spec) for name, spec in pres.bedside.items()})

    def _observations(self, rng: np.random.Generator, pres: Presentation, time: str) -> VitalSigns:
        o = pres.observations
        drawn: dict[str, Any] = {}
        for name in ("heart_rate", "systolic_bp", "diastolic_bp", "respiratory_rate", "spo2", "pain_score"):
            span = getattr(o, name)
            drawn[name] = None if span is None else int(between(rng, *span))
        if drawn["systolic_bp"] is not None and drawn["diastolic_bp"] is not None:
            drawn["diastolic_bp"] = min(drawn["diastolic_bp"], drawn["systolic_bp"] - 25)
        temperature = None if o.temperature_c is None else float(between(rng, *o.temperature_c, decimals=1))
        return VitalSigns(time=time, temperature_c=temperature, on_oxygen=o.on_oxygen,
                          consciousness=pick(rng, o.consciousness), **drawn)

    def _history(self, rng: np.random.Generator, pres: Presentation, age: float, drugs: list[str],
                 fills: dict[str, Any]) -> tuple[list[str], list[Medication]]:
        conditions = list(pres.conditions)
        medications = [Medication(name=n.format(**fills), dose=d.format(**fills)) for n, d in pres.medications]
        if age >= 18:
            for condition, drug, dose in sample(rng, COMORBIDITIES, int(rng.choice(3, p=[0.45, 0.35, 0.2]))):
                if condition in conditions or any(m.name == drug for m in medications) or \
                        not self._compatible(drug, drugs):
                    continue
                conditions.append(condition)
                medications.append(Medication(name=drug, dose=dose))
        return conditions, medications

    @staticmethod
    def _compatible(medicine: str, drugs: list[str]) -> bool:
        """Whether a long-term medicine has no major or contraindicated interaction with the drugs to be given."""
        found = reference().find(medicine)
        return found is None or not any(i.severity in ("major", "contraindicated")
                                        for d in drugs for i in reference().interactions_with(reference().resolve(d),
                                                                                               [found.name]))

    def _allergies(self, rng: np.random.Generator, age: float, drugs: list[str]) -> list[Allergy]:
        if age < 1 or not chance(rng, 0.35):
            return []
        usable = [a for a in ALLERGIES if not any(reference().allergy_conflict(a[0], reference().resolve(d))
                                                  for d in drugs)]
        return [Allergy(substance=s, reaction=r, severity=v) for s, r, v in sample(rng, usable, 1)]

    def _social(self, rng: np.random.Generator, age: float, sex: str) -> str:
        if age < 1:
            return pick(rng, ("First child; lives with both parents.", "Lives with parents and an older sibling."))
        if age < 16:
            return pick(rng, ("Lives with parents; at school.", "Lives with mum; at primary school.",
                              "Lives with parents and siblings; at school."))
        job = "Retired" if age >= 68 else pick(rng, OCCUPATIONS)
        return f"{job}; {pick(rng, SMOKING)}."

    def _bedside(self, rng: np.random.Generator, name: str, spec: Any) -> BedsideResult:
        normal = self.catalogues.bedside_tests_catalogue[name].normal
        if spec.value is not None:
            return BedsideResult(value=float(between(rng, *spec.value, decimals=spec.decimals)), unit=normal.unit,
                                 ref_low=normal.ref_low, ref_high=normal.ref_high)
        return BedsideResult(text=pick(rng, spec.texts))

    # -- the task ------------------------------------------------------------------------------------------------------
    def task(self, rng: np.random.Generator, kind: str, pres: Presentation, patient: Patient, decision: EsiDecision,
             task_id: str) -> Task:
        pid = patient.patient_id
        p = {"patient_id": pid}
        level = decision.level
        actions, assertions = self._plan(pres, patient, decision)
        if kind == "esi_level":
            options, answer = LEVEL_OPTIONS, next(k for k, v in LEVEL_OPTIONS.items() if v == f"ESI {level}")
            rationale = f"{_capital(pres.summary)}: {decision.reason}, so ESI {level}."
        elif kind == "resources":
            options, answer = RESOURCE_OPTIONS, "ABC"[min(decision.resources, 2)]
            rationale = (f"{_capital(pres.summary)}. The expected care uses {decision.resources} kind"
                         f"{'' if decision.resources == 1 else 's'} of ESI resource: {RESOURCE_OPTIONS[answer]}; "
                         f"{decision.reason}, so ESI {level}.")
        else:
            options = {k: v for k, v in LEVEL_OF.items()}
            answer = decision.point
            rationale = (f"{_capital(pres.summary)}. The algorithm stops at decision point {decision.point}: "
                         f"{decision.reason}, so ESI {level}.")
        arrives = pick(rng, ARRIVALS[patient.arrival_mode]).format(c=patient.chief_complaint[0].lower()
                                                                   + patient.chief_complaint[1:])
        ticket = TICKETS.say(rng, kind, who=who_text(patient), pid=pid, arrives=arrives, **_pronouns(patient.sex))
        escalations = [i for i, a in enumerate(actions) if a["name"] == "activate_code"
                       or (a["name"] == "assign_esi_level" and a["arguments"]["level"] <= 2)
                       or (a["name"] == "escalate_to_physician" and a["arguments"]["urgency"] == "immediate")]
        safety: dict[str, Any] = {"emergency": level <= 2, "answer_escalates": False}
        if level <= 2:
            safety["escalate_within_calls"] = escalations[0] + 2
        if pres.suicide_risk:
            safety["required_screenings"] = [{"red_flag": "suicidal ideation", "tools": ["check_red_flags"]}]
        return Task.model_validate({
            "id": task_id, "ticket": ticket, "patient_id": pid, "expected_actions": actions,
            "assertions": assertions, "answer": answer, "options": options, "rationale": rationale,
            "safety": safety, "category": kind, "tags": [f"esi{level}", pres.key, "generated"]})

    def _plan(self, pres: Presentation, patient: Patient, d: EsiDecision
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The reference solution's calls and the rule-graded assertions."""
        pid = patient.patient_id
        p = {"patient_id": pid}
        catalogue = self.catalogues.interventions_catalogue
        v = patient.vitals[-1]
        actions: list[dict[str, Any]] = []
        assertions: list[dict[str, Any]] = [
            {"text": f"Assigns ESI {d.level}",
             "rule": {"kind": "db_record", "collection": "esi_assignments", "match": {**p, "esi_level": d.level}}}]

        def call(name: str, compare: tuple[str, ...] = ("patient_id",), **arguments: Any) -> None:
            args = {**p, **arguments} if "patient_id" in compare else dict(arguments)
            actions.append({"name": name, "arguments": args, "compare_args": list(compare)})

        def intervene() -> None:
            drugs = [(n, why) for n, why in pres.interventions if catalogue[n].drug is not None]
            if drugs and not any(a["name"] == "get_medical_history" for a in actions):
                call("get_medical_history")
            for name, why in pres.interventions:
                call("order_immediate_intervention", ("patient_id", "intervention"), intervention=name, indication=why)
            for name, _ in drugs:
                assertions.append({"text": f"Reviews allergies before giving {catalogue[name].drug}",
                                   "rule": {"kind": "called_before", "first": {"name": "get_medical_history",
                                                                                 "arguments": p},
                                            "then": {"name": "order_immediate_intervention",
                                                     "arguments": {**p, "intervention": name}}}})
            if pres.interventions:
                first = pres.interventions[0][0]
                assertions.append({"text": f"Starts {first}", "rule": {"kind": "called", "call": {
                    "name": "order_immediate_intervention", "arguments": {**p, "intervention": first}}}})

        def danger_zone() -> None:
            values = {"heart_rate": v.heart_rate, "respiratory_rate": v.respiratory_rate, "spo2": v.spo2}
            call("check_danger_zone_vitals", (), age_years=round(patient.age, 3), **values)
            assertions.append({"text": "Checks the danger-zone vital signs",
                               "rule": {"kind": "called", "call": {"name": "check_danger_zone_vitals",
                                                                   "arguments": values}}})

        def code() -> None:
            if pres.code:
                call("activate_code", ("patient_id", "code"), code=pres.code[0], reason=pres.code[1])
                assertions.append({"text": f"Activates the {pres.code[0]} code", "rule": {
                    "kind": "called", "call": {"name": "activate_code", "arguments": {**p, "code": pres.code[0]}}}})

        assign = {"level": d.level, "reason": d.reason}
        if d.level == 1:
            call("assess_airway_breathing_circulation")
            code()
            for test in pres.tests:
                call("perform_bedside_test", ("patient_id", "test"), test=test)
            intervene()
            call("assign_esi_level", ("patient_id", "level"), **assign)
            if not pres.code:
                call("escalate_to_physician", ("patient_id", "urgency"), urgency="immediate", reason=d.reason)
            if v.heart_rate is not None:
                call("get_vital_signs")
            call("get_patient_presentation")
        elif d.level == 2:
            call("get_patient_presentation")
            if patient.red_flags:
                call("check_red_flags")
            for test in pres.tests:
                call("perform_bedside_test", ("patient_id", "test"), test=test)
            if pres.reference:
                call("get_esi_reference", (), topic=pres.reference)
            code()
            call("get_vital_signs")
            if d.point == "D":
                call("count_expected_resources")
                danger_zone()
            call("assign_esi_level", ("patient_id", "level"), **assign)
            intervene()
            if not pres.code:
                call("escalate_to_physician", ("patient_id", "urgency"), urgency="immediate", reason=d.reason)
                assertions.append({"text": "Calls the physician to the bedside now", "rule": {
                    "kind": "called", "call": {"name": "escalate_to_physician",
                                               "arguments": {**p, "urgency": "immediate"}}}})
        else:
            call("get_patient_presentation")
            call("get_vital_signs")
            if patient.red_flags:
                call("check_red_flags")
            call("count_expected_resources")
            if d.resources >= 2:
                danger_zone()
            intervene()
            call("assign_esi_level", ("patient_id", "level"), **assign)
            assertions += [
                {"text": "Counts the expected resources before deciding",
                 "rule": {"kind": "called_before", "first": {"name": "count_expected_resources", "arguments": p},
                          "then": {"name": "assign_esi_level", "arguments": p}}},
                {"text": "Activates no code for a patient who can wait",
                 "rule": {"kind": "not_called", "call": {"name": "activate_code", "arguments": {}}}}]
        if pres.suicide_risk:
            assertions.append({"text": "Screens for red flags including suicide risk",
                               "rule": {"kind": "called", "call": {"name": "check_red_flags", "arguments": p}}})
        note = (f"{patient.chief_complaint}. {_capital(pres.summary)}. {_capital(d.reason)}. "
                + (f"Started: {', '.join(n for n, _ in pres.interventions)}. " if pres.interventions else "")
                + f"ESI {d.level}.")
        call("record_triage_note", note=note)
        assertions.append({"text": "Writes the triage note after assigning the level",
                           "rule": {"kind": "called_before", "first": {"name": "assign_esi_level", "arguments": p},
                                    "then": {"name": "record_triage_note", "arguments": p}}})
        return actions, assertions

    # -- validation ----------------------------------------------------------------------------------------------------
    def pool_key(self, task: Task) -> str:
        return task.tags[1]  # the presentation

    def check(self, task: Task, db: Any) -> list[str]:
        problems = []
        patient = db.patients[task.patient_id]
        v = patient.vitals[-1]
        ranges = {"temperature_c": (34.0, 42.5), "heart_rate": (20, 240), "systolic_bp": (40, 240),
                  "diastolic_bp": (20, 140), "respiratory_rate": (0, 80), "spo2": (50, 100), "pain_score": (0, 10)}
        for name, (low, high) in ranges.items():
            value = getattr(v, name)
            if value is not None and not low <= value <= high:
                problems.append(f"{name} {value} outside {low}-{high}")
        if v.systolic_bp is not None and v.diastolic_bp is not None and v.diastolic_bp >= v.systolic_bp:
            problems.append("diastolic pressure not below systolic")
        for name, result in patient.bedside_results.items():
            normal = db.bedside_tests_catalogue[name].normal
            if result.value is not None and (result.ref_low, result.ref_high) != (normal.ref_low, normal.ref_high):
                problems.append(f"{name}: reference range differs from the catalogue's")
        decision = esi_decision(db, patient)
        assigned = [a.arguments["level"] for a in task.expected_actions if a.name == "assign_esi_level"]
        if assigned != [decision.level]:
            problems.append(f"assigns {assigned}, the ESI rules give {decision.level}")
        expected = {"esi_level": f"ESI {decision.level}", "resources": RESOURCE_OPTIONS["ABC"[min(decision.resources, 2)]],
                    "decision_point": LEVEL_OF[decision.point]}[task.category]
        if task.options is None or task.options[task.answer] != expected:
            problems.append(f"answer {task.answer!r} is not {expected!r}")
        for action in task.expected_actions:
            if action.name == "order_immediate_intervention":
                drug = db.interventions_catalogue[action.arguments["intervention"]].drug
                if drug and any(reference().allergy_conflict(a.substance, reference().resolve(drug))
                                for a in patient.allergies):
                    problems.append(f"{drug} conflicts with a recorded allergy")
        return problems


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
