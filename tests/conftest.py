"""Suite-wide fixtures."""

from __future__ import annotations

import os
import sys

import pytest


def pytest_configure(config):
    """Under pytest-xdist, each worker's torch gets its share of the cores (OMP_NUM_THREADS, read when torch is
    first imported; a test or subprocess that sets its own keeps it). Two workers of two threads each on two cores
    spin-wait on each other: the same 8-episode GRPO rollout of SmolLM2 took 8 s alone and 109-137 s beside
    another such process."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if workers > 1 and "OMP_NUM_THREADS" not in os.environ:
        threads = max(1, (os.cpu_count() or 1) // workers)
        os.environ["OMP_NUM_THREADS"] = str(threads)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(threads)


@pytest.fixture(autouse=True)
def fresh_accelerate_state():
    """accelerate keeps one process-wide state; a test that builds an ``Accelerator`` with other settings (TRL's
    trainers ask for the CPU) must not leave it to the next test, as a real run never shares its process."""
    yield
    if "accelerate.state" in sys.modules:
        from accelerate.state import AcceleratorState

        AcceleratorState._reset_state(reset_partial_state=True)
