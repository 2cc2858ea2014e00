"""What the tool-using environments offer, read from the code: every tool (name, kind, the toolkit that defines it,
the environments that mount it) and every domain (tool and task counts). ``clinical-gym tools list`` prints the
tools; ``clinical-gym tools docs`` writes ``docs/domains.md`` from the same rows, so the page never drifts from
the code. Environments are built on demand (the bundled knowledge index is not opened)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import gymnasium as gym

from clinical_gym.cases.loading import split_of
from clinical_gym.registration import ENVIRONMENTS, EnvInfo

EPISODE_TOOLKIT = "EpisodeTools"  # think / submit_answer, mounted by every tool environment


def _unversioned(env_id: str) -> str:
    """'Triage-v1' -> 'Triage'."""
    return re.sub(r"-v\d+$", "", env_id)


@dataclass
class ToolRow:
    """One distinct tool: the first line of its description, and every environment that mounts it."""

    name: str
    kind: str
    toolkit: str
    description: str
    envs: list[str] = field(default_factory=list)

    @property
    def shared(self) -> bool:
        return len(self.envs) > 1


@dataclass(frozen=True)
class DomainRow:
    """One tool-using environment: its tools (its own, and the ones every domain mounts: scoring instruments,
    knowledge search, ``think`` / ``submit_answer``) and tasks (by split). A multi-phase environment's tools are the
    union over its tasks."""

    env_id: str
    description: str
    own_tools: int
    shared_tools: int
    kinds: dict[str, int]
    tasks: int
    train_tasks: int
    test_tasks: int

    @property
    def tools(self) -> int:
        return self.own_tools + self.shared_tools


def tool_envs() -> list[EnvInfo]:
    """The registered tool-using environments, in registry order."""
    return [e for e in ENVIRONMENTS if e.family == "tool"]


def resolve_domain(name: str) -> EnvInfo:
    """A tool environment by id (``Triage-v1``), by id without version, or by domain folder (``triage``)."""
    wanted = name.lower().replace("_", "").replace("-", "")
    for info in tool_envs():
        if wanted in (info.id.lower().replace("-", ""), _unversioned(info.id).lower(), info.domain.replace("_", "")):
            return info
    raise ValueError(f"unknown tool domain {name!r}; tool environments: {', '.join(e.id for e in tool_envs())}")


def _bound_tools(env_id: str) -> tuple[gym.Env, dict]:
    """The environment and every tool it offers over its tasks (as reset announces them), bound."""
    env = gym.make(env_id).unwrapped
    bound: dict = {}
    for task in env.tasks:
        _, info = env.reset(seed=0, options={"task_id": task.id})
        for schema in info["tools"]:
            name = schema["function"]["name"]
            bound.setdefault(name, env.toolkit.tools[name])
    return env, bound


def catalogue(env_ids: Iterable[str] | None = None) -> tuple[list[ToolRow], list[DomainRow]]:
    """Tool rows (sorted by name) and domain rows (registry order) of ``env_ids`` (default: every tool env)."""
    ids = list(env_ids) if env_ids is not None else [e.id for e in tool_envs()]
    descriptions = {e.id: e.description for e in ENVIRONMENTS}
    tools: dict[str, ToolRow] = {}
    domains: list[DomainRow] = []
    for env_id in ids:
        env, bound = _bound_tools(env_id)
        shared = {name for toolkit in env._shared for name in toolkit.tools}  # instruments, knowledge, episode tools
        kinds: dict[str, int] = {}
        own = 0
        for name, tool in bound.items():
            row = tools.setdefault(name, ToolRow(name, tool.spec.kind.value, tool.owner,
                                                 tool.spec.description.strip().splitlines()[0]))
            row.envs.append(env_id)
            kinds[tool.spec.kind.value] = kinds.get(tool.spec.kind.value, 0) + 1
            own += name not in shared
        tasks = list(env.tasks)
        test = sum(split_of(t.id) == "test" for t in tasks)
        domains.append(DomainRow(env_id, descriptions[env_id], own, len(bound) - own, kinds, len(tasks),
                                 len(tasks) - test, test))
        env.close()
    return sorted(tools.values(), key=lambda r: r.name), domains


def format_tool_list(rows: Sequence[ToolRow], domain: str | None = None) -> str:
    """Plain-text table of tools: name, kind, defining toolkit, environments (or ``shared`` when all)."""
    width = max((len(r.name) for r in rows), default=4)
    lines = []
    for r in rows:
        where = "" if domain else "  [" + ", ".join(_unversioned(e) for e in r.envs) + "]"
        lines.append(f"{r.name:<{width}}  {r.kind:<6}  {r.toolkit}: {r.description}{where}")
    return "\n".join(lines)


def domains_markdown(tools: Sequence[ToolRow], domains: Sequence[DomainRow]) -> str:
    """``docs/domains.md``: the domain table, then every tool by toolkit."""
    n_envs = len(domains)
    everywhere = [t for t in tools if len(t.envs) == n_envs]
    lines = [
        "# Tool-using domains",
        "",
        "Generated from the code by `clinical-gym tools docs --out docs/domains.md`; do not edit by hand",
        "(`tests/test_tool_catalogue.py` fails when this page and the code disagree).",
        "",
        f"{n_envs} tool-using environments, {len(tools)} distinct tools, "
        f"{sum(d.tasks for d in domains)} tasks. Each environment offers its own tools (a pathway's phases open "
        f"tools of other domains too) and the {len(everywhere)} tools every domain shares (scoring instruments, "
        "knowledge search, `think`, `submit_answer`); counts are over all of an environment's tasks. "
        "How to add a domain: [domains/README.md](../domains/README.md).",
        "",
        "| environment | own tools | shared tools | all tools | read / write / think / submit | tasks (train / test) |",
        "|---|---|---|---|---|---|",
    ]
    for d in domains:
        kinds = " / ".join(str(d.kinds.get(k, 0)) for k in ("read", "write", "think", "submit"))
        lines.append(f"| `{d.env_id}` | {d.own_tools} | {d.shared_tools} | {d.tools} | {kinds} | "
                     f"{d.tasks} ({d.train_tasks} / {d.test_tasks}) |")
    lines += ["", "## Environments", ""]
    lines += [f"- `{d.env_id}`: {d.description}" for d in domains]
    by_toolkit: dict[str, list[ToolRow]] = {}
    for t in tools:
        by_toolkit.setdefault(t.toolkit, []).append(t)
    lines += ["", "## Tools by toolkit", ""]
    for toolkit in sorted(by_toolkit, key=lambda k: (k == EPISODE_TOOLKIT, k)):
        rows = by_toolkit[toolkit]
        lines += [f"### {toolkit} ({len(rows)})", "", "| tool | kind | environments | what it does |",
                  "|---|---|---|---|"]
        for t in rows:
            envs = "all" if len(t.envs) == n_envs else ", ".join(_unversioned(e) for e in t.envs)
            lines.append(f"| `{t.name}` | {t.kind} | {envs} | {t.description.replace('|', '/')} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
