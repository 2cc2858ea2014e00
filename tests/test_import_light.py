"""``import clinical_gym`` is light: no torch, no transformers (import time is measured by benchmarks/perf_env.py)."""

from __future__ import annotations

import subprocess
import sys


def test_import_does_not_pull_heavy_modules():
    code = ("import sys, clinical_gym, clinical_gym.cases, clinical_gym.llm, clinical_gym.rewards; "
            "print(sorted(m for m in ('torch', 'transformers', 'trl', 'clinical_gym.domains') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

