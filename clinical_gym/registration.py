"""Registered environment ids, with string entry points so registering imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from gymnasium.envs.registration import register, registry


@dataclass(frozen=True)
class EnvInfo:
    """What ``clinical-gym envs`` lists for one id."""

    id: str
    entry_point: str
    family: str
    description: str

    @property
    def domain(self) -> str:
        """The ``clinical_gym.domains`` package the environment lives in (``triage``, ``pathways``, ...)."""
        module = self.entry_point.split(":")[0]
        prefix = "clinical_gym.domains."
        return module[len(prefix):].split(".")[0] if module.startswith(prefix) else ""


ENVIRONMENTS: tuple[EnvInfo, ...] = (
    EnvInfo("ClinicalInquiry-v1", "clinical_gym.domains.inquiry.environment:ClinicalInquiryEnv", "inquiry",
            "Interview a simulated patient who reveals facts only when asked, then diagnose and recommend (DoctorAgent-RL, Doctor-R1)."),
    EnvInfo("DiagnosticWorkup-v1", "clinical_gym.domains.workup.environment:DiagnosticWorkupEnv", "workup",
            "Order examinations one at a time from an EHR world model that returns realistic results, then diagnose (DiagGym)."),
    EnvInfo("ClinicalDiagnosis-v1", "clinical_gym.domains.clinical_diagnosis.environment:ClinicalDiagnosisEnv", "tool",
            "Review a patient's chart through tools, order tests, prescribe safely, diagnose and submit (Healthcare AI GYM)."),
    EnvInfo("Triage-v1", "clinical_gym.domains.triage.environment:TriageEnv", "tool",
            "Triage arriving ED patients with the Emergency Severity Index: act on emergencies, activate codes, assign ESI 1-5 (Healthcare AI GYM)."),
    EnvInfo("EHRManagement-v1", "clinical_gym.domains.ehr_management.environment:EHRManagementEnv", "tool",
            "Retrieve exact values, read trends, compute scores and act on results in MIMIC-shaped hospital records through tools (Healthcare AI GYM)."),
    EnvInfo("DrugInteraction-v1", "clinical_gym.domains.drug_interaction.environment:DrugInteractionEnv", "tool",
            "Check interactions, CYP450 metabolism, renal dosing and allergy cross-reactivity through tools, then act and advise (Healthcare AI GYM)."),
    EnvInfo("MedicalQA-v1", "clinical_gym.domains.medical_qa.environment:MedicalQAEnv", "tool",
            "Answer multiple-choice clinical vignette questions with the question bank, reference ranges, guideline summaries and option elimination, then submit the letter (Healthcare AI GYM)."),
    EnvInfo("ClinicalPathway-v1", "clinical_gym.domains.pathways.environment:ClinicalPathwayEnv", "tool",
            "Take one patient through a multi-phase pathway (chest pain, diabetic emergency, stroke, sepsis, post-operative, febrile child): each phase opens its domain's tools, with hand-overs and time limits, graded per phase and overall (Healthcare AI GYM)."),
    EnvInfo("Obstetrics-v1", "clinical_gym.domains.obstetrics.environment:ObstetricsEnv", "tool",
            "Date pregnancies, classify fetal heart tracings, treat hypertensive disorders, stage postpartum haemorrhage and prescribe safely in pregnancy and breastfeeding through tools (Healthcare AI GYM)."),
    EnvInfo("RadiologyReport-v1", "clinical_gym.domains.radiology_report.environment:RadiologyReportEnv", "tool",
            "Report imaging studies from structured findings and priors in the modality's template, communicate critical results with read-back before signing, and apply follow-up rules for incidental findings (Healthcare AI GYM)."),
    EnvInfo("Psychiatry-v1", "clinical_gym.domains.psychiatry.environment:PsychiatryEnv", "tool",
            "Screen suicide risk, score PHQ-9/GAD-7 and substance use, examine the mental state, manage psychotropic side effects and safety plans, and decide the disposition through tools (Healthcare AI GYM)."),
    EnvInfo("VisualDiagnosis-v0", "clinical_gym.domains.visual_diagnosis.environment:VisualDiagnosisEnv", "tool",
            "Read generated ECGs, rhythm strips, cardiotocographs, spirometry and audiograms (images as OpenAI content parts, or described in text), act on emergencies and diagnose through tools (Healthcare AI GYM)."),
)


def register_all() -> None:
    """Register every clinical-gym id with gymnasium (idempotent)."""
    for env in ENVIRONMENTS:
        if env.id not in registry:
            register(id=env.id, entry_point=env.entry_point)


def env_ids() -> list[str]:
    return [e.id for e in ENVIRONMENTS]


def env_family(env_id: str) -> str:
    """The family of a registered id: "inquiry", "workup" or "tool" (every tool domain); ``ValueError`` names an
    unknown id."""
    for env in ENVIRONMENTS:
        if env.id == env_id:
            return "tool" if env.family in ("tool", "tools") else env.family
    raise ValueError(f"unknown environment {env_id!r}; run 'clinical-gym envs' to list them")
