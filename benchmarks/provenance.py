"""What a benchmark result came from, for ``run.json``: the clinical-gym version and git commit (when the package
runs from a git checkout, with whether it had uncommitted changes), Python, the platform, the versions of the
packages that shape results, the command line, and per environment its registered version, entry point and the
cases or tasks it played from (count and a digest of their ids)."""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import gymnasium as gym

PACKAGES = ("gymnasium", "numpy", "pydantic", "torch", "transformers", "peft", "trl", "vllm")
"""Distributions whose versions are recorded when installed (never imported for it)."""


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def git_state(folder: Path) -> dict[str, Any] | None:
    """``{"commit": sha, "dirty": bool}`` of the git checkout holding ``folder``, or None when it is not in one (an
    installed wheel) or git is not available."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": dirty}


def env_version(env_id: str, case_ids: Sequence[str]) -> dict[str, Any]:
    """An environment as the run played it: registered version, entry point, number and digest of its cases."""
    spec = gym.spec(env_id)
    digest = hashlib.sha256("\n".join(case_ids).encode()).hexdigest()[:16]
    return {"version": spec.version, "entry_point": str(spec.entry_point), "cases": len(case_ids),
            "cases_digest": digest}


def run_provenance(envs: dict[str, Sequence[str]]) -> dict[str, Any]:
    """The provenance block of ``run.json``; ``envs`` maps each environment id to the case ids it plays."""
    import clinical_gym

    source = Path(clinical_gym.__file__).resolve().parent.parent
    return {
        "clinical_gym": {"version": package_version("clinical-gym"), "git": git_state(source)},
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": {name: v for name in PACKAGES if (v := package_version(name)) is not None},
        "command": sys.argv,
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "environments": {env_id: env_version(env_id, ids) for env_id, ids in envs.items()},
    }
