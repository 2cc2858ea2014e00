"""``ToolDomainEnv``: the base of every tool-using clinical domain (Healthcare AI GYM style), and the episode tools
every domain shares (``think``, ``submit_answer``).

A domain subclasses ``ToolDomainEnv`` and supplies its database, tasks, policy text and toolkit through the hooks
below; ``domains/README.md`` walks through adding one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Literal

from annotated_types import MinLen

from clinical_gym.tool_env.database import DomainDB, record_key
from clinical_gym.env import MAX_ACTION_CHARS, MAX_OBSERVATION_CHARS, ClinicalEnv, id_hint
from clinical_gym.llm import llm_setting
from clinical_gym.llm.base import LLMClient
from clinical_gym.rewards.assertions import AssertionVerdict, LLMAssertionJudge, verdict_dump
from clinical_gym.rewards.episode import (
    REVIEW_CATEGORIES,
    CallRecord,
    ClinicalActions,
    EpisodeRecord,
    PatientFacts,
    ReviewCategory,
    SubmittedAnswer,
)
from clinical_gym.rewards.five_d import FiveDConfig, FiveDResult, FiveDReward
from clinical_gym.spaces import UnicodeText
from clinical_gym.tool_env.task_folder import tasks_argument
from clinical_gym.tool_env.tasks import Task, load_tasks, select_split
from clinical_gym.tools import FORMAT_SCORES, ParsedCall, ToolKind, Toolkit, ToolResult, parse_tool_calls, tool
from clinical_gym.tools.calls import EXAMPLE
from clinical_gym.tools.toolkit import BoundTool
from clinical_gym.tools.trusted import plain_dump, trusted

logger = logging.getLogger(__name__)
JUDGE_FAILED = "The task ended because the reward judge failed."
DEFAULT_MAX_TURNS = 20
DEFAULT_MAX_CALLS_PER_TURN = 4
CALL_HINT = "Reply with one tool call as a JSON object; call submit_answer to finish."
_NO_REVIEWS: frozenset[ReviewCategory] = frozenset()
_CATEGORIES = frozenset(REVIEW_CATEGORIES)
_KIND_VALUES: dict[ToolKind | None, str] = {kind: kind.value for kind in ToolKind}  # the enum's value property is slow


def _validated(model: type[CallRecord], **values: Any) -> CallRecord:
    return model(**values)


def _errors(verdicts: list[AssertionVerdict]) -> int:
    """How many of ``verdicts`` the judge failed on."""
    return sum(1 for v in verdicts if v.error) if verdicts else 0


class EpisodeTools(Toolkit):
    """The tools every domain has: ``think`` (reasoning with no side effects) and ``submit_answer`` (ends the
    episode and triggers grading)."""

    @tool(kind=ToolKind.THINK)
    def think(self, thought: Annotated[str, MinLen(1)]) -> str:
        """Write down your reasoning or plan. It changes nothing and nobody else sees it.

        Args:
            thought: Your reasoning, e.g. "Fever, productive cough and focal crackles suggest pneumonia; check CURB-65".
        """
        return "Noted."

    @tool(kind=ToolKind.SUBMIT)
    def submit_answer(self, answer: Annotated[str, MinLen(1)], reasoning: str = "") -> str:
        """Submit your final answer. This ends the task and it is graded; make it the last call.

        Args:
            answer: The answer itself, short: a diagnosis ("Community-acquired pneumonia"), a drug ("doxycycline"),
                or for a multiple-choice task the option letter ("B").
            reasoning: The findings that support the answer, in a few sentences.
        """
        return "Answer submitted."


class ToolDomainEnv(ClinicalEnv):
    """
    ## Description
    A tool-using clinical task: the agent reads a ticket, calls the domain's tools (patient data, orders,
    prescriptions, calculators, knowledge search) one turn at a time, and submits an answer with
    ``submit_answer``. Tools run against an episode-local copy of the domain database, so WRITE tools change only
    this episode's state.

    ## Action Space
    ``UnicodeText(10000)``: a tool call, ``{"name": "<tool>", "arguments": {...}}`` (also accepted, with a lower
    format score: JSON in a code block or ``<tool_call>`` tags, JSON inside prose, ``tool(arg=value)``). Up to
    ``max_calls_per_turn`` calls per turn (a JSON list); a submit call ends the turn.

    ## Observation Space
    ``UnicodeText(100000)``: the tool's result (JSON or text), or ``Error: ...`` saying what was wrong with the
    call; several calls give numbered results. The conversation is ``env.unwrapped.messages``.

    ## Starting State
    A task drawn with ``self.np_random`` from the env's tasks, or chosen with ``options={"task_id": ...}`` (alias
    ``"case_id"``) or ``options={"task": Task | dict}``. The first observation is the task's ticket (with the
    options of a multiple-choice task).

    ## Rewards
    0 per step; at the end the 5-dimension reward (``clinical_gym.rewards.five_d``):
    0.25 accuracy + 0.20 process + 0.20 safety + 0.10 format + 0.10 coherence (+0.15 assertions), severity-4
    violations -0.3 each, any severity-5 violation caps it at 0.1. ``reward="sparse"``: accuracy only.

    ## Episode End
    Termination: a successful ``submit_answer`` call, or ``max_turns`` turns without one (graded with no answer).
    Truncation: only when the LLM judge (``judge=``) fails on an assertion for good: reward 0, ``info["error"]``,
    no ``outcome``, a warning logged (logger ``clinical_gym``). The turn budget is part of the task.

    ## Information
    reset: ``system_prompt`` (the domain policy and the tool list), ``tools`` (OpenAI tool schemas), ``max_turns``.
    Every step: ``turn``, ``reward_components`` (empty until the end), ``tool_calls`` (name, ok, error kind of each
    call this turn). Terminal step: ``reward_components`` (weighted parts summing to the reward), ``outcome``
    (result correct / partially / wrong / no_answer, ``success``, the answer and gold answer, dimension ``scores``,
    ``process``, ``coherence`` checks, ``assertions``, ``violations`` by name and severity, ``violation_names``,
    ``tool_calls``, ``turns``, ``db_hash``) and ``task_id``. Ground truth appears only in the terminal info.

    ## Arguments
    ``gym.make(id, db=None, tasks=None, split=None, max_turns=20, max_calls_per_turn=4, reward="5d" | "sparse",
    reward_config=None, judge=None, render_mode=None, task_seed=None)``; ``tasks``: ``Task`` objects, a task folder
    or task file (``clinical_gym.tool_env.task_folder``: a folder's ``db.json`` is the database unless ``db`` is
    given), or ``"generated:N"``: N tasks of the domain's task generator (``task_generator``;
    ``clinical_gym.tool_env.generation``) for ``task_seed`` (default 0) and ``split``, with their records;
    ``split``: None or "all" (every task), "train", "test"; ``reward_config`` keys are ``FiveDConfig`` fields;
    ``judge`` (an ``LLMClient`` or ``"openai:MODEL"`` / ``"transformers:PATH"``; ``reward="5d"`` only) grades
    assertions that have no rule.

    ## Version History
    * v0: initial release.

    ## Hooks for domains
    ``default_db()``, ``default_tasks()``, ``policy_text()`` (classmethods), ``domain_toolkit(db)``,
    ``shared_toolkits()``, ``canonical_arguments(name, arguments)``, ``patient_facts(db, task)``,
    ``clinical_actions(calls)``; class attributes ``review_categories`` (tool name -> patient-data categories it
    shows), ``record_ids`` (a task field or call argument holding a record id -> the database collection holding
    those records, keyed by it; default ``{"patient_id": "patients"}``: construction fails, naming them, when the
    tasks name records the database lacks), ``can_document`` (the domain has a note-writing tool) and
    ``task_generator`` (``"module:Class"`` of its ``TaskGenerator``, or None). During an episode ``self.db`` is the
    episode's database, ``self.domain_tools`` the domain toolkit bound to it and ``self.toolkit`` everything the
    agent can call.
    """

    review_categories: ClassVar[Mapping[str, frozenset[ReviewCategory]]] = {}
    record_ids: ClassVar[Mapping[str, str]] = {"patient_id": "patients"}
    can_document: ClassVar[bool] = False
    task_generator: ClassVar[str | None] = None

    def __init__(self, db: DomainDB | None = None, tasks: Sequence[Task] | str | PathLike[str] | None = None,
                 split: str | None = None, *, max_turns: int = DEFAULT_MAX_TURNS,
                 max_calls_per_turn: int = DEFAULT_MAX_CALLS_PER_TURN, reward: Literal["5d", "sparse"] = "5d",
                 reward_config: Mapping[str, Any] | None = None, judge: str | LLMClient | None = None,
                 render_mode: str | None = None, task_seed: int | None = None) -> None:
        # Set up what ClinicalEnv.__init__ sets, with tasks in place of patient cases.
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        if reward not in ("5d", "sparse"):
            raise ValueError(f"reward must be '5d' or 'sparse', got {reward!r}")
        if max_turns < 1 or max_calls_per_turn < 1:
            raise ValueError("max_turns and max_calls_per_turn must be at least 1")
        judge = llm_setting(judge, "judge")
        if judge is not None and reward == "sparse":
            raise ValueError("judge is not used by reward='sparse' (accuracy only); use reward='5d' or drop judge")
        self.render_mode = render_mode
        self.max_action_chars = MAX_ACTION_CHARS
        self.observation_space = UnicodeText(MAX_OBSERVATION_CHARS)
        self.action_space = UnicodeText(MAX_ACTION_CHARS)
        self.messages: list[dict[str, str]] = []
        self._done = True
        tasks, db = tasks_argument(tasks, db, type(self), split=split, seed=task_seed)
        self.base_db = db if db is not None else self.default_db()
        self.tasks = select_split(list(tasks) if tasks is not None else self.default_tasks(), split)
        if not self.tasks:
            raise ValueError(f"no tasks{f' in split {split!r}' if split and split != 'all' else ''}")
        self._tasks_by_id = {t.id: t for t in self.tasks}
        self._check_records("the bundled database" if db is None else "the database given")
        self.cases = self.tasks  # what samplers written for ClinicalEnv read ids from (reset takes them as case_id)
        self.case: Task | None = None
        self.max_turns = max_turns
        self.max_calls_per_turn = max_calls_per_turn
        config = FiveDConfig.from_dict({**(reward_config or {}), "sparse": reward == "sparse"})
        self.reward_fn = FiveDReward(config, LLMAssertionJudge(judge) if judge is not None else None)
        self._shared = [*self.shared_toolkits(), EpisodeTools()]
        self._shared_bound: dict[str, BoundTool] | None = None  # their tools, merged once (_toolkit)
        self._checked_names: set[type | tuple[str, ...]] = set()  # domain toolkits checked against them
        probe = self._toolkit(self.domain_toolkit(self.base_db))
        self.tool_schemas = probe.openai_schemas()
        self.tool_kinds = {name: bound.spec.kind for name, bound in probe.tools.items()}
        self.system_prompt = self._system_prompt(probe)

    def _check_records(self, where: str) -> None:
        """A one-line ValueError naming the records that the tasks name (``record_ids``) and ``base_db`` lacks."""
        keys = {argument: self.base_db.record_keys(collection, argument)
                for argument, collection in self.record_ids.items()}
        missing = list(dict.fromkeys(f"{argument} {value!r} (task {task.id})" for task in self.tasks
                                     for argument, value in task.named_records(keys)
                                     if record_key(value) not in keys[argument]))
        if missing:
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            raise ValueError(f"{len(missing)} record(s) the tasks name are not in {where}: {', '.join(missing[:3])}"
                             f"{more}; give the tasks' own records (a db.json beside tasks.json, or db=)")

    # -- hooks ---------------------------------------------------------------------------------------------------
    @classmethod
    def default_db(cls) -> DomainDB:
        """The domain's bundled database (loaded once; never mutated)."""
        raise NotImplementedError

    @classmethod
    def default_tasks(cls) -> list[Task]:
        """The domain's bundled tasks."""
        raise NotImplementedError

    @classmethod
    def policy_text(cls) -> str:
        """The domain's policy (``policy.md``), the first part of the system prompt."""
        raise NotImplementedError

    @classmethod
    def load_task_file(cls, path: str | Path) -> list[Any]:
        """Tasks from a JSON file, in the form this environment's ``tasks=`` argument takes."""
        return load_tasks(path)

    @classmethod
    def load_db_file(cls, path: str | Path) -> DomainDB:
        """The domain's database from a JSON file (the ``db.json`` of a task folder,
        ``clinical_gym.tool_env.task_folder``)."""
        return type(cls.default_db()).load(path)

    def domain_toolkit(self, db: DomainDB) -> Toolkit:
        """The domain's tools, bound to ``db`` (the episode's copy)."""
        raise NotImplementedError

    def shared_toolkits(self) -> list[Toolkit]:
        """Stateless toolkits mounted next to the domain's (calculators, knowledge search); built once per env."""
        return []

    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A call's arguments in the domain's canonical form (e.g. drug aliases resolved), for grading."""
        return arguments

    def patient_facts(self, db: DomainDB, task: Task) -> PatientFacts | None:
        """The task patient's record in canonical terms (None for tasks without a patient)."""
        return None

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        """The clinical actions the agent's successful WRITE calls amount to."""
        return ClinicalActions()

    # -- episode -------------------------------------------------------------------------------------------------
    @property
    def task(self) -> Task:
        """The current episode's task."""
        return self.case  # type: ignore[return-value]

    def _choose_case(self, options: dict[str, Any]) -> Task:  # type: ignore[override]
        if options:  # (a reset without options draws a task)
            unknown = set(options) - {"task_id", "case_id", "task"}
            if unknown:
                hint = " (tool domains take tasks, not patient cases)" if "case" in unknown else ""
                raise ValueError(f"unknown reset option(s) {sorted(unknown)}; use 'task_id' or 'task'{hint}")
            if "task" in options:
                task = options["task"]
                task = Task.model_validate(task) if isinstance(task, dict) else task
                if not isinstance(task, Task):
                    raise TypeError(f"options['task'] must be a Task or a dict, got {type(task).__name__}")
                return task
            task_id = options.get("task_id", options.get("case_id"))
            if task_id is not None:
                try:
                    return self._tasks_by_id[task_id]
                except KeyError:
                    raise ValueError(f"unknown task_id {task_id!r}; {id_hint(list(self._tasks_by_id), 'task')}") \
                        from None
        return self.tasks[int(self.np_random.integers(len(self.tasks)))]

    def _begin(self, task: Task) -> tuple[str, dict[str, Any]]:  # type: ignore[override]
        self.db = self.base_db.episode_copy()
        self.domain_tools = self.domain_toolkit(self.db)
        self.toolkit = self._toolkit(self.domain_tools)
        self.turn = 0
        self.calls: list[CallRecord] = []
        self.turn_formats: list[float] = []
        self.submitted: SubmittedAnswer | None = None
        return task.prompt, {"system_prompt": self.system_prompt, "tools": self.tool_schemas,
                             "max_turns": self.max_turns}

    def _act(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        parsed = parse_tool_calls(action)
        if len(parsed) > self.max_calls_per_turn:
            self.turn_formats.append(0.0)
            return self._turn_end(f"Error: {len(parsed)} tool calls in one turn; the limit is "
                                  f"{self.max_calls_per_turn}. Nothing was run. {CALL_HINT}", [])
        results = []
        for call in parsed:
            result = self.toolkit.call(call)
            results.append(self._record(call, result))
            if result.ends_episode:
                self.submitted = trusted(SubmittedAnswer, answer=str(result.arguments.get("answer", "")),
                                         reasoning=str(result.arguments.get("reasoning", "")),
                                         call_index=len(self.calls) - 1)
                break
        if len(parsed) == 1:  # the usual turn: one call
            self.turn_formats.append(FORMAT_SCORES[parsed[0].form] if parsed[0].error is None else 0.0)
        else:  # the worst form of the turn's calls (all of them, also those after a submit call)
            self.turn_formats.append(min(FORMAT_SCORES[c.form] if c.ok else 0.0 for c in parsed))
        if len(results) == 1:
            obs = self._result_text(results[0])
        else:
            obs = "\n\n".join(f"[{i}] {r.name or 'call'}: {self._result_text(r)}" for i, r in enumerate(results, 1))
        if self.submitted is not None:
            return self._finish(obs + "\nThe task is over.")
        return self._turn_end(obs, results)

    def _reject(self, problem: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        self.turn_formats.append(0.0)
        return self._turn_end(f"Error: {problem}. Reply with one tool call such as {EXAMPLE}; call submit_answer "
                              f"to finish.", [])

    # -- pieces --------------------------------------------------------------------------------------------------
    def _toolkit(self, domain_tools: Toolkit) -> Toolkit:
        """``Toolkit.merge(domain_tools, *shared)``; every reset makes one, so the shared tools are collected once,
        the name-clash check runs once per set of domain tool names, and a domain tool is bound to the episode's
        toolkit only when the agent calls it (``Toolkit.with_bound``)."""
        lazy = "_bound_tools" not in domain_tools.__dict__ and type(domain_tools).tools is Toolkit.tools
        # a class's tool names are its own (checked once per class, not a tuple of 25 names made and hashed per
        # reset); a toolkit already bound or with its own view, by its names
        names = type(domain_tools) if lazy else tuple(domain_tools.tools)
        if names not in self._checked_names:
            merged = Toolkit.merge(domain_tools, *self._shared)  # raises ToolNameClashError
            self._checked_names.add(names)
            return merged
        if self._shared_bound is None:
            self._shared_bound = MappingProxyType(dict(Toolkit.merge(*self._shared).tools))
        return domain_tools.with_bound(self._shared_bound)

    def _system_prompt(self, toolkit: Toolkit) -> str:
        listed = "\n".join(f"- {name} ({bound.spec.kind.value}): {bound.spec.description}"
                           for name, bound in toolkit.tools.items())
        return (f"{self.policy_text().strip()}\n\n## Tools\n{listed}\n\n## How to act\n"
                f"Each turn, call one tool by replying with only a JSON object: {EXAMPLE}. You see the tool's result "
                f"next turn. You have at most {self.max_turns} turns. When you are done, call submit_answer with "
                f"your final answer.")

    def _record(self, call: ParsedCall, result: ToolResult) -> ToolResult:
        arguments = self.canonical_arguments(result.name, dict(result.arguments)) if result.ok else dict(
            result.arguments)
        reviews = self.review_categories.get(result.name, _NO_REVIEWS) if result.ok else _NO_REVIEWS
        # every field of its type (arguments a new dict, reviews a frozenset of known categories): built without
        # re-validation (4.9 -> 3.9 us a call); a domain's reviews of another type or category go through validation
        build = trusted if type(reviews) is frozenset and reviews <= _CATEGORIES else _validated
        self.calls.append(build(
            CallRecord, index=len(self.calls), turn=self.turn, name=result.name, arguments=arguments,
            kind=result.kind, ok=result.ok, error_kind=result.error_kind, form=call.form, content=result.content,
            reviews=reviews))
        return result

    @staticmethod
    def _result_text(result: ToolResult) -> str:
        if result.error_kind == "invalid_call":
            return f"{result.content} {CALL_HINT}"
        return result.content

    def _turn_end(self, obs: str, results: list[ToolResult]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.turn >= self.max_turns:
            return self._finish(f"{obs}\nThe turn limit ({self.max_turns}) is reached; the task is over without an "
                                f"answer.")
        info = {"turn": self.turn, "reward_components": {},
                "tool_calls": [{"name": r.name, "ok": r.ok, "error_kind": r.error_kind} for r in results]}
        return obs, 0.0, False, False, info

    def _finish(self, obs: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        record = self.episode_record()
        graded = self.reward_fn.evaluate(record)
        failed = self._judge_failed(graded, obs)
        if failed is not None:
            return failed
        info = {"turn": self.turn, "reward_components": graded.components,
                "outcome": self._outcome(record, graded), "task_id": self.task.id}
        return obs, graded.total, True, False, info

    def _judge_failed(self, graded: FiveDResult, obs: str) -> tuple[str, float, bool, bool, dict[str, Any]] | None:
        """The truncated step that ends an episode whose LLM judge failed on an assertion (the grade would be
        incomplete, so the episode counts for nothing), or None when every assertion was graded or left out."""
        failures = [v.error for v in graded.assertions if v.error]
        failures += [v.error for v in graded.rubric if v.error]
        if not failures:
            return None
        message = f"the assertion judge failed on {len(failures)} assertion(s): {failures[0]}"
        logger.warning("%s task %s: %s", type(self).__name__, self.task.id, message)
        info = {"turn": self.turn, "reward_components": {}, "error": message, "task_id": self.task.id}
        return f"{obs}\n{JUDGE_FAILED}", 0.0, False, True, info

    def episode_record(self) -> EpisodeRecord:
        """What the reward sees about the episode so far."""
        task = self.task
        # built without re-validation: every value is of its field's type, and the containers are copies (see
        # clinical_gym.tools.trusted; validating copied the 27-entry tool_kinds dict and the call list: 6.5 -> 2 us)
        return trusted(EpisodeRecord, task=task, calls=list(self.calls), turn_formats=list(self.turn_formats),
                       answer=self.submitted, patient=self.patient_facts(self.db, task),
                       actions=self.clinical_actions(self.calls), tool_kinds=dict(self.tool_kinds),
                       can_document=self.can_document, final_db=self.db)

    def _outcome(self, record: EpisodeRecord, graded: FiveDResult) -> dict[str, Any]:
        task = self.task
        answer = record.answer
        return {
            "result": graded.result,
            "success": graded.result == "correct" and 5 not in [v.severity for v in graded.violations],
            "reward": graded.total,
            "answer": answer.answer if answer else None,
            "reasoning": answer.reasoning if answer else None,
            "gold_answer": task.answer,
            "gold_option_text": task.options[task.answer] if task.options else None,
            "scores": graded.scores,
            "process": plain_dump(graded.process, exclude_none=True),  # "rubric" only for tasks with one
            "coherence": graded.coherence.checks,
            "assertions": [verdict_dump(v) for v in graded.assertions],
            "grader_errors": _errors(graded.assertions) + _errors(graded.rubric),
            **({"rubric": [verdict_dump(v) for v in graded.rubric]} if task.rubrics else {}),
            "violations": [plain_dump(v) for v in graded.violations],  # (model_dump, without the serializer)
            "violation_names": [v.name for v in graded.violations],
            "tool_calls": [{"name": c.name, "arguments": c.arguments, "ok": c.ok, "error_kind": c.error_kind,
                            "kind": _KIND_VALUES.get(c.kind)} for c in record.calls],
            "turns": self.turn,
            "db_hash": self.db.get_hash(),
        }
