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
from clinical_gym.benchmarks.learning.workers import Workers, plan_jobs, threads_per_job


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
                 command: str = "", jobs: int | None = None) -> list[dict[str, Any]]:
    """Run (or resume) the preset into ``out``; returns the rows of ``efficacy.json``.

    ``jobs`` (default: the preset's) processes run the environments' cold starts side by side, then every RL run
    (environment x algorithm x seed) with its evaluation, each process with its share of the cores; one job runs
    everything in this process, in order. The rows come out in the same order either way."""
    check_choice(preset, envs, algorithms, seeds)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [e for e in preset.envs if envs is None or e.env_id in envs]
    seeds = list(preset.seeds if seeds is None else seeds)
    runs = [(env, a, seed) for env in chosen for a in algorithms if a in env.algorithms for seed in seeds]
    jobs = plan_jobs(preset.jobs if jobs is None else jobs, max(len(chosen), len(runs)))
    threads = threads_per_job(jobs, preset.torch_threads)
    watch = Stopwatch()
    settings = {"preset": preset.settings(), "algorithms": list(algorithms), "seeds": seeds, "command": command,
                "machine": machine(), "jobs": jobs, "threads_per_job": threads, "timings": watch.stages,
                "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    wall = time.perf_counter()
    results: dict[tuple, dict[str, Any]] = {}
    folders: dict[str, dict[str, Path]] = {env.env_id: {} for env in chosen}

    def publish(key: tuple, row: dict[str, Any]) -> None:
        results[key] = row
        write_results(out, [results[k] for k in sorted(results)], settings)

    with Workers(jobs, threads) as workers:
        base = watch.run("base model", lambda: stages.base_model(out, preset))
        starts = {workers.submit(stages.cold_start, preset, env, out / env.env_id, base): (k, env)
                  for k, env in enumerate(chosen)}
        trained = {}
        for future in workers.completed(starts):
            k, env = starts[future]
            start: stages.ColdStart = future.result()
            watch.stages.update(start.timings)
            publish((k, -1, 0), paired_result(env.env_id, "sft", None, start.base_records, start.sft_records,
                                              stage="base -> sft"))
            for env_, algorithm, seed in runs:
                if env_ is env:
                    future = workers.submit(stages.rl_run, preset, env, out / env.env_id, algorithm, seed, start.sft)
                    trained[future] = (k, env, algorithm, seed, start.sft_records)
        for future in workers.completed(trained):
            k, env, algorithm, seed, start_records = trained[future]
            done: stages.RLRun = future.result()
            watch.stages.update(done.timings)
            folders[env.env_id][done.label] = done.folder
            publish((k, ALGORITHMS.index(algorithm), seed),
                    paired_result(env.env_id, algorithm, seed, start_records, done.records, stage="sft -> rl",
                                  train_wall_s=done.train_s))
    curves = {name: str(figure.relative_to(out)) for name, figure in
              ((env.env_id, report_env(EnvRun(env, out / env.env_id), folders[env.env_id])) for env in chosen)
              if figure is not None}
    rows = [results[k] for k in sorted(results)]
    settings["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    settings["wall_s"] = round(time.perf_counter() - wall, 1)
    write_results(out, rows, settings)
    write_report(out, rows, settings, curves)
    return rows


def report_env(run: EnvRun, runs: dict[str, Path]) -> Path | None:
    """An environment's figures: the benchmark report of its evaluations, each run's training curves, and
    ``curves.png`` over its runs (None when there is none)."""
    from clinical_gym.benchmarks.report import write_report as write_bench_report
    from clinical_gym.benchmarks.training_curves import plot_training_curves

    write_bench_report(run.folder / stages.EVAL_DIR)
    for folder in runs.values():
        plot_training_curves(folder)
    return plot_curves(run.folder, dict(sorted(runs.items())))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="smoke", help="what to run (default smoke)")
    parser.add_argument("--out", required=True, help="output folder (rerun into it to resume)")
    parser.add_argument("--envs", help="comma-separated environment ids of the preset (default: all of them)")
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS),
                        help=f"comma-separated algorithms (default {','.join(ALGORITHMS)})")
    parser.add_argument("--seeds", help="comma-separated RL seeds (default: the preset's)")
    parser.add_argument("--threads", type=int, help="torch CPU threads of each job (default: the preset's, else "
                                                    "the cores shared out; on a machine shared with other work, 1 is "
                                                    "often faster)")
    parser.add_argument("--jobs", type=int, help="processes running cold starts and RL runs side by side (default: "
                                                 "the preset's; at most the cores)")
    args = parser.parse_args(argv)
    preset = PRESETS[args.preset]
    try:
        seeds = None if args.seeds is None else [int(s) for s in args.seeds.split(",") if s.strip()]
        if args.threads is not None:
            if args.threads < 1:
                raise ValueError(f"--threads must be at least 1, got {args.threads}")
            preset = replace(preset, torch_threads=args.threads)
        if args.jobs is not None and args.jobs < 1:
            raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
        envs = None if args.envs is None else [e.strip() for e in args.envs.split(",") if e.strip()]
        algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
        check_choice(preset, envs, algorithms, seeds)
    except ValueError as e:
        print(f"efficacy: error: {e}", file=sys.stderr)
        return 2
    command = "python benchmarks/efficacy.py " + shlex.join(sys.argv[1:] if argv is None else list(argv))
    results = run_efficacy(preset, Path(args.out), envs=envs, algorithms=algorithms, seeds=seeds, command=command,
                           jobs=args.jobs)
    print(results_table(results))
    print(f"\nwrote {Path(args.out) / RESULTS_FILE} and {Path(args.out) / REPORT_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
