"""The rollout interface between environments and trainers.

A ``Policy`` continues a batch of conversations; a ``RolloutCollector`` runs many environments at once, batching
generation across live episodes, and returns ``Trajectory`` records (token ids, loss masks, logprobs, rewards,
outcome). ``TransformersPolicy`` and ``VLLMPolicy`` load on first use, so importing this package imports no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clinical_gym.rollout.chat_tokens import ChatTokens, TemplateError
from clinical_gym.rollout.collector import CollectorStats, EpisodeSpec, RolloutCollector, RolloutLimits
from clinical_gym.rollout.openai_policy import OpenAICompatPolicy
from clinical_gym.rollout.policy import FinishReason, Generation, Policy, Prompt
from clinical_gym.rollout.scripted import ScriptedPolicy
from clinical_gym.rollout.selection import choose_engine, make_policy
from clinical_gym.rollout.trajectory import Trajectory, Turn, tool_calls_in

if TYPE_CHECKING:
    from clinical_gym.rollout.transformers_policy import TransformersPolicy
    from clinical_gym.rollout.vllm_policy import VLLMPolicy

__all__ = ["ChatTokens", "CollectorStats", "EpisodeSpec", "FinishReason", "Generation", "OpenAICompatPolicy",
           "Policy", "Prompt", "RolloutCollector", "RolloutLimits", "ScriptedPolicy", "TemplateError",
           "Trajectory", "TransformersPolicy", "Turn", "VLLMPolicy", "choose_engine", "make_policy",
           "tool_calls_in"]

_LAZY = {"TransformersPolicy": "clinical_gym.rollout.transformers_policy",
         "VLLMPolicy": "clinical_gym.rollout.vllm_policy"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
