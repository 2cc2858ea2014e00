"""clinical-gym environments as a service: an OpenEnv-compatible server (``clinical-gym serve``) and
``RemoteEnv``, a ``gymnasium.Env`` client for it. Docs: docs/server.md.

Importing this package imports no web framework; ``starlette``, ``uvicorn`` and ``websockets`` (the ``server``
extra) load when a server starts or a client connects.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RemoteEnv", "RemoteEnvError", "ServerSettings", "create_app", "running_server", "serve", "server_info"]


def __getattr__(name: str) -> Any:
    if name in ("RemoteEnv", "RemoteEnvError", "server_info"):
        from clinical_gym.server import client

        return getattr(client, name)
    if name in ("ServerSettings", "create_app", "running_server", "serve"):
        from clinical_gym.server import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
