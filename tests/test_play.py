"""``clinical-gym play ENV`` for every environment family, driven through stdin: the family's actions, the commands
that cost no turn (help, prompt, catalogue, record, quit), the last-turn warning and the closing summary; and the
short tool-call form turned into JSON calls."""

from __future__ import annotations

import io
import json
import re

import pytest

import clinical_gym
import clinical_gym.cli as cli
from clinical_gym.play.tools import ShortFormError, read_value, short_form_call


def play(monkeypatch, capsys, *args: str, lines: list[str]) -> str:
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
    assert cli.main(["play", *args]) == 0
    return capsys.readouterr().out


def turns_shown(out: str) -> list[str]:
    return re.findall(r"\[turn (\d+)/\d+\] >", out)


def test_inquiry_commands_cost_no_turn_tests_match_aliases_and_the_last_turn_is_announced(monkeypatch, capsys):
    out = play(monkeypatch, capsys, "ClinicalInquiry-v1", "--case", "res-pneumothorax-01", "--tests", "--budget", "3",
               lines=["help", "What tests can I order?", "tests FBC", "prompt", "Test: full blood count", "record",
                      "Do you smoke", "Diagnosis: primary spontaneous pneumothorax; Recommendation: chest drain"])
    assert "<answer>Test: (one examination or test" in out  # the whole system prompt, Test: syntax included
    assert "Commands (no turn used" in out and "a physical examination by system" in out
    assert "'FBC' is Complete blood count (laboratory panels)" in out
    assert turns_shown(out) == ["1"] * 5 + ["2", "2", "3"]  # help, the meta question, tests, prompt: no turn
    assert "[patient] complete blood count:\n" in out.lower() and "is not available in this" not in out  # by alias
    assert "1. test: full blood count\n     -> complete blood count:" in out.lower()  # record
    assert "About ten cigarettes a day" in out  # the '?' was added: one question, no penalty
    assert out.index("! Last turn: conclude now") < out.index("[turn 3/3] >")
    summary = out[out.index("== episode over =="):]
    assert "outcome: correct" in summary and "reward components (summed over the episode):" in summary
    for component in ("information", "accuracy"):
        assert re.search(rf"\n  {component}\s+[+-]\d\.\d{{3}}", summary)
    assert "correct diagnosis: Primary spontaneous pneumothorax (J93.11)" in summary


def test_inquiry_without_tests_says_how_to_allow_them_and_ends_after_the_budget(monkeypatch, capsys):
    out = play(monkeypatch, capsys, "ClinicalInquiry-v1", "--seed", "1", "--budget", "2",
               lines=["Test: chest x-ray", "tests", "Any fever?", "Any cough?"])
    assert out.count("start play with --tests") == 2 and turns_shown(out) == ["1", "1", "1", "2"]
    assert out.index("! Last turn") < out.index("[turn 2/2] >")
    assert "no diagnosis was given within the turn budget" in out and "outcome: wrong" in out


def test_workup_orders_by_exam_name_and_catches_unknown_names_before_sending(monkeypatch, capsys):
    out = play(monkeypatch, capsys, "DiagnosticWorkup-v1", "--case", "res-pneumothorax-01", "--budget", "3",
               lines=["exams", "exams chest", "frobnicate scan", "CXR", "record", "!frobnicate scan",
                      "Diagnosis: pneumothorax"])
    assert "laboratory panels (" in out and "imaging (" in out  # the catalogue by kind
    assert "Exams whose names hold 'chest':" in out and "Chest X-ray" in out
    assert "'frobnicate scan' is not in the exam catalogue, so nothing was sent (no turn)" in out
    assert "[result] Chest X-ray:" in out and "Results so far (1 turn(s) used):\n  Chest X-ray:" in out
    assert "is not a recognised examination" in out  # '!' sends it anyway and it uses a turn
    assert turns_shown(out) == ["1"] * 4 + ["2", "2", "3"]
    assert out.index("! Last turn") < out.index("[turn 3/3] >")
    # Orders the catalogue does not know count against precision (DiagGym counts every order): the forced
    # '!frobnicate scan' is one of the two orders sent; the caught 'frobnicate scan' was never sent (else 1/3).
    assert "exams: precision 0.50, recall 1.00, F1 0.67; key exams were: Chest X-ray" in out
    assert re.search(r"\n  diagnosis\s+\+1\.000\n  exams\s+\+0\.333\n  turn\s+\+0\.100", out)  # half the F1


def test_tool_domain_short_form_json_and_summary(monkeypatch, capsys):
    out = play(monkeypatch, capsys, "Triage-v1", "--case", "tr-049", "--budget", "4",
               lines=["tools vital", "tools get_vital_signs", "get_vital_signs", "get_vitals patient_id=E049",
                      "get_vital_signs patient_id=E049",
                      '{"name": "get_medical_history", "arguments": {"patient_id": "E049"}}',
                      "record", "think red eye, normal observations", "submit_answer E"])
    assert "get_vital_signs" in out and "  patient_id (string, required): The patient's id" in out
    assert "Not sent (no turn used): get_vital_signs needs patient_id" in out
    assert "no tool named 'get_vitals'; did you mean get_vital_signs?" in out
    assert '(sent: {"name": "get_vital_signs", "arguments": {"patient_id": "E049"}})' in out
    assert '"heart_rate":74' in out
    assert "turn 1: get_vital_signs(patient_id=\"E049\") -> ok:" in out and "turn 2: get_medical_history" in out
    assert '(sent: {"name": "think", "arguments": {"thought": "red eye, normal observations"}})' in out
    assert out.index("! Last turn: call submit_answer now") < out.index("[turn 4/4] >")
    summary = out[out.index("== episode over =="):]
    assert "outcome: correct" in summary and "your answer: E   expected: E (ESI 5)" in summary
    for component in ("accuracy", "process", "safety", "format", "coherence"):
        assert re.search(rf"\n  {component}\s+[+-]\d\.\d{{3}}", summary)


def test_pathway_announces_each_new_phase(monkeypatch, capsys):
    out = play(monkeypatch, capsys, "ClinicalPathway-v1", "--case", "pw-pf-01",
               lines=["record", 'handoff summary="febrile child with a purpuric rash, ESI 1"', "quit"])
    assert "[phase 1/4: Triage, time limit 7 calls]" in out  # record shows the current phase
    assert "[phase 2/4: Assessment]" in out
    assert "episode abandoned after 1 turn(s)" in out


@pytest.mark.parametrize("env_id", clinical_gym.env_ids())
def test_every_environment_starts_and_quits_without_using_a_turn(monkeypatch, capsys, env_id):
    out = play(monkeypatch, capsys, env_id, "--seed", "0", lines=["help", "record"])  # then end of input
    assert f"== {env_id} ==" in out and "Commands (no turn used" in out
    assert "episode abandoned after 0 turn(s)" in out


@pytest.mark.parametrize("args, message", [
    (("Triage-v1", "--tests"), "--tests is for ClinicalInquiry-v1"),
    (("ClinicalInquiry-v1", "--tasks", "t.json"), "--tasks is for the tool domains"),
    (("Triage-v1", "--cases", "library"), "--cases is for ClinicalInquiry-v1"),
    (("DiagnosticWorkup-v1", "--budget", "0"), "--budget must be at least 1"),
    (("Triage-v1", "--case", "no-such-task"), "unknown task_id 'no-such-task'"),
    (("MedicalQA-v1", "--env-kwargs", "[1]"), "must be a JSON object"),
])
def test_bad_play_arguments_are_one_line_errors(capsys, args, message):
    assert cli.main(["play", *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


SCHEMAS = {
    "dose": {"function": {"name": "dose", "parameters": {
        "properties": {"drug": {"type": "string"}, "mg": {"type": "number"}, "codes": {"type": "array",
                       "items": {"type": "string"}}, "urgent": {"type": "boolean"}, "note": {"type": "string"}},
        "required": ["drug", "mg"]}}},
    "submit_answer": {"function": {"name": "submit_answer", "parameters": {
        "properties": {"answer": {"type": "string"}, "reasoning": {"type": "string"}}, "required": ["answer"]}}},
    "status": {"function": {"name": "status", "parameters": {"properties": {}}}},
}


def test_short_form_reads_values_by_the_schema():
    call = short_form_call('dose drug=1234 mg=2.5 codes=a,b urgent=true note="twice daily, with food"', SCHEMAS)
    assert call == {"name": "dose", "arguments": {"drug": "1234", "mg": 2.5, "codes": ["a", "b"], "urgent": True,
                                                   "note": "twice daily, with food"}}
    assert short_form_call("dose drug=x mg=1 codes='[\"p q\"]'", SCHEMAS)["arguments"]["codes"] == ["p q"]
    assert short_form_call("submit_answer B", SCHEMAS) == {"name": "submit_answer", "arguments": {"answer": "B"}}
    assert short_form_call('submit_answer "it\'s B"', SCHEMAS)["arguments"] == {"answer": "it's B"}
    assert short_form_call("status", SCHEMAS) == {"name": "status", "arguments": {}}
    assert json.loads(json.dumps(short_form_call("submit_answer answer=B reasoning=x", SCHEMAS)))["arguments"] == {
        "answer": "B", "reasoning": "x"}


@pytest.mark.parametrize("line, message", [
    ("dose drug=x", "dose needs mg"),
    ("dose drug=x mg=lots", "'lots' is not a valid number"),
    ("dose drug=x mg=1 colour=red", "dose has no argument 'colour'"),
    ("dose aspirin 75", "write the arguments as key=value"),
    ("dosage drug=x", "did you mean dose?"),
    ('dose drug="x mg=1', "cannot read the arguments"),
])
def test_short_form_mistakes_say_what_the_tool_takes(line, message):
    with pytest.raises(ShortFormError, match=re.escape(message)):
        short_form_call(line, SCHEMAS)


def test_values_for_non_string_parameters_are_json():
    assert read_value("12", {"type": "integer"}) == 12 and read_value("12", {"type": "string"}) == "12"
    assert read_value("x", {"enum": ["x", "y"]}) == "x" and read_value("null", {"type": ["string", "null"]}) is None


@pytest.mark.parametrize("request_name, found", [
    ("full blood count", ("complete blood count",)), ("FBC", ("complete blood count",)), ("CXR", ("chest x-ray",)),
    ("potassium", ("basic metabolic panel", "potassium")), ("12-lead ECG", ("ecg",)), ("lipase", None),
    ("bone scan", None),
])
def test_inquiry_tests_are_found_by_the_exam_catalogues_names(request_name, found):
    from clinical_gym.cases import load_cases
    from clinical_gym.domains.inquiry.environment import find_exam_result

    case = next(c for c in load_cases("library") if c.id == "res-pneumothorax-01")
    result = find_exam_result(case, request_name)
    if found is None:
        assert result is None
    else:
        assert result is not None and result.splitlines()[0].lower().rstrip(":") in found


def test_a_failing_llm_patient_ends_the_game_with_the_error_shown(monkeypatch, capsys):
    from fake_openai import serve

    with serve([("status", 400)]) as url:
        patient = json.dumps({"patient": "openai:patient-model"})
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        out = play(monkeypatch, capsys, "ClinicalInquiry-v1", "--seed", "0", "--env-kwargs", patient,
                   lines=["When did it start?"])
    assert "the episode ended on an error (a simulated actor or the judge failed):" in out and "400" in out
