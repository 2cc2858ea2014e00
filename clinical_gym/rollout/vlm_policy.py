"""``TransformersVLMPolicy``: batched sampling from a transformers vision-language model (LLaVA, Idefics3/SmolVLM and
others whose processor expands image placeholders into image tokens), for conversations whose messages carry images
as OpenAI content parts. Imports torch."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch

from clinical_gym.rollout.policy import Prompt
from clinical_gym.rollout.transformers_policy import TransformersPolicy
from clinical_gym.rollout.vision import VisionInputs, conversation_pil_images, hf_messages


class TransformersVLMPolicy(TransformersPolicy):
    """A ``Policy`` over a vision-language model and its ``processor``: ``TransformersPolicy``'s batched decoding
    (left padding, KV cache, tempered-softmax logprobs), with the images of every conversation in the batch given
    to the first forward pass as the processor's pixel inputs. Prompts with ``token_ids`` (from a
    ``RolloutCollector`` given the processor) already hold the image tokens; others are templated and expanded by
    the processor here. The images are read from the prompt's messages (``image_url`` data URLs), in order, so the
    pixels always match the image tokens.

    The image placeholder tokens (every added token whose text names an image) are masked out of the model's
    logits by a forward hook installed here, so neither sampling nor a trainer's logprobs (the same model) ever
    give them probability: a generated placeholder would have no pixels behind it.

    Works with models whose text positions are 1-D (LLaVA, Idefics3/SmolVLM, ...); models with multimodal rotary
    positions (Qwen2-VL) need their own position handling and are not supported.
    """

    def __init__(self, model: Any, processor: Any, *, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0,
                 stop_token_ids: Iterable[int] | None = None) -> None:
        self.processor = processor
        self.vision = VisionInputs(processor)
        super().__init__(model, processor.tokenizer, temperature=temperature, top_p=top_p, top_k=top_k,
                         stop_token_ids=stop_token_ids)
        self.image_token_ids = image_token_ids(processor.tokenizer)
        mask_logits(model, self.image_token_ids)

    def _template(self, prompt: Prompt) -> list[int]:
        text = self.processor.apply_chat_template(hf_messages(prompt.messages), add_generation_prompt=True,
                                                  tokenize=False)
        images = conversation_pil_images(prompt.messages)
        ids = self.processor(text=text, images=images or None)["input_ids"]
        return list(ids[0] if ids and isinstance(ids[0], list) else ids)

    def _prefill_inputs(self, prompts: Sequence[Prompt], device: torch.device) -> dict[str, Any]:
        joined = VisionInputs.collate([self.vision(p.messages) for p in prompts])
        return on_device(joined, device, next(self.model.parameters()).dtype)


def on_device(inputs: dict[str, Any], device: torch.device | str, dtype: torch.dtype) -> dict[str, Any]:
    """Tensors moved to ``device``, floating ones cast to the model's ``dtype`` (pixel values)."""
    return {k: (v.to(device=device, dtype=dtype) if v.is_floating_point() else v.to(device))
            if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}


def image_token_ids(tokenizer: Any) -> list[int]:
    """The ids of a tokenizer's added tokens whose text names an image (``<image>``, ``<fake_token_around_image>``,
    ``<global-img>``, ...)."""
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    return sorted(i for i, token in added.items() if "image" in str(token).lower() or "img" in str(token).lower())


def mask_logits(model: Any, token_ids: Sequence[int]) -> None:
    """Give ``token_ids`` the lowest logit in every forward pass of ``model`` (a hook, installed once)."""
    if not token_ids or getattr(model, "_clinical_gym_masked_ids", None) == list(token_ids):
        return
    ids = torch.tensor(list(token_ids))

    def hook(module: Any, inputs: Any, output: Any) -> Any:
        logits = getattr(output, "logits", None)
        if logits is not None:
            logits[..., ids.to(logits.device)] = torch.finfo(logits.dtype).min
        return output

    model.register_forward_hook(hook)
    model._clinical_gym_masked_ids = list(token_ids)
