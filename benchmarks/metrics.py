"""The papers' metrics per environment family, per episode and as means with 95% bootstrap confidence intervals.

* ClinicalInquiry (DoctorAgent-RL, Doctor-R1): diagnosis accuracy (correct = 1), the same counting final replies
  refused for their format that name the right diagnosis (``accuracy_any_format``), partial credit (correct 1,
  partially 0.5, wrong 0), diagnosis and recommendation word-F1, LLM-judge scores (0-100, when a judge was
  configured), turns, questions repeated, format errors, reward.
* DiagnosticWorkup (DiagGym): diagnosis accuracy, exam precision / recall / F1, the weighted rubric score (cases
  with DiagBench rubrics), turns, reward; with ``protocol="single_turn"`` the single-turn hit ratio (exam steps)
  and the accuracy of the diagnosis steps (DiagBench's single-turn evaluation; each step is one episode).
* tool domains (Healthcare AI GYM): the 5 reward dimensions (accuracy, process, safety, format, coherence),
  safety violations by severity (1-5), tool calls, task success, reward.

An episode without an outcome (the agent failed, or a limit cut it) scores 0 on outcome metrics. Episodes whose
environment failed (status "error") are left out of every mean and counted apart: a broken simulator is not a
wrong answer.

Intervals are percentile bootstraps clustered by case (or task): each resample draws cases with replacement, then
episodes within each drawn case, so that repeats of a case (``--episodes`` above the number of cases, or
``--trials``) are not counted as independent evidence. With one episode per case it is the ordinary bootstrap.
Reliability over repeated trials is tau2-bench's pass^k, the chance that all k trials of a task succeed, estimated
per task from n trials with c successes as C(c, k) / C(n, k) and averaged over tasks; pass@k (at least one of k
succeeds) is 1 - C(n - c, k) / C(n, k).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from clinical_gym.benchmarks.records import EpisodeRecord
from clinical_gym.cases.schema import Diagnosis
from clinical_gym.rewards.diagnosis_match import OUTCOME_SCORES, has_diagnosis_label, match_diagnosis

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


def _accuracy_any_format(record: EpisodeRecord) -> float:
    """Accuracy that also grades a final reply the environment refused for its format: 1 when the episode was
    correct, or when its last reply was invalid (``parse_error``) but has a "Diagnosis:" line naming the gold
    diagnosis (its name or ICD-10-CM category; the case's synonyms are not in the record). It separates learning
    the answer format from learning the diagnosis: accuracy counts both, this only the second."""
    if _result_is(record, "correct"):
        return 1.0
    outcome = record.outcome or {}
    gold, code = outcome.get("gold_diagnosis"), outcome.get("gold_icd10")
    last = record.turns[-1] if record.turns else None
    if not (gold and code and last is not None and "parse_error" in last.info and has_diagnosis_label(last.action)):
        return 0.0
    return float(match_diagnosis(last.action, Diagnosis(name=gold, icd10=code)).outcome == "correct")


def _judge(name: str) -> Callable[[EpisodeRecord], float | None]:
    return lambda r: None if r.judge is None else r.judge.get(name)


def _single_turn_kind(record: EpisodeRecord) -> str | None:
    """"exam" or "diagnosis" for an item of DiagnosticWorkup's single-turn protocol (its id ``CASE@k`` /
    ``CASE@dx``), else None."""
    case_id = record.case_id or ""
    if record.family != "workup" or "@" not in case_id:
        return None
    return "diagnosis" if case_id.endswith("@dx") else "exam"


def _workup(key: str, kinds: tuple[str | None, ...] = (None,)) -> Callable[[EpisodeRecord], float | None]:
    """An outcome value of the episodes of ``kinds`` (None: end-to-end), None for the others."""
    return lambda r: _outcome(r, key) if _single_turn_kind(r) in kinds else None


def _rubric_score(record: EpisodeRecord) -> float | None:
    value = (record.outcome or {}).get("rubric_score")
    return None if value is None else float(value)


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
        Metric("accuracy_any_format", _accuracy_any_format),
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
        Metric("accuracy", _workup("accuracy", (None, "diagnosis"))),
        Metric("exam_precision", _workup("exam_precision")),
        Metric("exam_recall", _workup("exam_recall")),
        Metric("exam_f1", _workup("exam_f1")),
        Metric("rubric_score", _rubric_score),
        Metric("single_turn_hit", _workup("hit", ("exam",))),
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
SUCCESS_METRIC = {"inquiry": "accuracy", "workup": "accuracy", "tool": "task_success"}
"""The 0/1 metric that counts an episode as a success for pass^k and pass@k."""
LOWER_IS_BETTER = frozenset({"questions_repeated", "format_errors", *(f"violations_sev{s}" for s in SEVERITIES)})
NO_BETTER_DIRECTION = frozenset({"turns", "tool_calls"})
"""How many turns or calls an episode took says how an agent works, not how well."""


def direction(name: str) -> int:
    """+1 when a higher value of the metric is better, -1 when lower is better, 0 when neither."""
    return -1 if name in LOWER_IS_BETTER else 0 if name in NO_BETTER_DIRECTION else 1


def episode_metrics(record: EpisodeRecord) -> dict[str, float | None]:
    """Every metric of the record's family for one episode."""
    return {m.name: m.value(record) for m in FAMILY_METRICS[record.family]}


class MetricSummary(BaseModel):
    """A metric's mean over ``n`` episodes and its 95% bootstrap confidence interval."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


def _tail_quantiles(stats: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(stats, [tail, 1.0 - tail])
    return float(low), float(high)


def cluster_resampled_means(values: Sequence[float], clusters: Sequence[Hashable] | None, *, seed: int,
                            resamples: int = RESAMPLES) -> np.ndarray:
    """``resamples`` bootstrap means of ``values``: clusters drawn with replacement, then the episodes within each
    drawn cluster (two-stage); ``clusters`` None makes every value its own cluster."""
    x = np.asarray(values, dtype=float)
    labels = list(range(x.size)) if clusters is None else list(clusters)
    if len(labels) != x.size:
        raise ValueError(f"{x.size} values but {len(labels)} cluster labels")
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, label in enumerate(labels):
        members[label].append(i)
    groups = list(members.values())
    sizes = np.array([len(g) for g in groups])
    padded = np.zeros((len(groups), sizes.max()))
    for row, group in enumerate(groups):
        padded[row, :len(group)] = x[group]
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    block = max(1, 2_000_000 // (len(groups) * sizes.max()))  # resamples per step, bounding memory
    for start in range(0, resamples, block):
        n = min(block, resamples - start)
        drawn = rng.integers(0, len(groups), size=(n, len(groups)))
        drawn_sizes = sizes[drawn]
        within = (rng.random((n, len(groups), sizes.max())) * drawn_sizes[..., None]).astype(int)
        picked = padded[drawn[..., None], within]
        mask = np.arange(sizes.max()) < drawn_sizes[..., None]
        means[start:start + n] = (picked * mask).sum(axis=(1, 2)) / drawn_sizes.sum(axis=1)
    return means


def bootstrap_ci(values: Sequence[float], *, seed: int, clusters: Sequence[Hashable] | None = None,
                 resamples: int = RESAMPLES, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``, clustered by ``clusters`` (see
    ``cluster_resampled_means``; seeded: the same values give the same interval)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1 or np.all(x == x[0]):
        return float(x[0]), float(x[0])
    return _tail_quantiles(cluster_resampled_means(x, clusters, seed=seed, resamples=resamples), confidence)


def bootstrap_diff_ci(a: Sequence[float], b: Sequence[float], *, seed: int, resamples: int = RESAMPLES,
                      confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(b) - mean(a) for two unpaired samples, resampled independently (for
    paired episodes use ``bootstrap_ci`` on the differences)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or y.size == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    diffs = (y[rng.integers(0, y.size, size=(resamples, y.size))].mean(axis=1)
             - x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1))
    return _tail_quantiles(diffs, confidence)


def summarize(values: Sequence[float | None], seed: int, clusters: Sequence[Hashable] | None = None) -> MetricSummary:
    """Mean and interval (clustered by ``clusters``, one label per value) of the values that are not None."""
    labels = range(len(values)) if clusters is None else clusters
    kept = [(float(v), c) for v, c in zip(values, labels) if v is not None]
    if not kept:
        return MetricSummary(mean=None, ci_low=None, ci_high=None, n=0)
    present = [v for v, _ in kept]
    low, high = bootstrap_ci(present, seed=seed, clusters=[c for _, c in kept])
    return MetricSummary(mean=float(np.mean(present)), ci_low=low, ci_high=high, n=len(present))


def task_of(record: EpisodeRecord) -> str:
    """The cluster of an episode: its case or task id (a single-turn item's case; an episode without one is its own
    cluster)."""
    if record.case_id is None:
        return f"episode {record.episode}"
    return record.case_id.rpartition("@")[0] if _single_turn_kind(record) else record.case_id


def scored(records: Sequence[EpisodeRecord]) -> list[EpisodeRecord]:
    """The records that count in the metrics: every one but environment errors."""
    return [r for r in records if r.status != "error"]


def pass_hat_k(trials: int, successes: int, k: int) -> float:
    """tau2-bench's pass^k of one task from ``trials`` with ``successes``: C(c, k) / C(n, k)."""
    return math.comb(successes, k) / math.comb(trials, k)


def pass_at_k(trials: int, successes: int, k: int) -> float:
    """pass@k of one task: 1 - C(n - c, k) / C(n, k), the chance that at least one of k trials succeeds."""
    return 1.0 - math.comb(trials - successes, k) / math.comb(trials, k)


def reliability(records: Sequence[EpisodeRecord], seed: int) -> dict[str, MetricSummary]:
    """pass^k for k = 1 .. K and pass@k for k = 2 .. K, K the fewest scored trials of any task (nothing when K < 2):
    means over tasks of the per-task estimates, with intervals from resampling tasks."""
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for record in scored(records):
        success = episode_metrics(record)[SUCCESS_METRIC[record.family]]
        outcomes[record.case_id or task_of(record)].append(bool(success))  # trials: the same case (or item)
    if not outcomes or min(len(v) for v in outcomes.values()) < 2:
        return {}
    most = min(len(v) for v in outcomes.values())
    found: dict[str, MetricSummary] = {}
    for name, estimate, first in (("pass^", pass_hat_k, 1), ("pass@", pass_at_k, 2)):  # pass@1 is pass^1
        for k in range(first, most + 1):
            per_task = [estimate(len(v), sum(v), k) for v in outcomes.values()]
            found[f"{name}{k}"] = summarize(per_task, seed)
    return found


def metric_values(records: Sequence[EpisodeRecord]) -> dict[str, list[float | None]]:
    """Per metric, the value of every scored episode (environment errors left out), in record order."""
    kept = scored(records)
    if not kept:
        return {}
    names = [m.name for m in FAMILY_METRICS[kept[0].family]]
    rows = [episode_metrics(r) for r in kept]
    return {name: [row[name] for row in rows] for name in names}
