"""``PlaySession``: one episode of any environment played by a person, line by line.

Each line the person types is either a command that costs no turn or an action for the environment, which the
environment family's ``PlayFamily`` writes in the agent's format (so the environment sees exactly what an agent
would send). Commands: ``help``, ``prompt`` (the full system prompt the agent gets), the family's catalogue
(``tools`` / ``tests`` / ``exams``, with an optional word to look up), ``record`` (what has been revealed so far)
and ``quit``; a leading ``/`` (``/help``) always marks a command. A warning comes before the last turn. At the end
the session prints the outcome, the reward and each reward component summed over the episode.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

Reader = Callable[[str], str]
Writer = Callable[[str], None]
PROMPT_LINES_SHOWN = 20
"""System prompts up to this many lines are printed when the episode starts; longer ones on ``prompt``."""
GENERAL_COMMANDS = (
    ("help", "this help"),
    ("prompt", "the full system prompt the agent gets"),
    ("record", "what has been revealed so far"),
    ("quit", "stop the episode (Ctrl-D too)"),
)


@dataclass(frozen=True)
class Typed:
    """What a typed line becomes: an ``action`` for the environment (costs a turn; ``shown`` is how it was sent
    when the family rewrote it noticeably), or a ``notice`` for the person (costs nothing)."""

    action: str | None = None
    notice: str | None = None
    shown: str | None = None


class PlayFamily:
    """How a person plays one environment family. Subclasses set the class attributes and the methods below."""

    label = "env"
    """Who speaks the observations: "patient", "result", "tool"."""
    opening_label = "env"
    catalogue_commands: tuple[str, ...] = ()
    """Command words that show the catalogue (the first is listed in help)."""
    catalogue_help = ""

    def __init__(self, env: gym.Env, info: Mapping[str, Any]) -> None:
        self.env = env.unwrapped
        self.info = dict(info)

    def how_to_act(self) -> list[str]:
        """Lines saying what the person can type to act."""
        raise NotImplementedError

    def parse(self, line: str) -> Typed:
        """The action (or a notice) for one typed line."""
        raise NotImplementedError

    def catalogue(self, query: str) -> str:
        """What can be ordered or called; ``query`` (may be empty) narrows it or looks one name up."""
        return "This environment has no catalogue."

    def record(self) -> str:
        """What has been revealed so far in this episode."""
        raise NotImplementedError

    def turns(self) -> tuple[int, int]:
        """(turns used, turn budget)."""
        raise NotImplementedError

    def last_turn_warning(self) -> str:
        raise NotImplementedError

    def after_step(self, observation: str, info: Mapping[str, Any]) -> str | None:
        """A note printed after a step's observation (e.g. a new phase), or None."""
        return None

    def ending(self, outcome: Mapping[str, Any]) -> list[str]:
        """Lines about the outcome beyond result and reward (the gold answer, scores)."""
        return []


@dataclass
class PlayResult:
    """How a played episode ended: ``finished`` is False when the person quit; ``components`` sums each reward
    component over the episode's steps; ``error`` is the environment's ``info["error"]`` when a simulated actor
    failed."""

    finished: bool
    reward: float = 0.0
    components: dict[str, float] = field(default_factory=dict)
    turns: int = 0
    outcome: dict[str, Any] | None = None
    error: str | None = None


class PlaySession:
    """One episode of ``env`` played through ``read`` (a prompt in, a typed line out; EOFError ends the episode)
    and ``write`` (one block of text out)."""

    def __init__(self, env: gym.Env, family: type[PlayFamily], *, read: Reader = input,
                 write: Writer = print) -> None:
        self.env = env
        self.family_type = family
        self.read = read
        self.write = write

    def play(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None,
             show_prompt: bool | None = None) -> PlayResult:
        """Reset with ``seed``/``options`` and play until the episode ends or the person quits. ``show_prompt``:
        print the full system prompt first (None: when it is short)."""
        obs, info = self.env.reset(seed=seed, options=dict(options) if options else None)
        family = self.family_type(self.env, info)
        self._banner(family, info.get("system_prompt") or "", show_prompt)
        self.write(f"[{family.opening_label}] {obs}")
        result = PlayResult(finished=False)
        warned = False
        while True:
            used, budget = family.turns()
            if budget - used == 1 and not warned:
                self.write(f"! {family.last_turn_warning()}")
                warned = True
            try:
                line = self.read(f"[turn {used + 1}/{budget}] > ").strip()
            except EOFError:
                line = "quit"
            if not line:
                continue
            command = self._command(family, line, info.get("system_prompt") or "")
            if command is not None:
                if command == "quit":
                    self.write(f"\nepisode abandoned after {used} turn(s); reward so far {result.reward:+.2f}")
                    result.turns = used
                    return result
                self.write(command)
                continue
            typed = family.parse(line)
            if typed.notice is not None:
                self.write(typed.notice)
                continue
            if typed.shown:
                self.write(f"  (sent: {typed.shown})")
            obs, reward, terminated, truncated, step_info = self.env.step(typed.action)
            result.reward += float(reward)
            for name, value in (step_info.get("reward_components") or {}).items():
                result.components[name] = result.components.get(name, 0.0) + float(value)
            self.write(f"[{family.label}] {obs}" + (f"   (reward {reward:+.2f})" if reward else ""))
            note = family.after_step(obs, step_info)
            if note:
                self.write(note)
            if terminated or truncated:
                result.finished, result.turns = True, family.turns()[0]
                result.outcome, result.error = step_info.get("outcome"), step_info.get("error")
                self.write(self._summary(family, result))
                return result

    # -- pieces -------------------------------------------------------------------------------------------------
    def _banner(self, family: PlayFamily, system_prompt: str, show_prompt: bool | None) -> None:
        env_id = self.env.spec.id if self.env.spec is not None else type(self.env.unwrapped).__name__
        lines = system_prompt.splitlines()
        if show_prompt is None:
            show_prompt = len(lines) <= PROMPT_LINES_SHOWN
        parts = [f"== {env_id} =="]
        if show_prompt:
            parts += ["The agent's system prompt:", textwrap.indent(system_prompt, "  | "), ""]
        else:
            parts += [f"The agent's system prompt has {len(lines)} lines; type 'prompt' to read it.", ""]
        parts += family.how_to_act()
        parts.append(f"Commands that cost no turn: {', '.join(self._command_words(family))} "
                     "('help' explains them).")
        self.write("\n".join(parts) + "\n")

    def _command_words(self, family: PlayFamily) -> list[str]:
        words = [name for name, _ in GENERAL_COMMANDS]
        return words[:2] + list(family.catalogue_commands[:1]) + words[2:]

    def _help(self, family: PlayFamily) -> str:
        rows = list(GENERAL_COMMANDS)
        if family.catalogue_commands:
            rows.insert(2, (" / ".join(family.catalogue_commands) + " [WORD]", family.catalogue_help))
        width = max(len(name) for name, _ in rows)
        lines = family.how_to_act() + ["", "Commands (no turn used; '/help' works too):"]
        lines += [f"  {name:<{width}}  {text}" for name, text in rows]
        return "\n".join(lines)

    def _command(self, family: PlayFamily, line: str, system_prompt: str) -> str | None:
        """The text a command prints ("quit" for quit), or None when the line is not a command."""
        forced = line.startswith("/")
        word, _, rest = line.lstrip("/").strip().partition(" ")
        word, rest = word.lower(), rest.strip()
        if not forced and (line.endswith("?") or (rest and word not in family.catalogue_commands)):
            return None
        if word in ("quit", "exit", "q"):
            return "quit"
        if word in ("help", "?", "h"):
            return self._help(family)
        if word == "prompt":
            return system_prompt
        if word == "record":
            return family.record()
        if word in family.catalogue_commands:
            return family.catalogue(rest)
        return f"unknown command '{word}'; type help" if forced else None

    def _summary(self, family: PlayFamily, result: PlayResult) -> str:
        outcome = result.outcome or {}
        lines = ["", "== episode over =="]
        head = f"outcome: {outcome.get('result', 'none')}"
        if "success" in outcome:
            head += f"   success: {'yes' if outcome['success'] else 'no'}"
        lines.append(head)
        if result.error:
            lines.append(f"the episode ended on an error (a simulated actor or the judge failed): {result.error}")
        lines.append(f"reward: {result.reward:+.3f} in {result.turns} turn(s)")
        if result.components:
            width = max(len(name) for name in result.components)
            lines.append("reward components (summed over the episode):")
            lines += [f"  {name:<{width}}  {value:+.3f}" for name, value in result.components.items()]
        lines += family.ending(outcome)
        return "\n".join(lines)
