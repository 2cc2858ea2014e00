"""What an experience's state and action are, as text: the dialogue before the agent's reply, and the part of the
reply the other side hears."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

MAX_STATE_CHARS = 1200
"""The longest state kept (about the 256 word pieces all-MiniLM-L6-v2 reads)."""
ROLE_LABELS = {"user": "Patient", "assistant": "Doctor", "tool": "Tool"}
"""How each message role is named in a state; system messages are left out."""

_THINK = re.compile(r"<think>.*?(</think>|$)", re.S | re.I)
_ANSWER_TAG = re.compile(r"</?answer>", re.I)
_GAP = "…"


def visible_reply(action: str) -> str:
    """The reply without its ``<think>`` reasoning and ``<answer>`` tags (what the patient hears)."""
    return _ANSWER_TAG.sub("", _THINK.sub("", action)).strip()


def dialogue_state(messages: Sequence[Mapping[str, str]], max_chars: int = MAX_STATE_CHARS) -> str:
    """The conversation as ``Role: text`` lines (system prompt left out, doctor replies without reasoning).

    When it is longer than ``max_chars``, the opening message is kept (it holds the presenting complaint; at most half
    of ``max_chars``) and then as many of the latest messages as fit, with ``…`` marking the gap.
    """
    lines = [f"{ROLE_LABELS.get(m['role'], m['role'].capitalize())}: {_text(m)}"
             for m in messages if m.get("role") != "system"]
    if not lines:
        return ""
    text = "\n".join(lines)
    if len(text) <= max_chars:
        return text
    head = lines[0][:max_chars // 2]
    tail: list[str] = []
    room = max_chars - len(head) - len(_GAP) - 1
    for line in reversed(lines[1:]):
        if len(line) + 1 > room:
            break
        tail.insert(0, line)
        room -= len(line) + 1
    return "\n".join([head, _GAP, *tail])


def _text(message: Mapping[str, str]) -> str:
    content = message.get("content") or ""
    return " ".join((visible_reply(content) if message.get("role") == "assistant" else content).split())
