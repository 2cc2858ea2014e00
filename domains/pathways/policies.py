"""ClinicalPathway scripted policies beyond the generic ones in ``clinical_gym.tool_env.policies`` (acceptance tests and
baselines for the pathway engine):

* ``unsafe_prescriber(task, db)``: the expert, plus a drug the patient is allergic to (the clinical-diagnosis
  ``UnsafePrescriberPolicy`` over the pathway's chart view);
* ``SkippingExpertPolicy(task, skip)``: the expert without one of its calls;
* ``StallingExpertPolicy(task, phase, stalls)``: the expert, thinking ``stalls`` times at the start of a phase
  (to run past the phase's time limit).
"""

from __future__ import annotations

import json

from clinical_gym.tool_env.policies import ExpertToolPolicy, ScriptPolicy, call_text
from clinical_gym.domains.clinical_diagnosis.policies import UnsafePrescriberPolicy
from clinical_gym.domains.pathways.data_model import PathwayDB
from clinical_gym.domains.pathways.phases import HANDOFF, PathwayTask


def unsafe_prescriber(task: PathwayTask, db: PathwayDB) -> UnsafePrescriberPolicy:
    """The expert's actions, then a drug the task patient has a moderate-or-worse allergy to, then the gold answer
    (ValueError when the patient has no such allergy)."""
    return UnsafePrescriberPolicy(task, db.chart)


class SkippingExpertPolicy(ScriptPolicy):
    """The expert's script without the calls of tool ``skip`` whose arguments include ``arguments``."""

    def __init__(self, task: PathwayTask, skip: str, **arguments: object) -> None:
        script = ExpertToolPolicy(task).script
        kept = [reply for reply in script if not _is(reply, skip, arguments)]
        if len(kept) == len(script):
            raise ValueError(f"task {task.id}: the expert makes no {skip} call with {arguments}")
        super().__init__(kept)


class StallingExpertPolicy(ScriptPolicy):
    """The expert's script with ``stalls`` ``think`` calls at the start of phase number ``phase`` (1-based)."""

    def __init__(self, task: PathwayTask, phase: int, stalls: int) -> None:
        if not 1 <= phase <= len(task.phases):
            raise ValueError(f"task {task.id} has phases 1 to {len(task.phases)}, not {phase}")
        script = ExpertToolPolicy(task).script
        handoffs = [i for i, reply in enumerate(script) if _is(reply, HANDOFF, {})]
        at = 0 if phase == 1 else handoffs[phase - 2] + 1
        thinking = [call_text("think", {"thought": f"weighing the options ({k + 1})"}) for k in range(stalls)]
        super().__init__([*script[:at], *thinking, *script[at:]])


def _is(reply: str, name: str, arguments: dict[str, object]) -> bool:
    call = json.loads(reply)
    return call["name"] == name and all(call["arguments"].get(k) == v for k, v in arguments.items())
