"""GRPO's entropy bonus (DoctorAgent-RL, Table 2: entropy coefficient 0.001): the per-token term, the entropy the
loss sees, and that the bonus alone raises the policy's entropy (and nothing moves without it)."""

from __future__ import annotations

import copy
import math

import pytest

torch = pytest.importorskip("torch", reason="GRPO needs the [train] extra")

from accelerate import Accelerator  # noqa: E402
from test_grpo_objective import trajectory  # noqa: E402
from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common.batch import pack  # noqa: E402
from clinical_gym.trainers.common.logprobs import token_logprobs, token_logprobs_and_entropy  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.grpo.config import GRPOConfig  # noqa: E402
from clinical_gym.trainers.grpo.train import grpo_token_loss, update  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_the_bonus_subtracts_c_times_the_entropy_per_token():
    logp = torch.zeros(2, 1)
    entropy = torch.tensor([[2.0], [0.5]])
    loss, parts = grpo_token_loss(logp, logp, None, torch.tensor([1.0, -1.0]),
                                  GRPOConfig(model="m", entropy_coef=0.1, beta=0.0), entropy)
    assert torch.allclose(loss, torch.tensor([[-1.0 - 0.2], [1.0 - 0.05]]))
    assert torch.equal(parts["entropy"], entropy)
    with pytest.raises(ValueError, match="entropy_coef"):
        GRPOConfig(model="m", entropy_coef=-0.1)


def test_entropy_is_the_temperature_scaled_policys_at_each_generated_token():
    tokenizer = tiny_tokenizer()
    model = tiny_llama(tokenizer)
    batch = pack([trajectory([20, 21, 2], 1.0, group=0)], [1.0], pad_token_id=0)
    logprobs, entropy = token_logprobs_and_entropy(model, batch.input_ids, batch.attention_mask, batch.loss_mask,
                                                   temperature=0.7, entropy=True)
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[0, :-1] / 0.7
    expected = -(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1)
    mask = batch.loss_mask[0].bool()
    assert torch.allclose(entropy[0][mask], expected[mask], atol=1e-5)
    assert torch.equal(entropy[0][~mask], torch.zeros(int((~mask).sum())))
    assert torch.allclose(logprobs, token_logprobs(model, batch.input_ids, batch.attention_mask, batch.loss_mask, 0.7))
    assert entropy.requires_grad


def mean_entropy(model, batch) -> float:
    with torch.no_grad():
        _, entropy = token_logprobs_and_entropy(model, batch.input_ids, batch.attention_mask, batch.loss_mask,
                                                entropy=True)
    return float((entropy * batch.loss_mask).sum() / batch.loss_mask.sum())


@pytest.mark.parametrize("aggregation", ["token-mean", "sequence-mean"])
def test_the_bonus_alone_raises_the_policys_entropy(aggregation):
    tokenizer = tiny_tokenizer()
    base = tiny_llama(tokenizer)
    batch = pack([trajectory([10 + i] * (i + 2), 0.0, group=0) for i in range(4)], [0.0] * 4, pad_token_id=0)
    results = {}
    for coef in (0.0, 0.5):
        model = copy.deepcopy(base)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
        cfg = GRPOConfig(model="m", entropy_coef=coef, beta=0.0, ref_kl_monitor=False, num_minibatches=1,
                         loss_aggregation=aggregation, max_grad_norm=0.0)
        stats = {}
        for _ in range(3):  # zero advantages: the surrogate has no gradient, only the bonus moves the policy
            stats = update(model, batch, cfg, Accelerator(cpu=True), optimizer, scheduler,
                           torch.Generator().manual_seed(0))
        results[coef] = (mean_entropy(model, batch), stats)
    before = mean_entropy(base, batch)
    assert results[0.0][0] == pytest.approx(before, abs=1e-6) and math.isnan(results[0.0][1]["losses/entropy"])
    assert results[0.5][0] > before + 1e-3
    assert results[0.5][1]["losses/entropy"] == pytest.approx(results[0.5][0], rel=0.05)
