"""Where an efficacy run's units of work run: inline, or in a pool of spawned processes with their share of the cores.

Independent units (an evaluation beside an SFT run, RL runs of different algorithms) can run side by side. What it
buys depends on the machine: on the project's 2-core VM two one-thread processes ran SmolLM2 GRPO steps in about
45 s each where one two-thread process took about 24 s (trainers/README.md, smoke preset time), about the same
throughput. ``Workers(1, ...)`` runs each unit at once in this process, which keeps a one-job run (and its
tracebacks) exactly what it was before.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any


def set_torch_threads(threads: int | None) -> None:
    """A worker's start: its torch intra-op threads (before any model work)."""
    if threads:
        import torch

        torch.set_num_threads(threads)


def plan_jobs(requested: int, units: int, cores: int | None = None) -> int:
    """How many processes to run: no more than asked, than units that can run at once, or than the cores plus one.

    One process more than the cores is allowed because the units are uneven: with three RL runs on two processes
    the third runs alone at the end while a core idles. On the 2-core VM (ad hoc, 2026-11-28) three one-thread
    SmolLM2 decoders each took 0.29 s a decoding step where two took 0.21 s (the same throughput), and in the smoke
    preset's 8-minute run the three RL runs took 226-315 s side by side. Four did not pay: four cpu-preset RL runs side by
    side spent about 100 CPU seconds a GRPO step each, against about 30 for one run alone (memory bandwidth and
    caches shared four ways), so the cap is one over the cores, not more."""
    if requested < 1:
        raise ValueError(f"jobs must be at least 1, got {requested}")
    return max(1, min(requested, (cores or os.cpu_count() or 1) + 1, units))


def threads_per_job(jobs: int, threads: int | None, cores: int | None = None) -> int | None:
    """Torch threads of each process: ``threads`` when given, else the cores shared out (None: torch's default)."""
    if threads:
        return threads
    return None if jobs == 1 else max(1, (cores or os.cpu_count() or 1) // jobs)


class Workers:
    """``submit(fn, *args)`` -> a Future: run now in this process (one job) or queued to ``jobs`` spawned processes
    (spawn, not fork: torch's thread pools and CUDA do not survive a fork). ``fn`` and its arguments must pickle."""

    def __init__(self, jobs: int, threads: int | None) -> None:
        self.jobs = jobs
        self.threads = threads
        self._pool: Executor | None = None
        if jobs > 1:
            self._pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=set_torch_threads, initargs=(threads,))
        else:
            set_torch_threads(threads)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        if self._pool is not None:
            return self._pool.submit(fn, *args)
        future: Future = Future()
        try:
            future.set_result(fn(*args))
        except Exception as error:  # noqa: BLE001 - handed to the caller through the future, as a pool would
            future.set_exception(error)
        return future

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=exc[0] is not None)
