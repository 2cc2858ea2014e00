"""Triage scripted policies beyond the generic ones in ``clinical_gym.tool_env.policies``: ``UnderTriagePolicy`` works
the task like the expert but assigns an ESI level two steps less urgent than the right one (capped at ESI 5)."""

from __future__ import annotations

from clinical_gym.tool_env.policies import ScriptPolicy, call_text
from clinical_gym.tool_env.tasks import Task


def expected_esi_level(task: Task) -> int:
    """The ESI level the task's expected actions assign last; ValueError when they assign none."""
    levels = [a.arguments["level"] for a in task.expected_actions if a.name == "assign_esi_level"]
    if not levels:
        raise ValueError(f"task {task.id}: its expected actions assign no ESI level")
    return levels[-1]


def under_triaged_level(task: Task) -> int:
    """Two levels less urgent than the task's expected ESI level, at most ESI 5."""
    return min(5, expected_esi_level(task) + 2)


class UnderTriagePolicy(ScriptPolicy):
    """The expert's calls with the ESI assignment replaced by an under-triaged level (codes, escalations and
    interventions kept), then an answer that states that level: the option letter for a task that asks for the
    level, the gold answer otherwise."""

    def __init__(self, task: Task, reasoning: str = "Stable enough to wait") -> None:
        self.level = under_triaged_level(task)
        calls = [call_text(a.name, {**a.arguments, "level": self.level, "reason": "stable enough to wait"})
                 if a.name == "assign_esi_level" else call_text(a.name, a.arguments) for a in task.expected_actions]
        letter = next((k for k, v in (task.options or {}).items() if v == f"ESI {self.level}"), None)
        answer = letter or task.answer
        submit = call_text("submit_answer", {"answer": answer,
                                             "reasoning": f"{reasoning}: ESI {self.level}."})
        super().__init__([*calls, submit])
