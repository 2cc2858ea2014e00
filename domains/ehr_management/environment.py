"""EHRManagement-v1: answer questions from MIMIC-shaped hospital records through tools (exact retrieval, trends,
scores), document, order and escalate, and submit.

Entry points (tau2-bench layout): ``get_environment(db=None, **kwargs)`` and ``get_tasks(split=None)``.
"""

from __future__ import annotations

from typing import Any

from clinical_gym.cases.schema import normalize
from clinical_gym.rewards.episode import (
    Act,
    CallRecord,
    ClinicalActions,
    PatientFacts,
    ReviewCategory,
)
from clinical_gym.tool_env.env import ToolDomainEnv
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.bundled import BundledData
from clinical_gym.domains.dosing import prescription
from clinical_gym.domains.ehr_management.data_model import DOSES_PER_DAY, Admission, EHRManagementDB
from clinical_gym.domains.ehr_management.tools import EHRManagementTools, parse_window_time
from clinical_gym.domains.lookups import with_patient_id
from clinical_gym.domains.records import allergy_facts
from clinical_gym.domains.shared_toolkits import BundledDomain
from clinical_gym.tools import Toolkit

BUNDLED = BundledData("clinical_gym.domains.ehr_management", EHRManagementDB)
bundled_db = BUNDLED.bundled_db
get_tasks = BUNDLED.get_tasks

# itemid -> (canonical lab key of clinical_gym.rewards.episode, factor from the record's unit to the key's unit)
LAB_KEYS: dict[int, tuple[str, float]] = {
    50971: ("potassium", 1.0), 50983: ("sodium", 1.0), 50931: ("glucose", 1 / 18.016), 51222: ("haemoglobin", 1.0),
    51265: ("platelets", 1.0), 51237: ("inr", 1.0), 50813: ("lactate", 1.0), 50820: ("ph", 1.0),
    50912: ("creatinine", 88.4), 51301: ("wbc", 1.0), 50889: ("crp", 1.0), 50882: ("bicarbonate", 1.0),
    50885: ("bilirubin", 17.1), 50818: ("pco2", 1.0), 50821: ("po2", 1.0), 51006: ("urea_nitrogen", 1.0),
}
# chart itemid -> canonical vital key
VITAL_KEYS: dict[int, str] = {
    223762: "temperature_c", 220045: "heart_rate", 220179: "systolic_bp", 220050: "systolic_bp",
    220180: "diastolic_bp", 220051: "diastolic_bp", 220210: "respiratory_rate", 220277: "spo2",
}
REVIEWS: dict[str, frozenset[ReviewCategory]] = {
    "get_patient": frozenset({"demographics", "allergies"}), "list_admissions": frozenset({"history"}),
    "get_admission": frozenset({"history"}), "get_icu_stays": frozenset({"history"}),
    "query_lab_events": frozenset({"labs"}), "get_latest_lab": frozenset({"labs"}),
    "get_lab_trend": frozenset({"labs"}), "query_vital_events": frozenset({"vitals"}),
    "query_infusions": frozenset({"vitals"}), "calculate_fluid_balance": frozenset({"vitals"}),
    "get_medication_orders": frozenset({"medications"}), "get_clinical_notes": frozenset({"notes"}),
    "get_clinical_scores": frozenset({"labs", "vitals"}), "compute_sofa": frozenset({"labs", "vitals"}),
}
ITEM_TOOLS = frozenset({"query_lab_events", "get_latest_lab", "get_lab_trend"})
TIME_ARGUMENTS = ("start", "end")


def task_admission(db: EHRManagementDB, patient_id: str) -> Admission | None:
    """The admission a task about ``patient_id`` concerns: the one in progress, else the most recent."""
    admissions = db.index.admissions_of.get(patient_id, [])
    return next((a for a in admissions if a.dischtime is None), admissions[-1] if admissions else None)


def recorded_facts(db: EHRManagementDB, hadm_id: int) -> dict[str, Any]:
    """The admission's latest results in canonical keys and units (with their flags), latest vital signs and
    weight: ``PatientFacts`` fields that depend on the tables alone (computed once per admission)."""
    key = ("facts", hadm_id)
    facts = db.index.derived.get(key)
    if facts is None:
        latest = {}
        for event in db.index.labevents_of.get(hadm_id, []):
            name, factor = LAB_KEYS.get(event.itemid, (normalize(db.index.lab_items[event.itemid].label).replace(
                " ", "_"), 1.0))
            latest[name] = (event.valuenum * factor, event.flag)
        facts = {"labs": {k: v for k, (v, _) in latest.items()}, "lab_flags": {k: f for k, (_, f) in latest.items()},
                 "vitals": {VITAL_KEYS[e.itemid]: e.valuenum for e in db.index.chartevents_of.get(hadm_id, [])
                            if e.itemid in VITAL_KEYS and e.valuenum is not None},
                 "weight_kg": EHRManagementTools(db).latest_weight(hadm_id)}
        db.index.derived[key] = facts
    return facts


class EHRManagementEnv(BundledDomain, ToolDomainEnv):
    """EHRManagement-v1: a clinician agent works MIMIC-shaped hospital records through tools (patients, admissions,
    ICU stays, lab and chart events, infusions, medication orders, notes and recorded scores; SOFA and fluid balance
    from the record; unit conversion and the anion gap; orders, discontinued medications, result flags, progress
    notes and care-team notifications), with the shared scoring instruments and knowledge search, then submits an
    exact value, an interpretation or an option letter.

    Spaces, starting state, rewards, episode end, information and the common arguments are those of
    ``ToolDomainEnv``. The task's patient is graded on the admission in progress (``task_admission``): its latest
    results (converted to the canonical units of ``clinical_gym.rewards.episode``), latest vital signs, coded
    diagnoses and active medications. Domain argument: ``knowledge`` ("bundled", a ``knowledge_base.PassageSearch``,
    or None; see ``clinical_gym.domains.shared_toolkits``). ``gym.make("EHRManagement-v1", knowledge=None, split="train")``.
    """

    bundled = BUNDLED
    review_categories = REVIEWS
    record_ids = {"patient_id": "patients", "hadm_id": "admissions", "stay_id": "icustays",
                  "labevent_id": "labevents", "pharmacy_id": "prescriptions"}
    can_document = True
    task_generator = "clinical_gym.domains.ehr_management.generator:EHRManagementGenerator"

    def domain_toolkit(self, db: EHRManagementDB) -> Toolkit:  # type: ignore[override]
        return EHRManagementTools(db)


    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tools: EHRManagementTools = self.domain_tools  # type: ignore[assignment]
        canonical = with_patient_id(arguments)
        for key in TIME_ARGUMENTS:
            if isinstance(canonical.get(key), str):
                canonical[key] = parse_window_time(canonical[key], key)
        item = canonical.get("item")
        if isinstance(item, str):
            if name in ITEM_TOOLS or (name == "place_order" and canonical.get("order_type") == "lab"):
                canonical["item"] = tools.find_lab_item(item).label
            elif name == "place_order":
                canonical["item"] = tools.find_drug(item)
            elif name in ("query_vital_events", "query_infusions"):
                found = tools.find_chart_items(item, "chartevents" if name == "query_vital_events" else "inputevents")
                canonical["item"] = found[0].label if len(found) == 1 else normalize(item)
        return canonical

    def patient_facts(self, db: EHRManagementDB, task: Task) -> PatientFacts | None:  # type: ignore[override]
        patient = db.index.patients.get(task.patient_id) if task.patient_id else None
        admission = task_admission(db, patient.patient_id) if patient else None
        if patient is None or admission is None:
            return None
        tools = EHRManagementTools(db)
        return PatientFacts(
            patient_id=patient.patient_id, age=patient.anchor_age,
            sex="female" if patient.gender == "F" else "male",
            allergies=allergy_facts(patient.allergies),
            medications=[r.drug for r in tools.active_medications(admission.hadm_id)],
            conditions=[d.long_title for d in admission.diagnoses], **recorded_facts(db, admission.hadm_id))

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        pid = self.task.patient_id
        mine = [(c.name, c.arguments, c.index) for c in calls if c.ok and c.arguments.get("patient_id") == pid]
        medications = [(a, i) for name, a, i in mine if name == "place_order" and a["order_type"] == "medication"]
        flags = [(a, i) for name, a, i in mine if name == "flag_abnormal_result"]
        return ClinicalActions(
            prescriptions=[prescription(a["item"], a["dose"], a["dose_unit"], a["frequency"], a["route"], i,
                                        DOSES_PER_DAY, indication=a.get("indication") or "")
                           for a, i in medications],
            orders=[Act(text=a["item"], call_index=i) for name, a, i in mine
                    if name == "place_order" and a["order_type"] == "lab"],
            notes=[Act(text=a["text"], call_index=i) for name, a, i in mine if name == "write_progress_note"]
            + [Act(text=self._flag_text(a), call_index=i) for a, i in flags],
            escalations=[Act(text=f"{a['urgency']}: {a['message']}", call_index=i) for name, a, i in mine
                         if name == "notify_care_team"])

    def _flag_text(self, arguments: dict[str, Any]) -> str:
        """A result flag in words: the test, its value and the flagger's comment."""
        event = self.db.index.labevents[arguments["labevent_id"]]
        label = self.db.index.lab_items[event.itemid].label
        return f"{label} {event.valuenum:g} {event.valueuom} flagged {arguments['severity']}: {arguments['comment']}"


def get_environment(db: EHRManagementDB | None = None, **kwargs: Any) -> EHRManagementEnv:
    """An EHRManagement environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return EHRManagementEnv(db=db, **kwargs)
