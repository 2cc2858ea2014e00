"""``clinical-gym serve --env ENV``: one registered environment as an OpenEnv-compatible server (docs/server.md)."""

from __future__ import annotations

import argparse
import sys

from clinical_gym.cli.arguments import json_object
from clinical_gym.cli.errors import CLIError, require


def cmd_serve(args: argparse.Namespace) -> int:
    for module in ("starlette", "uvicorn", "websockets"):
        require(module, "clinical-gym serve")
    from clinical_gym.server.app import DEFAULT_SESSION_TIMEOUT, ServerSettings, serve

    if not 0 < args.port < 65536:
        raise CLIError(f"--port must be in 1-65535, got {args.port}")
    try:
        settings = ServerSettings(args.env, args.env_kwargs, args.max_sessions,
                                  args.session_timeout or DEFAULT_SESSION_TIMEOUT)
        settings.make_env().close()  # bad env kwargs fail here, in one line
    except (ValueError, TypeError, OSError) as e:
        raise CLIError(str(e)) from None
    print(f"serving {settings.env_id} at http://{args.host}:{args.port} (WebSocket sessions at /ws, at most "
          f"{settings.max_sessions}, idle timeout {settings.session_timeout:g} s); Ctrl-C stops", file=sys.stderr,
          flush=True)
    try:
        serve(settings, args.host, args.port, log_level=args.log_level)
    except OSError as e:
        raise CLIError(f"cannot listen on {args.host}:{args.port}: {e}") from None
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="serve an environment over OpenEnv's protocol (HTTP + WebSocket)",
                           description="Serve one registered environment to remote clients: "
                                       "gym.make(ENV, remote=URL), OpenEnv clients, TRL, verl or verifiers.")
    serve.add_argument("--env", required=True, metavar="ENV", help="registered environment id, e.g. ClinicalInquiry-v1")
    serve.add_argument("--env-kwargs", type=json_object, default={}, metavar="JSON",
                       help='keyword arguments for gym.make, as a JSON object, e.g. \'{"turn_budget": 4}\'')
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for "
                                                           "every interface)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--max-sessions", type=int, default=64, metavar="N",
                       help="most concurrent sessions, one environment each (default 64)")
    serve.add_argument("--session-timeout", type=float, default=None, metavar="SECONDS",
                       help="close a session idle this long and release its environment (default 600)")
    serve.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"),
                       help="uvicorn's log level (default warning)")
    serve.set_defaults(func=cmd_serve)
