"""Two benchmark folders side by side (``clinical-gym bench compare``): for every environment and agent in both
(or the single agent of each, when the labels differ), each metric's difference second - first with a 95%
bootstrap interval of the difference."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from clinical_gym.benchmarks.metrics import bootstrap_diff_ci, metric_values
from clinical_gym.benchmarks.records import EpisodeRecord, read_records

SEED = 0


def _grouped(records: Sequence[EpisodeRecord]) -> dict[str, dict[str, list[EpisodeRecord]]]:
    groups: dict[str, dict[str, list[EpisodeRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in sorted(records, key=lambda r: r.episode):
        groups[r.env][r.agent].append(r)
    return groups


def pairs(first: Sequence[EpisodeRecord], second: Sequence[EpisodeRecord]) -> list[tuple[str, str, str]]:
    """(env, agent in first, agent in second) to compare."""
    a, b = _grouped(first), _grouped(second)
    found = []
    for env in (e for e in a if e in b):
        shared = [agent for agent in a[env] if agent in b[env]]
        if shared:
            found += [(env, agent, agent) for agent in shared]
        elif len(a[env]) == 1 and len(b[env]) == 1:
            found.append((env, next(iter(a[env])), next(iter(b[env]))))
    return found


def compare_runs(first: Path, second: Path) -> str:
    """The comparison as text; ``ValueError`` when the folders share nothing to compare."""
    one, two = read_records(Path(first)), read_records(Path(second))
    matched = pairs(one, two)
    if not matched:
        raise ValueError(f"{first} and {second} have no environment and agent in common")
    a, b = _grouped(one), _grouped(two)
    lines = [f"difference = {second} - {first} (mean, 95% bootstrap interval)"]
    for env, agent_a, agent_b in matched:
        name = agent_a if agent_a == agent_b else f"{agent_a} -> {agent_b}"
        va, vb = metric_values(a[env][agent_a]), metric_values(b[env][agent_b])
        lines.append(f"\n{env} · {name} (n = {len(a[env][agent_a])} vs {len(b[env][agent_b])})")
        for metric in va:
            xs = [v for v in va[metric] if v is not None]
            ys = [v for v in vb.get(metric, []) if v is not None]
            if not xs or not ys:
                continue
            low, high = bootstrap_diff_ci(xs, ys, seed=SEED)
            diff = sum(ys) / len(ys) - sum(xs) / len(xs)
            lines.append(f"  {metric:<22} {sum(xs) / len(xs):>9.3f} -> {sum(ys) / len(ys):>9.3f}   "
                         f"{diff:+.3f} [{low:+.3f}, {high:+.3f}]")
    return "\n".join(lines)
