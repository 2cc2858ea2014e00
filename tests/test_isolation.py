"""Episodes side by side never share state: interleaved or threaded runs equal the same seeds run one at a time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import gymnasium as gym
import numpy as np
import pytest

import clinical_gym

N_ENVS = 64
STEPS = 6

INQUIRY = ["When did it start?", "Where is the pain?", "Any fever?", "Do you take any medications?", "Any allergies?"]
EXAMS = ["Complete Blood Count", "Basic Metabolic Panel", "Chest X-ray", "ECG", "Lipase", "Urinalysis"]
TOOL_CALLS = ['{"name": "think", "arguments": {"thought": "plan"}}',
              '{"name": "search_knowledge", "arguments": {"query": "sepsis bundle", "k": 2}}', "not a call"]


def actions_for(env_id: str, seed: int) -> list[str]:
    """A seeded, env-appropriate script of actions ending with a conclusion."""
    rng = np.random.default_rng(seed)
    family = next(e.family for e in clinical_gym.ENVIRONMENTS if e.id == env_id)
    if family == "inquiry":
        steps = [f"<answer>Question: {INQUIRY[i]}</answer>" for i in rng.permutation(len(INQUIRY))[: STEPS - 1]]
        return steps + ["<answer>Diagnosis: viral illness\nRecommendation: rest</answer>"]
    if family == "workup":
        steps = [f"<answer>Test: {EXAMS[i]}</answer>" for i in rng.permutation(len(EXAMS))[: STEPS - 1]]
        return steps + ["<answer>Diagnosis: viral illness</answer>"]
    steps = [TOOL_CALLS[int(i)] for i in rng.integers(len(TOOL_CALLS), size=STEPS - 1)]
    return steps + ['{"name": "submit_answer", "arguments": {"answer": "viral illness"}}']


def run_interleaved(env_id: str, seeds: list[int]) -> list[list]:
    envs = [gym.make(env_id) for _ in seeds]
    logs = [[env.reset(seed=s)[0]] for env, s in zip(envs, seeds)]
    scripts = [actions_for(env_id, s) for s in seeds]
    for t in range(STEPS):
        for i in np.random.default_rng(0).permutation(len(envs)):  # a different order every step
            if t < len(scripts[i]) and not (len(logs[i]) > 1 and logs[i][-1][2]):
                obs, r, term, trunc, info = envs[i].step(scripts[i][t])
                logs[i].append((obs, r, term, info.get("reward_components")))
    return logs


def run_one(env_id: str, seed: int) -> list:
    env = gym.make(env_id)
    log = [env.reset(seed=seed)[0]]
    for action in actions_for(env_id, seed):
        obs, r, term, trunc, info = env.step(action)
        log.append((obs, r, term, info.get("reward_components")))
        if term or trunc:
            break
    return log


@pytest.mark.parametrize("env_id", clinical_gym.env_ids())
def test_interleaved_equals_sequential(env_id):
    seeds = list(range(N_ENVS))
    assert run_interleaved(env_id, seeds) == [run_one(env_id, s) for s in seeds]


@pytest.mark.parametrize("env_id", clinical_gym.env_ids())
def test_thread_pool_equals_sequential(env_id):
    seeds = list(range(N_ENVS))
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(lambda s: run_one(env_id, s), seeds))
    assert threaded == [run_one(env_id, s) for s in seeds]
