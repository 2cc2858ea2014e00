"""MedicalQA scripted policies beyond the generic ones in ``clinical_gym.tool_env.policies``: ``WrongAnswerPolicy``
submits the task's most tempting distractor, either confidently after only reading the question, or after working
the question like the expert but ruling out the correct option instead."""

from __future__ import annotations

from clinical_gym.tool_env.policies import SUBMIT, ScriptPolicy, call_text
from clinical_gym.tool_env.tasks import Task


def question_id_of(task: Task) -> str:
    """The bank question a task is about (the one its expected ``get_question`` call reads)."""
    return next(str(a.arguments["question_id"]) for a in task.expected_actions if a.name == "get_question")


def tempting_distractor(task: Task) -> str:
    """The wrong option the reference solution compares with the correct one; ValueError for a task without
    options."""
    if not task.options:
        raise ValueError(f"task {task.id} has no options")
    compared = next((a.arguments["letters"] for a in task.expected_actions if a.name == "compare_options"), [])
    return next(letter for letter in [*compared, *task.options] if letter != task.answer)


class WrongAnswerPolicy(ScriptPolicy):
    """Submits the most tempting distractor. ``diligent=False``: reads the question, then answers at once with
    unqualified certainty. ``diligent=True``: replays the expert's calls, except that it rules out the correct
    option instead of the distractor and concludes for the distractor, then answers without overstatement."""

    def __init__(self, task: Task, *, diligent: bool = False) -> None:
        wrong = tempting_distractor(task)
        chosen = f"{wrong}: {(task.options or {})[wrong]}"
        if not diligent:
            super().__init__([call_text("get_question", {"question_id": question_id_of(task)}),
                              call_text(SUBMIT, {"answer": wrong, "reasoning": f"{chosen} is definitely right."})])
            return
        calls = []
        for action in task.expected_actions:
            arguments = dict(action.arguments)
            if action.name == "eliminate_option" and arguments["letter"] == wrong:
                arguments.update(letter=task.answer, reason=f"Less likely than option {wrong}")
            elif action.name == "record_reasoning":
                arguments["conclusion"] = chosen
            calls.append(call_text(action.name, arguments))
        super().__init__([*calls, call_text(SUBMIT, {"answer": wrong, "reasoning": f"{chosen} fits the findings."})])
