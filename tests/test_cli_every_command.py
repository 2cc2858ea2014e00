"""Every ``clinical-gym`` subcommand, found by walking the parser (so new commands are covered as they land), answers
bad arguments with one clear line on stderr and exit status 2, before doing any work (issue 12, section 2)."""

from __future__ import annotations

import argparse

import pytest

import clinical_gym.cli


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The argv prefix of every command and subcommand (``bench`` and ``bench show`` are both commands)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    children = [c for name, child in (subs[0].choices.items() if subs else ()) for c in commands(child, (*path, name))]
    return ([path] if path else []) + children


COMMANDS = commands(clinical_gym.cli.build_parser())


def test_the_walk_finds_the_known_commands():
    names = {" ".join(c) for c in COMMANDS}
    assert {"envs", "play", "cases list", "kb build", "kb search", "tools list", "train grpo", "bench"} <= names


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_an_unknown_option_is_one_line_and_exit_2(command, capsys):
    assert clinical_gym.cli.main([*command, "--no-such-option-xyz"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("clinical-gym: error:")
    # argparse names a missing required argument before an unknown one
    assert "--no-such-option-xyz" in err[0] or "required" in err[0] or "choose" in err[0], err[0]
    assert captured.out == ""
