"""Scripted policies for the tool-using domains (acceptance tests and benchmark baselines).

Each is a callable ``policy(messages) -> reply`` (the ``clinical_gym.rollout.ScriptedPolicy`` contract), where
``messages`` is the conversation so far (``env.unwrapped.messages``; a message's content may be a list of OpenAI
content parts, of which the text parts are read):

* ``ExpertToolPolicy(task)``: replays the task's expected actions, then submits the gold answer and rationale;
* ``RandomToolPolicy(tools, seed)``: each turn calls a random tool with arguments drawn at random from its schema
  (strings are words from the conversation, so ids from the ticket come up), and sometimes submits words from
  the conversation as its answer.

``run_episode(env, policy, ...)`` plays one episode and returns the final reward and info.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from clinical_gym.content_parts import text_of
from clinical_gym.tool_env.tasks import Task

Messages = Sequence[Mapping[str, str]]
SUBMIT = "submit_answer"


def call_text(name: str, arguments: Mapping[str, Any]) -> str:
    """A tool call as the JSON text an agent sends."""
    return json.dumps({"name": name, "arguments": dict(arguments)}, ensure_ascii=False)


def _turn(messages: Messages) -> int:
    return sum(1 for m in messages if m["role"] == "assistant")


class ScriptPolicy:
    """Sends the replies of ``script`` in order, repeating the last one if the episode runs longer."""

    def __init__(self, script: Sequence[str]) -> None:
        if not script:
            raise ValueError("a script needs at least one reply")
        self.script = list(script)

    def __call__(self, messages: Messages) -> str:
        return self.script[min(_turn(messages), len(self.script) - 1)]


class ExpertToolPolicy(ScriptPolicy):
    """The task's expected actions with their full arguments, then ``submit_answer`` with the gold answer."""

    def __init__(self, task: Task, extra: Sequence[str] = ()) -> None:
        calls = [call_text(a.name, a.arguments) for a in task.expected_actions]
        submit = call_text(SUBMIT, {"answer": task.answer, "reasoning": task.rationale})
        super().__init__([*calls, *extra, submit])


class RandomToolPolicy:
    """Random tool calls with schema-shaped random arguments; ``submit_probability`` per turn of submitting."""

    def __init__(self, tools: Sequence[Mapping[str, Any]], seed: int = 0, submit_probability: float = 0.1) -> None:
        self.functions = [t["function"] for t in tools if t["function"]["name"] != SUBMIT]
        self.rng = np.random.default_rng(seed)
        self.submit_probability = submit_probability

    def __call__(self, messages: Messages) -> str:
        words = re.findall(r"[A-Za-z0-9][\w-]*", " ".join(text_of(m["content"]) for m in messages
                                                          if m["role"] != "system"))
        if self.rng.random() < self.submit_probability:
            return call_text(SUBMIT, {"answer": self._words(words, 3)})
        function = self.functions[int(self.rng.integers(len(self.functions)))]
        schema = function["parameters"]
        arguments = {name: self._value(spec, words) for name, spec in schema["properties"].items()
                     if name in schema.get("required", ()) or self.rng.random() < 0.5}
        return call_text(function["name"], arguments)

    def _words(self, words: Sequence[str], most: int) -> str:
        if not words:
            return "unknown"
        count = int(self.rng.integers(1, most + 1))
        return " ".join(words[int(i)] for i in self.rng.integers(len(words), size=count))

    def _value(self, spec: Mapping[str, Any], words: Sequence[str]) -> Any:
        if "enum" in spec:
            return spec["enum"][int(self.rng.integers(len(spec["enum"])))]
        kind = spec.get("type", "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        low, high = spec.get("minimum", 0), spec.get("maximum", 100)
        makers: dict[str, Callable[[], Any]] = {
            "integer": lambda: int(self.rng.integers(int(low), int(high) + 1)),
            "number": lambda: round(float(self.rng.uniform(low, high)), 1),
            "boolean": lambda: bool(self.rng.integers(2)),
            "array": lambda: [self._value(spec.get("items", {}), words) for _ in range(int(self.rng.integers(1, 4)))],
            "object": dict,
        }
        return makers.get(kind, lambda: self._words(words, 2))()


def run_episode(env: Any, policy: Callable[[Messages], str], *, seed: int | None = None,
                options: dict[str, Any] | None = None) -> tuple[float, dict[str, Any]]:
    """Play one episode of ``env`` with ``policy``; the final step's reward and info."""
    env.reset(seed=seed, options=options)
    while True:
        _, reward, terminated, truncated, info = env.step(policy(env.unwrapped.messages))
        if terminated or truncated:
            return reward, info
