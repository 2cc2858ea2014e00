"""The task folder (``clinical_gym.tool_env.task_folder``): tasks.json with the domain's db.json, written once and read
by every tool environment through ``gym.make(ENV, tasks=DIR or DIR/tasks.json)``; what ``clinical-gym tools
convert`` writes is such a folder, so converted questions answer from their own records."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import clinical_gym.cli
from clinical_gym.benchmarks.plan import _env_class
from clinical_gym.registration import ENVIRONMENTS
from clinical_gym.tool_env.policies import ExpertToolPolicy, call_text, run_episode
from clinical_gym.tool_env.task_folder import read_task_folder, read_tasks, write_task_folder

TOOL_IDS = [e.id for e in ENVIRONMENTS if e.family == "tool"]
MEDQA = Path(__file__).parent / "fixtures" / "case_formats" / "medqa.jsonl"


@pytest.mark.parametrize("env_id", TOOL_IDS)
def test_every_tool_env_reads_a_task_folder_with_its_records(env_id, tmp_path):
    cls = _env_class(env_id)
    tasks = cls.default_tasks()[:2]
    write_task_folder(tmp_path / "set", tasks, cls.default_db())
    assert sorted(p.name for p in (tmp_path / "set").iterdir()) == ["db.json", "tasks.json"]
    read, db = read_task_folder(tmp_path / "set", cls)
    assert db.get_hash() == cls.default_db().get_hash() and len(read) == 2
    for source in (tmp_path / "set", str(tmp_path / "set" / "tasks.json")):
        env = gym.make(env_id, tasks=source)
        assert [t.id for t in env.unwrapped.tasks] == [t.id for t in tasks]
        reward, info = run_episode(env, ExpertToolPolicy(tasks[0]), options={"task_id": tasks[0].id})
        assert reward == pytest.approx(1.0) and info["outcome"]["success"]


def test_converted_questions_answer_from_their_own_records(tmp_path, capsys):
    """``tools convert`` output read back by path: the question bank travels with the tasks (issue 17: every tool
    call used to answer "question ... not found" while the oracle still scored 1.0)."""
    out = tmp_path / "mcq"
    assert clinical_gym.cli.main(["tools", "convert", "--from", str(MEDQA), "--domain", "medical_qa",
                                  "--out", str(out)]) == 0
    env = gym.make("MedicalQA-v1", tasks=str(out / "tasks.json"), knowledge=None)
    task = env.unwrapped.tasks[0]
    qid = next(a.arguments["question_id"] for a in task.expected_actions if "question_id" in a.arguments)
    env.reset(options={"task_id": task.id})
    obs, *_ = env.step(call_text("get_question", {"question_id": qid}))
    assert "not found" not in obs and qid in obs
    assert gym.make("MedicalQA-v1", tasks=str(out), knowledge=None).unwrapped.base_db.get_hash() == \
        env.unwrapped.base_db.get_hash() != _env_class("MedicalQA-v1").default_db().get_hash()


def test_an_explicit_db_wins_and_another_file_name_is_read_alone(tmp_path):
    cls = _env_class("Triage-v1")
    tasks = cls.default_tasks()[:1]
    other = cls.default_db().model_copy(update={"clock": "2030-01-01T00:00"})
    write_task_folder(tmp_path, tasks, other)
    assert gym.make("Triage-v1", tasks=tmp_path).unwrapped.base_db.clock == "2030-01-01T00:00"
    assert gym.make("Triage-v1", tasks=tmp_path, db=cls.default_db()).unwrapped.base_db is cls.default_db()
    (tmp_path / "mine.json").write_text((tmp_path / "tasks.json").read_text())
    source = read_tasks(tmp_path / "mine.json", cls)
    assert source.db is None and [t.id for t in source.tasks] == [tasks[0].id]


def test_bad_folders_and_files_are_one_line_errors(tmp_path):
    cls = _env_class("MedicalQA-v1")
    (tmp_path / "empty").mkdir()
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "tasks.json").write_text("[{")
    (tmp_path / "baddb").mkdir()
    (tmp_path / "baddb" / "tasks.json").write_text(json.dumps([t.model_dump(mode="json") for t in cls.default_tasks()[:1]]))
    (tmp_path / "baddb" / "db.json").write_text('{"questions": 3}')
    (tmp_path / "none").mkdir()
    (tmp_path / "none" / "tasks.json").write_text("[]")
    cases = {tmp_path / "missing": "no task file or folder", tmp_path / "empty": "has no tasks.json",
             tmp_path / "broken": "broken/tasks.json", tmp_path / "baddb": "baddb/db.json: questions",
             tmp_path / "none": "holds no tasks"}
    for source, message in cases.items():
        with pytest.raises(ValueError) as caught:
            gym.make("MedicalQA-v1", tasks=str(source))
        assert message in str(caught.value) and "\n" not in str(caught.value)


def _renamed(task, record_ids) -> tuple[str, list[str]]:
    """``task`` as JSON with every string record id it names given a suffix, and the renamed ids as the error
    names them."""
    text = json.dumps([task.model_dump(mode="json", exclude_none=True)])
    renamed = []
    for argument, value in task.named_records(record_ids):
        if isinstance(value, str):
            text = text.replace(json.dumps(value), json.dumps(f"{value}ZZ"))
            renamed.append(f"{argument} '{value}ZZ'")
    return text, renamed


@pytest.mark.parametrize("env_id", TOOL_IDS)
def test_tasks_naming_records_the_database_lacks_fail_at_construction(env_id, tmp_path):
    """A tasks.json with no db.json beside it used to build on the bundled records, then every call answered
    "question 'Q054' not found" (issue 17): construction now fails in one line naming the missing records."""
    cls = _env_class(env_id)
    task = cls.default_tasks()[0]
    text, renamed = _renamed(task, cls.record_ids)
    assert renamed, "the task names no record"
    (tmp_path / "tasks.json").write_text(text, encoding="utf-8")
    for kwargs, where in (({}, "the bundled database"), ({"db": cls.default_db()}, "the database given")):
        with pytest.raises(ValueError) as caught:
            gym.make(env_id, tasks=tmp_path, **kwargs)
        message = str(caught.value)
        assert "\n" not in message and f"not in {where}" in message and renamed[0] in message, message
        assert f"(task {task.id})" in message and "db.json" in message
    write_task_folder(tmp_path, [task])  # the same task with the ids the bundled records hold builds
    assert [t.id for t in gym.make(env_id, tasks=tmp_path).unwrapped.tasks] == [task.id]


def test_converted_questions_without_their_records_are_refused(tmp_path, capsys):
    out = tmp_path / "mcq"
    assert clinical_gym.cli.main(["tools", "convert", "--from", str(MEDQA), "--domain", "medical_qa",
                                  "--out", str(out)]) == 0
    (out / "db.json").unlink()
    capsys.readouterr()
    with pytest.raises(ValueError, match=r"record\(s\) the tasks name are not in the bundled database: "
                                         r"question_id 'Q\d+' \(task mqa-"):
        gym.make("MedicalQA-v1", tasks=str(out / "tasks.json"), knowledge=None)
    assert clinical_gym.cli.main(["bench", "--env", "MedicalQA-v1", "--tasks", str(out), "--agent", "oracle",
                                  "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "question_id 'Q" in err[0] and "db.json" in err[0]
