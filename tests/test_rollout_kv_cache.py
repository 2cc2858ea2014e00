"""The decode loop's cache with room to grow (clinical_gym/rollout/kv_cache.py): the same tokens and logprobs as
transformers' own cache in every path of ``TransformersPolicy`` (rows ending at different lengths, shared prompts,
continued prefixes), in-place writes, growth past the room, and full-attention models only."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the transformers policy needs the [train] extra")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401
from test_rollout_policies import MESSAGES, model, tokenizer  # noqa: E402,F401  (the fixtures)

from clinical_gym.rollout import Prompt  # noqa: E402
from clinical_gym.rollout.kv_cache import GrowingLayer, full_attention, growing_cache  # noqa: E402
from clinical_gym.rollout.transformers_policy import TransformersPolicy  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def opening(tokenizer, messages, max_new_tokens: int) -> Prompt:
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_dict=True)["input_ids"]
    return Prompt(messages, max_new_tokens, list(ids))


def policies(model, tokenizer, **kw) -> tuple[TransformersPolicy, TransformersPolicy]:
    """(growing, the model's own DynamicCache): the same policy but for the cache."""
    growing, own = TransformersPolicy(model, tokenizer, **kw), TransformersPolicy(model, tokenizer, **kw)
    own._grows = False
    return growing, own


def test_the_growing_cache_gives_the_tokens_and_logprobs_of_the_models_own(model, tokenizer):
    """Rows of different limits (the batch shrinks as they end), a prompt repeated (the shared prefill's rows
    copied), then the next turn of each row continuing its kept prefix."""
    a, b = (opening(tokenizer, m, 9) for m in MESSAGES)
    batch = [a, b, Prompt(a.messages, 4, a.token_ids), Prompt(b.messages, 6, b.token_ids), a]
    growing, own = policies(model, tokenizer, temperature=1.0)
    first = [policy.generate(batch, seed=5) for policy in (growing, own)]
    lengths = [len(g.token_ids) for g in first[0]]
    # rows end at different steps (their limits or a sampled stop token): the batch shrinks on the way
    assert growing._grows and len(set(lengths)) > 1 and lengths[2] <= 4 and lengths[3] <= 6 and max(lengths) <= 9
    said = tokenizer.encode("since this morning", add_special_tokens=False)
    follow = [[Prompt([], 5, list(p.token_ids) + list(g.token_ids) + said) for p, g in zip(batch, replies)]
              for replies in first]
    assert follow[0] == follow[1]
    assert len(growing.prefixes) == len(own.prefixes) == 5
    second = [policy.generate(prompts, seed=6) for policy, prompts in zip((growing, own), follow)]
    assert len(growing.prefixes) == 5  # every row continued a kept prefix
    for mine, theirs in (first, second):
        assert [g.token_ids for g in mine] == [g.token_ids for g in theirs]
        assert [g.logprobs for g in mine] == [g.logprobs for g in theirs]


def test_the_cache_writes_each_step_in_place(model, tokenizer):
    prompt = opening(tokenizer, MESSAGES[0], 6)
    growing, _ = policies(model, tokenizer, temperature=0)
    caches, pointers = [], []

    def seen(_module, _args, out) -> None:
        caches.append(out.past_key_values)
        pointers.append(out.past_key_values.layers[0]._buffers[0].data_ptr())

    handle = model.register_forward_hook(seen)
    try:
        growing.generate([prompt])
    finally:
        handle.remove()
    assert len(caches) == 6 and all(c is caches[0] for c in caches)  # the prefill and five decoding steps
    assert all(isinstance(layer, GrowingLayer) for layer in caches[0].layers)
    assert len(set(pointers)) == 1  # one buffer throughout: nothing was copied to grow it
    layer = caches[0].layers[0]
    assert layer.keys.shape[-2] == len(prompt.token_ids) + 5 == layer.length  # the sixth token is never run


def test_an_update_past_the_room_moves_the_cache_and_keeps_it():
    layer = GrowingLayer(room=2)
    steps = [torch.randn(3, 2, n, 4) for n in (5, 1, 1, 3, 1)]
    for step in steps:
        keys, values = layer.update(step, -step)
    expected = torch.cat(steps, dim=-2)
    assert torch.equal(keys, expected) and torch.equal(values, -expected)
    # 5 + room 2 held the next two; the fourth update (3 more) moved it to 10 + room 2, where the fifth fits
    assert layer.get_seq_length() == 11 and layer._buffers[0].shape[-2] == 10 + 2
    layer.batch_select_indices(torch.tensor([2, 0, 2]))
    assert torch.equal(layer.keys, expected[[2, 0, 2]])
    layer.batch_repeat_interleave(2)
    assert torch.equal(layer.keys, expected[[2, 2, 0, 0, 2, 2]])
    layer.batch_select_indices(torch.tensor([0, 2, 4]))
    layer.crop(-3)
    assert torch.equal(layer.values, -expected[[2, 0, 2], :, :8])
    cache = growing_cache(3, past=[(expected, -expected)])
    assert torch.equal(cache.layers[0].keys, expected) and cache.layers[0]._buffers[0].shape[-2] == 14


def test_a_cache_built_on_filled_buffers_holds_them_without_a_copy():
    buffers = torch.zeros(2, 3, 8, 4), torch.zeros(2, 3, 8, 4)
    buffers[0][:, :, :5], buffers[1][:, :, :5] = 1.0, -1.0
    layer = growing_cache(2, past=[buffers], filled=5).layers[0]
    assert layer.get_seq_length() == 5 and layer._buffers[0].data_ptr() == buffers[0].data_ptr()
    assert torch.equal(layer.keys, torch.ones(2, 3, 5, 4)) and torch.equal(layer.values, -torch.ones(2, 3, 5, 4))
    step = torch.randn(2, 3, 1, 4)
    keys, _ = layer.update(step, step)  # written in place, after the filled positions
    assert layer._buffers[0].data_ptr() == buffers[0].data_ptr() and torch.equal(buffers[0][:, :, 5:6], step)
    assert keys.shape[-2] == 6


def test_only_full_attention_models_get_the_growing_cache(model):
    from transformers import MistralConfig

    assert full_attention(model)
    sliding = MistralConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                            num_attention_heads=2, num_key_value_heads=1, sliding_window=8)

    class Windowed:
        config = sliding

    assert not full_attention(Windowed()) and not full_attention(object())
