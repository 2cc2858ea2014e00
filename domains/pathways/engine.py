"""The pathway engine: where an episode stands in its pathway (``PhaseTracker``), how each phase is judged when the
episode ends (``evaluate_phases``), and the 5-dimension reward with per-phase process coverage
(``PathwayReward``).

Per-phase evaluation. A phase *passes* when it was reached and completed (ended by ``handoff``, or by
``submit_answer`` for the last phase), every required action was done by a successful call made while the phase was
active, every graded assertion of the phase holds on the episode as it stood when the phase ended, and the phase
stayed within its time limit.

Overall reward. The 5D reward of ``clinical_gym.rewards.five_d`` with two changes: process coverage is the mean of
the phases' coverages (a required action counts only when done in its own phase; a phase never reached covers
nothing), and every phase with a time limit adds one assertion, "finished within its time limit", to the assertions
dimension.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.rewards.assertions import AssertionVerdict, check_rule
from clinical_gym.rewards.episode import CallRecord, EpisodeRecord
from clinical_gym.rewards.five_d import FiveDResult, FiveDReward, ProcessScore, process_mix
from clinical_gym.tool_env.tasks import RewardBasis
from clinical_gym.domains.pathways.phases import HANDOFF, PathwayTask, Phase, deadline_text, handoff_action
from clinical_gym.tools import ToolKind

EndedBy = Literal["handoff", "submit", "turn_limit"]
PhaseStatus = Literal["passed", "failed", "not_reached"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PhaseWindow(_Frozen):
    """The calls made while a phase was active (``calls[start:end]``; ``end`` None: to the last call), how it
    ended, and the time it used (tool calls attempted)."""

    index: int
    reached: bool
    start: int = 0
    end: int | None = None
    ended_by: EndedBy | None = None
    time_used: int = 0


class PhaseTracker:
    """One episode's position in its pathway: the current phase, when each phase started and ended (as indices into
    the episode's calls), and the time each used."""

    def __init__(self, task: PathwayTask) -> None:
        self.task = task
        n = len(task.phases)
        self.index = 0
        self.starts: list[int | None] = [0] + [None] * (n - 1)
        self.ends: list[int | None] = [None] * n
        self.ended_by: list[EndedBy | None] = [None] * n
        self.time = [0] * n
        self._late = [False] * n

    @property
    def current(self) -> Phase:
        return self.task.phases[self.index]

    @property
    def is_last(self) -> bool:
        return self.index == len(self.task.phases) - 1

    def charge(self) -> str | None:
        """Count one tool call against the current phase; a notice the first time its time limit is passed."""
        self.time[self.index] += 1
        limit = self.current.deadline_calls
        if limit is None or self.time[self.index] <= limit or self._late[self.index]:
            return None
        self._late[self.index] = True
        return (f"Time limit passed: the {self.current.title} phase has used {self.time[self.index]} tool calls; its "
                f"limit was {deadline_text(self.current)}. The phase is marked late; finish it and hand over.")

    def hand_over(self, calls_so_far: int) -> None:
        """End the current phase with a handoff after ``calls_so_far`` calls and start the next one."""
        self.ends[self.index], self.ended_by[self.index] = calls_so_far, "handoff"
        self.index += 1
        self.starts[self.index] = calls_so_far

    def finish(self, calls_so_far: int, by: EndedBy) -> None:
        """The episode ended (an answer, or the turn limit) in the current phase."""
        self.ends[self.index], self.ended_by[self.index] = calls_so_far, by

    def windows(self) -> list[PhaseWindow]:
        return [PhaseWindow(index=i, reached=start is not None, start=start or 0, end=self.ends[i],
                            ended_by=self.ended_by[i], time_used=self.time[i])
                for i, start in enumerate(self.starts)]

    def status(self, available: list[str]) -> dict[str, Any]:
        """The current phase as the agent may see it (no requirements, no verdicts)."""
        phase = self.current
        return {"pathway": self.task.pathway, "index": self.index + 1, "of": len(self.task.phases),
                "name": phase.name, "title": phase.title, "goal": phase.goal, "time_used": self.time[self.index],
                "time_limit": phase.deadline_calls, "time_limit_label": phase.deadline_label or None,
                "tools": available}


class PathwayEpisodeRecord(EpisodeRecord):
    """An ``EpisodeRecord`` with the phase windows of the episode."""

    windows: list[PhaseWindow] = Field(default_factory=list)


class RequiredAction(_Frozen):
    name: str
    arguments: dict[str, Any]
    done: bool


class PhaseOutcome(_Frozen):
    """How one phase went: ``status``, whether it ``passed`` and why not (``problems``), its required actions,
    assertion verdicts, coverage, and time used against its limit."""

    index: int
    name: str
    title: str
    status: PhaseStatus
    passed: bool
    completed: bool
    ended_by: EndedBy | None
    required_actions: list[RequiredAction]
    required_done: int
    required_total: int
    coverage: float
    assertions: list[AssertionVerdict]
    time_used: int
    time_limit: int | None
    deadline_met: bool
    problems: list[str]


def evaluate_phases(record: PathwayEpisodeRecord, verdicts: list[AssertionVerdict] | None = None
                    ) -> list[PhaseOutcome]:
    """Each phase of ``record``'s pathway task judged on the calls made while it was active. ``verdicts``: the
    task-level assertion verdicts, reused for assertions without a rule (judged on the whole episode). The result
    models are built from values computed here (``model_construct``: no re-validation, this runs every episode)."""
    task = record.task
    assert isinstance(task, PathwayTask)
    by_text = {v.text: v for v in verdicts or []}
    outcomes = []
    last = len(task.phases) - 1
    for i, (phase, window) in enumerate(zip(task.phases, record.windows, strict=True)):
        required = list(phase.required_actions) + ([] if i == last else [handoff_action(phase)])
        if not window.reached:
            outcomes.append(PhaseOutcome.model_construct(
                index=i + 1, name=phase.name, title=phase.title, status="not_reached", passed=False, completed=False,
                ended_by=None, required_actions=[_required(a, False) for a in required],
                required_done=0, required_total=len(required), coverage=0.0 if required else 1.0,
                assertions=[AssertionVerdict.model_construct(text=a.text, passed=False if a.rule else None,
                                                             method="rule" if a.rule else "ungraded", error=None)
                            for a in phase.assertions],
                time_used=0, time_limit=phase.deadline_calls, deadline_met=False, problems=["phase not reached"]))
            continue
        calls = record.calls[window.start:window.end]
        done = _match(required, calls)
        completed = window.ended_by == ("submit" if i == last else "handoff")
        prefix = _prefix(record, window.end, with_answer=i == last)
        checked = [AssertionVerdict.model_construct(text=a.text, passed=check_rule(a.rule, prefix), method="rule",
                                                    error=None) if a.rule
                   else by_text.get(a.text, AssertionVerdict(text=a.text, passed=None, method="ungraded"))
                   for a in phase.assertions]
        deadline_met = phase.deadline_calls is None or window.time_used <= phase.deadline_calls
        problems = [f"required action not done in this phase: {a.name}"
                    + (f" {_shown(a.pattern.arguments)}" if a.pattern.arguments else "")
                    for a, ok in zip(required, done, strict=True) if not ok and a.name != HANDOFF]
        if not completed:
            problems.append("the phase was not completed (no handoff)" if i < last else "no answer submitted")
        problems += [f"assertion failed: {v.text}" for v in checked if v.passed is False]
        if not deadline_met:
            problems.append(f"time limit exceeded: {window.time_used} tool calls, limit {deadline_text(phase)}")
        passed = not problems
        outcomes.append(PhaseOutcome.model_construct(
            index=i + 1, name=phase.name, title=phase.title, status="passed" if passed else "failed", passed=passed,
            completed=completed, ended_by=window.ended_by,
            required_actions=[_required(a, ok) for a, ok in zip(required, done, strict=True)],
            required_done=sum(done), required_total=len(required),
            coverage=sum(done) / len(required) if required else 1.0, assertions=checked,
            time_used=window.time_used, time_limit=phase.deadline_calls, deadline_met=deadline_met,
            problems=problems))
    return outcomes


def _required(action: Any, done: bool) -> RequiredAction:
    return RequiredAction.model_construct(name=action.name, arguments=action.arguments, done=done)


def _match(required: list[Any], calls: list[CallRecord]) -> list[bool]:
    """Whether each required action is matched by a distinct successful call (first match wins)."""
    used: set[int] = set()
    done = []
    for action in required:
        pattern = action.pattern
        hit = next((c.index for c in calls if c.ok and c.index not in used and c.kind is not ToolKind.SUBMIT
                    and pattern.matches(c.name, c.arguments)), None)
        if hit is not None:
            used.add(hit)
        done.append(hit is not None)
    return done


def _prefix(record: PathwayEpisodeRecord, end: int | None, *, with_answer: bool) -> EpisodeRecord:
    """The episode as it stood when a phase ended: the calls up to then, and the answer only for the last phase."""
    return record.model_copy(update={"calls": record.calls[:end], "answer": record.answer if with_answer else None})


def _shown(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in arguments.items())


class PathwayResult(FiveDResult):
    """The 5D result with the per-phase outcomes."""

    phases: list[PhaseOutcome] = Field(default_factory=list)


class PathwayReward(FiveDReward):
    """``FiveDReward`` with per-phase process coverage and time-limit assertions (see the module docstring)."""

    def evaluate(self, record: EpisodeRecord) -> FiveDResult:
        base = super().evaluate(record)
        if not isinstance(record, PathwayEpisodeRecord):
            return base
        cfg = self.config
        task = record.task
        phases = evaluate_phases(record, base.assertions)
        uses_actions = task.uses(RewardBasis.ACTION)
        coverage = sum(p.coverage for p in phases) / len(phases) if uses_actions else 1.0
        matched = [a.name for p in phases for a in p.required_actions if a.done] if uses_actions else []
        missed = [a.name for p in phases for a in p.required_actions if not a.done] if uses_actions else []
        score = process_mix(cfg, coverage, base.process.diversity, base.process.thoroughness, base.process.rubric)
        process = ProcessScore(
            score=score, coverage=coverage, diversity=base.process.diversity, thoroughness=base.process.thoroughness,
            matched_actions=matched, missed_actions=missed, rubric=base.process.rubric)
        assertions = list(base.assertions)
        if task.uses(RewardBasis.NL_ASSERTION):
            assertions += [AssertionVerdict(text=f"The {p.title} phase finished within its time limit "
                                                 f"({p.time_limit} tool calls)",
                                            passed=p.deadline_met and p.completed, method="rule")
                           for p in phases if p.time_limit is not None]
        graded = [v.passed for v in assertions if v.passed is not None]
        scores = {**base.scores, "process": process.score,
                  "assertions": sum(graded) / len(graded) if graded else None}
        components = dict(base.components) if cfg.sparse else self._combine(scores, base.violations)
        return PathwayResult(total=sum(components.values()), components=components, scores=scores,
                             result=base.result, process=process, coherence=base.coherence, assertions=assertions,
                             violations=base.violations, rubric=base.rubric, phases=phases)
