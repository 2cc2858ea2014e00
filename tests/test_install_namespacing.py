"""The package installs inside the ``clinical_gym`` namespace: a user's own ``tools/``, ``domains/``, ``trainers/``,
``benchmarks/`` or ``knowledge_base/`` folder never shadows ours, with a regular (wheel) install and with the
editable install the test suite runs on.

The wheel goes into a fresh virtual environment with no network: its dependencies come from this interpreter's
site-packages through a ``.pth`` line (which adds the folder to ``sys.path`` without running the editable install's
own ``.pth`` hook, so only the wheel's ``clinical_gym`` can be found).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHADOWED = ("tools", "domains", "trainers", "benchmarks", "knowledge_base")
SCRIPT = """
import json, re, sys, gymnasium as gym, clinical_gym, tools, domains, trainers, benchmarks, knowledge_base
env = gym.make("ClinicalDiagnosis-v1")
obs, info = env.reset(seed=0)
patient = re.search(r"P\\d{3}", obs).group()
obs, reward, terminated, truncated, info = env.step(json.dumps({"name": "get_patient_info",
                                                                "arguments": {"patient_id": patient}}))
print(json.dumps({"clinical_gym": clinical_gym.__file__, "user": [m.MARK for m in (tools, domains, trainers,
      benchmarks, knowledge_base)], "obs": obs[:200], "tool_module": type(env.unwrapped).__module__}))
"""


def _user_project(folder: Path) -> Path:
    """A project of a user's own with top-level packages named like ours (as many ML repositories have)."""
    for name in SHADOWED:
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(f"MARK = 'user {name}'\n")
    return folder


def _check_run(python: Path, project: Path, cli: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(project)}
    out = subprocess.run([str(python), "-c", SCRIPT], cwd=project, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["user"] == [f"user {name}" for name in SHADOWED]
    assert result["tool_module"].startswith("clinical_gym.domains.clinical_diagnosis")
    assert "not found" not in result["obs"] and "Error" not in result["obs"]
    bench = subprocess.run([*cli, "bench", "--env", "Triage-v1", "--agent", "oracle", "--episodes", "2",
                            "--out", str(project / "run"), "--no-progress"],
                           cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert bench.returncode == 0, bench.stderr[-2000:]
    summary = json.loads((project / "run" / "summary.json").read_text())
    assert summary["envs"][0]["agents"][0]["episodes"] == 2


def test_editable_install_is_not_shadowed_by_a_users_folders(tmp_path):
    project = _user_project(tmp_path / "project")
    _check_run(Path(sys.executable), project, [sys.executable, "-m", "clinical_gym.cli"])


def test_wheel_installs_namespaced_and_is_not_shadowed(tmp_path):
    source, wheels = tmp_path / "source", tmp_path / "wheels"  # a copy: the build writes build/ and egg-info
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "runs",
                                                                  "__pycache__", ".pytest_cache"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                            "-w", str(wheels), str(source)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next(wheels.glob("clinical_gym-*.whl"))
    import zipfile
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    # clinical_gym_verifiers is top-level on purpose: verifiers imports an environment by the module its id names
    assert tops == {"clinical_gym", "clinical_gym_verifiers"}, tops
    assert "clinical_gym/domains/triage/data/tasks.json" in names
    assert "clinical_gym/tools/instruments/__init__.py" in names

    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(target)  # ensurepip: offline
    python = target / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "_deps_from_test_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr[-2000:]
    project = _user_project(tmp_path / "project")
    where = subprocess.run([str(python), "-c", "import clinical_gym; print(clinical_gym.__file__)"], cwd=project,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(target)), where
    _check_run(python, project, [str(target / "bin" / "clinical-gym")])
