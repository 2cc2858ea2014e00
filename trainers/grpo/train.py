"""GRPO on any clinical-gym environment, CleanRL-style: ``main(cfg)`` reads top to bottom, from seeding through
rollouts, advantages, the loss and the update to logging and checkpoints.

Paper, equations (Eq. 1-5 below) and deviations: trainers/grpo/README.md.

    clinical-gym train grpo --env ClinicalInquiry-v1 --model PATH --lora-r 8 [--config FILE.yaml] [--resume]
    python -m clinical_gym.trainers.grpo.train --env ClinicalInquiry-v1 --model PATH ...
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from clinical_gym.rollout import EpisodeSpec, RolloutCollector, RolloutLimits, Trajectory
from clinical_gym.rollout.vision import VisionInputs, is_processor, text_tokenizer
from clinical_gym.trainers.common import runtime, sharding
from clinical_gym.trainers.common.batch import TokenBatch, pack
from clinical_gym.trainers.common.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from clinical_gym.trainers.common.config_cli import module_main
from clinical_gym.trainers.common.generation import engine_metrics, generation_policy, sync_generation_policy
from clinical_gym.trainers.common.host_memory import HostMemory
from clinical_gym.trainers.common.length_reward import cosine_length_rewards, cosine_reward_from
from clinical_gym.trainers.common.logprobs import token_logprobs, token_logprobs_and_entropy
from clinical_gym.trainers.common.losses import k3_kl, token_weights
from clinical_gym.trainers.common.metrics_log import MetricsLog
from clinical_gym.trainers.common.model import Reference, eval_mode, frozen_copy, load_model, prepare_model
from clinical_gym.trainers.common.monitors import env_domain, env_metrics, rollout_metrics
from clinical_gym.trainers.common.optim import make_optimizer, make_scheduler
from clinical_gym.trainers.common.sampler import CaseSampler
from clinical_gym.trainers.grpo.config import GRPOConfig

# Keeps a group for training (dynamic sampling); an extra per-sequence loss term given a micro-batch and its logprobs.
GroupFilter = Callable[[Sequence[Trajectory]], bool]
ExtraLoss = Callable[[TokenBatch, torch.Tensor], torch.Tensor]

# ---------------------------------------------------------------------------------------------------------------
# GRPO logic
# ---------------------------------------------------------------------------------------------------------------
def group_advantages(rewards: torch.Tensor, scale: bool, eps: float, valid: torch.Tensor | None = None) -> torch.Tensor:
    """Advantages [groups, G] from rewards [groups, G]. ``valid`` [groups, G] (bool) leaves episodes that ended with
    an error out of their group's mean and std; their advantage is 0 (and their tokens are out of the loss)."""
    if valid is None:
        valid = torch.ones_like(rewards, dtype=torch.bool)
    weight = valid.to(rewards.dtype)
    count = weight.sum(dim=1, keepdim=True)
    # Eq. 1: group-relative advantage  Â_i = (r_i − mean_j r_j) / (std_j r_j + ε)   (std: sample std, Bessel)
    centred = (rewards - (rewards * weight).sum(dim=1, keepdim=True) / count.clamp(min=1)) * weight
    if not scale:
        return centred
    std = ((centred ** 2).sum(dim=1, keepdim=True) / (count - 1).clamp(min=1)).sqrt()
    return centred / (std + eps)


def valid_episodes(groups: Sequence[Sequence[Trajectory]]) -> torch.Tensor:
    """[groups, G] bool: the episodes that did not end with an error (simulator, judge or world-model outage)."""
    return torch.tensor([[t.error is None for t in group] for group in groups], dtype=torch.bool)


def grpo_token_loss(logprobs: torch.Tensor, old_logprobs: torch.Tensor, ref_logprobs: torch.Tensor | None,
                    advantages: torch.Tensor, cfg: GRPOConfig,
                    entropy: torch.Tensor | None = None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Per-token loss [N, T] (to be aggregated with Eq. 5 weights) and per-token diagnostics; ``entropy`` [N, T],
    the policy's entropy at each token, adds the entropy bonus when ``cfg.entropy_coef`` > 0."""
    # Eq. 2: importance ratio  ρ_t = π_θ(o_t | q, o_<t) / π_θ_old(o_t | q, o_<t)
    ratio = torch.exp(logprobs - old_logprobs)
    advantage = advantages[:, None]
    # Eq. 3: clipped surrogate with DAPO's clip-higher  min(ρ_t Â, clip(ρ_t, 1 − ε_low, 1 + ε_high) Â)
    unclipped = ratio * advantage
    clipped = ratio.clamp(1 - cfg.epsilon_low, 1 + cfg.epsilon_high) * advantage
    loss = -torch.minimum(unclipped, clipped)
    parts = {"ratio": ratio.detach(), "clipped": (clipped < unclipped).float()}
    if ref_logprobs is not None:
        # Eq. 4: k3 estimator of KL(π_θ ‖ π_ref)  exp(r − l) − (r − l) − 1,  weighted by β in the loss
        kl = k3_kl(logprobs, ref_logprobs)
        parts["kl"] = kl.detach()
        if cfg.beta > 0:
            loss = loss + cfg.beta * kl
    if entropy is not None:
        # entropy bonus  − c · H_t,  H_t = −Σ_v π_θ(v | q, o_<t) log π_θ(v | q, o_<t)  (DoctorAgent-RL: c = 0.001)
        parts["entropy"] = entropy.detach()
        if cfg.entropy_coef > 0:
            loss = loss - cfg.entropy_coef * entropy
    return loss, parts


def collect_groups(collector: RolloutCollector, sampler: CaseSampler, cfg: GRPOConfig, step: int,
                   accelerator: Any, keep: GroupFilter | None = None
                   ) -> tuple[list[list[Trajectory]], list[list[Trajectory]], int]:
    """Groups to train on, every group collected, and the refill rounds used. Each group is G rollouts of one case
    (``reset(seed=..., options={"case_id": ...})`` with per-rollout seeds). With dynamic sampling (DAPO), groups
    that ``keep`` rejects (default: groups whose training rewards are all equal) are dropped and new cases
    collected, at most ``max_refill_rounds`` more times."""
    kept: list[list[Trajectory]] = []
    seen: list[list[Trajectory]] = []
    rounds = 1 + (cfg.max_refill_rounds if cfg.dynamic_sampling else 0)
    for round_index in range(rounds):
        cases = sampler.next(cfg.groups_per_step - len(kept))
        seeds = np.random.SeedSequence([cfg.seed, accelerator.process_index, step, round_index])
        episode_seeds = seeds.generate_state(len(cases) * cfg.group_size + 1, dtype=np.uint32).tolist()
        specs = [EpisodeSpec(seed=episode_seeds[i * cfg.group_size + g], options={"case_id": case}, group=len(seen) + i)
                 for i, case in enumerate(cases) for g in range(cfg.group_size)]
        trajectories = collector.collect(specs, seed=episode_seeds[-1])
        groups = [trajectories[i:i + cfg.group_size] for i in range(0, len(trajectories), cfg.group_size)]
        seen += groups
        kept += [g for g in groups if not cfg.dynamic_sampling or (keep(g) if keep else has_reward_variance(g, cfg))]
        if _fewest(accelerator, len(kept)) >= cfg.groups_per_step:
            break
    usable = _fewest(accelerator, len(kept))  # every process must run the same number of backward passes
    return (kept[:usable] if usable else seen[:cfg.groups_per_step]), seen, round_index


def has_reward_variance(group: Sequence[Trajectory], cfg: GRPOConfig) -> bool:
    """Whether the group's training rewards (``episode_rewards``) are not all equal, errored episodes left out."""
    return len({r for r, t in zip(episode_rewards(group, cfg), group) if t.error is None}) > 1


def episode_rewards(trajectories: Sequence[Trajectory], cfg: GRPOConfig) -> list[float]:
    """The reward each episode trains on: the environment's, or the cosine length reward with ``cosine_reward``."""
    if cfg.cosine_reward:
        return cosine_length_rewards(trajectories, cosine_reward_from(cfg))
    return [t.reward for t in trajectories]


def add_old_and_ref_logprobs(model: Any, reference: Reference, batch: TokenBatch, cfg: GRPOConfig) -> TokenBatch:
    """The batch with π_ref logprobs (when a reference exists) and, when updates go off-policy (several
    minibatches or iterations), π_θ_old logprobs: the policy before this step's updates. Computed without dropout;
    on-policy updates use the current logprobs, detached, as π_θ_old."""
    off_policy = cfg.num_iterations > 1 or cfg.num_minibatches > 1
    olds, refs = [], []
    with eval_mode(model), torch.no_grad():
        for start in range(0, len(batch), cfg.micro_batch_size):
            rows = batch.select(range(start, min(start + cfg.micro_batch_size, len(batch))))
            pad = (0, batch.loss_mask.shape[1] - rows.loss_mask.shape[1])
            args = (rows.input_ids, rows.attention_mask, rows.loss_mask)
            extra = rows.model_inputs()
            if off_policy:
                olds.append(torch.nn.functional.pad(token_logprobs(model, *args, cfg.temperature, extra), pad))
            if reference.available:
                refs.append(torch.nn.functional.pad(reference.logprobs(model, *args, cfg.temperature, extra), pad))
    batch.old_logprobs = torch.cat(olds) if olds else None
    batch.ref_logprobs = torch.cat(refs) if refs else None
    return batch


def update(model: Any, batch: TokenBatch, cfg: GRPOConfig, accelerator: Any, optimizer: Any, scheduler: Any,
           generator: torch.Generator, extra_loss: ExtraLoss | None = None) -> dict[str, float]:
    """``num_iterations`` passes over the batch, each split into ``num_minibatches`` optimizer steps; micro-batches
    accumulate gradients. Returns the update's loss statistics, and the gap between the rollout's sampling
    logprobs and π_θ_old's (near 0 unless tokens or numerics drift between generation and training).

    ``extra_loss(micro_batch, logprobs)`` adds a per-sequence term (shape [rows]) to the objective, averaged over
    the minibatch's sequences like the GRPO term (TT-OPD's distillation); ``losses/policy_loss`` excludes it."""
    sums: dict[str, float] = defaultdict(float)
    grad_norms: list[float] = []
    constant = cfg.loss_constant or cfg.max_episode_tokens
    host = HostMemory.for_device(accelerator.device, cfg.release_host_memory)
    optimizer.zero_grad(set_to_none=True)  # every minibatch then starts from no gradient
    for iteration in range(cfg.num_iterations):
        order = torch.randperm(len(batch), generator=generator)
        for minibatch_rows in order.tensor_split(cfg.num_minibatches):
            minibatch = batch.select(minibatch_rows)
            # Eq. 5: aggregation weights (token-mean, sequence-mean or the Dr. GRPO constant) over the minibatch
            sequences = float(accelerator.reduce(torch.tensor(float(len(minibatch)), device=accelerator.device),
                                                 "sum"))
            weights = token_weights(minibatch.loss_mask, cfg.loss_aggregation, constant,
                                    total_tokens=float(accelerator.reduce(minibatch.loss_mask.sum(), "sum")),
                                    total_sequences=sequences)
            starts = range(0, len(minibatch), cfg.micro_batch_size)
            for start in starts:
                rows = list(range(start, min(start + cfg.micro_batch_size, len(minibatch))))
                micro = minibatch.select(rows)
                mask = micro.loss_mask
                logprobs, entropy = token_logprobs_and_entropy(
                    model, micro.input_ids, micro.attention_mask, mask, cfg.temperature, micro.model_inputs(),
                    entropy=cfg.entropy_coef > 0)
                old = micro.old_logprobs if micro.old_logprobs is not None else logprobs.detach()
                per_token, parts = grpo_token_loss(logprobs, old, micro.ref_logprobs, micro.advantages, cfg, entropy)
                # DDP averages gradients over processes; the weights already divide by the global total
                policy_loss = (per_token * weights[rows, :mask.shape[1]]).sum() * accelerator.num_processes
                loss = policy_loss
                if extra_loss is not None:
                    loss = loss + extra_loss(micro, logprobs).sum() / sequences * accelerator.num_processes
                host.before_backward()  # CPU: the heap's free pages back; the backward's large blocks mapped
                with nullcontext() if start == starts[-1] else accelerator.no_sync(model):
                    accelerator.backward(loss)
                sums["loss"] += policy_loss.item() / accelerator.num_processes
                sums["tokens"] += float(mask.sum())
                for name, value in parts.items():
                    sums[name] += float((value * mask).sum())
                if iteration == 0:
                    sums["gap"] += float(((micro.sample_logprobs - old).abs() * mask).sum())
            norm_cap = cfg.max_grad_norm if cfg.max_grad_norm > 0 else float("inf")
            grad_norms.append(float(accelerator.clip_grad_norm_(model.parameters(), norm_cap)))
            optimizer.step()
            scheduler.step()
            # freed at once, not when the next minibatch starts: kept until the next step, a full fine-tuning run
            # carried a float32 copy of the weights through the rollout and the no-gradient passes
            optimizer.zero_grad(set_to_none=True)
            host.after_step()
    tokens = max(sums["tokens"], 1.0)
    return {"losses/policy_loss": sums["loss"] / (cfg.num_iterations * cfg.num_minibatches),
            "losses/kl_ref": sums["kl"] / tokens if batch.ref_logprobs is not None else float("nan"),
            "losses/clip_fraction": sums["clipped"] / tokens,
            "losses/ratio_mean": sums["ratio"] / tokens,
            "losses/entropy": sums["entropy"] / tokens if cfg.entropy_coef > 0 else float("nan"),
            "losses/grad_norm": float(np.mean(grad_norms)),
            "rollout/logprob_gap": sums["gap"] * cfg.num_iterations / tokens}


# ---------------------------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------------------------
def main(cfg: GRPOConfig, *, env_factory: Callable[[], gym.Env] | None = None, model: Any | None = None,
         tokenizer: Any | None = None,
         on_collect: Sequence[Callable[[list[Trajectory]], Any]] = ()) -> dict[str, float]:
    """Train with GRPO and return the last step's metrics.

    ``env_factory`` replaces ``gym.make(cfg.env, **cfg.env_kwargs)``; ``model`` and ``tokenizer`` replace loading
    ``cfg.model`` (a model that already has a LoRA adapter keeps it; without one, ``prepare_model`` adds it in
    place). A vision-language model comes with its processor as ``tokenizer``: images in the environment's
    messages (VisualDiagnosis-v0) become image tokens and pixel inputs for generation and for the loss.
    ``on_collect`` hooks see every batch of rollouts (e.g. ``clinical_gym.experience.ExperienceRecorder``
    stores each step's good turns). Settings are checked before anything loads.
    """
    # -- checks, seeding, devices, environments and the case order ---------------------------------------------
    accelerator, make_env, sampler = runtime.start_run(cfg, env_factory, model, tokenizer)

    # -- policy, reference, optimizer -----------------------------------------------------------------------------
    if model is None:
        model, tokenizer = load_model(cfg)
    model = prepare_model(model, cfg)
    reference_needed = cfg.beta > 0 or cfg.ref_kl_monitor
    frozen = None
    if cfg.fsdp:  # shard the policy (and a full-fine-tuning reference copy, made first) over the processes
        frozen = frozen_copy(model, reference_needed)
        model = sharding.shard(model.to(accelerator.device))
        if frozen is not None:
            sharding.shard(frozen.to(accelerator.device))
    optimizer = make_optimizer(model, cfg)
    scheduler = make_scheduler(optimizer, cfg, cfg.total_steps * cfg.num_iterations * cfg.num_minibatches)
    model, optimizer = sharding.prepare(accelerator, model, optimizer, cfg.fsdp)
    policy_model = accelerator.unwrap_model(model)
    reference = Reference(policy_model, needed=reference_needed, frozen=frozen)
    text = text_tokenizer(tokenizer)  # a vision-language model's processor holds its text tokenizer
    pad_id = text.pad_token_id if text.pad_token_id is not None else text.eos_token_id
    vision = VisionInputs(tokenizer) if is_processor(tokenizer) else None

    # -- resume ---------------------------------------------------------------------------------------------------
    checkpoints = Path(cfg.output_dir) / "checkpoints"
    start_step = 0
    if cfg.resume and (found := latest_checkpoint(checkpoints)) is not None:
        state = load_checkpoint(found, accelerator=accelerator, model=model, optimizer=optimizer, scheduler=scheduler)
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
            # 1. rollouts: G per case, zero-variance groups dropped and refilled (dynamic sampling)
            groups, seen, refills = collect_groups(collector, sampler, cfg, step, accelerator)
            trajectories = [t for group in groups for t in group]
            rollout_s = time.perf_counter() - began

            # 2. group-relative advantages (Eq. 1), one per episode, shared by its generated tokens; the episode
            #    reward is the environment's, or the cosine length reward (TT-OPD Eq. 3) with --cosine-reward
            rewards = torch.tensor([episode_rewards(group, cfg) for group in groups], dtype=torch.float)
            advantages = group_advantages(rewards, cfg.scale_rewards, cfg.advantage_epsilon,
                                          valid_episodes(groups)).flatten()

            # 3. tokens with environment tokens masked (and every token of an episode that ended with an error);
            #    reference (and, for off-policy updates, old-policy) logprobs
            batch = pack(trajectories, advantages.tolist(), pad_id, vision).to(accelerator.device)
            batch = add_old_and_ref_logprobs(policy_model, reference, batch, cfg)

        # 4. clipped-surrogate updates (Eq. 2-5)
        generator = torch.Generator().manual_seed(int(np.random.SeedSequence([cfg.seed, step]).generate_state(1)[0]))
        losses = update(model, batch, cfg, accelerator, optimizer, scheduler, generator)
        sync_generation_policy(policy, policy_model)

        # 5. metrics and checkpoint
        all_seen = [t for group in seen for t in group]
        metrics = {**engine_metrics(policy),
                   **rollout_metrics(all_seen), **env_metrics(all_seen, domain), **losses,
                   "rollout/train_reward_mean": float(rewards.mean()),
                   "rollout/kept_groups": float(len(groups)), "rollout/refill_rounds": float(refills),
                   "charts/learning_rate": float(scheduler.get_last_lr()[0]),
                   "charts/rollout_s": rollout_s, "charts/step_s": time.perf_counter() - began}
        log.log(step, metrics)
        if step % cfg.save_every == 0 or step == cfg.total_steps:
            save_checkpoint(checkpoints, step, accelerator=accelerator, model=model, optimizer=optimizer,
                            scheduler=scheduler, state={"sampler": sampler.state_dict()}, tokenizer=tokenizer,
                            keep=cfg.keep_checkpoints)
    log.close()
    return metrics


def _fewest(accelerator: Any, count: int) -> int:
    """The smallest ``count`` over all processes."""
    if accelerator.num_processes == 1:
        return count
    return int(accelerator.gather(torch.tensor([count], device=accelerator.device)).min())


def cli(argv: Sequence[str] | None = None) -> int:
    """``python -m clinical_gym.trainers.grpo.train``: flags from ``GRPOConfig``; bad settings exit 2 with one line."""
    return module_main(GRPOConfig, main, argv, prog="python -m clinical_gym.trainers.grpo.train",
                       description=__doc__.splitlines()[0])


if __name__ == "__main__":
    raise SystemExit(cli())
