"""The task folder: a tool domain's tasks together with the records they run on, in one folder.

    my_tasks/
        tasks.json   a JSON list of task objects (``clinical_gym.tool_env.tasks.Task``; pathway task entries for
                     ClinicalPathway-v1), the form the environment's ``load_task_file`` reads
        db.json      optional: the domain's database (its ``DomainDB`` type as JSON) holding every patient,
                     question, study, ... the tasks name; without it the tasks run on the bundled database, and
                     the environment refuses tasks naming records that database lacks (``ToolDomainEnv.record_ids``)

``clinical-gym tools convert`` and ``clinical-gym tasks generate`` write this folder; ``gym.make(ENV, tasks=DIR)``
and ``clinical-gym bench --tasks DIR`` read it for every tool environment, as they do a path to its ``tasks.json``
(the ``db.json`` beside it comes along). A task file of another name is read alone. ``domains/README.md`` describes
the format for users.

    write_task_folder("converted/", tasks, db)
    tasks, db = read_task_folder("converted/", MedicalQAEnv)      # or read_tasks("converted/tasks.json", ...)
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, ValidationError

from clinical_gym.tool_env.database import DomainDB

if TYPE_CHECKING:
    from clinical_gym.tool_env.env import ToolDomainEnv

TASKS_FILE = "tasks.json"
DB_FILE = "db.json"


class TaskSource(NamedTuple):
    """Tasks read for one environment class, and the database they came with (None: use the bundled one)."""

    tasks: list[Any]
    db: DomainDB | None


def write_task_folder(folder: str | Path, tasks: Sequence[BaseModel | dict[str, Any]], db: DomainDB | None = None
                      ) -> Path:
    """Write ``folder/tasks.json`` (and ``folder/db.json`` when ``db`` is given); the folder is created when
    missing. Returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = [t.model_dump(mode="json", exclude_none=True) if isinstance(t, BaseModel) else dict(t) for t in tasks]
    (folder / TASKS_FILE).write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if db is not None:
        db.dump(folder / DB_FILE)
    return folder


def read_task_folder(folder: str | Path, env_class: type[ToolDomainEnv]) -> TaskSource:
    """The tasks of ``folder/tasks.json`` in the form ``env_class`` takes, and ``folder/db.json`` as its database
    (None when the folder has none). ``ValueError`` (one line, naming the file) for a missing or invalid file."""
    folder = Path(folder)
    if not (folder / TASKS_FILE).is_file():
        raise ValueError(f"{folder} is not a task folder: it has no {TASKS_FILE}")
    tasks = _read(folder / TASKS_FILE, env_class.load_task_file)
    if not tasks:
        raise ValueError(f"{folder / TASKS_FILE} holds no tasks")
    db_path = folder / DB_FILE
    db = _read(db_path, env_class.load_db_file) if db_path.is_file() else None
    return TaskSource(tasks, db)


def read_tasks(source: str | os.PathLike[str], env_class: type[ToolDomainEnv]) -> TaskSource:
    """Tasks from a task folder, a folder's ``tasks.json`` (read with its ``db.json``), or a task file of another
    name (read alone)."""
    path = Path(source).expanduser()
    if path.is_dir():
        return read_task_folder(path, env_class)
    if not path.is_file():
        raise ValueError(f"no task file or folder {str(source)!r}")
    if path.name == TASKS_FILE:
        return read_task_folder(path.parent, env_class)
    tasks = _read(path, env_class.load_task_file)
    if not tasks:
        raise ValueError(f"{path} holds no tasks")
    return TaskSource(tasks, None)


def tasks_argument(tasks: Any, db: DomainDB | None, env_class: type[ToolDomainEnv], *, split: str | None = None,
                   seed: int | None = None) -> tuple[Any, DomainDB | None]:
    """A tool environment's ``tasks=`` and ``db=`` arguments, with a path in ``tasks`` read (``read_tasks``); the
    folder's database is used unless ``db`` is given. ``"generated:N"`` gives N tasks of the environment's task
    generator for ``seed`` (default 0) and ``split`` with the database holding their records
    (``clinical_gym.tool_env.generation``); ``seed`` is an error with any other ``tasks``."""
    from clinical_gym.tool_env.generation import generated_tasks

    generated = generated_tasks(tasks, db, env_class, split=split, seed=seed)
    if generated is not None:
        return generated
    if isinstance(tasks, (str, os.PathLike)):
        source = read_tasks(tasks, env_class)
        return source.tasks, db if db is not None else source.db
    return tasks, db


def _read(path: Path, load: Any) -> Any:
    """``load(path)`` with any parse or validation error as a one-line ``ValueError`` naming the file."""
    try:
        return load(path)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        raise ValueError(f"{path}: {where}: {first['msg']} ({e.error_count()} problem(s))") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: invalid JSON ({e.msg})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot be read ({e})") from None
