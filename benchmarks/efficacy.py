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
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
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

    The units of work: per environment the base model's evaluation and the warm start (expert data, SFT); once the
    SFT model exists, every RL run (algorithm x seed, with its evaluation) and the SFT model's evaluation. ``jobs``
    (default: the preset's) processes run them side by side as they become ready, each with its share of the cores;
    one job runs them all in this process, in order. The rows come out in the same order either way."""
    check_choice(preset, envs, algorithms, seeds)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [e for e in preset.envs if envs is None or e.env_id in envs]
    seeds = list(preset.seeds if seeds is None else seeds)
    runs = [(env, a, seed) for env in chosen for a in algorithms if a in env.algorithms for seed in seeds]
    jobs = plan_jobs(preset.jobs if jobs is None else jobs, max(2 * len(chosen), len(runs) + len(chosen)))
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
        plan = Schedule(workers)
        for k, env in enumerate(chosen):
            folder = out / env.env_id
            plan.submit(("base", k), stages.evaluation, preset, env, folder, "base", base, False)
            plan.submit(("warm", k), stages.warm_start, preset, env, folder, base)
        evaluated: dict[tuple, list] = {}
        waiting: list[tuple[tuple, stages.RLRun]] = []
        for key, done in plan.results():
            watch.stages.update(done.timings)
            kind, k = key[0], key[1]
            env = chosen[k]
            if kind == "warm":
                order = [a for a in ALGORITHMS if a in algorithms and a in env.algorithms]
                if workers.jobs == 1:  # in this process: the SFT model's evaluation, then the runs, in order
                    plan.submit(("sft", k), stages.evaluation, preset, env, out / env.env_id, "sft", str(done.sft))
                else:  # the runs first, the longest first, then the short evaluation fills a job's gap
                    order.sort(key=RUN_ORDER.index)
                for algorithm in order:
                    for seed in seeds:
                        plan.submit(("rl", k, algorithm, seed), stages.rl_run, preset, env, out / env.env_id,
                                    algorithm, seed, done.sft)
                if workers.jobs > 1:
                    plan.submit(("sft", k), stages.evaluation, preset, env, out / env.env_id, "sft", str(done.sft))
                continue
            if kind in ("base", "sft"):
                evaluated[(kind, k)] = done.records
                if ("base", k) in evaluated and ("sft", k) in evaluated:
                    publish((k, -1, 0), paired_result(env.env_id, "sft", None, evaluated[("base", k)],
                                                      evaluated[("sft", k)], stage="base -> sft"))
            else:
                folders[env.env_id][done.label] = done.folder
                waiting.append((key, done))
            for run_key, run in [w for w in waiting if ("sft", w[0][1]) in evaluated]:
                waiting.remove((run_key, run))
                _, k_run, algorithm, seed = run_key
                publish((k_run, ALGORITHMS.index(algorithm), seed),
                        paired_result(chosen[k_run].env_id, algorithm, seed, evaluated[("sft", k_run)], run.records,
                                      stage="sft -> rl", train_wall_s=run.train_s))
    curves = {name: str(figure.relative_to(out)) for name, figure in
              ((env.env_id, report_env(EnvRun(env, out / env.env_id), folders[env.env_id])) for env in chosen)
              if figure is not None}
    rows = [results[k] for k in sorted(results)]
    settings["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    settings["wall_s"] = round(time.perf_counter() - wall, 1)
    write_results(out, rows, settings)
    write_report(out, rows, settings, curves)
    return rows


# the order RL runs are started in: the longest first (TT-OPD adds teacher passes to GRPO's step)
RUN_ORDER = ("ttopd", "ppo", "grpo")


class Schedule:
    """Units of work keyed by name: ``submit`` queues one on the workers, ``results`` yields ``(key, result)`` as
    they finish (one job: in the order submitted), including units submitted while iterating."""

    def __init__(self, workers: Workers) -> None:
        self.workers = workers
        self.pending: dict[Future, tuple] = {}

    def submit(self, key: tuple, fn: Any, *args: Any) -> None:
        self.pending[self.workers.submit(fn, *args)] = key

    def results(self) -> Iterator[tuple[tuple, Any]]:
        while self.pending:
            wait(self.pending, return_when=FIRST_COMPLETED)
            for future in [f for f in self.pending if f.done()]:
                key = self.pending.pop(future)
                yield key, future.result()


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
                                                 "the preset's; at most one over the cores)")
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
