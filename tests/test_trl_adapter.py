"""The TRL adapter's prompt dataset and ``rollout_func`` path: two real ``GRPOTrainer`` steps on ClinicalInquiry-v1
with a tiny random model, token-exact multi-turn episodes from the ``RolloutCollector`` (environment tokens masked),
and rewards that the environment computed."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401  (fixture)

from clinical_gym.integrations.trl import EnvRolloutFunc, env_dataset, env_reward, prompt_key  # noqa: E402
from clinical_gym.rollout import RolloutLimits  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")
CASES = ["cir-nstemi-01", "cir-stable-angina-01"]


def test_env_dataset_holds_each_case_opening():
    dataset = env_dataset("ClinicalInquiry-v1", case_ids=CASES, seed=3, repeat=2)
    env = gym.make("ClinicalInquiry-v1")
    obs, info = env.reset(seed=3, options={"case_id": CASES[1]})
    assert len(dataset) == 4 and dataset["case_id"] == CASES * 2 and set(dataset["seed"]) == {3}
    assert dataset[1]["prompt"] == [{"role": "system", "content": info["system_prompt"]},
                                    {"role": "user", "content": obs}]
    with pytest.raises(TypeError, match="not a tool domain"):
        env_dataset("ClinicalInquiry-v1", case_ids=CASES[:1], tool_prompt=True)


def test_rollout_func_needs_prompts_it_can_route():
    rows = [{"prompt": [{"role": "user", "content": "same"}], "case_id": c} for c in CASES]
    with pytest.raises(ValueError, match="same prompt"):
        EnvRolloutFunc("ClinicalInquiry-v1", rows)
    with pytest.raises(ValueError, match="no rows"):
        EnvRolloutFunc("ClinicalInquiry-v1", [])
    func = EnvRolloutFunc("ClinicalInquiry-v1", rows[:1])
    with pytest.raises(ValueError, match="matches no case"):
        func._case([{"role": "user", "content": "other"}])
    assert func._case(rows[0]["prompt"]) == CASES[0] and prompt_key(rows[0]["prompt"]) in func.cases


def test_env_reward_passes_the_episode_rewards_on_and_logs_episode_metrics():
    logged = {}
    rewards = env_reward(["a", "b"], env_reward=[1.5, -2.0], env_success=[1.0, 0.0], env_turns=[2, 4],
                         log_metric=logged.__setitem__, case_id=["x", "y"])
    assert rewards == [1.5, -2.0] and logged == {"env/success_rate": 0.5, "env/turns": 3.0}
    with pytest.raises(ValueError, match="EnvRolloutFunc"):
        env_reward(["a"])


def replayed_reward(trajectory) -> float:
    """The reward a fresh environment gives the trajectory's replies."""
    env = gym.make("ClinicalInquiry-v1")
    env.reset(seed=trajectory.seed, options={"case_id": trajectory.case_id})
    return sum(float(env.step(turn.action)[1]) for turn in trajectory.turns)


def test_two_grpo_steps_with_the_rollout_func(tmp_path, monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    dataset = env_dataset("ClinicalInquiry-v1", case_ids=CASES)
    tokenizer = tiny_tokenizer(corpus=[m["content"] for row in dataset for m in row["prompt"]], vocab_size=600)
    rollout = EnvRolloutFunc("ClinicalInquiry-v1", dataset, num_envs=4,
                             limits=RolloutLimits(max_turn_tokens=12, max_episode_tokens=1024, max_turns=2))
    calls = []

    def recorded(prompts, trainer):
        out = rollout(prompts, trainer)
        calls.append((prompts, out, rollout.last_trajectories))
        return out

    args = trl.GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=2,
                          max_completion_length=12, max_steps=2, learning_rate=1e-4, beta=0.0, logging_steps=1,
                          report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True, seed=0)
    trainer = trl.GRPOTrainer(model=tiny_llama(tokenizer), reward_funcs=env_reward, args=args, train_dataset=dataset,
                              processing_class=tokenizer, rollout_func=recorded)
    trainer.train()

    assert trainer.state.global_step == 2 and len(calls) == 2
    steps = [entry for entry in trainer.state.log_history if "rewards/env_reward/mean" in entry]
    assert len(steps) == 2
    cases = dict(zip((prompt_key(p) for p in dataset["prompt"]), dataset["case_id"], strict=True))
    for (prompts, out, trajectories), logged in zip(calls, steps, strict=True):
        assert len(prompts) == len(trajectories) == 4
        assert [t.case_id for t in trajectories] == [cases[prompt_key(p)] for p in prompts]
        for i, t in enumerate(trajectories):
            # token-exact: TRL trains on exactly the collector's sequence; only generated tokens count
            assert out["prompt_ids"][i] + out["completion_ids"][i] == t.token_ids()
            assert out["env_mask"][i] == t.loss_mask()[len(t.opening_ids):]
            assert len(out["logprobs"][i]) == len(out["completion_ids"][i])
            assert len(t.turns) == 2 and t.truncation == "max_turns"  # multi-turn, environment tokens masked:
            assert out["env_mask"][i].index(0) < len(out["env_mask"][i]) - 1 - out["env_mask"][i][::-1].index(1)
        rewards = [t.reward for t in trajectories]
        assert out["env_reward"] == rewards
        assert logged["rewards/env_reward/mean"] == pytest.approx(np.mean(rewards), abs=1e-5)
        assert logged["completions/mean_length"] == pytest.approx(np.mean([t.generated_tokens for t in trajectories]))
    # the rewards are the environment's: a fresh environment gives the same replies the same reward
    assert all(replayed_reward(t) == t.reward for _, _, trajectories in calls for t in trajectories)
