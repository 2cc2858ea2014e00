"""The paper's ablation flags each change what a run does (tiny model, QuizEnv, 2 steps): --no-cosine-reward trains
on the environment's reward, --no-hints gives the teacher the student's own context, --teacher-update reset replaces
the EMA with periodic hard copies; and --distill-schedule changes λ per step."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="TT-OPD needs the [train] extra")

from test_grpo_toy_env import QuizEnv, one_torch_thread  # noqa: E402,F401

import clinical_gym.trainers.ttopd.train as ttopd  # noqa: E402
from clinical_gym.rewards.cosine_length import CosineLengthReward  # noqa: E402
from clinical_gym.trainers.common.length_reward import cosine_length_rewards  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.ttopd.config import TTOPDConfig  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny() -> tuple[object, object]:
    tokenizer = tiny_tokenizer()
    return tokenizer, tiny_llama(tokenizer)


def run(path: Path, tiny, monkeypatch, **overrides) -> tuple[list[dict], list[tuple[list, torch.Tensor]]]:
    """Metric rows and, per step, the trained groups with the rewards their advantages were computed from."""
    tokenizer, base = tiny
    seen: list = []
    real_collect, real_advantages = ttopd.collect_groups, ttopd.group_advantages

    def collect(*args, **kwargs):
        groups, *rest = real_collect(*args, **kwargs)
        seen.append([groups])
        return (groups, *rest)

    def advantages(rewards, *args):
        seen[-1].append(rewards.clone())
        return real_advantages(rewards, *args)

    monkeypatch.setattr(ttopd, "collect_groups", collect)
    monkeypatch.setattr(ttopd, "group_advantages", advantages)
    settings = dict(model="in-memory", env="QuizEnv", output_dir=str(path), total_steps=2, group_size=4,
                    groups_per_step=1, num_minibatches=1, dynamic_sampling=False, max_turn_tokens=3,
                    max_episode_tokens=64, lora_r=4, learning_rate=1e-2, cosine_max_length=8, save_every=10,
                    progress=False, report_to="none", seed=0)
    cfg = TTOPDConfig(**{**settings, **overrides})
    ttopd.main(cfg, env_factory=QuizEnv, model=copy.deepcopy(base), tokenizer=tokenizer)
    rows = [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]
    return rows, [tuple(s) for s in seen]


def test_no_length_control_trains_on_the_environment_reward(tmp_path, tiny, monkeypatch):
    cosine = CosineLengthReward(max_length=8)
    _, shaped = run(tmp_path / "full", tiny, monkeypatch)
    _, plain = run(tmp_path / "plain", tiny, monkeypatch, cosine_reward=False)
    for (groups, rewards) in shaped:
        expected = [cosine_length_rewards(g, cosine) for g in groups]
        assert torch.allclose(rewards, torch.tensor(expected))
    for (groups, rewards) in plain:
        assert rewards.tolist() == [[t.reward for t in g] for g in groups]
    assert not torch.equal(shaped[0][1], plain[0][1])   # same episodes (same seed), different training reward


def test_no_hints_gives_the_teacher_the_students_context(tmp_path, tiny, monkeypatch):
    hinted, _ = run(tmp_path / "hints", tiny, monkeypatch)
    blind, _ = run(tmp_path / "no-hints", tiny, monkeypatch, hints=False)
    # step 1, before any update the teacher is the student: only the hint can make them disagree
    assert hinted[0]["losses/kl_teacher"] > 1e-5, (hinted[0]["losses/kl_teacher"], blind[0]["losses/kl_teacher"])
    assert blind[0]["losses/kl_teacher"] < 1e-6, blind[0]["losses/kl_teacher"]
    assert hinted[0]["distill/hint_tokens_per_turn"] > 0 and blind[0]["distill/hint_tokens_per_turn"] == 0


def test_periodic_reset_replaces_the_ema(tmp_path, tiny, monkeypatch):
    ema, _ = run(tmp_path / "ema", tiny, monkeypatch, ema_alpha=0.5, ema_interval=1, hard_copy_interval=0)
    reset, _ = run(tmp_path / "reset", tiny, monkeypatch, teacher_update="reset", hard_copy_interval=1)
    # after step 1 the EMA teacher sits halfway to the student; the reset teacher is the student
    assert ema[1]["teacher/weight_distance"] > 0 and reset[1]["teacher/weight_distance"] == 0
    assert (ema[1]["teacher/ema_updates"], ema[1]["teacher/hard_copies"]) == (1.0, 0.0)
    assert (reset[1]["teacher/ema_updates"], reset[1]["teacher/hard_copies"]) == (0.0, 1.0)
    assert (ema[1]["teacher/steps_since_copy"], reset[1]["teacher/steps_since_copy"]) == (2.0, 1.0)
    assert reset[1]["losses/kl_teacher"] < ema[1]["losses/kl_teacher"]  # the copy removes the teacher's lag


def test_a_decaying_lambda_is_used_step_by_step(tmp_path, tiny, monkeypatch):
    rows, _ = run(tmp_path / "decay", tiny, monkeypatch, distill_schedule="linear", lambda_distill=2.0,
                  lambda_distill_floor=0.5)
    assert [r["losses/lambda_distill"] for r in rows] == [2.0, 0.5]
