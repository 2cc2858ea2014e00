"""TT-OPD on any clinical-gym environment, CleanRL-style: ``main(cfg)`` reads top to bottom, from seeding through
rollouts, the cosine reward, advantages, the teacher's hinted logprobs, the loss and the update to the teacher's
EMA, logging and checkpoints. GRPO's pieces (groups, advantages, clipped surrogate, update) come from
``clinical_gym.trainers.grpo.train``.

Paper (Healthcare AI GYM, arXiv:2605.02943), equations (Eq. 2-4 below; GRPO's in trainers/grpo/README.md) and the
ablations: trainers/ttopd/README.md.

    clinical-gym train ttopd --env MedicalQA-v1 --model PATH --lora-r 8 [--config FILE.yaml] [--resume]
    python -m clinical_gym.trainers.ttopd.train --env MedicalQA-v1 --model PATH ...
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from clinical_gym.rollout import RolloutCollector, RolloutLimits, Trajectory
from clinical_gym.trainers.common import runtime, sharding
from clinical_gym.trainers.common.batch import TokenBatch, pack
from clinical_gym.trainers.common.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from clinical_gym.trainers.common.config_cli import module_main
from clinical_gym.trainers.common.ema_teacher import EMATeacher
from clinical_gym.trainers.common.generation import engine_metrics, generation_policy, sync_generation_policy
from clinical_gym.trainers.common.length_reward import outcome_correct
from clinical_gym.trainers.common.metrics_log import MetricsLog
from clinical_gym.trainers.common.model import Reference, frozen_copy, load_model, prepare_model
from clinical_gym.trainers.common.monitors import env_domain, env_metrics, rollout_metrics
from clinical_gym.trainers.common.optim import make_optimizer, make_scheduler
from clinical_gym.trainers.grpo.train import (add_old_and_ref_logprobs, collect_groups, episode_rewards, group_advantages,
                                              update, valid_episodes)
from clinical_gym.trainers.ttopd.config import TTOPDConfig
from clinical_gym.trainers.ttopd.hints import (
    HintTemplates,
    TeacherSequence,
    default_hints,
    hint_message,
    teacher_sequence,
)

LOG_RATIO_CLAMP = 20.0  # |log π_T − log π_S| cap in the KL estimate, so exp() cannot overflow


# ---------------------------------------------------------------------------------------------------------------
# TT-OPD logic
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class DistillBatch(TokenBatch):
    """A ``TokenBatch`` plus, per token [N, T-1] like ``loss_mask``: ``teacher_logprobs``, the teacher's (hinted)
    logprobs moved onto the student's positions, and ``distill_weights``, each token's weight in Eq. 2 (1/|a_t| for
    the tokens of turn t, 0 off the KL's tokens)."""

    teacher_logprobs: torch.Tensor | None = None
    distill_weights: torch.Tensor | None = None


def mixed_outcomes(group: Sequence[Trajectory]) -> bool:
    """Dynamic sampling of TT-OPD: keep a group only when some episodes ended correct and some did not."""
    return len({outcome_correct(t) for t in group}) > 1


def distill_coefficient(step: int, cfg: TTOPDConfig) -> float:
    """λ at ``step``: constant, or decaying (linear or cosine) from lambda_distill at step 1 to lambda_distill_floor
    at step distill_decay_steps (default total_steps), then held."""
    if cfg.distill_schedule == "constant":
        return cfg.lambda_distill
    span = cfg.distill_decay_steps or cfg.total_steps
    progress = min(1.0, (step - 1) / max(span - 1, 1))
    left = 1.0 - progress if cfg.distill_schedule == "linear" else 0.5 * (1.0 + math.cos(math.pi * progress))
    return cfg.lambda_distill_floor + (cfg.lambda_distill - cfg.lambda_distill_floor) * left


def teacher_move(step: int, cfg: TTOPDConfig) -> str | None:
    """How the teacher moves after the update of ``step``: "copy" (θ_T ← θ_S), "ema" or nothing. A hard copy due
    on an EMA step replaces the EMA update; teacher_update "reset" only copies."""
    if cfg.hard_copy_interval and step % cfg.hard_copy_interval == 0:
        return "copy"
    if cfg.teacher_update == "ema" and step % cfg.ema_interval == 0:
        return "ema"
    return None


def teacher_dtype(cfg: TTOPDConfig) -> torch.dtype | None:
    """The storage dtype of a full fine-tuning teacher copy (None: the model's). A copy sharded with ``--fsdp`` keeps
    the model's dtype: FSDP gathers its weights from buffers of its own, which the widening of a narrower copy
    (``ema_teacher._widened``) does not reach."""
    return torch.bfloat16 if cfg.teacher_dtype == "bfloat16" and not cfg.fsdp else None


def hint_templates(cfg: TTOPDConfig) -> HintTemplates:
    """The run's hints: the configured texts, else the environment's defaults."""
    default = default_hints(cfg.env)
    return HintTemplates(cfg.hint_correct or default.correct, cfg.hint_wrong or default.wrong)


def teacher_sequences(trajectories: Sequence[Trajectory], cfg: TTOPDConfig, templates: HintTemplates,
                      tokenizer: Any) -> list[TeacherSequence]:
    """Each trajectory as the teacher sees it: the outcome's hint (reinforcing when the episode ended correct,
    corrective otherwise; none with --no-hints) at every turn's prompt/response boundary (a message before the
    generation prompt, or text after it: ``hint_position``), cut at L_max."""
    cache: dict[str, tuple[list[int], list[int]]] = {}
    out = []
    for t in trajectories:
        hint: list[int] = []
        prompt: list[int] = []
        if cfg.hints:
            text = templates.render(outcome_correct(t), t.outcome)
            if text not in cache:
                cache[text] = (hint_message(tokenizer, text.strip()) if cfg.hint_position == "context"
                               else (list(tokenizer.encode(text, add_special_tokens=False)), []))
            hint, prompt = cache[text]
        out.append(teacher_sequence(t, hint, cfg.distill_max_context, prompt))
    return out


def add_teacher_logprobs(model: Any, teacher: EMATeacher, batch: TokenBatch, sequences: Sequence[TeacherSequence],
                         cfg: TTOPDConfig, pad_id: int) -> DistillBatch:
    """The batch with the teacher's logprobs of the student's sampled tokens, scored on the hinted sequences and
    moved back onto the student's positions (the hint's tokens are left out), and the Eq. 2 token weights."""
    shape = batch.loss_mask.shape
    teacher_logprobs = torch.zeros(shape, device=batch.loss_mask.device)
    weights = torch.zeros(shape, device=batch.loss_mask.device)
    rows = [i for i, s in enumerate(sequences) if s.teacher_positions]
    if rows:
        width = max(len(sequences[i].ids) for i in rows)
        ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
        attention = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros((len(rows), width - 1))
        for r, i in enumerate(rows):
            seq = sequences[i]
            ids[r, :len(seq.ids)] = torch.tensor(seq.ids, dtype=torch.long)
            attention[r, :len(seq.ids)] = 1
            mask[r, torch.tensor(seq.teacher_positions) - 1] = 1.0  # column p - 1 predicts token p
        hinted = TokenBatch(ids, attention, mask, torch.zeros_like(mask), torch.zeros(len(rows))).to(
            batch.loss_mask.device)
        for start in range(0, len(rows), cfg.micro_batch_size):
            part = hinted.select(range(start, min(start + cfg.micro_batch_size, len(rows))))
            scored = teacher.logprobs(model, part.input_ids, part.attention_mask, part.loss_mask, cfg.temperature,
                                      cfg.teacher_matmul_precision)
            for r, i in enumerate(rows[start:start + cfg.micro_batch_size]):
                seq = sequences[i]
                student_cols = torch.tensor(seq.student_positions, device=scored.device) - 1
                teacher_lp = scored[r, torch.tensor(seq.teacher_positions, device=scored.device) - 1]
                teacher_logprobs[i, student_cols] = teacher_lp
                # Eq. 2: every turn's tokens share 1/|a_t| (the turn's token mean), summed (or averaged) over turns
                lengths = torch.tensor(seq.turn_lengths, dtype=torch.float, device=scored.device)
                per_token = 1.0 / lengths[torch.tensor(seq.turn_of, device=scored.device)]
                if cfg.distill_turn_aggregation == "mean":
                    per_token = per_token / len(seq.turn_lengths)
                weights[i, student_cols] = per_token
    parts = {f.name: getattr(batch, f.name) for f in fields(TokenBatch)}
    return DistillBatch(**parts, teacher_logprobs=teacher_logprobs, distill_weights=weights)


class TurnDistillation:
    """Eq. 2 as the extra loss term of GRPO's update: per trajectory, λ Σ_t (1/|a_t|) Σ_k L_{t,k}, where L_{t,k} is a
    per-token surrogate whose gradient, in expectation over the student's samples, is the gradient of the reverse
    KL(π_S(·|s_t, a_t^<k) ‖ π_T(·|s_t^+, a_t^<k)) of Eq. 2: ½ ρ (log π_S − log π_T)² at the sampled token (k2),
    ρ = π_θ/π_θold detached (1 on-policy) for tokens sampled before this step's earlier updates. The k3 estimate
    exp(d) − d − 1 is the better estimate of the KL's value, and is what ``losses/kl_teacher`` logs, but as a loss
    its gradient is that of the forward KL(π_T ‖ π_S), which pulls the student to cover everything the lagging
    teacher still gives mass to (trainers/ttopd/README.md). Accumulates the update's statistics (``metrics``)."""

    def __init__(self, coefficient: float) -> None:
        self.coefficient = coefficient
        self.kl_sum = self.tokens = self.loss_sum = self.sequences = 0.0

    def __call__(self, micro: DistillBatch, logprobs: torch.Tensor) -> torch.Tensor:
        weights = micro.distill_weights
        covered = weights > 0
        # k3 estimate of KL(π_S ‖ π_T) per sampled token (as clinical_gym.trainers.common.losses.k3_kl):  exp(d) − d − 1,
        # d = log π_T − log π_S, clamped so exp() cannot overflow; 0 on tokens the KL does not cover
        delta = torch.where(covered, micro.teacher_logprobs - logprobs, torch.zeros_like(logprobs))
        delta = delta.clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
        kl = (torch.exp(delta) - delta - 1).detach()
        # Eq. 2, gradient of the reverse KL:  ∇ ½ ρ d² = ρ (log π_S − log π_T) ∇ log π_S,  whose mean over samples of
        # π_θold is ∇ KL(π_S ‖ π_T)
        ratio = 1.0 if micro.old_logprobs is None else torch.exp((logprobs.detach() - micro.old_logprobs).clamp(
            max=LOG_RATIO_CLAMP))
        surrogate = 0.5 * ratio * delta ** 2
        # Eq. 2: λ Σ_t (1/|a_t|) Σ_k L_{t,k}, one value per trajectory (the update averages over trajectories)
        per_sequence = self.coefficient * (weights * surrogate).sum(dim=1)
        self.kl_sum += float((kl * covered).sum())
        self.tokens += float(covered.sum())
        self.loss_sum += float(per_sequence.detach().sum())
        self.sequences += len(per_sequence)
        return per_sequence

    def metrics(self) -> dict[str, float]:
        return {"losses/kl_teacher": self.kl_sum / self.tokens if self.tokens else float("nan"),
                "losses/distill_loss": self.loss_sum / max(self.sequences, 1.0),
                "losses/lambda_distill": self.coefficient}


# ---------------------------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------------------------
def main(cfg: TTOPDConfig, *, env_factory: Callable[[], gym.Env] | None = None, model: Any | None = None,
         tokenizer: Any | None = None,
         on_collect: Sequence[Callable[[list[Trajectory]], Any]] = ()) -> dict[str, float]:
    """Train with TT-OPD and return the last step's metrics.

    ``env_factory`` replaces ``gym.make(cfg.env, **cfg.env_kwargs)``; ``model`` and ``tokenizer`` replace loading
    ``cfg.model`` (a model that already has a LoRA adapter keeps it; without one, ``prepare_model`` adds it in
    place). ``on_collect`` hooks see every batch of rollouts (e.g. ``clinical_gym.experience.ExperienceRecorder``
    stores each step's good turns). Settings are checked before anything loads.
    """
    # -- checks, seeding, devices, environments and the case order ---------------------------------------------
    accelerator, make_env, sampler = runtime.start_run(cfg, env_factory, model, tokenizer)

    templates = hint_templates(cfg)

    # -- student, reference, teacher, optimizer -----------------------------------------------------------------
    if model is None:
        model, tokenizer = load_model(cfg)
    model = prepare_model(model, cfg)
    reference_needed = cfg.beta > 0 or cfg.ref_kl_monitor
    frozen, teacher = None, None
    if cfg.fsdp:  # the reference copy and the teacher (its adapter, or its copy) are made first, then sharded
        frozen = frozen_copy(model, reference_needed)
        teacher = EMATeacher(model, dtype=teacher_dtype(cfg))
        model = sharding.shard(model.to(accelerator.device))
        for copied in (frozen, teacher.copy):
            if copied is not None:
                sharding.shard(copied.to(accelerator.device))
        teacher.bind(model)  # the sharded weights
    optimizer = make_optimizer(model, cfg)
    scheduler = make_scheduler(optimizer, cfg, cfg.total_steps * cfg.num_iterations * cfg.num_minibatches)
    model, optimizer = sharding.prepare(accelerator, model, optimizer, cfg.fsdp)
    policy_model = accelerator.unwrap_model(model)
    reference = Reference(policy_model, needed=reference_needed, frozen=frozen)
    if teacher is None:
        teacher = EMATeacher(policy_model, dtype=teacher_dtype(cfg))  # θ_T ← θ_S; a second LoRA adapter, or a
        # frozen copy of the full model (bfloat16 unless --teacher-dtype model)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    # -- resume ---------------------------------------------------------------------------------------------------
    checkpoints = Path(cfg.output_dir) / "checkpoints"
    start_step = 0
    if cfg.resume and (found := latest_checkpoint(checkpoints)) is not None:
        state = load_checkpoint(found, accelerator=accelerator, model=model, optimizer=optimizer, scheduler=scheduler)
        teacher.load_from_checkpoint(found)
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
        with sharding.gathered(model, reference.copy, teacher.copy):  # --fsdp: no-gradient passes, full weights
            # 1. rollouts: G per case; groups without mixed outcomes dropped and refilled (dynamic sampling)
            groups, seen, refills = collect_groups(collector, sampler, cfg, step, accelerator, keep=mixed_outcomes)
            trajectories = [t for group in groups for t in group]
            rollout_s = time.perf_counter() - began

            # 2. cosine length reward (Eq. 3; the environment's reward with --no-cosine-reward) and group-relative
            #    advantages (GRPO Eq. 1)
            rewards = torch.tensor([episode_rewards(group, cfg) for group in groups], dtype=torch.float)
            advantages = group_advantages(rewards, cfg.scale_rewards, cfg.advantage_epsilon,
                                          valid_episodes(groups)).flatten()

            # 3. the student's tokens (never a hint); reference and old-policy logprobs; the teacher's logprobs on the
            #    hinted sequences, moved back onto the student's positions
            batch = pack(trajectories, advantages.tolist(), pad_id).to(accelerator.device)
            batch = add_old_and_ref_logprobs(policy_model, reference, batch, cfg)
            sequences = teacher_sequences(trajectories, cfg, templates, tokenizer)
            batch = add_teacher_logprobs(policy_model, teacher, batch, sequences, cfg, pad_id)
            teacher_age = {**teacher.age(step), "teacher/weight_distance": teacher.distance()}

        # 4. Eq. 4: GRPO loss on the cosine reward + λ · turn-level KL to the teacher (Eq. 2)
        generator = torch.Generator().manual_seed(int(np.random.SeedSequence([cfg.seed, step]).generate_state(1)[0]))
        distillation = TurnDistillation(distill_coefficient(step, cfg))
        losses = update(model, batch, cfg, accelerator, optimizer, scheduler, generator, extra_loss=distillation)
        sync_generation_policy(policy, policy_model)

        # 5. the teacher follows the student: EMA every ema_interval steps, hard copy every hard_copy_interval
        move = teacher_move(step, cfg)
        if move == "ema":
            teacher.ema_update(cfg.ema_alpha, step)
        elif move == "copy":
            teacher.copy_from(step)

        # 6. metrics and checkpoint
        all_seen = [t for group in seen for t in group]
        metrics = {**engine_metrics(policy),
                   **rollout_metrics(all_seen), **env_metrics(all_seen, domain), **losses, **distillation.metrics(),
                   **teacher_age,
                   "rollout/train_reward_mean": float(rewards.mean()),
                   "rollout/correct_rate": float(np.mean([outcome_correct(t) for t in all_seen])),
                   "rollout/kept_groups": float(len(groups)), "rollout/refill_rounds": float(refills),
                   "distill/reinforcing_hint_rate": float(np.mean([outcome_correct(t) for t in trajectories])),
                   "distill/hint_tokens_per_turn": float(np.mean([len(s.hint_positions) / max(len(s.turn_lengths), 1)
                                                                  for s in sequences])),
                   "distill/dropped_turn_rate": float(sum(s.dropped_turns for s in sequences)
                                                      / max(sum(len(t.turns) for t in trajectories), 1)),
                   "charts/learning_rate": float(scheduler.get_last_lr()[0]),
                   "charts/rollout_s": rollout_s, "charts/step_s": time.perf_counter() - began}
        log.log(step, metrics)
        if step % cfg.save_every == 0 or step == cfg.total_steps:
            write = partial(save_checkpoint, checkpoints, step, accelerator=accelerator, model=model,
                            optimizer=optimizer, scheduler=scheduler, state={"sampler": sampler.state_dict()},
                            tokenizer=tokenizer, keep=cfg.keep_checkpoints)
            teacher.save_with_checkpoint(write, checkpoints, step, accelerator.is_main_process)  # teacher/ inside
    log.close()
    return metrics


def cli(argv: Sequence[str] | None = None) -> int:
    """``python -m clinical_gym.trainers.ttopd.train``: flags from ``TTOPDConfig``; bad settings exit 2 with one line."""
    return module_main(TTOPDConfig, main, argv, prog="python -m clinical_gym.trainers.ttopd.train",
                       description=__doc__.splitlines()[0])


if __name__ == "__main__":
    raise SystemExit(cli())
