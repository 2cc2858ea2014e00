"""``ScriptedPolicy``: replies from a function of the conversation (baselines, tests, demos)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from clinical_gym.rollout.policy import Generation, Message, Prompt


class ScriptedPolicy:
    """A ``Policy`` whose reply text is ``reply(messages)``.

    With a ``tokenizer``, the reply is tokenized and ended with the EOS token (log-probabilities 0.0), and a reply
    longer than ``max_new_tokens`` is cut there (``finish_reason="length"``, text decoded from the kept tokens);
    without one, generations carry text only.
    """

    def __init__(self, reply: Callable[[Sequence[Message]], str], tokenizer: Any | None = None) -> None:
        self.reply = reply
        self.tokenizer = tokenizer

    def generate(self, prompts: Sequence[Prompt], *, seed: int | None = None) -> list[Generation]:
        return [self._one(p) for p in prompts]

    def _one(self, prompt: Prompt) -> Generation:
        text = self.reply(prompt.messages)
        if self.tokenizer is None:
            return Generation(text=text)
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        if len(ids) > prompt.max_new_tokens:
            ids = ids[:prompt.max_new_tokens]
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            return Generation(text, tuple(ids), (0.0,) * len(ids), "length")
        return Generation(text, tuple(ids), (0.0,) * len(ids), "stop")
