"""``clinical-gym cases``: list, show, validate (problems with line numbers, exit 1), export (jsonl/hf) and one-line
errors with exit 2. Runs the real ``clinical_gym.cli.main`` with the cases module among its command modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinical_gym import cli
from clinical_gym.cases import library, read_case_file

FIXTURES = Path(__file__).parent / "fixtures" / "case_formats"
MEDQA = FIXTURES / "medqa.jsonl"


@pytest.fixture
def run(monkeypatch, capsys):
    """Run the CLI in-process; returns (exit status, stdout, stderr)."""
    if "cases" not in cli.COMMAND_MODULES:
        monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, "cases"))

    def invoke(*args: str) -> tuple[int, str, str]:
        status = cli.main([str(a) for a in args])
        out = capsys.readouterr()
        return status, out.out, out.err

    return invoke


def test_list_prints_id_specialty_and_diagnosis(run):
    status, out, _ = run("cases", "list")
    assert status == 0
    lines = out.splitlines()
    assert len(lines) == len(library())
    first = library()[0]
    assert lines[0].split()[:2] == [first.id, first.specialty] and lines[0].endswith(first.diagnosis.name)


def test_list_and_show_a_file_in_a_public_format(run):
    status, out, err = run("cases", "list", "--set", MEDQA)
    assert status == 0 and [line.split()[0] for line in out.splitlines()] == ["medqa-1", "mcq-inferior-mi", "medqa-4"]
    assert err.startswith("clinical-gym: warning: skipped 3 bad case rows:") and len(err.strip().splitlines()) == 1
    status, out, _ = run("cases", "show", "mcq-inferior-mi", "--set", MEDQA)
    assert status == 0
    assert "Patient: male, 58 years old" in out and "Diagnosis: Inferior wall myocardial infarction (I21.9)" in out
    assert "Vitals: Temperature 37.0°C, heart rate 52/min" in out and "  ECG (ecg):" in out
    assert "Differential: Acute pericarditis, Aortic dissection" in out


def test_show_marks_volunteered_and_denied_facts_and_prints_json(run):
    case = library()[0]
    status, out, _ = run("cases", "show", case.id)
    assert status == 0 and out.startswith(case.id)
    volunteered = next(f for f in case.history if f.volunteered)
    denied = next(f for f in case.history if not f.present)
    assert f"  * [{volunteered.category}] {volunteered.text}" in out and f"  - [{denied.category}] {denied.text}" in out
    status, out, _ = run("cases", "show", case.id, "--json")
    assert status == 0 and type(case).model_validate_json(out) == case


def test_validate_prints_each_problem_with_its_line_and_exits_1(run):
    status, out, _ = run("cases", "validate", MEDQA)
    assert status == 1
    lines = out.splitlines()
    assert [line.split(":")[1] for line in lines[:3]] == ["3", "5", "6"]
    assert lines[-1] == f"{MEDQA}: 3 cases read, 3 problems"


def test_validate_a_clean_file_exits_0(run, tmp_path):
    path = tmp_path / "clean.jsonl"
    assert run("cases", "export", "--format", "jsonl", "--out", path, "--set", "library:skin")[0] == 0
    status, out, _ = run("cases", "validate", path)
    assert status == 0 and out.strip().endswith(", 0 problems")


def test_validate_with_an_explicit_format(run):
    status, out, _ = run("cases", "validate", MEDQA, "--format", "diaggym")
    assert status == 1 and out.count("profile: Field required") == 6


@pytest.mark.parametrize("fixture", ["osce.jsonl", "mtmeddialog.json", "diaggym.jsonl", "medqa.jsonl"])
def test_export_jsonl_round_trips(run, tmp_path, fixture):
    source = FIXTURES / fixture
    status, out, err = run("cases", "export", "--format", "jsonl", "--out", tmp_path / "out.jsonl", "--set", source)
    assert "clinical-gym: warning: skipped" in err
    expected = read_case_file(source)[0]
    assert status == 0 and out.strip() == f"wrote {len(expected)} cases to {tmp_path / 'out.jsonl'}"
    reloaded, problems = read_case_file(tmp_path / "out.jsonl")
    assert reloaded == expected and not problems


def test_export_hf_round_trips(run, tmp_path):
    status, _, _ = run("cases", "export", "--format", "hf", "--out", tmp_path / "ds", "--set", "library:endocrine")
    assert status == 0
    reloaded, problems = read_case_file(tmp_path / "ds")
    assert reloaded == [c for c in library() if c.specialty == "endocrine"] and not problems
    assert run("cases", "validate", tmp_path / "ds")[0] == 0


@pytest.mark.parametrize("args,message", [
    (("cases",), "choose a cases command"),
    (("cases", "frobnicate"), "invalid choice"),
    (("cases", "show", "no-such-case"), "no case 'no-such-case' in 'library'"),
    (("cases", "list", "--set", "/no/such/file.jsonl"), "no case set or file"),
    (("cases", "validate", "/no/such/file.jsonl"), "no such file: /no/such/file.jsonl"),
    (("cases", "validate", MEDQA, "--format", "csv"), "unknown case format 'csv'"),
    (("cases", "export", "--format", "parquet", "--out", "x"), "invalid choice: 'parquet'"),
    (("cases", "export", "--format", "jsonl"), "the following arguments are required: --out"),
])
def test_bad_arguments_are_one_line_errors_with_exit_2(run, args, message):
    status, out, err = run(*args)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("clinical-gym: error:") and message in lines[0]
