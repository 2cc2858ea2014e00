"""Proof of learning: GRPO, PPO and TT-OPD against their SFT start on held-out clinical episodes.

Do the trainers make a policy better than where it started, on clinical episodes it never trained on?

    python benchmarks/efficacy.py --preset smoke --out runs/efficacy-smoke     # SmolLM2, 2 CPU cores, minutes
    python benchmarks/efficacy.py --preset cpu --out runs/efficacy-cpu         # about an hour on 2 cores
    python benchmarks/efficacy.py --preset gpu --out runs/efficacy-gpu         # one GPU, vLLM when installed
    python -m clinical_gym.benchmarks.efficacy --preset smoke --envs ClinicalInquiry-v1 --algorithms grpo --seeds 0,1

For each environment of the preset (``clinical_gym.benchmarks.learning.presets``): the base model is evaluated on
the held-out episodes; expert conversations of the train split warm-start it with LoRA SFT (what ``clinical-gym data
expert`` and ``clinical-gym train sft`` do); GRPO, PPO and TT-OPD each train from the SFT model on the train split,
once per seed; every stage is evaluated greedily on the same held-out episodes with the benchmark's metrics. Each
step base -> SFT and SFT -> algorithm is a paired comparison of the primary metric (accuracy on ClinicalInquiry,
reward on the tool domain) with a 95% bootstrap interval clustered by case.

``--out DIR`` gets ``efficacy.json`` (``{"results": [{"env", "algorithm", "start", "trained", "delta",
"delta_ci_low", "delta_ci_high", "episodes", "seed", ...}], "settings": {...}}``), ``report.md``, ``<env>/curves.png``
(the algorithms' rollout reward and success rate by step) and each stage's folders (``<env>/expert``, ``sft``,
``rl/<algorithm>-seed<k>``, and ``eval`` with the benchmark's own ``report.md``). Every stage is resumable: running
into the same folder again skips what is there.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from clinical_gym.benchmarks.learning import stages
from clinical_gym.benchmarks.learning.paired import (
    REPORT_FILE,
    RESULTS_FILE,
    paired_result,
    plot_curves,
    results_table,
    write_report,
    write_results,
)
from clinical_gym.benchmarks.learning.presets import ALGORITHMS, PRESETS, Preset
from clinical_gym.benchmarks.learning.stages import EnvRun, Stopwatch


def machine() -> str:
    """The machine the run had, in words: CPU cores, GPU, and the load average when it started."""
    try:
        import torch

        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    except ImportError:  # pragma: no cover - the [train] extra ships torch
        gpu = "no GPU"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()} CPU cores, {gpu}, load average {load:.1f} at the start"


def check_choice(preset: Preset, envs: Sequence[str] | None, algorithms: Sequence[str],
                 seeds: Sequence[int] | None) -> None:
    """``ValueError`` (one line) for an environment the preset lacks, an unknown algorithm or no seed."""
    unknown = [e for e in envs or () if e not in {s.env_id for s in preset.envs}]
    if unknown or (envs is not None and not envs):
        raise ValueError(f"the {preset.name} preset has no {', '.join(unknown) or 'environment given'}; it has "
                         f"{', '.join(e.env_id for e in preset.envs)}")
    bad = [a for a in algorithms if a not in ALGORITHMS]
    if bad or not algorithms:
        raise ValueError(f"unknown algorithm {', '.join(bad) or '(none given)'}; choose from {', '.join(ALGORITHMS)}")
    if seeds is not None and not seeds:
        raise ValueError("give at least one seed")


def run_efficacy(preset: Preset, out: Path, *, envs: Sequence[str] | None = None,
                 algorithms: Sequence[str] = ALGORITHMS, seeds: Sequence[int] | None = None,
                 command: str = "") -> list[dict[str, Any]]:
    """Run (or resume) the preset into ``out``; returns the rows of ``efficacy.json``."""
    check_choice(preset, envs, algorithms, seeds)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [e for e in preset.envs if envs is None or e.env_id in envs]
    seeds = list(preset.seeds if seeds is None else seeds)
    if preset.torch_threads:
        import torch

        torch.set_num_threads(preset.torch_threads)
    watch = Stopwatch()
    settings = {"preset": preset.settings(), "algorithms": list(algorithms), "seeds": seeds, "command": command,
                "machine": machine(), "timings": watch.stages, "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    results: list[dict[str, Any]] = []
    curves: dict[str, str] = {}
    base = watch.run("base model", lambda: stages.base_model(out, preset))
    for env in chosen:
        run = EnvRun(env, out / env.env_id)
        name = env.env_id
        base_records = watch.run(f"{name}: evaluate base",
                                 lambda: stages.evaluate(run, preset, "base", base, checkpoint=False))
        data = watch.run(f"{name}: expert data", lambda: stages.expert_data(run))
        sft = watch.run(f"{name}: SFT", lambda: stages.sft(run, preset, base, data))
        start = watch.run(f"{name}: evaluate sft", lambda: stages.evaluate(run, preset, "sft", str(sft)))
        results.append(paired_result(name, "sft", None, base_records, start, stage="base -> sft"))
        write_results(out, results, settings)
        runs: dict[str, Path] = {}
        for algorithm in (a for a in algorithms if a in env.algorithms):
            for seed in seeds:
                label = f"{algorithm}-seed{seed}"
                folder = watch.run(f"{name}: train {label}",
                                   lambda: stages.rl(run, preset, algorithm, sft / "model", seed))
                runs[label] = folder
                trained = watch.run(f"{name}: evaluate {label}",
                                    lambda: stages.evaluate(run, preset, label, str(folder)))
                results.append(paired_result(name, algorithm, seed, start, trained, stage="sft -> rl",
                                             train_wall_s=watch.stages[f"{name}: train {label}"]["wall_s"]))
                write_results(out, results, settings)
        from clinical_gym.benchmarks.report import write_report as write_bench_report
        from clinical_gym.benchmarks.training_curves import plot_training_curves

        write_bench_report(run.folder / stages.EVAL_DIR)
        for folder in runs.values():
            plot_training_curves(folder)
        figure = plot_curves(run.folder, runs)
        if figure is not None:
            curves[name] = str(figure.relative_to(out))
    settings["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write_results(out, results, settings)
    write_report(out, results, settings, curves)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="smoke", help="what to run (default smoke)")
    parser.add_argument("--out", required=True, help="output folder (rerun into it to resume)")
    parser.add_argument("--envs", help="comma-separated environment ids of the preset (default: all of them)")
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS),
                        help=f"comma-separated algorithms (default {','.join(ALGORITHMS)})")
    parser.add_argument("--seeds", help="comma-separated RL seeds (default: the preset's)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: the preset's; on a machine "
                                                    "shared with other jobs, 1 is often faster)")
    args = parser.parse_args(argv)
    preset = PRESETS[args.preset]
    try:
        seeds = None if args.seeds is None else [int(s) for s in args.seeds.split(",") if s.strip()]
        if args.threads is not None:
            if args.threads < 1:
                raise ValueError(f"--threads must be at least 1, got {args.threads}")
            preset = replace(preset, torch_threads=args.threads)
        envs = None if args.envs is None else [e.strip() for e in args.envs.split(",") if e.strip()]
        algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
        check_choice(preset, envs, algorithms, seeds)
    except ValueError as e:
        print(f"efficacy: error: {e}", file=sys.stderr)
        return 2
    command = "python benchmarks/efficacy.py " + shlex.join(sys.argv[1:] if argv is None else list(argv))
    results = run_efficacy(preset, Path(args.out), envs=envs, algorithms=algorithms, seeds=seeds, command=command)
    print(results_table(results))
    print(f"\nwrote {Path(args.out) / RESULTS_FILE} and {Path(args.out) / REPORT_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
