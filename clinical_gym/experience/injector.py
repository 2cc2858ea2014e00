"""Experience injection for one environment: what an environment (``experience=store``) or the
``ExperienceWrapper`` calls at reset and after each step."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from clinical_gym.experience.injection import TokenCounter, approx_tokens, fitting, format_injection
from clinical_gym.experience.recording import turn_experience
from clinical_gym.experience.retrieval import RetrievalConfig, Retriever
from clinical_gym.experience.state import dialogue_state
from clinical_gym.experience.store import Experience, ExperienceStore

ExperienceSource = ExperienceStore | str | os.PathLike[str] | Retriever
"""Where experiences come from: a store, the path of one, or a ready ``Retriever``."""


@dataclass(frozen=True)
class InjectionConfig:
    """How retrieved experiences reach the agent.

    mode: "episode" retrieves once, for the opening observation; "turn" retrieves again for every new observation.
    target: "observation" prepends the references to the observation; "system_prompt" to ``info["system_prompt"]``
        at reset (episode mode only; the observation when the environment gives no system prompt).
    prompt_tokens: the prompt budget; the injected text takes at most half of it (Doctor-R1).
    exclude_same_case: never show an episode experiences recorded on its own case (they may hold its answer).
    record: store the episode's turns (those reaching the store's threshold) when it ends, as one batch; leave off
        when an ``ExperienceRecorder`` stores the trajectories after each training step.
    retrieval: the retrieval settings (Doctor-R1's by default; a dict of ``RetrievalConfig`` fields also works, so
        the whole config can come from JSON).
    """

    mode: Literal["episode", "turn"] = "episode"
    target: Literal["observation", "system_prompt"] = "observation"
    prompt_tokens: int = 2048
    exclude_same_case: bool = True
    record: bool = False
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)

    def __post_init__(self) -> None:
        if isinstance(self.retrieval, Mapping):
            object.__setattr__(self, "retrieval", RetrievalConfig(**self.retrieval))
        if self.mode not in ("episode", "turn"):
            raise ValueError(f"mode must be 'episode' or 'turn', got {self.mode!r}")
        if self.target not in ("observation", "system_prompt"):
            raise ValueError(f"target must be 'observation' or 'system_prompt', got {self.target!r}")
        if self.target == "system_prompt" and self.mode == "turn":
            raise ValueError("the system prompt is set once per episode: use target='observation' with mode='turn'")
        if self.prompt_tokens < 2:
            raise ValueError(f"prompt_tokens must be >= 2, got {self.prompt_tokens}")

    @property
    def budget_tokens(self) -> int:
        """Tokens the injected references may take: half the prompt budget."""
        return self.prompt_tokens // 2


class ExperienceInjector:
    """Retrieval and injection (and, with ``record``, storage) for the episodes of one environment.

    It keeps the episode's dialogue as the environment produced it (without injected text): the query state is
    ``dialogue_state`` of that log. ``count_tokens`` measures the budget (default: about four characters a token;
    pass ``lambda t: len(tokenizer.encode(t))`` for exact counts). Retrievers over a store path are shared by every
    injector of the process, so the embeddings load once.
    """

    def __init__(self, experience: ExperienceSource, config: InjectionConfig | None = None, *,
                 count_tokens: TokenCounter = approx_tokens) -> None:
        self.config = config or InjectionConfig()
        self.retriever = experience if isinstance(experience, Retriever) else shared_retriever(
            _path(experience), self.config.retrieval)
        self.store = experience if isinstance(experience, ExperienceStore) else self.retriever.store
        self.count_tokens = count_tokens
        self._log: list[dict[str, str]] = []
        self._pending: list[Experience] = []
        self._case_id: str | None = None

    def on_reset(self, observation: str, info: Mapping[str, Any],
                 case_id: str | None = None) -> tuple[str, dict[str, Any]]:
        """The opening observation and info with the experiences for the opening state injected;
        ``info["experience_ids"]`` lists the experiences shown."""
        self._log = [{"role": "user", "content": observation}]
        self._pending = []
        self._case_id = case_id
        info = dict(info)
        if self.config.target == "system_prompt" and "system_prompt" in info:
            info["system_prompt"], info["experience_ids"] = self._inject(info["system_prompt"])
            return observation, info
        observation, info["experience_ids"] = self._inject(observation)
        return observation, info

    def on_step(self, action: object, observation: str, reward: float, done: bool,
                info: dict[str, Any] | None = None) -> str:
        """The step's observation, with the experiences for the new state injected in turn mode (not after the
        last step); records the turn with ``record``, and stores the episode's turns when ``done``. Sets
        ``info["experience_ids"]`` when ``info`` is given."""
        text = action if isinstance(action, str) else ""
        if self.config.record:
            turn = turn_experience(self._log, text, float(reward), self._case_id, len(self._log) // 2 + 1)
            if turn is not None:
                self._pending.append(turn)
        self._log += [{"role": "assistant", "content": text}, {"role": "user", "content": observation}]
        if done:
            if self._pending:
                self.store.add(self._pending)
            self._pending = []
            return observation
        if self.config.mode != "turn":
            return observation
        observation, ids = self._inject(observation)
        if info is not None:
            info["experience_ids"] = ids
        return observation

    def _inject(self, prompt: str) -> tuple[str, list[int]]:
        exclude = self._case_id if self.config.exclude_same_case else None
        found = [c.experience for c in self.retriever.retrieve(dialogue_state(self._log), exclude_case=exclude)]
        shown = fitting(found, self.config.budget_tokens, self.count_tokens)
        return format_injection(prompt, shown), [e.id for e in shown if e.id is not None]


@lru_cache(maxsize=8)
def shared_retriever(path: Path, config: RetrievalConfig) -> Retriever:
    """One ``Retriever`` per store file and settings in this process (the default index: MiniLM, else BM25)."""
    return Retriever(ExperienceStore(path), config=config)


def _path(experience: ExperienceStore | str | os.PathLike[str]) -> Path:
    return (experience.path if isinstance(experience, ExperienceStore) else Path(experience)).resolve()
