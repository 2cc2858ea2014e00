"""Per-step metrics: one JSON line each in ``<output_dir>/metrics.jsonl``, the same values to TensorBoard / W&B
through accelerate's trackers when they are installed, and a progress bar."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

# accelerate tracker name -> the package it needs
TRACKER_PACKAGES = {"tensorboard": "tensorboard", "wandb": "wandb"}


def trackers_for(report_to: str) -> list[str]:
    """The accelerate trackers to start: ``"auto"`` is TensorBoard when installed (W&B needs asking by name),
    ``"all"`` every installed one, a name that tracker (``ValueError`` when its package is missing)."""
    installed = [name for name, package in TRACKER_PACKAGES.items() if importlib.util.find_spec(package)]
    if report_to == "none":
        return []
    if report_to == "auto":
        return [n for n in installed if n == "tensorboard"]
    if report_to == "all":
        return installed
    if report_to not in installed:
        raise ValueError(f"report_to={report_to!r} needs the {TRACKER_PACKAGES[report_to]} package")
    return [report_to]


class MetricsLog:
    """Writes each step's metrics (main process only). Non-finite values are written to JSON as null. Rows of
    steps after ``start_step`` already in the file (from a run that died after logging them but before its next
    checkpoint, or from an older run) are dropped, so every step appears once."""

    def __init__(self, output_dir: str | Path, accelerator: Any, total_steps: int, start_step: int,
                 progress: bool = True) -> None:
        self.accelerator = accelerator
        self.path = Path(output_dir) / "metrics.jsonl"
        self.bar = None
        if accelerator.is_main_process:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._keep_steps_up_to(start_step)
            if progress:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total_steps, initial=start_step, desc="train", unit="step", dynamic_ncols=True)

    def log(self, step: int, metrics: dict[str, float]) -> None:
        if not self.accelerator.is_main_process:
            return
        row = {"step": step, **{k: _finite_or_none(v) for k, v in metrics.items()}}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        if self.accelerator.trackers:
            self.accelerator.log({k: v for k, v in row.items() if v is not None and k != "step"}, step=step)
        if self.bar is not None:
            self.bar.update(1)
            shown = ("rollout/reward_mean", "losses/kl_ref")
            self.bar.set_postfix({k.split("/")[-1]: f"{metrics[k]:.3g}" for k in shown
                                  if k in metrics and math.isfinite(metrics[k])})

    def _keep_steps_up_to(self, step: int) -> None:
        if not self.path.exists():
            return
        rows = [line for line in self.path.read_text(encoding="utf-8").splitlines()
                if line.strip() and json.loads(line).get("step", 0) <= step]
        self.path.write_text("".join(row + "\n" for row in rows), encoding="utf-8")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        if self.accelerator.trackers:
            self.accelerator.end_training()


def _finite_or_none(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None
