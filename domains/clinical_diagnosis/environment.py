"""ClinicalDiagnosis-v1: review a patient's chart through tools, order tests, prescribe safely, diagnose, and submit.

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
from clinical_gym.domains.clinical_diagnosis.data_model import ClinicalDiagnosisDB, Patient
from clinical_gym.domains.clinical_diagnosis.tools import ClinicalDiagnosisTools
from clinical_gym.domains.dosing import prescription
from clinical_gym.domains.lookups import with_patient_id
from clinical_gym.domains.records import allergy_facts
from clinical_gym.domains.shared_toolkits import BundledDomain
from clinical_gym.tools import Toolkit
from clinical_gym.tools.trusted import trusted

BUNDLED = BundledData("clinical_gym.domains.clinical_diagnosis", ClinicalDiagnosisDB)
bundled_db = BUNDLED.bundled_db
get_tasks = BUNDLED.get_tasks

# Catalogue test name -> canonical lab key of clinical_gym.rewards.episode (others: their normalised name).
LAB_KEYS = {"White cell count": "wbc", "Venous blood gas pH": "ph", "Adjusted calcium": "calcium", "QTc": "qtc",
            "D-dimer": "d_dimer", "NT-proBNP": "nt_probnp", "Free T4": "free_t4", "HbA1c": "hba1c"}

REVIEWS: dict[str, frozenset[ReviewCategory]] = {
    "get_patient_info": frozenset({"demographics"}), "get_medical_history": frozenset({"history"}),
    "get_allergies": frozenset({"allergies"}), "check_drug_allergy": frozenset({"allergies"}),
    "get_medications": frozenset({"medications"}), "check_drug_interactions": frozenset({"medications"}),
    "get_vital_signs": frozenset({"vitals"}), "get_lab_results": frozenset({"labs"}),
    "order_lab_test": frozenset({"labs"}), "get_clinical_notes": frozenset({"notes"}),
}


def lab_key(test: str) -> str:
    return LAB_KEYS.get(test, normalize(test).replace(" ", "_"))


class ClinicalDiagnosisEnv(BundledDomain, ToolDomainEnv):
    """ClinicalDiagnosis-v1: a physician agent works a patient's chart through tools (history, vital signs, results,
    allergies, medications, notes; ordering tests, prescribing, recording a diagnosis, writing notes, escalating
    care; drug allergy and interaction checks; a differential generator), with the shared scoring instruments and
    knowledge search, then submits a diagnosis, a drug, or an option letter.

    Spaces, starting state, rewards, episode end, information and the common arguments are those of
    ``ToolDomainEnv``. Domain argument: ``knowledge`` ("bundled", a ``knowledge_base.PassageSearch``, or None; see
    ``clinical_gym.domains.shared_toolkits``). ``gym.make("ClinicalDiagnosis-v1", knowledge=None, split="train")``.
    """

    bundled = BUNDLED
    review_categories = REVIEWS
    can_document = True
    task_generator = "clinical_gym.domains.clinical_diagnosis.generator:ClinicalDiagnosisGenerator"

    def domain_toolkit(self, db: ClinicalDiagnosisDB) -> Toolkit:  # type: ignore[override]
        return ClinicalDiagnosisTools(db)


    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tools: ClinicalDiagnosisTools = self.domain_tools  # type: ignore[assignment]
        canonical = with_patient_id(arguments)
        if name in ("order_lab_test", "get_lab_results") and isinstance(canonical.get("test"), str):
            canonical["test"] = tools.find_test(canonical["test"]).name
        if isinstance(canonical.get("drug"), str):
            canonical["drug"] = tools.find_drug(canonical["drug"]).name
        return canonical

    def patient_facts(self, db: ClinicalDiagnosisDB, task: Task) -> PatientFacts | None:  # type: ignore[override]
        patient = db.patients.get(task.patient_id) if task.patient_id else None
        if patient is None:
            return None
        # a record no tool changed gives the same facts every episode: built once per loaded database
        return db.unchanged_derived(patient.patient_id, "patient_facts", lambda: patient_facts(patient))

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        pid = self.task.patient_id
        # every list new and of validated records (Prescription, Act): what validation would build; filled in one
        # pass over the calls (usually none of them an action)
        actions = trusted(ClinicalActions, prescriptions=[], orders=[], diagnoses=[], notes=[], escalations=[])
        for c in calls:
            if c.ok and c.name in _ACTION_TOOLS and c.arguments.get("patient_id") == pid:
                name, a, i = c.name, c.arguments, c.index
                if name == "prescribe_medication":
                    actions.prescriptions.append(prescription(a["drug"], a["dose"], a["unit"], a["frequency"],
                                                              a["route"], i, indication=a.get("indication") or ""))
                elif name == "order_lab_test":
                    actions.orders.append(Act(text=a["test"], call_index=i))
                elif name == "record_diagnosis":
                    actions.diagnoses.append(Act(text=a["diagnosis"], call_index=i))
                elif name == "write_clinical_note":
                    actions.notes.append(Act(text=a["note"], call_index=i))
                else:  # escalate_care
                    actions.escalations.append(Act(text=f"{a['level']}: {a['reason']}", call_index=i))
        return actions


_ACTION_TOOLS = frozenset({"prescribe_medication", "order_lab_test", "record_diagnosis", "write_clinical_note",
                           "escalate_care"})  # the tools whose calls clinical_actions reads


def patient_facts(patient: Patient) -> PatientFacts:
    """One patient record in the canonical terms of ``clinical_gym.rewards.episode``."""
    latest = {}
    for result in patient.labs:
        if result.value is not None:
            latest[lab_key(result.test)] = result
    vitals = patient.vitals[-1].model_dump(include={"temperature_c", "heart_rate", "systolic_bp", "diastolic_bp",
                                                    "respiratory_rate", "spo2"}) if patient.vitals else {}
    return PatientFacts(
        patient_id=patient.patient_id, age=patient.age, sex=patient.sex, pregnant=patient.pregnant,
        gestation_weeks=patient.gestation_weeks, weight_kg=patient.weight_kg,
        allergies=allergy_facts(patient.allergies),
        medications=[m.name for m in patient.medications], conditions=[c.name for c in patient.conditions],
        labs={k: r.value for k, r in latest.items()}, lab_flags={k: r.flag for k, r in latest.items()},
        vitals=vitals)


def get_environment(db: ClinicalDiagnosisDB | None = None, **kwargs: Any) -> ClinicalDiagnosisEnv:
    """A ClinicalDiagnosis environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return ClinicalDiagnosisEnv(db=db, **kwargs)
