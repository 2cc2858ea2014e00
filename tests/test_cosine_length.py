"""The cosine length reward (TT-OPD Eq. 3): each case against hand-computed values, the trajectory-level transform
(outcome, generated tokens, truncation), and GRPO's opt-in --cosine-reward."""

from __future__ import annotations

import math

import pytest

from clinical_gym.rewards.cosine_length import CosineLengthReward
from clinical_gym.rollout import Trajectory, Turn
from clinical_gym.trainers.common.length_reward import cosine_length_rewards, cosine_reward_from, outcome_correct

DEFAULTS = CosineLengthReward()  # R_max 1.1, R_min 0.7, R_wrong 0.3, R_penalty -0.5, L_max 12288


# L = L_max/3: 1 − cos(π/3) = 0.5;  L = L_max/2: 1 − cos(π/2) = 1;  L = L_max: 1 − cos(π) = 2
@pytest.mark.parametrize(("length", "correct_value", "wrong_value"), [
    (0, 1.1, 0.0),
    (4096, 1.1 - 0.5 * 0.4 * 0.5, -0.5 * 0.3 * 0.5),    # 1.0 and -0.075
    (6144, 1.1 - 0.5 * 0.4 * 1.0, -0.5 * 0.3 * 1.0),    # 0.9 and -0.15
    (12288, 0.7, -0.3),
])
def test_correct_and_wrong_cases_with_the_released_defaults(length, correct_value, wrong_value):
    assert DEFAULTS(correct=True, length=length) == pytest.approx(correct_value, abs=1e-12)
    assert DEFAULTS(correct=False, length=length) == pytest.approx(wrong_value, abs=1e-12)


def test_hand_computed_values_with_other_constants():
    reward = CosineLengthReward(r_max=2.0, r_min=1.0, r_wrong=1.0, r_penalty=-3.0, max_length=100)
    # L = 25: 1 − cos(π/4) = 1 − √2/2 ≈ 0.29289
    rise = 1 - math.sqrt(2) / 2
    assert reward(True, 25) == pytest.approx(2.0 - 0.5 * 1.0 * rise)   # 1.85355
    assert reward(False, 25) == pytest.approx(-0.5 * 1.0 * rise)       # -0.14645
    assert reward(True, 75) == pytest.approx(2.0 - 0.5 * (1 + math.sqrt(2) / 2))  # 1.14645


def test_truncated_and_over_limit_episodes_get_the_penalty():
    assert DEFAULTS(correct=True, length=10, truncated=True) == -0.5
    assert DEFAULTS(correct=False, length=0, truncated=True) == -0.5
    assert DEFAULTS(correct=True, length=12289) == -0.5   # beyond L_max counts as cut off
    assert DEFAULTS(correct=True, length=12288) == pytest.approx(0.7)  # L_max itself is the curve's end


def test_eq3_as_printed_uses_abs_r_min_for_the_wrong_case():
    printed = CosineLengthReward(r_max=1.0, r_min=-0.5, r_wrong=None, max_length=10)
    assert printed(False, 10) == pytest.approx(-0.5)   # −½ |R_min| · 2
    assert printed(False, 5) == pytest.approx(-0.25)
    assert printed(True, 10) == pytest.approx(-0.5)    # correct: R_max → R_min


def test_a_longer_answer_never_earns_more():
    lengths = range(0, 12289, 512)
    for correct in (True, False):
        values = [DEFAULTS(correct, n) for n in lengths]
        assert values == sorted(values, reverse=True)
    assert min(DEFAULTS(True, n) for n in lengths) > max(DEFAULTS(False, n) for n in lengths)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_length": 0}, "max_length"), ({"r_min": 2.0}, "must not exceed"), ({"r_wrong": -1.0}, "magnitude")])
def test_bad_constants_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CosineLengthReward(**kwargs)
    with pytest.raises(ValueError, match="length"):
        DEFAULTS(True, -1)


def episode(generated: list[int], outcome: dict | None, reward: float = 0.0, truncation: str | None = None,
            turns: int = 1) -> Trajectory:
    steps = [Turn(prompt_len=0, generated_ids=list(generated), logprobs=[0.0] * len(generated),
                  finish_reason="stop", action="", env_ids=[0, 0]) for _ in range(turns)]
    return Trajectory(opening_ids=[1, 2, 3], messages=[], turns=steps, terminated=outcome is not None,
                      truncation=truncation, outcome=outcome, reward=reward)


def test_outcome_correct_reads_success_then_result_then_reward():
    assert outcome_correct(episode([5], {"success": True, "result": "wrong"}))
    assert not outcome_correct(episode([5], {"success": False, "result": "correct"}, reward=1.0))
    assert outcome_correct(episode([5], {"result": "correct"}))
    assert not outcome_correct(episode([5], {"result": "partially"}, reward=0.5))
    assert outcome_correct(episode([5], {"answer": "B"}, reward=0.2))
    assert not outcome_correct(episode([5], None, reward=3.0, truncation="max_turns"))


def test_the_trajectory_transform_counts_generated_tokens_of_every_turn():
    reward = CosineLengthReward(r_max=1.0, r_min=0.0, r_wrong=1.0, r_penalty=-2.0, max_length=12)
    trajectories = [
        episode([7] * 3, {"success": True}, turns=2),             # L = 6 (env tokens not counted): 1 − ½·1·1 = 0.5
        episode([7] * 4, {"success": False}, reward=0.9),         # L = 4: 1 − cos(π/3) = 0.5 → −0.25
        episode([7] * 2, None, truncation="episode_tokens"),      # cut by a limit
        episode([7] * 13, {"success": True}),                     # over L_max
    ]
    assert cosine_length_rewards(trajectories, reward) == pytest.approx([0.5, -0.25, -2.0, -2.0])


def test_grpo_cosine_reward_flag_builds_the_reward_and_changes_the_training_reward():
    pytest.importorskip("torch", reason="the GRPO trainer needs the [train] extra")
    from clinical_gym.trainers.grpo.config import GRPOConfig
    from clinical_gym.trainers.grpo.train import episode_rewards, has_reward_variance

    cfg = GRPOConfig(model="m", cosine_reward=True, cosine_r_max=1.0, cosine_r_min=0.5, cosine_r_wrong=0.2,
                     cosine_r_penalty=-1.0, cosine_max_length=4)
    assert cosine_reward_from(cfg) == CosineLengthReward(1.0, 0.5, 0.2, -1.0, 4)
    group = [episode([7], {"success": False}), episode([7, 7, 7, 7], {"success": False})]  # same env reward 0
    assert episode_rewards(group, cfg) == pytest.approx([-0.5 * 0.2 * (1 - math.cos(math.pi / 4)), -0.2])
    assert has_reward_variance(group, cfg)                          # lengths differ: the shaped rewards do
    plain = GRPOConfig(model="m")
    assert episode_rewards(group, plain) == [0.0, 0.0] and not has_reward_variance(group, plain)
    with pytest.raises(ValueError, match="must not exceed"):
        GRPOConfig(model="m", cosine_r_min=5.0)


def test_grpo_main_computes_advantages_from_the_cosine_reward(tmp_path, monkeypatch):
    pytest.importorskip("torch", reason="the GRPO trainer needs the [train] extra")
    import torch
    from test_grpo_toy_env import QuizEnv

    import clinical_gym.trainers.grpo.train as grpo
    from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer
    from clinical_gym.trainers.grpo.config import GRPOConfig

    seen: list = []
    real_collect, real_advantages = grpo.collect_groups, grpo.group_advantages

    def collect(*args, **kwargs):
        groups, *rest = real_collect(*args, **kwargs)
        seen.append(groups)
        return (groups, *rest)

    def advantages(rewards, *args):
        seen.append(rewards.clone())
        return real_advantages(rewards, *args)

    monkeypatch.setattr(grpo, "collect_groups", collect)
    monkeypatch.setattr(grpo, "group_advantages", advantages)
    tokenizer = tiny_tokenizer()
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        grpo.main(GRPOConfig(model="in-memory", env="QuizEnv", output_dir=str(tmp_path), total_steps=1, group_size=4,
                             groups_per_step=1, dynamic_sampling=False, max_turn_tokens=3, max_episode_tokens=64,
                             cosine_reward=True, cosine_max_length=8, progress=False, report_to="none"),
                  env_factory=QuizEnv, model=tiny_llama(tokenizer), tokenizer=tokenizer)
    finally:
        torch.set_num_threads(before)
    groups, rewards = seen
    expected = [cosine_length_rewards(g, CosineLengthReward(max_length=8)) for g in groups]
    assert torch.allclose(rewards, torch.tensor(expected))
    assert rewards.tolist() != [[t.reward for t in g] for g in groups]
