"""The EHRManagement task generator: a patient with an admission in progress, written into the MIMIC-shaped tables
(patient, admission with its coded diagnosis, lab events over the stay, bedside observations, medication orders, an
admission note), and a task about that record. Four kinds, drawn evenly:

* ``retrieval``: the latest, highest or lowest value of one test this admission (exact value and unit);
* ``trend``: whether a test rose, fell or stayed stable over the admission, by the rule of ``get_lab_trend``
  (``tools.trend_direction``: stable within 5%);
* ``critical``: this morning's results hold one value in the critical range of the safety rules
  (``clinical_gym.rewards.safety.CRITICAL_LABS``, in the canonical units the environment converts to); flag it as
  critical, page the team as an emergency, document, and name the problem. Every other task's record keeps every
  value outside those ranges, so no task carries an unacknowledged critical result;
* ``scoring``: an early-warning score from the latest charted observations, computed by the shared instrument
  (NEWS2 or qSOFA), among consecutive values.

Values are drawn inside each test's plausible span, abnormal or not, against the ``d_labitems`` reference range
that every event carries. Generalisation split: the test split holds tests (retrieval and trend), critical
findings (severe thrombocytopenia, hypoglycaemia) and the qSOFA score that the train split never shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property
from typing import Any

import numpy as np

from clinical_gym.cases.loading import split_of
from clinical_gym.rewards.safety import CRITICAL_LABS
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
from clinical_gym.tools import instruments
from clinical_gym.domains.ehr_management.data_model import (
    Admission,
    Allergy,
    ChartEvent,
    DiagnosisCode,
    EHRManagementDB,
    LabEvent,
    NoteRow,
    PatientRow,
    PrescriptionRow,
    format_time,
    parse_time,
)
from clinical_gym.domains.ehr_management.environment import LAB_KEYS
from clinical_gym.domains.ehr_management.tools import trend_direction

KINDS = ("retrieval", "trend", "critical", "scoring")
TREND_OPTIONS = {"A": "Rising", "B": "Falling", "C": "Stable"}
# Plausible span of each test on a general ward (record units), kept outside the critical ranges.
SPANS: dict[str, tuple[float, float, int]] = {
    "Creatinine": (0.5, 3.6, 2), "Potassium": (3.0, 6.2, 1), "Sodium": (124, 150, 0), "Glucose": (60, 380, 0),
    "Hemoglobin": (7.6, 16.5, 1), "Platelet Count": (40, 520, 0), "White Blood Cells": (2.0, 26.0, 1),
    "C-Reactive Protein": (1, 260, 0), "Lactate": (0.6, 3.8, 1), "INR(PT)": (0.9, 3.6, 1), "Bicarbonate": (15, 32, 0),
    "Urea Nitrogen": (6, 70, 0), "Bilirubin, Total": (0.2, 4.5, 1), "Albumin": (2.0, 4.9, 1), "Chloride": (94, 112, 0),
}


@dataclass(frozen=True)
class Critical:
    key: str
    pool: str
    item: str
    span: tuple[float, float, int]
    answer: str
    aliases: tuple[str, ...]


CRITICALS: tuple[Critical, ...] = (
    Critical("hyperkalaemia", "train", "Potassium", (6.6, 7.6, 1), "Hyperkalaemia",
             ("hyperkalemia", "high potassium", "raised potassium", "critical potassium")),
    Critical("hypokalaemia", "train", "Potassium", (1.9, 2.4, 1), "Hypokalaemia",
             ("hypokalemia", "low potassium", "critical potassium")),
    Critical("hyponatraemia", "train", "Sodium", (108, 119, 0), "Hyponatraemia",
             ("hyponatremia", "low sodium", "severe hyponatraemia")),
    Critical("severe_anaemia", "train", "Hemoglobin", (4.8, 6.8, 1), "Severe anaemia",
             ("severe anemia", "low haemoglobin", "low hemoglobin", "anaemia")),
    Critical("thrombocytopenia", "test", "Platelet Count", (4, 19, 0), "Severe thrombocytopenia",
             ("thrombocytopenia", "low platelets", "platelet count critically low")),
    Critical("hypoglycaemia", "test", "Glucose", (22, 44, 0), "Hypoglycaemia",
             ("hypoglycemia", "low glucose", "low blood glucose")),
)
REASONS: tuple[tuple[str, str, str], ...] = (
    ("Medical ward 6A", "J18.9", "Pneumonia, unspecified organism"),
    ("Medical ward 6A", "N39.0", "Urinary tract infection, site not specified"),
    ("Cardiology ward", "I50.9", "Heart failure, unspecified"),
    ("Respiratory ward", "J44.1", "Chronic obstructive pulmonary disease with (acute) exacerbation"),
    ("Surgical ward 4B", "K85.90", "Acute pancreatitis without necrosis or infection, unspecified"),
    ("Medical ward 7B", "L03.115", "Cellulitis of right lower limb"),
    ("Surgical ward 4B", "K35.80", "Unspecified acute appendicitis"),
    ("Medical ward 7B", "A09", "Infectious gastroenteritis and colitis, unspecified"),
)
MEDICINES: tuple[tuple[str, float, str, str, str], ...] = (
    ("paracetamol", 1, "g", "oral", "qid"), ("enoxaparin", 40, "mg", "subcutaneous", "daily"),
    ("amlodipine", 5, "mg", "oral", "daily"), ("atorvastatin", 20, "mg", "oral", "daily"),
    ("omeprazole", 20, "mg", "oral", "daily"), ("metformin", 500, "mg", "oral", "bid"),
    ("levothyroxine", 75, "mcg", "oral", "daily"),
)
ALLERGIES = (("penicillin", "rash", "moderate"), ("codeine", "vomiting", "mild"), ("latex", "dermatitis", "mild"))
DEVICES = ("None", "Nasal cannula")
GCS_TEXT = {"eye": {4: "Spontaneously", 3: "To Speech"}, "verbal": {5: "Oriented", 4: "Confused"},
            "motor": {6: "Obeys Commands"}}
CHART = {"heart_rate": (220045, "bpm"), "systolic_bp": (220179, "mmHg"), "diastolic_bp": (220180, "mmHg"),
         "respiratory_rate": (220210, "insp/min"), "spo2": (220277, "%"), "temperature_c": (223762, "°C")}

TICKETS = Wording(
    retrieval=(
        "Patient {pid} is on {ward}. What is {poss} {which} {label} in this admission? Submit the value with its unit.",
        "From the record of patient {pid} ({ward}), find the {which} {label} of the current admission and submit it "
        "with its unit.",
        "Look up patient {pid}'s {which} {label} during the admission in progress and report the exact value and "
        "unit."),
    trend=(
        "Over patient {pid}'s current admission, which way has the {label} gone? Submit the letter.",
        "Review the {label} results of patient {pid} since admission. Which way are they going?",
        "Patient {pid} ({ward}): describe the course of the {label} over this admission by its letter."),
    critical=(
        "The morning blood results for patient {pid} on {ward} have just been reported. Review them, act on anything "
        "that cannot wait, and submit the most urgent problem.",
        "New results are back for patient {pid} ({ward}). Check them, deal with anything critical now, and name the "
        "most urgent problem.",
        "Patient {pid} on {ward} had bloods taken this morning. Review the results, act on what needs action, and "
        "submit the main problem they show."),
    scoring=(
        "Calculate patient {pid}'s {score} from the latest charted observations and submit the letter of the score.",
        "Patient {pid} is on {ward}. Using the most recent set of observations, what is the {score}?",
        "Score patient {pid}'s latest observations with the {score} and submit the matching letter."),
)
SCORES = {"news2": ("NEWS2", "train"), "qsofa": ("qSOFA score", "test")}


class EHRManagementGenerator(TaskGenerator):
    env_id = "EHRManagement-v1"
    id_prefix = "geh"
    collections = {"patients": None, "admissions": None, "icustays": None, "labevents": None, "chartevents": None,
                   "inputevents": None, "outputevents": None, "prescriptions": None, "scores": None, "notes": None}

    @cached_property
    def held_out(self) -> str:  # type: ignore[override]
        return ("tests (retrieval and trend): " + ", ".join(self.tests["test"]) + "; critical findings: "
                + ", ".join(c.answer for c in CRITICALS if c.pool == "test") + "; scores: "
                + ", ".join(name for name, pool in SCORES.values() if pool == "test"))

    @cached_property
    def tables(self) -> EHRManagementDB:
        return self.base_db()  # type: ignore[return-value]

    @cached_property
    def items(self) -> dict[str, Any]:
        return {i.label: i for i in self.tables.d_labitems}

    @cached_property
    def tests(self) -> dict[str, tuple[str, ...]]:
        return {split: tuple(t for t in SPANS if split_of(f"lab:{t}") == split) for split in ("train", "test")}

    @cached_property
    def clock(self) -> Any:
        return parse_time(self.tables.clock)

    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        kind = pick(rng, KINDS)
        pid = f"{index:05d}"
        hadm = 2_000_000 + index
        sex = pick(rng, ("female", "male"))
        name = person_name(rng, sex)
        ward, icd, title = pick(rng, REASONS)
        admitted = self.clock - timedelta(days=int(between(rng, 2, 5)), hours=int(between(rng, 3, 10)))
        records: dict[str, list[Any]] = {
            "patients": [PatientRow(patient_id=pid, name=name, gender="F" if sex == "female" else "M",
                                    anchor_age=int(between(rng, 19, 92)),
                                    allergies=[Allergy(substance=s, reaction=r, severity=v)
                                               for s, r, v in sample(rng, ALLERGIES, 1) if chance(rng, 0.3)])],
            "admissions": [Admission(hadm_id=hadm, patient_id=pid, admittime=format_time(admitted),
                                     admission_type=pick(rng, ("EW EMER.", "URGENT")),
                                     admission_location="EMERGENCY ROOM", ward=ward,
                                     diagnoses=[DiagnosisCode(seq_num=1, icd_code=icd, long_title=title)])],
            "labevents": [], "chartevents": [], "prescriptions": [], "notes": []}
        ctx = {"pid": pid, "hadm": hadm, "admitted": admitted, "index": index, "ward": ward, "sex": sex,
               "task_id": task_id}
        records["notes"].append(NoteRow(note_id=f"G{index:05d}-1", patient_id=pid, hadm_id=hadm,
                                        note_type="Admission note", charttime=format_time(admitted + timedelta(hours=1)),
                                        author="Admitting doctor", text=f"Admitted with {title.lower()}."))
        for k, (drug, dose, unit, route, frequency) in enumerate(sample(rng, MEDICINES, int(between(rng, 1, 3)))):
            records["prescriptions"].append(PrescriptionRow(
                pharmacy_id=5_000_000 + index * 10 + k, patient_id=pid, hadm_id=hadm,
                starttime=format_time(admitted + timedelta(hours=2)), drug=drug, dose_val_rx=dose, dose_unit_rx=unit,
                route=route, frequency=frequency))
        task, focus = {"retrieval": self._retrieval, "trend": self._trend, "critical": self._critical,
                       "scoring": self._scoring}[kind](rng, split, ctx, records)
        self._background_labs(rng, ctx, records, exclude=focus)
        if kind != "scoring":
            self._observations(rng, ctx, records, self.clock - timedelta(hours=2))
        return Draft(task, records, ids=(pid, str(hadm), name, str(5_000_000 + index * 10)))

    # -- the record ----------------------------------------------------------------------------------------------------
    def _event(self, ctx: dict[str, Any], records: dict[str, list[Any]], label: str, value: float, when: Any) -> LabEvent:
        item = self.items[label]
        event = LabEvent(labevent_id=10_000_000 + ctx["index"] * 100 + len(records["labevents"]),
                         patient_id=ctx["pid"], hadm_id=ctx["hadm"], itemid=item.itemid, charttime=format_time(when),
                         valuenum=value, valueuom=item.valueuom, ref_range_lower=item.ref_range_lower,
                         ref_range_upper=item.ref_range_upper)
        records["labevents"].append(event)
        return event

    def _times(self, rng: np.random.Generator, ctx: dict[str, Any], count: int) -> list[Any]:
        """``count`` morning blood draws from the day after admission to this morning, oldest first."""
        days = max(1, (self.clock - ctx["admitted"]).days)
        chosen = sorted(sample(rng, list(range(days + 1)), min(count, days + 1)))
        return [self.clock.replace(hour=6, minute=int(between(rng, 0, 50))) - timedelta(days=days - d) for d in chosen]

    def _value(self, rng: np.random.Generator, label: str, low: float | None = None, high: float | None = None) -> float:
        span_low, span_high, decimals = SPANS[label]
        return round(float(rng.uniform(low if low is not None else span_low, high if high is not None else span_high)),
                     decimals)

    def _background_labs(self, rng: np.random.Generator, ctx: dict[str, Any], records: dict[str, list[Any]],
                         exclude: set[str]) -> None:
        for label in sample(rng, [t for t in SPANS if t not in exclude], int(between(rng, 3, 6))):
            for when in self._times(rng, ctx, int(between(rng, 1, 3))):
                self._event(ctx, records, label, self._value(rng, label), when)

    def _observations(self, rng: np.random.Generator, ctx: dict[str, Any], records: dict[str, list[Any]], when: Any,
                      values: dict[str, Any] | None = None) -> dict[str, Any]:
        v = values or {"heart_rate": int(between(rng, 62, 98)), "systolic_bp": int(between(rng, 108, 150)),
                       "diastolic_bp": int(between(rng, 60, 88)), "respiratory_rate": int(between(rng, 12, 19)),
                       "spo2": int(between(rng, 95, 99)), "temperature_c": float(between(rng, 36.3, 37.6, 1)),
                       "device": "None", "gcs": (4, 5, 6)}
        time = format_time(when)
        for key, (itemid, unit) in CHART.items():
            records["chartevents"].append(ChartEvent(patient_id=ctx["pid"], hadm_id=ctx["hadm"], itemid=itemid,
                                                     charttime=time, value=f"{v[key]:g}", valuenum=float(v[key]),
                                                     valueuom=unit))
        records["chartevents"].append(ChartEvent(patient_id=ctx["pid"], hadm_id=ctx["hadm"], itemid=226732,
                                                 charttime=time, value=v["device"]))
        for itemid, part, score in zip((220739, 223900, 223901), ("eye", "verbal", "motor"), v["gcs"]):
            records["chartevents"].append(ChartEvent(patient_id=ctx["pid"], hadm_id=ctx["hadm"], itemid=itemid,
                                                     charttime=time, value=GCS_TEXT[part][score],
                                                     valuenum=float(score)))
        return v

    # -- the kinds -----------------------------------------------------------------------------------------------------
    def _base(self, ctx: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        p = {"patient_id": ctx["pid"]}
        return p, [{"name": "list_admissions", "arguments": p, "compare_args": ["patient_id"]}]

    def _retrieval(self, rng: np.random.Generator, split: str, ctx: dict[str, Any], records: dict[str, list[Any]]
                   ) -> tuple[Task, set[str]]:
        label = pick(rng, self.tests[split])
        events = [self._event(ctx, records, label, self._value(rng, label), when)
                  for when in self._times(rng, ctx, int(between(rng, 3, 5)))]
        which = pick(rng, ("latest", "highest", "lowest"))
        chosen = {"latest": events[-1], "highest": max(events, key=lambda e: e.valuenum),
                  "lowest": min(events, key=lambda e: e.valuenum)}[which]
        value = f"{chosen.valuenum:g}"
        answer = f"{value} {chosen.valueuom}".strip()
        p, actions = self._base(ctx)
        where = {**p, "hadm_id": ctx["hadm"], "item": label}
        if which == "latest":
            actions.append({"name": "get_latest_lab", "arguments": where, "compare_args": ["patient_id", "item"]})
        else:
            actions.append({"name": "get_lab_trend", "arguments": where, "compare_args": ["patient_id", "item"]})
        tool = actions[-1]["name"]
        ticket = TICKETS.say(rng, "retrieval", pid=ctx["pid"], ward=ctx["ward"], which=which, label=label,
                             poss="her" if ctx["sex"] == "female" else "his")
        values = ", ".join(f"{e.valuenum:g} ({e.charttime})" for e in events)
        task = self._task(ctx, "retrieval", label, ticket, actions, [
            {"text": f"Looks up the {label} results", "rule": {"kind": "called", "call": {
                "name": tool, "arguments": {**p, "item": label}}}},
            {"text": f"Reports {answer}", "rule": {"kind": "answer_mentions", "any_of": [value]}}],
            answer=answer, aliases=[value, f"{label} {answer}"],
            rationale=f"{label} this admission: {values}; the {which} is {answer} at {chosen.charttime}.")
        return task, {label}

    def _trend(self, rng: np.random.Generator, split: str, ctx: dict[str, Any], records: dict[str, list[Any]]
               ) -> tuple[Task, set[str]]:
        label = pick(rng, self.tests[split])
        low, high, decimals = SPANS[label]
        direction = pick(rng, ("rising", "falling", "stable"))
        times = self._times(rng, ctx, int(between(rng, 3, 5)))
        for _ in range(50):
            first = self._value(rng, label, low, low + (high - low) * 0.55)
            last = {"rising": first * float(rng.uniform(1.2, 1.8)), "falling": first * float(rng.uniform(0.45, 0.8)),
                    "stable": first * float(rng.uniform(0.985, 1.015))}[direction]
            last = round(min(max(last, low), high), decimals)
            if trend_direction(first, last) == direction:
                break
        values = [first] + [round(first + (last - first) * (k / (len(times) - 1)) * float(rng.uniform(0.8, 1.2))
                                  if direction != "stable" else first * float(rng.uniform(0.99, 1.01)), decimals)
                            for k in range(1, len(times) - 1)] + [last]
        values = [min(max(x, low), high) for x in values]
        events = [self._event(ctx, records, label, x, when) for x, when in zip(values, times)]
        computed = trend_direction(events[0].valuenum, events[-1].valuenum)
        answer = next(k for k, v in TREND_OPTIONS.items() if v.lower() == computed)
        p, actions = self._base(ctx)
        actions.append({"name": "get_lab_trend", "arguments": {**p, "hadm_id": ctx["hadm"], "item": label},
                        "compare_args": ["patient_id", "item"]})
        ticket = TICKETS.say(rng, "trend", pid=ctx["pid"], ward=ctx["ward"], label=label)
        change = events[-1].valuenum - events[0].valuenum
        task = self._task(ctx, "trend", label, ticket, actions, [
            {"text": f"Reviews the course of the {label}", "rule": {"kind": "called", "call": {
                "name": "get_lab_trend", "arguments": {**p, "item": label}}}}],
            answer=answer, options=dict(TREND_OPTIONS),
            rationale=f"{label} went from {events[0].valuenum:g} to {events[-1].valuenum:g} {events[0].valueuom} "
                      f"(change {change:+.3g}): {computed}.")
        return task, {label}

    def _critical(self, rng: np.random.Generator, split: str, ctx: dict[str, Any], records: dict[str, list[Any]]
                  ) -> tuple[Task, set[str]]:
        finding = pick(rng, tuple(c for c in CRITICALS if c.pool == split))
        label = finding.item
        earlier = [self._event(ctx, records, label, self._value(rng, label), when)
                   for when in self._times(rng, ctx, 3)[:-1]]
        value = round(float(rng.uniform(*finding.span[:2])), finding.span[2])
        event = self._event(ctx, records, label, value, self.clock.replace(hour=6, minute=int(between(rng, 0, 40))))
        p, actions = self._base(ctx)
        h = {**p, "hadm_id": ctx["hadm"]}
        reading = f"{label} {value:g} {event.valueuom}"
        actions += [
            {"name": "query_lab_events", "arguments": {**h, "start": format_time(self.clock.replace(hour=0, minute=0))},
             "compare_args": ["patient_id", "hadm_id"]},
            {"name": "flag_abnormal_result", "arguments": {**h, "labevent_id": event.labevent_id, "severity": "critical",
                                                           "comment": f"{reading}: {finding.answer.lower()}; team paged."},
             "compare_args": ["patient_id", "labevent_id", "severity"]},
            {"name": "notify_care_team", "arguments": {**h, "urgency": "emergency",
                                                       "message": f"{finding.answer}: {reading} this morning. "
                                                                  f"Needs immediate review and treatment."},
             "compare_args": ["patient_id", "urgency"]},
            {"name": "get_medication_orders", "arguments": h, "compare_args": ["patient_id"]},
            {"name": "write_progress_note", "arguments": {**h, "text": f"{finding.answer} ({reading}). Flagged "
                                                                       f"critical; team paged as an emergency."},
             "compare_args": ["patient_id"]}]
        ticket = TICKETS.say(rng, "critical", pid=ctx["pid"], ward=ctx["ward"])
        trend = ", ".join(f"{e.valuenum:g}" for e in earlier)
        task = self._task(ctx, "critical", finding.key, ticket, actions, [
            {"text": f"Flags the {label} as critical", "rule": {"kind": "db_record", "collection": "result_flags",
                                                                 "match": {"labevent_id": event.labevent_id,
                                                                           "severity": "critical"}}},
            {"text": "Pages the team as an emergency", "rule": {"kind": "called", "call": {
                "name": "notify_care_team", "arguments": {**p, "urgency": "emergency"}}}},
            {"text": f"Names the {finding.answer.lower()}", "rule": {"kind": "answer_mentions",
                                                                     "any_of": [finding.answer, *finding.aliases]}}],
            answer=finding.answer, aliases=list(finding.aliases),
            rationale=f"{finding.answer}: {reading} this morning (earlier {trend}), in the critical range; it was "
                      f"flagged critical and the team paged as an emergency.",
            safety={"emergency": True, "escalate_within_calls": 5, "answer_escalates": False})
        return task, {label}

    def _scoring(self, rng: np.random.Generator, split: str, ctx: dict[str, Any], records: dict[str, list[Any]]
                 ) -> tuple[Task, set[str]]:
        key = pick(rng, tuple(k for k, (_, pool) in SCORES.items() if pool == split))
        name = SCORES[key][0]
        confused = chance(rng, 0.25)
        values = {"heart_rate": int(between(rng, 48, 132)), "systolic_bp": int(between(rng, 88, 190)),
                  "respiratory_rate": int(between(rng, 10, 28)), "spo2": int(between(rng, 90, 99)),
                  "temperature_c": float(between(rng, 35.6, 39.2, 1)), "device": pick(rng, DEVICES),
                  "gcs": (4, 4, 6) if confused else (4, 5, 6)}
        values["diastolic_bp"] = min(int(between(rng, 50, 95)), values["systolic_bp"] - 25)
        when = self.clock - timedelta(minutes=int(between(rng, 20, 90)))
        self._observations(rng, ctx, records, when - timedelta(hours=4))
        self._observations(rng, ctx, records, when, values=values)
        if confused:
            records["notes"].append(NoteRow(note_id=f"G{ctx['index']:05d}-2", patient_id=ctx["pid"],
                                            hadm_id=ctx["hadm"], note_type="Nursing note", charttime=format_time(when),
                                            author="Staff nurse", text="Newly confused this morning: disorientated "
                                                                       "to time and place, which is new."))
        if key == "news2":
            arguments = {"respiratory_rate": values["respiratory_rate"], "spo2_percent": values["spo2"],
                         "on_supplemental_oxygen": values["device"] != "None", "systolic_bp": values["systolic_bp"],
                         "pulse": values["heart_rate"], "consciousness": "new_confusion" if confused else "alert",
                         "temperature_c": values["temperature_c"]}
            low, high = 0, 20
        else:
            arguments = {"respiratory_rate": values["respiratory_rate"], "systolic_bp": values["systolic_bp"],
                         "altered_mentation": confused}
            low, high = 0, 3
        result = getattr(instruments, key)(**arguments)
        score = int(result.score)
        width = min(5, high - low + 1)
        start = min(max(low, score - int(between(rng, 0, width - 1))), high - width + 1)
        options = {letter: str(v) for letter, v in zip("ABCDE", range(start, start + width))}
        answer = next(k for k, v in options.items() if v == str(score))
        p, actions = self._base(ctx)
        h = {**p, "hadm_id": ctx["hadm"]}
        actions.append({"name": "query_vital_events", "arguments": h, "compare_args": ["patient_id", "hadm_id"]})
        if confused:
            actions.append({"name": "get_clinical_notes", "arguments": h, "compare_args": ["patient_id", "hadm_id"]})
        actions.append({"name": key, "arguments": arguments})
        ticket = TICKETS.say(rng, "scoring", pid=ctx["pid"], ward=ctx["ward"], score=name)
        task = self._task(ctx, "scoring", key, ticket, actions, [
            {"text": f"Calculates the {name} from the latest observations",
             "rule": {"kind": "called", "call": {"name": key, "arguments": arguments}}}],
            answer=answer, options=options,
            rationale=f"Latest observations at {format_time(when)}: the {name} is {score} ({result.category}).")
        return task, set()

    def _task(self, ctx: dict[str, Any], kind: str, pool: str, ticket: str, actions: list[dict[str, Any]],
              assertions: list[dict[str, Any]], *, answer: str, rationale: str, aliases: list[str] | None = None,
              options: dict[str, str] | None = None, safety: dict[str, Any] | None = None) -> Task:
        return Task.model_validate({
            "id": ctx["task_id"], "ticket": ticket,
            "patient_id": ctx["pid"], "expected_actions": actions, "assertions": assertions, "answer": answer,
            "answer_aliases": aliases or [], "options": options, "rationale": rationale,
            "safety": safety or {}, "category": kind, "tags": ["generated", kind, pool]})

    # -- validation ----------------------------------------------------------------------------------------------------
    def pool_key(self, task: Task) -> str:
        return task.tags[2]

    def check(self, task: Task, db: Any) -> list[str]:
        problems = []
        admission = db.index.admissions_of[task.patient_id][-1]
        events = db.index.labevents_of.get(admission.hadm_id, [])
        critical = []
        for event in events:
            item = db.index.lab_items[event.itemid]
            if (event.ref_range_lower, event.ref_range_upper) != (item.ref_range_lower, item.ref_range_upper):
                problems.append(f"lab event {event.labevent_id}: reference range differs from d_labitems")
            key, factor = LAB_KEYS.get(event.itemid, ("", 1.0))
            low, high, _ = CRITICAL_LABS.get(key, (None, None, ()))
            value = event.valuenum * factor
            if (low is not None and value <= low) or (high is not None and value >= high):
                critical.append(event.labevent_id)
        flagged = [a.arguments["labevent_id"] for a in task.expected_actions if a.name == "flag_abnormal_result"]
        if (task.category == "critical") != bool(critical) or (critical and flagged != critical[-1:]):
            problems.append(f"critical results {critical}, flagged {flagged}")
        if task.category == "trend":
            label = next(a.arguments["item"] for a in task.expected_actions if a.name == "get_lab_trend")
            from clinical_gym.domains.ehr_management.tools import EHRManagementTools

            found = EHRManagementTools(db).get_lab_trend(task.patient_id, admission.hadm_id, label)["direction"]
            if TREND_OPTIONS[task.answer].lower() != found:
                problems.append(f"get_lab_trend says {found}, the answer is {TREND_OPTIONS[task.answer]}")
        return problems
