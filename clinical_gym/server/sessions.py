"""Server-side sessions: one environment per session, a bounded pool, and what a session answers to reset, step
and state (plain Python, run in worker threads; the web layer is ``clinical_gym.server.app``)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from clinical_gym.env import EpisodeOverError
from clinical_gym.server.protocol import (
    CAPACITY_REACHED,
    EXECUTION_ERROR,
    ProtocolError,
    jsonable,
    observation_payload,
)


class Session:
    """One client's environment and episode bookkeeping (``episode_id``, ``step_count``, last activity)."""

    def __init__(self, env: gym.Env, env_id: str) -> None:
        self.id = uuid.uuid4().hex
        self.env = env
        self.env_id = env_id
        self.episode_id: str | None = None
        self.step_count = 0
        self.done = True
        self.created = self.last_active = time.monotonic()

    def touch(self) -> None:
        self.last_active = time.monotonic()

    def reset(self, data: dict[str, Any]) -> dict[str, Any]:
        """``env.reset(seed=..., options=...)``; the observation data with the whole message log."""
        try:
            obs, info = self.env.reset(seed=data.get("seed"), options=data.get("options"))
        except (ValueError, TypeError, KeyError) as e:
            raise ProtocolError(f"reset failed: {e}", EXECUTION_ERROR) from None
        self.episode_id = data.get("episode_id") or uuid.uuid4().hex
        self.step_count, self.done = 0, False
        payload = observation_payload(obs, None, False, False, info, self._log())
        payload["observation"]["case_id"] = self.case_id
        payload["observation"]["episode_id"] = self.episode_id
        return payload

    def step(self, data: dict[str, Any]) -> dict[str, Any]:
        """``env.step(text)``; the observation data with the log entries this step added."""
        before = len(self._log())
        try:
            obs, reward, terminated, truncated, info = self.env.step(data["text"])
        except (EpisodeOverError, gym.error.ResetNeeded) as e:
            raise ProtocolError(f"{e} (send a reset first)" if isinstance(e, gym.error.ResetNeeded) else str(e),
                                EXECUTION_ERROR) from None
        self.step_count += 1
        self.done = bool(terminated or truncated)
        return observation_payload(obs, reward, terminated, truncated, info, self._log()[before:])

    def state(self) -> dict[str, Any]:
        """OpenEnv's State (``episode_id``, ``step_count``) plus the environment id, case, done flag and log."""
        return {"episode_id": self.episode_id, "step_count": self.step_count, "env_id": self.env_id,
                "case_id": self.case_id, "done": self.done, "messages": jsonable(self._log())}

    @property
    def case_id(self) -> str | None:
        unwrapped = self.env.unwrapped
        item = getattr(unwrapped, "case", None) or getattr(unwrapped, "task", None)
        return getattr(item, "id", None) if self.episode_id is not None else None

    def close(self) -> None:
        self.env.close()

    def _log(self) -> list[dict[str, Any]]:
        return list(getattr(self.env.unwrapped, "messages", []))


class SessionPool:
    """At most ``max_sessions`` live sessions, each with a fresh environment from ``make_env``."""

    def __init__(self, make_env: Callable[[], gym.Env], env_id: str, max_sessions: int) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {max_sessions}")
        self.make_env = make_env
        self.env_id = env_id
        self.max_sessions = max_sessions
        self.sessions: dict[str, Session] = {}
        self.reclaimed = 0  # sessions closed for idleness
        self._lock = threading.Lock()
        self._reserved = 0

    def reserve(self) -> None:
        """Take a slot before the (slow) environment is made; ``ProtocolError`` when every slot is taken."""
        with self._lock:
            if len(self.sessions) + self._reserved >= self.max_sessions:
                raise ProtocolError(f"the server is at capacity ({self.max_sessions} sessions); retry later or "
                                    "start it with a larger --max-sessions", CAPACITY_REACHED)
            self._reserved += 1

    def open(self) -> Session:
        """A new session in a reserved slot (the slot is given back when making the environment fails)."""
        try:
            session = Session(self.make_env(), self.env_id)
        finally:
            with self._lock:
                self._reserved -= 1
        with self._lock:
            self.sessions[session.id] = session
        return session

    def close(self, session: Session, idle: bool = False) -> None:
        with self._lock:
            if self.sessions.pop(session.id, None) is None:
                return
            self.reclaimed += int(idle)
        session.close()

    @property
    def active(self) -> int:
        return len(self.sessions)
