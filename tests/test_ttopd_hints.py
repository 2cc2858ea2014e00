"""Outcome-conditioned hints: inserted at every prompt/response boundary of the teacher's sequence, removed before
the teacher's logprobs are aligned with the student's tokens (checked position by position against a direct
computation, with and without the hint), never in the student's input (checked on every forward pass of a run),
turns beyond L_max dropped, Eq. 2 token weights, and the hint texts."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch", reason="TT-OPD needs the [train] extra")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401
from test_ttopd_toy_env import ConfirmQuizEnv  # noqa: E402

from clinical_gym.rollout import Trajectory, Turn  # noqa: E402
from clinical_gym.trainers.common import shared_prefix  # noqa: E402
from clinical_gym.trainers.common.batch import pack  # noqa: E402
from clinical_gym.trainers.common.config import TrainerConfig  # noqa: E402
from clinical_gym.trainers.common.ema_teacher import EMATeacher  # noqa: E402
from clinical_gym.trainers.common.model import prepare_model  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.ttopd.config import TTOPDConfig  # noqa: E402
from clinical_gym.trainers.ttopd.hints import (  # noqa: E402
    DEFAULT_HINTS,
    HintTemplates,
    default_hints,
    hint_message,
    teacher_sequence,
)
from clinical_gym.trainers.ttopd.train import add_teacher_logprobs, hint_templates, main, teacher_sequences  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

HINT = [90, 91]


def trajectory(outcome: dict | None = None) -> Trajectory:
    """opening 10 11 12 | reply 20 21, env 30 31 32 | reply 22 23 24, env 33 | reply 25, env 34."""
    turns = [Turn(prompt_len=3, generated_ids=[20, 21], logprobs=[-1.0, -1.0], finish_reason="stop", action="a",
                  env_ids=[30, 31, 32]),
             Turn(prompt_len=8, generated_ids=[22, 23, 24], logprobs=[-1.0] * 3, finish_reason="stop", action="b",
                  env_ids=[33]),
             Turn(prompt_len=12, generated_ids=[25], logprobs=[-1.0], finish_reason="length", action="c",
                  env_ids=[34])]
    return Trajectory(opening_ids=[10, 11, 12], messages=[], turns=turns, terminated=True,
                      outcome=outcome or {"success": True}, reward=1.0)


def test_the_hint_sits_at_every_prompt_response_boundary_and_leaves_without_a_trace():
    t = trajectory()
    seq = teacher_sequence(t, HINT, max_context=100)
    assert seq.ids == [10, 11, 12, 90, 91, 20, 21, 30, 31, 32, 90, 91, 22, 23, 24, 33, 90, 91, 25]
    assert seq.hint_positions == [3, 4, 10, 11, 16, 17]
    for turn in range(3):  # the teacher's context for turn t: the student's prompt for turn t, hints added
        boundary = seq.teacher_positions[seq.turn_of.index(turn)]
        assert seq.ids[boundary - len(HINT):boundary] == HINT
        without = [x for i, x in enumerate(seq.ids[:boundary]) if i not in seq.hint_positions]
        assert without == t.prompt_ids(turn)
    student = t.token_ids()
    assert seq.student_positions == [3, 4, 8, 9, 10, 12]
    assert seq.teacher_positions == [5, 6, 12, 13, 14, 18]
    assert [student[p] for p in seq.student_positions] == [seq.ids[p] for p in seq.teacher_positions]
    assert (seq.turn_of, seq.turn_lengths, seq.dropped_turns) == ([0, 0, 1, 1, 1, 2], [2, 3, 1], 0)
    plain = teacher_sequence(t, [], max_context=100)
    assert plain.ids == student[:13] and plain.teacher_positions == plain.student_positions


def test_turns_ending_beyond_l_max_are_dropped():
    seq = teacher_sequence(trajectory(), HINT, max_context=18)   # turn 3's reply would end at token 19
    assert (seq.dropped_turns, seq.turn_lengths) == (1, [2, 3])
    assert seq.ids == [10, 11, 12, 90, 91, 20, 21, 30, 31, 32, 90, 91, 22, 23, 24]
    assert teacher_sequence(trajectory(), HINT, max_context=14).dropped_turns == 2
    nothing = teacher_sequence(trajectory(), HINT, max_context=6)
    assert (nothing.ids, nothing.dropped_turns, nothing.student_positions) == ([], 3, [])
    text_mode = trajectory()
    text_mode.opening_ids = []
    with pytest.raises(ValueError, match="no opening tokens"):
        teacher_sequence(text_mode, HINT, max_context=100)


@pytest.fixture(scope="module")
def tiny() -> tuple[object, object]:
    tokenizer = tiny_tokenizer()
    return tokenizer, tiny_llama(tokenizer)


def direct_teacher_logprobs(model: object, teacher: EMATeacher, ids: list[int]) -> torch.Tensor:
    """log π_T(ids[p] | ids[:p]) for every p >= 1, computed on the whole sequence in one unpadded pass."""
    with torch.no_grad(), teacher.active(model) as scorer:
        logits = scorer(input_ids=torch.tensor([ids])).logits[0].float()
    logprobs = torch.log_softmax(logits, dim=-1)
    return torch.tensor([float("nan")] + [float(logprobs[p - 1, ids[p]]) for p in range(1, len(ids))])


@pytest.mark.parametrize("micro_batch_size", [1, 2])
def test_teacher_logprobs_are_aligned_to_the_students_tokens_with_and_without_the_hint(tiny, micro_batch_size):
    tokenizer, base = tiny
    model = prepare_model(copy.deepcopy(base), TrainerConfig(model="unused", lora_r=4))
    teacher = EMATeacher(model)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.add_(0.3)  # the student moves away: scores must come from the teacher's weights
    short = Trajectory(opening_ids=[10, 11], messages=[], turns=[Turn(
        prompt_len=2, generated_ids=[40, 41], logprobs=[0.0, 0.0], finish_reason="stop", action="", env_ids=[3])],
        outcome={"success": False})
    trajectories = [trajectory(), short]
    # float32 products, so the batched scores match the one-row ones to 1e-5 (the precision's own test:
    # test_ttopd_teacher.py)
    cfg = TTOPDConfig(model="unused", micro_batch_size=micro_batch_size, teacher_matmul_precision="highest")
    batch = pack(trajectories, [0.0, 0.0], tokenizer.pad_token_id)
    student_ids = batch.input_ids.clone()
    results = {}
    for hint in (HINT, []):
        sequences = [teacher_sequence(t, hint, 100) for t in trajectories]
        aligned = add_teacher_logprobs(model, teacher, batch, sequences, cfg, tokenizer.pad_token_id)
        assert torch.equal(aligned.input_ids, student_ids)  # the student's sequence is untouched
        for row, seq in enumerate(sequences):
            direct = direct_teacher_logprobs(model, teacher, seq.ids)
            expected = torch.zeros(batch.loss_mask.shape[1])
            for sp, tp in zip(seq.student_positions, seq.teacher_positions, strict=True):
                assert seq.ids[tp] == int(student_ids[row, sp])   # the same token at both positions
                expected[sp - 1] = direct[tp]
            assert torch.allclose(aligned.teacher_logprobs[row], expected, atol=1e-5)
            covered = aligned.distill_weights[row] > 0
            assert torch.equal(covered, batch.loss_mask[row].bool())  # every generated token, nothing else
        results[bool(hint)] = aligned.teacher_logprobs
    plain = teacher.logprobs(model, batch.input_ids, batch.attention_mask, batch.loss_mask, 1.0)
    assert torch.allclose(results[False], plain, atol=1e-5)   # no hint: the teacher scores the student's sequence
    assert not torch.allclose(results[True], results[False], atol=1e-3)  # the hint changes the teacher's view


def test_eq2_token_weights_sum_or_average_the_turn_means(tiny):
    tokenizer, base = tiny
    model = copy.deepcopy(base)
    teacher = EMATeacher(model)
    batch = pack([trajectory()], [0.0], tokenizer.pad_token_id)
    sequences = [teacher_sequence(trajectory(), HINT, 100)]
    for aggregation, scale in (("sum", 1.0), ("mean", 1 / 3)):
        cfg = TTOPDConfig(model="unused", distill_turn_aggregation=aggregation)
        weights = add_teacher_logprobs(model, teacher, batch, sequences, cfg, 0).distill_weights[0]
        expected = torch.zeros_like(weights)
        for position, turn_length in ((3, 2), (4, 2), (8, 3), (9, 3), (10, 3), (12, 1)):
            expected[position - 1] = scale / turn_length
        assert torch.allclose(weights, expected)
        assert weights.sum().item() == pytest.approx(3 * scale)   # one unit per turn
    dropped = add_teacher_logprobs(model, teacher, batch, [teacher_sequence(trajectory(), HINT, 18)],
                                   TTOPDConfig(model="unused"), 0)
    assert dropped.distill_weights[0, 11] == 0 and dropped.teacher_logprobs[0, 11] == 0  # turn 3 beyond L_max


@pytest.mark.parametrize("precision", ["medium", "highest"])
def test_the_teacher_pass_uses_the_configured_matmul_precision(tiny, precision, monkeypatch):
    tokenizer, base = tiny
    model = copy.deepcopy(base)
    teacher = EMATeacher(model)
    asked = []
    real = EMATeacher.logprobs
    monkeypatch.setattr(EMATeacher, "logprobs", lambda self, *a: asked.append(a[-1]) or real(self, *a))
    batch = pack([trajectory()], [0.0], tokenizer.pad_token_id)
    cfg = TTOPDConfig(model="unused", teacher_matmul_precision=precision)
    scored = add_teacher_logprobs(model, teacher, batch, [teacher_sequence(trajectory(), HINT, 100)], cfg, 0)
    assert asked == [precision] and bool((scored.teacher_logprobs < 0).any())


def contains(row: list[int], part: list[int]) -> bool:
    return count(row, part) > 0


def test_the_student_never_sees_the_hint_and_the_teacher_always_does(tmp_path, tiny, monkeypatch):
    tokenizer, base = tiny
    # every pass runs whole rows: a prompt several rows share would otherwise run once, apart from the rest of its
    # rows (trainers/common/shared_prefix.py, tested in test_trainer_shared_prefix.py), and split a row's hints
    # between the two calls
    monkeypatch.setattr(shared_prefix, "_can_share", lambda model: False)
    cfg = TTOPDConfig(model="in-memory", env="ConfirmQuiz", output_dir=str(tmp_path), total_steps=2, group_size=4,
                      groups_per_step=1, max_refill_rounds=0, dynamic_sampling=False, max_turn_tokens=3,
                      max_episode_tokens=256, lora_r=4, learning_rate=1e-2, save_every=5, progress=False,
                      report_to="none", hint_correct="HINT right answer", hint_wrong="HINT wrong answer")
    model = prepare_model(copy.deepcopy(base), cfg)
    calls: list[tuple[str, bool, list[list[int]]]] = []

    def spy(module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        calls.append((module.active_adapter, torch.is_grad_enabled(), ids.tolist()))

    model.register_forward_pre_hook(spy, with_kwargs=True)
    main(cfg, env_factory=ConfirmQuizEnv, model=model, tokenizer=tokenizer)

    hints = [tokenizer.encode(text, add_special_tokens=False) for text in ("HINT right answer", "HINT wrong answer")]
    marker = tokenizer.encode("HINT", add_special_tokens=False)
    student = [rows for adapter, _, rows in calls if adapter == "default"]
    teacher = [rows for adapter, _, rows in calls if adapter == "teacher"]
    assert any(grad for adapter, grad, _ in calls if adapter == "default")     # the update's passes are included
    assert teacher and not any(grad for adapter, grad, _ in calls if adapter == "teacher")
    assert not any(contains(row, marker) for rows in student for row in rows)
    counts = [sum(count(row, hint) for hint in hints) for rows in teacher for row in rows]
    assert min(counts) >= 1 and max(counts) == 2, counts  # a hint before each reply; two-turn episodes have two


def count(row: list[int], part: list[int]) -> int:
    return sum(row[i:i + len(part)] == part for i in range(len(row) - len(part) + 1))


def test_hint_texts_per_environment_and_placeholders():
    assert default_hints("ClinicalInquiry-v1") is DEFAULT_HINTS["inquiry"]
    assert default_hints("DiagnosticWorkup-v1") is DEFAULT_HINTS["workup"]
    assert default_hints("MedicalQA-v1") is DEFAULT_HINTS["medical_qa"]
    assert default_hints("Triage-v1") is DEFAULT_HINTS["triage"]
    assert default_hints("EHRManagement-v1") is DEFAULT_HINTS["tool"]       # a tool domain without its own pair
    assert default_hints("my_pkg:QuizEnv") is DEFAULT_HINTS["default"]
    for pair in DEFAULT_HINTS.values():
        assert pair.correct != pair.wrong and pair.correct.endswith("\n") and pair.wrong.endswith("\n")
    templates = HintTemplates("right: {gold_answer}", "wrong, the answer was {gold_answer} ({missing})")
    assert templates.render(True, {"gold_answer": "C"}) == "right: C"
    assert templates.render(False, {"gold_answer": "C"}) == "wrong, the answer was C (unknown)"
    assert templates.render(False, None) == "wrong, the answer was unknown (unknown)"
    cfg = TTOPDConfig(model="m", env="Triage-v1", hint_wrong="reassess")
    assert hint_templates(cfg) == HintTemplates(DEFAULT_HINTS["triage"].correct, "reassess")
    with pytest.raises(ValueError, match="not a valid template"):
        TTOPDConfig(model="m", hint_correct="unbalanced {")
    with pytest.raises(ValueError, match="must not be empty"):
        TTOPDConfig(model="m", hint_wrong="  ")


def test_each_episode_gets_the_hint_of_its_outcome(tiny):
    tokenizer, _ = tiny
    cfg = TTOPDConfig(model="m", hint_correct="good", hint_wrong="bad")
    right, wrong, cut = trajectory({"success": True}), trajectory({"success": False}), trajectory()
    cut.outcome, cut.truncation = None, "max_turns"
    sequences = teacher_sequences([right, wrong, cut], cfg, hint_templates(cfg), tokenizer)
    good, bad = (tokenizer.encode(t, add_special_tokens=False) for t in ("good", "bad"))
    first_hint = [[s.ids[p] for p in s.hint_positions[:len(s.hint_positions) // 3]] for s in sequences]
    assert [contains(h, good) for h in first_hint] == [True, False, False]
    assert [contains(h, bad) for h in first_hint] == [False, True, True]


def test_the_hint_is_a_message_before_the_generation_prompt_or_text_after_it(tiny):
    tokenizer, _ = tiny
    message, prompt = hint_message(tokenizer, "HINT check")
    assert tokenizer.decode(message) == "<|im_start|>user\nHINT check<|im_end|>\n"
    assert tokenizer.decode(prompt) == "<|im_start|>assistant\n"
    turns = [Turn(prompt_len=2 + len(prompt), generated_ids=[20, 21], logprobs=[0.0, 0.0], finish_reason="stop",
                  action="a", env_ids=[30, *prompt]),
             Turn(prompt_len=5 + 2 * len(prompt), generated_ids=[22], logprobs=[0.0], finish_reason="stop",
                  action="b", env_ids=[33])]
    t = Trajectory(opening_ids=[10, 11, *prompt], messages=[], turns=turns, terminated=True, outcome={"success": 1})
    in_context = teacher_sequence(t, message, 100, prompt)     # the default: the hint is the state's last message
    in_reply = teacher_sequence(t, message, 100)                # hint position "reply": the reply starts with it
    for seq, before_reply in ((in_context, prompt), (in_reply, message)):
        for turn in range(2):
            boundary = seq.teacher_positions[seq.turn_of.index(turn)]
            assert seq.ids[boundary - len(before_reply):boundary] == before_reply
            without = [x for i, x in enumerate(seq.ids[:boundary]) if i not in seq.hint_positions]
            assert without == t.prompt_ids(turn)              # the student's context, the hint taken out
        assert [seq.ids[p] for p in seq.teacher_positions] == [20, 21, 22]
    first = in_context.hint_positions[0]
    assert in_context.ids[first:first + len(message) + len(prompt)] == [*message, *prompt]
    cfg = TTOPDConfig(model="m", hint_position="reply", hint_correct="good")
    reply = teacher_sequences([trajectory()], cfg, hint_templates(cfg), tokenizer)[0]
    good = tokenizer.encode("good", add_special_tokens=False)
    assert reply.ids[3:3 + len(good)] == good and reply.hint_positions[:len(good)] == list(range(3, 3 + len(good)))
    with pytest.raises(ValueError, match="hint_position"):
        TTOPDConfig(model="m", hint_position="middle")
