"""The verl adapter's checks (tests/verl_agent_loop_checks.py), run in the verl environment that ``make`` builds
(.venv-verl: verl 0.9 and the packages its agent-loop classes import, layered over .venv; they cannot share .venv,
whose ANTLR runtime verifiers needs). Fails, rather than skips, when that environment is missing."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERL_PY = ROOT / ".venv-verl" / "bin" / "python"


def test_verl_agent_loop_checks_pass_in_the_verl_environment():
    assert VERL_PY.exists(), "the verl environment is missing: run 'make verl-env' (make setup builds it)"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run([str(VERL_PY), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                             "tests/verl_agent_loop_checks.py"], cwd=ROOT, capture_output=True, text=True, env=env,
                            timeout=900)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr[-2000:]
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) == 7 and "skipped" not in summary, summary
