"""Outcome-conditioned hints for the TT-OPD teacher (Healthcare AI GYM §4.2) and the teacher's view of a trajectory.

The teacher scores each episode with a hint that only it sees: a reinforcing one when the episode ended correct, a
corrective one otherwise. ``teacher_sequence`` inserts the hint's tokens at the prompt/response boundary of every
turn (by default as a user message before the generation prompt, ``hint_message``; or as raw text right after it,
at the start of the reply) and records where each generated token sits in the student's sequence and in the
teacher's, so that the teacher's logprobs can be moved back onto the student's positions with the hint's tokens
left out. Turns that end beyond ``max_context`` tokens of the teacher's sequence
are dropped (the "truncated" of TT-OPD).

Templates may name fields of the episode's outcome in braces (``"the answer was {gold_answer}"``); a field the
outcome lacks reads "unknown".
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clinical_gym.registration import ENVIRONMENTS
from clinical_gym.rollout import Trajectory


@dataclass(frozen=True)
class HintTemplates:
    """The reinforcing (``correct``) and corrective (``wrong``) hint of one environment."""

    correct: str
    wrong: str

    def render(self, correct: bool, outcome: Mapping[str, Any] | None = None) -> str:
        """The hint for an episode with this outcome, placeholders filled from ``outcome``."""
        return string.Formatter().vformat(self.correct if correct else self.wrong, (), _Fields(outcome or {}))


class _Fields(dict):
    def __missing__(self, key: str) -> str:
        return "unknown"


def _hints(correct: str, wrong: str) -> HintTemplates:
    return HintTemplates(f"Outcome review: {correct}\n", f"Outcome review: {wrong}\n")


# Defaults by domain package (``clinical_gym.trainers.common.monitors.env_domain``), then by family, then for any environment.
DEFAULT_HINTS: dict[str, HintTemplates] = {
    "inquiry": _hints(
        "this consultation reached the correct diagnosis. The questions were focused and the reasoning sound; "
        "keep this approach.",
        "this consultation did not reach the correct diagnosis. Ask about onset, character and associated "
        "symptoms, the relevant history and red flags before committing, and revisit the differential diagnosis."),
    "workup": _hints(
        "this work-up reached the correct diagnosis and the examinations ordered were informative; keep this "
        "approach.",
        "this work-up did not reach the correct diagnosis. Order the examinations that separate the leading "
        "diagnoses, read each result against the differential, and revisit the final diagnosis."),
    "medical_qa": _hints(
        "the submitted option is correct; the reasoning from the key findings was sound.",
        "the submitted option was not correct. Re-read the vignette, pick out the key findings, eliminate the "
        "options they contradict, and reconsider the answer."),
    "triage": _hints(
        "this triage was correct and safe; the acuity level matched the patient's danger signs and expected "
        "resources.",
        "this triage was not correct or not safe. Reassess the vital signs and danger signs, decide whether "
        "life-saving action is needed now, then reassign the ESI level."),
    "drug_interaction": _hints(
        "the medication review was correct and safe; keep checking every pair the same way.",
        "the medication review was not correct or not safe. Check every interacting pair, the CYP450 pathways, "
        "renal dosing and allergy cross-reactivity before advising."),
    "tool": _hints(
        "this task was completed correctly and safely; the tool calls gathered what was needed. Keep following "
        "the protocol.",
        "this task was not completed correctly. Review the chart with the tools, check the relevant scores and "
        "guidance, verify safety (allergies, interactions, doses), then revisit the submitted answer."),
    "default": _hints(
        "this episode ended with a correct answer; the approach is sound.",
        "this episode did not end with a correct answer; reconsider the approach and the answer."),
}


def default_hints(env_id: str) -> HintTemplates:
    """The default hints of a registered environment: its domain's, else its family's, else the generic pair."""
    from clinical_gym.trainers.common.monitors import env_domain

    family = {e.id: e.family for e in ENVIRONMENTS}.get(env_id.split(":")[-1])
    for key in (env_domain(env_id), family, "default"):
        if key in DEFAULT_HINTS:
            return DEFAULT_HINTS[key]
    raise AssertionError("unreachable: the default hints exist")


@dataclass
class TeacherSequence:
    """The teacher's token sequence for one trajectory and its alignment with the student's.

    ``ids``: the trajectory's tokens with the hint before each kept turn's reply, ending after the last kept reply.
    ``student_positions[j]`` and ``teacher_positions[j]``: where the j-th kept generated token sits in the student's
    and the teacher's sequence (the same token id); ``turn_of[j]`` its turn. ``turn_lengths``: generated tokens of
    each kept turn. ``hint_positions``: the positions of every hint token in ``ids``. ``dropped_turns``: turns cut
    by ``max_context``.
    """

    ids: list[int]
    student_positions: list[int] = field(default_factory=list)
    teacher_positions: list[int] = field(default_factory=list)
    turn_of: list[int] = field(default_factory=list)
    turn_lengths: list[int] = field(default_factory=list)
    hint_positions: list[int] = field(default_factory=list)
    dropped_turns: int = 0


def teacher_sequence(trajectory: Trajectory, hint_ids: Sequence[int], max_context: int,
                     generation_prompt: Sequence[int] = ()) -> TeacherSequence:
    """The teacher's view of ``trajectory`` with ``hint_ids`` at every prompt/response boundary: right before the
    ``generation_prompt`` when the context ends with it (the hint is then a message of the conversation, see
    ``hint_message``), else right after the context (raw text at the start of the reply). Turns whose reply would
    end beyond ``max_context`` tokens are dropped, with every turn after them."""
    if not trajectory.opening_ids:
        raise ValueError("the trajectory has no opening tokens (a collector in token mode always writes them)")
    ids = list(trajectory.opening_ids)
    out = TeacherSequence(ids=ids)
    student = len(ids)
    prompt = list(generation_prompt)
    for index, turn in enumerate(trajectory.turns):
        if len(ids) + len(hint_ids) + len(turn.generated_ids) > max_context:
            out.dropped_turns = len(trajectory.turns) - index
            break
        before_prompt = bool(prompt) and ids[len(ids) - len(prompt):] == prompt
        hint_start = len(ids) - len(prompt) if before_prompt else len(ids)
        ids[hint_start:hint_start] = hint_ids
        out.hint_positions += range(hint_start, hint_start + len(hint_ids))
        out.student_positions += range(student, student + len(turn.generated_ids))
        out.teacher_positions += range(len(ids), len(ids) + len(turn.generated_ids))
        out.turn_of += [index] * len(turn.generated_ids)
        out.turn_lengths.append(len(turn.generated_ids))
        ids += turn.generated_ids
        ids += turn.env_ids
        student += len(turn.generated_ids) + len(turn.env_ids)
    last = out.teacher_positions[-1] + 1 if out.teacher_positions else 0
    del ids[last:]  # nothing after the last kept reply is scored
    return out


def hint_message(tokenizer: Any, text: str) -> tuple[list[int], list[int]]:
    """``text`` templated as a user message that follows the conversation's last message, and the template's
    generation prompt: ``teacher_sequence`` puts the first before the second, so that the teacher reads the hint
    as part of the state s_t⁺ and the reply starts where the student's does. ``ValueError`` when the chat template
    does not take a user message after another (use the hint position "reply")."""
    conversation = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]

    def render(messages: list[dict[str, str]], generation: bool) -> list[int]:
        return list(tokenizer.apply_chat_template(messages, add_generation_prompt=generation, tokenize=True,
                                                  return_dict=True)["input_ids"])

    try:
        closed = render(conversation, False)
        hinted = render([*conversation, {"role": "user", "content": text}], False)
        opened = render(conversation, True)
    except Exception as error:  # noqa: BLE001 (templates raise anything; say what to do instead)
        raise ValueError(f"the chat template cannot template the hint as a message ({error}); use hint position "
                         "'reply'") from None
    if hinted[:len(closed)] != closed or opened[:len(closed)] != closed or len(opened) == len(closed):
        raise ValueError("the chat template is not prefix-stable around a hint message; use hint position 'reply'")
    return hinted[len(closed):], opened[len(closed):]
