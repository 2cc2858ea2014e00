"""Which episodes a benchmark plays on an environment: episode ``k`` is a fixed case and reset seed, the same for
every agent, derived from the run seed alone (so same seed, same episodes, and a resumed run picks up the same ones).

Cases are played in an order shuffled once per (seed, environment); with more episodes than cases the order repeats,
each repeat with new reset seeds. Without an episode count, each case (or task) is played once. With ``trials`` K,
each case in that order is played K times in a row (episodes ``kK .. kK+K-1``), as tau2-bench's trials for pass^k.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

import clinical_gym
from clinical_gym.cases import Case, load_cases
from clinical_gym.registration import env_family
from clinical_gym.tool_env.generation import parse_generated
from clinical_gym.tool_env.task_folder import read_tasks

__all__ = ["CASE_FAMILIES", "TOOL_FAMILY", "EnvPlan", "case_set", "env_family", "load_env_tasks", "plan_env",
           "resolve_env_ids"]

TOOL_FAMILY = "tool"
CASE_FAMILIES = ("inquiry", "workup")


def resolve_env_ids(names: str) -> list[str]:
    """Ids from ``"all"`` or ``"A,B"``; ``ValueError`` for an unregistered one."""
    known = clinical_gym.env_ids()
    ids = known if names.strip() == "all" else [n.strip() for n in names.split(",") if n.strip()]
    unknown = [i for i in ids if i not in known]
    if unknown or not ids:
        raise ValueError(f"unknown environment {', '.join(unknown) or repr(names)}; registered: {', '.join(known)}")
    return ids


def case_set(cases: str | None, episodes: int | None) -> str | None:
    """The case set name with its size spelled out for a generated set (``generated:common:N``; N defaults to
    ``episodes``), so that the name alone decides the cases."""
    if cases is None or not cases.startswith("generated:"):
        return cases
    kind, _, size = cases.partition(":")[2].partition(":")
    if not size:
        if episodes is None:
            raise ValueError(f"say how many cases to generate: generated:{kind}:N")
        size = str(episodes)
    if not size.isdigit() or int(size) < 1:
        raise ValueError(f"bad generated case set {cases!r}: use generated:{kind}:N with N >= 1")
    return f"generated:{kind}:{int(size)}"


def _load_case_set(name: str, split: str | None, seed: int) -> list[Case]:
    if name.startswith("generated:"):
        base, _, size = name.rpartition(":")
        return load_cases(base, split, n=int(size), seed=seed)
    return load_cases(name, split)


def _stable(text: str) -> int:
    return zlib.crc32(text.encode())


@dataclass
class EnvPlan:
    """An environment as a benchmark plays it: ``gym.make(env_id, **kwargs)`` and the cases (or tasks) it has."""

    env_id: str
    family: str
    kwargs: dict[str, Any]
    case_ids: list[str]
    seed: int
    episodes: int
    trials: int = 1
    _order: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._order = np.random.default_rng([self.seed, _stable(self.env_id)]).permutation(len(self.case_ids))

    def case_of(self, episode: int) -> str:
        """The case (or task) of an episode: episodes ``k*trials .. k*trials + trials - 1`` play the same one."""
        return self.case_ids[int(self._order[(episode // self.trials) % len(self.case_ids)])]

    def seed_of(self, episode: int) -> int:
        return int(np.random.SeedSequence([self.seed, _stable(self.env_id), episode]).generate_state(1)[0])

    def make(self) -> gym.Env:
        return gym.make(self.env_id, **self.kwargs)


def _env_class(env_id: str) -> Any:
    """The class behind a registered id (its entry point, imported)."""
    entry = gym.spec(env_id).entry_point
    if not isinstance(entry, str):
        return entry
    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)


def load_env_tasks(env_id: str, path: str) -> dict[str, Any]:
    """The ``gym.make`` arguments of a task folder or file for the tool environment ``env_id``: its tasks in the form
    the environment takes, and the folder's database as ``db`` when it has one (``clinical_gym.tool_env.task_folder``);
    read once, so every episode's environment shares them."""
    source = read_tasks(path, _env_class(env_id))
    return {"tasks": source.tasks, **({"db": source.db} if source.db is not None else {})}


def plan_env(env_id: str, *, cases: str | None, tasks: str | None, split: str | None, episodes: int | None, seed: int,
             env_kwargs: Mapping[str, Any], trials: int = 1) -> EnvPlan:
    """The plan of one environment. ``cases``: a case set or file for the case families (see ``case_set``);
    ``tasks``: a task folder or file for the tool domains (``load_env_tasks``), or ``generated:N`` (N generated tasks
    of the run's seed and split); None keeps the environment's own. ``episodes`` None: each case or task once.
    ``trials``: each of those episodes' cases played that many times in a row (pass^k), each trial with its own reset
    seed."""
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials}")
    family = env_family(env_id)
    if family not in (*CASE_FAMILIES, TOOL_FAMILY):
        raise ValueError(f"{env_id}: no benchmark agents for environment family {family!r}")
    kwargs = dict(env_kwargs)
    if family in CASE_FAMILIES:
        name = case_set(cases, episodes) or "library"
        found = _load_case_set(name, split, seed)
        if not found:
            raise ValueError(f"no cases in {name!r}" + (f" for split {split!r}" if split else ""))
        kwargs.update(cases=found)
    else:
        if tasks and parse_generated(tasks) is not None:
            kwargs.update(tasks=tasks, task_seed=seed)  # generated:N of the run's seed, generated once per process
        elif tasks:
            kwargs = {**load_env_tasks(env_id, tasks), **kwargs}
        kwargs["split"] = split
    probe = gym.make(env_id, **kwargs)
    try:
        ids = [item.id for item in (probe.unwrapped.tasks if family == TOOL_FAMILY else probe.unwrapped.cases)]
        ids = list(getattr(probe.unwrapped, "episode_ids", ids))  # e.g. DiagnosticWorkup's single-turn items
    finally:
        probe.close()
    return EnvPlan(env_id, family, kwargs, ids, seed, (episodes or len(ids)) * trials, trials)
