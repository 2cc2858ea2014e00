"""GRPO's pieces with numbers: advantages (Eq. 1), ratio and clip-higher surrogate (Eq. 2-3), k3 KL (Eq. 4),
loss aggregation (Eq. 5), micro-batch independence of an update, and the collapse monitors."""

from __future__ import annotations

import copy
import math

import pytest

torch = pytest.importorskip("torch", reason="GRPO needs the [train] extra")

from accelerate import Accelerator  # noqa: E402
from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.rollout import Trajectory, Turn  # noqa: E402
from clinical_gym.trainers.common.batch import pack  # noqa: E402
from clinical_gym.trainers.common.losses import k3_kl, token_weights  # noqa: E402
from clinical_gym.trainers.common.model import Reference  # noqa: E402
from clinical_gym.trainers.common.monitors import COLLAPSE_MONITORS, env_domain, env_metrics, rollout_metrics  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.grpo.config import GRPOConfig  # noqa: E402
from clinical_gym.trainers.grpo.train import add_old_and_ref_logprobs, group_advantages, grpo_token_loss, update  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def config(**kw) -> GRPOConfig:
    return GRPOConfig(model="unused", **kw)


def test_group_advantages():
    rewards = torch.tensor([[1.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    # mean 0.25, sample std sqrt((0.75² + 3·0.25²) / 3) = 0.5
    scaled = group_advantages(rewards, scale=True, eps=1e-8)
    assert torch.allclose(scaled[0], torch.tensor([1.5, -0.5, -0.5, -0.5]))
    assert torch.equal(scaled[1], torch.zeros(4))  # no variance, no signal
    unscaled = group_advantages(rewards, scale=False, eps=1e-8)
    assert torch.allclose(unscaled[0], torch.tensor([0.75, -0.25, -0.25, -0.25]))


def test_clipped_surrogate_with_clip_higher():
    ratios = torch.tensor([[1.5, 0.5, 0.5, 1.5, 1.1]])
    advantages = torch.tensor([1.0, 1.0, -1.0, -1.0, 1.0])
    old = torch.zeros(5)
    loss, parts = grpo_token_loss(ratios.log().reshape(5, 1), old.reshape(5, 1), None, advantages,
                                  config(epsilon_low=0.2, epsilon_high=0.28, beta=0.0))
    # A>0: min(1.5, 1.28) -> clipped at 1 + eps_high; min(0.5, 0.8) -> 0.5.  A<0: min(-0.5, -0.8) -> clipped at
    # 1 - eps_low; min(-1.5, -1.28) -> -1.5 (a bad action made more likely is never clipped).  1.1 is inside.
    assert torch.allclose(loss.flatten(), torch.tensor([-1.28, -0.5, 0.8, 1.5, -1.1]))
    assert parts["clipped"].flatten().tolist() == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert torch.allclose(parts["ratio"].flatten(), ratios.flatten())


def test_k3_kl_and_its_weight_in_the_loss():
    logp, ref = torch.tensor([[math.log(0.5)]]), torch.tensor([[math.log(0.25)]])
    expected = 0.5 + math.log(2) - 1  # exp(d) - d - 1 with d = log(0.25 / 0.5)
    assert k3_kl(logp, ref).item() == pytest.approx(expected)
    assert k3_kl(logp, logp).item() == 0.0
    loss, parts = grpo_token_loss(logp, logp, ref, torch.tensor([0.0]), config(beta=0.1))
    assert loss.item() == pytest.approx(0.1 * expected) and parts["kl"].item() == pytest.approx(expected)


def test_loss_aggregations():
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    assert torch.allclose(token_weights(mask, "token-mean"), mask / 3)
    assert torch.allclose(token_weights(mask, "sequence-mean"), torch.tensor([[0.25, 0.25, 0.0], [0.5, 0.0, 0.0]]))
    assert torch.allclose(token_weights(mask, "constant", 10), mask / 20)
    assert torch.allclose(token_weights(mask, "token-mean", total_tokens=6), mask / 6)  # one share of a larger batch
    with pytest.raises(ValueError, match="constant"):
        token_weights(mask, "constant")


def trajectory(generated: list[int], reward: float, group: int, length: int = 4) -> Trajectory:
    turn = Turn(prompt_len=length, generated_ids=generated, logprobs=[0.0] * len(generated), finish_reason="stop",
                action="", env_ids=[2])
    return Trajectory(opening_ids=list(range(3, 3 + length)), messages=[], turns=[turn], group=group, reward=reward)


@pytest.mark.parametrize("aggregation", ["token-mean", "sequence-mean", "constant"])
def test_an_update_does_not_depend_on_the_micro_batch_size(aggregation):
    tokenizer = tiny_tokenizer()
    base = tiny_llama(tokenizer)
    trajectories = [trajectory([10 + i] * (i + 1), float(i % 2), group=i // 2) for i in range(6)]
    advantages = [1.0, -1.0, 0.5, -0.5, 2.0, -2.0]
    results = []
    for micro in (1, 4):
        cfg = config(micro_batch_size=micro, num_minibatches=1, loss_aggregation=aggregation, loss_constant=8,
                     beta=0.05, learning_rate=1e-2, max_grad_norm=0.0)
        model = copy.deepcopy(base)
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
        batch = add_old_and_ref_logprobs(model, Reference(model, needed=True), pack(trajectories, advantages, 0), cfg)
        stats = update(model, batch, cfg, Accelerator(cpu=True), optimizer, scheduler, torch.Generator().manual_seed(0))
        results.append((model.state_dict(), stats))
    (first, stats_one), (second, stats_four) = results
    assert all(torch.allclose(first[k], second[k], atol=1e-6) for k in first)
    assert any(not torch.equal(first[k], base.state_dict()[k]) for k in first)
    assert stats_one["losses/clip_fraction"] == pytest.approx(stats_four["losses/clip_fraction"])
    assert stats_one["losses/kl_ref"] == pytest.approx(0.0, abs=1e-9)  # policy == reference before the update


@pytest.mark.parametrize("needed", [False, True])
def test_a_lora_reference_runs_only_when_needed(needed):
    """A LoRA model's reference (its adapters off) costs no memory, so it used to be scored every step even with
    beta 0 and the monitor off: a forward pass the settings did not ask for (issue 23's trainer time)."""
    pytest.importorskip("peft")
    from clinical_gym.trainers.common.config import TrainerConfig
    from clinical_gym.trainers.common.model import prepare_model

    model = prepare_model(tiny_llama(tiny_tokenizer()), TrainerConfig(model="unused", lora_r=4))
    passes = []
    model.register_forward_hook(lambda *_: passes.append(1))
    reference = Reference(model, needed=needed)
    assert reference.available is needed
    trajectories = [trajectory([10 + i] * (i + 1), float(i % 2), group=i // 2) for i in range(4)]
    cfg = config(micro_batch_size=4, num_minibatches=1, beta=0.05 if needed else 0.0, ref_kl_monitor=False)
    batch = add_old_and_ref_logprobs(model, reference, pack(trajectories, [1.0, -1.0, 0.5, -0.5], 0), cfg)
    assert batch.old_logprobs is None  # on-policy: the update's own logprobs, detached
    assert len(passes) == int(needed)
    assert (batch.ref_logprobs is not None) is needed


def test_a_micro_batch_without_generated_tokens_still_updates():
    tokenizer = tiny_tokenizer()
    model = tiny_llama(tokenizer)
    cfg = config(micro_batch_size=1, num_minibatches=1, beta=0.0, ref_kl_monitor=False)
    batch = pack([trajectory([], 0.0, group=0), trajectory([7, 2], 1.0, group=0)], [-1.0, 1.0], pad_token_id=0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    before = copy.deepcopy(model.state_dict())
    stats = update(model, batch, cfg, Accelerator(cpu=True), optimizer, scheduler, torch.Generator().manual_seed(0))
    assert math.isnan(stats["losses/kl_ref"]) and stats["losses/grad_norm"] > 0
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_an_update_frees_its_gradients():
    """After the optimizer step no parameter keeps a gradient: held until the next step's update, a full fine-tuning
    run carried a float32 copy of every weight through the rollout and the logprob passes (issue 23's memory)."""
    tokenizer = tiny_tokenizer()
    model = tiny_llama(tokenizer)
    cfg = config(micro_batch_size=2, num_minibatches=2, beta=0.0, ref_kl_monitor=False)
    trajectories = [trajectory([10 + i] * (i + 1), float(i % 2), group=i // 2) for i in range(4)]
    batch = pack(trajectories, [1.0, -1.0, 0.5, -0.5], pad_token_id=0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    before = copy.deepcopy(model.state_dict())
    stats = update(model, batch, cfg, Accelerator(cpu=True), optimizer, scheduler, torch.Generator().manual_seed(0))
    assert stats["losses/grad_norm"] > 0
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())


def test_env_tokens_are_masked_out_of_the_loss():
    batch = pack([trajectory([20, 21, 2], 1.0, group=0)], [1.0], pad_token_id=0)
    # opening 4 tokens (mask 0), 3 generated (1), 1 env token (0); column t describes token t + 1
    assert batch.loss_mask.tolist() == [[0, 0, 0, 1, 1, 1, 0]]
    assert batch.input_ids.tolist() == [[3, 4, 5, 6, 20, 21, 2, 2]]


def test_collapse_monitors_from_trajectories():
    batch = [trajectory([5] * 4, 1.0, group=0), trajectory([5] * 2, 0.0, group=0),
             trajectory([5] * 6, 1.0, group=1), trajectory([5] * 6, 1.0, group=1)]
    batch[0].turns[0].info = {"tool_calls": 3}
    batch[1].truncation = "episode_tokens"
    batch[2].outcome, batch[3].outcome = {"success": True}, {"success": False}
    batch[2].reward_components = {"accuracy": 2.0}
    metrics = rollout_metrics(batch)
    assert metrics["rollout/turns_per_episode"] == 1.0
    assert metrics["rollout/tool_calls_per_episode"] == 0.75
    assert metrics["rollout/gen_tokens_per_episode"] == 4.5 and metrics["rollout/gen_tokens_per_turn"] == 4.5
    assert metrics["rollout/truncation_rate"] == 0.25
    assert metrics["rollout/group_reward_std"] == pytest.approx(0.25)  # population std 0.5 and 0, averaged
    assert metrics["rollout/zero_std_groups"] == 0.5
    assert set(COLLAPSE_MONITORS) - set(metrics) == {"losses/kl_ref", "losses/clip_fraction", "losses/grad_norm"}
    env = env_metrics(batch, env_domain("ClinicalInquiry-v1"))
    assert env["env/inquiry/success_rate"] == 0.5 and env["env/inquiry/finished_rate"] == 0.5
    assert env["env/inquiry/accuracy"] == 0.5 and env_domain("tests_module:Quiz-v1") == "Quiz"
    assert env_domain("Triage-v1") == "triage" and env_domain("DiagnosticWorkup-v1") == "workup"
