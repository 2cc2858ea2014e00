"""PPO on any clinical-gym environment, CleanRL-style: ``main(cfg)`` reads top to bottom, from seeding through
rollouts, values, token rewards, GAE, the clipped losses and the update to logging and checkpoints.

Papers, equations (Eq. 1-8 below) and deviations: trainers/ppo/README.md.

    clinical-gym train ppo --env ClinicalInquiry-v1 --model PATH --lora-r 8 [--config FILE.yaml] [--resume]
    python -m clinical_gym.trainers.ppo.train --env ClinicalInquiry-v1 --model PATH ...
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from clinical_gym.rollout import EpisodeSpec, RolloutCollector, RolloutLimits, Trajectory
from clinical_gym.trainers.common import runtime, sharding
from clinical_gym.trainers.common.batch import TokenBatch, pack
from clinical_gym.trainers.common.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from clinical_gym.trainers.common.config_cli import module_main
from clinical_gym.trainers.common.gae import (
    Reduce,
    explained_variance,
    generalized_advantages,
    masked_mean_var,
    masked_whiten,
    turn_end_rewards,
)
from clinical_gym.trainers.common.generation import engine_metrics, generation_policy, sync_generation_policy
from clinical_gym.trainers.common.host_memory import HostMemory
from clinical_gym.trainers.common.losses import k3_kl, token_weights
from clinical_gym.trainers.common.metrics_log import MetricsLog
from clinical_gym.trainers.common.model import Reference, eval_mode, frozen_copy, load_model, prepare_model
from clinical_gym.trainers.common.monitors import env_domain, env_metrics, rollout_metrics
from clinical_gym.trainers.common.optim import make_optimizer, make_scheduler
from clinical_gym.trainers.common.sampler import CaseSampler
from clinical_gym.trainers.common.value_head import VALUE_HEAD_FILE, PolicyWithValueHead, TokenOutputs
from clinical_gym.trainers.ppo.config import PPOConfig


@dataclass
class PPOBatch(TokenBatch):
    """A ``TokenBatch`` with the per-token tensors [N, T-1] PPO adds: the rollout policy's values
    (``old_values``), the token rewards, the GAE advantages (``token_advantages``) and the value targets
    (``returns``). ``advantages`` [N] (one per sequence) is unused and 0."""

    old_values: torch.Tensor | None = None
    rewards: torch.Tensor | None = None
    token_advantages: torch.Tensor | None = None
    returns: torch.Tensor | None = None


# ---------------------------------------------------------------------------------------------------------------
# PPO logic
# ---------------------------------------------------------------------------------------------------------------
def token_rewards(trajectories: Sequence[Trajectory], batch: PPOBatch, cfg: PPOConfig) -> tuple[torch.Tensor,
                                                                                                  torch.Tensor]:
    """Per-token rewards [N, T-1] and the per-token k1 KL estimate (0 without a reference)."""
    # Eq. 1: r_k = R_turn · [k is the last generated token of the turn]  −  β · (log π_θold − log π_ref)_k
    rewards = turn_end_rewards(trajectories, batch.input_ids.shape[1]).to(batch.loss_mask.device)
    if batch.ref_logprobs is None:
        return rewards, torch.zeros_like(rewards)
    k1 = (batch.old_logprobs - batch.ref_logprobs) * batch.loss_mask
    if cfg.kl_mode == "reward" and cfg.kl_coef > 0:
        rewards = rewards - cfg.kl_coef * k1
    return rewards, k1


def add_advantages(batch: PPOBatch, rewards: torch.Tensor, cfg: PPOConfig, reduce: Reduce | None) -> PPOBatch:
    """The batch with GAE advantages and returns over its generated tokens (Eq. 2), whitened when asked (Eq. 3)."""
    # Eq. 2: δ_k = r_k + γ V_{k+1} − V_k,  A_k = δ_k + γλ A_{k+1}  over generated tokens only;  R_k = A_k + V_k
    advantages, returns = generalized_advantages(rewards, batch.old_values, batch.loss_mask, cfg.gamma, cfg.lam)
    if cfg.whiten_advantages:
        # Eq. 3: Â_k = (A_k − mean A) / std A  over every generated token of the batch
        advantages = masked_whiten(advantages, batch.loss_mask, reduce)
    batch.rewards, batch.token_advantages, batch.returns = rewards, advantages, returns
    return batch


def policy_loss(logprobs: torch.Tensor, old_logprobs: torch.Tensor, advantages: torch.Tensor, epsilon_low: float,
                epsilon_high: float) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Per-token clipped surrogate loss and its diagnostics."""
    # Eq. 4: ρ_k = π_θ / π_θold;  L^CLIP_k = min(ρ_k Â_k, clip(ρ_k, 1 − ε_low, 1 + ε_high) Â_k)
    log_ratio = logprobs - old_logprobs
    ratio = torch.exp(log_ratio)
    unclipped = ratio * advantages
    clipped = ratio.clamp(1 - epsilon_low, 1 + epsilon_high) * advantages
    parts = {"ratio": ratio.detach(), "clipped": (clipped < unclipped).float(),
             "approx_kl": ((ratio - 1) - log_ratio).detach()}
    return -torch.minimum(unclipped, clipped), parts


def clipped_value_loss(values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor,
                       clip: float | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token value loss and where the clipped branch is the larger one."""
    # Eq. 5: L^V_k = ½ max((V_k − R_k)², (V_old,k + clip(V_k − V_old,k, −ε_v, ε_v) − R_k)²)
    unclipped = (values - returns) ** 2
    if clip is None:
        return 0.5 * unclipped, torch.zeros_like(unclipped)
    moved = old_values + (values - old_values).clamp(-clip, clip)
    clipped = (moved - returns) ** 2
    return 0.5 * torch.maximum(unclipped, clipped), (clipped > unclipped).float()


def ppo_token_loss(out: TokenOutputs, micro: PPOBatch, cfg: PPOConfig) -> tuple[torch.Tensor,
                                                                                 dict[str, torch.Tensor]]:
    """Per-token loss [n, T] (to be aggregated with Eq. 8 weights) and per-token diagnostics."""
    pg_loss, parts = policy_loss(out.logprobs, micro.old_logprobs, micro.token_advantages, cfg.epsilon_low,
                                 cfg.epsilon_high)
    vf_loss, parts["value_clipped"] = clipped_value_loss(out.values, micro.old_values, micro.returns, cfg.value_clip)
    parts["policy_loss"], parts["value_loss"] = pg_loss.detach(), vf_loss.detach()
    # Eq. 8: ℓ_k = −L^CLIP_k + c_v L^V_k − c_H H_k (+ β D_k with the KL in the loss)
    loss = pg_loss + cfg.vf_coef * vf_loss
    if out.entropy is not None:
        # Eq. 6: H_k = −Σ_v π_θ(v | s_k) log π_θ(v | s_k), the policy's entropy at each generated token
        parts["entropy"] = out.entropy.detach()
        if cfg.entropy_coef > 0:
            loss = loss - cfg.entropy_coef * out.entropy
    if micro.ref_logprobs is not None:
        # Eq. 7: k3 estimator of KL(π_θ ‖ π_ref):  exp(d) − d − 1,  d = log π_ref − log π_θ
        kl = k3_kl(out.logprobs, micro.ref_logprobs)
        parts["kl"] = kl.detach()
        if cfg.kl_mode == "loss" and cfg.kl_coef > 0:
            loss = loss + cfg.kl_coef * kl
    return loss, parts


def collect(collector: RolloutCollector, sampler: CaseSampler, cfg: PPOConfig, step: int,
            accelerator: Any) -> list[Trajectory]:
    """``groups_per_step`` cases, ``group_size`` rollouts each (``reset(seed=..., options={"case_id": ...})``, one
    seed per rollout, derived from (seed, process, step))."""
    cases = sampler.next(cfg.groups_per_step)
    seeds = np.random.SeedSequence([cfg.seed, accelerator.process_index, step])
    episode_seeds = seeds.generate_state(len(cases) * cfg.group_size + 1, dtype=np.uint32).tolist()
    specs = [EpisodeSpec(seed=episode_seeds[i * cfg.group_size + g], options={"case_id": case}, group=i)
             for i, case in enumerate(cases) for g in range(cfg.group_size)]
    return collector.collect(specs, seed=episode_seeds[-1])


def single_pass(batch: PPOBatch, cfg: PPOConfig) -> bool:
    """Whether the update is one optimizer step over one micro batch (one epoch, one minibatch, the whole batch in a
    micro batch): then its own forward pass, before any step, is π_θold's, and gives the old logprobs and values
    (``prepare_and_update``) instead of a no-gradient pass that computes the same thing first. As GRPO's on-policy
    update, which takes its detached logprobs as π_θold, dropout (when the model has any) is on in that pass."""
    return cfg.num_epochs == 1 and cfg.num_minibatches == 1 and len(batch) <= cfg.micro_batch_size


def add_rollout_estimates(model: Any, policy_model: Any, reference: Reference, batch: PPOBatch,
                          cfg: PPOConfig) -> PPOBatch:
    """The batch with the rollout policy's logprobs (π_θold) and values from ``model`` (the policy with its value
    head), and π_ref's logprobs when a reference exists (``policy_model``: the unwrapped policy); no-grad passes
    with dropout off, before any update of this step. With a ``single_pass`` update only π_ref's: the update's
    forward pass gives the others."""
    olds, values, refs = [], [], []
    estimate = not single_pass(batch, cfg)
    with eval_mode(model), torch.no_grad():
        for start in range(0, len(batch), cfg.micro_batch_size):
            rows = batch.select(range(start, min(start + cfg.micro_batch_size, len(batch))))
            pad = (0, batch.loss_mask.shape[1] - rows.loss_mask.shape[1])
            if estimate:
                out = model(rows.input_ids, rows.attention_mask, rows.loss_mask, cfg.temperature)
                olds.append(torch.nn.functional.pad(out.logprobs, pad))
                values.append(torch.nn.functional.pad(out.values, pad))
            if reference.available:
                ref = reference.logprobs(policy_model, rows.input_ids, rows.attention_mask, rows.loss_mask,
                                         cfg.temperature)
                refs.append(torch.nn.functional.pad(ref, pad))
    if estimate:
        batch.old_logprobs, batch.old_values = torch.cat(olds), torch.cat(values)
    batch.ref_logprobs = torch.cat(refs) if refs else None
    return batch


def update(model: Any, batch: PPOBatch, cfg: PPOConfig, accelerator: Any, optimizer: Any, scheduler: Any,
           generator: torch.Generator, forwarded: TokenOutputs | None = None) -> dict[str, float]:
    """``num_epochs`` passes over the batch, each split into ``num_minibatches`` optimizer steps; micro-batches
    accumulate gradients. Returns the update's loss statistics. ``forwarded``: the forward pass of a
    ``single_pass`` update over the whole batch in its order, already run (``prepare_and_update``)."""
    sums: dict[str, float] = defaultdict(float)
    grad_norms: list[float] = []
    constant = cfg.loss_constant or cfg.max_episode_tokens
    host = HostMemory.for_device(accelerator.device, cfg.release_host_memory)
    optimizer.zero_grad(set_to_none=True)  # every minibatch then starts from no gradient
    for _epoch in range(cfg.num_epochs):
        # the rows of a forwarded pass stay in their order (one micro batch: the sum is the same in any order)
        order = torch.randperm(len(batch), generator=generator) if forwarded is None else torch.arange(len(batch))
        for minibatch_rows in order.tensor_split(cfg.num_minibatches):
            minibatch = batch.select(minibatch_rows)
            # Eq. 8: aggregation weights (token-mean, sequence-mean or constant) over the whole minibatch
            weights = token_weights(minibatch.loss_mask, cfg.loss_aggregation, constant,
                                    total_tokens=float(accelerator.reduce(minibatch.loss_mask.sum(), "sum")),
                                    total_sequences=float(accelerator.reduce(
                                        torch.tensor(float(len(minibatch)), device=accelerator.device), "sum")))
            starts = range(0, len(minibatch), cfg.micro_batch_size)
            for start in starts:
                rows = list(range(start, min(start + cfg.micro_batch_size, len(minibatch))))
                micro = minibatch.select(rows)
                mask = micro.loss_mask
                out = forwarded if forwarded is not None else forward(model, micro, cfg)
                per_token, parts = ppo_token_loss(out, micro, cfg)
                w = weights[rows, :mask.shape[1]]
                # DDP averages gradients over processes; the weights already divide by the global total
                loss = (per_token * w).sum() * accelerator.num_processes
                host.before_backward()  # CPU: the heap's free pages back; the backward's large blocks mapped
                with nullcontext() if start == starts[-1] else accelerator.no_sync(model):
                    accelerator.backward(loss)
                sums["loss"] += loss.item() / accelerator.num_processes
                sums["policy_loss"] += float((parts.pop("policy_loss") * w).sum())
                sums["value_loss"] += float((parts.pop("value_loss") * w).sum())
                sums["tokens"] += float(mask.sum())
                for name, value in parts.items():
                    sums[name] += float((value * mask).sum())
            norm_cap = cfg.max_grad_norm if cfg.max_grad_norm > 0 else float("inf")
            grad_norms.append(float(accelerator.clip_grad_norm_(model.parameters(), norm_cap)))
            optimizer.step()
            scheduler.step()
            # freed at once, not when the next minibatch starts: kept until the next step, a full fine-tuning run
            # carried a float32 copy of the weights through the rollout and the no-gradient passes
            optimizer.zero_grad(set_to_none=True)
            host.after_step()
    tokens = max(sums["tokens"], 1.0)
    updates = cfg.num_epochs * cfg.num_minibatches
    return {"losses/loss": sums["loss"] / updates,
            "losses/policy_loss": sums["policy_loss"] / updates,
            "losses/value_loss": sums["value_loss"] / updates,
            "losses/entropy": sums["entropy"] / tokens,
            "losses/kl_ref": sums["kl"] / tokens if batch.ref_logprobs is not None else float("nan"),
            "losses/approx_kl": sums["approx_kl"] / tokens,
            "losses/clip_fraction": sums["clipped"] / tokens,
            "losses/value_clip_fraction": sums["value_clipped"] / tokens,
            "losses/ratio_mean": sums["ratio"] / tokens,
            "losses/grad_norm": float(np.mean(grad_norms))}


def forward(model: Any, rows: PPOBatch, cfg: PPOConfig) -> TokenOutputs:
    """The update's forward pass over ``rows``: logprobs, values and entropies, with gradients."""
    return model(rows.input_ids, rows.attention_mask, rows.loss_mask, cfg.temperature, entropy=True,
                 entropy_grad=cfg.entropy_coef > 0)


def prepare_and_update(model: Any, batch: PPOBatch, trajectories: Sequence[Trajectory], cfg: PPOConfig,
                       accelerator: Any, optimizer: Any, scheduler: Any, generator: torch.Generator,
                       reduce: Reduce | None) -> tuple[PPOBatch, dict[str, float], dict[str, float]]:
    """Token rewards, GAE advantages and returns (Eq. 1-3), then the update (Eq. 4-8): the batch, the rollout
    estimates' statistics and the update's. A ``single_pass`` update takes π_θold's logprobs and values from its
    own forward pass, detached, before the advantages that need them."""
    forwarded = None
    if single_pass(batch, cfg):  # add_rollout_estimates left π_θold and V to this pass
        forwarded = forward(model, batch, cfg)
        batch.old_logprobs, batch.old_values = forwarded.logprobs.detach(), forwarded.values.detach()
    # Eq. 1: token rewards at turn ends, minus the k1 KL in "reward" mode; Eq. 2-3: GAE and whitening
    rewards, k1 = token_rewards(trajectories, batch, cfg)
    batch = add_advantages(batch, rewards, cfg, reduce)
    estimates = rollout_estimates(batch, k1, reduce)
    # Eq. 4-8: clipped policy and value losses, entropy bonus, KL
    return batch, estimates, update(model, batch, cfg, accelerator, optimizer, scheduler, generator, forwarded)


def rollout_estimates(batch: PPOBatch, k1: torch.Tensor, reduce: Reduce | None) -> dict[str, float]:
    """Value-function and reward statistics of the batch before the update."""
    mask = batch.loss_mask
    gap, _ = masked_mean_var((batch.sample_logprobs - batch.old_logprobs).abs(), mask, reduce)
    return {"losses/explained_variance": explained_variance(batch.old_values, batch.returns, mask, reduce),
            "rollout/value_mean": masked_mean_var(batch.old_values, mask, reduce)[0],
            "rollout/return_mean": masked_mean_var(batch.returns, mask, reduce)[0],
            "rollout/kl_k1": masked_mean_var(k1, mask, reduce)[0],
            "rollout/logprob_gap": gap}


# ---------------------------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------------------------
def main(cfg: PPOConfig, *, env_factory: Callable[[], gym.Env] | None = None, model: Any | None = None,
         tokenizer: Any | None = None,
         on_collect: Sequence[Callable[[list[Trajectory]], Any]] = ()) -> dict[str, float]:
    """Train with PPO and return the last step's metrics.

    ``env_factory`` replaces ``gym.make(cfg.env, **cfg.env_kwargs)``; ``model`` and ``tokenizer`` replace loading
    ``cfg.model`` (a model that already has a LoRA adapter keeps it; without one, ``prepare_model`` adds it in
    place). A fresh value head goes on top. ``on_collect`` hooks see every batch of rollouts (e.g.
    ``clinical_gym.experience.ExperienceRecorder`` stores each step's good turns). Settings are checked before
    anything loads.
    """
    # -- checks, seeding, devices, environments and the case order ---------------------------------------------
    accelerator, make_env, sampler = runtime.start_run(cfg, env_factory, model, tokenizer)
    reduce = (lambda t: accelerator.reduce(t.to(accelerator.device), "sum")) if accelerator.num_processes > 1 else None

    # -- policy with its value head, reference, optimizer -----------------------------------------------------------
    if model is None:
        model, tokenizer = load_model(cfg)
    actor_critic = PolicyWithValueHead(prepare_model(model, cfg))
    reference_needed = cfg.kl_coef > 0 or cfg.ref_kl_monitor
    frozen = None
    if cfg.fsdp:  # shard the policy with its value head (and a full-fine-tuning reference copy, made first)
        frozen = frozen_copy(actor_critic.policy, reference_needed)
        actor_critic = sharding.shard(actor_critic.to(accelerator.device))
        if frozen is not None:
            sharding.shard(frozen.to(accelerator.device))
    optimizer = make_optimizer(actor_critic.policy, cfg)  # the adapters (LoRA) or every weight
    optimizer.add_param_group({"params": list(actor_critic.value_head.parameters()),
                               "lr": cfg.value_learning_rate or cfg.learning_rate})
    scheduler = make_scheduler(optimizer, cfg, cfg.total_steps * cfg.num_epochs * cfg.num_minibatches)
    model, optimizer = sharding.prepare(accelerator, actor_critic, optimizer, cfg.fsdp)
    actor_critic = accelerator.unwrap_model(model)
    policy_model = actor_critic.policy
    reference = Reference(policy_model, needed=reference_needed, frozen=frozen)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    # -- resume ---------------------------------------------------------------------------------------------------
    checkpoints = Path(cfg.output_dir) / "checkpoints"
    saved = dict(accelerator=accelerator, model=policy_model, optimizer=optimizer, scheduler=scheduler,
                 modules={VALUE_HEAD_FILE: actor_critic.value_head})  # the value head is saved and restored too
    if cfg.fsdp:  # the sharded module is the policy with its head: its full state dict holds both
        saved.update(model=actor_critic, modules={})
    start_step = 0
    if cfg.resume and (found := latest_checkpoint(checkpoints)) is not None:
        state = load_checkpoint(found, **saved)
        start_step = int(state["step"])
        sampler.load_state_dict(state["sampler"])
        accelerator.print(f"resumed from {found} (step {start_step})")

    # -- rollouts -------------------------------------------------------------------------------------------------
    policy = generation_policy(cfg, policy_model, tokenizer)
    limits = RolloutLimits(cfg.max_turn_tokens, cfg.max_episode_tokens, cfg.max_turns)
    collector = RolloutCollector(policy, make_env, tokenizer, limits=limits, num_envs=cfg.num_envs,
                                 on_collect=on_collect)
    log = MetricsLog(cfg.output_dir, accelerator, cfg.total_steps, start_step, cfg.progress)
    domain = env_domain(cfg.env)
    metrics: dict[str, float] = {}

    for step in range(start_step + 1, cfg.total_steps + 1):
        began = time.perf_counter()
        with sharding.gathered(model, reference.copy):  # --fsdp: the passes without gradients on full parameters
            # 1. rollouts: group_size per case
            trajectories = collect(collector, sampler, cfg, step, accelerator)
            rollout_s = time.perf_counter() - began

            # 2. tokens (environment tokens masked); π_θold logprobs, values V and π_ref logprobs at generated tokens
            packed = pack(trajectories, [0.0] * len(trajectories), pad_id)
            batch = PPOBatch(**{f.name: getattr(packed, f.name) for f in fields(packed)}).to(accelerator.device)
            batch = add_rollout_estimates(model, policy_model, reference, batch, cfg)

        # 3. token rewards at turn ends, minus the k1 KL in "reward" mode (Eq. 1); GAE and whitening (Eq. 2-3);
        # 4. clipped policy and value losses, entropy bonus, KL (Eq. 4-8)
        generator = torch.Generator().manual_seed(int(np.random.SeedSequence([cfg.seed, step]).generate_state(1)[0]))
        batch, estimates, losses = prepare_and_update(model, batch, trajectories, cfg, accelerator, optimizer,
                                                      scheduler, generator, reduce)
        sync_generation_policy(policy, policy_model)

        # 5. metrics and checkpoint
        metrics = {**engine_metrics(policy),
                   **rollout_metrics(trajectories), **env_metrics(trajectories, domain), **estimates, **losses,
                   "charts/learning_rate": float(scheduler.get_last_lr()[0]),
                   "charts/rollout_s": rollout_s, "charts/step_s": time.perf_counter() - began}
        log.log(step, metrics)
        if step % cfg.save_every == 0 or step == cfg.total_steps:
            save_checkpoint(checkpoints, step, state={"sampler": sampler.state_dict()}, tokenizer=tokenizer,
                            keep=cfg.keep_checkpoints, **saved)
    log.close()
    return metrics


def cli(argv: Sequence[str] | None = None) -> int:
    """``python -m clinical_gym.trainers.ppo.train``: flags from ``PPOConfig``; bad settings exit 2 with one line."""
    return module_main(PPOConfig, main, argv, prog="python -m clinical_gym.trainers.ppo.train",
                       description=__doc__.splitlines()[0])


if __name__ == "__main__":
    raise SystemExit(cli())
