"""TT-OPD's pieces with numbers: the turn-level distillation term (Eq. 2) and its weight schedule, when the teacher
moves (EMA, hard copy, reset), dynamic sampling on mixed outcomes, and the settings' checks."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch", reason="TT-OPD needs the [train] extra")

from clinical_gym.rollout import Trajectory, Turn  # noqa: E402
from clinical_gym.trainers.ttopd.config import TTOPDConfig  # noqa: E402
from clinical_gym.trainers.ttopd.train import (  # noqa: E402
    DistillBatch,
    TurnDistillation,
    distill_coefficient,
    mixed_outcomes,
    teacher_move,
)


def config(**kw) -> TTOPDConfig:
    return TTOPDConfig(model="unused", **kw)


def test_defaults_follow_the_paper():
    cfg = config()
    assert (cfg.lambda_distill, cfg.ema_alpha, cfg.ema_interval, cfg.hard_copy_interval) == (4.0, 0.995, 5, 30)
    assert (cfg.beta, cfg.cosine_reward, cfg.hints, cfg.teacher_update) == (0.01, True, True, "ema")
    assert (cfg.distill_max_context, cfg.cosine_max_length) == (12288, 12288)
    assert (cfg.cosine_r_max, cfg.cosine_r_min, cfg.cosine_r_wrong, cfg.cosine_r_penalty) == (1.1, 0.7, 0.3, -0.5)


def micro(student: list[float], teacher: list[float], weights: list[float]) -> tuple[DistillBatch, torch.Tensor]:
    n = len(student)
    zeros = torch.zeros(1, n)
    batch = DistillBatch(torch.zeros(1, n + 1, dtype=torch.long), torch.ones(1, n + 1, dtype=torch.long), zeros,
                         zeros, torch.zeros(1), teacher_logprobs=torch.tensor([teacher]),
                         distill_weights=torch.tensor([weights]))
    return batch, torch.tensor([student], requires_grad=True)


def test_turn_distillation_is_lambda_times_the_sum_of_turn_means_of_k3():
    # two turns: tokens 1-2 (|a_1| = 2, weight 1/2) and token 3 (|a_2| = 1); token 4 is not covered (dropped turn)
    student = [math.log(0.5), math.log(0.5), math.log(0.2), math.log(0.9)]
    teacher = [math.log(0.25), math.log(0.5), math.log(0.4), math.log(1e-30)]
    batch, logprobs = micro(student, teacher, [0.5, 0.5, 1.0, 0.0])
    k3 = [0.5 + math.log(2) - 1, 0.0, 2.0 - math.log(2) - 1]     # exp(d) − d − 1, d = log π_T − log π_S
    term = TurnDistillation(coefficient=4.0)
    value = term(batch, logprobs)
    assert value.shape == (1,)
    assert value.item() == pytest.approx(4.0 * ((k3[0] + k3[1]) / 2 + k3[2]))
    value.sum().backward()
    assert logprobs.grad[0, 3] == 0 and torch.isfinite(logprobs.grad).all()  # the dropped token adds nothing
    metrics = term.metrics()
    assert metrics["losses/kl_teacher"] == pytest.approx(sum(k3) / 3)      # mean over covered tokens
    assert metrics["losses/distill_loss"] == pytest.approx(value.item()) and metrics["losses/lambda_distill"] == 4.0


def test_the_log_ratio_is_clamped_so_the_estimate_stays_finite():
    batch, logprobs = micro([-200.0], [0.0], [1.0])
    value = TurnDistillation(1.0)(batch, logprobs)
    assert value.item() == pytest.approx(math.exp(20) - 21) and torch.isfinite(value).all()


def test_distillation_weight_schedules():
    assert [distill_coefficient(s, config(total_steps=5)) for s in (1, 3, 5)] == [4.0, 4.0, 4.0]
    linear = config(distill_schedule="linear", lambda_distill=4.0, lambda_distill_floor=1.0, distill_decay_steps=4)
    assert [distill_coefficient(s, linear) for s in range(1, 7)] == pytest.approx([4.0, 3.0, 2.0, 1.0, 1.0, 1.0])
    cosine = config(distill_schedule="cosine", lambda_distill=4.0, lambda_distill_floor=1.0, distill_decay_steps=4)
    assert [distill_coefficient(s, cosine) for s in range(1, 6)] == pytest.approx([4.0, 3.25, 1.75, 1.0, 1.0])
    to_end = config(distill_schedule="linear", total_steps=3)
    assert [distill_coefficient(s, to_end) for s in (1, 2, 3)] == pytest.approx([4.0, 2.0, 0.0])


def test_when_the_teacher_moves():
    ema = config()   # EMA every 5 steps, hard copy every 30 (a copy replaces the EMA due the same step)
    moves = {s: teacher_move(s, ema) for s in range(1, 61)}
    assert {s for s, m in moves.items() if m == "ema"} == set(range(5, 61, 5)) - {30, 60}
    assert {s for s, m in moves.items() if m == "copy"} == {30, 60}
    assert teacher_move(7, config(hard_copy_interval=0, ema_interval=7)) == "ema"
    assert not any(teacher_move(s, config(hard_copy_interval=0)) == "copy" for s in range(1, 100))
    reset = config(teacher_update="reset", hard_copy_interval=10)
    assert {s: m for s in range(1, 31) if (m := teacher_move(s, reset))} == {10: "copy", 20: "copy", 30: "copy"}


def group(*outcomes: bool | None) -> list[Trajectory]:
    return [Trajectory(opening_ids=[1], messages=[], turns=[Turn(0, [2] * (i + 1), [0.0] * (i + 1), "stop", "")],
                       outcome=None if o is None else {"success": o}) for i, o in enumerate(outcomes)]


def test_dynamic_sampling_keeps_groups_with_mixed_outcomes_only():
    assert mixed_outcomes(group(True, False, False))
    assert mixed_outcomes(group(None, True))              # a cut episode counts as not correct
    assert not mixed_outcomes(group(False, False, None))  # different lengths (cosine rewards differ) are not enough
    assert not mixed_outcomes(group(True, True))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"lambda_distill": -1.0}, "lambda_distill"),
    ({"distill_schedule": "step"}, "distill_schedule"),
    ({"distill_schedule": "linear", "lambda_distill_floor": 5.0}, "must not exceed"),
    ({"distill_turn_aggregation": "max"}, "distill_turn_aggregation"),
    ({"distill_decay_steps": 0}, "distill_decay_steps"),
    ({"distill_max_context": 1}, "distill_max_context"),
    ({"teacher_update": "swap"}, "teacher_update"),
    ({"ema_alpha": 1.5}, "ema_alpha"),
    ({"ema_interval": 0}, "ema_interval"),
    ({"teacher_update": "reset", "hard_copy_interval": 0}, "hard_copy_interval >= 1"),
    ({"group_size": 1}, "group_size"),              # GRPO's checks still apply
])
def test_bad_settings_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        config(**kwargs)
