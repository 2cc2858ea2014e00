"""The chunked vocabulary projection (``logprobs.linear_logprobs``): the same log-probabilities, entropies and
gradients as projecting every row at once, for a bare head and inside the trainers' logprob and value-head passes;
models whose logits are not a plain projection keep the model's own head; the teacher's chunked distance."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the trainers need the [train] extra")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common import ema_teacher, logprobs  # noqa: E402
from clinical_gym.trainers.common.logprobs import (  # noqa: E402
    linear_logprobs,
    logprobs_from_logits,
    projection_head,
    token_logprobs_and_entropy,
)
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.common.value_head import PolicyWithValueHead  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _close(actual: torch.Tensor, expected: torch.Tensor, tol: float) -> None:
    """Equal up to float32 rounding: within ``tol`` of the largest magnitude of ``expected``."""
    assert float((actual - expected).abs().max()) <= tol * float(expected.abs().max())


def _grads(outputs: tuple[torch.Tensor, ...], inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    weights = torch.linspace(-1.0, 2.0, outputs[0].numel())
    objective = (outputs[0] * weights).sum() + 0.3 * outputs[1].sum()
    return list(torch.autograd.grad(objective, inputs))


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_linear_logprobs_equal_the_full_projection_values_and_gradients(monkeypatch: pytest.MonkeyPatch,
                                                                       temperature: float) -> None:
    monkeypatch.setattr(logprobs, "HEAD_CHUNK_ELEMENTS", 3 * 50)  # 3 rows a chunk: 11 rows in 4 chunks
    gen = torch.Generator().manual_seed(0)
    hidden = torch.randn(11, 8, generator=gen, requires_grad=True)
    weight = torch.randn(50, 8, generator=gen, requires_grad=True)
    bias = torch.randn(50, generator=gen, requires_grad=True)
    targets = torch.randint(0, 50, (11,), generator=gen)
    full = logprobs_from_logits(torch.nn.functional.linear(hidden, weight, bias), targets, temperature,
                                entropy=True, entropy_grad=True)
    chunked = linear_logprobs(hidden, weight, bias, targets, temperature, entropy=True, entropy_grad=True)
    for a, b in zip(full, chunked, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-6, atol=1e-6)
    for a, b in zip(_grads(full, [hidden, weight, bias]), _grads(chunked, [hidden, weight, bias]), strict=True):
        _close(b, a, 1e-5)
    # the log-probabilities are log-softmax values: each row's exp sums to 1 over the vocabulary
    every = linear_logprobs(hidden.detach().repeat_interleave(50, 0), weight.detach(), bias.detach(),
                            torch.arange(50).repeat(11), temperature)[0]
    torch.testing.assert_close(every.exp().view(11, 50).sum(dim=1), torch.ones(11))


def test_entropy_without_its_gradient_is_constant_and_absent_when_not_asked() -> None:
    hidden = torch.randn(4, 6, requires_grad=True)
    weight = torch.randn(9, 6, requires_grad=True)
    picked, entropy = linear_logprobs(hidden, weight, None, torch.tensor([0, 3, 8, 1]), entropy=True)
    assert picked.requires_grad and not entropy.requires_grad
    assert linear_logprobs(hidden, weight, None, torch.tensor([0, 3, 8, 1]))[1] is None
    expected = torch.distributions.Categorical(logits=hidden @ weight.T).entropy()
    torch.testing.assert_close(entropy, expected.detach())


def _batch(vocab: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, vocab, (12,), generator=gen)
    ids = torch.cat([prompt.repeat(4, 1), torch.randint(0, vocab, (4, 9), generator=gen)], dim=1)
    mask = torch.ones_like(ids)
    mask[3, 17:] = 0
    loss_mask = torch.zeros(ids.shape[0], ids.shape[1] - 1)
    loss_mask[:, 11:] = 1.0
    loss_mask[3, 16:] = 0.0
    return ids, mask, loss_mask


def test_trainer_passes_give_the_model_heads_values_and_gradients(monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizer = tiny_tokenizer()
    model = PolicyWithValueHead(tiny_llama(tokenizer))
    torch.nn.init.normal_(model.value_head.linear.weight)
    ids, mask, loss_mask = _batch(len(tokenizer))
    assert projection_head(model.policy) is not None
    params = list(model.parameters())

    def run() -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        lp, ent = token_logprobs_and_entropy(model.policy, ids, mask, loss_mask, 0.8, entropy=True)
        out = model(ids, mask, loss_mask, 0.8, entropy=True, entropy_grad=True)
        return [lp, ent, out.logprobs, out.values, out.entropy], list(torch.autograd.grad(
            (lp * 1.5).sum() + ent.sum() + out.logprobs.sum() - out.values.sum() + out.entropy.sum(), params))

    chunked, chunked_grads = run()
    monkeypatch.setattr(logprobs, "projection_head", lambda _: None)  # the model's own [rows, vocab] logits
    whole, whole_grads = run()
    for a, b in zip(whole, chunked, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    for a, b in zip(whole_grads, chunked_grads, strict=True):
        _close(b, a, 1e-5)
    assert model.policy.lm_head.weight is model.policy.model.embed_tokens.weight  # the head is put back, tied


def test_an_empty_mask_still_reaches_every_weight() -> None:
    tokenizer = tiny_tokenizer()
    model = tiny_llama(tokenizer)
    model.config.tie_word_embeddings = False
    model.lm_head.weight = torch.nn.Parameter(model.lm_head.weight.detach().clone())
    ids, mask, loss_mask = _batch(len(tokenizer))
    out, _ = token_logprobs_and_entropy(model, ids, mask, torch.zeros_like(loss_mask))
    out.sum().backward()
    assert float(out.detach().abs().sum()) == 0.0
    assert model.lm_head.weight.grad is not None and model.model.embed_tokens.weight.grad is not None


def test_models_whose_logits_are_not_a_plain_projection_keep_their_head() -> None:
    tokenizer = tiny_tokenizer()
    model = tiny_llama(tokenizer)
    assert projection_head(model)[2] is model.lm_head
    model.config.final_logit_softcapping = 30.0  # Gemma's: tanh-capped logits the head alone does not give
    assert projection_head(model) is None
    model.config.final_logit_softcapping = None
    handle = model.register_forward_hook(lambda _m, _i, out: out)  # a hook may edit the logits (vision policies)
    assert projection_head(model) is None
    handle.remove()
    model.lm_head = torch.nn.Sequential(model.lm_head)  # not a plain Linear
    assert projection_head(model) is None


def test_teacher_distance_in_chunks_equals_the_whole_tensor_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    gen = torch.Generator().manual_seed(2)
    pairs = [(torch.randn(7, 13, generator=gen).to(torch.bfloat16), torch.randn(7, 13, generator=gen)),
             (torch.randn(30, generator=gen), torch.randn(30, generator=gen))]
    monkeypatch.setattr(ema_teacher, "SQUARES_CHUNK", 10)  # chunks that straddle rows and a last short chunk
    diff, norm = ema_teacher._squared_distance_and_norm(pairs)
    assert diff == pytest.approx(sum(float((a.double() - b.double()).pow(2).sum()) for a, b in pairs), rel=1e-6)
    assert norm == pytest.approx(sum(float(b.double().pow(2).sum()) for _, b in pairs), rel=1e-6)
    assert ema_teacher._squared_distance_and_norm([(pairs[1][1], pairs[1][1])]) == (0.0, pytest.approx(
        float(pairs[1][1].double().pow(2).sum()), rel=1e-6))  # a teacher right after a copy: exactly 0
