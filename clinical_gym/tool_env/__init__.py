"""The tool-domain framework: what every tool-using clinical environment is built from.

* ``env``: ``ToolDomainEnv``, the base class, and the episode tools every domain shares (``think``, ``submit_answer``);
* ``database``: ``DomainDB`` / ``RecordListsDB``, the pydantic database a domain's tools read and write;
* ``tasks``: the task schema (expected actions, assertions, safety expectations), task files and splits;
* ``policies``: scripted expert and random policies and ``run_episode``;
* ``catalogue``: the tool catalogue over every registered tool environment (``clinical-gym tools list|docs``).

``domains/README.md`` walks through adding a domain. Submodules load on first use, so importing this package is light.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {"ToolDomainEnv": "clinical_gym.tool_env.env", "EpisodeTools": "clinical_gym.tool_env.env",
         "DomainDB": "clinical_gym.tool_env.database", "RecordListsDB": "clinical_gym.tool_env.database",
         "Task": "clinical_gym.tool_env.tasks", "load_tasks": "clinical_gym.tool_env.tasks",
         "select_split": "clinical_gym.tool_env.tasks"}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'clinical_gym.tool_env' has no attribute {name!r}")
