"""``RolloutCollector``: runs many environments at once, batching generation across every live episode."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from clinical_gym.rollout.chat_tokens import ChatTokens, chat_tokens
from clinical_gym.rollout.policy import Generation, Message, Policy, Prompt
from clinical_gym.rollout.trajectory import Trajectory, Turn

EnvFactory = Callable[[], gym.Env]


@dataclass(frozen=True)
class RolloutLimits:
    """Token and turn limits of one episode."""

    max_turn_tokens: int = 256
    """most tokens generated for one reply (DoctorAgent-RL uses 256)"""
    max_episode_tokens: int = 4096
    """most tokens in the whole sequence: opening, replies and environment tokens"""
    max_turns: int | None = None
    """most replies per episode; None lets the environment decide"""

    def __post_init__(self) -> None:
        if self.max_turn_tokens < 1 or self.max_episode_tokens < 2:
            raise ValueError("max_turn_tokens must be >= 1 and max_episode_tokens >= 2")
        if self.max_turns is not None and self.max_turns < 1:
            raise ValueError(f"max_turns must be >= 1 or None, got {self.max_turns}")


@dataclass(frozen=True)
class EpisodeSpec:
    """How to start one episode: ``env.reset(seed=seed, options=options)``; ``group`` tags the trajectory."""

    seed: int | None = None
    options: Mapping[str, Any] | None = None
    group: int | None = None


@dataclass
class CollectorStats:
    """Where the time of one ``collect`` call went (seconds) and how much it produced."""

    episodes: int = 0
    rounds: int = 0
    generated_tokens: int = 0
    wall_s: float = 0.0
    generate_s: float = 0.0
    env_s: float = 0.0
    tokenize_s: float = 0.0

    @property
    def overhead_fraction(self) -> float:
        """Share of the wall time not spent generating (environments, tokenization, bookkeeping)."""
        return 0.0 if self.wall_s <= 0 else (self.wall_s - self.generate_s) / self.wall_s


@dataclass
class _Episode:
    """A running episode: its environment, the token sequence so far, and the trajectory being filled."""

    index: int
    env: gym.Env
    trajectory: Trajectory
    chat: ChatTokens | None
    ids: list[int] = field(default_factory=list)
    tools: tuple[Mapping[str, Any], ...] | None = None


class RolloutCollector:
    """Runs episodes with ``num_envs`` environments at once; each round, one ``policy.generate`` call continues every
    live episode, and finished episodes are replaced by waiting ones.

    With a ``tokenizer`` (token mode), the conversation is kept as token ids: the chat template is applied once to
    the system prompt and first observation, each environment reply is appended as a template delta
    (``ChatTokens``), and the policy continues those exact ids; decoded history is never re-tokenized. Without one
    (text mode, e.g. a hosted chat API), policies see messages only and trajectories carry no environment tokens.
    When an environment logs a message's content as OpenAI content parts (text with images), the trajectory's
    messages keep those parts, so a chat API receives the images; in token mode ``tokenizer`` is then the model's
    processor (``VisionChatTokens`` expands each image into its image tokens).

    ``env_factory`` builds one environment per episode (closed when the episode ends), so episodes never share
    state. Limits (``RolloutLimits``): a reply is cut at ``max_turn_tokens`` or at the room left under
    ``max_episode_tokens`` (then it gets the end-of-turn token as an environment token); an episode that would
    exceed ``max_episode_tokens`` or ``max_turns`` ends with ``truncation`` set. ``last_stats`` times the last call.

    An episode the environment truncates with ``info["error"]`` (a simulator, judge or world-model outage) keeps
    that message in ``Trajectory.error``; its loss mask is then all 0, so trainers skip it.

    ``on_collect`` hooks are called with the trajectories of every ``collect`` call, once it has finished (e.g.
    ``clinical_gym.experience.ExperienceRecorder``, which stores the good turns of each training step's rollouts
    in one batch); what they return is ignored.
    """

    def __init__(self, policy: Policy, env_factory: EnvFactory, tokenizer: Any | None = None, *,
                 limits: RolloutLimits | None = None, num_envs: int = 16,
                 end_token_ids: Iterable[int] | None = None,
                 on_collect: Iterable[Callable[[list[Trajectory]], Any]] = ()) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.policy = policy
        self.env_factory = env_factory
        self.tokenizer = tokenizer
        self.limits = limits or RolloutLimits()
        self.num_envs = num_envs
        self.end_token_ids = None if end_token_ids is None else list(end_token_ids)
        self.on_collect = list(on_collect)
        self.last_stats = CollectorStats()
        self._chats: dict[str, ChatTokens] = {}

    def collect(self, episodes: Sequence[EpisodeSpec], *, seed: int | None = None) -> list[Trajectory]:
        """Run every episode to its end; trajectories come back in the order of ``episodes``. ``seed`` makes the
        policy's sampling reproducible (each generation round gets a seed derived from it)."""
        stats = self.last_stats = CollectorStats(episodes=len(episodes))
        start = time.perf_counter()
        results: list[Trajectory | None] = [None] * len(episodes)
        pending = deque(enumerate(episodes))
        live: list[_Episode] = []
        try:
            while pending or live:
                while pending and len(live) < self.num_envs:
                    live.append(self._start(*pending.popleft()))
                for episode in [e for e in live if self._room(e) < 1]:
                    episode.trajectory.truncation = "episode_tokens"
                    results[episode.index] = self._close(episode)
                    live.remove(episode)
                if not live:
                    continue
                prompts = [self._prompt(e) for e in live]
                began = time.perf_counter()
                round_seed = None if seed is None else _round_seed(seed, stats.rounds)
                generations = self.policy.generate(prompts, seed=round_seed)
                stats.generate_s += time.perf_counter() - began
                stats.rounds += 1
                if len(generations) != len(prompts):
                    raise RuntimeError(f"policy returned {len(generations)} generations for {len(prompts)} prompts")
                still: list[_Episode] = []
                for episode, prompt, generation in zip(live, prompts, generations):
                    stats.generated_tokens += len(generation.token_ids)
                    if self._advance(episode, prompt, generation):
                        still.append(episode)
                    else:
                        results[episode.index] = self._close(episode)
                live = still
        finally:
            for episode in live:
                episode.env.close()
            forget = getattr(self.policy, "forget_prefixes", None)
            if forget is not None:  # a policy that keeps key/value caches between rounds (TransformersPolicy)
                forget()
            stats.wall_s = time.perf_counter() - start
        trajectories = [r for r in results if r is not None]
        for hook in self.on_collect:
            hook(trajectories)
        return trajectories

    # -- one episode ----------------------------------------------------------------------------------------
    def _start(self, index: int, spec: EpisodeSpec) -> _Episode:
        began = time.perf_counter()
        env = self.env_factory()
        obs, info = env.reset(seed=spec.seed, options=dict(spec.options) if spec.options else None)
        self.last_stats.env_s += time.perf_counter() - began
        system = info.get("system_prompt")
        messages = [{"role": "system", "content": system}] if system is not None else []
        messages.append({"role": "user", "content": _logged_content(env, obs)})
        case = getattr(env.unwrapped, "case", None)
        case_id = (spec.options or {}).get("case_id") or getattr(case, "id", None)
        trajectory = Trajectory(opening_ids=[], messages=messages, seed=spec.seed, group=spec.group, case_id=case_id)
        chat = self._chat(info.get("tools"))
        if chat is not None:
            began = time.perf_counter()
            trajectory.opening_ids = chat.opening(system, messages[-1])
            self.last_stats.tokenize_s += time.perf_counter() - began
        tools = tuple(info["tools"]) if info.get("tools") else None
        return _Episode(index, env, trajectory, chat, list(trajectory.opening_ids), tools)

    def _room(self, episode: _Episode) -> int:
        return self.limits.max_episode_tokens - len(episode.ids)

    def _prompt(self, episode: _Episode) -> Prompt:
        max_new = min(self.limits.max_turn_tokens, self._room(episode))
        token_ids = tuple(episode.ids) if episode.chat is not None else None
        return Prompt(messages=list(episode.trajectory.messages), max_new_tokens=max_new, token_ids=token_ids,
                      tools=episode.tools)

    def _advance(self, episode: _Episode, prompt: Prompt, generation: Generation) -> bool:
        """Record the reply, step the environment, append its reply's tokens; False when the episode is over."""
        trajectory, generated = episode.trajectory, list(generation.token_ids)
        if episode.chat is not None and not generated:
            raise ValueError("the policy returned no token ids; a text-only policy needs a collector without a "
                             "tokenizer (text mode)")
        cut = None
        if generation.finish_reason == "length":
            cut = "turn_tokens" if prompt.max_new_tokens >= self.limits.max_turn_tokens else "episode_tokens"
        turn = Turn(prompt_len=len(episode.ids), generated_ids=generated, logprobs=list(generation.logprobs),
                    finish_reason=generation.finish_reason, action=generation.text, cut=cut)
        trajectory.turns.append(turn)
        episode.ids += generated

        began = time.perf_counter()
        obs, reward, terminated, truncated, info = episode.env.step(generation.text)
        self.last_stats.env_s += time.perf_counter() - began
        turn.observation, turn.reward, turn.info = obs, float(reward), info
        turn.reward_components = dict(info.get("reward_components", {}))
        trajectory.reward += turn.reward
        for name, value in turn.reward_components.items():
            trajectory.reward_components[name] = trajectory.reward_components.get(name, 0.0) + value
        reply = _reply_message(episode.env, obs)
        trajectory.messages += [{"role": "assistant", "content": generation.text}, reply]

        if terminated or truncated:
            trajectory.terminated = terminated
            trajectory.truncation = None if terminated else "env"
            trajectory.outcome = info.get("outcome") if terminated else None
            if truncated and info.get("error") is not None:
                trajectory.error = str(info["error"])
        elif self.limits.max_turns is not None and len(trajectory.turns) >= self.limits.max_turns:
            trajectory.truncation = "max_turns"
        if episode.chat is None:
            return trajectory.truncation is None and not trajectory.terminated

        began = time.perf_counter()
        if trajectory.terminated or trajectory.truncation:
            turn.env_ids = episode.chat.closing(generated)
        else:
            turn.env_ids = episode.chat.after_reply(generated, reply)
            if len(episode.ids) + len(turn.env_ids) >= self.limits.max_episode_tokens:
                trajectory.truncation = "episode_tokens"
                turn.env_ids = episode.chat.closing(generated)
        self.last_stats.tokenize_s += time.perf_counter() - began
        episode.ids += turn.env_ids
        return not (trajectory.terminated or trajectory.truncation)

    def _close(self, episode: _Episode) -> Trajectory:
        episode.env.close()
        return episode.trajectory

    def _chat(self, tools: Sequence[Mapping[str, Any]] | None) -> ChatTokens | None:
        """The ``ChatTokens`` for a tool list (one per distinct list), or None in text mode."""
        if self.tokenizer is None:
            return None
        key = json.dumps(tools, sort_keys=True) if tools else ""
        if key not in self._chats:
            self._chats[key] = chat_tokens(self.tokenizer, self.end_token_ids, tools)
        return self._chats[key]


def _reply_message(env: gym.Env, obs: str) -> Message:
    """The environment's reply as a message, with the role the environment logged for it (default "user")."""
    logged = getattr(env.unwrapped, "messages", None)
    role = logged[-1].get("role", "user") if logged else "user"
    return {"role": role, "content": _logged_content(env, obs)}


def _logged_content(env: gym.Env, obs: str) -> Any:
    """The content the environment logged for its last message when it is a list of content parts (text with
    images, e.g. VisualDiagnosis-v0), else the observation."""
    logged = getattr(env.unwrapped, "messages", None)
    content = logged[-1].get("content") if logged else None
    return content if isinstance(content, list) else obs


def _round_seed(seed: int, round_index: int) -> int:
    return (seed * 1_000_003 + round_index) % 2**63
