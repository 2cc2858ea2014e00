"""The ``clinical-gym`` command line. Each module of this package adds its subcommands with ``add_commands``.

Errors print one line (``clinical-gym: error: ...``) and exit with status 2; a missing optional package names the
extra that installs it. Output piped into a reader that stops early (``clinical-gym cases list | head``) ends quietly
with status 141, as a process stopped by SIGPIPE does.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from clinical_gym import __version__
from clinical_gym.cli.errors import CLIError, missing_extra

# Modules (in clinical_gym.cli) that contribute subcommands, in --help order.
COMMAND_MODULES = ("play", "cases", "kb", "tools", "tasks", "drugs", "data", "train", "bench", "recipes", "plot",
                   "serve")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        raise CLIError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="clinical-gym", description="Clinical environments for LLM agents.")
    parser.add_argument("--version", action="version", version=f"clinical-gym {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(f"clinical_gym.cli.{name}").add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            raise CLIError("choose a command: " + ", ".join(parser._subparsers._group_actions[0].choices))
        return args.func(args)
    except CLIError as e:
        print(f"clinical-gym: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        error = missing_extra(e, f"clinical-gym {getattr(args, 'command', '')}".strip())
        if error is None:
            raise
        print(f"clinical-gym: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return _reader_went_away()
    except KeyboardInterrupt:
        return 130


SIGPIPE_STATUS = 141


def _reader_went_away() -> int:
    """The reader of our output closed the pipe: send what is left of stdout to /dev/null (so that flushing it at
    exit raises nothing) and stop with the SIGPIPE status."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return SIGPIPE_STATUS
