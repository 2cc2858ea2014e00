"""Tasks of the tool-using domains: the ticket the agent reads, the expected tool calls, assertions, the gold answer.

A domain ships its tasks as a JSON list (``data/tasks.json``), one object per ``Task``. Splits are deterministic:
a hash of the task id (the same rule as patient cases, ``clinical_gym.cases.split_of``).

Argument matching (expected actions, rules) compares values after normalisation: text by its lower-case words
(``"Co-Amoxiclav"`` equals ``"co amoxiclav"``), numbers by value (``100`` equals ``100.0``), lists item by item,
objects key by key.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Collection, Mapping
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from clinical_gym.cases.loading import ALL, SPLITS, split_of
from clinical_gym.cases.schema import Rubric, normalize

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


normalized = lru_cache(maxsize=8192)(normalize)
"""``normalize`` remembered for the texts graders compare again every episode (ids, names, option texts)."""


def values_match(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` equals ``expected`` after normalisation (see the module docstring)."""
    if type(expected) is str and type(actual) is str:  # the usual case first (neither is a bool or a number)
        return normalized(expected) == normalized(actual)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return math.isclose(expected, actual, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(expected, str) and isinstance(actual, str):
        return normalized(expected) == normalized(actual)
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        return len(expected) == len(actual) and all(values_match(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return set(expected) == set(actual) and all(values_match(v, actual[k]) for k, v in expected.items())
    return expected == actual


class ToolPattern(_Model):
    """A tool call to look for: the tool name, and argument values that must match (others are ignored)."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)

    def matches(self, name: str, arguments: Mapping[str, Any]) -> bool:
        if name != self.name:
            return False
        for k, v in self.arguments.items():
            if k not in arguments or not values_match(v, arguments[k]):
                return False
        return True


class ExpectedAction(_Model):
    """A call the reference solution makes: full ``arguments`` (what a scripted expert sends) and ``compare_args``,
    the argument names whose values must match for an agent's call to count (None: all of ``arguments``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, ignored_types=(cached_property,))

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    compare_args: list[str] | None = None

    @model_validator(mode="after")
    def _compared_exist(self) -> ExpectedAction:
        missing = set(self.compare_args or ()) - set(self.arguments)
        if missing:
            raise ValueError(f"compare_args {sorted(missing)} of {self.name!r} have no value in arguments")
        return self

    @cached_property
    def pattern(self) -> ToolPattern:
        keys = self.arguments if self.compare_args is None else self.compare_args
        return ToolPattern(name=self.name, arguments={k: self.arguments[k] for k in keys})


class CalledRule(_Model):
    """Passes when a successful call matches ``call``."""

    kind: Literal["called"] = "called"
    call: ToolPattern


class NotCalledRule(_Model):
    """Passes when no successful call matches ``call``."""

    kind: Literal["not_called"] = "not_called"
    call: ToolPattern


class CalledBeforeRule(_Model):
    """Passes when both happen and the first successful ``first`` call precedes the first successful ``then``."""

    kind: Literal["called_before"] = "called_before"
    first: ToolPattern
    then: ToolPattern


class AnswerMentionsRule(_Model):
    """Passes when the submitted answer or its reasoning names one of ``any_of`` (whole words, normalised)."""

    kind: Literal["answer_mentions"] = "answer_mentions"
    any_of: list[str] = Field(min_length=1)


class AnswerOmitsRule(_Model):
    """Passes when an answer was submitted and neither it nor its reasoning names any of ``none_of`` (literal: a
    negated mention such as "avoid X" still counts as naming X)."""

    kind: Literal["answer_omits"] = "answer_omits"
    none_of: list[str] = Field(min_length=1)


class RecordRule(_Model):
    """Passes when the final database holds, in the list at dotted ``collection`` (e.g. ``"prescriptions"``), an
    item whose fields match ``match``."""

    kind: Literal["db_record"] = "db_record"
    collection: str = Field(min_length=1)
    match: dict[str, Any] = Field(min_length=1)


class RecordKeysRule(_Model):
    """Passes when the final database holds, in the list at dotted ``collection``, an item matching ``match`` (as
    in ``db_record``) whose mapping at dotted ``field`` (e.g. a signed report's ``"sections"``) has every one of
    ``keys`` with a non-empty value (keys compared normalised)."""

    kind: Literal["db_record_keys"] = "db_record_keys"
    collection: str = Field(min_length=1)
    match: dict[str, Any] = Field(min_length=1)
    field: str = Field(min_length=1)
    keys: list[str] = Field(min_length=1)


class RecordMentionsRule(_Model):
    """Passes when the final database holds, in the list at dotted ``collection``, an item matching ``match`` (as
    in ``db_record``) whose text at dotted ``field`` (e.g. ``"sections.impression"``; lists and mappings are read
    as their joined values) names one of ``any_of`` (whole words, normalised)."""

    kind: Literal["db_record_mentions"] = "db_record_mentions"
    collection: str = Field(min_length=1)
    match: dict[str, Any] = Field(min_length=1)
    field: str = Field(min_length=1)
    any_of: list[str] = Field(min_length=1)


Rule = Annotated[Union[CalledRule, NotCalledRule, CalledBeforeRule, AnswerMentionsRule, AnswerOmitsRule, RecordRule,
                       RecordKeysRule, RecordMentionsRule],
                 Field(discriminator="kind")]


class Assertion(_Model):
    """A natural-language statement about a good episode; ``rule`` lets it be checked without an LLM judge."""

    text: str = Field(min_length=1)
    rule: Rule | None = None


class RubricItem(Rubric):
    """A process rubric item (Healthcare AI GYM, App. A.5: required elements, required tools, forbidden elements):
    the ``criterion`` and its ``points`` (``Rubric``'s 0-10 importance, negative for a penalty), with a ``rule``
    that checks it without an LLM (else the assertion judge grades it, or it is left out)."""

    rule: Rule | None = None


class RewardBasis(str, enum.Enum):
    """Which reference parts score the episode: ACTION (expected calls, for process coverage) and NL_ASSERTION
    (the assertions dimension)."""

    ACTION = "ACTION"
    NL_ASSERTION = "NL_ASSERTION"


class RedFlagScreening(_Model):
    """A red flag present in the task and the tools (any one) that screen for it."""

    red_flag: str = Field(min_length=1)
    tools: list[str] = Field(min_length=1)


class CriticalFinding(_Model):
    """A finding in the task's data (an image) that must not be missed: its ``kind`` (which safety pattern a miss
    commits: ``stemi`` and ``category_iii_tracing`` are severity 5, the others severity 4), its ``name``, and the
    ``terms`` whose use in the decision (the chosen option, the reasoning, recorded interpretations, escalations)
    shows it was recognised."""

    kind: Literal["stemi", "category_iii_tracing", "life_threatening_arrhythmia", "hyperkalaemia"]
    name: str = Field(min_length=1)
    terms: list[str] = Field(min_length=1)


class SafetyExpectations(_Model):
    """What the safety detectors need to know about the task beyond the patient's record.

    ``emergency``: the situation needs escalation (an escalation tool call, or emergency disposition in the answer)
    within ``escalate_within_calls`` tool calls. ``required_screenings``: red flags the task presents and the tools
    that screen for them (skipping one is severity 4; severity 5 when the red flag mentions suicide).
    ``contraindicated``: drugs or drug classes (``clinical_gym.drugs`` class tags) that must not be given in this
    situation; ``not_indicated``: ones that do no good here (e.g. antibiotics for a viral illness).
    ``answer_escalates``: whether an emergency disposition stated in the answer counts as escalation; a domain whose
    escalation is an action (triage: assign ESI 1-2, activate a code) sets it False.
    ``escalate_before``: tools whose first successful call must come after the escalation in an emergency (e.g.
    signing the final report: a critical result is communicated before the report goes out); empty by default.
    ``critical_findings``: findings (in an image the agent reads) whose miss is a named safety violation.
    """

    emergency: bool = False
    answer_escalates: bool = True
    escalate_within_calls: int = Field(default=6, ge=1)
    escalate_before: list[str] = Field(default_factory=list)
    required_screenings: list[RedFlagScreening] = Field(default_factory=list)
    contraindicated: list[str] = Field(default_factory=list)
    not_indicated: list[str] = Field(default_factory=list)
    critical_findings: list[CriticalFinding] = Field(default_factory=list)


class Task(_Model):
    """One task: the ``ticket`` opens the episode; ``answer`` is the gold answer (an option letter when ``options``
    are given); ``answer_aliases`` are other full-credit answers for open questions; ``rationale`` is the gold
    reasoning (shown only after the episode, and what a scripted expert submits as its reasoning)."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$")
    ticket: str = Field(min_length=1)
    patient_id: str | None = None
    expected_actions: list[ExpectedAction] = Field(default_factory=list)
    assertions: list[Assertion] = Field(default_factory=list)
    rubrics: list[RubricItem] = Field(default_factory=list)
    reward_basis: list[RewardBasis] = Field(default_factory=lambda: [RewardBasis.ACTION, RewardBasis.NL_ASSERTION],
                                            min_length=1)
    answer: str = Field(min_length=1)
    answer_aliases: list[str] = Field(default_factory=list)
    rationale: str = ""
    options: dict[str, str] | None = None
    safety: SafetyExpectations = Field(default_factory=SafetyExpectations)
    category: str = ""
    tags: list[str] = Field(default_factory=list)

    @field_validator("options")
    @classmethod
    def _option_letters(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        if v is not None:
            bad = [k for k in v if len(k) != 1 or not k.isupper()]
            if bad or len(v) < 2:
                raise ValueError(f"options need at least two single capital-letter keys, got {list(v)}")
        return v

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> Task:
        if self.options is not None and self.answer not in self.options:
            raise ValueError(f"task {self.id}: answer {self.answer!r} is not one of the options {list(self.options)}")
        return self

    @property
    def is_mcq(self) -> bool:
        return self.options is not None

    @property
    def split(self) -> str:
        return split_of(self.id)

    @property
    def prompt(self) -> str:
        """The ticket, with the options listed for a multiple-choice task."""
        if not self.options:
            return self.ticket
        listed = "\n".join(f"{letter}. {text}" for letter, text in self.options.items())
        return f"{self.ticket}\n\nOptions:\n{listed}\nSubmit the letter of the single best option."

    def uses(self, basis: RewardBasis) -> bool:
        return basis in self.reward_basis

    def named_records(self, arguments: Collection[str]) -> list[tuple[str, Any]]:
        """The records the task names, as ``(argument, id)`` pairs in order without repeats: its ``patient_id`` and
        the value of each of ``arguments`` (e.g. "question_id") in its expected actions."""
        named = [("patient_id", self.patient_id)] if self.patient_id is not None and "patient_id" in arguments else []
        named += [(name, action.arguments[name]) for action in self.expected_actions for name in arguments
                  if isinstance(action.arguments.get(name), (str, int))]
        return list(dict.fromkeys(named))


_TASK_LIST = TypeAdapter(list[Task])


def load_tasks(source: str | Path | Traversable) -> list[Task]:
    """Tasks from a JSON file (a path or a package resource) holding a list of task objects; ids must be unique."""
    text = (Path(source) if isinstance(source, str) else source).read_text(encoding="utf-8")
    tasks = _TASK_LIST.validate_python(json.loads(text))
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise ValueError(f"duplicate task id {task.id!r} in {source}")
        seen.add(task.id)
    return tasks


def select_split(tasks: list[Task], split: str | None) -> list[Task]:
    """The tasks of ``split`` ("train" or "test"); all of them for None or "all"."""
    if split is None or split == ALL:
        return list(tasks)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)} or {ALL}")
    return [t for t in tasks if t.split == split]
