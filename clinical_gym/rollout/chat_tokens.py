"""Token ids of a conversation built turn by turn from a chat template, without re-tokenizing decoded history.

The opening (system + first user message) is templated once. After each generated reply, only the environment's
message is tokenized, as the difference between templating a fixed dummy conversation with and without it. The
template must be prefix-stable (adding a message never changes the tokens of earlier ones); this is checked.
``VisionChatTokens`` does the same through a vision-language model's processor, for conversations with images
(``chat_tokens`` picks the one for a tokenizer or processor).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clinical_gym.content_parts import has_images, text_of
from clinical_gym.rollout.policy import Message

# A fixed conversation that ends with a finished assistant reply; new messages are templated after it.
_DUMMY = ({"role": "system", "content": "S"}, {"role": "user", "content": "U"}, {"role": "assistant", "content": "A"})


class TemplateError(ValueError):
    """The chat template cannot be extended turn by turn (it is not prefix-stable, or has no end-of-turn token)."""


class ChatTokens:
    """Templated token ids for the parts of a multi-turn conversation, from a Hugging Face tokenizer.

    ``end_token_ids`` are the tokens that end a generated reply (default: the tokenizer's EOS). ``turn_end_id`` is
    the one the template writes after an assistant message; a reply cut off before it gets it appended as an
    environment token. ``tools`` (OpenAI tool schemas) are passed to the template.

    >>> chat = ChatTokens(tokenizer)                                    # doctest: +SKIP
    >>> ids = chat.opening("You are a doctor.", {"role": "user", "content": "I have a cough."})
    >>> ids += generated_ids + chat.after_reply(generated_ids, {"role": "user", "content": "Since Monday."})
    """

    def __init__(self, tokenizer: Any, end_token_ids: Iterable[int] | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None) -> None:
        self.tokenizer = tokenizer
        self.tools = list(tools) if tools else None
        self.end_token_ids = frozenset(end_token_ids if end_token_ids is not None else _eos_ids(tokenizer))
        if not self.end_token_ids:
            raise TemplateError("the tokenizer has no EOS token; pass end_token_ids")
        opened = self._render(_DUMMY[:2], add_generation_prompt=True)
        self._closed = self._render(_DUMMY, add_generation_prompt=False)
        if self._closed[:len(opened)] != opened:
            raise TemplateError("the chat template's generation prompt is not a prefix of the templated reply")
        ends = [i for i in range(len(opened), len(self._closed)) if self._closed[i] in self.end_token_ids]
        if not ends:
            raise TemplateError(f"the chat template writes none of the end tokens {sorted(self.end_token_ids)} "
                                "after an assistant message")
        self.turn_end_id: int = self._closed[ends[0]]
        self._after_end = self._closed[ends[0] + 1:]

    def opening(self, system_prompt: str | None, first: Message) -> list[int]:
        """The templated system prompt (when given) and first message, followed by the generation prompt."""
        messages = ([{"role": "system", "content": system_prompt}] if system_prompt is not None else []) + [dict(first)]
        return self._render(messages, add_generation_prompt=True)

    def after_reply(self, generated: Sequence[int], message: Message) -> list[int]:
        """The tokens that follow a generated reply: the end-of-turn token if the reply lacks one, what the template
        writes after it, then ``message`` (the environment's reply) and the next generation prompt."""
        return self.closing(generated) + self._after_end + self.message(message)

    def closing(self, generated: Sequence[int]) -> list[int]:
        """The end-of-turn token when ``generated`` was cut off before one, else nothing."""
        return [] if generated and generated[-1] in self.end_token_ids else [self.turn_end_id]

    def message(self, message: Message) -> list[int]:
        """``message`` as templated after a finished assistant reply, with the generation prompt after it."""
        extended = self._render([*_DUMMY, dict(message)], add_generation_prompt=True)
        if extended[:len(self._closed)] != self._closed:
            raise TemplateError("the chat template is not prefix-stable: appending a message changed earlier tokens")
        return extended[len(self._closed):]

    def _render(self, messages: Sequence[Mapping[str, Any]], add_generation_prompt: bool) -> list[int]:
        if has_images(messages):
            raise TemplateError("the conversation carries images and this is a text tokenizer: give the collector "
                                "the model's processor (a vision-language model), or make the environment "
                                "text-only (VisualDiagnosis-v0: image_mode='describe')")
        flat = [m if isinstance(m.get("content"), str) or m.get("content") is None
                else {**m, "content": text_of(m["content"])} for m in messages]
        kwargs: dict[str, Any] = {"tools": self.tools} if self.tools else {}
        encoded = self.tokenizer.apply_chat_template(list(flat), add_generation_prompt=add_generation_prompt,
                                                     tokenize=True, return_dict=True, **kwargs)
        return list(encoded["input_ids"])


class VisionChatTokens(ChatTokens):
    """``ChatTokens`` for a vision-language model's processor: messages may carry images (OpenAI ``image_url``
    parts); the processor's chat template writes its image placeholders and the processor expands each into the
    model's image tokens, so the ids match the pixel inputs of ``clinical_gym.rollout.vision.VisionInputs``."""

    def __init__(self, processor: Any, end_token_ids: Iterable[int] | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None) -> None:
        self.processor = processor
        super().__init__(processor.tokenizer, end_token_ids, tools)

    def _render(self, messages: Sequence[Mapping[str, Any]], add_generation_prompt: bool) -> list[int]:
        from clinical_gym.rollout.vision import conversation_pil_images, hf_messages

        kwargs: dict[str, Any] = {"tools": self.tools} if self.tools else {}
        text = self.processor.apply_chat_template(hf_messages(messages), add_generation_prompt=add_generation_prompt,
                                                  tokenize=False, **kwargs)
        images = conversation_pil_images(messages)
        encoded = self.processor(text=text, images=images or None)
        ids = encoded["input_ids"]
        return list(ids[0] if ids and isinstance(ids[0], list) else ids)


def chat_tokens(tokenizer: Any, end_token_ids: Iterable[int] | None = None,
                tools: Sequence[Mapping[str, Any]] | None = None) -> ChatTokens:
    """``VisionChatTokens`` for a multimodal processor, ``ChatTokens`` for a text tokenizer."""
    from clinical_gym.rollout.vision import is_processor

    kind = VisionChatTokens if is_processor(tokenizer) else ChatTokens
    return kind(tokenizer, end_token_ids, tools)


def _eos_ids(tokenizer: Any) -> list[int]:
    eos = tokenizer.eos_token_id
    return [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
