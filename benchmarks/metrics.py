"""The papers' metrics per environment family, per episode and as means with 95% bootstrap confidence intervals.

* ClinicalInquiry (DoctorAgent-RL, Doctor-R1): diagnosis accuracy (correct = 1), partial credit (correct 1,
  partially 0.5, wrong 0), diagnosis and recommendation word-F1, LLM-judge scores (0-100, when a judge was
  configured), turns, questions repeated, format errors, reward.
* DiagnosticWorkup (DiagGym): diagnosis accuracy, exam precision / recall / F1, turns, reward.
* tool domains (Healthcare AI GYM): the 5 reward dimensions (accuracy, process, safety, format, coherence),
  safety violations by severity (1-5), tool calls, task success, reward.

An episode without an outcome (the agent failed, or a limit cut it) scores 0 on outcome metrics. Episodes whose
environment failed (status "error") are left out of every mean and counted apart: a broken simulator is not a
wrong answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from clinical_gym.benchmarks.records import EpisodeRecord
from clinical_gym.rewards.diagnosis_match import OUTCOME_SCORES

CONFIDENCE = 0.95
RESAMPLES = 2000
SEVERITIES = (1, 2, 3, 4, 5)
TOOL_DIMENSIONS = ("accuracy", "process", "safety", "format", "coherence")


@dataclass(frozen=True)
class Metric:
    """One per-episode metric: ``value(record)`` is None when the episode has nothing to measure."""

    name: str
    value: Callable[[EpisodeRecord], float | None]


def _outcome(record: EpisodeRecord, key: str) -> float:
    return float((record.outcome or {}).get(key) or 0.0)


def _result_is(record: EpisodeRecord, result: str) -> float:
    return float((record.outcome or {}).get("result") == result)


def _count_turns(record: EpisodeRecord, test: Callable[[dict], bool]) -> float:
    return float(sum(test(t.info) for t in record.turns))


def _judge(name: str) -> Callable[[EpisodeRecord], float | None]:
    return lambda r: None if r.judge is None else r.judge.get(name)


def _dimension(name: str) -> Callable[[EpisodeRecord], float | None]:
    return lambda r: float(((r.outcome or {}).get("scores") or {}).get(name) or 0.0)


def _violations(severity: int) -> Callable[[EpisodeRecord], float]:
    return lambda r: float(sum(v.get("severity") == severity for v in (r.outcome or {}).get("violations") or ()))


def _tool_calls(record: EpisodeRecord) -> float:
    calls = (record.outcome or {}).get("tool_calls")
    if calls is not None:
        return float(len(calls))
    return float(sum(len(t.info.get("tool_calls") or ()) for t in record.turns))


TURNS = Metric("turns", lambda r: float(len(r.turns)))
REWARD = Metric("reward", lambda r: r.reward)
FAMILY_METRICS: dict[str, tuple[Metric, ...]] = {
    "inquiry": (
        Metric("accuracy", lambda r: _result_is(r, "correct")),
        Metric("partial_credit", lambda r: OUTCOME_SCORES.get((r.outcome or {}).get("result"), 0.0)),
        Metric("diagnosis_f1", lambda r: _outcome(r, "diagnosis_f1")),
        Metric("recommendation_f1", lambda r: _outcome(r, "recommendation_f1")),
        Metric("judge_diagnosis", _judge("diagnosis")),
        Metric("judge_recommendation", _judge("recommendation")),
        TURNS,
        Metric("questions_repeated", lambda r: _count_turns(r, lambda i: i.get("reply_kind") == "repeated")),
        Metric("format_errors", lambda r: _count_turns(r, lambda i: "parse_error" in i)),
        REWARD,
    ),
    "workup": (
        Metric("accuracy", lambda r: _outcome(r, "accuracy")),
        Metric("exam_precision", lambda r: _outcome(r, "exam_precision")),
        Metric("exam_recall", lambda r: _outcome(r, "exam_recall")),
        Metric("exam_f1", lambda r: _outcome(r, "exam_f1")),
        TURNS,
        REWARD,
    ),
    "tool": (
        *(Metric(name, _dimension(name)) for name in TOOL_DIMENSIONS),
        *(Metric(f"violations_sev{s}", _violations(s)) for s in SEVERITIES),
        Metric("tool_calls", _tool_calls),
        Metric("task_success", lambda r: float(bool((r.outcome or {}).get("success")))),
        TURNS,
        REWARD,
    ),
}
PRIMARY_METRIC = {"inquiry": "accuracy", "workup": "accuracy", "tool": "reward"}
"""The metric agents are ranked by in reports (ties broken by reward)."""


def episode_metrics(record: EpisodeRecord) -> dict[str, float | None]:
    """Every metric of the record's family for one episode."""
    return {m.name: m.value(record) for m in FAMILY_METRICS[record.family]}


class MetricSummary(BaseModel):
    """A metric's mean over ``n`` episodes and its 95% bootstrap confidence interval."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


def bootstrap_ci(values: Sequence[float], *, seed: int, resamples: int = RESAMPLES,
                 confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (seeded: the same values give the same interval)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1 or np.all(x == x[0]):
        return float(x[0]), float(x[0])
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def bootstrap_diff_ci(a: Sequence[float], b: Sequence[float], *, seed: int, resamples: int = RESAMPLES,
                      confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(b) - mean(a), resampling the two samples independently."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or y.size == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    diffs = (y[rng.integers(0, y.size, size=(resamples, y.size))].mean(axis=1)
             - x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1))
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(diffs, [tail, 1.0 - tail])
    return float(low), float(high)


def summarize(values: Sequence[float | None], seed: int) -> MetricSummary:
    """Mean and interval of the values that are not None."""
    present = [float(v) for v in values if v is not None]
    if not present:
        return MetricSummary(mean=None, ci_low=None, ci_high=None, n=0)
    low, high = bootstrap_ci(present, seed=seed)
    return MetricSummary(mean=float(np.mean(present)), ci_low=low, ci_high=high, n=len(present))


def metric_values(records: Sequence[EpisodeRecord]) -> dict[str, list[float | None]]:
    """Per metric, the value of every scored episode (environment errors left out), in record order."""
    scored = [r for r in records if r.status != "error"]
    if not scored:
        return {}
    names = [m.name for m in FAMILY_METRICS[scored[0].family]]
    rows = [episode_metrics(r) for r in scored]
    return {name: [row[name] for row in rows] for name in names}
