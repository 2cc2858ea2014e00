"""Keeping a broken agent or environment from stopping a benchmark run.

``GuardedPolicy`` wraps an agent's policy: an exception, a call that outlives ``timeout_s`` or an empty reply
becomes a failure marker in place of that conversation's reply (a raising batch is retried one conversation at a
time, so only the conversations that fail are marked). ``BenchEnv`` wraps each environment: a failure marker ends
the episode at once (truncated, ``info["agent_failure"]`` holds the reason) without reaching the environment; an
exception inside the environment ends it truncated with ``info["error"]`` (like a simulator outage: the collector
marks it, so nothing trains on it). It also tells the agent about every reset and the
runner about every finished episode.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from clinical_gym.benchmarks.agents.base import ResetHook
from clinical_gym.rollout.policy import Generation, Policy, Prompt

FAILURE_MARK = "\x00agent-failure\x00"


class _Abandoned(Exception):
    """The agent's call outlived the timeout."""


def failure_reason(action: str) -> str | None:
    """The reason carried by a failure marker, or None for an ordinary reply."""
    return action[len(FAILURE_MARK):] if action.startswith(FAILURE_MARK) else None


class GuardedPolicy:
    """A ``Policy`` that never raises: failures become failure markers (see the module docstring). In token mode a
    marker carries ``end_token_id`` as its one generated token (the collector needs tokens)."""

    def __init__(self, policy: Policy, timeout_s: float, end_token_id: int | None = None) -> None:
        self.policy = policy
        self.timeout_s = timeout_s
        self.end_token_ids = () if end_token_id is None else (end_token_id,)

    def _failed(self, reason: str) -> Generation:
        return Generation(FAILURE_MARK + reason, self.end_token_ids, (0.0,) * len(self.end_token_ids))

    def generate(self, prompts: Sequence[Prompt], *, seed: int | None = None) -> list[Generation]:
        try:
            generations = self._call(prompts, seed)
        except _Abandoned:
            return [self._failed(f"timeout: no reply within {self.timeout_s:g} s")] * len(prompts)
        except Exception as error:  # noqa: BLE001 (an agent may raise anything; the run must go on)
            if len(prompts) == 1:
                return [self._failed(f"exception: {type(error).__name__}: {error}")]
            return [self.generate([p], seed=seed)[0] for p in prompts]
        if len(generations) != len(prompts):
            reason = f"the agent returned {len(generations)} replies for {len(prompts)} prompts"
            return [self._failed(reason)] * len(prompts)
        return [g if g.text.strip() else self._failed("empty output") for g in generations]

    def _call(self, prompts: Sequence[Prompt], seed: int | None) -> list[Generation]:
        """``policy.generate`` on a daemon thread, abandoned after ``timeout_s`` (Python cannot stop it)."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["result"] = self.policy.generate(prompts, seed=seed)
            except BaseException as error:  # noqa: BLE001 (re-raised in the caller's thread)
                box["error"] = error

        worker = threading.Thread(target=target, daemon=True, name="bench-agent")
        worker.start()
        worker.join(self.timeout_s)
        if worker.is_alive():
            raise _Abandoned
        if "error" in box:
            raise box["error"]
        return list(box["result"])


class BenchEnv(gym.Wrapper):
    """An environment as the benchmark runs it (see the module docstring); ``on_episode_end`` is called once per
    episode, when the collector closes the environment."""

    def __init__(self, env: gym.Env, on_reset: ResetHook | None = None,
                 on_episode_end: Callable[[], None] | None = None) -> None:
        super().__init__(env)
        self.on_reset = on_reset
        self.on_episode_end = on_episode_end
        self._turn = 0
        self._running = False

    def reset(self, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._turn, self._running = 0, True
        if self.on_reset is not None:
            self.on_reset(obs, info, self.env.unwrapped)
        return obs, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self._turn += 1
        reason = failure_reason(action) if isinstance(action, str) else None
        if reason is not None:
            return f"[the agent failed: {reason}]", 0.0, False, True, {"turn": self._turn, "agent_failure": reason}
        try:
            return self.env.step(action)
        except Exception as error:  # noqa: BLE001 (an environment bug ends this episode, not the run)
            message = f"the environment raised {type(error).__name__}: {error}"
            return f"[{message}]", 0.0, False, True, {"turn": self._turn, "error": message}  # truncated, as an outage

    def close(self) -> None:
        if self._running and self.on_episode_end is not None:
            self.on_episode_end()
        self._running = False
        super().close()
