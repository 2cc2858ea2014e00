"""PPO's pieces with numbers: the clipped surrogate (Eq. 4), the clipped value loss (Eq. 5), the entropy (Eq. 6),
the KL to the reference in the reward (k1, Eq. 1) or in the loss (k3, Eq. 7), and the value head on the policy
(one forward pass for logprobs and values; with LoRA only the adapters and the head train)."""

from __future__ import annotations

import copy
import math

import pytest

torch = pytest.importorskip("torch", reason="PPO needs the [train] extra")

from accelerate import Accelerator  # noqa: E402
from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.rollout import Trajectory, Turn  # noqa: E402
from clinical_gym.trainers.common.batch import pack  # noqa: E402
from clinical_gym.trainers.common.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from clinical_gym.trainers.common.config import TrainerConfig  # noqa: E402
from clinical_gym.trainers.common.logprobs import logprobs_from_logits, token_logprobs  # noqa: E402
from clinical_gym.trainers.common.losses import k3_kl  # noqa: E402
from clinical_gym.trainers.common.model import prepare_model  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.common.value_head import PolicyWithValueHead, TokenOutputs, ValueHead  # noqa: E402
from clinical_gym.trainers.ppo.config import PPOConfig  # noqa: E402
from clinical_gym.trainers.ppo.train import PPOBatch, clipped_value_loss, policy_loss, ppo_token_loss, token_rewards  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def config(**kw) -> PPOConfig:
    return PPOConfig(model="unused", **kw)


@pytest.fixture(scope="module")
def tiny():
    tokenizer = tiny_tokenizer()
    return tokenizer, tiny_llama(tokenizer)


def test_clipped_surrogate():
    ratios = torch.tensor([1.5, 0.5, 0.5, 1.5, 1.1])
    advantages = torch.tensor([1.0, 1.0, -1.0, -1.0, 1.0])
    loss, parts = policy_loss(ratios.log(), torch.zeros(5), advantages, 0.2, 0.2)
    # A>0: min(1.5, 1.2) clipped; min(0.5, 0.8) = 0.5.  A<0: min(-0.5, -0.8) clipped; min(-1.5, -1.2) = -1.5
    assert loss.tolist() == pytest.approx([-1.2, -0.5, 0.8, 1.5, -1.1])
    assert parts["clipped"].tolist() == [1.0, 0.0, 1.0, 0.0, 0.0]
    # approx KL (k3 of the old policy to the new): (ρ − 1) − log ρ
    assert parts["approx_kl"][0].item() == pytest.approx(0.5 - math.log(1.5))


def test_clipped_value_loss():
    old = torch.zeros(4)
    returns = torch.tensor([1.0, 1.0, -1.0, 1.0])
    values = torch.tensor([0.5, 0.1, -0.5, 1.5], requires_grad=True)
    loss, clipped = clipped_value_loss(values, old, returns, clip=0.2)
    # V=0.5: unclipped (0.5−1)² = 0.25, clipped (0.2−1)² = 0.64 -> ½·0.64 (the clip holds V back: no gradient)
    # V=0.1: inside the range, both (0.1−1)² = 0.81 -> ½·0.81
    # V=−0.5, R=−1: unclipped 0.25, clipped (−0.2+1)² = 0.64 -> ½·0.64
    # V=1.5: unclipped 0.25, clipped 0.64 -> ½·0.64 (it moved past the target: the larger loss wins)
    assert loss.tolist() == pytest.approx([0.32, 0.405, 0.32, 0.32])
    assert clipped.tolist() == [1.0, 0.0, 1.0, 1.0]
    loss.sum().backward()
    assert values.grad.tolist() == pytest.approx([0.0, -0.9, 0.0, 0.0])  # only the in-range value gets a gradient
    unclipped, never = clipped_value_loss(values.detach(), old, returns, clip=None)
    assert unclipped.tolist() == pytest.approx([0.125, 0.405, 0.125, 0.125]) and never.sum() == 0


def test_entropy_of_token_distributions():
    logits = torch.tensor([[0.0, 0.0], [math.log(3.0), 0.0], [0.0, -1e4]], requires_grad=True)
    logprobs, entropy = logprobs_from_logits(logits, torch.tensor([0, 1, 0]), entropy=True)
    # p = (½, ½) -> ln 2;  p = (¾, ¼) -> −(¾ ln ¾ + ¼ ln ¼);  one certain token -> 0
    assert entropy.tolist() == pytest.approx([math.log(2), -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)), 0.0],
                                             abs=1e-6)
    assert logprobs.tolist() == pytest.approx([math.log(0.5), math.log(0.25), 0.0], abs=1e-6)
    assert not entropy.requires_grad  # logged only, unless the loss needs its gradient
    _, with_grad = logprobs_from_logits(logits, torch.tensor([0, 1, 0]), entropy=True, entropy_grad=True)
    assert with_grad.requires_grad
    # temperature flattens the distribution: T → ∞ gives the uniform entropy ln 2
    _, hot = logprobs_from_logits(logits, torch.tensor([0, 1, 0]), temperature=1e6, entropy=True)
    assert hot.tolist() == pytest.approx([math.log(2)] * 2 + [hot[2].item()], abs=1e-4)


def micro_batch(**overrides: torch.Tensor) -> PPOBatch:
    """One sequence with 2 generated tokens (columns 0 and 1 of 3), every estimate set by hand."""
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    fields = dict(input_ids=torch.zeros((1, 4), dtype=torch.long), attention_mask=torch.ones((1, 4), dtype=torch.long),
                  loss_mask=mask, sample_logprobs=torch.zeros_like(mask), advantages=torch.zeros(1),
                  old_logprobs=torch.zeros_like(mask), ref_logprobs=torch.full_like(mask, math.log(0.5)),
                  old_values=torch.zeros_like(mask), returns=torch.ones_like(mask),
                  token_advantages=torch.ones_like(mask))
    return PPOBatch(**{**fields, **overrides})


def test_entropy_bonus_and_value_weight_in_the_loss():
    micro = micro_batch()
    out = TokenOutputs(logprobs=torch.zeros((1, 3)), values=torch.zeros((1, 3)),
                       entropy=torch.tensor([[0.5, 1.5, 0.0]]))
    base, parts = ppo_token_loss(out, micro, config(kl_coef=0.0, vf_coef=0.1, entropy_coef=0.0))
    # ratio 1, Â = 1 -> policy loss −1; value loss ½(0 − 1)² = 0.5 weighted 0.1
    assert base[0, :2].tolist() == pytest.approx([-1 + 0.05] * 2)
    assert parts["entropy"].tolist() == [[0.5, 1.5, 0.0]]
    bonus, _ = ppo_token_loss(out, micro, config(kl_coef=0.0, vf_coef=0.1, entropy_coef=0.01))
    assert (base - bonus)[0, :2].tolist() == pytest.approx([0.005, 0.015])  # − c_H · H


def quiz_turn(reward: float) -> Trajectory:
    """Tokens: opening 0-2, generated 3-4 (columns 2, 3), environment 5."""
    turn = Turn(prompt_len=3, generated_ids=[5, 6], logprobs=[0.0, 0.0], finish_reason="stop", action="",
                env_ids=[7], reward=reward)
    return Trajectory(opening_ids=[1, 2, 3], messages=[], turns=[turn], reward=reward)


def test_kl_in_the_reward_or_in_the_loss():
    batch = PPOBatch(**vars(pack([quiz_turn(1.0)], [0.0], pad_token_id=0)))
    # π_θold = ½ and π_ref = ¼ at both generated tokens: k1 = log ½ − log ¼ = ln 2
    batch.old_logprobs = torch.where(batch.loss_mask.bool(), math.log(0.5), 0.0)
    batch.ref_logprobs = torch.where(batch.loss_mask.bool(), math.log(0.25), 0.0)
    beta = 0.1

    rewards, k1 = token_rewards([quiz_turn(1.0)], batch, config(kl_coef=beta, kl_mode="reward"))
    assert k1[0].tolist() == pytest.approx([0, 0, math.log(2), math.log(2), 0])
    # −β·k1 on every generated token, the step reward on the last one
    assert rewards[0].tolist() == pytest.approx([0, 0, -beta * math.log(2), 1 - beta * math.log(2), 0])
    in_loss, _ = token_rewards([quiz_turn(1.0)], batch, config(kl_coef=beta, kl_mode="loss"))
    assert in_loss[0].tolist() == [0, 0, 0, 1.0, 0]
    batch.ref_logprobs = None
    no_reference, no_k1 = token_rewards([quiz_turn(1.0)], batch, config(kl_coef=beta, kl_mode="reward"))
    assert no_reference[0].tolist() == [0, 0, 0, 1.0, 0] and no_k1.abs().sum() == 0

    micro = micro_batch()
    logprobs = torch.full((1, 3), math.log(0.5))
    out = TokenOutputs(logprobs=logprobs, values=torch.zeros((1, 3)), entropy=None)
    expected_k3 = k3_kl(logprobs, micro.ref_logprobs)[0, 0].item()  # π_ref = π_θ here: 0
    assert expected_k3 == 0.0
    micro.ref_logprobs = torch.full((1, 3), math.log(0.25))
    k3 = 0.25 / 0.5 - math.log(0.25 / 0.5) - 1  # exp(d) − d − 1, d = log π_ref − log π_θ
    reward_mode, parts = ppo_token_loss(out, micro, config(kl_coef=beta, kl_mode="reward"))
    loss_mode, _ = ppo_token_loss(out, micro, config(kl_coef=beta, kl_mode="loss"))
    assert parts["kl"][0, 0].item() == pytest.approx(k3)  # monitored either way
    assert (loss_mode - reward_mode)[0, :2].tolist() == pytest.approx([beta * k3] * 2)  # β·k3 only in "loss" mode


def test_policy_with_value_head_matches_the_policy_and_reads_the_last_hidden_state(tiny):
    tokenizer, base = tiny
    model = copy.deepcopy(base)
    actor_critic = PolicyWithValueHead(model)
    torch.nn.init.normal_(actor_critic.value_head.linear.weight)
    ids = torch.tensor([[3, 9, 14, 20, 7, 0], [5, 6, 8, 2, 0, 0]])
    attention = torch.tensor([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 0, 0]])
    mask = torch.tensor([[0.0, 1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]])
    out = actor_critic(ids, attention, mask, temperature=0.7, entropy=True)
    assert torch.equal(out.logprobs, token_logprobs(model, ids, attention, mask, 0.7))
    hidden = model.model(input_ids=ids, attention_mask=attention).last_hidden_state
    expected = actor_critic.value_head(hidden[:, :-1]) * mask
    assert torch.allclose(out.values, expected, atol=1e-6)
    logits = model(input_ids=ids, attention_mask=attention).logits[:, :-1] / 0.7
    full_entropy = -(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1) * mask
    assert torch.allclose(out.entropy, full_entropy, atol=1e-5)
    assert ValueHead(8)(torch.randn(3, 8)).abs().sum() == 0  # a fresh head predicts 0


def test_with_lora_only_adapters_and_the_head_train_and_both_get_gradients(tiny):
    tokenizer, base = tiny
    actor_critic = PolicyWithValueHead(prepare_model(copy.deepcopy(base), TrainerConfig(model="unused", lora_r=4)))
    trainable = {name for name, p in actor_critic.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in name or name.startswith("value_head.") for name in trainable)
    assert {"value_head.linear.weight", "value_head.linear.bias"} <= trainable
    ids = torch.tensor([[3, 9, 14, 20]])
    out = actor_critic(ids, torch.ones_like(ids), torch.tensor([[0.0, 1.0, 1.0]]))
    (out.values.sum() + out.logprobs.sum()).backward()
    grads = {name: p.grad for name, p in actor_critic.named_parameters() if p.requires_grad}
    assert grads["value_head.linear.bias"].item() == 2.0  # dV/db over the two generated tokens
    # lora_B moves first (lora_A's gradient is 0 while B is still 0)
    assert any(g is not None and g.abs().sum() > 0 for name, g in grads.items() if "lora_B" in name)


def test_an_empty_mask_still_connects_the_graph(tiny):
    tokenizer, base = tiny
    actor_critic = PolicyWithValueHead(copy.deepcopy(base))
    ids = torch.tensor([[3, 9, 14]])
    out = actor_critic(ids, torch.ones_like(ids), torch.zeros((1, 2)))
    assert out.logprobs.abs().sum() == 0 and out.values.abs().sum() == 0
    (out.logprobs.sum() + out.values.sum()).backward()  # every process runs its backward pass
    assert actor_critic.value_head.linear.weight.grad is not None


def test_the_value_head_is_saved_and_restored_with_the_checkpoint(tmp_path, tiny):
    tokenizer, base = tiny
    accelerator = Accelerator(cpu=True)
    heads = [PolicyWithValueHead(prepare_model(copy.deepcopy(base), TrainerConfig(model="unused", lora_r=2)))
             for _ in range(2)]
    torch.nn.init.normal_(heads[0].value_head.linear.weight)
    optimizers = [torch.optim.AdamW(h.parameters(), lr=1e-3) for h in heads]
    schedulers = [torch.optim.lr_scheduler.LambdaLR(o, lambda _: 1.0) for o in optimizers]
    save_checkpoint(tmp_path, 1, accelerator=accelerator, model=heads[0].policy, optimizer=optimizers[0],
                    scheduler=schedulers[0], state={}, modules={"value_head": heads[0].value_head})
    assert (tmp_path / "step-000001" / "value_head.safetensors").is_file()
    load_checkpoint(tmp_path / "step-000001", accelerator=accelerator, model=heads[1].policy,
                    optimizer=optimizers[1], scheduler=schedulers[1], modules={"value_head": heads[1].value_head})
    assert torch.equal(heads[0].value_head.linear.weight, heads[1].value_head.linear.weight)


@pytest.mark.parametrize(("settings", "message"), [
    ({"kl_mode": "both"}, "kl_mode"),
    ({"gamma": 1.5}, "gamma and lam"),
    ({"lam": -0.1}, "gamma and lam"),
    ({"value_clip": 0.0}, "value_clip"),
    ({"vf_coef": -1.0}, "vf_coef"),
    ({"num_epochs": 0}, "num_epochs"),
    ({"num_minibatches": 9, "group_size": 2, "groups_per_step": 4}, "exceeds the episodes"),
    ({"value_learning_rate": 0.0}, "value_learning_rate"),
    ({"epsilon_low": 1.0}, "epsilon_low"),
])
def test_bad_settings_are_rejected(settings, message):
    with pytest.raises(ValueError, match=message):
        config(**settings)


def test_a_single_pass_update_equals_the_update_after_a_no_gradient_estimate(monkeypatch, tiny):
    """One epoch, one minibatch, one micro batch (the default): the update's forward pass gives π_θold's logprobs
    and values (issue 23: one forward pass a step fewer) and trains the model, value head included, as the update
    after a separate no-gradient pass does; KL in the reward, so the old logprobs reach the advantages too."""
    from clinical_gym.trainers.common.model import Reference
    from clinical_gym.trainers.ppo import train as ppo

    tokenizer, base = tiny
    torch.manual_seed(0)
    head = ValueHead(base.config.hidden_size)
    torch.nn.init.normal_(head.linear.weight, std=0.5)  # values that move the advantages
    trajectories = []
    for i, reward in enumerate([1.0, 0.0, 0.5, 0.0]):
        turn = Turn(prompt_len=3, generated_ids=[5 + i, 6, 7 + i][: 1 + i % 3], logprobs=[-1.0] * (1 + i % 3),
                    finish_reason="stop", action="", env_ids=[], reward=reward)
        trajectories.append(Trajectory(opening_ids=[1, 2, 3], messages=[], turns=[turn], reward=reward))
    cfg = config(micro_batch_size=4, kl_coef=0.05, kl_mode="reward")
    results = []
    for one_pass in (True, False):
        monkeypatch.setattr(ppo, "single_pass", lambda batch, cfg, one_pass=one_pass: one_pass)
        model = PolicyWithValueHead(copy.deepcopy(base), copy.deepcopy(head))
        passes = []
        model.register_forward_hook(lambda *_: passes.append(torch.is_grad_enabled()))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # AdamW would magnify float rounding of ~0 gradients
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
        batch = PPOBatch(**vars(pack(trajectories, [0.0] * 4, pad_token_id=0)))
        batch = ppo.add_rollout_estimates(model, model.policy, Reference(model.policy, needed=True), batch, cfg)
        batch, estimates, losses = ppo.prepare_and_update(model, batch, trajectories, cfg, Accelerator(cpu=True),
                                                          optimizer, scheduler, torch.Generator().manual_seed(0),
                                                          None)
        results.append((model.state_dict(), batch, estimates, losses))
        assert passes == ([True] if one_pass else [False, True])  # the no-gradient estimate only without one pass
    (fused, fused_batch, fused_est, fused_losses), (split, split_batch, split_est, split_losses) = results
    assert all(torch.allclose(fused[k], split[k], atol=1e-6) for k in fused)
    assert any(not torch.equal(fused[k], v) for k, v in PolicyWithValueHead(base, head).state_dict().items())
    for name in ("old_logprobs", "old_values", "token_advantages", "returns", "rewards"):
        assert torch.allclose(getattr(fused_batch, name), getattr(split_batch, name), atol=1e-6), name
    assert fused_batch.old_values.abs().sum() > 0 and not fused_batch.old_values.requires_grad
    for name, value in {**split_est, **split_losses}.items():
        assert {**fused_est, **fused_losses}[name] == pytest.approx(value, rel=1e-5, abs=1e-6), name
