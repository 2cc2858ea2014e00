"""``clinical-gym train sft`` on a tiny random Llama: the run writes metrics and checkpoints, resumes exactly, and
its merged model folder loads in GRPO (``--model``) and in the benchmark's checkpoint agent; bad settings and bad
data are one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("trl", reason="SFT needs the [train] extra")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

import clinical_gym.cli  # noqa: E402
from clinical_gym.benchmarks.agents.oracle import oracle_agent  # noqa: E402
from clinical_gym.cases import load_cases  # noqa: E402
from clinical_gym.rollout import EpisodeSpec  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.sft.config import SFTRunConfig  # noqa: E402
from clinical_gym.trainers.sft.data import collect_examples, save_examples  # noqa: E402
from clinical_gym.trainers.sft.train import CHECKPOINTS_DIR, MODEL_DIR, main  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

INQUIRY = "ClinicalInquiry-v1"
ENV_KWARGS = {"turn_budget": 2}


@pytest.fixture(scope="module")
def expert(tmp_path_factory) -> Path:
    """Six oracle consultations (2 turns, short recommendations) saved as expert data."""
    cases = load_cases("generated:common", "train", n=6, seed=0)
    agent = oracle_agent("inquiry")
    examples, _ = collect_examples(agent.policy, lambda: gym.make(INQUIRY, cases=cases, **ENV_KWARGS),
                                   [EpisodeSpec(seed=i, options={"case_id": c.id}) for i, c in enumerate(cases)],
                                   env_id=INQUIRY, source="agent:oracle", on_reset=agent.on_reset,
                                   rationale="template", max_recommendation_words=8)
    return save_examples(examples, tmp_path_factory.mktemp("expert"))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, expert) -> Path:
    """A tiny random Llama with a BPE tokenizer trained on the expert text (short sequences), saved to a folder."""
    lines = [m["content"] for row in (expert / "conversations.jsonl").read_text().splitlines()
             for m in json.loads(row)["messages"]]
    tokenizer = tiny_tokenizer(corpus=lines, vocab_size=400)
    folder = tmp_path_factory.mktemp("tiny")
    tiny_llama(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def settings(expert: Path, model: Path, out: Path, **overrides) -> SFTRunConfig:
    base = dict(dataset=str(expert), model=str(model), env=INQUIRY, lora_r=4, lora_alpha=8, epochs=0, total_steps=3,
                save_every=1, keep_checkpoints=5, micro_batch_size=2, learning_rate=1e-3, max_episode_tokens=2048,
                output_dir=str(out), report_to="none", progress=False, seed=0)
    return SFTRunConfig(**{**base, **overrides})


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def test_sft_writes_metrics_checkpoints_and_a_merged_model_that_grpo_and_the_benchmark_load(expert, tiny_model,
                                                                                           tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    from clinical_gym.benchmarks.agents.models import load_checkpoint_model
    from clinical_gym.benchmarks.runner import BenchConfig, run_bench
    from clinical_gym.trainers.grpo.config import GRPOConfig
    from clinical_gym.trainers.grpo.train import main as grpo_main

    run = tmp_path / "sft"
    last = main(settings(expert, tiny_model, run))
    assert [r["step"] for r in rows(run)] == [1, 2, 3]
    assert all(r["losses/sft_loss"] > 0 and r["charts/learning_rate"] > 0 for r in rows(run))
    assert last == {k: v for k, v in rows(run)[-1].items() if k != "step"}
    saved = sorted(p.name for p in (run / CHECKPOINTS_DIR).glob("checkpoint-*"))
    assert saved == [f"checkpoint-{s}" for s in (1, 2, 3)]
    folder = run / MODEL_DIR
    assert {"config.json", "model.safetensors", "tokenizer_config.json"} <= {p.name for p in folder.iterdir()}
    assert not any("lora" in name for name in weights(folder))  # merged: a plain model, no adapter left

    # the merged weights are the base plus the last checkpoint's adapter
    from peft import PeftModel

    base = AutoModelForCausalLM.from_pretrained(str(tiny_model))
    adapted = PeftModel.from_pretrained(base, str(run / CHECKPOINTS_DIR / "checkpoint-3")).merge_and_unload()
    merged = AutoModelForCausalLM.from_pretrained(str(folder))
    ids = torch.tensor([[5, 9, 14, 22, 31]])
    assert torch.allclose(adapted(ids).logits, merged(ids).logits, atol=1e-5)
    assert not torch.allclose(AutoModelForCausalLM.from_pretrained(str(tiny_model))(ids).logits, merged(ids).logits)

    # consumer 1: GRPO takes the folder as its model (a fresh LoRA on top; the SFT model is its reference)
    grpo = tmp_path / "grpo"
    grpo_main(GRPOConfig(model=str(folder), env=INQUIRY, env_kwargs=ENV_KWARGS, lora_r=2, total_steps=1,
                         group_size=2, groups_per_step=1, max_refill_rounds=0, max_turn_tokens=4,
                         max_episode_tokens=2048, num_minibatches=1, micro_batch_size=2, output_dir=str(grpo),
                         generation_engine="transformers", report_to="none", progress=False))
    assert (grpo / "checkpoints" / "step-000001" / "model" / "adapter_config.json").is_file()

    # consumer 2: the benchmark's checkpoint agent, given the run folder
    tokenizer, model = load_checkpoint_model(run)
    assert torch.allclose(model(ids).logits, merged(ids).logits)
    report = run_bench(BenchConfig(envs=INQUIRY, agents=f"sft=checkpoint:{run}", out=tmp_path / "bench",
                                   cases="generated:common:10", episodes=2, env_kwargs=ENV_KWARGS,
                                   max_turn_tokens=4, max_episode_tokens=2048, progress=False))
    records = [json.loads(line) for line in (report.parent / "results.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["status"] != "error" for r in records)  # loaded and played (a random model's
    assert all(r["agent_kind"].endswith(f"({folder})") for r in records)      # replies may be empty: "failed")


def test_resume_continues_from_the_last_checkpoint_exactly(expert, tiny_model, tmp_path):
    whole = tmp_path / "whole"
    main(settings(expert, tiny_model, whole, total_steps=4))
    parts = tmp_path / "parts"
    main(settings(expert, tiny_model, parts, total_steps=2))
    with open(parts / "metrics.jsonl", "a") as f:  # a row logged after the last checkpoint, by a run that died
        f.write(json.dumps({"step": 3, "losses/sft_loss": 99.0}) + "\n")
    main(settings(expert, tiny_model, parts, total_steps=4, resume=True))
    assert [r["step"] for r in rows(parts)] == [1, 2, 3, 4]
    for a, b in zip(rows(whole), rows(parts), strict=True):
        assert a["losses/sft_loss"] == pytest.approx(b["losses/sft_loss"], rel=1e-4)
    first, second = weights(whole / MODEL_DIR), weights(parts / MODEL_DIR)
    assert first.keys() == second.keys()
    assert all((first[k] - second[k]).abs().max() < 1e-5 for k in first)


def test_sft_recomputes_activations_by_default_and_trains_the_same_weights(expert, tiny_model, tmp_path,
                                                                         monkeypatch):
    """Without activation checkpointing every decoder layer keeps its activations until the backward pass: the
    efficacy benchmark's MedicalQA cold start (SmolLM2, 4 conversations of up to 1,855 tokens) grew to 12 GB."""
    import transformers.modeling_utils

    recomputed = []
    checkpoint = transformers.modeling_utils.checkpoint

    def counted(*args, **kwargs):
        recomputed.append(1)
        return checkpoint(*args, **kwargs)

    monkeypatch.setattr(transformers.modeling_utils, "checkpoint", counted)
    on = settings(expert, tiny_model, tmp_path / "on", total_steps=1)
    assert on.gradient_checkpointing
    main(on)
    assert len(recomputed) == 2  # the step's pass: the tiny Llama's two layers
    main(settings(expert, tiny_model, tmp_path / "off", total_steps=1, gradient_checkpointing=False))
    assert len(recomputed) == 2
    assert rows(tmp_path / "on") == rows(tmp_path / "off")
    first, second = weights(tmp_path / "on" / MODEL_DIR), weights(tmp_path / "off" / MODEL_DIR)
    assert first.keys() == second.keys() and all(first[k].equal(second[k]) for k in first)


def test_sft_on_the_cpu_runs_trl_s_fused_kernel_in_small_token_tiles_and_puts_the_setting_back(
        expert, tiny_model, tmp_path, monkeypatch):
    """TRL's fused log-probability kernel works 4,096 positions at a time in float32 tiles of 512 MB; SFT on the CPU
    uses 512-position tiles while it trains (the same per-position results) and leaves TRL's setting as it was."""
    import trl
    from trl.kernels import chunked_logprob

    from clinical_gym.trainers.sft.train import CPU_TOKEN_TILE, token_tile

    seen, train = [], trl.SFTTrainer.train

    def recorded(self, *args, **kwargs):
        seen.append(chunked_logprob.TOKEN_CHUNK_SIZE)
        return train(self, *args, **kwargs)

    monkeypatch.setattr(trl.SFTTrainer, "train", recorded)
    before = chunked_logprob.TOKEN_CHUNK_SIZE
    main(settings(expert, tiny_model, tmp_path / "run", total_steps=1))
    assert seen == [CPU_TOKEN_TILE] and chunked_logprob.TOKEN_CHUNK_SIZE == before == 4096
    with pytest.raises(RuntimeError, match="stop"), token_tile(64):
        assert chunked_logprob.TOKEN_CHUNK_SIZE == 64
        raise RuntimeError("stop")
    assert chunked_logprob.TOKEN_CHUNK_SIZE == before
    with token_tile(None):
        assert chunked_logprob.TOKEN_CHUNK_SIZE == before


def test_train_sft_from_the_command_line(expert, tiny_model, tmp_path, monkeypatch):
    monkeypatch.setattr(clinical_gym.cli, "COMMAND_MODULES", ("data", "train"))
    run = tmp_path / "cli"
    code = clinical_gym.cli.main(["train", "sft", "--dataset", str(expert), "--model", str(tiny_model), "--lora-r",
                                  "2", "--epochs", "1", "--micro-batch-size", "3", "--max-episode-tokens", "2048",
                                  "--output-dir", str(run), "--report-to", "none", "--no-progress"])
    assert code == 0
    assert [r["step"] for r in rows(run)] == [1, 2]  # one epoch of 6 conversations, 3 per step
    assert rows(run)[-1]["charts/epoch"] == pytest.approx(1.0)
    assert (run / MODEL_DIR / "model.safetensors").is_file()


@pytest.mark.parametrize(("flags", "message"), [
    ([], "dataset is required"),
    (["--dataset", "{tmp}/missing"], "no expert data at"),
    (["--dataset", "{expert}", "--env", "DiagnosticWorkup-v1"], "holds conversations of ClinicalInquiry-v1"),
    (["--dataset", "{expert}", "--epochs", "-1"], "epochs must be >= 0"),
    (["--dataset", "{expert}", "--mixed-precision", "bf16", "--cpu"], "needs a GPU"),
    (["--dataset", "{expert}", "--model", "{tmp}/no-model"], "model not found"),
])
def test_train_sft_errors_are_one_line(flags, message, expert, tiny_model, tmp_path, capsys):
    given = [f.replace("{tmp}", str(tmp_path)).replace("{expert}", str(expert)) for f in flags]
    model = [] if "--model" in given else ["--model", str(tiny_model)]
    assert clinical_gym.cli.main(["train", "sft", *model, *given, "--output-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not (tmp_path / "run").exists()  # nothing ran
