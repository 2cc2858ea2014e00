"""Message content as OpenAI-style content parts: a message's ``content`` is either a string or a list of parts,
``{"type": "text", "text": ...}`` and ``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}``.

Environments that show images (``VisualDiagnosis-v0``) put such lists in ``env.unwrapped.messages``; everything that
reads messages as text (scripted policies, templates of text-only models, transcripts) goes through ``text_of``.
Standard library only.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

PNG_DATA_URL = "data:image/png;base64,"
_DATA_URL = re.compile(r"^data:(?P<mime>image/[\w.+-]+);base64,(?P<data>.*)$", re.S)


def png_data_url(png: bytes) -> str:
    """A PNG as a ``data:image/png;base64,...`` URL."""
    return PNG_DATA_URL + base64.b64encode(png).decode("ascii")


def data_url_bytes(url: str) -> bytes:
    """The bytes of a base64 image data URL; ValueError for anything else."""
    found = _DATA_URL.match(url)
    if found is None:
        raise ValueError(f"not a base64 image data URL: {url[:40]!r}")
    try:
        return base64.b64decode(found["data"], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the image data URL is not valid base64") from None


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_part(url: str) -> dict[str, Any]:
    """An ``image_url`` content part for a (data) URL."""
    return {"type": "image_url", "image_url": {"url": url}}


def parts(text: str | Sequence[str], image_urls: Iterable[str]) -> list[dict[str, Any]]:
    """Content with the text (one part per string when several) first, then one image part per URL."""
    texts = [text] if isinstance(text, str) else list(text)
    return [*(text_part(t) for t in texts), *(image_part(u) for u in image_urls)]


def text_of(content: str | Sequence[Mapping[str, Any]] | None, image_placeholder: str | None = None) -> str:
    """The text of a message's content: the string itself, or the text parts joined by newlines. Image parts are
    left out, or written as ``image_placeholder`` when given (e.g. ``"[image]"``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    pieces = []
    for part in content:
        if part.get("type") == "text":
            pieces.append(str(part.get("text", "")))
        elif image_placeholder is not None and part.get("type") in ("image_url", "image"):
            pieces.append(image_placeholder)
    return "\n".join(pieces)


def first_text(content: str | Sequence[Mapping[str, Any]] | None) -> str:
    """The string content, or the first text part of a list of parts ("" without one): an environment's opening
    observation, when it sent images with it."""
    if content is None or isinstance(content, str):
        return content or ""
    return next((str(p.get("text", "")) for p in content if p.get("type") == "text"), "")


def image_urls(content: str | Sequence[Mapping[str, Any]] | None) -> list[str]:
    """The URLs of a message content's image parts, in order."""
    if content is None or isinstance(content, str):
        return []
    return [str(p["image_url"]["url"]) for p in content if p.get("type") == "image_url"]


def conversation_images(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every image URL of a conversation, in order of appearance."""
    return [url for m in messages for url in image_urls(m.get("content"))]


def has_images(messages: Iterable[Mapping[str, Any]]) -> bool:
    return any(image_urls(m.get("content")) for m in messages)


def text_messages(messages: Iterable[Mapping[str, Any]], image_placeholder: str | None = None) -> list[dict[str, Any]]:
    """The conversation with every content flattened to text (``text_of``)."""
    return [{**m, "content": text_of(m.get("content"), image_placeholder)} for m in messages]


def short_url(url: str) -> str:
    """A data URL as a short stand-in naming its type and size (other URLs unchanged)."""
    found = _DATA_URL.match(url)
    return f"data:{found['mime']};base64,<{len(found['data']) * 3 // 4} bytes omitted>" if found else url


def without_image_data(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The conversation with each image data URL replaced by ``short_url`` (for logs and transcripts, which would
    otherwise hold every PNG)."""
    def shrink(part: Mapping[str, Any]) -> dict[str, Any]:
        if part.get("type") != "image_url":
            return dict(part)
        return {"type": "image_url", "image_url": {"url": short_url(str(part["image_url"]["url"]))}}

    return [{**m, "content": m["content"] if isinstance(m.get("content"), str) or m.get("content") is None
             else [shrink(p) for p in m["content"]]} for m in messages]
