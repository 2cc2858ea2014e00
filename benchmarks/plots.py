"""Benchmark plots (PNG, matplotlib's Agg backend): per environment, every metric by agent with its 95% interval
as error bars, and the distribution of episode turns by agent."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from clinical_gym.benchmarks.metrics import MetricSummary
from clinical_gym.benchmarks.records import EpisodeRecord
from clinical_gym.benchmarks.summary import EnvSummary

PANEL_COLUMNS = 4
EMPTY = MetricSummary(mean=None, ci_low=None, ci_high=None, n=0)


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_metrics(env: EnvSummary, names: Sequence[str], path: Path) -> Path:
    """One panel per metric of ``names``: a horizontal bar per agent (best ranked on top) with its interval."""
    plt = pyplot()
    rows = math.ceil(len(names) / PANEL_COLUMNS)
    height = 0.5 + rows * (0.45 * len(env.agents) + 1.2)
    fig, axes = plt.subplots(rows, PANEL_COLUMNS, figsize=(4.2 * PANEL_COLUMNS, height), squeeze=False)
    labels = [a.agent for a in env.agents][::-1]
    for ax, name in zip(axes.flat, names):
        stats = [a.metrics.get(name) or EMPTY for a in env.agents][::-1]
        means = [s.mean if s.mean is not None else 0.0 for s in stats]
        errors = [[max(0.0, m - (s.ci_low if s.ci_low is not None else m)) for m, s in zip(means, stats)],
                  [max(0.0, (s.ci_high if s.ci_high is not None else m) - m) for m, s in zip(means, stats)]]
        ax.barh(labels, means, xerr=errors, capsize=3, color="tab:blue", alpha=0.8)
        ax.set_title(name.replace("_", " "), fontsize=10)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.suptitle(f"{env.env}: mean and 95% bootstrap interval", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_turns(env: EnvSummary, records: Sequence[EpisodeRecord], path: Path) -> Path:
    """The share of episodes ending after each number of turns: bars side by side, one colour per agent."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    counts = range(max((len(r.turns) for r in records), default=0) + 1)
    width = 0.8 / len(env.agents)
    for i, agent in enumerate(env.agents):
        turns = [len(r.turns) for r in records if r.agent == agent.agent] or [0]
        shares = [sum(t == k for t in turns) / len(turns) for k in counts]
        ax.bar([k - 0.4 + (i + 0.5) * width for k in counts], shares, width=width, label=agent.agent)
    ax.set_xticks(list(counts))
    ax.set_xlabel("turns in the episode")
    ax.set_ylabel("share of episodes")
    ax.set_title(f"{env.env}: turns per episode")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
