"""Suite-wide fixtures."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(autouse=True)
def fresh_accelerate_state():
    """accelerate keeps one process-wide state; a test that builds an ``Accelerator`` with other settings (TRL's
    trainers ask for the CPU) must not leave it to the next test, as a real run never shares its process."""
    yield
    if "accelerate.state" in sys.modules:
        from accelerate.state import AcceleratorState

        AcceleratorState._reset_state(reset_partial_state=True)
