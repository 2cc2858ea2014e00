"""The environment server: a Starlette app that speaks OpenEnv's protocol (``clinical_gym.server.protocol``) for
one registered environment, served by uvicorn.

Endpoints (OpenEnv's, same paths and bodies): ``/ws`` (WebSocket, one session per connection), ``GET /health``,
``GET /metadata``, ``GET /schema``, ``POST /reset`` and ``GET /state`` (stateless, as in OpenEnv: a fresh
environment per request), ``POST /step`` (refused with 409: a step needs a session, which only ``/ws`` keeps).
Added: ``GET /info`` (environment id, settings, case ids, session counts).

Sessions: at most ``max_sessions`` at once (a connection beyond that gets ``CAPACITY_REACHED`` and is closed);
one idle for ``session_timeout`` seconds is closed with code 4408 and its environment released; a client that
disconnects loses its own session only. Environment calls run in worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from clinical_gym.server.protocol import (
    CLOSE_CAPACITY,
    CLOSE_IDLE,
    CLOSE_NORMAL,
    EXECUTION_ERROR,
    FACTORY_ERROR,
    SESSION_ERROR,
    ProtocolError,
    check_action,
    check_reset,
    error_message,
    parse_message,
)
from clinical_gym.server.sessions import Session, SessionPool

DEFAULT_MAX_SESSIONS = 64
DEFAULT_SESSION_TIMEOUT = 600.0


@dataclass
class ServerSettings:
    """What ``clinical-gym serve`` starts: the environment (``env_id``, ``env_kwargs`` for ``gym.make``), the
    session limit and the idle timeout in seconds."""

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    max_sessions: int = DEFAULT_MAX_SESSIONS
    session_timeout: float = DEFAULT_SESSION_TIMEOUT

    def __post_init__(self) -> None:
        import clinical_gym

        if self.env_id not in clinical_gym.env_ids():
            raise ValueError(f"unknown environment {self.env_id!r}; registered ids: {', '.join(clinical_gym.env_ids())}")
        if self.max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {self.max_sessions}")
        if not self.session_timeout > 0:
            raise ValueError(f"session_timeout must be > 0 seconds, got {self.session_timeout}")

    def make_env(self) -> gym.Env:
        """The session's environment. Without Gymnasium's passive checker: it only warns, and after a reset the
        environment refused (an unknown case id) its next step fails inside the checker (Gymnasium 1.4)."""
        return gym.make(self.env_id, **{"disable_env_checker": True, **self.env_kwargs})


def create_app(settings: ServerSettings) -> Any:
    """The Starlette application serving ``settings.env_id`` (its environment is made once here, so bad
    ``env_kwargs`` fail before the server listens)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    import clinical_gym

    probe = settings.make_env()
    unwrapped = probe.unwrapped
    case_ids = [item.id for item in getattr(unwrapped, "cases", None) or getattr(unwrapped, "tasks", [])]
    limits = {"max_observation_chars": int(probe.observation_space.max_length),
              "max_action_chars": int(probe.action_space.max_length)}
    description = next(e.description for e in clinical_gym.ENVIRONMENTS if e.id == settings.env_id)
    probe.close()
    pool = SessionPool(settings.make_env, settings.env_id, settings.max_sessions)
    started = time.time()

    async def health(request: Any) -> JSONResponse:
        return JSONResponse({"status": "healthy"})

    async def metadata(request: Any) -> JSONResponse:  # OpenEnv's EnvironmentMetadata
        return JSONResponse({"name": settings.env_id, "description": description, "readme_content": None,
                             "version": clinical_gym.__version__, "author": "clinical-gym",
                             "documentation_url": None})

    async def info(request: Any) -> JSONResponse:
        return JSONResponse({"env_id": settings.env_id, "env_kwargs": settings.env_kwargs,
                             "max_sessions": pool.max_sessions, "active_sessions": pool.active,
                             "reclaimed_sessions": pool.reclaimed, "session_timeout": settings.session_timeout,
                             "uptime_s": time.time() - started, "case_ids": case_ids, **limits,
                             "version": clinical_gym.__version__})

    async def schema(request: Any) -> JSONResponse:
        return JSONResponse(SCHEMAS)

    async def http_reset(request: Any) -> JSONResponse:
        try:
            body = await _json_body(request)
            check_reset(body)
            session = await run_in_threadpool(Session, settings.make_env(), settings.env_id)
            try:
                data = await run_in_threadpool(session.reset, body)
            finally:
                session.close()
        except ProtocolError as e:
            return JSONResponse({"detail": str(e), "code": e.code}, status_code=_status(e))
        return JSONResponse({k: data[k] for k in ("observation", "reward", "done")})

    async def http_step(request: Any) -> JSONResponse:
        try:
            body = await _json_body(request)
            action = body.get("action")
            if not isinstance(action, dict):
                raise ProtocolError("a step request needs 'action', an object: {\"action\": {\"text\": ...}}")
            check_action(action)
        except ProtocolError as e:
            return JSONResponse({"detail": str(e), "code": e.code}, status_code=_status(e))
        return JSONResponse({"detail": "HTTP /step has no episode to step: as in OpenEnv, the HTTP endpoints keep no "
                                       "session; open a WebSocket session at /ws (clinical_gym.server.RemoteEnv does)",
                             "code": SESSION_ERROR}, status_code=409)

    async def http_state(request: Any) -> JSONResponse:
        return JSONResponse({"episode_id": None, "step_count": 0, "env_id": settings.env_id, "case_id": None,
                             "done": True, "messages": []})

    async def websocket_session(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            pool.reserve()
        except ProtocolError as e:
            await websocket.send_text(json.dumps(error_message(str(e), e.code, active_sessions=pool.active,
                                                               max_sessions=pool.max_sessions)))
            await websocket.close(CLOSE_CAPACITY, "server at capacity")
            return
        try:
            session = await run_in_threadpool(pool.open)
        except Exception as e:  # noqa: BLE001 - the client learns why its environment could not be made
            await websocket.send_text(json.dumps(error_message(f"could not make {settings.env_id}: {e}",
                                                               FACTORY_ERROR)))
            await websocket.close(CLOSE_NORMAL)
            return
        idle = False
        try:
            while True:
                wait = settings.session_timeout - (time.monotonic() - session.last_active)
                try:
                    raw = await asyncio.wait_for(websocket.receive_text(), timeout=max(wait, 0.0))
                except asyncio.TimeoutError:
                    idle = True
                    break
                session.touch()
                try:
                    kind, data = parse_message(raw)
                    if kind == "close":
                        break
                    if kind == "state":
                        reply = {"type": "state", "data": session.state()}
                    else:
                        call = session.reset if kind == "reset" else session.step
                        reply = {"type": "observation", "data": await run_in_threadpool(call, data)}
                except ProtocolError as e:
                    reply = error_message(str(e), e.code)
                except Exception as e:  # noqa: BLE001 - an environment failure ends this request, not the server
                    reply = error_message(f"{type(e).__name__}: {e}", EXECUTION_ERROR)
                session.touch()
                await websocket.send_text(json.dumps(reply, ensure_ascii=False))
        except WebSocketDisconnect:
            pass
        finally:
            await run_in_threadpool(pool.close, session, idle)
        with contextlib.suppress(Exception):
            if idle:
                await websocket.close(CLOSE_IDLE, f"session idle for more than {settings.session_timeout:g} s; "
                                                  "reconnect and reset")
            else:
                await websocket.close(CLOSE_NORMAL)

    routes = [Route("/health", health), Route("/metadata", metadata), Route("/info", info), Route("/schema", schema),
              Route("/reset", http_reset, methods=["POST"]), Route("/step", http_step, methods=["POST"]),
              Route("/state", http_state), WebSocketRoute("/ws", websocket_session)]
    app = Starlette(routes=routes)
    app.state.pool = pool
    app.state.settings = settings
    return app


async def _json_body(request: Any) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ProtocolError(f"the request body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise ProtocolError(f"the request body must be a JSON object, got {type(body).__name__}")
    return body


def _status(error: ProtocolError) -> int:
    """HTTP status of a refused request: 422 for a malformed body (as OpenEnv), 400 for one the environment
    refused (unknown case id, bad options)."""
    return 400 if error.code == EXECUTION_ERROR else 422


_TEXT = {"type": "string"}
SCHEMAS = {
    "action": {"title": "ClinicalAction", "type": "object", "additionalProperties": False, "required": ["text"],
               "properties": {"text": {**_TEXT, "description": "the agent's full reply for this turn"},
                              "metadata": {"type": "object"}}},
    "observation": {"title": "ClinicalObservation", "type": "object",
                    "properties": {"text": {**_TEXT, "description": "what the environment said this step"},
                                   "info": {"type": "object", "description": "the environment's info dict"},
                                   "terminated": {"type": "boolean"}, "truncated": {"type": "boolean"},
                                   "messages": {"type": "array", "description": "message-log entries added"},
                                   "case_id": {"type": ["string", "null"], "description": "after reset only"},
                                   "episode_id": {"type": "string", "description": "after reset only"}}},
    "state": {"title": "ClinicalState", "type": "object",
              "properties": {"episode_id": {"type": ["string", "null"]}, "step_count": {"type": "integer"},
                             "env_id": _TEXT, "case_id": {"type": ["string", "null"]}, "done": {"type": "boolean"},
                             "messages": {"type": "array"}}},
}


def serve(settings: ServerSettings, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
    """Run the server until interrupted."""
    import uvicorn

    uvicorn.run(create_app(settings), host=host, port=port, log_level=log_level, ws="websockets-sansio",
                ws_max_size=64 * 1024 * 1024)


@contextlib.contextmanager
def running_server(settings: ServerSettings, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """A server in a background thread of this process (tests, examples, benchmarks): yields its base URL
    (``port=0`` picks a free port) and stops it on exit."""
    import uvicorn

    config = uvicorn.Config(create_app(settings), host=host, port=port, log_level="error", ws="websockets-sansio",
                            ws_max_size=64 * 1024 * 1024, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"clinical-gym-server-{settings.env_id}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the server for {settings.env_id} did not start")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
