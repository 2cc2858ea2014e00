"""Psychiatry-v1: assess a patient's mental state and risk, apply rating scales to their responses, manage
psychotropic safety, and decide the plan through tools.

Entry points (tau2-bench layout): ``get_environment(db=None, **kwargs)`` and ``get_tasks(split=None)``.
"""

from __future__ import annotations

from typing import Any

from clinical_gym.drugs import reference
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
from clinical_gym.domains.psychiatry.data_model import ENHANCED_OBSERVATION, ESCALATING_DISPOSITIONS, PsychiatryDB
from clinical_gym.domains.psychiatry.tools import PsychiatryTools
from clinical_gym.domains.records import allergy_facts, vital_facts
from clinical_gym.domains.shared_toolkits import BundledDomain
from clinical_gym.tools import Toolkit

BUNDLED = BundledData("clinical_gym.domains.psychiatry", PsychiatryDB)
bundled_db = BUNDLED.bundled_db
get_tasks = BUNDLED.get_tasks

REVIEWS: dict[str, frozenset[ReviewCategory]] = {
    "get_psychiatric_presentation": frozenset({"demographics", "history"}),
    "get_psychiatric_history": frozenset({"history", "notes"}),
    "get_medication_record": frozenset({"medications", "allergies"}),
    "check_prescribing_safety": frozenset({"medications", "allergies"}),
    "get_investigations": frozenset({"labs"}),
    "order_investigation": frozenset({"labs"}),
    "get_prior_scores": frozenset({"history"}),
    "get_physical_observations": frozenset({"vitals"}),
    "perform_mental_state_exam": frozenset({"history"}),
    "screen_suicide_risk": frozenset({"history"}),
    "assess_risk_to_others": frozenset({"history"}),
    "score_phq9_responses": frozenset({"history"}),
    "score_gad7_responses": frozenset({"history"}),
    "screen_substance_use": frozenset({"history"}),
}
DRUG_ARGUMENT_TOOLS = ("write_prescription", "withhold_medication", "check_prescribing_safety",
                       "lookup_psychotropic_side_effects")


def escalation_text(name: str, arguments: dict[str, Any]) -> str | None:
    """What a successful WRITE call amounts to as an escalation of care (None: it is not one): an admission, a
    Mental Health Act assessment, an emergency department transfer, or enhanced (continuous) observation."""
    if name == "arrange_disposition" and arguments["disposition"] in ESCALATING_DISPOSITIONS:
        return f"{arguments['disposition']}: {arguments['reason']}"
    if name == "set_observation_level" and arguments["level"] in ENHANCED_OBSERVATION:
        return f"enhanced observation ({arguments['level']}): {arguments['reason']}"
    return None


class PsychiatryEnv(BundledDomain, ToolDomainEnv):
    """Psychiatry-v1: a psychiatrist agent assesses a patient through tools (presentation, psychiatric and medical
    history, medications and allergies, investigations, prior scores, observations, the mental state examination,
    Columbia-style suicide screening, risk to others, the PHQ-9 and GAD-7 scored from the patient's responses,
    AUDIT-C / CAGE / DAST-10 substance-use screening, psychotropic side-effect profiles and a prescribing safety
    check; Hunter criteria, lithium level and clozapine blood-count calculators), acts (investigations,
    prescriptions, withholding medications, safety plans, observation levels, dispositions, referrals, diagnoses,
    notes) and submits an answer or option letter. The shared scoring instruments (PHQ-9, GAD-7, AUDIT-C, CIWA-Ar,
    ...) and knowledge search are mounted too.

    Safety: a task's suicide red flags require ``screen_suicide_risk`` (skipping it is the severity-5
    ``suicide_risk_screening_skipped``). Escalation of care is an admission, a Mental Health Act assessment, an
    emergency department transfer or enhanced observation; the last disposition decides where the patient goes,
    so a final community disposition (discharge, outpatient follow-up, crisis team) cancels every escalation of the
    episode, and enhanced observation counts only while it is the patient's latest level. Prescriptions feed the
    allergy, interaction, pregnancy, renal, QTc and age detectors.

    Spaces, starting state, rewards, episode end, information and the common arguments are those of
    ``ToolDomainEnv``. Domain argument: ``knowledge`` ("bundled", a ``knowledge_base.PassageSearch``, or None; see
    ``clinical_gym.domains.shared_toolkits``). ``gym.make("Psychiatry-v1", knowledge=None, split="train")``.
    """

    bundled = BUNDLED
    review_categories = REVIEWS
    can_document = True
    task_generator = "clinical_gym.domains.psychiatry.generator:PsychiatryGenerator"

    def domain_toolkit(self, db: PsychiatryDB) -> Toolkit:  # type: ignore[override]
        return PsychiatryTools(db)

    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tools: PsychiatryTools = self.domain_tools  # type: ignore[assignment]
        canonical = with_patient_id(arguments)
        if name in ("order_investigation", "get_investigations") and isinstance(canonical.get("test"), str):
            canonical["test"] = tools.find_test(canonical["test"]).name
        if name in DRUG_ARGUMENT_TOOLS and isinstance(canonical.get("drug"), str):
            drug = reference().find(canonical["drug"])  # None: a non-formulary current medication (withhold_medication)
            canonical["drug"] = drug.name if drug is not None else canonical["drug"].strip()
        return canonical

    def patient_facts(self, db: PsychiatryDB, task: Task) -> PatientFacts | None:  # type: ignore[override]
        patient = db.patients.get(task.patient_id) if task.patient_id else None
        if patient is None:
            return None
        labs, flags = {}, {}
        for result in PsychiatryTools(db).results(patient):
            key = db.tests[result.test].key
            if key and result.value is not None:
                labs[key], flags[key] = result.value, result.flag
        latest = patient.vitals[-1]
        return PatientFacts(
            patient_id=patient.patient_id, age=patient.age, sex=patient.sex, pregnant=patient.pregnant,
            gestation_weeks=patient.gestation_weeks, weight_kg=patient.weight_kg,
            allergies=allergy_facts(patient.allergies),
            medications=[m.name for m in patient.medications],
            conditions=[*patient.psychiatric_history, *patient.medical_history],
            labs=labs, lab_flags=flags, vitals=vital_facts(latest))

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        pid = self.task.patient_id
        mine = [(c.name, c.arguments, c.index) for c in calls if c.ok and c.arguments.get("patient_id") == pid]
        placements = [a["disposition"] for name, a, _ in mine if name == "arrange_disposition"]
        stays = not placements or placements[-1] in ESCALATING_DISPOSITIONS
        levels = [a["level"] for name, a, _ in mine if name == "set_observation_level"]
        observed = bool(levels) and levels[-1] in ENHANCED_OBSERVATION
        escalations = [Act(text=text, call_index=i) for name, a, i in mine
                       if (text := escalation_text(name, a)) is not None
                       and (name != "set_observation_level" or observed)] if stays else []
        return ClinicalActions(
            prescriptions=[prescription(a["drug"], a["dose"], a["unit"], a["frequency"], a["route"], i,
                                        indication=a.get("indication") or "")
                           for name, a, i in mine if name == "write_prescription"],
            orders=[Act(text=a["test"], call_index=i) for name, a, i in mine if name == "order_investigation"],
            diagnoses=[Act(text=a["diagnosis"], call_index=i) for name, a, i in mine
                       if name == "record_psychiatric_diagnosis"],
            notes=[Act(text=a["note"], call_index=i) for name, a, i in mine if name == "write_psychiatric_note"],
            escalations=escalations)


def get_environment(db: PsychiatryDB | None = None, **kwargs: Any) -> PsychiatryEnv:
    """A Psychiatry environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return PsychiatryEnv(db=db, **kwargs)
