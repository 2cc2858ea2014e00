"""Benchmark plots (PNG, matplotlib's Agg backend), per environment: every metric by agent with its 95% interval
(value labels on the bars, lower-is-better marked; metrics that are 0 for every agent are left to the report's
text), the distribution of episode turns by agent as a dot matrix (readable when every episode has the same
length), and pass^k / pass@k against k when tasks were played several times."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from clinical_gym.benchmarks.metrics import MetricSummary, direction
from clinical_gym.benchmarks.records import EpisodeRecord
from clinical_gym.benchmarks.summary import EnvSummary

PANEL_COLUMNS = 4
EMPTY = MetricSummary(mean=None, ci_low=None, ci_high=None, n=0)
DIRECTION_NOTE = {-1: " (lower is better)", 0: " (no better direction)", 1: ""}
BAR_COLOURS = {-1: "tab:red", 0: "tab:gray", 1: "tab:blue"}


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def metric_title(name: str) -> str:
    """A metric's panel title: its words, and its better direction when that is not "higher"."""
    return name.replace("_", " ") + DIRECTION_NOTE[direction(name)]


def plot_metrics(env: EnvSummary, names: Sequence[str], path: Path) -> Path:
    """One panel per metric of ``names``: a horizontal bar per agent (best ranked on top) with its interval and
    its value written beside it."""
    plt = pyplot()
    rows = math.ceil(len(names) / PANEL_COLUMNS)
    columns = min(PANEL_COLUMNS, len(names))
    height = 0.6 + rows * (0.45 * len(env.agents) + 1.2)
    fig, axes = plt.subplots(rows, columns, figsize=(4.4 * columns, height), squeeze=False)
    labels = [a.agent for a in env.agents][::-1]
    for ax, name in zip(axes.flat, names):
        stats = [a.metrics.get(name) or EMPTY for a in env.agents][::-1]
        means = [s.mean if s.mean is not None else 0.0 for s in stats]
        highs = [s.ci_high if s.ci_high is not None else m for m, s in zip(means, stats)]
        errors = [[max(0.0, m - (s.ci_low if s.ci_low is not None else m)) for m, s in zip(means, stats)],
                  [max(0.0, h - m) for m, h in zip(means, highs)]]
        ax.barh(labels, means, xerr=errors, capsize=3, color=BAR_COLOURS[direction(name)], alpha=0.75)
        lows = [m - e for m, e in zip(means, errors[0])]
        top, bottom = max([*highs, *means, 0.0]), min([*lows, 0.0])
        span = (top - bottom) or 1.0
        ax.set_xlim(bottom - (0.3 * span if bottom < 0 else 0.0), top + 0.3 * span)
        for y, (mean, low, high, stat) in enumerate(zip(means, lows, highs, stats)):
            text = "n/a" if stat.mean is None else f"{mean:.2f}"
            if mean < 0:  # the label left of a bar that goes left
                ax.text(low - 0.03 * span, y, text, va="center", ha="right", fontsize=8)
            else:
                ax.text(max(mean, high) + 0.03 * span, y, text, va="center", fontsize=8)
        ax.set_title(metric_title(name), fontsize=10)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.suptitle(f"{env.env}: mean and 95% bootstrap interval (clustered by task)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_turns(env: EnvSummary, records: Sequence[EpisodeRecord], path: Path) -> Path:
    """Turns per episode as a dot matrix: a row per agent, a dot per turn count its episodes ended at, the dot's
    area the share of the agent's episodes (written beside it), and the median marked."""
    plt = pyplot()
    agents = [a.agent for a in env.agents]
    counts = {agent: Counter(len(r.turns) for r in records if r.agent == agent) for agent in agents}
    seen = sorted({t for c in counts.values() for t in c}) or [0]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.5 + 0.6 * (seen[-1] - seen[0] + 3)), 1.4 + 0.75 * len(agents)))
    for y, agent in enumerate(reversed(agents)):
        found = counts[agent]
        total = sum(found.values())
        if not total:
            continue
        for turns, n in found.items():
            share = n / total
            area = 40 + 700 * share
            ax.scatter(turns, y, s=area, color="tab:blue", alpha=0.35 + 0.5 * share, zorder=2)
            ax.annotate(f"{share:.0%}", (turns, y), xytext=(math.sqrt(area / math.pi) + 3, 0),
                        textcoords="offset points", va="center", fontsize=8)
        ordered = sorted(t for t, n in found.items() for _ in range(n))
        middle = len(ordered) // 2
        median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
        ax.plot([median, median], [y - 0.42, y - 0.26], color="tab:red", linewidth=2, zorder=3)
    ax.set_yticks(range(len(agents)), list(reversed(agents)), fontsize=9)
    ax.set_ylim(-0.6, len(agents) - 0.4)
    ax.set_xlim(seen[0] - 1, seen[-1] + 1)
    step = max(1, math.ceil((seen[-1] - seen[0] + 2) / 20))
    ax.set_xticks(range(max(0, seen[0] - 1), seen[-1] + 2, step))
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel("turns in the episode\n(dot area and label: share of the agent's episodes; red tick: median)",
                  fontsize=9)
    ax.set_title(f"{env.env}: turns per episode")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_reliability(env: EnvSummary, path: Path) -> Path:
    """pass^k (solid, filled dots) and pass@k (dashed, open squares) against k, one colour per agent, with the
    intervals of pass^k shaded; both start from pass^1 = pass@1."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8.5, 4))
    for i, agent in enumerate(a for a in env.agents if a.reliability):
        colour = f"C{i}"
        for prefix, style, marker in (("pass^", "-", "o"), ("pass@", "--", "s")):
            ks = [1] + sorted(int(n[len(prefix):]) for n in agent.reliability
                              if n.startswith(prefix) and n != "pass^1")
            stats = [agent.reliability["pass^1" if k == 1 else f"{prefix}{k}"] for k in ks]
            solid = prefix == "pass^"
            ax.plot(ks, [s.mean for s in stats], style, marker=marker, color=colour, markersize=7 if solid else 9,
                    markerfacecolor=colour if solid else "none", label=f"{agent.agent}: {prefix}k")
            if solid:
                ax.fill_between(ks, [s.ci_low for s in stats], [s.ci_high for s in stats], color=colour, alpha=0.1)
    ax.set_xlabel("k (trials of the same task)")
    ax.set_ylabel(f"share of tasks ({env.success_metric.replace('_', ' ')})")
    ax.set_ylim(-0.03, 1.03)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"{env.env}: pass^k (all k trials succeed), pass@k (any of k succeeds)", fontsize=10)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
