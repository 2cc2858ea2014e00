"""RolloutCollector: token integrity at every turn, loss masks, limits and truncation, batching across live
episodes, rewards and outcomes, text mode. Real ClinicalInquiry-v1 episodes, a tiny random Llama."""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import pytest

torch = pytest.importorskip("torch", reason="the transformers policy needs the [train] extra")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

import clinical_gym  # noqa: E402,F401
from clinical_gym.rollout import (  # noqa: E402
    EpisodeSpec,
    Generation,
    Prompt,
    RolloutCollector,
    RolloutLimits,
    ScriptedPolicy,
    Trajectory,
    tool_calls_in,
)
from clinical_gym.rollout.transformers_policy import TransformersPolicy  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

CASE = "dig-appendicitis-01"
QUESTIONS = ["<think>onset</think><answer>Question: When did the pain start?</answer>",
             "<answer>Question: Do you have a fever?</answer>"]
DIAGNOSIS = "<answer>Diagnosis: acute appendicitis\nRecommendation: urgent surgical review</answer>"



@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    return tiny_llama(tokenizer)


class Recording:
    """Wraps a policy and keeps a copy of every prompt and generation it handled, per call."""

    def __init__(self, policy) -> None:
        self.policy = policy
        self.calls: list[list[tuple[Prompt, Generation]]] = []

    def generate(self, prompts: Sequence[Prompt], *, seed: int | None = None) -> list[Generation]:
        generations = self.policy.generate(prompts, seed=seed)
        self.calls.append(list(zip(prompts, generations)))
        return generations


def inquiry(**kwargs):
    return lambda: gym.make("ClinicalInquiry-v1", **kwargs)


def scripted_doctor(messages) -> str:
    asked = sum(m["role"] == "assistant" for m in messages)
    return QUESTIONS[asked] if asked < len(QUESTIONS) else DIAGNOSIS


def assert_token_integrity(trajectories: Sequence[Trajectory], policy: Recording, tokenizer) -> bool:
    """Every turn's prompt is a token sequence the policy was given and the trajectory's prefix; generated tokens
    follow it unchanged; the loss mask is 1 exactly on them. Returns whether some reply would have changed had it
    been decoded and re-encoded (so that keeping token ids mattered)."""
    given = {}
    for call in policy.calls:
        for prompt, generation in call:
            given.setdefault(tuple(prompt.token_ids), generation)
    retokenizing_changes = False
    for trajectory in trajectories:
        ids, mask = trajectory.token_ids(), trajectory.loss_mask()
        assert len(ids) == len(mask) == len(trajectory.token_logprobs())
        assert trajectory.turns and trajectory.opening_ids == ids[:len(trajectory.opening_ids)]
        generated_positions = []
        for i, turn in enumerate(trajectory.turns):
            prompt = tuple(trajectory.prompt_ids(i))
            assert prompt in given, f"turn {i}: the model never saw this prefix"
            span = ids[turn.prompt_len:turn.prompt_len + len(turn.generated_ids)]
            assert list(given[prompt].token_ids) == turn.generated_ids == span
            generated_positions += range(turn.prompt_len, turn.prompt_len + len(turn.generated_ids))
            if turn.truncated:  # a cut reply is closed by the end-of-turn token, as an environment token
                assert turn.env_ids[0] == tokenizer.eos_token_id and turn.cut == "turn_tokens"
            text = tokenizer.decode(turn.generated_ids, skip_special_tokens=True)
            kept = [t for t in turn.generated_ids if t != tokenizer.eos_token_id]
            retokenizing_changes |= tokenizer.encode(text, add_special_tokens=False) != kept
        assert [k for k, m in enumerate(mask) if m == 1] == generated_positions
    return retokenizing_changes


def test_prompts_are_the_trajectory_prefix_at_every_turn(tokenizer, model):
    policy = Recording(TransformersPolicy(model, tokenizer))
    collector = RolloutCollector(policy, inquiry(turn_budget=3), tokenizer, num_envs=4,
                                 limits=RolloutLimits(max_turn_tokens=6, max_episode_tokens=4096))
    trajectories = collector.collect([EpisodeSpec(seed=i, group=i // 2) for i in range(6)], seed=7)
    assert assert_token_integrity(trajectories, policy, tokenizer)  # and re-tokenizing would have broken it
    assert max(len(call) for call in policy.calls) == 4  # generation batched across live episodes
    assert [t.group for t in trajectories] == [0, 0, 1, 1, 2, 2] and [t.seed for t in trajectories] == list(range(6))


def test_token_sequence_matches_the_template_when_replies_round_trip(tokenizer):
    collector = RolloutCollector(ScriptedPolicy(scripted_doctor, tokenizer), inquiry(), tokenizer, num_envs=2)
    trajectory, = collector.collect([EpisodeSpec(seed=0, options={"case_id": CASE})])
    whole = list(tokenizer.apply_chat_template(trajectory.messages[:-1], return_dict=True)["input_ids"])
    ids = trajectory.token_ids()
    assert ids == whole[:len(ids)] and len(whole) - len(ids) == 1  # only the template's final newline is missing
    assert trajectory.terminated and trajectory.truncation is None and trajectory.case_id == CASE
    assert trajectory.outcome["result"] == "correct" and trajectory.success is trajectory.outcome["success"]
    assert [t.reward for t in trajectory.turns] == [1.0, 1.0, pytest.approx(trajectory.turns[-1].reward)]
    assert trajectory.reward == pytest.approx(sum(t.reward for t in trajectory.turns))
    assert trajectory.reward_components["information"] == 2.0
    assert trajectory.turns[-1].env_ids == []  # the last reply ended with its end token: nothing to close


def test_episode_token_limit_truncates_and_bounds_the_sequence(tokenizer, model):
    limit = 700  # the opening (system prompt and complaint) takes ~550-600 tiny-tokenizer tokens
    collector = RolloutCollector(TransformersPolicy(model, tokenizer), inquiry(turn_budget=10), tokenizer,
                                 limits=RolloutLimits(max_turn_tokens=8, max_episode_tokens=limit))
    for trajectory in collector.collect([EpisodeSpec(seed=s) for s in range(3)], seed=1):
        assert trajectory.truncation == "episode_tokens" and not trajectory.terminated
        assert trajectory.outcome is None and len(trajectory.token_ids()) <= limit
        assert 1 <= len(trajectory.turns) < 10
        assert trajectory.turns[-1].env_ids in ([], [tokenizer.eos_token_id])


def test_an_opening_longer_than_the_limit_ends_before_any_generation(tokenizer):
    collector = RolloutCollector(ScriptedPolicy(scripted_doctor, tokenizer), inquiry(), tokenizer,
                                 limits=RolloutLimits(max_turn_tokens=8, max_episode_tokens=20))
    trajectory, = collector.collect([EpisodeSpec(seed=0)])
    assert trajectory.truncation == "episode_tokens" and trajectory.turns == []


def test_turn_limit_and_environment_truncation(tokenizer):
    collector = RolloutCollector(ScriptedPolicy(scripted_doctor, tokenizer), inquiry(), tokenizer,
                                 limits=RolloutLimits(max_turns=1))
    trajectory, = collector.collect([EpisodeSpec(seed=0, options={"case_id": CASE})])
    assert trajectory.truncation == "max_turns" and len(trajectory.turns) == 1
    timed = RolloutCollector(ScriptedPolicy(scripted_doctor, tokenizer),
                             lambda: gym.make("ClinicalInquiry-v1", max_episode_steps=2), tokenizer)
    trajectory, = timed.collect([EpisodeSpec(seed=0, options={"case_id": CASE})])
    assert trajectory.truncation == "env" and len(trajectory.turns) == 2 and trajectory.truncated


def test_a_long_scripted_reply_is_cut_at_the_turn_limit(tokenizer):
    collector = RolloutCollector(ScriptedPolicy(lambda m: QUESTIONS[0], tokenizer), inquiry(turn_budget=2),
                                 tokenizer, limits=RolloutLimits(max_turn_tokens=5))
    trajectory, = collector.collect([EpisodeSpec(seed=0)])
    first = trajectory.turns[0]
    assert first.finish_reason == "length" and len(first.generated_ids) == 5 and first.cut == "turn_tokens"
    assert first.info["reply_kind"] == "invalid"  # the cut text went to the environment as the action


def test_text_mode_without_a_tokenizer():
    prompts: list[Prompt] = []

    def doctor(messages):
        return scripted_doctor(messages)

    class Spy(ScriptedPolicy):
        def generate(self, batch, *, seed=None):
            prompts.extend(batch)
            return super().generate(batch, seed=seed)

    collector = RolloutCollector(Spy(doctor), inquiry(), None, num_envs=3)
    trajectories = collector.collect([EpisodeSpec(seed=i, options={"case_id": CASE}) for i in range(3)])
    assert all(p.token_ids is None for p in prompts)
    assert all(t.token_ids() == [] and t.outcome["result"] == "correct" for t in trajectories)
    assert [m["role"] for m in trajectories[0].messages] == ["system", "user"] + ["assistant", "user"] * 3
    assert collector.last_stats.rounds == 3 and collector.last_stats.episodes == 3


def test_token_mode_refuses_a_policy_without_token_ids(tokenizer):
    collector = RolloutCollector(ScriptedPolicy(scripted_doctor), inquiry(), tokenizer)
    with pytest.raises(ValueError, match="text mode"):
        collector.collect([EpisodeSpec(seed=0)])


def test_trajectories_keep_the_order_of_the_specs(tokenizer):
    cases = ["dig-appendicitis-01", "cir-nstemi-01", "dig-appendicitis-01"]
    collector = RolloutCollector(ScriptedPolicy(scripted_doctor, tokenizer), inquiry(), tokenizer, num_envs=2,
                                 limits=RolloutLimits(max_turns=1))
    trajectories = collector.collect([EpisodeSpec(seed=i, options={"case_id": c}) for i, c in enumerate(cases)])
    assert [t.case_id for t in trajectories] == cases
    assert isinstance(trajectories[0], Trajectory) and trajectories[0].to_dict()["case_id"] == cases[0]


def test_tool_calls_are_counted_from_info():
    assert tool_calls_in({"tool_calls": 2}) == 2
    assert tool_calls_in({"tool_calls": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}) == 3
    assert tool_calls_in({"reply_kind": "tool_call"}) == 1
    assert tool_calls_in({"reply_kind": "answered"}) == 0 and tool_calls_in({}) == 0
