"""RadiologyReport scripted policies beyond the generic ones in ``clinical_gym.tool_env.policies``, each a variation of
the expert (the task's expected actions, then the gold answer):

* ``SilentCriticalFindingPolicy``: never communicates the critical finding (the report is signed all the same);
* ``LateCommunicationPolicy``: communicates it only after signing the final report;
* ``WrongStudyReportPolicy``: signs the report on another of the patient's studies awaiting a report.
"""

from __future__ import annotations

from clinical_gym.tool_env.policies import ScriptPolicy, call_text
from clinical_gym.tool_env.tasks import ExpectedAction, Task
from clinical_gym.domains.radiology_report.data_model import RadiologyReportDB
from clinical_gym.domains.radiology_report.environment import COMMUNICATION_TOOL, REPORT_TOOL, task_studies

SUBMIT = "submit_answer"


def _submit(task: Task) -> str:
    return call_text(SUBMIT, {"answer": task.answer, "reasoning": task.rationale})


def _calls(actions: list[ExpectedAction]) -> list[str]:
    return [call_text(a.name, a.arguments) for a in actions]


def critical_communications(task: Task) -> list[ExpectedAction]:
    """The task's expected communications of a critical result."""
    return [a for a in task.expected_actions
            if a.name == COMMUNICATION_TOOL and a.arguments.get("urgency") == "critical"]


def _critical_task(task: Task) -> list[ExpectedAction]:
    found = critical_communications(task)
    if not task.safety.emergency or not found:
        raise ValueError(f"task {task.id}: no critical finding to communicate")
    return found


class SilentCriticalFindingPolicy(ScriptPolicy):
    """The expert's actions without the critical-result communication, then the gold answer. ValueError for a task
    without a critical finding."""

    def __init__(self, task: Task) -> None:
        skipped = _critical_task(task)
        super().__init__([*_calls([a for a in task.expected_actions if a not in skipped]), _submit(task)])


class LateCommunicationPolicy(ScriptPolicy):
    """The expert's actions with the critical-result communication moved after the signed final report, then the
    gold answer. ValueError for a task without a critical finding."""

    def __init__(self, task: Task) -> None:
        moved = _critical_task(task)
        rest = [a for a in task.expected_actions if a not in moved]
        signed = max(i for i, a in enumerate(rest) if a.name == REPORT_TOOL)
        super().__init__([*_calls(rest[:signed + 1]), *_calls(moved), *_calls(rest[signed + 1:]), _submit(task)])


def other_open_study(db: RadiologyReportDB, task: Task) -> str | None:
    """Another study of the task's patient that is awaiting a report (None if there is none)."""
    mine = task_studies(task)
    return next((s.accession for s in db.studies_of(task.patient_id or "")
                 if not s.final_report and s.accession not in mine), None)


class WrongStudyReportPolicy(ScriptPolicy):
    """The expert's actions with the final report signed on another of the patient's studies awaiting a report,
    then the gold answer. ValueError when the patient has no other such study."""

    def __init__(self, task: Task, db: RadiologyReportDB) -> None:
        other = other_open_study(db, task)
        if other is None:
            raise ValueError(f"task {task.id}: the patient has no other study awaiting a report")
        self.accession = other
        calls = [call_text(a.name, {**a.arguments, "accession": other}) if a.name == REPORT_TOOL
                 else call_text(a.name, a.arguments) for a in task.expected_actions]
        super().__init__([*calls, _submit(task)])
