"""Token-level returns for value-based trainers: step rewards placed on the last generated token of each turn,
generalized advantage estimation over generated tokens only (environment tokens are skipped, so the generated
tokens of consecutive turns are neighbours in the recursion), masked whitening and explained variance.

Per-token tensors use the ``TokenBatch`` layout: [sequences, length - 1], column ``t`` is about token ``t + 1``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from clinical_gym.rollout import Trajectory

# Sums a tensor over every process (``lambda t: accelerator.reduce(t, "sum")``); None for one process.
Reduce = Callable[[torch.Tensor], torch.Tensor]


def turn_end_rewards(trajectories: Sequence[Trajectory], width: int) -> torch.Tensor:
    """[len(trajectories), width - 1]: each turn's step reward on the column of the last token generated so far
    (its own last generated token; an earlier turn's when it generated none; nowhere when no generated token
    precedes it), 0 elsewhere. ``width`` is the padded sequence length (``TokenBatch.input_ids.shape[1]``)."""
    rewards = torch.zeros((len(trajectories), width - 1))
    for row, trajectory in enumerate(trajectories):
        position = len(trajectory.opening_ids)  # index of the next token in token_ids()
        last_generated: int | None = None
        for turn in trajectory.turns:
            position += len(turn.generated_ids)
            if turn.generated_ids:
                last_generated = position - 1
            if last_generated:  # column t is about token t + 1; token 0 is never predicted
                rewards[row, last_generated - 1] += turn.reward
            position += len(turn.env_ids)
    return rewards


def generalized_advantages(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float,
                           lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE(γ, λ) per sequence over the positions where ``mask`` is 1, in order, as one chain: the step after a
    generated token is the next generated token, whatever environment tokens lie between; after the last one the
    value is 0 (the episode is over). Returns ``(advantages, returns)``, both 0 where ``mask`` is 0, with
    ``returns = advantages + values``.

        δ_k = r_k + γ V_{k+1} − V_k,   A_k = δ_k + γ λ A_{k+1},   V_K = A_K = 0
    """
    mask = mask.bool()
    counts = mask.sum(dim=1)
    chain = int(counts.max()) if mask.numel() else 0
    out_adv = torch.zeros_like(values, dtype=torch.float)
    if chain == 0:
        return out_adv, out_adv.clone()
    # column order that puts each row's masked positions first, in sequence order
    order = torch.argsort((~mask).to(torch.int8), dim=1, stable=True)[:, :chain]
    valid = torch.arange(chain, device=mask.device)[None, :] < counts[:, None]
    r = rewards.float().gather(1, order) * valid
    v = values.float().gather(1, order) * valid
    adv = torch.zeros_like(r)
    running = torch.zeros(r.shape[0], dtype=r.dtype, device=r.device)
    next_value = torch.zeros_like(running)
    for k in range(chain - 1, -1, -1):  # padding past a row's chain has r = v = 0, so it stays 0 there
        delta = r[:, k] + gamma * next_value - v[:, k]
        running = delta + gamma * lam * running
        adv[:, k] = running
        next_value = v[:, k]
    out_adv.scatter_(1, order, adv * valid)
    returns = torch.where(mask, out_adv + values.float(), torch.zeros_like(out_adv))
    return out_adv, returns


def masked_mean_var(x: torch.Tensor, mask: torch.Tensor, reduce: Reduce | None = None) -> tuple[float, float]:
    """Mean and (population) variance of ``x`` where ``mask`` is 1, over every process when ``reduce`` is given."""
    mask = mask.float()
    stats = torch.stack([(x * mask).sum(), (x * x * mask).sum(), mask.sum()]).double()
    if reduce is not None:
        stats = reduce(stats)
    total, squares, count = (float(s) for s in stats)
    if count == 0:
        return 0.0, 0.0
    mean = total / count
    return mean, max(squares / count - mean * mean, 0.0)


def masked_whiten(x: torch.Tensor, mask: torch.Tensor, reduce: Reduce | None = None,
                  eps: float = 1e-8) -> torch.Tensor:
    """``(x − mean) / sqrt(var + eps)`` over the masked entries (0 elsewhere)."""
    mean, var = masked_mean_var(x, mask, reduce)
    return (x - mean) / (var + eps) ** 0.5 * mask.float()


def explained_variance(values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor,
                       reduce: Reduce | None = None) -> float:
    """``1 − Var(returns − values) / Var(returns)`` over the masked entries: 1 for a perfect value function, 0 for
    one no better than a constant, negative for a worse one; NaN when the returns do not vary."""
    _, residual = masked_mean_var(returns - values, mask, reduce)
    _, spread = masked_mean_var(returns, mask, reduce)
    return float("nan") if spread == 0 else 1.0 - residual / spread
