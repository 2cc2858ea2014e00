"""Images in conversations for vision-language models: from OpenAI content parts (``image_url`` with a data URL,
what ``VisualDiagnosis-v0`` writes) to what a transformers processor takes (Hugging Face content parts, Pillow
images, pixel tensors).

* ``is_processor(obj)``: a multimodal processor (it has an ``image_processor``) rather than a text tokenizer;
* ``hf_messages(messages)``: the conversation with ``image_url`` parts as ``{"type": "image"}`` placeholders (what
  processors' chat templates expand), images kept in order by ``conversation_pil_images``;
* ``VisionInputs(processor)``: the pixel inputs of one conversation's images, and ``collate`` for a batch of
  conversations (concatenated in order; a per-row image axis, as Idefics3 uses, padded with all-zero images, which
  those models drop).

Pillow and torch are imported when used.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clinical_gym.content_parts import conversation_images, data_url_bytes


def is_processor(obj: Any) -> bool:
    """Whether ``obj`` is a multimodal processor (an ``image_processor`` and a ``tokenizer``), not a tokenizer."""
    return getattr(obj, "image_processor", None) is not None and getattr(obj, "tokenizer", None) is not None


def text_tokenizer(obj: Any) -> Any:
    """The text tokenizer of a processor, or ``obj`` itself."""
    return obj.tokenizer if is_processor(obj) else obj


def pil_image(url: str) -> Any:
    """A data URL's image as an RGB Pillow image."""
    from PIL import Image

    return Image.open(io.BytesIO(data_url_bytes(url))).convert("RGB")


def conversation_pil_images(messages: Iterable[Mapping[str, Any]]) -> list[Any]:
    """Every image of a conversation, in order, as Pillow images."""
    return [pil_image(url) for url in conversation_images(messages)]


def hf_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The conversation in the Hugging Face chat-template form: string contents kept, OpenAI content parts mapped
    to ``{"type": "text", "text": ...}`` and ``{"type": "image"}`` (the processor fills in the pixels)."""
    out = []
    for m in messages:
        content = m.get("content")
        if content is None or isinstance(content, str):
            out.append(dict(m))
            continue
        hf = [{"type": "text", "text": str(p.get("text", ""))} if p.get("type") == "text" else {"type": "image"}
              for p in content if p.get("type") in ("text", "image_url", "image")]
        out.append({**m, "content": hf})
    return out


class VisionInputs:
    """Pixel inputs for a processor's model: ``vision(messages)`` gives the tensors of one conversation's images
    (an empty dict without images); ``vision.collate(rows)`` joins the rows of a batch."""

    def __init__(self, processor: Any) -> None:
        if not is_processor(processor):
            raise TypeError(f"{type(processor).__name__} is not a multimodal processor (no image_processor)")
        self.processor = processor

    def __call__(self, messages: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
        images = conversation_pil_images(messages)
        if not images:
            return {}
        return dict(self.processor.image_processor(images=images, return_tensors="pt"))

    @staticmethod
    def collate(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The rows' tensors joined along the first axis (rows without images add nothing); where rows differ in
        their second axis (a per-row image axis), shorter rows are padded with zeros first."""
        import torch

        present = [r for r in rows if r]
        if not present:
            return {}
        joined = {}
        for key in present[0]:
            values = [r[key] for r in present]
            if all(v.shape[1:] == values[0].shape[1:] for v in values):
                joined[key] = torch.cat(values)
                continue
            width = max(v.shape[1] for v in values)
            padded = [torch.nn.functional.pad(v, [0, 0] * (v.dim() - 2) + [0, width - v.shape[1]]) for v in values]
            joined[key] = torch.cat(padded)
        return joined
