"""The EHRManagement database, shaped like MIMIC-IV tables: patients, admissions (with their ICD diagnoses), ICU
stays, the item dictionaries (``d_labitems``, ``d_items``), lab events, chart events (vital signs, GCS, oxygen
device, weight), input and output events, medication orders (``prescriptions``), recorded clinical scores and
notes; the domain's own formulary entries; and what clinicians write during an episode (orders, discontinued
medications, result flags, progress notes, care-team notifications).

Times are ``"YYYY-MM-DD HH:MM"`` strings (they sort as text). Units are those of the source tables (US
conventional units: creatinine mg/dL, glucose mg/dL, platelets K/uL). Item ids of the common lab, bedside and
output items are MIMIC-IV's (e.g. lactate 50813, heart rate 220045, Foley 226559); ids from 90000 are this
database's own, for orderable tests MIMIC keeps outside ``labevents`` (cultures, blood bank, PF4 antibodies). Unlike
MIMIC, patients have names and allergies, and ward observations sit in ``chartevents`` without a ``stay_id``.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_gym.cases.schema import normalize
from clinical_gym.tool_env.database import RecordListsDB
from clinical_gym.domains import dosing
from clinical_gym.domains.records import AllergySeverity, range_flag

TIME_FORMAT = "%Y-%m-%d %H:%M"
Timestamp = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$")]
Gender = Literal["F", "M"]
AdmissionType = Literal["EW EMER.", "URGENT", "ELECTIVE", "SURGICAL SAME DAY ADMISSION"]
NoteType = Literal["Admission note", "Progress note", "Nursing note", "Radiology report", "ECG report",
                   "Operative note", "Discharge summary"]
LinksTo = Literal["chartevents", "inputevents", "outputevents"]
OrderType = Literal["lab", "medication"]
Priority = Literal["routine", "urgent", "stat"]
DoseUnit = Literal["mg", "mcg", "g", "mmol", "units", "mL", "mcg/kg/min", "units/h", "mg/h"]
Route = Literal["oral", "intravenous", "subcutaneous", "intramuscular", "nasogastric", "inhaled", "nebulised",
                "topical"]
Frequency = Literal["once", "daily", "bid", "tid", "qid", "q4h", "q6h", "q8h", "q12h", "q24h", "continuous", "prn"]
DOSES_PER_DAY: dict[str, float] = {**dosing.DOSES_PER_DAY, "continuous": 1, "prn": 1}
ResultSeverity = Literal["abnormal", "critical"]
Urgency = Literal["routine", "urgent", "emergency"]
SeverityFlag = Literal["high", "low", "normal"]


def parse_time(text: str) -> datetime:
    """A ``"YYYY-MM-DD HH:MM"`` time (any ISO 8601 date and time) as a datetime."""
    return datetime.fromisoformat(text)


def format_time(moment: datetime) -> str:
    return moment.strftime(TIME_FORMAT)


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Allergy(_Row):
    substance: str
    reaction: str
    severity: AllergySeverity


class PatientRow(_Row):
    """``patients``: one person. ``name`` is kept (unlike MIMIC) because clinicians identify patients by it."""

    patient_id: Annotated[str, Field(pattern=r"^\d{5}$")]
    name: str
    gender: Gender
    anchor_age: int = Field(ge=0, le=120)
    allergies: list[Allergy] = Field(default_factory=list)


class DiagnosisCode(_Row):
    seq_num: int = Field(ge=1)
    icd_code: str
    long_title: str


class Admission(_Row):
    """``admissions``: one hospital stay; ``dischtime`` None while the patient is still in hospital."""

    hadm_id: int
    patient_id: str
    admittime: Timestamp
    dischtime: Timestamp | None = None
    admission_type: AdmissionType
    admission_location: str
    discharge_location: str | None = None
    ward: str
    diagnoses: list[DiagnosisCode] = Field(default_factory=list)


class IcuStay(_Row):
    """``icustays``: one stay in an intensive care unit; ``outtime`` None while it goes on."""

    stay_id: int
    hadm_id: int
    patient_id: str
    first_careunit: str
    last_careunit: str
    intime: Timestamp
    outtime: Timestamp | None = None


class LabItem(_Row):
    """``d_labitems``: a laboratory test, with its usual unit and reference range and other names it goes by."""

    itemid: int
    label: str
    fluid: str
    category: str
    valueuom: str = ""
    ref_range_lower: float | None = None
    ref_range_upper: float | None = None
    aliases: list[str] = Field(default_factory=list)


class ChartItem(_Row):
    """``d_items``: something charted at the bedside (``chartevents``), given (``inputevents``) or measured out
    (``outputevents``). An alias shared by several items (e.g. "GCS") names them together."""

    itemid: int
    label: str
    abbreviation: str
    linksto: LinksTo
    category: str
    unitname: str = ""
    aliases: list[str] = Field(default_factory=list)


class LabEvent(_Row):
    """``labevents``: one result, with the reference range that applied to it."""

    labevent_id: int
    patient_id: str
    hadm_id: int
    itemid: int
    charttime: Timestamp
    valuenum: float
    valueuom: str
    ref_range_lower: float | None = None
    ref_range_upper: float | None = None
    priority: Literal["ROUTINE", "STAT"] = "ROUTINE"
    comments: str = ""

    @property
    def flag(self) -> SeverityFlag:
        """Where the value lies against its reference range."""
        return range_flag(self.valuenum, self.ref_range_lower, self.ref_range_upper)  # type: ignore[return-value]


class ChartEvent(_Row):
    """``chartevents``: one bedside observation. ``stay_id`` is None for ward observations (MIMIC keeps only ICU
    charting here); ``valuenum`` is None for text values such as the oxygen device."""

    patient_id: str
    hadm_id: int
    stay_id: int | None = None
    itemid: int
    charttime: Timestamp
    value: str
    valuenum: float | None = None
    valueuom: str = ""


class InputEvent(_Row):
    """``inputevents``: fluid or drug given over [starttime, endtime]; ``amount`` in mL, ``rate`` (vasoactive
    drugs) in ``rateuom``."""

    patient_id: str
    hadm_id: int
    stay_id: int
    itemid: int
    starttime: Timestamp
    endtime: Timestamp
    amount: float = Field(ge=0)
    amountuom: Literal["mL"] = "mL"
    rate: float | None = None
    rateuom: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> InputEvent:
        if self.endtime < self.starttime:
            raise ValueError(f"input ends ({self.endtime}) before it starts ({self.starttime})")
        return self


class OutputEvent(_Row):
    """``outputevents``: a measured output (urine, drain), in mL, for the period ending at ``charttime``."""

    patient_id: str
    hadm_id: int
    stay_id: int
    itemid: int
    charttime: Timestamp
    value: float = Field(ge=0)
    valueuom: Literal["mL"] = "mL"


class PrescriptionRow(_Row):
    """``prescriptions``: one medication order of the admission; ``stoptime`` None while it is open-ended."""

    pharmacy_id: int
    patient_id: str
    hadm_id: int
    starttime: Timestamp
    stoptime: Timestamp | None = None
    drug: str
    dose_val_rx: float
    dose_unit_rx: str
    route: str
    frequency: str
    indication: str = ""


class ScoreRecord(_Row):
    """A severity score recorded by the unit (MIMIC's derived tables), with its per-system points."""

    patient_id: str
    hadm_id: int
    stay_id: int
    score: Literal["SOFA"]
    charttime: Timestamp
    value: int
    components: dict[str, int]


class NoteRow(_Row):
    note_id: str
    patient_id: str
    hadm_id: int
    note_type: NoteType
    charttime: Timestamp
    author: str
    text: str


class FormularyDrug(_Row):
    """An item this hospital's formulary stocks beyond the drug reference (``clinical_gym.drugs``): intravenous
    fluids and blood products."""

    name: str
    aliases: list[str] = Field(default_factory=list)
    drug_class: str


class Order(_Row):
    """An order placed during the episode: a lab test, or a medication with its dose."""

    order_id: str
    patient_id: str
    hadm_id: int
    order_type: OrderType
    item: str
    priority: Priority
    dose: float | None = None
    dose_unit: DoseUnit | None = None
    route: Route | None = None
    frequency: Frequency | None = None
    indication: str = ""
    time: Timestamp


class Discontinuation(_Row):
    pharmacy_id: int
    patient_id: str
    hadm_id: int
    reason: str
    time: Timestamp


class ResultFlag(_Row):
    labevent_id: int
    patient_id: str
    hadm_id: int
    severity: ResultSeverity
    comment: str
    time: Timestamp


class ProgressNote(_Row):
    note_id: str
    patient_id: str
    hadm_id: int
    text: str
    time: Timestamp


class Notification(_Row):
    patient_id: str
    hadm_id: int
    urgency: Urgency
    message: str
    time: Timestamp


TABLES = frozenset({"patients", "admissions", "icustays", "d_labitems", "d_items", "labevents", "chartevents",
                    "inputevents", "outputevents", "prescriptions", "scores", "notes", "formulary"})
WRITTEN = ("orders", "discontinuations", "result_flags", "progress_notes", "notifications")


@dataclass
class TableIndex:
    """Lookups over the (never changing) tables, built once per loaded database and shared by its copies;
    ``derived`` caches other values computed from the tables alone (the tables' digest, per-admission facts)."""

    patients: dict[str, PatientRow]
    admissions: dict[int, Admission]
    admissions_of: dict[str, list[Admission]]
    stays: dict[int, IcuStay]
    stays_of: dict[int, list[IcuStay]]
    lab_items: dict[int, LabItem]
    lab_names: dict[str, LabItem]
    chart_items: dict[int, ChartItem]
    chart_names: dict[str, dict[str, list[ChartItem]]]
    labevents_of: dict[int, list[LabEvent]]
    labevents: dict[int, LabEvent]
    chartevents_of: dict[int, list[ChartEvent]]
    inputevents_of: dict[int, list[InputEvent]]
    outputevents_of: dict[int, list[OutputEvent]]
    prescriptions_of: dict[int, list[PrescriptionRow]]
    scores_of: dict[int, list[ScoreRecord]]
    notes_of: dict[int, list[NoteRow]]
    formulary: dict[str, FormularyDrug]
    derived: dict[Any, Any] = field(default_factory=dict)


def _grouped(rows: list[Any], key: str, time: str) -> dict[Any, list[Any]]:
    groups: dict[Any, list[Any]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: getattr(r, time)):
        groups[getattr(row, key)].append(row)
    return dict(groups)


def _named(items: list[Any]) -> dict[str, list[Any]]:
    names: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        for name in {normalize(n) for n in (item.label, str(item.itemid), getattr(item, "abbreviation", ""),
                                            *item.aliases) if normalize(n)}:
            names[name].append(item)
    return dict(names)


class EHRManagementDB(RecordListsDB):
    """The domain's state. ``clock`` is the fixed current time of every episode (see policy.md).

    The MIMIC-shaped tables never change: tools only append to the lists in ``WRITTEN``. ``episode_copy()`` therefore
    shares the tables and copies only those lists (a reset costs microseconds), and ``get_hash()`` reuses one digest
    of the tables computed once per loaded database. Loading checks the references between tables (every event's
    admission belongs to its patient, stays to admissions, items to the dictionaries), that nothing happens after
    the clock, and that a patient has at most one admission in progress.
    """

    record_fields: ClassVar[tuple[str, ...]] = WRITTEN
    clock: Timestamp
    patients: list[PatientRow]
    admissions: list[Admission]
    icustays: list[IcuStay] = Field(default_factory=list)
    d_labitems: list[LabItem]
    d_items: list[ChartItem]
    labevents: list[LabEvent] = Field(default_factory=list)
    chartevents: list[ChartEvent] = Field(default_factory=list)
    inputevents: list[InputEvent] = Field(default_factory=list)
    outputevents: list[OutputEvent] = Field(default_factory=list)
    prescriptions: list[PrescriptionRow] = Field(default_factory=list)
    scores: list[ScoreRecord] = Field(default_factory=list)
    notes: list[NoteRow] = Field(default_factory=list)
    formulary: list[FormularyDrug] = Field(default_factory=list)
    orders: list[Order] = Field(default_factory=list)
    discontinuations: list[Discontinuation] = Field(default_factory=list)
    result_flags: list[ResultFlag] = Field(default_factory=list)
    progress_notes: list[ProgressNote] = Field(default_factory=list)
    notifications: list[Notification] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> EHRManagementDB:
        index = self.index
        problems: list[str] = []
        for kind, ids in (("patient", [p.patient_id for p in self.patients]),
                          ("admission", [a.hadm_id for a in self.admissions]),
                          ("stay", [s.stay_id for s in self.icustays]),
                          ("lab item", [i.itemid for i in self.d_labitems]),
                          ("chart item", [i.itemid for i in self.d_items]),
                          ("lab event", [e.labevent_id for e in self.labevents]),
                          ("prescription", [p.pharmacy_id for p in self.prescriptions]),
                          ("note", [n.note_id for n in self.notes])):
            if len(set(ids)) != len(ids):
                problems.append(f"duplicate {kind} ids")
        for admission in self.admissions:
            if admission.patient_id not in index.patients:
                problems.append(f"admission {admission.hadm_id}: unknown patient {admission.patient_id}")
        for patient_id, admissions in index.admissions_of.items():
            if sum(a.dischtime is None for a in admissions) > 1:
                problems.append(f"patient {patient_id} has more than one admission in progress")
        for stay in self.icustays:
            if self._owner(stay.hadm_id) != stay.patient_id:
                problems.append(f"stay {stay.stay_id}: admission {stay.hadm_id} is not patient {stay.patient_id}'s")
        for table, items in (("labevents", index.lab_items), ("chartevents", index.chart_items),
                             ("inputevents", index.chart_items), ("outputevents", index.chart_items)):
            for row in getattr(self, table):
                if row.itemid not in items:
                    problems.append(f"{table}: unknown itemid {row.itemid}")
        rows = [*self.labevents, *self.chartevents, *self.inputevents, *self.outputevents, *self.prescriptions,
                *self.scores, *self.notes]
        for row in rows:
            if self._owner(row.hadm_id) != row.patient_id:
                problems.append(f"{type(row).__name__}: admission {row.hadm_id} is not patient {row.patient_id}'s")
            stay_id = getattr(row, "stay_id", None)
            if stay_id is not None and (stay_id not in index.stays or index.stays[stay_id].hadm_id != row.hadm_id):
                problems.append(f"{type(row).__name__}: stay {stay_id} is not in admission {row.hadm_id}")
        times = [t for row in [*self.admissions, *self.icustays, *rows] for t in _times(row)]
        late = [t for t in times if t > self.clock]
        if late:
            problems.append(f"{len(late)} times after the clock {self.clock}, e.g. {late[0]}")
        if problems:
            raise ValueError("; ".join(problems[:10]))
        return self

    def _owner(self, hadm_id: int) -> str | None:
        admission = self.index.admissions.get(hadm_id)
        return admission.patient_id if admission else None

    @property
    def index(self) -> TableIndex:
        """Lookups over the tables (built on first use; shared with every episode copy)."""
        index = self._cache.get("index")
        if index is None:
            index = TableIndex(
                patients={p.patient_id: p for p in self.patients},
                admissions={a.hadm_id: a for a in self.admissions},
                admissions_of=_grouped(self.admissions, "patient_id", "admittime"),
                stays={s.stay_id: s for s in self.icustays},
                stays_of=_grouped(self.icustays, "hadm_id", "intime"),
                lab_items={i.itemid: i for i in self.d_labitems},
                lab_names={name: items[0] for name, items in _named(self.d_labitems).items()},
                chart_items={i.itemid: i for i in self.d_items},
                chart_names={table: _named([i for i in self.d_items if i.linksto == table])
                             for table in ("chartevents", "inputevents", "outputevents")},
                labevents_of=_grouped(self.labevents, "hadm_id", "charttime"),
                labevents={e.labevent_id: e for e in self.labevents},
                chartevents_of=_grouped(self.chartevents, "hadm_id", "charttime"),
                inputevents_of=_grouped(self.inputevents, "stay_id", "starttime"),
                outputevents_of=_grouped(self.outputevents, "stay_id", "charttime"),
                prescriptions_of=_grouped(self.prescriptions, "hadm_id", "starttime"),
                scores_of=_grouped(self.scores, "stay_id", "charttime"),
                notes_of=_grouped(self.notes, "hadm_id", "charttime"),
                formulary={normalize(n): d for d in self.formulary for n in (d.name, *d.aliases)})
            self._cache["index"] = index
        return index

    def get_hash(self) -> str:
        derived = self.index.derived
        if "tables_digest" not in derived:
            derived["tables_digest"] = hashlib.sha256(self.model_dump_json(include=set(TABLES)).encode()).hexdigest()
        written = self.model_dump_json(exclude=set(TABLES))
        return hashlib.sha256(f"{derived['tables_digest']}:{written}".encode()).hexdigest()


def _times(row: BaseModel) -> list[str]:
    return [v for k, v in row if isinstance(v, str) and k in ("admittime", "dischtime", "intime", "outtime",
                                                                 "charttime", "starttime", "endtime", "stoptime")]
