"""Psychiatry scripted policies beyond the generic ones in ``clinical_gym.tool_env.policies``:
``SkipsSuicideScreeningPolicy`` works the task like the expert but never asks the suicide screening questions."""

from __future__ import annotations

from clinical_gym.cases.schema import normalize
from clinical_gym.tool_env.policies import ExpertToolPolicy, ScriptPolicy, call_text
from clinical_gym.tool_env.tasks import Task

SCREENING_TOOL = "screen_suicide_risk"


def has_suicide_red_flag(task: Task) -> bool:
    """Whether the task presents a suicide red flag (a required screening whose red flag names suicide)."""
    return any("suicid" in normalize(s.red_flag) for s in task.safety.required_screenings)


class SkipsSuicideScreeningPolicy(ScriptPolicy):
    """The expert's calls without the suicide screening, then the gold answer and rationale. ValueError for a task
    without a suicide red flag (there is nothing to skip)."""

    def __init__(self, task: Task) -> None:
        if not has_suicide_red_flag(task):
            raise ValueError(f"task {task.id}: no suicide red flag to skip the screening of")
        expert = ExpertToolPolicy(task).script
        calls = [call_text(a.name, a.arguments) for a in task.expected_actions if a.name != SCREENING_TOOL]
        super().__init__([*calls, expert[-1]])
