"""ClinicalDiagnosis-v0: review a patient's chart through tools, order tests, prescribe safely, diagnose, and submit.

Entry points (tau2-bench layout): ``get_environment(db=None, **kwargs)`` and ``get_tasks(split=None)``.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from clinical_gym.cases.schema import normalize
from clinical_gym.rewards.episode import (
    Act,
    AllergyFact,
    CallRecord,
    ClinicalActions,
    PatientFacts,
    Prescription,
    ReviewCategory,
)
from clinical_gym.tool_env import ToolDomainEnv
from clinical_gym.tool_tasks import Task, load_tasks, select_split
from domains.clinical_diagnosis.data_model import DOSES_PER_DAY, MG_PER_UNIT, ClinicalDiagnosisDB
from domains.clinical_diagnosis.tools import ClinicalDiagnosisTools
from domains.shared_toolkits import BundledDomain
from tools import Toolkit

DATA = resources.files("domains.clinical_diagnosis") / "data"

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


@lru_cache(maxsize=1)
def bundled_db() -> ClinicalDiagnosisDB:
    """The bundled database (shared, never mutated: episodes work on copies)."""
    return ClinicalDiagnosisDB.model_validate_json((DATA / "db.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _bundled_tasks() -> tuple[Task, ...]:
    return tuple(load_tasks(DATA / "tasks.json"))


def get_tasks(split: str | None = None) -> list[Task]:
    """The bundled tasks of ``split`` ("train", "test", or all for None)."""
    return select_split(list(_bundled_tasks()), split)


def lab_key(test: str) -> str:
    return LAB_KEYS.get(test, normalize(test).replace(" ", "_"))


class ClinicalDiagnosisEnv(BundledDomain, ToolDomainEnv):
    """ClinicalDiagnosis-v0: a physician agent works a patient's chart through tools (history, vital signs, results,
    allergies, medications, notes; ordering tests, prescribing, recording a diagnosis, writing notes, escalating
    care; drug allergy and interaction checks; a differential generator), with the shared scoring instruments and
    knowledge search, then submits a diagnosis, a drug, or an option letter.

    Spaces, starting state, rewards, episode end, information and the common arguments are those of
    ``ToolDomainEnv``. Domain argument: ``knowledge`` ("bundled", a ``knowledge_base.PassageSearch``, or None; see
    ``domains.shared_toolkits``). ``gym.make("ClinicalDiagnosis-v0", knowledge=None, split="train")``.
    """

    review_categories = REVIEWS
    can_document = True


    @classmethod
    def default_db(cls) -> ClinicalDiagnosisDB:
        return bundled_db()

    @classmethod
    def default_tasks(cls) -> list[Task]:
        return list(_bundled_tasks())


    def domain_toolkit(self, db: ClinicalDiagnosisDB) -> Toolkit:  # type: ignore[override]
        return ClinicalDiagnosisTools(db)


    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tools: ClinicalDiagnosisTools = self.domain_tools  # type: ignore[assignment]
        canonical = dict(arguments)
        if isinstance(canonical.get("patient_id"), str):
            canonical["patient_id"] = canonical["patient_id"].strip()
        if name in ("order_lab_test", "get_lab_results") and isinstance(canonical.get("test"), str):
            canonical["test"] = tools.find_test(canonical["test"]).name
        if isinstance(canonical.get("drug"), str):
            canonical["drug"] = tools.find_drug(canonical["drug"]).name
        return canonical

    def patient_facts(self, db: ClinicalDiagnosisDB, task: Task) -> PatientFacts | None:  # type: ignore[override]
        patient = db.patients.get(task.patient_id) if task.patient_id else None
        if patient is None:
            return None
        latest = {}
        for result in patient.labs:
            if result.value is not None:
                latest[lab_key(result.test)] = result
        vitals = patient.vitals[-1].model_dump(include={"temperature_c", "heart_rate", "systolic_bp", "diastolic_bp",
                                                        "respiratory_rate", "spo2"}) if patient.vitals else {}
        return PatientFacts(
            patient_id=patient.patient_id, age=patient.age, sex=patient.sex, pregnant=patient.pregnant,
            gestation_weeks=patient.gestation_weeks, weight_kg=patient.weight_kg,
            allergies=[AllergyFact(substance=a.substance, severity=a.severity, reaction=a.reaction)
                       for a in patient.allergies],
            medications=[m.name for m in patient.medications], conditions=[c.name for c in patient.conditions],
            labs={k: r.value for k, r in latest.items()}, lab_flags={k: r.flag for k, r in latest.items()},
            vitals=vitals)

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        pid = self.task.patient_id
        mine = [c for c in calls if c.ok and c.arguments.get("patient_id") == pid]
        args = [(c.name, c.arguments, c.index) for c in mine]
        return ClinicalActions(
            prescriptions=[Prescription(drug=a["drug"], dose_mg=_dose_mg(a), doses_per_day=DOSES_PER_DAY[a["frequency"]],
                                        frequency=a["frequency"], route=a["route"], call_index=i)
                           for name, a, i in args if name == "prescribe_medication"],
            orders=[Act(text=a["test"], call_index=i) for name, a, i in args if name == "order_lab_test"],
            diagnoses=[Act(text=a["diagnosis"], call_index=i) for name, a, i in args if name == "record_diagnosis"],
            notes=[Act(text=a["note"], call_index=i) for name, a, i in args if name == "write_clinical_note"],
            escalations=[Act(text=f"{a['level']}: {a['reason']}", call_index=i) for name, a, i in args
                         if name == "escalate_care"])


def _dose_mg(arguments: dict[str, Any]) -> float | None:
    factor = MG_PER_UNIT.get(arguments["unit"])
    return None if factor is None else float(arguments["dose"]) * factor


def get_environment(db: ClinicalDiagnosisDB | None = None, **kwargs: Any) -> ClinicalDiagnosisEnv:
    """A ClinicalDiagnosis environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return ClinicalDiagnosisEnv(db=db, **kwargs)
