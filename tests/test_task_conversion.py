"""Task conversion (issue 7): MedQA-style questions become MedicalQA-v1 tasks and cases become ClinicalDiagnosis-v1
tasks, with expected tools assigned, content-hash ids, duplicates of hand-written tasks (and of each other) dropped;
the scripted expert solves every converted task and a random tool-caller does not; ``clinical-gym tools convert``
writes files the environments load."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import gymnasium as gym
import pytest

import clinical_gym.cli
from clinical_gym.cases import load_cases
from clinical_gym.cases.formats.medqa import MedQARow
from clinical_gym.cases.formats.rows import read_rows
from clinical_gym.tool_env.policies import ExpertToolPolicy, RandomToolPolicy, run_episode
from clinical_gym.tool_env.tasks import load_tasks
from clinical_gym.domains.clinical_diagnosis.data_model import ClinicalDiagnosisDB
from clinical_gym.domains.clinical_diagnosis.environment import ClinicalDiagnosisEnv
from clinical_gym.domains.medical_qa.data_model import MedicalQADB
from clinical_gym.domains.medical_qa.environment import MedicalQAEnv
from clinical_gym.domains.task_conversion import convert_cases, convert_mcq

MEDQA = Path(__file__).parent / "fixtures" / "case_formats" / "medqa.jsonl"


def mcq_rows(path: Path = MEDQA) -> list[tuple[str, dict]]:
    rows, problems = read_rows(path)
    assert not problems
    return [(f"{path.name}:{n}", row) for n, row in rows]


@pytest.fixture(scope="module")
def mcq():
    return convert_mcq(mcq_rows())


@pytest.fixture(scope="module")
def cases():
    return convert_cases(load_cases("library"))


def test_valid_questions_become_tasks_and_bad_rows_are_reported(mcq):
    assert len(mcq.tasks) == 4 and not mcq.duplicates
    assert [s.split(": ", 1)[0] for s in mcq.skipped] == ["medqa.jsonl:5", "medqa.jsonl:6"]
    assert "is not one of the options" in mcq.skipped[0] and "options: Field required" in mcq.skipped[1]
    row = mcq_rows()[1][1]
    options = MedQARow.model_validate(row).option_texts()
    task = next(t for t in mcq.tasks if t.options == options)
    question = mcq.db.questions[task.expected_actions[0].arguments["question_id"]]
    assert question.options == options and question.lead_in.endswith("?")
    assert " ".join(row["question"].split()) == f"{question.vignette} {question.lead_in}"
    assert task.answer in options and task.id.startswith("mqa-x-")
    assert [a.name for a in task.expected_actions] == ["get_question", "list_options", "search_knowledge",
                                                       "compare_options", *["eliminate_option"] * (len(options) - 1),
                                                       "record_reasoning"]
    assert {a.arguments.get("letter") for a in task.expected_actions} - {None} == set(options) - {task.answer}


def test_ids_are_content_hashes_and_conversion_is_deterministic(mcq, cases):
    again = convert_mcq(mcq_rows())
    assert [t.id for t in again.tasks] == [t.id for t in mcq.tasks]
    assert again.db.get_hash() == mcq.db.get_hash()
    assert [t.id for t in convert_cases(load_cases("library")).tasks] == [t.id for t in cases.tasks]
    edited = [(w, {**r, "question": r["question"] + " "}) for w, r in mcq_rows()]  # whitespace: same content
    assert {t.id for t in convert_mcq(edited).tasks} == {t.id for t in mcq.tasks}
    changed = [(w, {**r, "question": r["question"].replace("year", "yr")}) for w, r in mcq_rows()]
    assert not {t.id for t in convert_mcq(changed).tasks} & {t.id for t in mcq.tasks}


def test_questions_repeating_the_bank_or_each_other_are_dropped(mcq):
    bank = MedicalQAEnv.default_db()
    written = next(iter(bank.questions.values()))
    copy = {"question": f"{written.vignette} {written.lead_in}", "options": dict(written.options),
            "answer": next(iter(written.options))}
    rows = [*mcq_rows(), ("copy-of-bank", copy), *mcq_rows()[:1]]
    conversion = convert_mcq(rows)
    assert len(conversion.tasks) == len(mcq.tasks)
    assert [d.split(": ")[0] for d in conversion.duplicates] == ["copy-of-bank", "medqa.jsonl:1"]
    assert len(conversion.db.questions) == len(bank.questions) + len(mcq.tasks)


def play_all(env, tasks, policy) -> list[float]:
    return [run_episode(env, policy(t), options={"task_id": t.id})[0] for t in tasks]


def test_the_expert_solves_every_converted_question_and_random_play_does_not(mcq):
    env = MedicalQAEnv(db=mcq.db, tasks=mcq.tasks, knowledge=None)
    assert min(play_all(env, mcq.tasks, ExpertToolPolicy)) >= 0.9
    randoms = [run_episode(env, RandomToolPolicy(env.tool_schemas, seed=s), options={"task_id": t.id})[0]
               for s in range(3) for t in mcq.tasks]
    assert statistics.mean(randoms) < 0.3


def test_every_library_case_becomes_a_diagnosis_task_the_expert_solves(cases):
    assert len(cases.tasks) + len(cases.duplicates) == len(load_cases("library")) and not cases.skipped
    assert len(cases.duplicates) <= 2  # a hand-written task modelled on a library case (same diagnosis, age, sex)
    assert all("the same patient and diagnosis as a hand-written task" in d for d in cases.duplicates)
    env = ClinicalDiagnosisEnv(db=cases.db, tasks=cases.tasks, knowledge=None)
    experts = play_all(env, cases.tasks, ExpertToolPolicy)
    randoms = [run_episode(env, RandomToolPolicy(env.tool_schemas, seed=i), options={"task_id": t.id})[0]
               for i, t in enumerate(cases.tasks[:20])]
    # A random caller keeps the 5D reward's safety and format parts (about 0.3) on a task without emergencies or
    # options; it never gets the diagnosis, the process or the assertions.
    assert min(experts) >= 0.9 and statistics.mean(randoms) < 0.4
    assert statistics.mean(experts) - statistics.mean(randoms) > 0.55


def test_converted_charts_never_name_the_diagnosis(cases):
    """Notes (what the patient reported, the examination) and the ticket never name it; a test may (an influenza
    PCR names influenza), as in the chart of a real patient."""
    for task in cases.tasks:
        patient = cases.db.patients[task.patient_id]
        said = " ".join([task.ticket, *(n.text for n in patient.notes), *(c.name for c in patient.conditions)])
        assert task.answer.lower() not in said.lower(), task.id


def test_chart_values_keep_what_the_case_says_in_the_domain_units(cases):
    library = {c.id: c for c in load_cases("library")}
    stroke = next(t for t in cases.tasks if library["neu-ischaemic-stroke-01"].diagnosis.name == t.answer)
    labs = {lab.test: lab for lab in cases.db.patients[stroke.patient_id].labs}
    assert (labs["Glucose"].value, labs["Glucose"].unit, labs["Glucose"].ref_high) == (9.2, "mmol/L", 5.5)
    gbs = next(t for t in cases.tasks if library["neu-guillain-barre-01"].diagnosis.name == t.answer)
    gbs_labs = {lab.test for lab in cases.db.patients[gbs.patient_id].labs}
    assert "CSF glucose" in gbs_labs and "Glucose" in gbs_labs  # the CSF value is not read as a blood glucose
    patient = cases.db.patients[stroke.patient_id]
    assert patient.weight_kg is None  # cases record no weight: it stays unrecorded, nothing is made up
    assert all(a.severity == "not recorded" for p in cases.db.patients.values() if p.patient_id.startswith("X")
               for a in p.allergies)


def test_cases_repeating_a_hand_written_task_or_each_other_are_dropped():
    db = ClinicalDiagnosisEnv.default_db()
    written = next(t for t in ClinicalDiagnosisEnv.default_tasks() if t.category == "diagnosis")
    patient = db.patients[written.patient_id]
    base = load_cases("library")[0]
    twin = base.model_copy(update={
        "id": "twin", "demographics": base.demographics.model_copy(update={"age": patient.age, "sex": patient.sex}),
        "diagnosis": base.diagnosis.model_copy(update={"name": written.answer})})
    conversion = convert_cases([base, twin, base.model_copy(update={"id": "again"})])
    assert len(conversion.tasks) == 1
    assert [d.split(": ")[0] for d in conversion.duplicates] == ["twin", "again"]


def test_the_convert_command_writes_files_the_environments_load(tmp_path, capsys):
    out = tmp_path / "mcq"
    assert clinical_gym.cli.main(["tools", "convert", "--from", str(MEDQA), "--domain", "medical_qa",
                                  "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("4 tasks converted; 0 duplicates dropped; 2 rows skipped")
    tasks = load_tasks(out / "tasks.json")
    env = gym.make("MedicalQA-v1", db=MedicalQADB.load(out / "db.json"), tasks=tasks, knowledge=None)
    assert min(run_episode(env, ExpertToolPolicy(t), options={"task_id": t.id})[0] for t in tasks) >= 0.9

    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps([c.model_dump(mode="json") for c in load_cases("library")[:3]]))
    out = tmp_path / "cd"
    assert clinical_gym.cli.main(["tools", "convert", "--from", str(cases_file), "--domain", "ClinicalDiagnosis-v1",
                                  "--out", str(out)]) == 0
    tasks = load_tasks(out / "tasks.json")
    env = gym.make("ClinicalDiagnosis-v1", db=ClinicalDiagnosisDB.load(out / "db.json"), tasks=tasks)
    assert len(tasks) == 3 and env.reset(options={"task_id": tasks[0].id})[0]


@pytest.mark.parametrize("argv, message", [
    (["--from", "/no/such.jsonl", "--domain", "MedicalQA-v1"], "no such file: /no/such.jsonl"),
    (["--from", str(MEDQA), "--domain", "Triage-v1"], "tasks can be converted for MedicalQA-v1 and "
                                                      "ClinicalDiagnosis-v1, not Triage-v1"),
    (["--from", str(MEDQA), "--domain", "nowhere"], "unknown tool domain 'nowhere'"),
])
def test_convert_errors_are_one_line(argv, message, tmp_path, capsys):
    assert clinical_gym.cli.main(["tools", "convert", *argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_convert_refuses_a_folder_that_is_not_empty(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    assert clinical_gym.cli.main(["tools", "convert", "--from", str(MEDQA), "--domain", "MedicalQA-v1",
                                  "--out", str(tmp_path)]) == 2
    assert "is not empty" in capsys.readouterr().err and (tmp_path / "keep.txt").read_text() == "mine"
