"""GAE over generated tokens with numbers: step rewards on the last generated token of each turn, environment tokens
skipped in the recursion, several turns and rows of different lengths; whitening and explained variance."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="PPO needs the [train] extra")

from clinical_gym.rollout import Trajectory, Turn  # noqa: E402
from clinical_gym.trainers.common.batch import pack  # noqa: E402
from clinical_gym.trainers.common.gae import (  # noqa: E402
    explained_variance,
    generalized_advantages,
    masked_mean_var,
    masked_whiten,
    turn_end_rewards,
)

ENV = 99.0  # what sits in the reward and value tensors at environment tokens: GAE must never read it


def turn(generated: int, env: int, reward: float) -> Turn:
    return Turn(prompt_len=0, generated_ids=[5] * generated, logprobs=[0.0] * generated, finish_reason="stop",
                action="", env_ids=[7] * env, reward=reward)


def two_turns() -> Trajectory:
    """Tokens: opening 0-2 | turn 1 generates 3-4, environment 5-6 | turn 2 generates 7-9, environment 10.
    Column t of the per-token tensors is about token t + 1, so the generated tokens sit in columns 2, 3, 6, 7, 8."""
    return Trajectory(opening_ids=[1, 2, 3], messages=[], turns=[turn(2, 2, 0.5), turn(3, 1, 2.0)])


def one_turn() -> Trajectory:
    """Tokens: opening 0-1 | one turn generates 2-3, environment 4. Generated columns 1, 2."""
    return Trajectory(opening_ids=[1, 2], messages=[], turns=[turn(2, 1, 1.0)])


def test_step_rewards_sit_on_the_last_generated_token_of_their_turn():
    batch = pack([two_turns(), one_turn()], [0.0, 0.0], pad_token_id=0)
    assert batch.loss_mask.tolist() == [[0, 0, 1, 1, 0, 0, 1, 1, 1, 0],
                                        [0, 1, 1, 0, 0, 0, 0, 0, 0, 0]]
    rewards = turn_end_rewards([two_turns(), one_turn()], batch.input_ids.shape[1])
    assert rewards.tolist() == [[0, 0, 0, 0.5, 0, 0, 0, 0, 2.0, 0],
                                [0, 0, 1.0, 0, 0, 0, 0, 0, 0, 0]]


def test_a_turn_without_generated_tokens_adds_its_reward_to_the_last_generated_token_before_it():
    trajectory = Trajectory(opening_ids=[1, 2], messages=[], turns=[turn(1, 1, 1.0), turn(0, 2, -0.25)])
    rewards = turn_end_rewards([trajectory], 6)
    assert rewards.tolist() == [[0, 0.75, 0, 0, 0]]  # token 2 (column 1) carries both turns' rewards
    nothing_before = Trajectory(opening_ids=[1], messages=[], turns=[turn(0, 1, 3.0)])
    assert turn_end_rewards([nothing_before], 2).tolist() == [[0.0]]


def test_gae_skips_environment_tokens_and_chains_turns():
    batch = pack([two_turns(), one_turn()], [0.0, 0.0], pad_token_id=0)
    mask = batch.loss_mask
    rewards = turn_end_rewards([two_turns(), one_turn()], batch.input_ids.shape[1])
    values = torch.full_like(mask, ENV)
    values[0, [2, 3, 6, 7, 8]] = torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5])
    values[1, [1, 2]] = torch.tensor([0.6, 0.7])
    rewards = torch.where(mask.bool(), rewards, torch.full_like(rewards, ENV))
    advantages, returns = generalized_advantages(rewards, values, mask, gamma=0.9, lam=0.5)

    # row 0, chain k = 0..4 over columns 2, 3, 6, 7, 8 with r = (0, 0.5, 0, 0, 2) and V = (0.1, ..., 0.5), γλ = 0.45:
    # δ4 = 2 + 0 − 0.5 = 1.5                 A4 = 1.5
    # δ3 = 0 + 0.9·0.5 − 0.4 = 0.05          A3 = 0.05 + 0.45·1.5 = 0.725
    # δ2 = 0 + 0.9·0.4 − 0.3 = 0.06          A2 = 0.06 + 0.45·0.725 = 0.38625
    # δ1 = 0.5 + 0.9·0.3 − 0.2 = 0.57        A1 = 0.57 + 0.45·0.38625 = 0.7438125   (V_{k+1}: turn 2's first token)
    # δ0 = 0 + 0.9·0.2 − 0.1 = 0.08          A0 = 0.08 + 0.45·0.7438125 = 0.414715625
    expected_row0 = [0.414715625, 0.7438125, 0.38625, 0.725, 1.5]
    # row 1: δ1 = 1 − 0.7 = 0.3, A1 = 0.3;  δ0 = 0.9·0.7 − 0.6 = 0.03, A0 = 0.03 + 0.45·0.3 = 0.165
    expected_row1 = [0.165, 0.3]
    assert advantages[0, [2, 3, 6, 7, 8]].tolist() == pytest.approx(expected_row0)
    assert advantages[1, [1, 2]].tolist() == pytest.approx(expected_row1)
    values_row0 = [0.1, 0.2, 0.3, 0.4, 0.5]
    assert returns[0, [2, 3, 6, 7, 8]].tolist() == pytest.approx([a + v for a, v in zip(expected_row0, values_row0,
                                                                                        strict=True)])
    assert returns[1, [1, 2]].tolist() == pytest.approx([0.765, 1.0])
    outside = ~mask.bool()
    assert advantages[outside].abs().sum() == 0 and returns[outside].abs().sum() == 0


def test_gae_with_gamma_and_lambda_one_is_the_reward_to_go_minus_the_value():
    batch = pack([two_turns()], [0.0], pad_token_id=0)
    rewards = turn_end_rewards([two_turns()], batch.input_ids.shape[1])
    values = torch.zeros_like(rewards)
    values[0, [2, 3, 6, 7, 8]] = torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5])
    advantages, returns = generalized_advantages(rewards, values, batch.loss_mask, gamma=1.0, lam=1.0)
    # rewards-to-go over the chain: 2.5, 2.5, 2, 2, 2
    assert returns[0, [2, 3, 6, 7, 8]].tolist() == pytest.approx([2.5, 2.5, 2.0, 2.0, 2.0])
    assert advantages[0, [2, 3, 6, 7, 8]].tolist() == pytest.approx([2.4, 2.3, 1.7, 1.6, 1.5])
    # λ = 0: one-step TD errors
    advantages, _ = generalized_advantages(rewards, values, batch.loss_mask, gamma=1.0, lam=0.0)
    assert advantages[0, [2, 3, 6, 7, 8]].tolist() == pytest.approx([0.1, 0.6, 0.1, 0.1, 1.5])


def test_gae_of_an_empty_mask_is_zero():
    zeros = torch.zeros((2, 4))
    advantages, returns = generalized_advantages(torch.ones((2, 4)), torch.ones((2, 4)), zeros, 1.0, 0.95)
    assert advantages.abs().sum() == 0 and returns.abs().sum() == 0


def test_whitening_uses_masked_entries_only():
    x = torch.tensor([[1.0, 2.0, 50.0], [3.0, 50.0, 50.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    assert masked_mean_var(x, mask) == pytest.approx((2.0, 2 / 3))
    white = masked_whiten(x, mask)
    assert white[mask.bool()].tolist() == pytest.approx([-(1.5 ** 0.5), 0.0, 1.5 ** 0.5], rel=1e-6)
    assert white[~mask.bool()].abs().sum() == 0
    # with several processes the statistics are summed over all of them: a reduce that doubles the batch changes
    # nothing, while one that adds another process's share does
    assert masked_mean_var(x, mask, reduce=lambda t: 2 * t) == pytest.approx((2.0, 2 / 3))
    other = torch.tensor([10.0, 100.0, 1.0], dtype=torch.double)  # Σx, Σx², count of a second process
    mean, _ = masked_mean_var(x, mask, reduce=lambda t: t + other)
    assert mean == pytest.approx(4.0)


def test_explained_variance():
    returns = torch.tensor([[1.0, 2.0, 3.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0]])
    assert explained_variance(returns, returns, mask) == pytest.approx(1.0)
    assert explained_variance(torch.full_like(returns, 2.0), returns, mask) == pytest.approx(0.0)
    assert explained_variance(-returns, returns, mask) < 0
    flat = torch.ones_like(returns)
    assert explained_variance(flat, flat, mask) != explained_variance(flat, flat, mask)  # NaN without spread
