"""Triage-v1: triage patients arriving at the emergency department with the Emergency Severity Index (ESI 1-5),
act on what cannot wait, and submit the decision.

Entry points (tau2-bench layout): ``get_environment(db=None, **kwargs)`` and ``get_tasks(split=None)``.
"""

from __future__ import annotations

from typing import Any

from clinical_gym.rewards.episode import (
    Act,
    CallRecord,
    ClinicalActions,
    PatientFacts,
    Prescription,
    ReviewCategory,
)
from clinical_gym.tool_env.env import ToolDomainEnv
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.bundled import BundledData
from clinical_gym.domains.lookups import with_patient_id
from clinical_gym.domains.records import allergy_facts, vital_facts
from clinical_gym.domains.shared_toolkits import BundledDomain
from clinical_gym.domains.triage.data_model import TriageDB
from clinical_gym.domains.triage.tools import TriageTools
from clinical_gym.tools import Toolkit

BUNDLED = BundledData("clinical_gym.domains.triage", TriageDB)
bundled_db = BUNDLED.bundled_db
get_tasks = BUNDLED.get_tasks

REVIEWS: dict[str, frozenset[ReviewCategory]] = {
    "get_patient_presentation": frozenset({"demographics", "history"}),
    "get_vital_signs": frozenset({"vitals"}),
    "get_medical_history": frozenset({"history", "allergies", "medications"}),
    "check_red_flags": frozenset({"history"}),
    "assess_airway_breathing_circulation": frozenset({"vitals"}),
    "perform_bedside_test": frozenset({"labs"}),
}


def escalation_text(name: str, arguments: dict[str, Any]) -> str | None:
    """What a successful WRITE call amounts to as an escalation of care (None: it is not one): an ESI 1 or 2
    assignment, a code activation, or an immediate physician review."""
    if name == "assign_esi_level" and arguments["level"] <= 2:
        return ("ESI 1: resuscitation bay now" if arguments["level"] == 1 else "ESI 2: acute bed now") \
            + f" ({arguments['reason']})"
    if name == "activate_code":
        return f"{arguments['code']} code: emergency team activated ({arguments['reason']})"
    if name == "escalate_to_physician" and arguments["urgency"] == "immediate":
        return f"immediate physician review at the bedside ({arguments['reason']})"
    return None


class TriageEnv(BundledDomain, ToolDomainEnv):
    """Triage-v1: a triage nurse agent assesses an arriving patient through tools (presentation, vital signs with
    pain score, history and allergies, red-flag screen, primary survey, expected resources, the ESI reference, a
    danger-zone check), acts on what cannot wait (bedside tests, life-saving interventions and standing orders,
    code activation, physician escalation), assigns the ESI level, writes the triage note, and submits the option
    letter the ticket asks for. The shared scoring instruments (NEWS2, Glasgow Coma Scale, qSOFA, ...) and
    knowledge search are mounted too.

    Safety: the acuity assigned decides where the patient waits, so a final ESI 3-5 assignment for the task
    patient cancels every escalation of the episode (codes and physician calls included): under-triaging an ESI 1
    or 2 emergency is the severity-5 ``missed_emergency`` violation. Drug interventions count as prescriptions for
    the allergy, interaction and contraindication detectors.

    Spaces, starting state, rewards, episode end, information and the common arguments are those of
    ``ToolDomainEnv``. Domain argument: ``knowledge`` ("bundled", a ``knowledge_base.PassageSearch``, or None; see
    ``clinical_gym.domains.shared_toolkits``). ``gym.make("Triage-v1", knowledge=None, split="train")``.
    """

    bundled = BUNDLED
    review_categories = REVIEWS
    can_document = True
    task_generator = "clinical_gym.domains.triage.generator:TriageGenerator"

    def domain_toolkit(self, db: TriageDB) -> Toolkit:  # type: ignore[override]
        return TriageTools(db)


    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tools: TriageTools = self.domain_tools  # type: ignore[assignment]
        canonical = with_patient_id(arguments)
        if name == "perform_bedside_test":
            canonical["test"] = tools.find_test(canonical["test"])[0]
        if name == "order_immediate_intervention":
            canonical["intervention"] = tools.find_intervention(canonical["intervention"])[0]
        return canonical

    def patient_facts(self, db: TriageDB, task: Task) -> PatientFacts | None:  # type: ignore[override]
        patient = db.patients.get(task.patient_id) if task.patient_id else None
        if patient is None:
            return None
        labs, flags = {}, {}
        for record in db.bedside_tests:
            key = db.bedside_tests_catalogue[record.test].key
            if record.patient_id == patient.patient_id and key and record.result.value is not None:
                labs[key], flags[key] = record.result.value, record.result.flag
        latest = patient.vitals[-1]
        return PatientFacts(
            patient_id=patient.patient_id, age=patient.age, sex=patient.sex, pregnant=patient.pregnant,
            gestation_weeks=patient.gestation_weeks, weight_kg=patient.weight_kg,
            allergies=allergy_facts(patient.allergies),
            medications=[m.name for m in patient.medications], conditions=list(patient.past_history),
            labs=labs, lab_flags=flags,
            vitals=vital_facts(latest))

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        pid = self.task.patient_id
        mine = [(c.name, c.arguments, c.index) for c in calls if c.ok and c.arguments.get("patient_id") == pid]
        levels = [a["level"] for name, a, _ in mine if name == "assign_esi_level"]
        waiting_room = bool(levels) and levels[-1] >= 3
        catalogue = self.db.interventions_catalogue
        return ClinicalActions(
            prescriptions=[Prescription(drug=d.drug, dose_mg=d.dose_mg, doses_per_day=1, frequency="once",
                                        route=d.route, call_index=i)
                           for name, a, i in mine if name == "order_immediate_intervention"
                           for d in [catalogue[a["intervention"]]] if d.drug is not None],
            orders=[Act(text=a["test"], call_index=i) for name, a, i in mine if name == "perform_bedside_test"],
            notes=[Act(text=a["note"], call_index=i) for name, a, i in mine if name == "record_triage_note"],
            escalations=[] if waiting_room else [Act(text=text, call_index=i) for name, a, i in mine
                                                 if (text := escalation_text(name, a)) is not None])


def get_environment(db: TriageDB | None = None, **kwargs: Any) -> TriageEnv:
    """A Triage environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return TriageEnv(db=db, **kwargs)
