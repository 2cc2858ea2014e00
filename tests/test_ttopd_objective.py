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


def micro(student: list[float], teacher: list[float], weights: list[float],
          old: list[float] | None = None) -> tuple[DistillBatch, torch.Tensor]:
    n = len(student)
    zeros = torch.zeros(1, n)
    batch = DistillBatch(torch.zeros(1, n + 1, dtype=torch.long), torch.ones(1, n + 1, dtype=torch.long), zeros,
                         zeros, torch.zeros(1), old_logprobs=None if old is None else torch.tensor([old]),
                         teacher_logprobs=torch.tensor([teacher]), distill_weights=torch.tensor([weights]))
    return batch, torch.tensor([student], requires_grad=True)


def test_turn_distillation_is_lambda_times_the_sum_of_turn_means():
    # two turns: tokens 1-2 (|a_1| = 2, weight 1/2) and token 3 (|a_2| = 1); token 4 is not covered (dropped turn)
    student = [math.log(0.5), math.log(0.5), math.log(0.2), math.log(0.9)]
    teacher = [math.log(0.25), math.log(0.5), math.log(0.4), math.log(1e-30)]
    batch, logprobs = micro(student, teacher, [0.5, 0.5, 1.0, 0.0])
    d = [math.log(2), 0.0, -math.log(2)]                          # log π_S − log π_T
    k2 = [0.5 * x * x for x in d]                                  # the surrogate optimised (reverse-KL gradient)
    k3 = [0.5 + math.log(2) - 1, 0.0, 2.0 - math.log(2) - 1]      # exp(−d) + d − 1: the KL estimate logged
    term = TurnDistillation(coefficient=4.0)
    value = term(batch, logprobs)
    assert value.shape == (1,)
    assert value.item() == pytest.approx(4.0 * ((k2[0] + k2[1]) / 2 + k2[2]))
    value.sum().backward()
    # ∂/∂ log π_S of λ w ½ d² is λ w d: positive where the student is above the teacher (pushed down), negative where
    # it is below (pulled up), 0 where they agree and on the dropped token
    assert logprobs.grad[0].tolist() == pytest.approx([4.0 * 0.5 * d[0], 0.0, 4.0 * d[2], 0.0])
    metrics = term.metrics()
    assert metrics["losses/kl_teacher"] == pytest.approx(sum(k3) / 3)      # mean over covered tokens
    assert metrics["losses/distill_loss"] == pytest.approx(value.item()) and metrics["losses/lambda_distill"] == 4.0


def test_the_distillation_gradient_is_the_reverse_kl_gradient():
    # one position, three tokens; the student's sampled tokens weighted by their probability (the exact expectation
    # over the student's samples) give ∇ KL(π_S ‖ π_T), the direction of Eq. 2, and not ∇ KL(π_T ‖ π_S)
    logits = torch.tensor([1.0, 0.0, -1.0], requires_grad=True)
    teacher = torch.log_softmax(torch.tensor([0.0, 1.0, 0.5]), -1)
    student = torch.log_softmax(logits, -1)
    p = student.exp().detach()
    term = TurnDistillation(1.0)
    expected_value = sum(p[k] * term(*_one_token(student[k], teacher[k])).squeeze() for k in range(3))
    (grad_surrogate,) = torch.autograd.grad(expected_value, logits)
    student = torch.log_softmax(logits, -1)
    reverse = (student.exp() * (student - teacher)).sum()
    (grad_reverse,) = torch.autograd.grad(reverse, logits)
    forward = (teacher.exp() * (teacher - torch.log_softmax(logits, -1))).sum()
    (grad_forward,) = torch.autograd.grad(forward, logits)
    assert torch.allclose(grad_surrogate, grad_reverse, atol=1e-6)
    assert not torch.allclose(grad_surrogate, grad_forward, atol=1e-2)


def _one_token(student_logprob: torch.Tensor, teacher_logprob: torch.Tensor) -> tuple[DistillBatch, torch.Tensor]:
    zeros = torch.zeros(1, 1)
    batch = DistillBatch(torch.zeros(1, 2, dtype=torch.long), torch.ones(1, 2, dtype=torch.long), zeros, zeros,
                         torch.zeros(1), teacher_logprobs=teacher_logprob.detach().reshape(1, 1),
                         distill_weights=torch.ones(1, 1))
    return batch, student_logprob.reshape(1, 1)


def test_tokens_sampled_before_this_steps_updates_are_importance_weighted():
    batch, logprobs = micro([math.log(0.5)], [math.log(0.25)], [1.0], old=[math.log(0.25)])
    value = TurnDistillation(1.0)(batch, logprobs)       # ρ = 0.5 / 0.25 = 2, detached
    assert value.item() == pytest.approx(2 * 0.5 * math.log(2) ** 2)
    value.sum().backward()
    assert logprobs.grad.item() == pytest.approx(2 * math.log(2))


def test_the_log_ratio_is_clamped_so_the_estimate_stays_finite():
    batch, logprobs = micro([-200.0], [0.0], [1.0])
    term = TurnDistillation(1.0)
    value = term(batch, logprobs)
    assert value.item() == pytest.approx(0.5 * 20 ** 2) and torch.isfinite(value).all()
    assert term.metrics()["losses/kl_teacher"] == pytest.approx(math.exp(20) - 21)


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
