"""``import tools`` and ``import tools.instruments`` stay light: no torch, transformers or knowledge base."""

from __future__ import annotations

import subprocess
import sys


def test_importing_tools_pulls_no_heavy_modules():
    code = ("import sys, tools, tools.instruments; "
            "print(sorted(m for m in ('torch', 'transformers', 'jsonschema', 'clinical_gym', 'domains') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_importing_tools_loads_only_the_framework():
    code = "import sys, tools; print(any(m.startswith('tools.instruments') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
