"""``RemoteEnv``: a ``gymnasium.Env`` whose episodes run on a clinical-gym environment server (``clinical-gym
serve``), over one OpenEnv WebSocket session per environment object.

    env = gym.make("ClinicalInquiry-v1", remote="http://127.0.0.1:8000")   # or RemoteEnv("http://...")
    obs, info = env.reset(seed=3, options={"case_id": "cir-nstemi-01"})
    obs, reward, terminated, truncated, info = env.step("Where is the pain?")

Same seed and options, same episode as a local ``gym.make`` with the server's ``env_kwargs``: observations,
rewards, termination and info (as JSON types) are the server environment's. ``messages`` mirrors the server's
message log, ``cases`` lists the server's case (or task) ids, ``case`` is the current one (an object with ``id``).
Errors: a refused request raises ``ValueError`` (unknown case id, bad options), a step after the episode ended
raises ``EpisodeOverError`` (as locally), and a lost or reclaimed session raises ``RemoteEnvError``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from types import SimpleNamespace
from typing import Any

import gymnasium as gym

from clinical_gym.env import EpisodeOverError
from clinical_gym.server.protocol import CLOSE_CAPACITY, CLOSE_IDLE, EXECUTION_ERROR, jsonable
from clinical_gym.spaces import UnicodeText


class RemoteEnvError(RuntimeError):
    """The server cannot be reached, refused the session (capacity) or closed it (idle timeout, shutdown)."""


def server_info(url: str, timeout: float = 10.0) -> dict[str, Any]:
    """``GET /info`` of the server at ``url`` (environment id, settings, case ids, session counts)."""
    base = http_url(url)
    try:
        with urllib.request.urlopen(f"{base}/info", timeout=timeout) as response:  # noqa: S310 - user's server URL
            return json.loads(response.read())
    except (urllib.error.URLError, OSError, json.JSONDecodeError) as e:
        raise RemoteEnvError(f"no clinical-gym server answers at {base}: {e}") from None


def http_url(url: str) -> str:
    url = url.rstrip("/")
    if url.startswith(("ws://", "wss://")):
        url = "http" + url[2:]
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"a server URL starts with http://, https://, ws:// or wss://, got {url!r}")
    return url


class RemoteEnv(gym.Env[str, str]):
    """One environment on a clinical-gym server (see the module docstring). ``env_id``, when given, must be the
    id the server serves. ``timeout``: seconds to wait for each reply."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, url: str, env_id: str | None = None, *, timeout: float = 120.0,
                 connect_timeout: float = 10.0, render_mode: str | None = None) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.url = http_url(url)
        self.server = server_info(self.url, connect_timeout)
        if env_id is not None and env_id != self.server["env_id"]:
            raise ValueError(f"the server at {self.url} serves {self.server['env_id']}, not {env_id}")
        self.env_id = self.server["env_id"]
        self.render_mode = render_mode
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.observation_space = UnicodeText(self.server["max_observation_chars"])
        self.action_space = UnicodeText(self.server["max_action_chars"])
        self.cases = [SimpleNamespace(id=case_id) for case_id in self.server["case_ids"]]
        self.case: SimpleNamespace | None = None
        self.messages: list[dict[str, Any]] = []
        self.episode_id: str | None = None
        self._socket: Any = None

    # -- gymnasium API ------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        data: dict[str, Any] = {"seed": seed}
        if options:
            data["options"] = jsonable(options)
        payload = self._request("reset", data)
        observation = payload["observation"]
        self.messages = list(observation["messages"])
        self.case = SimpleNamespace(id=observation.get("case_id"))
        self.episode_id = observation.get("episode_id")
        return observation["text"], observation["info"]

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        payload = self._request("step", {"text": jsonable(action)})
        observation = payload["observation"]
        self.messages += observation["messages"]
        if self.render_mode == "human":
            print(f"[doctor] {action}\n[env] {observation['text']}")
        return (observation["text"], float(payload["reward"]), observation["terminated"], observation["truncated"],
                observation["info"])

    def state(self) -> dict[str, Any]:
        """The server's state of this session: episode id, step count, case id, done flag and message log."""
        return self._send({"type": "state"})["data"]

    def render(self) -> str | None:
        text = "\n".join(f"[{m['role']}] {m['content']}" for m in self.messages if m["role"] != "system")
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """End the session (the server releases its environment); a later reset opens a new one."""
        if self._socket is not None:
            try:
                self._socket.send(json.dumps({"type": "close"}))
                self._socket.close()
            except Exception:  # noqa: BLE001 - closing a connection the server already dropped
                pass
            self._socket = None

    # -- transport ---------------------------------------------------------------------------------------
    def _connect(self) -> Any:
        from websockets.sync.client import connect

        ws_url = "ws" + self.url[4:] + "/ws"
        options = {"open_timeout": self.connect_timeout, "max_size": None, "compression": None}
        try:
            try:  # websockets >= 17 asks for legacy=True to return the connection itself, as older versions do
                self._socket = connect(ws_url, legacy=True, **options)
            except TypeError:
                self._socket = connect(ws_url, **options)
        except (OSError, TimeoutError) as e:
            raise RemoteEnvError(f"cannot open a session at {ws_url}: {e}") from None
        return self._socket

    def _request(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        reply = self._send({"type": kind, "data": data})
        return reply["data"]

    def _send(self, message: dict[str, Any]) -> dict[str, Any]:
        from websockets.exceptions import ConnectionClosed

        socket = self._socket or self._connect()
        try:
            socket.send(json.dumps(message, ensure_ascii=False))
            reply = json.loads(socket.recv(timeout=self.timeout))
        except ConnectionClosed as e:
            self._socket = None
            raise RemoteEnvError(_closed_reason(e, self.url)) from None
        except TimeoutError:
            self.close()
            raise RemoteEnvError(f"the server at {self.url} sent no reply within {self.timeout:g} s") from None
        if reply.get("type") == "error":
            self._raise(reply["data"])
        return reply

    def _raise(self, error: dict[str, Any]) -> None:
        message, code = error.get("message", "unknown error"), error.get("code")
        if code == EXECUTION_ERROR and "episode has ended" in message:
            raise EpisodeOverError(message)
        if code == EXECUTION_ERROR or code == "VALIDATION_ERROR":
            raise ValueError(message)
        self.close()
        raise RemoteEnvError(f"{message} ({code})")


def _closed_reason(error: Any, url: str) -> str:
    frame = getattr(error, "rcvd", None)
    code, reason = (frame.code, frame.reason) if frame is not None else (None, "")
    if code == CLOSE_IDLE:
        return f"the server at {url} reclaimed this session: {reason}"
    if code == CLOSE_CAPACITY:
        return f"the server at {url} is at capacity"
    return f"the connection to {url} closed ({code or 'no close frame'}{': ' + reason if reason else ''})"


def local_or_remote(env_id: str, env_kwargs: dict[str, Any] | None = None, remote: str | None = None) -> gym.Env:
    """An environment for the adapters (verl, verifiers): ``gym.make(env_id, **env_kwargs)``, or with ``remote`` a
    session on the clinical-gym server there (whose own env kwargs apply)."""
    if remote:
        return RemoteEnv(remote, env_id)
    import clinical_gym  # noqa: F401  (registers the ids)

    return gym.make(env_id, **dict(env_kwargs or {}))
