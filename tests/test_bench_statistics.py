"""Benchmark statistics against hand-computed examples: the bootstrap clustered by task, pass^k and pass@k, and the
paired comparison of two agents (``bench compare``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from clinical_gym.benchmarks.compare import Side, compare, compare_agents, format_comparison
from clinical_gym.benchmarks.metrics import (
    bootstrap_ci,
    cluster_resampled_means,
    pass_at_k,
    pass_hat_k,
    reliability,
    summarize,
)
from clinical_gym.benchmarks.records import EpisodeRecord, append_records
from clinical_gym.benchmarks.summary import build_summary

TASKS = ["A", "A", "B", "B", "C", "C", "D", "D"]


def width(interval: tuple[float, float]) -> float:
    return interval[1] - interval[0]


def test_clustered_interval_is_wider_when_outcomes_go_by_task():
    """4 tasks x 2 episodes, accuracy 1,1 | 1,1 | 0,0 | 0,0. By hand:
    * episodes as independent: the resampled mean is k/8 with k ~ Binomial(8, 1/2); P(k <= 0) = 0.4% < 2.5% <=
      P(k <= 1) = 3.5%, so the 2.5% and 97.5% quantiles are 1/8 and 7/8: width 0.75;
    * clustered: the mean is j/4 with j ~ Binomial(4, 1/2) drawn tasks that succeed; P(j = 0) = 6.25% > 2.5%, so
      the quantiles are 0 and 1: width 1.0."""
    by_task = [1, 1, 1, 1, 0, 0, 0, 0]
    assert bootstrap_ci(by_task, seed=0) == (0.125, 0.875)
    assert bootstrap_ci(by_task, seed=0, clusters=TASKS) == (0.0, 1.0)
    # The same values mixed within every task (1,0 | 1,0 | ...): every draw of a task is a fair coin again, so the
    # clustered resample is 8 fair coins and the interval is the episode-level one, 0.75 wide.
    within = [1, 0, 1, 0, 1, 0, 1, 0]
    assert bootstrap_ci(within, seed=0, clusters=TASKS) == (0.125, 0.875)
    for seed in range(1, 4):
        assert width(bootstrap_ci(by_task, seed=seed, clusters=TASKS)) == 1.0
        assert width(bootstrap_ci(by_task, seed=seed)) == 0.75


def test_two_stage_resampling_has_the_hand_computed_spread():
    """Tasks (0, 2), (4, 4), (8, 10): task means 1, 4, 9, grand mean 14/3. Two-stage bootstrap variance of the mean
    (m = 3 tasks, n = 2 each): (S_b^2 + S_w^2 / n) / m with S_b^2 = 98/9 (spread of task means) and S_w^2 = 2/3
    (mean within-task variance): 3.7407, sd 1.934. Treating the 6 episodes as independent: 104/9 / 6, sd 1.388."""
    values, clusters = [0, 2, 4, 4, 8, 10], ["a", "a", "b", "b", "c", "c"]
    clustered = cluster_resampled_means(values, clusters, seed=0, resamples=40_000)
    independent = cluster_resampled_means(values, None, seed=0, resamples=40_000)
    assert clustered.mean() == pytest.approx(14 / 3, abs=0.03)
    assert clustered.std() == pytest.approx(math.sqrt((98 / 9 + (2 / 3) / 2) / 3), rel=0.02)
    assert independent.std() == pytest.approx(math.sqrt(104 / 9 / 6), rel=0.02)


def test_clustered_bootstrap_handles_unequal_tasks_and_singletons():
    rng = np.random.default_rng(3)
    values = rng.normal(size=37)
    clusters = [i % 5 if i < 30 else f"alone-{i}" for i in range(37)]  # 5 tasks of 6, 7 of 1
    low, high = bootstrap_ci(values, seed=1, clusters=clusters)
    assert low < values.mean() < high
    assert bootstrap_ci(values, seed=1, clusters=clusters) == (low, high)  # seeded
    stat = summarize([1.0, None, 0.0, 1.0], seed=0, clusters=["x", "y", "y", "z"])
    assert stat.n == 3 and stat.mean == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="cluster labels"):
        cluster_resampled_means([1.0, 2.0], ["a"], seed=0)


def test_pass_hat_k_and_pass_at_k_by_hand():
    # n = 4 trials, c = 2 successes: pass^1 = 2/4, pass^2 = C(2,2)/C(4,2) = 1/6, pass^3 = 0;
    # pass@2 = 1 - C(2,2)/C(4,2) = 5/6, pass@3 = 1 - 0 = 1.
    assert [pass_hat_k(4, 2, k) for k in (1, 2, 3)] == pytest.approx([0.5, 1 / 6, 0.0])
    assert [pass_at_k(4, 2, k) for k in (1, 2, 3)] == pytest.approx([0.5, 5 / 6, 1.0])
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_at_k(3, 0, 3) == 0.0


def record(agent: str, episode: int, case: str, correct: bool, *, seed: int | None = None, status: str = "ok",
           turns: int = 2, env: str = "DiagnosticWorkup-v1") -> EpisodeRecord:
    outcome = {"accuracy": float(correct), "exam_precision": 0.5, "exam_recall": 0.5, "exam_f1": 0.5}
    return EpisodeRecord(env=env, family="workup", agent=agent, episode=episode, seed=episode if seed is None else seed,
                         case_id=case, status=status, outcome=None if status == "error" else outcome,
                         reward=float(correct), turns=[{"action": "a", "observation": "o", "reward": 0.0}] * turns)


def test_reliability_over_trials_averages_tasks_and_needs_two_trials():
    # Task A: 4 trials, 2 successes; task B: 4 trials, all succeed; an environment error is not a trial.
    records = [record("x", k, "A", k < 2) for k in range(4)] + [record("x", 4 + k, "B", True) for k in range(4)]
    records.append(record("x", 8, "B", False, status="error"))
    found = reliability(records, seed=0)
    assert set(found) == {"pass^1", "pass^2", "pass^3", "pass^4", "pass@2", "pass@3", "pass@4"}
    assert found["pass^1"].mean == pytest.approx((0.5 + 1) / 2)
    assert found["pass^2"].mean == pytest.approx((1 / 6 + 1) / 2)
    assert found["pass^3"].mean == pytest.approx(0.5) and found["pass@2"].mean == pytest.approx((5 / 6 + 1) / 2)
    assert reliability([record("x", 0, "A", True), record("x", 1, "B", True)], seed=0) == {}
    agent = build_summary(records, seed=0).envs[0].agents[0]
    assert agent.tasks == 2 and agent.reliability["pass^4"].mean == pytest.approx(0.5)


def write_run(folder, records):
    folder.mkdir()
    append_records(folder, records)
    return folder


def test_paired_comparison_uses_shared_episodes_only_and_clusters_by_task(tmp_path):
    # A and B share episodes 0-5 (same case and seed); B has 2 episodes A lacks; one of A's is an environment error.
    a = [record("baseline", k, "AB"[k % 2], k % 2 == 0) for k in range(6)]
    a[5] = record("baseline", 5, "B", False, status="error")
    b = [record("trained", k, "AB"[k % 2], True) for k in range(6)] + [record("trained", 9, "C", True)]
    b.append(record("trained", 10, "A", True, seed=999))  # case A but another reset seed: not the same episode
    first, second = write_run(tmp_path / "one", a), write_run(tmp_path / "two", b)
    (comparison,) = compare(Side(first), Side(second))
    assert (comparison.episodes_a, comparison.episodes_b, comparison.paired, comparison.tasks) == (6, 8, 5, 2)
    accuracy = next(m for m in comparison.metrics if m.metric == "accuracy")
    # paired differences: task A 0,0,0 (baseline right on even episodes), task B 1,1 -> mean 2/5
    assert (accuracy.mean_a, accuracy.mean_b, accuracy.diff) == pytest.approx((0.6, 1.0, 0.4))
    assert (accuracy.ci_low, accuracy.ci_high) == bootstrap_ci([0, 1, 0, 1, 0], seed=0, clusters=list("ABABA"))
    text = format_comparison(Side(first), Side(second), [comparison])
    assert "DiagnosticWorkup-v1 · baseline vs trained: 5 paired episodes over 2 tasks (A played 6, B 8)" in text
    assert "turns" in text and "accuracy" in text


def test_compare_any_two_agents_of_one_or_two_runs(tmp_path):
    run = write_run(tmp_path / "run", [record(name, k, f"c{k}", name == "good") for name in ("good", "bad", "odd")
                                      for k in range(4)])
    (comparison,) = compare(Side(run, "bad"), Side(run, "good"))
    assert comparison.paired == 4 and next(m for m in comparison.metrics if m.metric == "accuracy").diff == 1.0
    other = write_run(tmp_path / "other", [record("good", k, f"c{k}", k < 2) for k in range(4)])
    (across,) = compare(Side(run), Side(other))  # the agent both runs have
    assert (across.agent_a, across.agent_b, across.paired) == ("good", "good", 4)
    with pytest.raises(ValueError, match="has agents bad, good, odd: say which one"):
        compare(Side(run), Side(other, "good"))
    with pytest.raises(ValueError, match="comparing a folder with itself"):
        compare(Side(run), Side(run))
    with pytest.raises(ValueError, match="no agent 'nobody'"):
        compare(Side(run, "nobody"), Side(other))
    shifted = write_run(tmp_path / "shifted", [record("good", k, f"c{k}", True, seed=100 + k) for k in range(4)])
    with pytest.raises(ValueError, match="share no episode"):
        compare(Side(run, "good"), Side(shifted))


def test_verdicts_follow_each_metrics_better_direction():
    a = [record("a", k, f"c{k}", False, turns=2) for k in range(6)]
    b = [record("b", k, f"c{k}", True, turns=5) for k in range(6)]
    metrics = {m.metric: m for m in compare_agents("DiagnosticWorkup-v1", a, b).metrics}
    assert metrics["accuracy"].verdict == "B better" and metrics["turns"].verdict == ""  # no better direction
    assert compare_agents("DiagnosticWorkup-v1", b, a).metrics[0].verdict == "A better"
