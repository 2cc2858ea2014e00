"""benchmarks/fidelity.py measures what it claims: recorded results, affirmed and denied symptoms, symptoms and events
asked in other words, open questions answered with the asked-about fact, contradictions and leaks, with one GOAL line
per goal that says PASS or SHORT (and says SHORT when the simulator is broken)."""

from __future__ import annotations

import json
from pathlib import Path

from clinical_gym.benchmarks.fidelity import PUBLIC_FILES, goal_lines, main, measure
from clinical_gym.cases import library, read_case_file
from clinical_gym.domains.inquiry.patient import NO_EVENT, PatientReply, RuleBasedPatient

FIXTURES = Path(__file__).parent / "fixtures" / "case_formats"


def few_cases_of_each_file(n: int = 2):
    return [c for name in PUBLIC_FILES for c in read_case_file(FIXTURES / name)[0][:n]]


def goal(lines: list[str], name: str) -> str:
    return next(line for line in lines if line.startswith(f"GOAL {name}:"))


def test_every_public_format_file_is_there_with_30_rows_or_more():
    assert "diaggym_records.jsonl" in PUBLIC_FILES and len(PUBLIC_FILES) == 7
    for name in PUBLIC_FILES:
        cases, problems = read_case_file(FIXTURES / name)
        assert len(cases) >= 30 and not problems, (name, len(cases), problems[:2])


def test_the_simulators_meet_every_goal_on_a_sample_of_each_format():
    fid = measure(few_cases_of_each_file())
    assert fid.cases == 14 and fid.results.total > 10 and fid.affirmed.total > 10 and fid.denied.total > 500
    assert fid.paraphrased.total > 3 * fid.affirmed.total - 5 and fid.relevant.total > 30
    lines = goal_lines(fid)
    assert len(lines) == 8 and all(line.startswith("GOAL ") and line.endswith(" PASS") for line in lines), lines


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
    assert fid.contradictions and goal(goal_lines(fid), "contradictions").endswith("SHORT")


def test_a_patient_that_denies_events_in_other_words_is_caught(monkeypatch):
    """The epilepsy case records wetting and a bitten tongue; a patient that answers every event question it cannot
    match by tags with 'No, not that I know of.' contradicts the record in the paraphrase probes."""
    monkeypatch.setattr(RuleBasedPatient, "_answer_events", lambda self, q, answer: None)
    monkeypatch.setattr(RuleBasedPatient, "_retrieve", lambda self, q, question: PatientReply(NO_EVENT["deny"], "denied"))
    fid = measure([c for c in library() if c.id == "neu-generalised-epilepsy-01"])
    assert any("incontinence" in p for p in fid.paraphrase_contradictions), fid.paraphrase_contradictions
    assert goal(goal_lines(fid), "paraphrase contradictions").endswith("SHORT")


def test_a_patient_that_answers_off_topic_falls_short(monkeypatch):
    def last_fact(self, q, question):
        fact = self.case.history[-1]
        return PatientReply(fact.text, "answered", (fact.id,))

    monkeypatch.setattr(RuleBasedPatient, "_answer", last_fact)
    fid = measure(few_cases_of_each_file(1))
    assert fid.relevant.rate < 0.5 and goal(goal_lines(fid), "open questions answered with the asked-about fact").endswith("SHORT")


def test_the_script_prints_a_row_per_file_and_the_goal_lines(tmp_path, capsys, monkeypatch):
    rows = [json.loads(line) for line in (FIXTURES / "medqa_vignettes.jsonl").read_text().splitlines()[:3]]
    path = tmp_path / "three.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.setattr("sys.argv", ["fidelity.py", str(path)])
    main()
    out = capsys.readouterr().out
    assert "three.jsonl" in out and out.count("GOAL ") == 8 and "diagnosis leaks: 0 (goal <= 0) PASS" in out
