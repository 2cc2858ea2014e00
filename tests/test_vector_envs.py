"""Vector environments: ``gym.make_vec`` in "sync" and "async" mode (shared memory on, Gymnasium's default) give the
same observations, rewards and ends for every registered id, through an episode end and the autoreset after it."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.spaces.utils import flatten, flatten_space, unflatten

import clinical_gym  # noqa: F401  (registers the ids)
from clinical_gym.registration import ENVIRONMENTS
from clinical_gym.spaces import UnicodeText

# Per family: the actions of env 0 and env 1 each step (the last ones end the inquiry / workup episodes).
SCRIPTS = {
    "inquiry": [("<answer>Question: When did it start?</answer>", "<answer>Question: Any fever, 37.8°C or more?</answer>"),
                ("<answer>Question: Any chest pain?</answer>", "not a valid reply"),
                ("<answer>Diagnosis: Pneumonia\nRecommendation: antibiotics</answer>",
                 "<answer>Diagnosis: Asthma\nRecommendation: inhaler</answer>"),
                ("<answer>Question: When did it start?</answer>", "<answer>Question: Any cough?</answer>")],
    "workup": [("<answer>Test: Complete Blood Count</answer>", "<answer>Test: Chest X-ray</answer>"),
               ("<answer>Test: Troponin</answer>", "gibberish µg/L"),
               ("<answer>Diagnosis: Pneumonia</answer>", "<answer>Diagnosis: Myocardial infarction</answer>"),
               ("<answer>Test: Complete Blood Count</answer>", "<answer>Test: ECG</answer>")],
    "tool": [('{"name": "think", "arguments": {"thought": "°µ 中文 🩺"}}', '{"name": "no_such_tool", "arguments": {}}'),
             ('{"name": "submit_answer", "arguments": {"answer": "B"}}', "plain text"),
             ('{"name": "think", "arguments": {"thought": "after the reset"}}',
              '{"name": "submit_answer", "arguments": {"answer": "A"}}')],
}


def run(env_id: str, family: str, mode: str) -> list:
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode)
    try:
        obs, _ = envs.reset(seed=[11, 12])
        seen = [tuple(obs)]
        for actions in SCRIPTS[family]:
            obs, reward, terminated, truncated, _ = envs.step(actions)
            seen.append((tuple(obs), reward.tolist(), terminated.tolist(), truncated.tolist()))
        return seen
    finally:
        envs.close()


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=[e.id for e in ENVIRONMENTS])
def test_async_gives_what_sync_gives(env):
    sync, asynchronous = run(env.id, env.family, "sync"), run(env.id, env.family, "async")
    assert asynchronous == sync
    assert all(isinstance(text, str) and text for text in sync[0])
    if env.family in ("inquiry", "workup"):
        assert sync[3][2] == [True, True]  # both episodes ended, and the next step ran on the reset episodes


def test_async_shared_memory_view_follows_the_workers():
    envs = gym.make_vec("ClinicalInquiry-v1", num_envs=2, vectorization_mode="async", vector_kwargs={"copy": False})
    try:
        view, _ = envs.reset(seed=[1, 2])
        first = tuple(view)
        envs.step(("<answer>Question: When did it start?</answer>",) * 2)
        assert tuple(view) != first and all(text.endswith("Turn 1/10.") for text in view)
        assert copy.deepcopy(view) == tuple(view) and type(copy.deepcopy(view)) is tuple
    finally:
        envs.close()


def test_flat_form_is_code_points():
    space = UnicodeText(12)
    for text in ["", "36.6°C", "发烧 🤒", "a\x00b", "\ud800x"]:
        flat = flatten(space, text)
        assert flat.dtype == np.int32 and flat.shape == (12,) and flatten_space(space).contains(flat)
        assert unflatten(space, flat) == text
    assert flatten(space, "ab").tolist()[:3] == [97, 98, -1]
    with pytest.raises(ValueError, match="does not fit"):
        flatten(space, "x" * 13)
