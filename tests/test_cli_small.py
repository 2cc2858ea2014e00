"""The command line's small promises (issue 17): ``--version``; output piped into a reader that stops early ends
quietly; a missing optional package names the extra that installs it; an unknown case id points to the ids."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import clinical_gym
import clinical_gym.cli as cli
from clinical_gym.cases import load_cases
from clinical_gym.cli.errors import EXTRAS, missing_extra


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"clinical-gym {clinical_gym.__version__}\n"


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    """More output than a pipe holds (64 KiB), and a reader that takes one line: no BrokenPipeError traceback."""
    case = load_cases("library")[0]
    rows = [case.model_copy(update={"id": f"copy-{i:05d}"}).model_dump_json() for i in range(1500)]
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(rows) + "\n")
    process = subprocess.Popen([sys.executable, "-m", "clinical_gym.cli", "cases", "list", "--set", str(big)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout.readline().startswith(b"copy-00000")
    process.stdout.close()
    error = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141 and error == "", error


def test_a_missing_optional_package_names_its_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails, as on a core-only install
    assert cli.main(["bench", "--env", "Triage-v1", "--agent", "random", "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error == ("clinical-gym: error: clinical-gym bench needs matplotlib, which is not installed: "
                     "pip install 'clinical-gym[bench]'\n")
    assert not (tmp_path / "results.jsonl").exists()  # checked before any episode
    assert "clinical-gym[train]" in str(missing_extra(ModuleNotFoundError("No module named 'torch'", name="torch")))
    assert missing_extra(ModuleNotFoundError("x", name="somewhere_else")) is None
    defined = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS.values()) <= set(defined)  # every extra named is one pyproject.toml defines


def test_an_unknown_case_id_points_to_the_ids(capsys):
    assert cli.main(["play", "ClinicalInquiry-v1", "--case", "no-such-case"]) == 2
    error = capsys.readouterr().err
    assert "unknown case_id 'no-such-case'; this environment has" in error and "clinical-gym cases list" in error
