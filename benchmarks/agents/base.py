"""``Agent``: a policy as the benchmark runner drives it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from clinical_gym.rollout.policy import Policy

ResetHook = Callable[[str, Mapping[str, Any], gym.Env], None]
"""Called at every reset with the opening observation, the reset info and ``env.unwrapped``."""

FAMILIES = ("inquiry", "workup", "tool")
"""Environment families (``clinical_gym.registration.EnvInfo.family``) the built-in agents play."""


@dataclass
class Agent:
    """A ``Policy`` and how to run it.

    ``kind`` names what the agent is (shown in reports). ``tokenizer``: run in token mode (the collector keeps
    token ids, as in training); None runs in text mode. ``on_reset`` sees every reset; only a ``privileged`` agent
    (the oracle) may read the ground truth through the environment it is handed, and reports label it as such.
    """

    kind: str
    policy: Policy
    tokenizer: Any | None = None
    on_reset: ResetHook | None = None
    privileged: bool = False
