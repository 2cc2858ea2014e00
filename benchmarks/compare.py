"""Two agents compared on the episodes both played (``clinical-gym bench compare``): two agents of one run, the same
agent across two runs, or any agent of one run against any agent of another.

Episodes are paired when they are the same episode: the same environment, case (or task) and reset seed, which
runs with the same ``--seed`` share (``clinical_gym.benchmarks.plan``). Each metric's difference B - A is taken
per paired episode; its mean comes with a 95% bootstrap interval clustered by task (resampling tasks, then paired
episodes within them), so the interval reflects the pairing and the repeats of a task. Episodes only one side
played, and environment errors on either side, are left out and counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clinical_gym.benchmarks.metrics import bootstrap_ci, direction, episode_metrics, task_of
from clinical_gym.benchmarks.records import EpisodeRecord, read_records

SEED = 0


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a results folder and, optionally, the agent label to take from it."""

    folder: Path
    agent: str | None = None

    def __str__(self) -> str:
        return f"{self.folder}" + (f" · {self.agent}" if self.agent else "")


@dataclass(frozen=True)
class MetricDifference:
    """One metric over the paired episodes: the means of A and B and the mean of B - A with its interval."""

    metric: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float

    @property
    def verdict(self) -> str:
        """"B better" / "A better" when the interval excludes 0 and the metric has a better direction, else ""."""
        sign = direction(self.metric)
        if sign == 0 or self.ci_low <= 0 <= self.ci_high:
            return ""
        return "B better" if (self.diff > 0) == (sign > 0) else "A better"


@dataclass
class PairedComparison:
    """Agent A and agent B on one environment: how many episodes each had and paired, and the differences."""

    env: str
    agent_a: str
    agent_b: str
    episodes_a: int
    episodes_b: int
    paired: int
    tasks: int
    metrics: list[MetricDifference]


def episode_key(record: EpisodeRecord) -> tuple[str | None, int]:
    """What makes two records the same episode (within one environment): the case or task, and the reset seed."""
    return record.case_id, record.seed


def paired_episodes(first: Sequence[EpisodeRecord],
                    second: Sequence[EpisodeRecord]) -> list[tuple[EpisodeRecord, EpisodeRecord]]:
    """(A, B) for every episode both sides played with a usable result (environment errors left out)."""
    by_key = {episode_key(r): r for r in second if r.status != "error"}
    return [(a, by_key[episode_key(a)]) for a in first if a.status != "error" and episode_key(a) in by_key]


def compare_agents(env: str, a: Sequence[EpisodeRecord], b: Sequence[EpisodeRecord]) -> PairedComparison:
    """The paired comparison of one environment's records of agent A and agent B."""
    pairs = paired_episodes(a, b)
    metrics = []
    if pairs:
        rows = [(episode_metrics(x), episode_metrics(y), task_of(x)) for x, y in pairs]
        for name in rows[0][0]:
            kept = [(ma[name], mb[name], task) for ma, mb, task in rows
                    if ma[name] is not None and mb[name] is not None]
            if not kept:
                continue
            xs, ys, tasks = (np.array([k[0] for k in kept]), np.array([k[1] for k in kept]), [k[2] for k in kept])
            low, high = bootstrap_ci(ys - xs, seed=SEED, clusters=tasks)
            metrics.append(MetricDifference(name, len(kept), float(xs.mean()), float(ys.mean()),
                                            float((ys - xs).mean()), low, high))
    return PairedComparison(env, a[0].agent if a else "", b[0].agent if b else "", len(a), len(b), len(pairs),
                            len({task_of(x) for x, _ in pairs}), metrics)


def _by_env_and_agent(records: Sequence[EpisodeRecord]) -> dict[str, dict[str, list[EpisodeRecord]]]:
    groups: dict[str, dict[str, list[EpisodeRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in sorted(records, key=lambda r: r.episode):
        groups[r.env][r.agent].append(r)
    return groups


def _agent_pairs(a: dict[str, list[EpisodeRecord]], b: dict[str, list[EpisodeRecord]], first: Side,
                 second: Side) -> list[tuple[str, str]]:
    """The (agent A, agent B) labels to compare in one environment: the named ones (a side with one agent needs no
    name), else every label both sides have, else the single agent of each side."""
    if first.agent is None and second.agent is None:
        common = [name for name in a if name in b]
        if common:
            return [(name, name) for name in common]
        if len(a) == 1 and len(b) == 1:
            return [(next(iter(a)), next(iter(b)))]
        return []
    chosen = []
    for side, agents, flag in ((first, a, "--agent-a"), (second, b, "--agent-b")):
        if side.agent is None and len(agents) > 1:
            raise ValueError(f"{side.folder} has agents {', '.join(sorted(agents))}: say which one ({flag})")
        chosen.append(side.agent if side.agent is not None else next(iter(agents)))
    return [(chosen[0], chosen[1])] if chosen[0] in a and chosen[1] in b else []


def compare(first: Side, second: Side) -> list[PairedComparison]:
    """Every comparison of ``first`` (A) and ``second`` (B): per environment both hold, the chosen agents, or each
    agent label present on both sides. ``ValueError`` when there is nothing to compare."""
    a_groups, b_groups = _by_env_and_agent(read_records(first.folder)), _by_env_and_agent(read_records(second.folder))
    for side, groups in ((first, a_groups), (second, b_groups)):
        if side.agent is not None and not any(side.agent in agents for agents in groups.values()):
            known = sorted({name for agents in groups.values() for name in agents})
            raise ValueError(f"no agent {side.agent!r} in {side.folder} (it has {', '.join(known)})")
    if first.folder.resolve() == second.folder.resolve() and (first.agent is None or second.agent is None
                                                              or first.agent == second.agent):
        raise ValueError("comparing a folder with itself: name two different agents (--agent-a, --agent-b)")
    found = []
    for env in (e for e in a_groups if e in b_groups):
        found += [compare_agents(env, a_groups[env][x], b_groups[env][y])
                  for x, y in _agent_pairs(a_groups[env], b_groups[env], first, second)]
    if not found:
        raise ValueError(f"{first} and {second} have no environment with agents to compare")
    if not any(c.paired for c in found):
        raise ValueError(f"{first} and {second} share no episode (same case and reset seed): were they run with "
                         "the same --seed, split and cases?")
    return found


def format_comparison(first: Side, second: Side, comparisons: Sequence[PairedComparison]) -> str:
    """The comparisons as text, one block per environment and pair of agents."""
    lines = [f"A = {first}", f"B = {second}",
             "B - A per paired episode (same case and reset seed): mean with a 95% bootstrap interval clustered by "
             "task. ↓: lower is better; a verdict only where the interval excludes 0."]
    for c in comparisons:
        lines += ["", f"{c.env} · {c.agent_a} vs {c.agent_b}: {c.paired} paired episodes over {c.tasks} tasks "
                      f"(A played {c.episodes_a}, B {c.episodes_b})"]
        if not c.paired:
            lines.append("  no shared episodes: nothing to compare here")
            continue
        width = max(len(m.metric) for m in c.metrics) + 2
        lines.append(f"  {'metric':<{width}} {'A':>9} {'B':>9}   {'B - A':>7} [95% interval]")
        for m in c.metrics:
            name = m.metric + (" ↓" if direction(m.metric) < 0 else "")
            lines.append(f"  {name:<{width}} {m.mean_a:>9.3f} {m.mean_b:>9.3f}   {m.diff:>+7.3f} "
                         f"[{m.ci_low:+.3f}, {m.ci_high:+.3f}]  {m.verdict}".rstrip())
    return "\n".join(lines)


def compare_runs(first: Path, second: Path, agent_a: str | None = None, agent_b: str | None = None) -> str:
    """``bench compare`` as text."""
    a, b = Side(Path(first), agent_a), Side(Path(second), agent_b)
    return format_comparison(a, b, compare(a, b))
