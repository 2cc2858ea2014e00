"""Training curves of a trainer run: ``<run>/metrics.jsonl`` (``clinical_gym.trainers.common.metrics_log``) drawn as PNG panels,
the ones that show length explosion and multi-turn collapse: reward, accuracy, response length, turns per episode,
tool calls, KL to the reference and within-group reward std."""

from __future__ import annotations

import json
import re
from pathlib import Path

from clinical_gym.benchmarks.plots import pyplot

METRICS_FILE = "metrics.jsonl"
OUTPUT_FILE = "training_curves.png"
# (panel title, metric key; a regex where the key names the environment family)
PANELS: tuple[tuple[str, str], ...] = (
    ("reward", r"rollout/reward_mean"),
    ("accuracy (success rate)", r"env/[^/]+/success_rate"),
    ("response length (tokens per turn)", r"rollout/gen_tokens_per_turn"),
    ("turns per episode", r"rollout/turns_per_episode"),
    ("tool calls per episode", r"rollout/tool_calls_per_episode"),
    ("KL to the reference", r"losses/kl_ref"),
    ("within-group reward std", r"rollout/group_reward_std"),
)
COLUMNS = 4


def read_metrics(run: Path) -> list[dict]:
    """The rows of ``run/metrics.jsonl`` (lines that are not JSON objects are skipped)."""
    path = Path(run) / METRICS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no {METRICS_FILE} in {run}")
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and "step" in row:
            rows.append(row)
    if not rows:
        raise ValueError(f"{path} holds no metric rows")
    return rows


def series(rows: list[dict], pattern: str) -> tuple[str | None, list[float], list[float]]:
    """The first key matching ``pattern`` and its (step, value) points (null values skipped)."""
    regex = re.compile(f"^{pattern}$")
    key = next((k for row in rows for k in row if regex.match(k)), None)
    points = [(row["step"], row[key]) for row in rows if key is not None and row.get(key) is not None]
    return key, [p[0] for p in points], [p[1] for p in points]


def plot_training_curves(run: Path, out: Path | None = None) -> Path:
    """Draw every panel into one PNG (default ``run/plots/training_curves.png``); returns its path."""
    rows = read_metrics(run)
    path = Path(out) if out is not None else Path(run) / "plots" / OUTPUT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    plt = pyplot()
    rows_count = -(-len(PANELS) // COLUMNS)
    fig, axes = plt.subplots(rows_count, COLUMNS, figsize=(4 * COLUMNS, 3.2 * rows_count), squeeze=False)
    for ax, (title, pattern) in zip(axes.flat, PANELS):
        key, steps, values = series(rows, pattern)
        if values:
            ax.plot(steps, values, marker="o" if len(values) < 30 else None, markersize=3)
            ax.set_xlabel("step", fontsize=8)
        else:
            ax.text(0.5, 0.5, "not logged", ha="center", va="center", transform=ax.transAxes, color="grey")
        ax.set_title(title if key is None else f"{title}\n{key}", fontsize=9)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(PANELS):]:
        ax.set_visible(False)
    fig.suptitle(f"training curves: {Path(run).resolve().name}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
