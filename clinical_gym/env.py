"""The base class of every clinical-gym environment: text in, text out, conversation kept in ``messages``."""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym

from clinical_gym.cases import Case, load_cases
from clinical_gym.spaces import UnicodeText

MAX_OBSERVATION_CHARS = 100_000
MAX_ACTION_CHARS = 10_000


class EpisodeOverError(RuntimeError):
    """``step()`` was called on an episode that has ended; call ``reset()`` first."""


def resolve_cases(cases: str | Sequence[Case] | None, split: str | None = None, default: str = "library") -> list[Case]:
    """Cases from a set name, a file path, or a list of ``Case`` objects (an empty result is an error)."""
    if cases is None:
        cases = default
    if isinstance(cases, (str,)) or hasattr(cases, "__fspath__"):
        found = load_cases(cases, split=split)
    else:
        found = list(cases)
        bad = [type(c).__name__ for c in found if not isinstance(c, Case)]
        if bad:
            raise TypeError(f"cases must be Case objects, got {bad[0]}")
    if not found:
        raise ValueError(f"no cases in {cases!r}" + (f" for split {split!r}" if split and split != "all" else ""))
    return found


def id_hint(ids: Sequence[str], what: str) -> str:
    """'this environment has N cases, e.g. A, B, C': the start of an unknown-id message."""
    shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
    return f"this environment has {len(ids)} {what}{'s' if len(ids) != 1 else ''}, e.g. {shown}"


class ClinicalEnv(gym.Env[str, str]):
    """Shared mechanics: text spaces, case selection, the message log, and the finished-episode guard.

    Subclasses implement ``_begin(case) -> (observation, info)`` and ``_act(action) -> (observation, reward,
    terminated, truncated, info)``. ``action`` reaching ``_act`` is always a ``str`` no longer than
    ``max_action_chars``; other input becomes an observation saying what was wrong (see ``_reject``).
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __new__(cls, *args: Any, remote: str | None = None, **kwargs: Any) -> Any:
        """``gym.make(ENV_ID, remote="http://HOST:PORT")`` returns a ``clinical_gym.server.RemoteEnv`` for the
        server of that id (``clinical-gym serve``); the environment's arguments are the server's."""
        if remote is None:
            return super().__new__(cls)
        if args or set(kwargs) - {"render_mode"}:
            raise TypeError(f"with remote=, the environment's arguments are set where the server starts "
                            f"(clinical-gym serve --env-kwargs); got {sorted(kwargs) or list(args)}")
        from clinical_gym.registration import ENVIRONMENTS
        from clinical_gym.server.client import RemoteEnv

        entry = f"{cls.__module__}:{cls.__qualname__}"
        env_id = next((e.id for e in ENVIRONMENTS if e.entry_point == entry), None)
        return RemoteEnv(remote, env_id, render_mode=kwargs.get("render_mode"))

    def __init__(self, cases: str | Sequence[Case] | None = None, split: str | None = None, *,
                 render_mode: str | None = None, max_action_chars: int = MAX_ACTION_CHARS,
                 max_observation_chars: int = MAX_OBSERVATION_CHARS) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        self.cases = resolve_cases(cases, split)
        self._by_id = {c.id: c for c in self.cases}
        self.max_action_chars = max_action_chars
        self.observation_space = UnicodeText(max_observation_chars)
        self.action_space = UnicodeText(max_action_chars)
        self.messages: list[dict[str, str]] = []
        self.case: Case | None = None
        self._done = True

    # -- gymnasium API ------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.case = self._choose_case(options or {})
        self._done = False
        obs, info = self._begin(self.case)
        self.messages = [{"role": "system", "content": info["system_prompt"]}, {"role": "user", "content": obs}]
        return self._clip(obs), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise EpisodeOverError("this episode has ended; call reset() before step()")
        problem = self._action_problem(action)
        if problem:
            obs, reward, terminated, truncated, info = self._reject(problem)
            text = action if isinstance(action, str) else repr(action)
        else:
            obs, reward, terminated, truncated, info = self._act(action)
            text = action
        self._done = terminated or truncated
        obs = self._clip(self._after_step(text, obs, reward, self._done, info))
        self.messages.append({"role": "assistant", "content": text[: self.max_action_chars]})
        self.messages.append({"role": "user", "content": obs})
        if self.render_mode == "human":
            print(f"[doctor] {text}\n[env] {obs}")
        return obs, float(reward), terminated, truncated, info

    def render(self) -> str | None:
        lines = [f"[{m['role']}] {m['content']}" for m in self.messages if m["role"] != "system"]
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # -- for subclasses -----------------------------------------------------------------------------------
    def _begin(self, case: Case) -> tuple[str, dict[str, Any]]:
        raise NotImplementedError

    def _act(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        raise NotImplementedError

    def _reject(self, problem: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Answer an action that is not usable text (wrong type, empty, too long); subclasses add penalties."""
        raise NotImplementedError

    def _after_step(self, action: str, obs: str, reward: float, done: bool, info: dict[str, Any]) -> str:
        """Last look at a step's observation before it is logged and returned (e.g. experience injection)."""
        return obs

    # -- helpers ------------------------------------------------------------------------------------------
    def _action_problem(self, action: object) -> str:
        if not isinstance(action, str):
            return f"your reply must be text, not {type(action).__name__}"
        if not action or action.isspace():  # (not action.strip(): no copy of the reply)
            return "your reply is empty"
        if len(action) > self.max_action_chars:
            return f"your reply is too long ({len(action)} characters; the limit is {self.max_action_chars})"
        return ""

    def _choose_case(self, options: dict[str, Any]) -> Case:
        unknown = set(options) - {"case_id", "case"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; use 'case_id' or 'case'")
        if "case" in options:
            case = options["case"]
            if isinstance(case, dict):
                case = Case.model_validate(case)
            if not isinstance(case, Case):
                raise TypeError(f"options['case'] must be a Case or a dict, got {type(case).__name__}")
            return case
        if "case_id" in options:
            try:
                return self._by_id[options["case_id"]]
            except KeyError:
                raise ValueError(f"unknown case_id {options['case_id']!r}; {id_hint(list(self._by_id), 'case')} "
                                 "('clinical-gym cases list --set SET' lists a set's ids)") from None
        return self.cases[int(self.np_random.integers(len(self.cases)))]

    def _clip(self, obs: str) -> str:
        limit = self.observation_space.max_length
        return obs if len(obs) <= limit else obs[: limit - 15] + " [truncated]"
