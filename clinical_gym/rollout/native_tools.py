"""Native function calling for tool environments over a chat API: the environment's schemas go out as ``tools``,
and a reply's ``tool_calls`` come back as the environment's action text.

The action text of a native call is the JSON the tool environments read as OpenAI ``tool_calls`` (format score 1.0,
``clinical_gym.tools.calls``)::

    {"content": "<text the model wrote beside the calls, if any>",
     "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_vitals", "arguments": "{...}"}}]}

so transcripts keep exactly what the model did. ``native_messages`` turns a conversation holding such actions back
into the chat API's form for the next request: the assistant message carries ``tool_calls`` and the environment's
reply becomes one ``tool`` message per call (``tool_call_id``); a reply to several calls (numbered ``[1] name:
...``, ``[2] name: ...``) is split by number. Images in a reply (content parts, VisualDiagnosis-v0) follow the tool
messages as a user message, since tool messages carry only text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from clinical_gym.content_parts import image_urls, parts, text_of
from clinical_gym.rollout.policy import Message

_NUMBERED = re.compile(r"\n\n(?=\[\d+\] )")
SEE_ABOVE = "(the results of this turn's calls are in the first tool message above)"
TOOL_IMAGES = "The images the tool results above refer to:"


def tool_call_action(message: Mapping[str, Any]) -> str:
    """The environment action for a chat reply ``message``: its content when it has no ``tool_calls``, else the
    ``tool_calls`` JSON (ids filled in where the server left them out, arguments as JSON text)."""
    calls = message.get("tool_calls") or []
    content = message.get("content") or ""
    if not calls:
        return content
    written = []
    for i, call in enumerate(calls, 1):
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
        written.append({"id": call.get("id") or f"call_{i}", "type": "function",
                        "function": {"name": function.get("name") or "", "arguments": arguments}})
    action: dict[str, Any] = {"content": content} if content.strip() else {}
    action["tool_calls"] = written
    return json.dumps(action, ensure_ascii=False)


def action_tool_calls(text: str) -> tuple[str | None, list[dict[str, Any]]] | None:
    """(content, tool_calls) of an action written by ``tool_call_action``, or None for any other text."""
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or set(value) - {"content", "tool_calls"}:
        return None
    calls = value.get("tool_calls")
    if not isinstance(calls, list) or not calls or not all(
            isinstance(c, dict) and isinstance(c.get("id"), str) and isinstance(c.get("function"), dict)
            for c in calls):
        return None
    return value.get("content") or None, calls


def split_results(text: str, count: int) -> list[str]:
    """The environment's reply to ``count`` calls, one text per call."""
    if count == 1:
        return [text]
    parts = _NUMBERED.split(text)
    if len(parts) == count + 1 and not parts[0].startswith("[1] "):  # a notice before the numbered results
        parts = [f"{parts[0]}\n\n{parts[1]}", *parts[2:]]
    if len(parts) != count:
        return [text] + [SEE_ABOVE] * (count - 1)
    return parts


def native_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """``messages`` as a chat API with ``tools`` expects them (see the module docstring)."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for message in messages:
        role, content = message["role"], message["content"]
        native = action_tool_calls(content) if role == "assistant" else None
        if native is not None:
            text, pending = native
            out.append({"role": "assistant", "content": text, "tool_calls": pending})
            continue
        if pending and role in ("user", "tool"):
            out += [{"role": "tool", "tool_call_id": call["id"], "content": result}
                    for call, result in zip(pending, split_results(text_of(content), len(pending)))]
            if image_urls(content):  # tool messages carry text only: the images follow as a user message
                out.append({"role": "user", "content": parts(TOOL_IMAGES, image_urls(content))})
        else:
            out.append(dict(message))
        pending = []
    return out
