"""``clinical-gym plot RUN_DIR``: a trainer run's ``metrics.jsonl`` as PNG panels (reward, accuracy, response length,
turns per episode, tool calls, KL, within-group std), written to ``RUN_DIR/plots/training_curves.png``."""

from __future__ import annotations

import argparse
from pathlib import Path

from clinical_gym.cli.errors import CLIError


def cmd_plot(args: argparse.Namespace) -> int:
    from clinical_gym.benchmarks.training_curves import plot_training_curves

    try:
        path = plot_training_curves(Path(args.run_dir), Path(args.out) if args.out else None)
    except (FileNotFoundError, ValueError, ImportError) as e:
        raise CLIError(str(e)) from None
    print(path)
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    plot = sub.add_parser("plot", help="draw a training run's metrics as PNG panels")
    plot.add_argument("run_dir", help="trainer output folder (holds metrics.jsonl)")
    plot.add_argument("--out", help="PNG path (default RUN_DIR/plots/training_curves.png)")
    plot.set_defaults(func=cmd_plot)
