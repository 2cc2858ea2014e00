"""Shared by the rollout and GRPO tests: a one-question quiz environment (the right first reply is one short
answer) with its checks, and the ``one_torch_thread`` fixture.

``QuizEnv`` is not registered with gymnasium: trainer tests pass it as the env factory.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from clinical_gym.spaces import UnicodeText

SYSTEM_PROMPT = "answer with one word"


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """One torch CPU thread while a test runs (restored after): deterministic, and quick on a busy 2-core machine
    where two threads contend. Modules use it with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@dataclass(frozen=True)
class QuizCase:
    id: str
    question: str
    answer: str


# ABO group O red cells carry neither A nor B antigen, so any ABO recipient can take them.
DONOR = QuizCase("universal-donor", "which blood group is the universal red cell donor?", "O")
HEART = QuizCase("heart-chambers", "how many chambers does the heart have?", "four")


class QuizEnv(gym.Env[str, str]):
    """One turn: the reply earns 1.0 when it starts with the case's answer (case-insensitive), else 0.0.

    Follows the clinical-gym env contract the rollout interface relies on: ``cases`` with ids,
    ``reset(options={"case_id": ...})``, ``info["system_prompt"]`` at reset, ``messages``, ``reward_components``
    every step and ``outcome`` at the end.
    """

    def __init__(self, cases: tuple[QuizCase, ...] = (DONOR,)) -> None:
        self.cases = list(cases)
        self.observation_space = UnicodeText(1000)
        self.action_space = UnicodeText(1000)
        self.messages: list[dict[str, str]] = []
        self.case = self.cases[0]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        wanted = (options or {}).get("case_id")
        self.case = next(c for c in self.cases if c.id == wanted) if wanted else \
            self.cases[int(self.np_random.integers(len(self.cases)))]
        self.messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": self.case.question}]
        return self.case.question, {"system_prompt": SYSTEM_PROMPT}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        correct = action.strip().lower().startswith(self.case.answer.lower())
        reward = float(correct)
        obs = "correct" if correct else "wrong"
        self.messages += [{"role": "assistant", "content": action}, {"role": "user", "content": obs}]
        outcome = {"result": obs, "success": correct}
        return obs, reward, True, False, {"reward_components": {"answer": reward}, "outcome": outcome}


def test_quiz_env_follows_the_gymnasium_contract():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(QuizEnv(), skip_render_check=True)


def test_quiz_env_rewards_only_the_right_first_answer():
    env = QuizEnv()
    obs, info = env.reset(seed=0, options={"case_id": "universal-donor"})
    assert "universal red cell donor" in obs and info["system_prompt"] == SYSTEM_PROMPT
    _, reward, terminated, _, info = env.step(" o negative")
    assert (reward, terminated, info["outcome"]["success"]) == (1.0, True, True)
    env.reset(seed=0)
    _, reward, _, _, info = env.step("AB")
    assert reward == 0.0 and info["reward_components"] == {"answer": 0.0}
