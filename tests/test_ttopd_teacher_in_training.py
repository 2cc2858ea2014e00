"""TT-OPD's two teacher mechanisms inside real runs (tiny random model): the distillation term on its own moves the
student towards the teacher (no reward signal, no reference KL, a frozen teacher), and the teacher the trainer
scores with and saves is the EMA of the student's weights after each update, by the formula."""

from __future__ import annotations

import json
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="TT-OPD needs the [train] extra")

from safetensors.torch import load_file  # noqa: E402
from test_grpo_toy_env import QuizEnv, one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common.ema_teacher import EMATeacher  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.ttopd import train as ttopd  # noqa: E402
from clinical_gym.trainers.ttopd.config import TTOPDConfig  # noqa: E402
from clinical_gym.trainers.ttopd.hints import default_hints  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class SameRewardQuiz(QuizEnv):
    """The quiz, except that every reply earns 0.5: group advantages are all 0, so GRPO's term has no gradient."""

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, _, terminated, truncated, info = super().step(action)
        return obs, 0.5, terminated, truncated, {**info, "reward_components": {"answer": 0.5}}


class DistantTeacher(EMATeacher):
    """A teacher that starts away from the student (its weights shifted by seeded noise) and is kept by the runs
    below for inspection."""

    made: list[DistantTeacher] = []

    def __init__(self, model: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(model, *args, **kwargs)
        generator = torch.Generator().manual_seed(0)
        with torch.no_grad():
            for weight in self._teacher:
                weight.add_(0.05 * torch.randn(weight.shape, generator=generator))
        DistantTeacher.made.append(self)


def settings(tmp_path, **kw) -> TTOPDConfig:
    base = dict(model="in-memory", env="SameRewardQuiz", output_dir=str(tmp_path), group_size=4, groups_per_step=2,
                num_minibatches=1, max_turn_tokens=3, max_episode_tokens=64, learning_rate=1e-2, beta=0.0,
                dynamic_sampling=False, cosine_reward=False, seed=0, progress=False, report_to="none")
    return TTOPDConfig(**{**base, **kw})


def weights(model) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def rows(tmp_path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]


def first_reply_kl(model: Any, teacher: EMATeacher, tokenizer: Any) -> float:
    """KL(π_S ‖ π_T) over the whole vocabulary at the first token of the reply: the student sees the quiz, the
    teacher the quiz and the (reinforcing) hint, as in training."""
    env = SameRewardQuiz()
    question, info = env.reset(seed=0)
    messages = [{"role": "system", "content": info["system_prompt"]}, {"role": "user", "content": question}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                           return_dict=True)["input_ids"]
    hint = tokenizer.encode(default_hints("SameRewardQuiz").render(True, {}), add_special_tokens=False)
    with torch.no_grad():
        student = torch.log_softmax(model(torch.tensor([prompt])).logits[0, -1], -1)
        with teacher.active(model) as scorer:
            hinted = torch.log_softmax(scorer(torch.tensor([list(prompt) + hint])).logits[0, -1], -1)
    return float((student.exp() * (student - hinted)).sum())


def test_the_distillation_term_alone_pulls_the_student_to_its_teacher(tmp_path, monkeypatch):
    monkeypatch.setattr(ttopd, "EMATeacher", DistantTeacher)
    tokenizer = tiny_tokenizer()
    frozen = dict(ema_interval=1000, hard_copy_interval=0)   # the teacher stays where it started
    stored = ttopd.teacher_dtype(settings(tmp_path, **frozen))  # as the runs store their teacher (bfloat16)
    before = first_reply_kl(tiny_llama(tokenizer), DistantTeacher(tiny_llama(tokenizer), dtype=stored), tokenizer)
    after = {}
    for name, coefficient in (("distil", 4.0), ("none", 0.0)):
        model = tiny_llama(tokenizer)
        start = weights(model)
        ttopd.main(settings(tmp_path / name, total_steps=24, save_every=24, lambda_distill=coefficient,
                            learning_rate=3e-3, group_size=8, groups_per_step=2, **frozen),
                   env_factory=SameRewardQuiz, model=model, tokenizer=tokenizer)
        moved = max(float((p - start[n]).abs().max()) for n, p in weights(model).items())
        after[name] = (moved, first_reply_kl(model, DistantTeacher.made[-1], tokenizer))
    # without the term nothing moves the weights (zero advantages, beta 0): what moves them below is the term
    assert after["none"] == (0.0, pytest.approx(before))
    moved, kl = after["distil"]
    assert before > 0.05 and moved > 0
    # towards the teacher, not away from it: after 24 steps the KL was 0.33-0.54 of its start over seeds 0, 1, 3, 5,
    # 6 and 7 (12 steps left seeds 0 and 3 at 0.94 and 0.91: too few sampled replies to move it surely)
    assert kl < 0.75 * before, (before, kl)


def test_the_teacher_is_the_ema_of_the_student_after_each_update(tmp_path):
    tokenizer = tiny_tokenizer()
    model = tiny_llama(tokenizer)
    students: list[dict[str, torch.Tensor]] = []   # the adapter before each step's rollouts: after the previous update
    adapter = lambda: {n: p for n, p in weights(model).items() if ".default." in n}  # noqa: E731
    alpha = 0.7
    ttopd.main(settings(tmp_path, env="QuizEnv", total_steps=3, save_every=3, lora_r=4, lora_alpha=8, ema_alpha=alpha,
                  ema_interval=1, hard_copy_interval=0),
               env_factory=QuizEnv, model=model, tokenizer=tokenizer, on_collect=[lambda _: students.append(adapter())])
    students.append(adapter())                     # after the last update
    assert len(students) == 4 and students[0].keys() and any(
        not torch.equal(students[0][n], students[-1][n]) for n in students[0])
    expected = dict(students[0])                   # θ_T starts as θ_S
    for student in students[1:]:                   # θ_T ← α θ_T + (1 − α) θ_S after every update
        expected = {n: alpha * expected[n] + (1 - alpha) * student[n] for n in expected}
    saved = load_file(tmp_path / "checkpoints" / "step-000003" / "teacher" / "teacher.safetensors")
    assert len(saved) == len(expected)
    for key, value in saved.items():
        name = next(n for n in expected if key.endswith(n))
        assert torch.allclose(value, expected[name], atol=1e-6), key
    assert [r["teacher/ema_updates"] for r in rows(tmp_path)] == [0.0, 1.0, 2.0]   # logged before the step's move
