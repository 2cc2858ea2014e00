"""Benchmark metrics against hand-computed values, and the seeded bootstrap confidence intervals."""

from __future__ import annotations

import numpy as np
import pytest

from clinical_gym.benchmarks.metrics import bootstrap_ci, bootstrap_diff_ci, episode_metrics, metric_values, summarize
from clinical_gym.benchmarks.records import EpisodeRecord, TurnRecord
from clinical_gym.benchmarks.summary import build_summary


def record(family: str, *, outcome: dict | None = None, infos: list[dict] = (), reward: float = 0.0,
           status: str = "ok", agent: str = "a", episode: int = 0, judge: dict | None = None) -> EpisodeRecord:
    turns = [TurnRecord(action="x", observation="y", reward=0.0, info=info) for info in infos]
    return EpisodeRecord(env=f"{family}-env", family=family, agent=agent, episode=episode, seed=0, status=status,
                         outcome=outcome, turns=turns, reward=reward, judge=judge)


def test_inquiry_metrics_by_hand():
    r = record("inquiry", outcome={"result": "partially", "diagnosis_f1": 0.5, "recommendation_f1": 0.25},
               infos=[{"reply_kind": "answered"}, {"reply_kind": "repeated"}, {"reply_kind": "repeated"},
                      {"parse_error": "no <answer> block", "reply_kind": "invalid"}, {"reply_kind": "diagnosis"}],
               reward=3.5, judge={"diagnosis": 80.0, "recommendation": 40.0})
    assert episode_metrics(r) == {
        "accuracy": 0.0, "accuracy_any_format": 0.0, "partial_credit": 0.5, "diagnosis_f1": 0.5, "recommendation_f1": 0.25,
        "judge_diagnosis": 80.0, "judge_recommendation": 40.0, "turns": 5.0, "questions_repeated": 2.0,
        "format_errors": 1.0, "reward": 3.5}
    correct = episode_metrics(record("inquiry", outcome={"result": "correct", "diagnosis_f1": 1.0}))
    assert correct["accuracy"] == 1.0 and correct["partial_credit"] == 1.0
    assert correct["judge_diagnosis"] is None  # no judge configured: nothing to average


def reply(action: str, info: dict) -> TurnRecord:
    return TurnRecord(action=action, observation="y", reward=0.0, info=info)


@pytest.mark.parametrize("action, info, result, expected", [
    # refused for its format (no Recommendation, no closing tag) but names the gold diagnosis: counted
    ("<think>Rash.</think><answer>Diagnosis: Herpes zoster\n</\n", {"parse_error": "no Recommendation"}, "wrong", 1.0),
    # the ICD-10-CM category counts as it does for accuracy
    ("<answer>Diagnosis: shingles (B02.9)", {"parse_error": "no closing tag"}, "wrong", 1.0),
    # refused and names another diagnosis
    ("<answer>Diagnosis: Streptococcal pharyngitis\n</\n", {"parse_error": "no Recommendation"}, "wrong", 0.0),
    # refused without a Diagnosis line: the gold name in free text is not an answer
    ("I think this could be herpes zoster, let me explain", {"parse_error": "no <answer> block"}, "wrong", 0.0),
    # a differential or a label inside the reasoning is not the answer's diagnosis
    ("<answer>Differential diagnosis: Herpes zoster", {"parse_error": "no Recommendation"}, "wrong", 0.0),
    ("<think>Diagnosis: Herpes zoster</think> rest and fluids", {"parse_error": "no <answer> block"}, "wrong", 0.0),
    # accepted and wrong: the environment graded it, nothing to add
    ("<answer>Diagnosis: Herpes zoster\nRecommendation: rest</answer>", {"reply_kind": "diagnosis"}, "wrong", 0.0),
    # accepted and right
    ("<answer>Diagnosis: Herpes zoster\nRecommendation: aciclovir</answer>", {"reply_kind": "diagnosis"}, "correct", 1.0),
])
def test_accuracy_any_format_grades_a_reply_refused_for_its_format(action, info, result, expected):
    r = EpisodeRecord(env="inquiry-env", family="inquiry", agent="a", episode=0, seed=0, status="ok", reward=0.0,
                      outcome={"result": result, "gold_diagnosis": "Herpes zoster", "gold_icd10": "B02.9"},
                      turns=[reply("<answer>Question: where is the rash?</answer>", {"reply_kind": "answered"}),
                             reply(action, info)])
    metrics = episode_metrics(r)
    assert metrics["accuracy_any_format"] == expected
    assert metrics["accuracy"] == float(result == "correct")


def test_workup_metrics_by_hand():
    r = record("workup", outcome={"result": "correct", "accuracy": 1.0, "exam_precision": 2 / 3, "exam_recall": 1.0,
                                  "exam_f1": 0.8}, infos=[{}, {}, {}], reward=1.5)
    assert episode_metrics(r) == pytest.approx({"accuracy": 1.0, "exam_precision": 2 / 3, "exam_recall": 1.0,
                                                "exam_f1": 0.8, "rubric_score": None, "single_turn_hit": None,
                                                "turns": 3.0, "reward": 1.5})


def test_tool_metrics_by_hand():
    outcome = {"success": True, "scores": {"accuracy": 1.0, "process": 0.7, "safety": 0.55, "format": 0.9,
                                           "coherence": 1.0, "assertions": 0.5},
               "violations": [{"name": "a", "severity": 5}, {"name": "b", "severity": 4}, {"name": "c", "severity": 4},
                              {"name": "d", "severity": 1}],
               "tool_calls": [{"name": "get_vital_signs"}, {"name": "think"}, {"name": "submit_answer"}]}
    m = episode_metrics(record("tool", outcome=outcome, infos=[{}, {}, {}], reward=0.1))
    assert m == {"accuracy": 1.0, "process": 0.7, "safety": 0.55, "format": 0.9, "coherence": 1.0,
                 "violations_sev1": 1.0, "violations_sev2": 0.0, "violations_sev3": 0.0, "violations_sev4": 2.0,
                 "violations_sev5": 1.0, "tool_calls": 3.0, "task_success": 1.0, "turns": 3.0, "reward": 0.1}


def test_an_episode_without_outcome_scores_zero_and_tool_calls_come_from_turns():
    failed = record("tool", outcome=None, status="failed",
                    infos=[{"tool_calls": [{"name": "a"}, {"name": "b"}]}, {"agent_failure": "timeout"}])
    m = episode_metrics(failed)
    assert m["accuracy"] == 0.0 and m["task_success"] == 0.0 and m["tool_calls"] == 2.0 and m["turns"] == 2.0


def test_environment_errors_are_left_out_of_the_means_and_counted_apart():
    records = [record("workup", outcome={"accuracy": 1.0}, episode=0),
               record("workup", outcome={"accuracy": 0.0}, episode=1),
               record("workup", outcome={"accuracy": 1.0}, episode=2),
               record("workup", outcome=None, status="error", episode=3),
               record("workup", outcome=None, status="failed", episode=4)]
    assert metric_values(records)["accuracy"] == [1.0, 0.0, 1.0, 0.0]
    agent = build_summary(records, seed=0).envs[0].agents[0]
    assert (agent.episodes, agent.errors, agent.failed) == (5, 1, 1)
    assert agent.metrics["accuracy"].mean == pytest.approx(0.5) and agent.metrics["accuracy"].n == 4


def test_summary_ranks_agents_by_the_primary_metric_then_reward_and_equal_ones_share_a_rank():
    records = [record("inquiry", agent=name, episode=k, outcome={"result": result}, reward=reward)
               for k in range(3) for name, result, reward in
               (("low", "wrong", 5.0), ("top", "correct", 1.0), ("tied-more-reward", "wrong", 9.0),
                ("also-low", "wrong", 5.0))]
    ranked = [(a.rank, a.agent) for a in build_summary(records, seed=0).envs[0].agents]
    assert ranked == [(1, "top"), (2, "tied-more-reward"), (3, "also-low"), (3, "low")]


def test_summarize_skips_missing_values():
    s = summarize([1.0, None, 0.0, 1.0, 1.0], seed=0)
    assert s.mean == pytest.approx(0.75) and s.n == 4 and s.ci_low <= s.mean <= s.ci_high
    assert summarize([None, None], seed=0).mean is None


def test_bootstrap_is_seeded_contains_the_mean_and_shrinks_with_n():
    rng = np.random.default_rng(1)
    small, large = rng.normal(2.0, 1.0, 20), rng.normal(2.0, 1.0, 2000)
    assert bootstrap_ci(small, seed=7) == bootstrap_ci(small, seed=7)
    assert bootstrap_ci(small, seed=7) != bootstrap_ci(small, seed=8)
    for values in (small, large, rng.exponential(1.0, 15), rng.integers(0, 2, 30)):
        low, high = bootstrap_ci(values, seed=0)
        assert low <= float(np.mean(values)) <= high
    width = lambda v: np.subtract(*bootstrap_ci(v, seed=0)[::-1])  # noqa: E731
    assert width(large) < width(small) / 5  # ~1/sqrt(n): sqrt(100) = 10 times narrower
    assert bootstrap_ci([0.4, 0.4, 0.4], seed=0) == (0.4, 0.4)
    assert bootstrap_ci([3.0], seed=0) == (3.0, 3.0)


def test_bootstrap_interval_of_a_difference_covers_the_shift():
    rng = np.random.default_rng(2)
    a, b = rng.normal(0.0, 1.0, 400), rng.normal(1.0, 1.0, 400)
    low, high = bootstrap_diff_ci(a, b, seed=0)
    assert low < 1.0 < high and low > 0.5
    same_low, same_high = bootstrap_diff_ci(a, a, seed=0)
    assert same_low < 0.0 < same_high
