"""The random agent, the floor of every table: uniformly random text from the environment's action space
(gymnasium's ``action_space.sample()``, as in any Gym benchmark), at most ``MAX_CHARS`` characters so transcripts stay
small. Any agent that ever acts sensibly scores at least as well, so it marks the bottom of every environment.

Samples depend only on the seed and the conversation so far, so an episode plays the same way in any batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from clinical_gym.benchmarks.agents.base import Agent
from clinical_gym.benchmarks.agents.conversations import conversation_rng
from clinical_gym.rollout.policy import Message
from clinical_gym.rollout.scripted import ScriptedPolicy
from clinical_gym.spaces import UnicodeText

MIN_CHARS, MAX_CHARS = 8, 200


def random_text_reply(seed: int) -> Callable[[Sequence[Message]], str]:
    def reply(messages: Sequence[Message]) -> str:
        space = UnicodeText(MAX_CHARS, min_length=MIN_CHARS, seed=int(conversation_rng(seed, messages).integers(2**31)))
        return space.sample()
    return reply


def random_agent(seed: int) -> Agent:
    return Agent("uniformly random text", ScriptedPolicy(random_text_reply(seed)))
