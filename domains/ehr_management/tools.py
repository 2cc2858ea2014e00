"""The EHRManagement tools: finding patients and reading their record (admissions, ICU stays, lab and chart events,
infusions, medication orders, notes, recorded scores), derived measures over the record (SOFA, fluid balance; READ),
unit conversion and the anion gap (THINK), and placing orders, stopping medications, flagging results, writing
progress notes and notifying the care team (WRITE).

Every patient-specific tool takes the patient's id and an encounter id (``hadm_id`` or ``stay_id``) that must belong
to that patient: two identifiers, as at the bedside. WRITE tools act only on the admission in progress. Tools refuse
with ``KeyError`` / ``ValueError`` messages meant for the agent; every WRITE tool changes only the database it was
built with (the environment gives each episode its own copy).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from datetime import timedelta
from functools import lru_cache
from typing import Annotated, Any, Literal

from annotated_types import Interval, MinLen

from clinical_gym.cases.schema import normalize
from clinical_gym.drugs import reference
from clinical_gym.domains.ehr_management.data_model import (
    Admission,
    ChartEvent,
    ChartItem,
    Discontinuation,
    DoseUnit,
    EHRManagementDB,
    Frequency,
    IcuStay,
    InputEvent,
    LabEvent,
    LabItem,
    LinksTo,
    Notification,
    Order,
    OrderType,
    PatientRow,
    PrescriptionRow,
    Priority,
    ProgressNote,
    ResultFlag,
    ResultSeverity,
    Route,
    Urgency,
    format_time,
    parse_time,
)
from clinical_gym.domains.lookups import did_you_mean
from clinical_gym.tools import ToolKind, Toolkit, tool
from clinical_gym.tools.instruments.critical_care import sofa

PatientId = Annotated[str, MinLen(1)]
EncounterId = Annotated[int, Interval(ge=1)]
Text = Annotated[str, MinLen(1)]
Analyte = Literal["creatinine", "glucose", "urea nitrogen", "bilirubin", "calcium", "hemoglobin", "albumin"]

WEIGHT = 226512
GCS_ITEMS = {"eye": 220739, "verbal": 223900, "motor": 223901}
MAP_ITEMS = (220052, 220181)
FIO2 = 223835
O2_DEVICE = 226732
VENTILATION_DEVICES = frozenset({"endotracheal tube", "tracheostomy tube", "bipap mask", "cpap mask"})
PAO2, PLATELETS, BILIRUBIN, CREATININE = 50821, 51265, 50885, 50912
VASOPRESSORS = {221906: "norepinephrine_ug_kg_min", 221289: "epinephrine_ug_kg_min",
                221662: "dopamine_ug_kg_min", 221653: "dobutamine_ug_kg_min"}
URINE_ITEMS = frozenset({226559, 226560})
SOFA_NORMAL: dict[str, float] = {"pao2_fio2_mmhg": 500.0, "platelets_k_per_ul": 250.0, "bilirubin_mg_dl": 0.5,
                                 "mean_arterial_pressure": 90.0, "gcs": 15, "creatinine_mg_dl": 0.8}
STABLE_PERCENT = 5.0
# analyte: (conventional unit, SI unit, SI per conventional unit, decimals in SI)
CONVERSIONS: dict[str, tuple[str, str, float, int]] = {
    "creatinine": ("mg/dL", "µmol/L", 88.4, 0), "glucose": ("mg/dL", "mmol/L", 1 / 18.016, 1),
    "urea nitrogen": ("mg/dL", "mmol/L urea", 0.357, 1), "bilirubin": ("mg/dL", "µmol/L", 17.1, 0),
    "calcium": ("mg/dL", "mmol/L", 0.2495, 2), "hemoglobin": ("g/dL", "g/L", 10.0, 0),
    "albumin": ("g/dL", "g/L", 10.0, 0),
}


def parse_window_time(text: str | None, name: str) -> str | None:
    """An argument time in the record's ``"YYYY-MM-DD HH:MM"`` form ("T" separator and seconds accepted)."""
    if text is None:
        return None
    candidate = text.strip().replace("T", " ")[:16]
    try:
        return format_time(parse_time(candidate))
    except ValueError:
        raise ValueError(f"{name} {text!r} is not a time; times look like '2025-06-11 08:00'") from None


def trend_direction(first: float, last: float) -> str:
    """Where a series went from its first to its last value: "stable" within ``STABLE_PERCENT`` percent (or no
    change), else "rising" or "falling"."""
    change = last - first
    if change == 0 or (first and abs(100 * change / first) < STABLE_PERCENT):
        return "stable"
    return "rising" if change > 0 else "falling"


def lab_view(event: LabEvent, item: LabItem) -> dict[str, Any]:
    """A lab event as the agent sees it."""
    view: dict[str, Any] = {"labevent_id": event.labevent_id, "itemid": event.itemid, "label": item.label,
                            "charttime": event.charttime, "valuenum": event.valuenum, "valueuom": event.valueuom,
                            "ref_range_lower": event.ref_range_lower, "ref_range_upper": event.ref_range_upper,
                            "flag": event.flag}
    if event.priority != "ROUTINE":
        view["priority"] = event.priority
    if event.comments:
        view["comments"] = event.comments
    return view


def _in_window(time: str, start: str | None, end: str | None) -> bool:
    return (start is None or time >= start) and (end is None or time <= end)


def _minutes(start: str, end: str) -> float:
    return (parse_time(end) - parse_time(start)).total_seconds() / 60


def _share(event: InputEvent, start: str, end: str) -> float:
    """The part of an input's amount given inside [start, end] (spread evenly over its duration)."""
    if event.starttime == event.endtime:
        return event.amount if start <= event.starttime <= end else 0.0
    overlap = _minutes(max(start, event.starttime), min(end, event.endtime))
    return event.amount * max(0.0, overlap) / _minutes(event.starttime, event.endtime)


class EHRManagementTools(Toolkit):
    """The domain's tools over one database (an episode's copy)."""

    def __init__(self, db: EHRManagementDB) -> None:
        self.db = db
        self.index = db.index

    # -- helpers ---------------------------------------------------------------------------------------------------
    def _patient(self, patient_id: str) -> PatientRow:
        patient = self.index.patients.get(patient_id.strip())
        if patient is None:
            raise KeyError(f"patient {patient_id!r} not found; patient ids are five digits such as '10001' "
                           f"(search_patients finds a patient by name)")
        return patient

    def _admission(self, patient_id: str, hadm_id: int) -> Admission:
        patient = self._patient(patient_id)
        admission = self.index.admissions.get(hadm_id)
        if admission is None or admission.patient_id != patient.patient_id:
            raise KeyError(f"admission {hadm_id} is not an admission of patient {patient.patient_id}; "
                           f"list_admissions shows theirs")
        return admission

    def _current(self, patient_id: str, hadm_id: int) -> Admission:
        admission = self._admission(patient_id, hadm_id)
        if admission.dischtime is not None:
            raise ValueError(f"admission {hadm_id} ended at {admission.dischtime}; orders, flags, notes and "
                             f"notifications go on the patient's admission in progress")
        return admission

    def _stay(self, patient_id: str, stay_id: int) -> IcuStay:
        patient = self._patient(patient_id)
        stay = self.index.stays.get(stay_id)
        if stay is None or stay.patient_id != patient.patient_id:
            raise KeyError(f"ICU stay {stay_id} is not a stay of patient {patient.patient_id}; get_icu_stays shows "
                           f"theirs")
        return stay

    def find_lab_item(self, name: str) -> LabItem:
        """The lab item ``name`` (label, other name or itemid) refers to; ValueError with close names otherwise."""
        names = self.index.lab_names
        item = names.get(normalize(name))
        if item is None:
            hint = did_you_mean(name, names, lambda c: names[c].label)
            raise ValueError(f"unknown lab item {name!r}.{hint} Use a label such as 'Lactate' or an itemid such as "
                             f"'50813'.")
        return item

    def find_chart_items(self, name: str, linksto: LinksTo) -> list[ChartItem]:
        """The ``linksto`` items ``name`` (label, abbreviation, shared alias or itemid) refers to."""
        names = self.index.chart_names[linksto]
        items = names.get(normalize(name))
        if not items:
            hint = did_you_mean(name, names, lambda c: names[c][0].label)
            raise ValueError(f"unknown {linksto} item {name!r}.{hint}")
        return items

    def find_drug(self, name: str) -> str:
        """The canonical name of a drug in the formulary (the drug reference, ``clinical_gym.drugs``, or this
        hospital's own fluids and blood products); ValueError with close names otherwise."""
        drug = reference().find(name)
        if drug is not None:
            return drug.name
        local = self.index.formulary.get(normalize(name))
        if local is not None:
            return local.name
        hint = did_you_mean(name, [*reference().drugs, *self.index.formulary], unique=False)
        raise ValueError(f"{name!r} is not in the formulary; use the generic drug name.{hint}")

    def _window(self, start: str | None, end: str | None) -> tuple[str | None, str | None]:
        start, end = parse_window_time(start, "start"), parse_window_time(end, "end")
        if start is not None and end is not None and start > end:
            raise ValueError(f"start {start} is after end {end}")
        return start, end

    def _labs(self, hadm_id: int, item: LabItem | None, start: str | None, end: str | None) -> list[LabEvent]:
        return [e for e in self.index.labevents_of.get(hadm_id, ())
                if (item is None or e.itemid == item.itemid) and _in_window(e.charttime, start, end)]

    def _charted(self, hadm_id: int, itemids: Iterable[int], start: str | None = None,
                 end: str | None = None) -> list[ChartEvent]:
        wanted = set(itemids)
        return [e for e in self.index.chartevents_of.get(hadm_id, ())
                if e.itemid in wanted and _in_window(e.charttime, start, end)]

    def _discontinued(self) -> dict[int, Discontinuation]:
        return {d.pharmacy_id: d for d in self.db.discontinuations}

    def _status(self, row: PrescriptionRow, stopped: dict[int, Discontinuation]) -> str:
        if row.pharmacy_id in stopped:
            return "discontinued"
        if row.stoptime is not None and row.stoptime <= self.db.clock:
            return "stopped"
        return "active"

    def active_medications(self, hadm_id: int) -> list[PrescriptionRow]:
        """The admission's medication orders in effect now (this episode's discontinuations applied)."""
        stopped = self._discontinued()
        return [r for r in self.index.prescriptions_of.get(hadm_id, ()) if self._status(r, stopped) == "active"]

    def latest_weight(self, hadm_id: int) -> float | None:
        charted = self._charted(hadm_id, [WEIGHT])
        return charted[-1].valuenum if charted else None

    def _stay_window(self, stay: IcuStay, start: str | None, end: str | None) -> tuple[str, str]:
        end = end or min(stay.outtime or self.db.clock, self.db.clock)
        start = start or format_time(max(parse_time(stay.intime), parse_time(end) - timedelta(hours=24)))
        return start, end

    # -- READ: patients and encounters ---------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def search_patients(self, name: Text) -> dict[str, Any]:
        """Find patients by name (every word of the query matched against the patient's name); close spellings are
        listed too, so confirm the right person by age and admission.

        Args:
            name: The patient's name or surname, e.g. "James Miller".
        """
        query = normalize(name).split()
        matches = []
        for patient in self.index.patients.values():
            words = normalize(patient.name).split()
            score = sum(max(_similarity(q, w) for w in words) for q in query) / len(query) if query else 0.0
            if score >= 0.75:
                current = next((a for a in self.index.admissions_of.get(patient.patient_id, ())
                                if a.dischtime is None), None)
                matches.append((-score, patient.name, {
                    "patient_id": patient.patient_id, "name": patient.name, "gender": patient.gender,
                    "age": patient.anchor_age,
                    "current_admission": {"hadm_id": current.hadm_id, "ward": current.ward} if current else None}))
        matches.sort(key=lambda m: (m[0], m[1]))
        return {"query": name, "matches": [m[2] for m in matches[:10]]}

    @tool(kind=ToolKind.READ)
    def get_patient(self, patient_id: PatientId) -> dict[str, Any]:
        """Demographics of a patient (name, gender, age, latest charted weight) and documented allergies with the
        reaction and its severity.

        Args:
            patient_id: The patient's id, e.g. "10001".
        """
        p = self._patient(patient_id)
        admissions = self.index.admissions_of.get(p.patient_id, [])
        weights = [w for w in (self.latest_weight(a.hadm_id) for a in reversed(admissions)) if w is not None]
        return {"patient_id": p.patient_id, "name": p.name, "gender": p.gender, "age": p.anchor_age,
                "weight_kg": weights[0] if weights else None,
                "allergies": [a.model_dump() for a in p.allergies] or "No known drug allergies."}

    @tool(kind=ToolKind.READ)
    def list_admissions(self, patient_id: PatientId) -> list[dict[str, Any]]:
        """The patient's hospital admissions, oldest first, with their status ("in progress" or "discharged").

        Args:
            patient_id: The patient's id, e.g. "10001".
        """
        p = self._patient(patient_id)
        return [{"hadm_id": a.hadm_id, "admittime": a.admittime, "dischtime": a.dischtime,
                 "admission_type": a.admission_type, "admission_location": a.admission_location,
                 "discharge_location": a.discharge_location, "ward": a.ward,
                 "status": "in progress" if a.dischtime is None else "discharged"}
                for a in self.index.admissions_of.get(p.patient_id, [])]

    @tool(kind=ToolKind.READ)
    def get_admission(self, patient_id: PatientId, hadm_id: EncounterId) -> dict[str, Any]:
        """One admission: times, ward, coded diagnoses (ICD-10), its ICU stays, and orders placed during this
        session.

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission id, e.g. 20001.
        """
        a = self._admission(patient_id, hadm_id)
        return {**a.model_dump(),
                "icu_stays": [s.stay_id for s in self.index.stays_of.get(a.hadm_id, [])],
                "orders_this_session": [o.model_dump(exclude={"patient_id", "hadm_id"}, exclude_none=True)
                                        for o in self.db.orders if o.hadm_id == a.hadm_id]}

    @tool(kind=ToolKind.READ)
    def get_icu_stays(self, patient_id: PatientId, hadm_id: EncounterId | None = None) -> list[dict[str, Any]]:
        """The patient's ICU stays (all admissions, or one), with care units, times and length of stay in days
        (up to now for a stay in progress).

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: Only stays of this admission, e.g. 20001 (all when omitted).
        """
        p = self._patient(patient_id)
        hadm_ids = [self._admission(patient_id, hadm_id).hadm_id] if hadm_id is not None else [
            a.hadm_id for a in self.index.admissions_of.get(p.patient_id, [])]
        stays = [s for h in hadm_ids for s in self.index.stays_of.get(h, [])]
        return [{**s.model_dump(exclude={"patient_id"}),
                 "los_days": round(_minutes(s.intime, s.outtime or self.db.clock) / 1440, 2),
                 "status": "in progress" if s.outtime is None else "ended"} for s in stays]

    # -- READ: results and observations ----------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def query_lab_events(self, patient_id: PatientId, hadm_id: EncounterId, item: str | None = None,
                         start: str | None = None, end: str | None = None,
                         abnormal_only: bool = False) -> list[dict[str, Any]]:
        """Lab results of an admission, oldest first, with units, reference ranges and flags; filter by item and
        by time window (both ends included).

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission id, e.g. 20001.
            item: Only this test: a label ("Lactate"), another name ("K", "INR") or an itemid ("50813").
            start: Only results charted at or after this time, e.g. "2025-06-10 01:30".
            end: Only results charted at or before this time, e.g. "2025-06-12 08:00".
            abnormal_only: Only results outside their reference range.
        """
        admission = self._admission(patient_id, hadm_id)
        lab = self.find_lab_item(item) if item is not None else None
        start, end = self._window(start, end)
        items = self.index.lab_items
        return [lab_view(e, items[e.itemid]) for e in self._labs(admission.hadm_id, lab, start, end)
                if not abnormal_only or e.flag != "normal"]

    @tool(kind=ToolKind.READ)
    def get_latest_lab(self, patient_id: PatientId, item: Text, hadm_id: EncounterId | None = None) -> dict[str, Any]:
        """The most recent result of one lab test, in one admission or across all of the patient's admissions.

        Args:
            patient_id: The patient's id, e.g. "10001".
            item: The test: a label ("Potassium"), another name ("K") or an itemid ("50971").
            hadm_id: Only this admission, e.g. 20001 (all admissions when omitted).
        """
        p = self._patient(patient_id)
        lab = self.find_lab_item(item)
        hadm_ids = [self._admission(patient_id, hadm_id).hadm_id] if hadm_id is not None else [
            a.hadm_id for a in self.index.admissions_of.get(p.patient_id, [])]
        events = sorted((e for h in hadm_ids for e in self._labs(h, lab, None, None)), key=lambda e: e.charttime)
        if not events:
            return {"label": lab.label, "result": "no result on record"}
        return {**lab_view(events[-1], lab), "hadm_id": events[-1].hadm_id}

    @tool(kind=ToolKind.READ)
    def get_lab_trend(self, patient_id: PatientId, hadm_id: EncounterId, item: Text, start: str | None = None,
                      end: str | None = None) -> dict[str, Any]:
        """The course of one lab test over an admission or a time window: first, last, lowest and highest values
        with their times, the change, and its direction (rising, falling, or stable within 5%).

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission id, e.g. 20001.
            item: The test: a label ("Creatinine"), another name ("Cr") or an itemid ("50912").
            start: Only results at or after this time, e.g. "2025-06-10 00:00".
            end: Only results at or before this time, e.g. "2025-06-12 08:00".
        """
        admission = self._admission(patient_id, hadm_id)
        lab = self.find_lab_item(item)
        start, end = self._window(start, end)
        events = self._labs(admission.hadm_id, lab, start, end)
        if not events:
            return {"label": lab.label, "count": 0, "result": "no results in this admission and window"}
        first, last = events[0], events[-1]
        low = min(events, key=lambda e: e.valuenum)
        high = max(events, key=lambda e: e.valuenum)
        change = last.valuenum - first.valuenum
        percent = 100 * change / first.valuenum if first.valuenum else None
        direction = trend_direction(first.valuenum, last.valuenum)
        return {"label": lab.label, "itemid": lab.itemid, "unit": first.valueuom, "count": len(events),
                "reference_range": [first.ref_range_lower, first.ref_range_upper],
                "first": {"charttime": first.charttime, "value": first.valuenum},
                "last": {"charttime": last.charttime, "value": last.valuenum},
                "lowest": {"charttime": low.charttime, "value": low.valuenum},
                "highest": {"charttime": high.charttime, "value": high.valuenum},
                "change": round(change, 3), "percent_change": None if percent is None else round(percent, 1),
                "direction": direction, "values": [[e.charttime, e.valuenum] for e in events]}

    @tool(kind=ToolKind.READ)
    def query_vital_events(self, patient_id: PatientId, hadm_id: EncounterId, item: str | None = None,
                           start: str | None = None, end: str | None = None) -> list[dict[str, Any]]:
        """Bedside observations of an admission (chartevents), oldest first: heart rate, blood pressure (arterial
        and non-invasive), respiratory rate, SpO2, temperature, oxygen device and FiO2, GCS components, weight.

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission id, e.g. 20001.
            item: Only this observation: a label ("Heart Rate"), an abbreviation ("SpO2", "ABPm"), a group
                ("blood pressure", "GCS") or an itemid ("220045").
            start: Only observations at or after this time, e.g. "2025-06-11 08:00".
            end: Only observations at or before this time, e.g. "2025-06-12 08:00".
        """
        admission = self._admission(patient_id, hadm_id)
        items = self.find_chart_items(item, "chartevents") if item is not None else [
            i for i in self.index.chart_items.values() if i.linksto == "chartevents"]
        start, end = self._window(start, end)
        labels = self.index.chart_items
        return [{"charttime": e.charttime, "itemid": e.itemid, "label": labels[e.itemid].label, "value": e.value,
                 "valuenum": e.valuenum, "valueuom": e.valueuom, "stay_id": e.stay_id}
                for e in self._charted(admission.hadm_id, (i.itemid for i in items), start, end)]

    @tool(kind=ToolKind.READ)
    def query_infusions(self, patient_id: PatientId, stay_id: EncounterId, item: str | None = None,
                        start: str | None = None, end: str | None = None) -> list[dict[str, Any]]:
        """Fluids and drug infusions given during an ICU stay (inputevents) that overlap a time window, with
        volumes and, for vasoactive drugs, the rate (mcg/kg/min).

        Args:
            patient_id: The patient's id, e.g. "10001".
            stay_id: The ICU stay id, e.g. 30001.
            item: Only this input: a label ("Norepinephrine"), another name ("noradrenaline") or an itemid
                ("221906").
            start: Only inputs running at or after this time, e.g. "2025-06-11 08:00".
            end: Only inputs started at or before this time, e.g. "2025-06-12 08:00".
        """
        stay = self._stay(patient_id, stay_id)
        wanted = {i.itemid for i in self.find_chart_items(item, "inputevents")} if item is not None else None
        start, end = self._window(start, end)
        labels = self.index.chart_items
        return [{"starttime": e.starttime, "endtime": e.endtime, "itemid": e.itemid, "label": labels[e.itemid].label,
                 "amount": e.amount, "amountuom": e.amountuom, "rate": e.rate, "rateuom": e.rateuom}
                for e in self.index.inputevents_of.get(stay.stay_id, [])
                if (wanted is None or e.itemid in wanted) and (start is None or e.endtime >= start)
                and (end is None or e.starttime <= end)]

    @tool(kind=ToolKind.READ)
    def get_medication_orders(self, patient_id: PatientId, hadm_id: EncounterId,
                              active_only: bool = False) -> dict[str, Any]:
        """The admission's medication orders with their status (active, stopped, or discontinued this session) and
        the medication orders placed this session.

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission id, e.g. 20001.
            active_only: Only orders in effect now.
        """
        admission = self._admission(patient_id, hadm_id)
        stopped = self._discontinued()
        rows = []
        for row in self.index.prescriptions_of.get(admission.hadm_id, []):
            status = self._status(row, stopped)
            if active_only and status != "active":
                continue
            view = {**row.model_dump(exclude={"patient_id", "hadm_id"}), "status": status}
            if status == "discontinued":
                view["discontinue_reason"] = stopped[row.pharmacy_id].reason
            rows.append(view)
        placed = [o.model_dump(exclude={"patient_id", "hadm_id", "order_type"}) for o in self.db.orders
                  if o.hadm_id == admission.hadm_id and o.order_type == "medication"]
        return {"orders": rows, "placed_this_session": placed}

    @tool(kind=ToolKind.READ)
    def get_clinical_notes(self, patient_id: PatientId, hadm_id: EncounterId,
                           note_type: str | None = None) -> list[dict[str, Any]]:
        """The admission's notes (admission, progress, nursing, operative, radiology and ECG reports), oldest
        first, then progress notes written this session.

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission id, e.g. 20001.
            note_type: Only this type, e.g. "Nursing note" or "Radiology report".
        """
        admission = self._admission(patient_id, hadm_id)
        notes = [n.model_dump(exclude={"patient_id", "hadm_id"})
                 for n in self.index.notes_of.get(admission.hadm_id, [])]
        notes += [{"note_id": n.note_id, "note_type": "Progress note", "charttime": n.time, "author": "you",
                   "text": n.text} for n in self.db.progress_notes if n.hadm_id == admission.hadm_id]
        if note_type is not None:
            notes = [n for n in notes if normalize(n["note_type"]) == normalize(note_type)]
        return notes

    @tool(kind=ToolKind.READ)
    def get_clinical_scores(self, patient_id: PatientId, stay_id: EncounterId) -> list[dict[str, Any]]:
        """Severity scores recorded by the unit during an ICU stay (e.g. the daily SOFA), with points per system.

        Args:
            patient_id: The patient's id, e.g. "10001".
            stay_id: The ICU stay id, e.g. 30001.
        """
        stay = self._stay(patient_id, stay_id)
        return [s.model_dump(exclude={"patient_id", "hadm_id"}) for s in self.index.scores_of.get(stay.stay_id, [])]

    # -- READ: measures derived from the record ----------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def compute_sofa(self, patient_id: PatientId, stay_id: EncounterId, end: str | None = None) -> dict[str, Any]:
        """The SOFA score of an ICU stay from the record: the worst values over the 24 hours ending at ``end``
        (now by default), each with its source, then scored by the shared SOFA instrument.

        Worst PaO2/FiO2 (FiO2: the last charted at or before the blood gas, 21% if none), with respiratory
        support when an endotracheal or tracheostomy tube or a BiPAP/CPAP mask is charted in the window; lowest
        platelets, MAP and GCS total; highest bilirubin and creatinine; highest vasoactive rates; urine output
        when the whole window lies within the stay and urine was charted. Values not measured in the window are
        scored as normal and listed under "not_measured".

        Args:
            patient_id: The patient's id, e.g. "10001".
            stay_id: The ICU stay id, e.g. 30001.
            end: The end of the 24-hour window, e.g. "2025-06-11 08:00" (default: now, or the end of a finished
                stay).
        """
        stay = self._stay(patient_id, stay_id)
        end = parse_window_time(end, "end") or min(stay.outtime or self.db.clock, self.db.clock)
        if not stay.intime < end <= self.db.clock:
            raise ValueError(f"the window must end after the stay began ({stay.intime}) and not after now "
                             f"({self.db.clock})")
        start = format_time(parse_time(end) - timedelta(hours=24))
        values, sources = self._sofa_inputs(stay, start, end)
        missing = [k for k in SOFA_NORMAL if k not in values]
        result = sofa(**{**SOFA_NORMAL, **values})
        return {"stay_id": stay.stay_id, "window": {"start": start, "end": end}, "values": sources,
                "not_measured": missing, "sofa": result.model_dump()}

    def _sofa_inputs(self, stay: IcuStay, start: str, end: str) -> tuple[dict[str, Any], dict[str, str]]:
        """The SOFA instrument's arguments from the record's worst values in [start, end], and where each came from."""
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        items = self.index.lab_items
        fio2 = self._charted(stay.hadm_id, [FIO2], None, end)
        ratios = []
        for gas in self._labs(stay.hadm_id, items.get(PAO2), start, end) if PAO2 in items else []:
            charted = [f for f in fio2 if f.charttime <= gas.charttime and f.valuenum]
            fraction = (charted[-1].valuenum if charted else 21.0) / 100
            ratios.append((min(gas.valuenum / fraction, 700.0), gas, fraction))
        if ratios:
            ratio, gas, fraction = min(ratios, key=lambda r: r[0])
            values["pao2_fio2_mmhg"] = round(ratio)
            sources["pao2_fio2_mmhg"] = f"PaO2 {gas.valuenum:g} mm Hg at {gas.charttime} on FiO2 {fraction:.2f}"
        devices = [d for d in self._charted(stay.hadm_id, [O2_DEVICE], start, end)
                   if normalize(d.value) in VENTILATION_DEVICES]
        values["respiratory_support"] = bool(devices)
        sources["respiratory_support"] = f"{devices[0].value} at {devices[0].charttime}" if devices else "none charted"
        for key, itemid, pick in (("platelets_k_per_ul", PLATELETS, min), ("bilirubin_mg_dl", BILIRUBIN, max),
                                  ("creatinine_mg_dl", CREATININE, max)):
            events = self._labs(stay.hadm_id, items[itemid], start, end) if itemid in items else []
            if events:
                event = pick(events, key=lambda e: e.valuenum)
                values[key] = event.valuenum
                sources[key] = f"{event.valuenum:g} {event.valueuom} at {event.charttime}"
        pressures = [e for e in self._charted(stay.hadm_id, MAP_ITEMS, start, end) if e.valuenum is not None]
        if pressures:
            lowest = min(pressures, key=lambda e: e.valuenum or 0.0)
            values["mean_arterial_pressure"] = lowest.valuenum
            sources["mean_arterial_pressure"] = f"{lowest.valuenum:g} mmHg at {lowest.charttime}"
        totals = self._gcs_totals(stay.hadm_id, start, end)
        if totals:
            time, total = min(totals.items(), key=lambda t: t[1])
            values["gcs"] = total
            sources["gcs"] = f"{total} at {time}"
        for event in self.index.inputevents_of.get(stay.stay_id, []):
            key = VASOPRESSORS.get(event.itemid)
            if key and event.rate and event.endtime > start and event.starttime < end and event.rate > values.get(
                    key, 0):
                values[key] = event.rate
                sources[key] = f"{event.rate:g} {event.rateuom} from {event.starttime} to {event.endtime}"
        urine = [o for o in self.index.outputevents_of.get(stay.stay_id, [])
                 if o.itemid in URINE_ITEMS and start < o.charttime <= end]
        if start >= stay.intime and urine:
            values["urine_output_ml_per_day"] = sum(o.value for o in urine)
            sources["urine_output_ml_per_day"] = f"{values['urine_output_ml_per_day']:g} mL"
        return values, sources

    def _gcs_totals(self, hadm_id: int, start: str, end: str) -> dict[str, int]:
        """GCS totals at each time all three components were charted."""
        parts: dict[str, dict[int, float]] = {}
        for event in self._charted(hadm_id, GCS_ITEMS.values(), start, end):
            parts.setdefault(event.charttime, {})[event.itemid] = event.valuenum or 0
        return {t: int(sum(p.values())) for t, p in parts.items() if len(p) == len(GCS_ITEMS)}

    @tool(kind=ToolKind.READ)
    def calculate_fluid_balance(self, patient_id: PatientId, stay_id: EncounterId, start: str | None = None,
                                end: str | None = None) -> dict[str, Any]:
        """Fluid in, fluid out and net balance (mL) of an ICU stay over a window: infusions are counted in
        proportion to the part of their running time inside the window, outputs by the time they were charted
        (after start, up to end). Default window: the last 24 hours of the stay (from ICU admission if shorter).

        Args:
            patient_id: The patient's id, e.g. "10001".
            stay_id: The ICU stay id, e.g. 30001.
            start: Window start, e.g. "2025-06-11 08:00".
            end: Window end, e.g. "2025-06-12 08:00".
        """
        stay = self._stay(patient_id, stay_id)
        start, end = self._stay_window(stay, *self._window(start, end))
        if start >= end:
            raise ValueError(f"the window {start} to {end} is empty")
        labels = self.index.chart_items
        intake: dict[str, float] = {}
        for event in self.index.inputevents_of.get(stay.stay_id, []):
            amount = _share(event, start, end)
            if amount:
                label = labels[event.itemid].label
                intake[label] = intake.get(label, 0.0) + amount
        output: dict[str, float] = {}
        for event in self.index.outputevents_of.get(stay.stay_id, []):
            if start < event.charttime <= end:
                label = labels[event.itemid].label
                output[label] = output.get(label, 0.0) + event.value
        urine = sum(e.value for e in self.index.outputevents_of.get(stay.stay_id, [])
                    if e.itemid in URINE_ITEMS and start < e.charttime <= end)
        total_in, total_out = sum(intake.values()), sum(output.values())
        return {"stay_id": stay.stay_id, "window": {"start": start, "end": end},
                "intake_ml": round(total_in), "intake_by_item": {k: round(v, 1) for k, v in intake.items()},
                "output_ml": round(total_out), "output_by_item": {k: round(v, 1) for k, v in output.items()},
                "urine_output_ml": round(urine), "net_balance_ml": round(total_in - total_out)}

    # -- THINK -------------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.THINK)
    def convert_lab_units(self, analyte: Analyte, value: Annotated[float, Interval(ge=0, le=100000)],
                          to: Literal["SI", "conventional"] = "SI") -> dict[str, Any]:
        """Convert a lab value between the conventional units of this record (mg/dL, g/dL) and SI units.

        Args:
            analyte: "creatinine", "glucose", "urea nitrogen" (to urea), "bilirubin", "calcium", "hemoglobin" or
                "albumin".
            value: The value to convert, e.g. 1.9.
            to: "SI" (e.g. creatinine mg/dL to µmol/L) or "conventional" (back).
        """
        conventional, si, factor, decimals = CONVERSIONS[analyte]
        if to == "SI":
            converted, unit_from, unit_to = round(value * factor, decimals), conventional, si
        else:
            converted, unit_from, unit_to = round(value / factor, 2), si, conventional
        return {"analyte": analyte, "value": value, "unit": unit_from, "converted": converted,
                "converted_unit": unit_to}

    @tool(kind=ToolKind.THINK)
    def calculate_anion_gap(self, sodium: Annotated[float, Interval(ge=90, le=200)],
                            chloride: Annotated[float, Interval(ge=50, le=150)],
                            bicarbonate: Annotated[float, Interval(ge=0, le=60)],
                            albumin_g_dl: Annotated[float, Interval(gt=0, le=10)] | None = None) -> dict[str, Any]:
        """Serum anion gap, Na - (Cl + HCO3), in mmol/L, optionally corrected for albumin (+2.5 per g/dL below
        4.0). Above 12 mmol/L is raised (reference about 8-12 without potassium; ranges vary by analyser).

        Args:
            sodium: Sodium in mEq/L (= mmol/L), e.g. 135.
            chloride: Chloride in mEq/L, e.g. 99.
            bicarbonate: Bicarbonate in mEq/L, e.g. 17.
            albumin_g_dl: Albumin in g/dL for the corrected gap, e.g. 3.1.
        """
        gap = sodium - (chloride + bicarbonate)
        result: dict[str, Any] = {"anion_gap": round(gap, 1), "raised": gap > 12}
        if albumin_g_dl is not None:
            corrected = gap + 2.5 * (4.0 - albumin_g_dl)
            result.update(albumin_corrected_anion_gap=round(corrected, 1), raised=corrected > 12)
        return result

    # -- WRITE -------------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def place_order(self, patient_id: PatientId, hadm_id: EncounterId, order_type: OrderType, item: Text,
                    priority: Priority = "routine", dose: Annotated[float, Interval(gt=0)] | None = None,
                    dose_unit: DoseUnit | None = None, route: Route | None = None,
                    frequency: Frequency | None = None, indication: str = "") -> dict[str, Any]:
        """Order a lab test, or a medication with its dose, route and frequency, on the admission in progress.
        Check allergies and current medications before ordering a medication.

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission in progress, e.g. 20001.
            order_type: "lab" or "medication".
            item: A lab test from the lab dictionary ("Potassium") or a generic drug name ("potassium chloride").
            priority: "routine", "urgent" or "stat".
            dose: Medication only: the amount per dose, e.g. 40.
            dose_unit: Medication only: "mg", "mcg", "g", "mmol", "units", "mL", "mcg/kg/min", "units/h" or "mg/h".
            route: Medication only: "oral", "intravenous", "subcutaneous", "intramuscular", "nasogastric",
                "inhaled", "nebulised" or "topical".
            frequency: Medication only: "once", "daily", "bid", "tid", "qid", "q4h", "q6h", "q8h", "q12h", "q24h",
                "continuous" or "prn".
            indication: Why, e.g. "potassium 3.4 mmol/L during insulin infusion".
        """
        admission = self._current(patient_id, hadm_id)
        details = {"dose": dose, "dose_unit": dose_unit, "route": route, "frequency": frequency}
        if order_type == "lab":
            if any(v is not None for v in details.values()):
                raise ValueError("dose, dose_unit, route and frequency belong to medication orders only")
            name = self.find_lab_item(item).label
        else:
            missing = [k for k, v in details.items() if v is None]
            if missing:
                raise ValueError(f"a medication order needs {', '.join(missing)}")
            name = self.find_drug(item)
        order = Order(order_id=f"ORD-{len(self.db.orders) + 1:03d}", patient_id=admission.patient_id,
                      hadm_id=admission.hadm_id, order_type=order_type, item=name, priority=priority,
                      indication=indication, time=self.db.clock, **details)
        self.db.orders.append(order)
        return {"status": "placed", **order.model_dump(exclude_none=True)}

    @tool(kind=ToolKind.WRITE)
    def discontinue_medication(self, patient_id: PatientId, hadm_id: EncounterId, pharmacy_id: EncounterId,
                               reason: Text) -> str:
        """Stop an active medication order of the admission in progress.

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission in progress, e.g. 20001.
            pharmacy_id: The order's pharmacy_id from get_medication_orders, e.g. 40031.
            reason: Why, e.g. "potassium 6.8 mmol/L".
        """
        admission = self._current(patient_id, hadm_id)
        row = next((r for r in self.index.prescriptions_of.get(admission.hadm_id, [])
                    if r.pharmacy_id == pharmacy_id), None)
        if row is None:
            raise KeyError(f"no medication order {pharmacy_id} in admission {admission.hadm_id}; "
                           f"get_medication_orders lists them")
        status = self._status(row, self._discontinued())
        if status != "active":
            raise ValueError(f"order {pharmacy_id} ({row.drug}) is already {status}")
        self.db.discontinuations.append(Discontinuation(pharmacy_id=pharmacy_id, patient_id=admission.patient_id,
                                                        hadm_id=admission.hadm_id, reason=reason,
                                                        time=self.db.clock))
        return f"Order {pharmacy_id} ({row.drug}) discontinued."

    @tool(kind=ToolKind.WRITE)
    def flag_abnormal_result(self, patient_id: PatientId, hadm_id: EncounterId, labevent_id: EncounterId,
                             severity: ResultSeverity, comment: Text) -> str:
        """Flag a result outside its reference range for the care team's attention; "critical" marks a value that
        needs action now.

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission in progress, e.g. 20001.
            labevent_id: The result's labevent_id, e.g. 1000123.
            severity: "abnormal" or "critical".
            comment: What it means and what is being done, e.g. "K 6.8 mmol/L with peaked T waves; team informed".
        """
        admission = self._current(patient_id, hadm_id)
        event = self.index.labevents.get(labevent_id)
        if event is None or event.hadm_id != admission.hadm_id:
            raise KeyError(f"no result {labevent_id} in admission {admission.hadm_id}; query_lab_events lists them")
        if event.flag == "normal":
            raise ValueError(f"result {labevent_id} is within its reference range")
        if any(f.labevent_id == labevent_id for f in self.db.result_flags):
            raise ValueError(f"result {labevent_id} is already flagged")
        self.db.result_flags.append(ResultFlag(labevent_id=labevent_id, patient_id=admission.patient_id,
                                               hadm_id=admission.hadm_id, severity=severity, comment=comment,
                                               time=self.db.clock))
        label = self.index.lab_items[event.itemid].label
        return f"{label} {event.valuenum:g} {event.valueuom} at {event.charttime} flagged {severity}."

    @tool(kind=ToolKind.WRITE)
    def write_progress_note(self, patient_id: PatientId, hadm_id: EncounterId, text: Text) -> str:
        """Add a progress note to the admission in progress.

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission in progress, e.g. 20001.
            text: The note, e.g. "ICU day 3. Off noradrenaline since 20:00. Lactate 1.4 mmol/L. Plan: ...".
        """
        admission = self._current(patient_id, hadm_id)
        note = ProgressNote(note_id=f"PN-{len(self.db.progress_notes) + 1:03d}", patient_id=admission.patient_id,
                            hadm_id=admission.hadm_id, text=text, time=self.db.clock)
        self.db.progress_notes.append(note)
        return f"Progress note {note.note_id} added to admission {admission.hadm_id}."

    @tool(kind=ToolKind.WRITE)
    def notify_care_team(self, patient_id: PatientId, hadm_id: EncounterId, urgency: Urgency,
                         message: Text) -> str:
        """Page the responsible team: "routine" (next ward round), "urgent" (review within the hour) or
        "emergency" (immediate bedside response by the medical emergency team).

        Args:
            patient_id: The patient's id, e.g. "10001".
            hadm_id: The admission in progress, e.g. 20001.
            urgency: "routine", "urgent" or "emergency".
            message: What is wrong and what is needed, e.g. "Potassium 6.8 mmol/L with peaked T waves".
        """
        admission = self._current(patient_id, hadm_id)
        self.db.notifications.append(Notification(patient_id=admission.patient_id, hadm_id=admission.hadm_id,
                                                  urgency=urgency, message=message, time=self.db.clock))
        return f"{urgency.capitalize()} notification sent to the team caring for patient {admission.patient_id}."


@lru_cache(maxsize=8192)
def _similarity(a: str, b: str) -> float:
    """How alike two words are: 1.0 when equal, difflib's ratio when that can reach 0.75, else 0."""
    if a == b:
        return 1.0
    matcher = difflib.SequenceMatcher(None, a, b)
    return matcher.ratio() if matcher.real_quick_ratio() >= 0.75 and matcher.quick_ratio() >= 0.75 else 0.0
