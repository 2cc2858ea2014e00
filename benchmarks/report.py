"""The report of a benchmark folder: ``summary.json``, ``report.md`` (per environment, agents ranked in rows with
every metric side by side, pass^k when tasks were repeated, plus a one-table overview and where the results came
from) and ``plots/`` (metric by agent with error bars, turns per episode, pass^k against k)."""

from __future__ import annotations

import json
from pathlib import Path

from clinical_gym.benchmarks.metrics import MetricSummary, direction
from clinical_gym.benchmarks.plots import plot_metrics, plot_reliability, plot_turns
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


def _measured(env: EnvSummary) -> list[str]:
    names = list(dict.fromkeys(n for a in env.agents for n in a.metrics))
    return [n for n in names if any(a.metrics.get(n) and a.metrics[n].mean is not None for a in env.agents)]


def zero_metrics(env: EnvSummary) -> list[str]:
    """The metrics every agent scored 0 on in every episode (said in one line instead of a column and a panel)."""
    def zero(stat: MetricSummary | None) -> bool:
        return stat is None or stat.mean is None or (stat.mean == 0 and stat.ci_low == 0 and stat.ci_high == 0)

    return [n for n in _measured(env) if all(zero(a.metrics.get(n)) for a in env.agents)]


def _shown_metrics(env: EnvSummary) -> list[str]:
    hidden = set(zero_metrics(env))
    return [n for n in _measured(env) if n not in hidden]


def metric_heading(name: str) -> str:
    """A metric's column heading: its words, with ↓ when lower is better."""
    return name.replace("_", " ") + (" ↓" if direction(name) < 0 else "")


def ranking_sentence(env: EnvSummary) -> str:
    primary = env.primary_metric.replace("_", " ")
    then = "" if env.primary_metric == "reward" else ", then reward"
    return f"Ranked by {primary}{then}; equal agents share a rank."


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
    columns = ["rank", "agent", "what it is", "episodes", "tasks", "failed", "errors", *map(metric_heading, names)]
    head = "| " + " | ".join(columns) + " |"
    lines = [head, "|" + "---|" * (7 + len(names))]
    for a in env.agents:
        cells = [str(a.rank), a.agent, a.kind, str(a.episodes), str(a.tasks), str(a.failed), str(a.errors)]
        lines.append("| " + " | ".join(cells + [cell(a.metrics.get(n)) for n in names]) + " |")
    return "\n".join(lines)


def reliability_table(env: EnvSummary) -> str:
    """pass^k and pass@k by agent (agents whose tasks were all played at least twice), or an empty string."""
    agents = [a for a in env.agents if a.reliability]
    if not agents:
        return ""
    most = max(int(n[len("pass^"):]) for a in agents for n in a.reliability if n.startswith("pass^"))
    ks = sorted({k for k in (1, 2, 4, 8, 16, 32) if k < most} | {most})  # every k is in summary.json and the plot
    names = [f"pass^{k}" for k in ks] + [f"pass@{k}" for k in ks if k > 1]
    success = env.success_metric.replace("_", " ")
    lines = [f"Reliability over repeated trials of each task (success: {success}): pass^k is the chance that all k "
             "trials of a task succeed, pass@k that at least one does (tau2-bench's estimators, averaged over "
             "tasks; intervals from resampling tasks; every k is in summary.json and the pass_k plot).", "",
             "| agent | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
    lines += [f"| {a.agent} | " + " | ".join(cell(a.reliability.get(n)) for n in names) + " |" for a in agents]
    return "\n".join(lines)


def provenance_line(run: dict) -> str:
    """Where the results came from, in one sentence (the details are in ``run.json``)."""
    found = run.get("provenance") or {}
    package = found.get("clinical_gym") or {}
    git = package.get("git") or {}
    parts = [f"clinical-gym {package.get('version') or '(version unknown)'}"]
    if git.get("commit"):
        parts.append(f"commit {git['commit'][:10]}" + (" with uncommitted changes" if git.get("dirty") else ""))
    if found.get("python"):
        parts.append(f"Python {found['python']}")
    if not found:
        return "run.json holds the settings of this run."
    return "Produced by " + ", ".join(parts) + "; run.json holds every setting and the environment versions."


def render_report(summary: Summary, run: dict, plots: dict[str, list[str]]) -> str:
    trials = int(run.get("trials") or 1)
    parts = [
        "# Benchmark report", "",
        f"Seed {summary.seed}, split {run.get('split')}, cases {run.get('cases') or 'each environment’s own'}"
        + (f", {trials} trials per task" if trials > 1 else "") + ". "
        "Cells are means over the scored episodes with 95% bootstrap intervals [low, high], clustered by task "
        "(tasks are resampled, then episodes within them, so repeats of a task are not independent evidence). "
        "Episodes whose environment failed (errors) are left out of the means; failed agent episodes score 0 on "
        "outcome metrics. ↓ marks metrics where lower is better; turns and tool calls have no better direction. "
        "The oracle acts on the ground truth: it is the upper bound, not a competitor.", "",
        provenance_line(run), "",
        "## Overview", "", overview_table(summary), ""]
    for env in summary.envs:
        parts += [f"## {env.env} ({env.family})", "", ranking_sentence(env), "", env_table(env), ""]
        zeros = zero_metrics(env)
        if zeros:
            parts += [f"0 for every agent in every episode: {', '.join(map(metric_heading, zeros))}.", ""]
        reliability = reliability_table(env)
        if reliability:
            parts += [reliability, ""]
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
        if any(a.reliability for a in env.agents):
            files.append(plot_reliability(env, out / PLOTS_DIR / f"{env.env}_pass_k.png"))
        plots[env.env] = [str(f.relative_to(out)) for f in files]
    path = out / REPORT_FILE
    path.write_text(render_report(summary, run, plots), encoding="utf-8")
    return path
