"""A tiny vision-language model built in memory, for tests and examples: a randomly initialised LLaVA (a one-layer
CLIP vision tower on 32 x 32 images, 16 image tokens per image, and a small Llama), with a ``LlavaProcessor`` made
offline from the in-memory BPE tokenizer of ``tiny_models`` plus an ``<image>`` token and a ChatML template that
reads content parts. Nothing comes from a model hub."""

from __future__ import annotations

from typing import Any

from clinical_gym.trainers.common.tiny_models import tiny_tokenizer

IMAGE_TOKEN = "<image>"
IMAGE_SIZE, PATCH_SIZE = 32, 8
# ChatML over string contents or content parts: text parts verbatim, image parts as the image placeholder.
CHATML_PARTS_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% elif part['type'] == 'image' %}{{ '<image>' }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def tiny_vlm_processor(tokenizer: Any | None = None) -> Any:
    """A ``LlavaProcessor``: CLIP-style image preprocessing to 32 x 32 and the tiny tokenizer with ``<image>``."""
    from transformers import LlavaProcessor
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    tokenizer = tokenizer or tiny_tokenizer()
    if IMAGE_TOKEN not in tokenizer.get_vocab():
        tokenizer.add_special_tokens({"additional_special_tokens": [IMAGE_TOKEN]})
    tokenizer.chat_template = CHATML_PARTS_TEMPLATE
    images = CLIPImageProcessorPil(size={"shortest_edge": IMAGE_SIZE},
                                   crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    return LlavaProcessor(image_processor=images, tokenizer=tokenizer, patch_size=PATCH_SIZE,
                          vision_feature_select_strategy="default", chat_template=CHATML_PARTS_TEMPLATE,
                          num_additional_image_tokens=1)


def tiny_vlm(processor: Any, hidden_size: int = 64, num_layers: int = 2, seed: int = 0) -> Any:
    """A randomly initialised ``LlavaForConditionalGeneration`` over ``processor``'s vocabulary (float32)."""
    import torch
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration

    tokenizer = processor.tokenizer
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                              image_size=IMAGE_SIZE, patch_size=PATCH_SIZE, projection_dim=32)
    text = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                       num_hidden_layers=num_layers, num_attention_heads=4, num_key_value_heads=4,
                       max_position_embeddings=8192, bos_token_id=tokenizer.bos_token_id,
                       eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                       tie_word_embeddings=True)
    config = LlavaConfig(vision_config=vision, text_config=text,
                         image_token_id=tokenizer.convert_tokens_to_ids(IMAGE_TOKEN),
                         vision_feature_select_strategy="default", vision_feature_layer=-1,
                         image_seq_length=(IMAGE_SIZE // PATCH_SIZE) ** 2)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return LlavaForConditionalGeneration(config)
