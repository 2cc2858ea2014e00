"""Calling one tool of a tool-domain env directly in its current episode (the domain tests' shorthand)."""

from __future__ import annotations

import json
from typing import Any

from clinical_gym.tool_env.policies import call_text
from clinical_gym.tools import ToolResult


def call(env: Any, name: str, **arguments: Any) -> ToolResult:
    """Run tool ``name`` with ``arguments`` on the env's current episode; the result (ok, content, ...)."""
    return env.toolkit.call(call_text(name, arguments))


def read(env: Any, name: str, **arguments: Any) -> Any:
    """Run a tool that must succeed; its JSON result."""
    result = call(env, name, **arguments)
    assert result.ok, result.content
    return json.loads(result.content)
