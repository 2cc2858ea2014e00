"""RadiologyReport-v1: report an imaging study from its structured findings, communicate critical results with
read-back, register incidental follow-up, and sign a structured final report.

Entry points (tau2-bench layout): ``get_environment(db=None, **kwargs)`` and ``get_tasks(split=None)``.
"""

from __future__ import annotations

from typing import Any

from clinical_gym.rewards.episode import Act, CallRecord, ClinicalActions, PatientFacts, ReviewCategory
from clinical_gym.tool_env.env import ToolDomainEnv
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.bundled import BundledData
from clinical_gym.domains.lookups import with_patient_id
from clinical_gym.domains.radiology_report.data_model import RadiologyReportDB
from clinical_gym.domains.radiology_report.report_sections import impression_headline, parse_sections
from clinical_gym.domains.radiology_report.tools import VERBAL, RadiologyReportTools, canonical_accession
from clinical_gym.domains.shared_toolkits import BundledDomain
from clinical_gym.tools import Toolkit

BUNDLED = BundledData("clinical_gym.domains.radiology_report", RadiologyReportDB)
bundled_db = BUNDLED.bundled_db
get_tasks = BUNDLED.get_tasks
REPORT_TOOL = "sign_final_report"
COMMUNICATION_TOOL = "communicate_critical_finding"

REVIEWS: dict[str, frozenset[ReviewCategory]] = {
    "get_study_details": frozenset({"demographics"}),
    "get_clinical_indication": frozenset({"history"}),
    "get_structured_findings": frozenset({"labs"}),
    "get_imaging_history": frozenset({"notes"}),
    "get_prior_report": frozenset({"notes"}),
}


def task_studies(task: Task) -> set[str]:
    """The accessions the task is about: those its expected final reports name."""
    return {canonical_accession(str(a.arguments["accession"])) for a in task.expected_actions
            if a.name == REPORT_TOOL and "accession" in a.arguments}


def communication_text(arguments: dict[str, Any]) -> str:
    """A communication as an escalation of care: a critical result is an emergency call."""
    kind = "critical result called through as an emergency" if arguments["urgency"] == "critical" else \
        f"{arguments['urgency']} result communicated"
    return f"{kind} to {arguments['recipient']}: {arguments['finding']}"


class RadiologyReportEnv(BundledDomain, ToolDomainEnv):
    """RadiologyReport-v1: a reporting radiologist agent works one study from the worklist through tools (study
    details and technique, the clinical indication, structured findings, the imaging history and prior reports, the
    care team, report templates by modality, follow-up guidance, calculators for Fleischner nodule follow-up, adrenal
    nodules and interval growth), communicates results that need action with read-back, registers incidental
    follow-up, signs a structured final report (sections checked against the modality's template), and submits the
    main conclusion of its impression. The shared scoring instruments and knowledge search are mounted too.

    Safety: a study with a critical finding is an emergency; a read-back communication on the task's study (the
    ``communicate_critical_finding`` tool, telephone or in person) is its escalation. No such call is the severity-5
    ``missed_emergency`` violation; a call made only after signing the final report is ``escalation_after_sign_off``;
    writing on another patient or another study of the patient is ``write_to_wrong_patient`` /
    ``write_to_wrong_study``. The signed report counts as the episode's note, and its impression's first statement
    as the recorded diagnosis (the answer is checked against it).

    Spaces, starting state, rewards, episode end, information and the common arguments are those of
    ``ToolDomainEnv``. Domain argument: ``knowledge`` ("bundled", a ``knowledge_base.PassageSearch``, or None; see
    ``clinical_gym.domains.shared_toolkits``). ``gym.make("RadiologyReport-v1", knowledge=None, split="train")``.
    """

    bundled = BUNDLED
    review_categories = REVIEWS
    record_ids = {"patient_id": "patients", "accession": "studies"}
    can_document = True
    task_generator = "clinical_gym.domains.radiology_report.generator:RadiologyReportGenerator"

    def domain_toolkit(self, db: RadiologyReportDB) -> Toolkit:  # type: ignore[override]
        return RadiologyReportTools(db)

    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        canonical = with_patient_id(arguments)
        if isinstance(canonical.get("accession"), str):
            canonical["accession"] = canonical_accession(canonical["accession"])
        return canonical

    def patient_facts(self, db: RadiologyReportDB, task: Task) -> PatientFacts | None:  # type: ignore[override]
        patient = db.patients.get(task.patient_id) if task.patient_id else None
        if patient is None:
            return None
        return PatientFacts(patient_id=patient.patient_id, age=patient.age, sex=patient.sex,
                            pregnant=patient.pregnant, conditions=list(patient.history))

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        task = self.task
        studies = task_studies(task)
        mine = [(c.name, c.arguments, c.index) for c in calls if c.ok and c.arguments.get("patient_id") ==
                task.patient_id and c.arguments.get("accession") in studies]
        reports = [(a["report_text"], i) for name, a, i in mine if name == REPORT_TOOL]
        return ClinicalActions(
            notes=[Act(text=text, call_index=i) for text, i in reports],
            diagnoses=[Act(text=headline, call_index=i) for text, i in reports
                       if (headline := impression_headline(parse_sections(text)))],
            escalations=[Act(text=communication_text(a), call_index=i) for name, a, i in mine
                         if name == COMMUNICATION_TOOL and a.get("read_back") is True
                         and a.get("method", "telephone") in VERBAL and a["urgency"] != "non-urgent"])


def get_environment(db: RadiologyReportDB | None = None, **kwargs: Any) -> RadiologyReportEnv:
    """A RadiologyReport environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return RadiologyReportEnv(db=db, **kwargs)
