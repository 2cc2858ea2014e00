"""The rollout interface between environments and trainers.

A ``Policy`` continues a batch of conversations; a ``RolloutCollector`` runs many environments at once, batching
generation across live episodes, and returns ``Trajectory`` records (token ids, loss masks, logprobs, rewards,
outcome). ``TransformersPolicy``, ``TransformersVLMPolicy`` (vision-language models: images in the messages as
OpenAI content parts, pixels through the model's processor) and ``VLLMPolicy`` load on first use, so importing this
package imports no torch.

    import gymnasium as gym
    from clinical_gym.rollout import EpisodeSpec, RolloutCollector, RolloutLimits, TransformersPolicy

    policy = TransformersPolicy(model, tokenizer, temperature=1.0)
    collector = RolloutCollector(policy, lambda: gym.make("ClinicalInquiry-v1"), tokenizer, num_envs=16,
                                 limits=RolloutLimits(max_turn_tokens=256, max_episode_tokens=4096))
    group = collector.collect([EpisodeSpec(seed=s, options={"case_id": "dig-appendicitis-01"}, group=0)
                               for s in range(8)], seed=0)
    ids, mask = group[0].token_ids(), group[0].loss_mask()      # mask is 1 exactly on generated tokens
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
    from clinical_gym.rollout.vlm_policy import TransformersVLMPolicy
    from clinical_gym.rollout.vllm_policy import VLLMPolicy
    from clinical_gym.rollout.vllm_server import VLLMServerPolicy

__all__ = ["ChatTokens", "CollectorStats", "EpisodeSpec", "FinishReason", "Generation", "OpenAICompatPolicy",
           "Policy", "Prompt", "RolloutCollector", "RolloutLimits", "ScriptedPolicy", "TemplateError",
           "Trajectory", "TransformersPolicy", "TransformersVLMPolicy", "Turn", "VLLMPolicy", "VLLMServerPolicy",
           "choose_engine", "make_policy",
           "tool_calls_in"]

_LAZY = {"TransformersPolicy": "clinical_gym.rollout.transformers_policy",
         "TransformersVLMPolicy": "clinical_gym.rollout.vlm_policy",
         "VLLMPolicy": "clinical_gym.rollout.vllm_policy",
         "VLLMServerPolicy": "clinical_gym.rollout.vllm_server"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
