"""The EMA teacher (trainers/common/ema_teacher.py): the update matches θ_T ← α θ_T + (1 − α) θ_S to 1e-6 (adapter
weights only with LoRA, every weight without), hard copies, float32 master copies for low-precision weights, the
teacher's logprobs and adapter switching, state round trips, and checkpoints that always carry their teacher."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch", reason="the teacher needs the [train] extra")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common.config import TrainerConfig  # noqa: E402
from clinical_gym.trainers.common import ema_teacher  # noqa: E402
from clinical_gym.trainers.common.ema_teacher import EMATeacher  # noqa: E402
from clinical_gym.trainers.common.logprobs import token_logprobs  # noqa: E402
from clinical_gym.trainers.common.model import prepare_model  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.ttopd import train as ttopd  # noqa: E402
from clinical_gym.trainers.ttopd.config import TTOPDConfig  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny() -> tuple[object, object]:
    tokenizer = tiny_tokenizer()
    return tokenizer, tiny_llama(tokenizer)


def student(base: object, lora_r: int, dtype: torch.dtype = torch.float32) -> object:
    return prepare_model(copy.deepcopy(base).to(dtype), TrainerConfig(model="unused", lora_r=lora_r))


@torch.no_grad()
def perturb(model: object, scale: float = 0.1, seed: int = 0) -> None:
    generator = torch.Generator().manual_seed(seed)
    for p in model.parameters():
        if p.requires_grad:
            p.add_(scale * torch.randn(p.shape, generator=generator).to(p.dtype))


def teacher_weights(model: object, teacher: EMATeacher) -> dict[str, torch.Tensor]:
    """The teacher's weights read from the model (LoRA: the "teacher" adapter) or its frozen copy."""
    if teacher.uses_adapters:
        return {name: p.detach().clone() for name, p in model.named_parameters() if ".teacher." in name}
    return {name: p.detach().clone() for name, p in teacher.copy.named_parameters()}


def student_weights(model: object, teacher: EMATeacher) -> dict[str, torch.Tensor]:
    if teacher.uses_adapters:
        return {name.replace(".default.", ".teacher."): p.detach().clone() for name, p in model.named_parameters()
                if ".default." in name}
    return {name: p.detach().clone() for name, p in model.named_parameters()}


@pytest.mark.parametrize("lora_r", [4, 0], ids=["lora", "full"])
def test_ema_update_matches_the_formula(tiny, lora_r):
    _, base = tiny
    model = student(base, lora_r)
    teacher = EMATeacher(model)
    perturb(model, seed=1)
    teacher.copy_from(step=0)                     # θ_T = θ_S⁽¹⁾
    before = teacher_weights(model, teacher)
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    perturb(model, seed=2)                        # θ_S⁽²⁾ moves away
    now = student_weights(model, teacher)
    alpha = 0.9
    teacher.ema_update(alpha, step=5)
    after = teacher_weights(model, teacher)
    assert after.keys() == before.keys() == now.keys() and after
    for name in after:
        expected = alpha * before[name] + (1 - alpha) * now[name]
        assert torch.allclose(after[name], expected, atol=1e-6, rtol=0), name
        assert not torch.equal(after[name], now[name])
    if lora_r:
        assert all("lora_" in name for name in after)     # adapter weights only: no second base model
        assert not any(p.requires_grad for n, p in model.named_parameters() if ".teacher." in n)
        assert {n: p for n, p in model.named_parameters() if not p.requires_grad and ".teacher." not in n}.keys() \
            == {n for n in frozen if ".teacher." not in n}
    else:
        assert len(after) == len(list(base.parameters()))   # every weight of the model
    assert (teacher.ema_updates, teacher.last_ema_step) == (1, 5)


def test_hard_copy_and_age(tiny):
    _, base = tiny
    model = student(base, 4)
    teacher = EMATeacher(model)
    assert teacher.distance() == 0.0
    perturb(model)
    assert teacher.distance() > 0
    assert teacher.age(3) == {"teacher/steps_since_copy": 3.0, "teacher/steps_since_update": 3.0,
                              "teacher/ema_updates": 0.0, "teacher/hard_copies": 0.0}
    teacher.ema_update(0.5, step=3)
    assert teacher.age(4)["teacher/steps_since_update"] == 1.0 and teacher.age(4)["teacher/steps_since_copy"] == 4.0
    teacher.copy_from(step=6)
    assert teacher.distance() == 0.0
    assert teacher.age(7) == {"teacher/steps_since_copy": 1.0, "teacher/steps_since_update": 1.0,
                              "teacher/ema_updates": 1.0, "teacher/hard_copies": 1.0}


def test_low_precision_weights_keep_a_float32_master_copy(tiny):
    _, base = tiny
    model = student(base, 0, torch.bfloat16)
    teacher = EMATeacher(model)
    start = {n: p.detach().float().clone() for n, p in model.named_parameters()}
    perturb(model, scale=1.0)
    target = {n: p.detach().float().clone() for n, p in model.named_parameters()}
    for step in range(1, 21):
        teacher.ema_update(0.995, step)
    kept = 0.995 ** 20
    for name, weight in teacher.copy.named_parameters():
        expected = kept * start[name] + (1 - kept) * target[name]
        master = teacher.state_dict()["weights"][name]
        assert master.dtype == torch.float32 and torch.allclose(master, expected, atol=1e-5), name
        assert torch.equal(weight, master.to(torch.bfloat16))
    moved = sum(float((teacher.state_dict()["weights"][n] - start[n]).abs().sum()) for n in start)
    assert moved > 0  # 20 steps of 0.5 % each are not rounded away


def test_teacher_logprobs_switch_the_adapter_and_restore_the_student(tiny):
    tokenizer, base = tiny
    model = student(base, 4)
    teacher = EMATeacher(model)
    ids = torch.tensor([tokenizer.encode("the patient has a fever and a cough")])
    attention, mask = torch.ones_like(ids), torch.ones(1, ids.shape[1] - 1)
    same = token_logprobs(model, ids, attention, mask)
    assert torch.allclose(teacher.logprobs(model, ids, attention, mask, 1.0), same, atol=1e-6)
    perturb(model, scale=0.5)
    flags = [p.requires_grad for p in model.parameters()]
    moved = token_logprobs(model, ids, attention, mask)
    scored = teacher.logprobs(model, ids, attention, mask, 1.0)
    assert torch.allclose(scored, same, atol=1e-6) and not torch.allclose(scored, moved, atol=1e-3)
    assert model.active_adapter == "default" and [p.requires_grad for p in model.parameters()] == flags
    assert torch.allclose(token_logprobs(model, ids, attention, mask), moved)   # the student is back
    assert not scored.requires_grad


@pytest.mark.parametrize("lora_r", [4, 0], ids=["lora", "full"])
def test_state_round_trips_exactly(tmp_path, tiny, lora_r):
    _, base = tiny
    model = student(base, lora_r)
    teacher = EMATeacher(model)
    perturb(model)
    teacher.ema_update(0.7, step=5)
    teacher.save(tmp_path / "teacher")
    saved = teacher_weights(model, teacher)
    other_model = student(base, lora_r)
    other = EMATeacher(other_model)
    other.load(tmp_path / "teacher")
    restored = teacher_weights(other_model, other)
    assert all(torch.equal(saved[n], restored[n]) for n in saved)
    assert (other.ema_updates, other.copies, other.last_ema_step, other.last_copy_step) == (1, 0, 5, 0)


def test_a_checkpoint_always_finds_its_teacher(tmp_path, tiny):
    _, base = tiny
    model = student(base, 4)
    teacher = EMATeacher(model)
    root = tmp_path / "checkpoints"

    def write(step: int, die: bool = False):
        def checkpoint():
            folder = root / f"step-{step:06d}"
            folder.mkdir(parents=True)
            (folder / "trainer_state.json").write_text("{}")
            if die:
                raise KeyboardInterrupt  # killed after the checkpoint was renamed into place, before the move
            return folder
        return checkpoint

    final = teacher.save_with_checkpoint(write(1), root, 1)
    assert (final / "teacher" / "teacher.safetensors").is_file() and not list(root.glob(".teacher-*"))
    perturb(model)
    teacher.ema_update(0.5, step=2)
    expected = teacher_weights(model, teacher)
    with pytest.raises(KeyboardInterrupt):
        teacher.save_with_checkpoint(write(2, die=True), root, 2)
    assert not (root / "step-000002" / "teacher").exists()
    fresh_model = student(base, 4)
    fresh = EMATeacher(fresh_model)
    fresh.load_from_checkpoint(root / "step-000002")       # found staged next to the checkpoint
    assert all(torch.equal(expected[n], v) for n, v in teacher_weights(fresh_model, fresh).items())
    teacher.save_with_checkpoint(write(3), root, 3)          # the next save moves the leftover into its checkpoint
    assert (root / "step-000002" / "teacher" / "teacher.json").is_file() and not list(root.glob(".teacher-*"))
    with pytest.raises(FileNotFoundError, match="no teacher state"):
        fresh.load_from_checkpoint(tmp_path / "elsewhere" / "step-000001")


def test_a_bfloat16_teacher_is_half_the_copy_and_its_small_ema_steps_add_up(tiny):
    _, base = tiny
    model = student(base, 0)
    teacher = EMATeacher(model, dtype=torch.bfloat16)
    assert all(p.dtype == torch.bfloat16 for p in teacher.copy.parameters())
    assert all(m is None for m in teacher._master)  # no float32 master copy: stochastic rounding instead
    assert all(w.dtype == torch.bfloat16 for w in teacher.state_dict()["weights"].values())
    # a step far below bfloat16's spacing (2^-7 at 1.0): rounding to nearest would never move the teacher
    weights = torch.ones(200_000, dtype=torch.bfloat16)
    target = torch.full((200_000,), 1.0 + 1e-3)
    generator = torch.Generator().manual_seed(0)
    for _ in range(20):
        ema_teacher._ema_rounded(weights, target, 0.995, generator)
    expected = 1e-3 * (1 - 0.995 ** 20)  # the float32 EMA's move
    assert float(weights.float().mean()) - 1.0 == pytest.approx(expected, rel=0.1)
    # the rounding is seeded by the step: the same update of the same weights gives the same teacher (resume)
    teachers = []
    for _ in range(2):
        one = student(base, 0)
        teachers.append(EMATeacher(one, dtype=torch.bfloat16))
        perturb(one, scale=0.01)
        teachers[-1].ema_update(0.995, step=5)
    assert all(torch.equal(a, b) for a, b in zip(teachers[0]._teacher, teachers[1]._teacher, strict=True))


def test_a_bfloat16_teacher_moves_the_distillation_term_by_little(tiny):
    """What storing the teacher in bfloat16 does to TT-OPD's distillation (Eq. 2): it computes in float32 (the
    weights widened while each module runs, stored in bfloat16 again after), its token log-probabilities move by
    well under 0.01 nats here, and the distillation surrogate ½ (log π_S − log π_T)² of a student that moved away
    from its teacher by less than 2 %."""
    tokenizer, base = tiny
    model = student(base, 0)
    exact, stored = EMATeacher(model), EMATeacher(model, dtype=torch.bfloat16)
    ids = torch.tensor([tokenizer.encode("the patient has a fever and a cough since yesterday, likely viral")] * 2)
    attention, mask = torch.ones_like(ids), torch.ones(2, ids.shape[1] - 1)
    perturb(model, scale=0.05)
    with torch.no_grad():
        moved = token_logprobs(model, ids, attention, mask)
    exact_lp = exact.logprobs(model, ids, attention, mask, 1.0)
    stored_lp = stored.logprobs(model, ids, attention, mask, 1.0)
    assert stored_lp.dtype == torch.float32
    assert all(p.dtype == torch.bfloat16 for p in stored.copy.parameters())  # stored narrow again after the pass
    gap = (stored_lp - exact_lp).abs()
    assert float(gap.max()) < 0.01 and float(gap.mean()) < 0.003
    exact_term = 0.5 * (moved - exact_lp).pow(2).sum()
    stored_term = 0.5 * (moved - stored_lp).pow(2).sum()
    assert float(exact_term) > 0 and abs(float(stored_term / exact_term) - 1) < 0.02


def test_the_teacher_dtype_option_picks_the_copys_storage():
    """``--teacher-dtype``: bfloat16 by default, the model's dtype with ``model`` and under ``--fsdp`` (FSDP gathers
    from its own buffers, which widening a narrower copy does not reach); any other value is refused."""
    assert ttopd.teacher_dtype(TTOPDConfig(model="m")) == torch.bfloat16
    assert ttopd.teacher_dtype(TTOPDConfig(model="m", teacher_dtype="model")) is None
    assert ttopd.teacher_dtype(TTOPDConfig(model="m", fsdp=True, generation_engine="transformers")) is None
    with pytest.raises(ValueError, match="teacher_dtype must be one of bfloat16, model"):
        TTOPDConfig(model="m", teacher_dtype="float16")


def test_the_matmul_precision_block_sets_and_restores_torchs_setting():
    before = torch.get_float32_matmul_precision()
    with ema_teacher.float32_matmul_precision("medium"):
        assert torch.get_float32_matmul_precision() == "medium"
    assert torch.get_float32_matmul_precision() == before
    with pytest.raises(RuntimeError, match="stop"), ema_teacher.float32_matmul_precision("medium"):
        raise RuntimeError("stop")
    assert torch.get_float32_matmul_precision() == before


@pytest.mark.parametrize("lora_r", [4, 0], ids=["lora", "full"])
def test_the_teacher_scores_at_the_asked_matmul_precision(tiny, lora_r, monkeypatch):
    """``teacher_matmul_precision``: the teacher's pass runs under it (and only its pass), and "medium" (bfloat16
    inputs, float32 sums where the CPU has fast bfloat16) stays close to float32 products: well under the 0.32-nat
    mean effect of a hint on real SmolLM2 (the config's docstring)."""
    tokenizer, base = tiny
    model = student(base, lora_r)
    teacher = EMATeacher(model)
    perturb(model, scale=0.05)
    ids = torch.tensor([tokenizer.encode("the patient has a fever and a cough since yesterday, likely viral")] * 2)
    attention, mask = torch.ones_like(ids), torch.ones(2, ids.shape[1] - 1)
    exact = teacher.logprobs(model, ids, attention, mask, 1.0, "highest")
    fast = teacher.logprobs(model, ids, attention, mask, 1.0, "medium")
    gap = (fast - exact).abs()
    assert float(gap.max()) < 0.05 and float(gap.mean()) < 0.01
    assert float(exact.abs().mean()) > 1.0  # the scores themselves are not near zero
    seen = []
    real = ema_teacher.token_logprobs
    monkeypatch.setattr(ema_teacher, "token_logprobs",
                        lambda *a, **k: seen.append(torch.get_float32_matmul_precision()) or real(*a, **k))
    before = torch.get_float32_matmul_precision()
    teacher.logprobs(model, ids, attention, mask, 1.0, "medium")
    teacher.logprobs(model, ids, attention, mask, 1.0)
    assert seen == ["medium", "highest"] and torch.get_float32_matmul_precision() == before


def test_the_teacher_matmul_precision_option():
    assert TTOPDConfig(model="m").teacher_matmul_precision == "highest"
    assert TTOPDConfig(model="m", teacher_matmul_precision="medium").teacher_matmul_precision == "medium"
    with pytest.raises(ValueError, match="teacher_matmul_precision must be one of highest, high, medium"):
        TTOPDConfig(model="m", teacher_matmul_precision="low")
