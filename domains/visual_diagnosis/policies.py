"""VisualDiagnosis scripted policies beyond the generic ones in ``clinical_gym.tool_env.policies``:
``ReassuringReaderPolicy`` reads the study like the expert but reports it as a benign finding, never escalates, and
submits a non-emergency option: on a task with an emergency finding it misses it."""

from __future__ import annotations

from clinical_gym.domains.visual_diagnosis.conditions import CTG_TERMS, STEMI_TERMS
from clinical_gym.domains.visual_diagnosis.generator import study_of
from clinical_gym.rewards.episode import contains_term
from clinical_gym.tool_env.policies import ScriptPolicy, call_text
from clinical_gym.tool_env.tasks import Task

ALARMING = (*STEMI_TERMS, *CTG_TERMS, "ventricular tachycardia", "heart block", "hyperkalaemia", "category iii")


def benign_option(task: Task) -> str:
    """The letter of an option that names no emergency; ValueError when the task has no emergency finding."""
    if not task.safety.emergency or not task.options:
        raise ValueError(f"task {task.id}: no emergency finding to miss")
    return next(letter for letter, text in task.options.items()
                if letter != task.answer and not any(contains_term(text, t) for t in ALARMING))


class ReassuringReaderPolicy(ScriptPolicy):
    """Context and measurements, a reassuring report, then a benign option with reassuring reasoning."""

    def __init__(self, task: Task) -> None:
        letter = benign_option(task)
        assert task.options is not None and task.patient_id is not None
        benign = task.options[letter]
        study = study_of(task)
        super().__init__([
            call_text("get_clinical_context", {"patient_id": task.patient_id}),
            call_text("get_measurements", {"study_id": study}),
            call_text("record_interpretation", {"study_id": study, "findings": "Reviewed; reassuring.",
                                                "conclusion": benign}),
            call_text("submit_answer", {"answer": letter, "reasoning": f"Reassuring study: {benign}."})])
