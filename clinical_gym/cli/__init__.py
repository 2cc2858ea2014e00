"""The ``clinical-gym`` command line. Each module of this package adds its subcommands with ``add_commands``.

Errors print one line (``clinical-gym: error: ...``) and exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from clinical_gym.cli.errors import CLIError

# Modules (in clinical_gym.cli) that contribute subcommands, in --help order.
COMMAND_MODULES = ("play", "cases", "kb", "tools", "drugs", "data", "train", "bench", "plot")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        raise CLIError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="clinical-gym", description="Clinical environments for LLM agents.")
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
    except KeyboardInterrupt:
        return 130
