"""``TransformersPolicy``: batched sampling from a local transformers causal LM (CPU or GPU). Imports torch."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
from transformers.cache_utils import DynamicLayer

from clinical_gym.rollout.kv_cache import GrowingLayer, full_attention, growing_cache
from clinical_gym.rollout.policy import Generation, Prompt
from clinical_gym.rollout.prefix_cache import LayerKV, PrefixCache


class TransformersPolicy:
    """A ``Policy`` over a transformers causal LM (a peft model works too): one batched decode per call, prompts
    left-padded, a KV cache, finished rows dropped from the batch as they end.

    Prompts with ``token_ids`` are continued from those exact ids; others are templated from ``messages``.
    ``temperature`` 0 decodes greedily; otherwise tokens are sampled from the tempered softmax, optionally cut by
    ``top_k``/``top_p``, with a ``torch.Generator`` seeded from ``generate(..., seed=)``. Logprobs are those of the
    tempered softmax (what a trainer recomputes). Generation of a row stops at a token of ``stop_token_ids``
    (default: EOS ids of the tokenizer and the model's generation config) or at its ``max_new_tokens``.
    The model is put in eval mode while generating and returned to its previous mode.

    Multi-turn episodes reuse their prefix: the key/value cache of each row of a call (its prompt and reply) is kept
    until the next call (``prefix_cache`` sequences at most, 0 to keep none), and a prompt of that call that
    continues one of them (the next turn: the same tokens, then the environment's reply) prefills only its new
    tokens; rows nobody continued are dropped then, so what is kept never exceeds one call's cache. Kept caches are
    also dropped when the model's weights change (``PrefixCache``) and by ``forget_prefixes()``, which the
    ``RolloutCollector`` calls when a collection ends (so a trainer's update never holds them).

    Identical prompts of one call (a GRPO group's case, sampled ``group_size`` times) prefill once and share that
    pass's keys/values and first logits (``share_prompts``; False prefills every row).

    A text model whose cache is all full-attention layers decodes into a cache with room for the call's new tokens
    (``kv_cache.GrowingLayer``): each step writes its keys and values in place instead of copying the whole cache.
    """

    def __init__(self, model: Any, tokenizer: Any, *, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0,
                 stop_token_ids: Iterable[int] | None = None, prefix_cache: int = 1024,
                 share_prompts: bool = True) -> None:
        if temperature < 0 or not 0 < top_p <= 1 or top_k < 0:
            raise ValueError("need temperature >= 0, 0 < top_p <= 1 and top_k >= 0")
        self.prefixes = PrefixCache(model, prefix_cache)
        self.model = model
        self.tokenizer = tokenizer
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.stop_token_ids = frozenset(stop_token_ids if stop_token_ids is not None else _eos_ids(model, tokenizer))
        if not self.stop_token_ids:
            raise ValueError("no stop tokens: the tokenizer has no EOS token; pass stop_token_ids")
        pad = tokenizer.pad_token_id
        self.pad_token_id = pad if pad is not None else min(self.stop_token_ids)
        self.share_prompts = share_prompts
        self._grows = full_attention(model)  # decode into a growing_cache (all layers full attention)

    def generate(self, prompts: Sequence[Prompt], *, seed: int | None = None) -> list[Generation]:
        if not prompts:
            return []
        if any(p.max_new_tokens < 1 for p in prompts):
            raise ValueError("every prompt needs max_new_tokens >= 1")
        rows = [list(p.token_ids) if p.token_ids is not None else self._template(p) for p in prompts]
        device = next(self.model.parameters()).device
        generator = None if seed is None else torch.Generator(device=device).manual_seed(seed)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode():
                extra = self._prefill_inputs(prompts, device)
                tokens, logprobs = self._decode(rows, [p.max_new_tokens for p in prompts], device, generator, extra)
        finally:
            self.model.train(was_training)
        return [self._generation(t, lp) for t, lp in zip(tokens, logprobs)]

    def forget_prefixes(self) -> None:
        """Drop every kept key/value cache (the end of a collection: nothing will continue them)."""
        self.prefixes.clear()

    def _template(self, prompt: Prompt) -> list[int]:
        encoded = self.tokenizer.apply_chat_template(list(prompt.messages), add_generation_prompt=True, tokenize=True,
                                                     return_dict=True)
        return list(encoded["input_ids"])

    def _prefill_inputs(self, prompts: Sequence[Prompt], device: torch.device) -> dict[str, Any]:
        """Inputs besides the token ids that the first forward pass takes (a vision model's pixels); none here."""
        return {}

    def _decode(self, rows: list[list[int]], limits: list[int], device: torch.device,
                generator: torch.Generator | None, extra: dict[str, Any] | None = None
                ) -> tuple[list[list[int]], list[list[float]]]:
        """Sample every row to its stop token or limit; the new tokens and their logprobs per row. ``extra`` goes to
        the first (prefill) forward pass only."""
        reuse = self.prefixes.max_sequences > 0 and not extra
        if reuse:
            self.prefixes.check_weights()
        taken = [self.prefixes.take(row) for row in rows] if reuse else [None] * len(rows)
        self.prefixes.clear()  # what this call did not continue belongs to episodes that are over
        room = max(limits) if not extra and self._grows else None
        if any(t is not None for t in taken):
            out, attention, next_position = self._prefill_after_prefixes(rows, taken, device, room)
        else:
            out, attention, next_position = self._prefill(rows, device, extra, room)
        cache = out.past_key_values
        layers = getattr(cache, "layers", [None])
        keep_kv = reuse and all(type(layer) in (DynamicLayer, GrowingLayer) for layer in layers)
        active = list(range(len(rows)))
        tokens: list[list[int]] = [[] for _ in rows]
        logprobs: list[list[float]] = [[] for _ in rows]
        while True:
            token, logprob = self._pick(out.logits[:, -1, :].float(), generator)
            keep = []
            for j, (row, t, lp) in enumerate(zip(active, token.tolist(), logprob.tolist())):
                tokens[row].append(t)
                logprobs[row].append(lp)
                if t not in self.stop_token_ids and len(tokens[row]) < limits[row]:
                    keep.append(j)
                elif keep_kv:  # this row's inputs so far: its prompt and every generated token but the last
                    self._keep_prefix(rows[row] + tokens[row][:-1], cache, attention, j)
            if not keep:
                return tokens, logprobs
            if len(keep) < len(active):
                index = torch.tensor(keep, device=device)
                cache.batch_select_indices(index)
                attention, token, next_position = attention[index], token[index], next_position[index]
                active = [active[j] for j in keep]
            attention = torch.cat([attention, attention.new_ones((len(active), 1))], dim=1)
            out = self.model(input_ids=token[:, None], attention_mask=attention, position_ids=next_position[:, None],
                             past_key_values=cache, use_cache=True)
            next_position = next_position + 1

    def _prefill(self, rows: list[list[int]], device: torch.device, extra: dict[str, Any] | None,
                 room: int | None = None) -> tuple[Any, torch.Tensor, torch.Tensor]:
        """The first forward pass over the left-padded rows: its output, attention mask and next positions. Rows
        with the same tokens (a GRPO group's prompt, sampled ``group_size`` times) run once and their cache and
        logits are copied to each (text only: a vision model's pixels are per row). ``room``: decode into a
        ``growing_cache`` with that many positions to spare (None: the model's own cache)."""
        if not self.share_prompts or extra:
            return self._prefill_rows(rows, device, extra, room)
        distinct: dict[tuple[int, ...], int] = {}
        index = [distinct.setdefault(tuple(row), len(distinct)) for row in rows]
        if len(distinct) < len(rows):
            out, attention, next_position = self._prefill_rows([list(row) for row in distinct], device, None, room)
            spread = torch.tensor(index, device=device)
            # the decode loop selects cache rows the same way when rows finish; indexing with repeats copies
            out.past_key_values.batch_select_indices(spread)
            out.logits = out.logits[spread]
            return out, attention[spread], next_position[spread]
        return self._prefill_rows(rows, device, None, room)

    def _prefill_rows(self, rows: list[list[int]], device: torch.device, extra: dict[str, Any] | None,
                      room: int | None = None) -> tuple[Any, torch.Tensor, torch.Tensor]:
        """``_prefill`` of every row as it is."""
        width = max(len(r) for r in rows)
        input_ids = torch.full((len(rows), width), self.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            input_ids[i, width - len(row):] = torch.tensor(row, dtype=torch.long)
            attention[i, width - len(row):] = 1
        input_ids, attention = input_ids.to(device), attention.to(device)
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        cache = {} if room is None else {"past_key_values": growing_cache(room)}
        out = self.model(input_ids=input_ids, attention_mask=attention, position_ids=positions, use_cache=True,
                         logits_to_keep=1, **cache, **(extra or {}))
        return out, attention, positions[:, -1] + 1

    def _prefill_after_prefixes(self, rows: list[list[int]], taken: list[tuple[int, list[LayerKV]] | None],
                                device: torch.device, room: int | None = None
                                ) -> tuple[Any, torch.Tensor, torch.Tensor]:
        """The first forward pass when some rows continue a kept prefix: the kept keys/values, left-padded to a
        common width, become the cache, and only each row's new tokens (left-padded too) are run, at their true
        positions. The attention mask leaves out both paddings. With ``room`` the padded past is written straight
        into ``growing_cache`` buffers with room for the new tokens and ``room`` more."""
        from transformers import DynamicCache

        cached = [t[0] if t is not None else 0 for t in taken]
        layers = next(t[1] for t in taken if t is not None)
        past_width, width = max(cached), max(len(row) - c for row, c in zip(rows, cached))
        capacity = past_width if room is None else past_width + width + room
        _, heads, _, dim = layers[0][0].shape
        past = []
        for layer in range(len(layers)):
            keys = layers[layer][0].new_zeros((len(rows), heads, capacity, dim))
            values = layers[layer][1].new_zeros((len(rows), heads, capacity, dim))
            for i, t in enumerate(taken):
                if t is not None:
                    keys[i, :, past_width - cached[i]:past_width] = t[1][layer][0][0]
                    values[i, :, past_width - cached[i]:past_width] = t[1][layer][1][0]
            past.append((keys, values))
        input_ids = torch.full((len(rows), width), self.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(rows), past_width + width), dtype=torch.long)
        positions = torch.zeros((len(rows), width), dtype=torch.long)
        for i, (row, c) in enumerate(zip(rows, cached)):
            new = row[c:]
            input_ids[i, width - len(new):] = torch.tensor(new, dtype=torch.long)
            attention[i, past_width - c:past_width] = 1
            attention[i, past_width + width - len(new):] = 1
            positions[i, width - len(new):] = torch.arange(c, len(row))
        out = self.model(input_ids=input_ids.to(device), attention_mask=attention.to(device),
                         position_ids=positions.to(device),
                         past_key_values=DynamicCache(ddp_cache_data=past) if room is None else growing_cache(
                             room, past, filled=past_width),
                         use_cache=True, logits_to_keep=1)
        return out, attention.to(device), torch.tensor([len(row) for row in rows], device=device)

    def _keep_prefix(self, tokens: list[int], cache: Any, attention: torch.Tensor, j: int) -> None:
        """Keep batch row ``j``'s keys/values (the columns its attention mask sets) under the tokens it ran."""
        columns = attention[j].nonzero().squeeze(-1)
        if len(columns) == len(tokens):
            self.prefixes.store(tokens, [(layer.keys[j:j + 1, :, columns], layer.values[j:j + 1, :, columns])
                                         for layer in cache.layers])

    def _pick(self, logits: torch.Tensor, generator: torch.Generator | None) -> tuple[torch.Tensor, torch.Tensor]:
        """The next token per row and its logprob under the tempered softmax."""
        if self.temperature == 0:
            token = logits.argmax(-1)
            return token, torch.log_softmax(logits, -1).gather(-1, token[:, None]).squeeze(-1)
        scaled = logits / self.temperature if self.temperature != 1 else logits
        logprobs = torch.log_softmax(scaled, -1)
        if self.top_k or self.top_p < 1:
            if self.top_k:
                kth = scaled.topk(min(self.top_k, scaled.shape[-1]), dim=-1).values[:, -1:]
                scaled = scaled.masked_fill(scaled < kth, float("-inf"))
            if self.top_p < 1:
                ordered, order = scaled.sort(dim=-1, descending=True)
                before = ordered.softmax(-1).cumsum(-1) - ordered.softmax(-1)
                scaled = scaled.scatter(-1, order, ordered.masked_fill(before >= self.top_p, float("-inf")))
            probs = scaled.softmax(-1)
        else:
            probs = logprobs.exp()
        token = sample_rows(probs, generator)
        return token, logprobs.gather(-1, token[:, None]).squeeze(-1)

    def _generation(self, tokens: list[int], logprobs: list[float]) -> Generation:
        stopped = tokens[-1] in self.stop_token_ids
        text = self.tokenizer.decode(tokens[:-1] if stopped else tokens, skip_special_tokens=True)
        return Generation(text, tuple(tokens), tuple(logprobs), "stop" if stopped else "length")


def sample_rows(probs: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """One token per row of ``probs`` [rows, vocab] (non-negative; rows need not sum to 1): the argmax of
    probs / E with E ~ Exp(1) drawn per token (the exponential race: token i wins with probability p_i / Σ p).
    E is −log U of a float32 uniform U in [0, 1), drawn with ``torch.rand``, 6x cheaper on the CPU than the
    ``Tensor.exponential_`` this policy drew its noise with before (3.3 against 19 ms for 16 rows of SmolLM2's
    49,152 tokens, ad hoc timing; ``exponential_`` was 12% of a rollout's CPU profile at SmolLM2-135M's size,
    benchmarks/README.md). U = 0 (chance 2^-24 a token) counts as 2^-25 (E = 17.3, far behind in the race, but a
    row's only token with mass still wins: an E of inf would have scored it 0, level with the tokens of no mass).
    A race of noisy scores, unlike inverting the cumulative distribution, picks the same token for two nearly
    equal distributions unless the best two scores are within their difference: runs whose logits differ by float
    rounding (sharded against unsharded, resumed against straight) sample the same tokens
    (tests/test_rollout_sampling.py)."""
    noise = torch.rand(probs.shape, generator=generator, device=probs.device).clamp_(min=2**-25).log_().neg_()
    return (probs / noise).argmax(-1)


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    """EOS ids from the tokenizer and the model's generation config."""
    ids: set[int] = set()
    config = getattr(model, "generation_config", None)
    for value in (tokenizer.eos_token_id, getattr(config, "eos_token_id", None)):
        if isinstance(value, int):
            ids.add(value)
        elif value is not None:
            ids.update(value)
    return ids
