"""A prompt several rows share runs once in the trainers' forward pass (trainers/common/shared_prefix.py): the same
logits, last hidden states and gradients as one pass over the whole rows, with the prompt's tokens run once per
group. Tiny random Llama."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the trainers need the [train] extra")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common.logprobs import token_logprobs  # noqa: E402
from clinical_gym.trainers.common.shared_prefix import MIN_SHARED_TOKENS, forward_kept, shared_prompts  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.common.value_head import PolicyWithValueHead  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def model():
    return tiny_llama(tiny_tokenizer(), seed=3).train()


def batch(seed: int = 0):
    """Two groups sharing a prompt (20 and 14 tokens, 3 and 2 rows) and one row sharing nothing (a 10-token prompt);
    right-padded; the loss covers every generated token."""
    g = torch.Generator().manual_seed(seed)
    draw = lambda n: torch.randint(5, 150, (n,), generator=g).tolist()  # noqa: E731
    prompts = [(draw(20), 3), (draw(14), 2), (draw(10), 1)]
    rows, starts = [], []
    for prompt, copies in prompts:
        for _ in range(copies):
            rows.append(prompt + draw(int(torch.randint(3, 12, (), generator=g))))
            starts.append(len(prompt))
    width = max(map(len, rows))
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros_like(ids)
    loss = torch.zeros(len(rows), width - 1)
    for r, (row, start) in enumerate(zip(rows, starts)):
        ids[r, :len(row)] = torch.tensor(row)
        mask[r, :len(row)] = 1
        loss[r, start - 1:len(row) - 1] = 1
    return ids, mask, loss


def widths(model):
    seen: list[tuple[int, int]] = []
    handle = model.register_forward_pre_hook(lambda m, a, k: seen.append(tuple(k["input_ids"].shape)),
                                             with_kwargs=True)
    return seen, handle


def test_rows_with_the_same_prompt_are_grouped():
    ids, mask, loss = batch()
    keep = torch.zeros_like(ids, dtype=torch.bool)
    keep[:, :-1] = loss.bool()
    group, length = shared_prompts(ids, mask, keep)
    assert group == [0, 0, 0, 1, 1, -1] and length == [19, 19, 19, 13, 13, 0]  # the last prompt token stays
    assert shared_prompts(ids[:1], mask[:1], keep[:1]) is None  # alone: nothing to share
    short = keep.clone()
    short[:, :] = False
    short[:, MIN_SHARED_TOKENS - 2] = True
    assert shared_prompts(ids, mask, short) is None  # prompts shorter than MIN_SHARED_TOKENS


def test_logprobs_and_gradients_equal_one_pass_and_prompts_run_once(model):
    ids, mask, loss = batch()
    results = []
    for share in (False, True):
        model.zero_grad()
        keep = torch.zeros_like(ids, dtype=torch.bool)
        keep[:, :-1] = loss.bool()
        seen, handle = widths(model)
        try:
            out = forward_kept(model, ids, mask, keep, hidden=True, share=share)
        finally:
            handle.remove()
        targets = ids[:, 1:][loss.bool()]
        logprobs = out.logits.log_softmax(-1).gather(-1, targets[:, None]).squeeze(-1)
        (logprobs.sum() + out.hidden.pow(2).mean()).backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        results.append((logprobs.detach(), out.hidden.detach(), grads, seen))
    (lp1, h1, g1, seen1), (lp2, h2, g2, seen2) = results
    assert torch.allclose(lp1, lp2, atol=1e-5) and torch.allclose(h1, h2, atol=1e-5)
    for name in g1:
        assert torch.allclose(g1[name], g2[name], atol=1e-4, rtol=1e-4), name
    tokens = lambda shapes: sum(rows * width for rows, width in shapes)  # noqa: E731
    assert seen1 == [tuple(ids.shape)] and len(seen2) == 2  # prompts once, then each row's own tokens
    assert seen2[0] == (2, 19)  # the two shared prompts, left-padded to the longer one
    assert tokens(seen2) < tokens(seen1)


def test_one_pass_when_sharing_would_run_more_positions(model):
    """A long row that shares nothing runs whole in the second pass: sharing would not pay, so one pass."""
    ids, mask, loss = batch()
    long_row = torch.randint(5, 150, (1, 60))
    wide = torch.zeros(ids.shape[0] + 1, 60, dtype=torch.long)
    wide[:-1, :ids.shape[1]] = ids
    wide[-1] = long_row
    wide_mask = torch.zeros_like(wide)
    wide_mask[:-1, :ids.shape[1]] = mask
    wide_mask[-1] = 1
    keep = torch.zeros_like(wide, dtype=torch.bool)
    keep[:-1, :ids.shape[1] - 1] = loss.bool()
    keep[-1, 50:59] = True
    assert shared_prompts(wide, wide_mask, keep) is not None  # there is a shared prompt ...
    seen, handle = widths(model)
    try:
        forward_kept(model, wide, wide_mask, keep)
    finally:
        handle.remove()
    assert seen == [tuple(wide.shape)]  # ... but one pass runs fewer positions


def test_token_logprobs_and_the_value_head_share_the_prompt(model):
    ids, mask, loss = batch(seed=1)
    seen, handle = widths(model)
    try:
        logprobs = token_logprobs(model, ids, mask, loss)
        outputs = PolicyWithValueHead(model)(ids, mask, loss)
    finally:
        handle.remove()
    assert len(seen) == 4  # two passes each
    keep = torch.zeros_like(ids, dtype=torch.bool)
    keep[:, :-1] = loss.bool()
    whole = forward_kept(model, ids, mask, keep, share=False).logits.log_softmax(-1)
    expected = whole.gather(-1, ids[:, 1:][loss.bool()][:, None]).squeeze(-1)
    assert torch.allclose(logprobs[loss.bool()], expected, atol=1e-5)
    assert torch.allclose(outputs.logprobs[loss.bool()], expected, atol=1e-5)
    assert (outputs.values[~loss.bool()] == 0).all() and outputs.values.shape == loss.shape
