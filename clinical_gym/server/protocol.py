"""The wire format of the environment server: OpenEnv's protocol (``openenv-core`` 0.3,
``openenv.core.env_server.types``), with clinical-gym's observation, action and state fields.

WebSocket ``/ws`` (one connection = one session with its own environment). Client messages::

    {"type": "reset", "data": {"seed": 3, "options": {"case_id": "..."}, "episode_id": "..."}}
    {"type": "step",  "data": {"text": "the agent's reply"}}
    {"type": "state"}
    {"type": "close"}

Server messages: ``{"type": "observation", "data": {"observation": {...}, "reward": r, "done": d}}`` (after reset
and step), ``{"type": "state", "data": {...}}`` and ``{"type": "error", "data": {"message": ..., "code": ...}}``
with OpenEnv's error codes. ``observation`` holds ``text`` (what the environment said), ``info`` (the info dict,
JSON-safe), ``terminated``, ``truncated`` and ``messages`` (the entries the environment added to its message log
in this call). The state holds ``episode_id``, ``step_count``, ``env_id``, ``case_id``, ``done`` and the whole
``messages`` log.

Nothing here imports a web framework.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from typing import Any

# OpenEnv's WSErrorCode values
INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
FACTORY_ERROR = "FACTORY_ERROR"
SESSION_ERROR = "SESSION_ERROR"

# WebSocket close codes the server uses (4000-4999 are for applications)
CLOSE_NORMAL = 1000
CLOSE_IDLE = 4408  # the session was idle longer than the server's session timeout and was reclaimed
CLOSE_CAPACITY = 4429  # every session slot is taken
CLOSE_SHUTDOWN = 1001

ACTION_FIELDS = ("text", "metadata")
RESET_FIELDS = ("seed", "options", "episode_id")


class ProtocolError(ValueError):
    """A message the server cannot act on; ``code`` is the OpenEnv error code."""

    def __init__(self, message: str, code: str = VALIDATION_ERROR) -> None:
        super().__init__(message)
        self.code = code


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON types: pydantic models and dataclasses as dicts, tuples and sets as lists (sets
    sorted), numpy scalars and arrays as numbers and lists, enums as their values, non-finite floats as strings
    ("nan", "inf"), and anything else as its ``str``. Local and remote runs compare equal through this."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return jsonable(value.tolist())
    return str(value)


def observation_payload(text: str, reward: float | None, terminated: bool, truncated: bool,
                        info: Mapping[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``data`` of an ``observation`` message (OpenEnv's ``serialize_observation`` shape)."""
    return {"observation": {"text": text, "info": jsonable(info), "terminated": bool(terminated),
                            "truncated": bool(truncated), "messages": jsonable(messages)},
            "reward": None if reward is None else float(reward), "done": bool(terminated or truncated)}


def error_message(message: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "data": {"message": message, "code": code, **extra}}


def parse_message(raw: str | bytes) -> tuple[str, dict[str, Any]]:
    """``(type, data)`` of a client message; ``ProtocolError`` says what is wrong with a bad one."""
    try:
        message = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ProtocolError(f"Invalid JSON: {e}", INVALID_JSON) from None
    if not isinstance(message, dict):
        raise ProtocolError(f"a message must be a JSON object, got {type(message).__name__}")
    kind = message.get("type")
    if kind not in ("reset", "step", "state", "close"):
        raise ProtocolError(f"Unknown message type: {kind!r} (use reset, step, state or close)", UNKNOWN_TYPE)
    unknown = set(message) - {"type", "data"}
    if unknown:
        raise ProtocolError(f"unknown message field(s) {sorted(unknown)}; a message has 'type' and 'data'")
    data = message.get("data", {})
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ProtocolError(f"'data' must be a JSON object, got {type(data).__name__}")
    if kind == "step":
        check_action(data)
    elif kind == "reset":
        check_reset(data)
    return kind, data


def check_action(data: Mapping[str, Any]) -> None:
    """A step's data: ``text`` (required; any JSON value reaches the environment, which answers a non-text reply
    with an observation, as it does locally) and optional ``metadata``."""
    if "text" not in data:
        raise ProtocolError("a step needs 'text', the agent's reply: {\"type\": \"step\", \"data\": {\"text\": ...}}")
    unknown = set(data) - set(ACTION_FIELDS)
    if unknown:
        raise ProtocolError(f"unknown action field(s) {sorted(unknown)}; an action has {list(ACTION_FIELDS)}")


def check_reset(data: Mapping[str, Any]) -> None:
    """A reset's data: optional ``seed`` (integer >= 0, as OpenEnv's ResetRequest), ``options`` (an object) and
    ``episode_id`` (a string of at most 255 characters)."""
    unknown = set(data) - set(RESET_FIELDS)
    if unknown:
        raise ProtocolError(f"unknown reset field(s) {sorted(unknown)}; a reset takes {list(RESET_FIELDS)}")
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ProtocolError(f"seed must be an integer >= 0, got {seed!r}")
    options = data.get("options")
    if options is not None and not isinstance(options, dict):
        raise ProtocolError(f"options must be a JSON object, got {type(options).__name__}")
    episode = data.get("episode_id")
    if episode is not None and (not isinstance(episode, str) or len(episode) > 255):
        raise ProtocolError("episode_id must be a string of at most 255 characters")
