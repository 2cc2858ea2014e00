"""``import clinical_gym.tools`` and ``clinical_gym.tools.instruments`` stay light: no torch, transformers, JSON
Schema validator, domains or knowledge base."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "jsonschema", "clinical_gym.domains", "clinical_gym.knowledge_base")


def test_importing_tools_pulls_no_heavy_modules():
    code = ("import sys, clinical_gym.tools, clinical_gym.tools.instruments; "
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_importing_tools_loads_only_the_framework():
    code = ("import sys, clinical_gym.tools; "
            "print(any(m.startswith('clinical_gym.tools.instruments') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
