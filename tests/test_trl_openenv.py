"""TRL's GRPOTrainer on a served environment (examples/trl_openenv.py): two real steps with a tiny random model,
every episode played over OpenEnv WebSocket sessions, with rewards the server's environment computed."""

from __future__ import annotations

import json
import os
import sys
import urllib.request

import gymnasium as gym
import pytest

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401  (fixture)

from clinical_gym.server import ServerSettings, running_server  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from trl_openenv import train  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")
ENV_KWARGS = {"split": "train", "turn_budget": 2}


def test_grpo_trains_on_a_served_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    with running_server(ServerSettings("ClinicalInquiry-v1", ENV_KWARGS, max_sessions=8)) as url:
        tokenizer = tiny_tokenizer(vocab_size=600)
        trainer = train(url, tiny_llama(tokenizer), tokenizer, steps=2, out=str(tmp_path), cases=2,
                        max_completion_length=12, num_generations=2, learning_rate=1e-4, disable_tqdm=True, seed=0)
        with urllib.request.urlopen(url + "/info") as response:
            served = json.loads(response.read())
    assert trainer.state.global_step == 2
    logged = [e for e in trainer.state.log_history if "rewards/env_reward/mean" in e]
    assert len(logged) == 2
    trajectories = trainer.rollout.last_trajectories
    assert len(trajectories) == 4 and all(t.turns for t in trajectories)
    assert served["active_sessions"] == 0  # every episode's session was closed
    # the rewards are the server environment's: a local environment gives the same replies the same rewards
    local = gym.make("ClinicalInquiry-v1", **ENV_KWARGS)
    for t in trajectories:
        local.reset(seed=t.seed, options={"case_id": t.case_id})
        assert sum(float(local.step(turn.action)[1]) for turn in t.turns) == t.reward
        assert t.messages[1]["content"] == local.unwrapped.messages[1]["content"]
