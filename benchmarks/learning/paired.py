"""Start -> trained on the held-out episodes: paired differences, ``efficacy.json``, ``report.md`` and the curves.

Every stage played the same held-out episodes (case and reset seed), so each comparison pairs them: the difference
trained - start per episode, its mean with a 95% bootstrap interval clustered by case
(``clinical_gym.benchmarks.compare.compare_agents``). The primary metric is the benchmark's (accuracy on
ClinicalInquiry, reward on the tool domains); every other metric's difference is kept in ``metrics``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clinical_gym.benchmarks.compare import compare_agents
from clinical_gym.benchmarks.metrics import PRIMARY_METRIC
from clinical_gym.benchmarks.records import EpisodeRecord
from clinical_gym.benchmarks.training_curves import read_metrics, series

RESULTS_FILE = "efficacy.json"
REPORT_FILE = "report.md"
CURVES_FILE = "curves.png"


def paired_result(env: str, algorithm: str, seed: int | None, start: Sequence[EpisodeRecord],
                  trained: Sequence[EpisodeRecord], **extra: Any) -> dict[str, Any]:
    """One row of ``efficacy.json``: the primary metric of ``start`` and ``trained`` on their paired episodes, the
    mean difference and its interval, and every metric's difference under ``metrics``."""
    comparison = compare_agents(env, start, trained)
    if not comparison.metrics:
        raise ValueError(f"{env}: {algorithm} shares no scored episode with its start")
    family = (trained or start)[0].family
    metric = PRIMARY_METRIC[family]
    by_name = {d.metric: d for d in comparison.metrics}
    primary = by_name[metric]
    return {"env": env, "algorithm": algorithm, "seed": seed, "metric": metric,
            "start": primary.mean_a, "trained": primary.mean_b, "delta": primary.diff,
            "delta_ci_low": primary.ci_low, "delta_ci_high": primary.ci_high, "episodes": primary.n,
            "cases": comparison.tasks, "start_agent": comparison.agent_a, "trained_agent": comparison.agent_b,
            "improved": primary.ci_low > 0, **extra,
            "metrics": {d.metric: {"start": d.mean_a, "trained": d.mean_b, "delta": d.diff, "ci_low": d.ci_low,
                                   "ci_high": d.ci_high, "episodes": d.n} for d in comparison.metrics}}


def write_results(out: Path, results: list[dict[str, Any]], settings: dict[str, Any]) -> Path:
    path = Path(out) / RESULTS_FILE
    path.write_text(json.dumps({"results": results, "settings": settings}, indent=1), encoding="utf-8")
    return path


def _number(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) >= 1 else f"{value:.2f}"


def results_table(results: Sequence[dict[str, Any]]) -> str:
    """Markdown: one row per comparison (environment, start -> trained, seed, primary metric, paired difference)."""
    lines = ["| environment | stage | seed | metric | start | trained | Δ [95% CI] | episodes (cases) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        stage = f"{r['start_agent']} → {r['trained_agent']}"
        mark = " ✓" if r["delta_ci_low"] > 0 else (" ✗" if r["delta_ci_high"] < 0 else "")
        lines.append(f"| {r['env']} | {stage} | {'–' if r['seed'] is None else r['seed']} | {r['metric']} | "
                     f"{_number(r['start'])} | {_number(r['trained'])} | {r['delta']:+.2f} "
                     f"[{r['delta_ci_low']:+.2f}, {r['delta_ci_high']:+.2f}]{mark} | {r['episodes']} "
                     f"({r['cases']}) |")
    return "\n".join(lines)


def write_report(out: Path, results: Sequence[dict[str, Any]], settings: dict[str, Any],
                 curves: dict[str, str]) -> Path:
    """``report.md``: the preset, the paired results, what each stage cost, and where the curves are."""
    preset = settings["preset"]
    lines = [f"# Efficacy: {preset['name']}", "", preset["description"] + ".", "",
             f"Command: `{settings['command']}`", "",
             "Every stage is evaluated greedily on the same held-out episodes (test split: other patients or "
             "tasks than those trained on). Δ is trained − start per paired episode, with a 95% bootstrap interval "
             "clustered by case; ✓ marks an interval above 0, ✗ one below 0.", "",
             results_table(results), ""]
    timings = settings.get("timings", {})
    if timings:
        lines += ["## Time per stage", "",
                  "Wall-clock seconds, and the process's CPU seconds (" + settings.get("machine", "") + ").", "",
                  "| stage | wall s | CPU s |", "|---|---|---|"]
        lines += [f"| {name} | {t['wall_s']} | {t['cpu_s']} |" for name, t in timings.items()]
        lines.append("")
    if curves:
        lines += ["## Training curves", ""] + [f"* {env}: `{path}`" for env, path in curves.items()] + [""]
    lines += ["Per-stage benchmark reports: `<env>/eval/report.md`; each run's metrics: "
              "`<env>/rl/<algorithm>-seed<k>/metrics.jsonl` (curves in its `plots/`).", ""]
    path = Path(out) / REPORT_FILE
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def plot_curves(env_folder: Path, runs: dict[str, Path]) -> Path | None:
    """``<env>/curves.png``: per run (label -> run folder), the mean episode reward and the success rate of the
    rollouts against the training step."""
    from clinical_gym.benchmarks.plots import pyplot

    panels = (("reward of the rollouts", r"rollout/reward_mean"), ("success rate of the rollouts",
                                                                  r"env/[^/]+/success_rate"))
    found = {label: read_metrics(run) for label, run in runs.items() if (Path(run) / "metrics.jsonl").is_file()}
    if not found:
        return None
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 3.6), squeeze=False)
    for ax, (title, pattern) in zip(axes[0], panels):
        for label, rows in found.items():
            _, steps, values = series(rows, pattern)
            if values:
                ax.plot(steps, values, marker="o", markersize=3, label=label)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("step", fontsize=9)
        ax.tick_params(labelsize=8)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"training curves: {Path(env_folder).name}", fontsize=11)
    fig.tight_layout()
    path = Path(env_folder) / CURVES_FILE
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
