"""Stage 3 of retrieval (Eq. 5-6) with thresholds computed by hand: the reward threshold mean + beta * std of the
candidates, the novelty filter against the query and against kept experiences, and the top-k cut."""

from __future__ import annotations

import numpy as np
import pytest

from clinical_gym.experience import Candidate, Experience, RetrievalConfig, apply_filters, reward_threshold


def candidate(name: str, reward: float, similarity: float) -> Candidate:
    return Candidate(Experience(state=f"state {name}", action=f"action {name}", reward=reward), similarity, 0.0)


def names(kept: list[Candidate]) -> list[str]:
    return [c.experience.state.split()[-1] for c in kept]


def test_reward_threshold_is_mean_plus_beta_population_std():
    # mean 0.85; deviations 0.15, 0.05, 0.05, 0.15 -> variance 0.05 / 4 = 0.0125 -> std 0.111803
    assert reward_threshold([0.7, 0.8, 0.9, 1.0], beta=1.0) == pytest.approx(0.961803, abs=1e-6)
    assert reward_threshold([0.7, 0.8, 0.9, 1.0], beta=0.5) == pytest.approx(0.905902, abs=1e-6)
    assert reward_threshold([0.8, 0.8, 0.8], beta=1.0) == pytest.approx(0.8)


def test_rewards_below_the_threshold_are_dropped():
    pool = [candidate("a", 0.7, 0.1), candidate("b", 0.8, 0.1), candidate("c", 0.9, 0.1), candidate("d", 1.0, 0.1)]
    no_overlap = np.zeros((4, 4))
    assert names(apply_filters(pool, no_overlap, RetrievalConfig(beta=1.0, k=4))) == ["d"]  # threshold 0.9618
    assert names(apply_filters(pool, no_overlap, RetrievalConfig(beta=0.0, k=4))) == ["c", "d"]  # threshold 0.85
    assert names(apply_filters(pool, no_overlap, RetrievalConfig(beta=-1.0, k=4))) == ["b", "c", "d"]  # 0.7382


def test_the_threshold_never_exceeds_the_best_reward():
    # six 1.0 and four 0.7: mean 0.88, std 0.146969 -> 1.026969, above every reward: capped at 1.0
    pool = [candidate(f"top{i}", 1.0, 0.1) for i in range(6)] + [candidate(f"low{i}", 0.7, 0.1) for i in range(4)]
    assert reward_threshold([c.experience.reward for c in pool], 1.0) == pytest.approx(1.026969, abs=1e-6)
    assert names(apply_filters(pool, np.zeros((10, 10)), RetrievalConfig(k=10))) == [f"top{i}" for i in range(6)]


def test_equal_rewards_are_all_kept():
    pool = [candidate(n, 0.8, 0.1) for n in "abc"]
    assert names(apply_filters(pool, np.zeros((3, 3)), RetrievalConfig(k=3))) == ["a", "b", "c"]


def test_near_duplicates_of_the_query_and_of_kept_experiences_are_dropped_then_top_k():
    # Rewards: five 1.0 and five 0.7 -> mean 0.85, std 0.15, threshold exactly 1.0 (a reward equal to it is kept).
    pool = [candidate("a", 1.0, 0.95),   # similarity to the query >= 0.9: near-duplicate of the query
            candidate("b", 0.7, 0.50),   # reward below 1.0
            candidate("c", 1.0, 0.89),   # kept
            candidate("d", 1.0, 0.70),   # similarity 0.93 to c (kept): near-duplicate
            candidate("e", 1.0, 0.60),   # similarity 0.85 to c: kept
            candidate("f", 1.0, 0.50),   # would pass, but k = 2 are already kept
            *[candidate(f"low{i}", 0.7, 0.4) for i in range(4)]]
    pairwise = np.zeros((10, 10))
    pairwise[2, 3] = pairwise[3, 2] = 0.93
    pairwise[2, 4] = pairwise[4, 2] = 0.85
    assert names(apply_filters(pool, pairwise, RetrievalConfig())) == ["c", "e"]
    assert names(apply_filters(pool, pairwise, RetrievalConfig(k=5))) == ["c", "e", "f"]
    assert names(apply_filters(pool, pairwise, RetrievalConfig(novelty=0.96, k=5))) == ["a", "c", "d", "e", "f"]


def test_the_novelty_threshold_is_inclusive():
    pool = [candidate("a", 1.0, 0.9), candidate("b", 1.0, 0.899)]
    assert names(apply_filters(pool, np.zeros((2, 2)), RetrievalConfig())) == ["b"]
    pairwise = np.array([[1.0, 0.9], [0.9, 1.0]])
    both_novel = [candidate("a", 1.0, 0.2), candidate("b", 1.0, 0.2)]
    assert names(apply_filters(both_novel, pairwise, RetrievalConfig())) == ["a"]


def test_no_candidates_no_experiences():
    assert apply_filters([], np.zeros((0, 0)), RetrievalConfig()) == []


def test_settings_are_checked():
    with pytest.raises(ValueError, match="k must be"):
        RetrievalConfig(k=0)
    with pytest.raises(ValueError, match="alpha"):
        RetrievalConfig(alpha=-0.1)
