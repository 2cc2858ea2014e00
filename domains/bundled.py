"""``BundledData``: a tool domain's bundled database (``data/db.json``) and tasks (``data/tasks.json``), each read
once, on first use, and shared by every env of the process (never mutated: episodes work on copies).

A domain's environment module exposes them as its tau2-bench entry points, ``bundled_db()`` and
``get_tasks(split=None)``, and lists them as the env's ``bundled`` data (``clinical_gym.domains.shared_toolkits.BundledDomain``).
"""

from __future__ import annotations

from importlib import resources
from typing import Generic, TypeVar

from clinical_gym.tool_env.database import DomainDB
from clinical_gym.tool_env.tasks import Task, load_tasks, select_split

D = TypeVar("D", bound=DomainDB)


class BundledData(Generic[D]):
    """The ``data/`` of package ``package``: the database as ``db_type`` and the task list."""

    def __init__(self, package: str, db_type: type[D]) -> None:
        self.data = resources.files(package) / "data"
        self.db_type = db_type
        self._db: D | None = None
        self._tasks: tuple[Task, ...] | None = None

    def bundled_db(self) -> D:
        """The bundled database (shared, never mutated: episodes work on copies)."""
        if self._db is None:
            self._db = self.db_type.model_validate_json((self.data / "db.json").read_text(encoding="utf-8"))
        return self._db

    def tasks(self) -> tuple[Task, ...]:
        """Every bundled task, in file order."""
        if self._tasks is None:
            self._tasks = tuple(load_tasks(self.data / "tasks.json"))
        return self._tasks

    def get_tasks(self, split: str | None = None) -> list[Task]:
        """The bundled tasks of ``split`` ("train", "test", or all for None)."""
        return select_split(list(self.tasks()), split)
