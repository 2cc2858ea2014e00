"""Pathways and pathway tasks: a journey is a sequence of phases, each with the tools it opens, a goal, and an
optional time limit; a task adds, per phase, the actions it requires and the assertions checked on it.

``data/pathways.json`` defines the journeys (``PathwaySpec``); ``data/tasks.json`` holds one entry per patient
variant, naming its pathway and giving one ``TaskPhase`` per phase of it. ``resolve_task`` merges the two into a
``PathwayTask``: a ``Task`` whose expected actions are the phases' required actions in order, with a ``handoff`` call
closing every phase but the last, and whose assertions are the phases' assertions.

Transition rule: a phase ends when the agent calls ``handoff`` (an explicit hand-over with a summary); the last phase
ends with ``submit_answer``. The environment never advances on its own, so skipping a required action is possible
and fails the phase. A tool is available from the first phase that opens it to the end of the episode; a tool of a
later phase is refused with a message naming the phase that opens it.

Time pressure: a phase's ``deadline_calls`` is a limit on the tool calls made while it is active (every call the
agent attempts counts, refused and invalid ones included, and so does the ``handoff`` that ends it). Exceeding it
fails the phase; the episode goes on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from clinical_gym.tool_env.tasks import Assertion, ExpectedAction, Task

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

DomainKey = Literal["triage", "clinical_diagnosis", "drug_interaction", "pathway"]
HANDOFF = "handoff"
DEFAULT_HANDOFF = "Phase complete; handing over to the next team."


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PhaseSpec(_Model):
    """One phase of a journey: ``name`` (a slug), ``title``, the ``goal`` shown to the agent, the tools it opens by
    the domain whose toolkit provides them, and an optional time limit in tool calls (``deadline_label`` names it,
    e.g. "door-to-needle")."""

    name: str = Field(pattern=r"^[a-z][a-z_]*$")
    title: str = Field(min_length=1)
    goal: str = Field(min_length=1)
    tools: dict[DomainKey, list[str]] = Field(default_factory=dict)
    deadline_calls: int | None = Field(default=None, ge=1)
    deadline_label: str = ""

    @property
    def tool_names(self) -> list[str]:
        """The tools this phase opens, in listing order."""
        return [name for names in self.tools.values() for name in names]


class PathwaySpec(_Model):
    """A clinical journey: at least two phases with distinct names; no tool is opened twice."""

    name: str = Field(pattern=r"^[a-z][a-z_]*$")
    title: str = Field(min_length=1)
    description: str = ""
    phases: list[PhaseSpec] = Field(min_length=2)

    @model_validator(mode="after")
    def _distinct(self) -> PathwaySpec:
        _check_phases(self.name, self.phases)
        return self


class TaskPhase(_Model):
    """What a task asks of one phase: the actions it requires (full arguments; ``compare_args`` as in
    ``ExpectedAction``), the assertions checked when the phase ends, the reference hand-over summary, and optionally
    a time limit replacing the journey's (``null``: none)."""

    required_actions: list[ExpectedAction] = Field(default_factory=list)
    assertions: list[Assertion] = Field(default_factory=list)
    handoff: str = ""
    deadline_calls: int | None = Field(default=None, ge=1)


class Phase(PhaseSpec):
    """A phase as a task runs it: the journey's definition with the task's requirements."""

    required_actions: list[ExpectedAction] = Field(default_factory=list)
    assertions: list[Assertion] = Field(default_factory=list)
    handoff: str = ""


class PathwayTask(Task):
    """A task that runs as a pathway. ``expected_actions`` and ``assertions`` are derived from ``phases`` (filled
    in when absent, checked when given): each phase's required actions, then a ``handoff`` call for every phase but
    the last."""

    pathway: str = Field(min_length=1)
    pathway_title: str = Field(min_length=1)
    phases: list[Phase] = Field(min_length=2)

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "phases" in data:
            phases = [p if isinstance(p, Phase) else Phase.model_validate(p) for p in data["phases"]]
            data = dict(data)
            data.setdefault("expected_actions", phase_actions(phases))
            data.setdefault("assertions", [a for p in phases for a in p.assertions])
        return data

    @model_validator(mode="after")
    def _consistent(self) -> PathwayTask:
        _check_phases(self.pathway, self.phases)
        if list(self.expected_actions) != phase_actions(self.phases):
            raise ValueError(f"task {self.id}: expected_actions must be the phases' required actions with a handoff "
                             f"after each phase but the last (leave them out to derive them)")
        if list(self.assertions) != [a for p in self.phases for a in p.assertions]:
            raise ValueError(f"task {self.id}: assertions must be the phases' assertions (leave them out)")
        if any(a.name == HANDOFF for p in self.phases for a in p.required_actions):
            raise ValueError(f"task {self.id}: handoff calls are added by the pathway; do not list them")
        return self

    @property
    def prompt(self) -> str:
        """The ticket, then the pathway's phases with their goals and time limits."""
        lines = [self.ticket, "", f"Pathway: {self.pathway_title}, {len(self.phases)} phases in order:"]
        for i, phase in enumerate(self.phases, 1):
            limit = f" Time limit: {deadline_text(phase)}." if phase.deadline_calls else ""
            lines.append(f"{i}. {phase.title}: {phase.goal}{limit}")
        lines.append(f"You are in phase 1 ({self.phases[0].title}). Each phase opens more tools "
                     f"(get_pathway_status lists what is open now). Call {HANDOFF} with a short handover summary to "
                     f"finish a phase and start the next; in the last phase, submit_answer ends the pathway.")
        return "\n".join(lines)


def deadline_text(phase: PhaseSpec) -> str:
    """A phase's time limit in words, e.g. "7 tool calls (door-to-ECG)"."""
    label = f" ({phase.deadline_label})" if phase.deadline_label else ""
    return f"{phase.deadline_calls} tool calls{label}"


def phase_actions(phases: list[Phase]) -> list[ExpectedAction]:
    """The expected actions of a pathway: each phase's required actions, then a handoff (any summary) for every
    phase but the last; the handoff carries the phase's reference summary for a scripted expert."""
    actions: list[ExpectedAction] = []
    for i, phase in enumerate(phases):
        actions += phase.required_actions
        if i < len(phases) - 1:
            actions.append(handoff_action(phase))
    return actions


def handoff_action(phase: PhaseSpec | Phase) -> ExpectedAction:
    summary = getattr(phase, "handoff", "") or DEFAULT_HANDOFF
    return ExpectedAction(name=HANDOFF, arguments={"summary": summary}, compare_args=[])


def _check_phases(pathway: str, phases: list[Any]) -> None:
    names = [p.name for p in phases]
    if len(set(names)) != len(names):
        raise ValueError(f"pathway {pathway!r}: phase names must be distinct, got {names}")
    seen: dict[str, str] = {}
    for phase in phases:
        for name in phase.tool_names:
            if name in seen:
                raise ValueError(f"pathway {pathway!r}: tool {name!r} is opened by both {seen[name]!r} and "
                                 f"{phase.name!r}; a tool stays open once opened")
            seen[name] = phase.name


# -- loading ---------------------------------------------------------------------------------------------------------
_SPECS = TypeAdapter(list[PathwaySpec])


def load_pathways(source: str | Path | Traversable) -> dict[str, PathwaySpec]:
    """Journeys from a JSON file holding a list of pathway objects; names must be unique."""
    text = (Path(source) if isinstance(source, str) else source).read_text(encoding="utf-8")
    specs = _SPECS.validate_python(json.loads(text))
    by_name = {s.name: s for s in specs}
    if len(by_name) != len(specs):
        raise ValueError(f"duplicate pathway names in {source}")
    return by_name


def resolve_task(raw: Mapping[str, Any] | PathwayTask, pathways: Mapping[str, PathwaySpec]) -> PathwayTask:
    """A ``PathwayTask`` from a task entry: one naming its ``pathway`` with one ``TaskPhase`` per phase of it, or a
    fully resolved task (phases with names, as ``model_dump`` writes it)."""
    if isinstance(raw, PathwayTask):
        return raw
    phases = raw.get("phases")
    if not isinstance(phases, list):
        raise ValueError("a pathway task needs a 'phases' list")
    if phases and all(isinstance(p, Mapping) and "name" in p for p in phases):
        return PathwayTask.model_validate(raw)
    name = raw.get("pathway")
    spec = pathways.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"task {raw.get('id')!r}: unknown pathway {name!r}; known: {', '.join(sorted(pathways))}")
    if len(phases) != len(spec.phases):
        raise ValueError(f"task {raw.get('id')!r}: pathway {spec.name!r} has {len(spec.phases)} phases, the task "
                         f"gives {len(phases)}")
    merged = []
    for defined, given in zip(spec.phases, phases, strict=True):
        part = TaskPhase.model_validate(given)
        phase = {**defined.model_dump(), **part.model_dump(exclude={"deadline_calls"})}
        if "deadline_calls" in part.model_fields_set:
            phase["deadline_calls"] = part.deadline_calls
        merged.append(phase)
    return PathwayTask.model_validate({**raw, "pathway_title": spec.title, "phases": merged})


def load_pathway_tasks(source: str | Path | Traversable, pathways: Mapping[str, PathwaySpec]) -> list[PathwayTask]:
    """Pathway tasks from a JSON list of task entries; ids must be unique."""
    text = (Path(source) if isinstance(source, str) else source).read_text(encoding="utf-8")
    tasks = [resolve_task(entry, pathways) for entry in json.loads(text)]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise ValueError(f"duplicate task id {task.id!r} in {source}")
        seen.add(task.id)
    return tasks
