"""Suite-wide fixtures."""

from __future__ import annotations

import os
import sys
from collections import Counter

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
    if config.getoption("dist", "no") == "loadfile":
        # the order of pytest_collection_modifyitems below, not xdist's own (files with the most tests first)
        config.option.loadscopereorder = False


# Seconds per file on the 2-core machine under `-n 2 --dist loadfile` (--durations=0, summed per file; files of 10 s
# or more). Under --dist loadfile a worker runs a whole file, and xdist hands out the files with the most tests
# first, so the one-test files of minutes went last and the suite ended on one worker still training SmolLM2 while
# the other sat idle: 1,210 s of tests took 710 s (~60 s of it one worker alone). Longest first, then every other
# file in xdist's order: 1,307 s of tests in 704 s, 1,509 s in 835 s and 1,641 s in 889 s on slower hours (the same
# code: this machine's speed varies), ~45-60 s of each pytest start-up and collection, the rest nearly all both busy.
LONGEST_FILES = {
    "test_clinical_learning.py": 302, "test_sft_format_errors.py": 146, "test_ppo_smollm2.py": 70,
    "test_task_generators.py": 49, "test_ttopd_smollm2.py": 45, "test_fsdp_training.py": 44,
    "test_trainer_sigterm.py": 36, "test_ttopd_learning.py": 35, "test_grpo_smollm2.py": 32, "test_sft_train.py": 31,
    "test_gguf_cache.py": 30, "test_tool_domain_acceptance.py": 29, "test_fuzz_envs.py": 26, "test_efficacy.py": 24,
    "test_bench_runner.py": 18, "test_isolation.py": 18, "test_generator.py": 17, "test_verl_adapter.py": 16,
    "test_install_namespacing.py": 16, "test_soak.py": 15, "test_faults_matrix.py": 14, "test_cli.py": 13,
    "test_reward_snapshot.py": 12,
}


def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadfile``, the files of LONGEST_FILES first, longest first, then the others with the most
    tests first (xdist's own order, turned off in pytest_configure)."""
    if config.getoption("dist", "no") != "loadfile":
        return
    files = Counter(item.nodeid.split("::")[0] for item in items)

    def key(item: pytest.Item) -> tuple[int, int]:
        file = item.nodeid.split("::")[0]
        return -LONGEST_FILES.get(os.path.basename(file), 0), -files[file]

    items.sort(key=key)  # stable: a file's tests stay together and in their order


@pytest.fixture(autouse=True)
def fresh_accelerate_state():
    """accelerate keeps one process-wide state; a test that builds an ``Accelerator`` with other settings (TRL's
    trainers ask for the CPU) must not leave it to the next test, as a real run never shares its process."""
    yield
    if "accelerate.state" in sys.modules:
        from accelerate.state import AcceleratorState

        AcceleratorState._reset_state(reset_partial_state=True)
