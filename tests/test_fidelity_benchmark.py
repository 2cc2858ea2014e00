"""benchmarks/fidelity.py measures what it claims: recorded results, affirmed and denied symptoms, contradictions
and leaks, with one GOAL line per goal that says PASS or SHORT (and says SHORT when the simulator is broken)."""

from __future__ import annotations

import json
from pathlib import Path

from clinical_gym.benchmarks.fidelity import PUBLIC_FILES, goal_lines, main, measure
from clinical_gym.cases import read_case_file
from clinical_gym.domains.inquiry.patient import PatientReply, RuleBasedPatient

FIXTURES = Path(__file__).parent / "fixtures" / "case_formats"


def few_cases_of_each_file(n: int = 2):
    return [c for name in PUBLIC_FILES for c in read_case_file(FIXTURES / name)[0][:n]]


def test_every_public_format_file_is_there_with_30_rows_or_more():
    for name in PUBLIC_FILES:
        cases, problems = read_case_file(FIXTURES / name)
        assert len(cases) >= 30 and not problems, (name, len(cases), problems[:2])


def test_the_simulators_meet_every_goal_on_a_sample_of_each_format():
    fid = measure(few_cases_of_each_file())
    assert fid.cases == 12 and fid.results.total > 10 and fid.affirmed.total > 10 and fid.denied.total > 500
    lines = goal_lines(fid)
    assert len(lines) == 5 and all(line.startswith("GOAL ") and line.endswith(" PASS") for line in lines), lines


def test_a_patient_that_denies_everything_falls_short(monkeypatch):
    def deny_all(self, q, question):
        keys = tuple(sorted(q.explicit_symptoms))
        return PatientReply("No.", "denied", (), keys)

    monkeypatch.setattr(RuleBasedPatient, "_answer", deny_all)
    fid = measure(few_cases_of_each_file(1))
    assert fid.affirmed.rate == 0.0 and fid.denied.rate == 1.0 and fid.contradictions == []
    assert goal_lines(fid)[1].endswith("SHORT")


def test_a_patient_that_contradicts_itself_is_caught(monkeypatch):
    answer = RuleBasedPatient._answer

    def contradicting(self, q, question):
        reply = answer(self, q, question)
        return PatientReply(reply.text, reply.kind, reply.facts, tuple(q.explicit_symptoms))  # also denies what it affirms

    monkeypatch.setattr(RuleBasedPatient, "_answer", contradicting)
    fid = measure(few_cases_of_each_file(1))
    assert fid.contradictions and goal_lines(fid)[3].endswith("SHORT")


def test_the_script_prints_a_row_per_file_and_the_goal_lines(tmp_path, capsys, monkeypatch):
    rows = [json.loads(line) for line in (FIXTURES / "medqa_vignettes.jsonl").read_text().splitlines()[:3]]
    path = tmp_path / "three.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.setattr("sys.argv", ["fidelity.py", str(path)])
    main()
    out = capsys.readouterr().out
    assert "three.jsonl" in out and out.count("GOAL ") == 5 and "diagnosis leaks: 0 (goal <= 0) PASS" in out
