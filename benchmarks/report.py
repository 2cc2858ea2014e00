"""The report of a benchmark folder: ``summary.json``, ``report.md`` (per environment, agents ranked in rows with
every metric side by side, plus a one-table overview) and ``plots/`` (metric by agent with error bars, turns)."""

from __future__ import annotations

import json
from pathlib import Path

from clinical_gym.benchmarks.metrics import MetricSummary
from clinical_gym.benchmarks.plots import plot_metrics, plot_turns
from clinical_gym.benchmarks.records import RUN_FILE, read_records
from clinical_gym.benchmarks.summary import EnvSummary, Summary, build_summary

SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.md"
PLOTS_DIR = "plots"


def cell(stat: MetricSummary | None) -> str:
    """``mean [low, high]`` with two decimals, or a dash when there is nothing to show."""
    if stat is None or stat.mean is None:
        return "–"
    return f"{stat.mean:.2f} [{stat.ci_low:.2f}, {stat.ci_high:.2f}]"


def _shown_metrics(env: EnvSummary) -> list[str]:
    names = list(dict.fromkeys(n for a in env.agents for n in a.metrics))
    return [n for n in names if any(a.metrics.get(n) and a.metrics[n].mean is not None for a in env.agents)]


def overview_table(summary: Summary) -> str:
    """Agents (rows) by environment (columns): each environment's primary metric."""
    agents = list(dict.fromkeys(a.agent for env in summary.envs for a in env.agents))
    head = "| agent | " + " | ".join(f"{e.env} {e.primary_metric}" for e in summary.envs) + " |"
    lines = [head, "|" + "---|" * (len(summary.envs) + 1)]
    for agent in agents:
        cells = []
        for env in summary.envs:
            found = next((a for a in env.agents if a.agent == agent), None)
            cells.append(cell(found.metrics.get(env.primary_metric)) if found else "n/a")
        lines.append(f"| {agent} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def env_table(env: EnvSummary) -> str:
    """Agents ranked in rows, counts and every metric in columns."""
    names = _shown_metrics(env)
    columns = ["rank", "agent", "what it is", "episodes", "failed", "errors", *(n.replace("_", " ") for n in names)]
    head = "| " + " | ".join(columns) + " |"
    lines = [head, "|" + "---|" * (6 + len(names))]
    for a in env.agents:
        cells = [str(a.rank), a.agent, a.kind, str(a.episodes), str(a.failed), str(a.errors)]
        lines.append("| " + " | ".join(cells + [cell(a.metrics.get(n)) for n in names]) + " |")
    return "\n".join(lines)


def render_report(summary: Summary, run: dict, plots: dict[str, list[str]]) -> str:
    parts = [
        "# Benchmark report", "",
        f"Seed {summary.seed}, split {run.get('split')}, cases {run.get('cases') or 'each environment’s own'}. "
        "Cells are means over the scored episodes with 95% bootstrap intervals [low, high]. Episodes whose "
        "environment failed (errors) are left out of the means; failed agent episodes score 0 on outcome metrics. "
        "The oracle acts on the ground truth: it is the upper bound, not a competitor.", "",
        "## Overview", "", overview_table(summary), ""]
    for env in summary.envs:
        parts += [f"## {env.env} ({env.family})", "",
                  f"Ranked by {env.primary_metric.replace('_', ' ')}, then reward; equal agents share a rank.", "",
                  env_table(env), ""]
        parts += [f"![{Path(p).stem}]({p})" for p in plots.get(env.env, [])] + [""]
    return "\n".join(parts)


def read_summary(out: Path) -> Summary:
    return Summary.model_validate_json((Path(out) / SUMMARY_FILE).read_text(encoding="utf-8"))


def write_report(out: Path) -> Path:
    """Summarize ``out/results.jsonl`` into ``summary.json``, ``report.md`` and ``plots/``; the path of the report."""
    out = Path(out)
    run = json.loads((out / RUN_FILE).read_text(encoding="utf-8")) if (out / RUN_FILE).exists() else {}
    records = read_records(out)
    summary = build_summary(records, int(run.get("seed", 0)))
    (out / SUMMARY_FILE).write_text(summary.model_dump_json(indent=1), encoding="utf-8")
    (out / PLOTS_DIR).mkdir(exist_ok=True)
    plots: dict[str, list[str]] = {}
    for env in summary.envs:
        env_records = [r for r in records if r.env == env.env]
        files = [plot_turns(env, env_records, out / PLOTS_DIR / f"{env.env}_turns.png")]
        if _shown_metrics(env):
            files.insert(0, plot_metrics(env, _shown_metrics(env), out / PLOTS_DIR / f"{env.env}_metrics.png"))
        plots[env.env] = [str(f.relative_to(out)) for f in files]
    path = out / REPORT_FILE
    path.write_text(render_report(summary, run, plots), encoding="utf-8")
    return path
