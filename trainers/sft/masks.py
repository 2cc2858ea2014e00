"""Token ids of an expert conversation with its assistant mask, built exactly as the ``RolloutCollector`` builds a
rollout's tokens (``clinical_gym.rollout.ChatTokens``): the templated opening, then per reply its own tokens and
the end-of-turn token (mask 1), then the template glue and the environment's message (mask 0).

TRL's ``assistant_only_loss`` needs ``{% generation %}`` markers in the chat template, which SmolLM2's (and most)
templates lack; this mask does the same job for any prefix-stable template, and the tokens it trains on are the
tokens the policy later generates in a rollout.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clinical_gym.rollout import ChatTokens

Message = Mapping[str, str]


def conversation_tokens(chat: ChatTokens, messages: Sequence[Message]) -> tuple[list[int], list[int]]:
    """``(input_ids, assistant_mask)`` of a conversation that opens with an optional system prompt and a message
    from the environment, then alternates assistant replies and environment messages. Messages after the last
    assistant reply carry no loss and are left out."""
    if not any(m["role"] == "assistant" for m in messages):
        raise ValueError("the conversation has no assistant reply")
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    messages = list(messages[:last + 1])
    system = messages[0]["content"] if messages[0]["role"] == "system" else None
    start = 0 if system is None else 1
    if messages[start]["role"] == "assistant":
        raise ValueError("the conversation must open with a message from the environment, not an assistant reply")
    ids = chat.opening(system, messages[start])
    mask = [0] * len(ids)
    reply: list[int] | None = None
    for message in messages[start + 1:]:
        if message["role"] == "assistant":
            if reply is not None:
                raise ValueError("two assistant replies in a row")
            reply = chat.tokenizer.encode(message["content"], add_special_tokens=False) + [chat.turn_end_id]
            ids += reply
            mask += [1] * len(reply)
        else:
            if reply is None:
                raise ValueError("two environment messages in a row")
            glue = chat.after_reply(reply, message)
            ids += glue
            mask += [0] * len(glue)
            reply = None
    return ids, mask


def tokenized_rows(conversations: Iterable[tuple[Sequence[Message], Sequence[Mapping[str, Any]]]], tokenizer: Any,
                   end_token_ids: Iterable[int] | None = None) -> list[dict[str, list[int]]]:
    """``{"input_ids", "assistant_masks"}`` rows (what TRL's ``SFTTrainer`` takes as a pre-tokenized dataset: it
    sets the labels of mask-0 tokens to -100) from ``(messages, tool schemas)`` pairs."""
    ends = None if end_token_ids is None else list(end_token_ids)
    chats: dict[str, ChatTokens] = {}
    rows = []
    for messages, tools in conversations:
        key = json.dumps(list(tools), sort_keys=True) if tools else ""
        if key not in chats:
            chats[key] = ChatTokens(tokenizer, ends, tools or None)
        ids, mask = conversation_tokens(chats[key], messages)
        rows.append({"input_ids": ids, "assistant_masks": mask})
    return rows
