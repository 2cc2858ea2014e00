"""An LLM client over a local transformers causal language model (torch and transformers imported lazily)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from clinical_gym.llm.base import LLMError

if TYPE_CHECKING:
    import torch


class TransformersClient:
    """``LLMClient`` that generates with a local causal LM, one sequence at a time.

    ``chat`` applies the tokenizer's chat template (with the generation prompt), ``complete`` tokenizes the raw
    prompt. Temperature 0 decodes greedily; otherwise it samples with a ``torch.Generator`` seeded from ``seed``.
    Generation ends at an end-of-sequence token, after ``max_tokens`` new tokens, or at the first stop string;
    only the new text is returned, cut before the stop string. Failures raise ``LLMError``.
    """

    def __init__(self, model: Any, tokenizer: Any, device: str | None = None,
                 dtype: str | torch.dtype | None = None) -> None:
        import torch

        if dtype is not None:
            model = model.to(getattr(torch, dtype) if isinstance(dtype, str) else dtype)
        if device is not None:
            model = model.to(device)
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.device = next(model.parameters()).device
        self.eos_token_ids = _eos_token_ids(model, tokenizer)

    @classmethod
    def from_pretrained(cls, path: str, gguf_file: str | None = None, device: str | None = None,
                        dtype: str = "float32") -> TransformersClient:
        """Load tokenizer and model from ``path`` (a directory or model id; ``gguf_file`` names a GGUF in it)."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from clinical_gym.llm import gguf_cache

        path, gguf_file = gguf_cache.resolve(path, gguf_file)  # a GGUF file: its plain folder, converted once
        tokenizer = AutoTokenizer.from_pretrained(path, gguf_file=gguf_file)
        model = AutoModelForCausalLM.from_pretrained(path, gguf_file=gguf_file, dtype=dtype)
        return cls(model, tokenizer, device=device)

    def chat(self, messages: list[dict[str, str]], *, max_tokens: int = 256, temperature: float = 0.0,
             stop: list[str] | None = None, seed: int | None = None) -> str:
        """Reply to an OpenAI-style message list, formatted with the tokenizer's chat template."""
        return self._generate(lambda: self._chat_ids(messages), max_tokens, temperature, stop, seed)

    def complete(self, prompt: str, *, max_tokens: int = 256, temperature: float = 0.0,
                 stop: list[str] | None = None, seed: int | None = None) -> str:
        """Continue a raw text prompt."""
        return self._generate(lambda: self.tokenizer(prompt, return_tensors="pt")["input_ids"],
                              max_tokens, temperature, stop, seed)

    def _chat_ids(self, messages: list[dict[str, str]]) -> torch.Tensor:
        encoded = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_dict=True,
                                                     return_tensors="pt")
        return encoded["input_ids"]

    def _generate(self, encode: Callable[[], torch.Tensor], max_tokens: int, temperature: float,
                  stop: list[str] | None, seed: int | None) -> str:
        """Encode the prompt and decode new text, turning any failure into ``LLMError``."""
        try:
            return self._decode_loop(encode().to(self.device), max_tokens, temperature, stop or [], seed)
        except LLMError:
            raise
        except Exception as err:
            raise LLMError(f"local generation failed: {type(err).__name__}: {err}") from err

    def _decode_loop(self, input_ids: torch.Tensor, max_tokens: int, temperature: float, stop: list[str],
                     seed: int | None) -> str:
        """Token-by-token generation with a KV cache; the new text, cut at the first stop string."""
        import torch

        generator = _generator(self.device, seed) if temperature > 0 else None
        new_tokens: list[int] = []
        past = None
        with torch.inference_mode():
            for _ in range(max_tokens):
                out = self.model(input_ids=input_ids, past_key_values=past, use_cache=True)
                past = out.past_key_values
                token = _next_token(out.logits[0, -1], temperature, generator)
                if token in self.eos_token_ids:
                    break
                new_tokens.append(token)
                if stop:
                    text, stopped = _cut_at_stop(self._text(new_tokens), stop)
                    if stopped:
                        return text
                input_ids = torch.tensor([[token]], device=self.device)
        return self._text(new_tokens)

    def _text(self, tokens: list[int]) -> str:
        return self.tokenizer.decode(tokens, skip_special_tokens=True)


def _eos_token_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    """End-of-sequence ids from the model's generation config and the tokenizer."""
    ids: set[int] = set()
    config = getattr(model, "generation_config", None)
    for value in (getattr(config, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif value is not None:
            ids.update(value)
    return frozenset(ids)


def _generator(device: torch.device, seed: int | None) -> torch.Generator | None:
    """A generator seeded from ``seed``, or None (the global RNG) when no seed is given."""
    import torch

    return None if seed is None else torch.Generator(device=device).manual_seed(seed)


def _next_token(logits: torch.Tensor, temperature: float, generator: torch.Generator | None) -> int:
    """Greedy pick at temperature 0, else a sample from the tempered softmax."""
    import torch

    if temperature <= 0:
        return int(logits.argmax())
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator))


def _cut_at_stop(text: str, stop: list[str]) -> tuple[str, bool]:
    """``text`` cut before the earliest stop string, and whether one was found."""
    cuts = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    return (text[:min(cuts)], True) if cuts else (text, False)
