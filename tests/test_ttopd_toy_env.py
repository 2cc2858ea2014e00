"""Shared by the TT-OPD tests: a two-turn quiz (the first reply is answered with a request to confirm, the second is
graded), so hints are inserted at more than one prompt/response boundary; and its contract checks."""

from __future__ import annotations

import warnings
from typing import Any

from gymnasium.utils.env_checker import check_env
from test_grpo_toy_env import DONOR, QuizCase, QuizEnv

CONFIRM = "please confirm your answer"


class ConfirmQuizEnv(QuizEnv):
    """Two turns: the first reply gets ``CONFIRM`` back (reward 0), the second earns 1.0 when it starts with the
    case's answer. Same contract as ``QuizEnv`` (``outcome`` at the end)."""

    def __init__(self, cases: tuple[QuizCase, ...] = (DONOR,)) -> None:
        super().__init__(cases)
        self.turn = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        self.turn = 0
        return super().reset(seed=seed, options=options)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        if self.turn == 1:
            self.messages += [{"role": "assistant", "content": action}, {"role": "user", "content": CONFIRM}]
            return CONFIRM, 0.0, False, False, {"reward_components": {"answer": 0.0}}
        return super().step(action)


def test_confirm_quiz_env_follows_the_gymnasium_contract():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(ConfirmQuizEnv(), skip_render_check=True)


def test_confirm_quiz_env_grades_the_second_reply():
    env = ConfirmQuizEnv()
    env.reset(seed=0)
    obs, reward, terminated, _, _ = env.step("AB")
    assert (obs, reward, terminated) == (CONFIRM, 0.0, False)
    _, reward, terminated, _, info = env.step("O negative")
    assert (reward, terminated, info["outcome"]["success"]) == (1.0, True, True)
