"""Obstetrics-v1: date pregnancies, read fetal heart-rate tracings, recognise and treat hypertensive disorders of
pregnancy, stage and manage postpartum haemorrhage, plan induction and delivery, and prescribe safely in pregnancy
and breastfeeding, through tools.

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
from clinical_gym.domains.lookups import with_patient_id
from clinical_gym.domains.obstetrics.data_model import DOSES_PER_DAY, ObstetricsDB
from clinical_gym.domains.obstetrics.tools import ObstetricsTools, clock_date, gestation_today
from clinical_gym.domains.records import allergy_facts, vital_facts
from clinical_gym.domains.shared_toolkits import BundledDomain
from clinical_gym.tools import Toolkit

BUNDLED = BundledData("clinical_gym.domains.obstetrics", ObstetricsDB)
bundled_db = BUNDLED.bundled_db
get_tasks = BUNDLED.get_tasks
NOT_AN_ESCALATION = "maternal-fetal medicine referral"

REVIEWS: dict[str, frozenset[ReviewCategory]] = {
    "get_patient_info": frozenset({"demographics"}),
    "get_obstetric_history": frozenset({"history"}),
    "get_medications_and_allergies": frozenset({"allergies", "medications"}),
    "get_vital_signs": frozenset({"vitals"}),
    "get_prenatal_labs": frozenset({"labs"}),
    "order_test": frozenset({"labs"}),
    "get_ultrasound_reports": frozenset({"labs"}),
    "get_fetal_heart_tracing": frozenset({"vitals"}),
    "get_labour_record": frozenset({"history"}),
    "get_clinical_notes": frozenset({"notes"}),
}


def escalation_text(name: str, arguments: dict[str, Any]) -> str | None:
    """What a successful WRITE call amounts to as an escalation of care (None: it is not one): an escalation other
    than a clinic referral, a haemorrhage protocol activation, or an immediate delivery."""
    if name == "escalate_care" and arguments["level"] != NOT_AN_ESCALATION:
        return f"{arguments['level']}: {arguments['reason']}"
    if name == "activate_haemorrhage_protocol":
        return f"obstetric haemorrhage protocol stage {arguments['stage']}: {arguments['reason']}"
    if name == "plan_delivery" and arguments["urgency"] == "immediate":
        return f"immediate {arguments['mode']}: {arguments['reason']}"
    return None


class ObstetricsEnv(BundledDomain, ToolDomainEnv):
    """Obstetrics-v1: an obstetric clinician agent works antenatal, labour-ward and postnatal cases through tools:
    the obstetric record (presentation, obstetric history, medications and allergies, vital signs, prenatal labs,
    ultrasound reports, fetal heart-rate tracings, the labour and birth record, notes), the unit protocol and a
    pregnancy and lactation drug reference; calculators for gestational age and due date, the NICHD fetal heart-rate
    category, hypertensive disorders of pregnancy and postpartum haemorrhage stage (the shared ``bishop_score`` and
    ``apgar`` instruments, the other scoring instruments and knowledge search are mounted too); and actions: tests,
    prescriptions (magnesium sulfate, antihypertensives, uterotonics, ...), stopping a medication, bedside
    interventions, escalation, the obstetric haemorrhage protocol, the delivery plan and notes. It submits the
    option letter (or the short answer) the ticket asks for.

    Safety: escalation is an action (an escalation call other than a clinic referral, activating the haemorrhage
    protocol, or an immediate delivery plan). The patient's record reaches the safety rules with pregnancy,
    gestation, "postpartum" and "breastfeeding" as facts, so the teratogen, ergot-in-hypertension,
    carboprost-in-asthma, untreated severe hypertension, withheld magnesium and codeine-in-breastfeeding rules apply.

    Spaces, starting state, rewards, episode end, information and the common arguments are those of
    ``ToolDomainEnv``. Domain argument: ``knowledge`` ("bundled", a ``knowledge_base.PassageSearch``, or None; see
    ``clinical_gym.domains.shared_toolkits``). ``gym.make("Obstetrics-v1", knowledge=None, split="train")``.
    """

    bundled = BUNDLED
    review_categories = REVIEWS
    can_document = True
    task_generator = "clinical_gym.domains.obstetrics.generator:ObstetricsGenerator"

    def domain_toolkit(self, db: ObstetricsDB) -> Toolkit:  # type: ignore[override]
        # One toolkit per env, pointed at each episode's database: its bound tools are built once, not per reset.
        tools: ObstetricsTools | None = self.__dict__.get("_obstetrics_tools")
        if tools is None:
            tools = self.__dict__["_obstetrics_tools"] = ObstetricsTools(db)
        tools.db = db
        return tools

    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tools: ObstetricsTools = self.domain_tools  # type: ignore[assignment]
        canonical = with_patient_id(arguments)
        if name in ("order_test", "get_prenatal_labs") and isinstance(canonical.get("test"), str):
            canonical["test"] = tools.find_test(canonical["test"])
        if name == "perform_obstetric_intervention":
            canonical["intervention"] = tools.find_intervention(canonical["intervention"])
        if isinstance(canonical.get("drug"), str):
            canonical["drug"] = tools.find_drug(canonical["drug"]).name
        return canonical

    def patient_facts(self, db: ObstetricsDB, task: Task) -> PatientFacts | None:  # type: ignore[override]
        patient = db.patients.get(task.patient_id) if task.patient_id else None
        if patient is None:
            return None
        labs, flags = {}, {}
        for result in db.patient_results(patient.patient_id):
            key = db.tests[result.test].key or normalize(result.test).replace(" ", "_")
            if result.value is not None:
                labs[key], flags[key] = result.value, result.flag
        conditions = [c.name for c in patient.conditions if c.status == "active"]
        if patient.status == "postpartum":
            conditions.append("postpartum")
        if patient.breastfeeding:
            conditions.append("breastfeeding")
        days = _gestation(db, patient.patient_id)
        latest = patient.vitals[-1]
        return PatientFacts(
            patient_id=patient.patient_id, age=patient.age, sex="female", pregnant=patient.status != "postpartum",
            gestation_weeks=round(days / 7, 1) if days is not None else None, weight_kg=patient.weight_kg,
            allergies=allergy_facts(patient.allergies),
            medications=[m.name for m in patient.medications], conditions=conditions, labs=labs, lab_flags=flags,
            vitals=vital_facts(latest))

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        pid = self.task.patient_id
        mine = [(c.name, c.arguments, c.index) for c in calls if c.ok and c.arguments.get("patient_id") == pid]
        return ClinicalActions(
            prescriptions=[prescription(a["drug"], a["dose"], a["unit"], a["frequency"], a["route"], i, DOSES_PER_DAY,
                                        indication=a.get("indication") or "")
                           for name, a, i in mine if name == "prescribe_medication"],
            orders=[Act(text=a["test"], call_index=i) for name, a, i in mine if name == "order_test"],
            notes=[Act(text=a["note"], call_index=i) for name, a, i in mine if name == "write_clinical_note"],
            escalations=[Act(text=text, call_index=i) for name, a, i in mine
                         if (text := escalation_text(name, a)) is not None])


def _gestation(db: ObstetricsDB, patient_id: str) -> int | None:
    """The patient's gestation today in days (cached: patients and the clock never change)."""
    cache: dict[str, int | None] = db.shared("gestation", dict)
    if patient_id not in cache:
        cache[patient_id] = gestation_today(db.patients[patient_id], clock_date(db.clock))
    return cache[patient_id]


def get_environment(db: ObstetricsDB | None = None, **kwargs: Any) -> ObstetricsEnv:
    """An Obstetrics environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return ObstetricsEnv(db=db, **kwargs)
