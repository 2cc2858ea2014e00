"""Trajectory records: what a rollout hands to a trainer, token for token."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from clinical_gym.rollout.policy import FinishReason

# Why a generation or an episode was cut short.
CutReason = Literal["turn_tokens", "episode_tokens", "max_turns", "env"]
# ``info["reply_kind"]`` values that mean the environment ran a tool for the agent.
TOOL_REPLY_KINDS = frozenset({"tool", "tool_call", "tool_result"})


def tool_calls_in(info: Mapping[str, Any]) -> int:
    """Tool calls one step made: ``info["tool_calls"]`` (a count or a list), else 1 when ``info["reply_kind"]`` is a
    tool reply kind, else 0."""
    calls = info.get("tool_calls")
    if calls is not None:
        return calls if isinstance(calls, int) else len(calls)
    return int(info.get("reply_kind") in TOOL_REPLY_KINDS)


@dataclass(slots=True)
class Turn:
    """One agent reply and the environment's answer to it.

    ``prompt_len`` is the length of the context the model was given (``Trajectory.prompt_ids(i)`` returns it);
    ``generated_ids``/``logprobs`` are the model's tokens (loss mask 1); ``env_ids`` are the tokens that follow them
    (the end-of-turn token when the reply was cut, template glue, the environment's reply and the next generation
    prompt; loss mask 0). ``cut`` says which token limit cut the reply, if any.
    """

    prompt_len: int
    generated_ids: list[int]
    logprobs: list[float]
    finish_reason: FinishReason
    action: str
    observation: str = ""
    env_ids: list[int] = field(default_factory=list)
    reward: float = 0.0
    reward_components: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    cut: CutReason | None = None

    @property
    def truncated(self) -> bool:
        """Whether a token limit cut this reply before its end token."""
        return self.finish_reason == "length"

    @property
    def tool_calls(self) -> int:
        return tool_calls_in(self.info)


@dataclass(slots=True)
class Trajectory:
    """One episode: the opening tokens, the turns, and how it ended; ``messages`` is the conversation as text.

    The token sequence is ``opening_ids`` (the templated system prompt and first observation) followed by each
    turn's ``generated_ids`` and ``env_ids``; the loss mask is 1 exactly on generated tokens. ``reward`` is the
    undiscounted sum of step rewards and ``reward_components`` the sum of each component. ``truncation`` says why an
    episode the environment did not end was stopped ("episode_tokens", "max_turns", or "env" when the environment
    truncated it). ``outcome`` is the terminal ``info["outcome"]`` (None when the episode did not terminate).
    ``group`` and ``seed`` come from the ``EpisodeSpec``; ``case_id`` names the case the episode ran on.

    ``error`` is set when the environment ended the episode because a simulated actor or a grader failed (a patient,
    judge or world-model outage: truncated, with ``info["error"]``). Such an episode says nothing about the policy:
    its loss mask is all 0, so trainers keep it out of the loss (and count it in their metrics).
    """

    opening_ids: list[int]
    messages: list[dict[str, str]]
    turns: list[Turn] = field(default_factory=list)
    seed: int | None = None
    group: int | None = None
    case_id: str | None = None
    terminated: bool = False
    truncation: CutReason | None = None
    outcome: dict[str, Any] | None = None
    reward: float = 0.0
    reward_components: dict[str, float] = field(default_factory=dict)
    error: str | None = None

    def token_ids(self) -> list[int]:
        ids = list(self.opening_ids)
        for turn in self.turns:
            ids += turn.generated_ids
            ids += turn.env_ids
        return ids

    def loss_mask(self) -> list[int]:
        """1 on generated tokens, 0 elsewhere; all 0 for an episode that ended with an ``error``."""
        mask = [0] * len(self.opening_ids)
        generated = 0 if self.error is not None else 1
        for turn in self.turns:
            mask += [generated] * len(turn.generated_ids)
            mask += [0] * len(turn.env_ids)
        return mask

    def token_logprobs(self) -> list[float]:
        """Sampling log-probabilities aligned with ``token_ids()`` (0.0 where the loss mask is 0)."""
        values = [0.0] * len(self.opening_ids)
        for turn in self.turns:
            values += turn.logprobs
            values += [0.0] * len(turn.env_ids)
        return values

    def prompt_ids(self, turn: int) -> list[int]:
        """The exact token context the model was given to generate turn ``turn``."""
        return self.token_ids()[:self.turns[turn].prompt_len]

    @property
    def truncated(self) -> bool:
        return self.truncation is not None

    @property
    def generated_tokens(self) -> int:
        return sum(len(t.generated_ids) for t in self.turns)

    @property
    def tool_calls(self) -> int:
        return sum(t.tool_calls for t in self.turns)

    @property
    def success(self) -> bool | None:
        """``outcome["success"]`` when the episode has an outcome, else None."""
        return None if self.outcome is None else bool(self.outcome.get("success"))

    def to_dict(self) -> dict[str, Any]:
        """A copy as plain dicts and lists (for rollout dumps)."""
        return asdict(self)
