"""``ExperienceWrapper``: experience injection for any text environment, and ``with_experience``, the same for every
environment a ``RolloutCollector`` builds (its injection hook)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from clinical_gym.experience.injection import TokenCounter, approx_tokens
from clinical_gym.experience.injector import ExperienceInjector, ExperienceSource, InjectionConfig


class ExperienceWrapper(gym.Wrapper[str, str, str, str], gym.utils.RecordConstructorArgs):
    """Prepends retrieved experiences (Doctor-R1's "Experience References" block) to the agent's observation, or to
    ``info["system_prompt"]``, once per episode or on every turn (``InjectionConfig``).

    The wrapped environment and its ``messages`` never see the injected text; the query is the dialogue so far.
    ``info["experience_ids"]`` lists the experiences shown. An injected observation that would not fit the
    observation space is left as it was.

    >>> env = ExperienceWrapper(gym.make("ClinicalInquiry-v1"), "runs/experience.sqlite")  # doctest: +SKIP
    """

    def __init__(self, env: gym.Env[str, str], experience: ExperienceSource, config: InjectionConfig | None = None,
                 *, count_tokens: TokenCounter = approx_tokens) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, experience=experience, config=config, count_tokens=count_tokens)
        gym.Wrapper.__init__(self, env)
        self.injector = ExperienceInjector(experience, config, count_tokens=count_tokens)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        injected, info = self.injector.on_reset(observation, info, case_id=_case_id(self.env, options))
        return self._fitting(injected, observation), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        injected = self.injector.on_step(action, observation, reward, terminated or truncated, info)
        return self._fitting(injected, observation), reward, terminated, truncated, info

    def _fitting(self, injected: str, plain: str) -> str:
        return injected if self.observation_space.contains(injected) else plain


def with_experience(env_factory: Callable[[], gym.Env], experience: ExperienceSource,
                    config: InjectionConfig | None = None, *,
                    count_tokens: TokenCounter = approx_tokens) -> Callable[[], gym.Env]:
    """An environment factory whose environments are wrapped in ``ExperienceWrapper`` (pass it to a
    ``RolloutCollector`` or a trainer's ``env_factory``). All of them share one retriever per store."""
    return lambda: ExperienceWrapper(env_factory(), experience, config, count_tokens=count_tokens)


def _case_id(env: gym.Env, options: dict[str, Any] | None) -> str | None:
    """The case the episode runs on: the environment's ``case.id``, else ``options["case_id"]``."""
    case = getattr(env.unwrapped, "case", None)
    return getattr(case, "id", None) or (options or {}).get("case_id")
