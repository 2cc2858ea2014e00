"""TT-OPD settings: GRPO on the cosine length reward plus turn-level distillation from an EMA teacher that sees
outcome-conditioned hints (Healthcare AI GYM, arXiv:2605.02943)."""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import ClassVar

from clinical_gym.trainers.common.config import option
from clinical_gym.trainers.grpo.config import GRPOConfig

DISTILL_SCHEDULES = ("constant", "linear", "cosine")
TURN_AGGREGATIONS = ("sum", "mean")
TEACHER_UPDATES = ("ema", "reset")
TEACHER_DTYPES = ("bfloat16", "model")
TEACHER_MATMUL_PRECISIONS = ("highest", "high", "medium")  # torch.set_float32_matmul_precision's names
HINT_POSITIONS = ("context", "reply")


@dataclass
class TTOPDConfig(GRPOConfig):
    """TT-OPD settings. GRPO's (groups, clip, KL to the reference, dynamic sampling, cosine reward) are documented on
    ``GRPOConfig`` and the shared ones on ``TrainerConfig``; equations and ablations: trainers/ttopd/README.md.
    Changed defaults: beta 0.01 (the paper's GRPO KL), cosine_reward on. Dynamic sampling keeps groups with mixed
    outcomes (some episodes correct, some not).

    > Distillation (Eq. 2, 4)
        lambda_distill: λ, the weight of the turn-level KL to the teacher (the paper: 4.0).
        distill_schedule: "constant", or "linear"/"cosine" decay of λ to lambda_distill_floor over
        distill_decay_steps steps (default: total_steps).
        distill_turn_aggregation: "sum" over turns of each turn's token-mean KL (Eq. 2), or "mean" over turns.
        distill_max_context: L_max of the KL: turns whose reply ends beyond this many tokens of the teacher's
        sequence (hints included) are dropped (the paper: 12,288).

    > Teacher
        teacher_update: "ema" (θ_T ← α θ_T + (1 − α) θ_S every ema_interval steps, plus a hard copy every
        hard_copy_interval steps when > 0) or "reset" (ablation: only the hard copy, every hard_copy_interval steps).
        ema_alpha: α (0.995); ema_interval: 5; hard_copy_interval: 30, 0 for never.
        teacher_dtype: how a full fine-tuning teacher (a frozen copy of the model) is stored: "bfloat16" (half of a
        float32 copy's memory; its EMA results are rounded stochastically, its log-probabilities are the bfloat16
        model's) or "model" (the model's dtype: exact). A LoRA teacher is a second adapter in the model's dtype, and
        a teacher sharded with --fsdp keeps the model's dtype too.
        teacher_matmul_precision: the float32 matrix products of the teacher's scoring pass, in
        ``torch.set_float32_matmul_precision``'s terms: "highest" (default): float32; "high": TF32 on a GPU that has
        it; "medium": bfloat16 inputs with float32 sums and results where the hardware multiplies bfloat16 fast
        (CPUs with AMX or AVX512-BF16; elsewhere as "high"). On real SmolLM2-135M (760 reply tokens, ad hoc)
        "medium" moves the teacher's token log-probabilities by 0.013 on average (p99 0.08), against 0.007 (p99
        0.04) for the bfloat16 storage of the default teacher copy and a 0.32 mean effect of the hints, and the
        pass takes 0.64x the CPU time. Not the default: on the TT-OPD learning test's toy run
        (tests/test_ttopd_learning.py; hidden size 64, λ 4) the mean reward of the last 5 of 30 steps was 0.838
        over seeds 0-11 against 0.879 with "highest", lower on 8 of the 12 paired seeds (ad hoc). A model in
        bfloat16 is unaffected (its products are bfloat16 already).

    > Hints
        hints: give the teacher an outcome-conditioned hint at every turn (off: ablation "no hints").
        hint_position: "context" (default): the hint is a user message at the end of the teacher's context, before
        the generation prompt, so the teacher's reply starts where the student's does; "reply": raw text right after
        the generation prompt, at the start of the teacher's reply (before 2026-11: a small model then scores the
        reply as a continuation of the hint, and distilling that broke its format; trainers/ttopd/README.md).
        hint_correct / hint_wrong: the reinforcing / corrective hint text (none: the environment's default,
        trainers/ttopd/hints.py); "{field}" inserts a field of the episode's outcome.
    """

    supports_fsdp: ClassVar[bool] = True

    output_dir: str = option("run folder: metrics.jsonl and checkpoints/", default="runs/ttopd")
    beta: float = option("KL coefficient to the reference (k3); 0 disables it (TT-OPD: 0.01)", default=0.01)
    dynamic_sampling: bool = option("keep only groups with mixed outcomes (some episodes correct, some not) and "
                                    "refill", default=True)
    cosine_reward: bool = option("train on the cosine length reward (Eq. 3); off: ablation 'no length control'",
                                 default=True)
    lambda_distill: float = option("lambda: weight of the turn-level KL to the teacher (Eq. 2)", default=4.0)
    distill_schedule: str = option("schedule of lambda", DISTILL_SCHEDULES, default="constant")
    lambda_distill_floor: float = option("lambda at the end of a decaying schedule", default=0.0)
    distill_decay_steps: int | None = option("steps over which lambda decays (none: total_steps)", default=None)
    distill_turn_aggregation: str = option("sum (Eq. 2) or mean over turns of each turn's token-mean KL",
                                           TURN_AGGREGATIONS, default="sum")
    distill_max_context: int = option("L_max of the KL: turns ending beyond this teacher position are dropped",
                                      default=12288)
    teacher_update: str = option("ema, or reset (ablation: periodic hard copies only)", TEACHER_UPDATES,
                                 default="ema")
    ema_alpha: float = option("EMA decay alpha of the teacher", default=0.995)
    ema_interval: int = option("steps between EMA updates of the teacher", default=5)
    hard_copy_interval: int = option("steps between hard copies student -> teacher (0: never)", default=30)
    teacher_dtype: str = option("storage of a full fine-tuning teacher copy: bfloat16 (half the memory, EMA rounded "
                                "stochastically) or model (the model's dtype)", TEACHER_DTYPES, default="bfloat16")
    teacher_matmul_precision: str = option("float32 matrix products of the teacher's scoring pass: highest "
                                           "(float32), high (TF32 on a GPU) or medium (bfloat16 inputs, float32 "
                                           "sums, where fast)", TEACHER_MATMUL_PRECISIONS, default="highest")
    hints: bool = option("outcome-conditioned hints for the teacher; off: ablation 'no hints'", default=True)
    hint_position: str = option("where the teacher's hint goes: a message before the generation prompt (context) or "
                                "text at the start of the reply (reply)", HINT_POSITIONS, default="context")
    hint_correct: str | None = option("reinforcing hint text (none: the environment's default)", default=None)
    hint_wrong: str | None = option("corrective hint text (none: the environment's default)", default=None)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, value, allowed in (("distill_schedule", self.distill_schedule, DISTILL_SCHEDULES),
                                     ("distill_turn_aggregation", self.distill_turn_aggregation, TURN_AGGREGATIONS),
                                     ("teacher_update", self.teacher_update, TEACHER_UPDATES),
                                     ("teacher_dtype", self.teacher_dtype, TEACHER_DTYPES),
                                     ("teacher_matmul_precision", self.teacher_matmul_precision,
                                      TEACHER_MATMUL_PRECISIONS),
                                     ("hint_position", self.hint_position, HINT_POSITIONS)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        if self.lambda_distill < 0 or self.lambda_distill_floor < 0:
            raise ValueError("lambda_distill and lambda_distill_floor must be >= 0")
        if self.distill_schedule != "constant" and self.lambda_distill_floor > self.lambda_distill:
            raise ValueError(f"lambda_distill_floor ({self.lambda_distill_floor}) must not exceed lambda_distill "
                             f"({self.lambda_distill}) for a decaying schedule")
        if self.distill_decay_steps is not None and self.distill_decay_steps < 1:
            raise ValueError(f"distill_decay_steps must be >= 1, got {self.distill_decay_steps}")
        if self.distill_max_context < 2:
            raise ValueError(f"distill_max_context must be >= 2, got {self.distill_max_context}")
        if not 0 <= self.ema_alpha <= 1:
            raise ValueError(f"ema_alpha must be in [0, 1], got {self.ema_alpha}")
        if self.ema_interval < 1 or self.hard_copy_interval < 0:
            raise ValueError("ema_interval must be >= 1 and hard_copy_interval >= 0")
        if self.teacher_update == "reset" and self.hard_copy_interval < 1:
            raise ValueError("teacher_update 'reset' copies the student every hard_copy_interval steps: set "
                             "hard_copy_interval >= 1")
        for name in ("hint_correct", "hint_wrong"):
            text = getattr(self, name)
            if text is not None and not text.strip():
                raise ValueError(f"{name} must not be empty (leave it unset for the default, or turn hints off)")
            try:
                list(string.Formatter().parse(text or ""))
            except ValueError as e:
                raise ValueError(f"{name} is not a valid template ({e}); write a literal brace twice") from None
