"""The transformers policy's sampler (``transformers_policy.sample_rows``): tokens drawn in proportion to their
probabilities (rows that do not sum to 1 included), never a token of probability 0, the same tokens for the same
seed, and the same tokens for two distributions that differ by float rounding."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the transformers policy needs the [train] extra")

from clinical_gym.rollout.transformers_policy import sample_rows  # noqa: E402


def test_tokens_are_drawn_in_proportion_to_their_probabilities():
    rows = 200_000
    weights = torch.tensor([2.0, 0.0, 1.0, 1.0, 0.0])  # a row's total need not be 1
    drawn = sample_rows(weights.repeat(rows, 1), torch.Generator().manual_seed(0))
    share = torch.bincount(drawn, minlength=5).double() / rows
    expected = torch.tensor([0.5, 0.0, 0.25, 0.25, 0.0], dtype=torch.float64)
    sigma = (expected * (1 - expected) / rows).sqrt()
    assert torch.all((share - expected).abs() <= 5 * sigma + 1e-12), share
    assert share[1] == 0 and share[4] == 0  # probability 0: never drawn


def test_a_row_with_one_token_of_mass_always_draws_it():
    probs = torch.zeros(1000, 7)
    probs[:, 6] = 1.0  # the last column: the end of the row is reachable
    assert torch.equal(sample_rows(probs, torch.Generator().manual_seed(1)), torch.full((1000,), 6))


def test_a_uniform_draw_of_zero_does_not_take_a_rows_only_token_out(monkeypatch):
    """U = 0 (one draw in 2^24) must not make a row's only token of mass lose to the tokens of none."""
    real_rand = torch.rand
    monkeypatch.setattr(torch, "rand", lambda *a, **k: torch.zeros_like(real_rand(*a, **k)))
    probs = torch.zeros(4, 7)
    probs[:, 3] = 1.0
    assert torch.equal(sample_rows(probs, torch.Generator().manual_seed(1)), torch.full((4,), 3))


def test_the_same_seed_draws_the_same_tokens():
    probs = torch.randn(64, 1000, generator=torch.Generator().manual_seed(2)).softmax(-1)
    first = sample_rows(probs, torch.Generator().manual_seed(3))
    assert torch.equal(first, sample_rows(probs, torch.Generator().manual_seed(3)))
    assert not torch.equal(first, sample_rows(probs, torch.Generator().manual_seed(4)))


def test_distributions_that_differ_by_rounding_draw_the_same_tokens():
    """A sharded run and an unsharded one, or a resumed run and a straight one, compute logits that differ in the
    last bits; the sampler must not turn that into different tokens. Inverting the cumulative distribution would
    (any of the 49,151 boundaries the perturbation moves can catch the uniform number: 75 of these 500 rows); the
    race of noisy scores changes a token only where the best two scores are within the perturbation."""
    generator = torch.Generator().manual_seed(5)
    logits = 3 * torch.randn(500, 49_152, generator=generator)
    nudged = logits * (1 + 1e-4 * torch.randn(logits.shape, generator=generator))
    a = sample_rows(logits.softmax(-1), torch.Generator().manual_seed(6))
    b = sample_rows(nudged.softmax(-1), torch.Generator().manual_seed(6))
    assert int((a != b).sum()) <= 2
