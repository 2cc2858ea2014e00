"""Model-backed agents: a trained checkpoint (LoRA adapter over its base, or full weights, written by the trainers'
checkpoint code) and a local transformers model, loaded from disk and benchmarked in token mode. Tiny random Llama."""

from __future__ import annotations

import copy
import json

import pytest

torch = pytest.importorskip("torch", reason="model agents need the [train] extra")

from clinical_gym.benchmarks.agents.models import checkpoint_weights, load_checkpoint_model  # noqa: E402
from clinical_gym.benchmarks.runner import BenchConfig, run_bench  # noqa: E402
from clinical_gym.trainers.common.checkpoint import STATE_FILE, save_weights  # noqa: E402
from clinical_gym.trainers.common.config import TrainerConfig  # noqa: E402
from clinical_gym.trainers.common.model import prepare_model  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A tiny base model saved as a model folder (weights, config, tokenizer with its chat template)."""
    folder = tmp_path_factory.mktemp("base")
    tokenizer = tiny_tokenizer()
    model = tiny_llama(tokenizer)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder, model, tokenizer


def trained_run(root, model, lora_r: int, tokenizer=None):
    """A run folder holding one checkpoint as the trainers write it (the tokenizer saved with the weights when
    given), with weights moved away from the base."""
    trained = prepare_model(copy.deepcopy(model), TrainerConfig(model="unused", lora_r=lora_r))
    with torch.no_grad():
        for p in trained.parameters():
            if p.requires_grad:
                p.add_(0.05 * torch.randn_like(p))
    step = root / "checkpoints" / "step-000003"
    save_weights(trained, step / "model")
    if tokenizer is not None:
        tokenizer.save_pretrained(step / "model")
    (step / STATE_FILE).write_text(json.dumps({"step": 3}))
    return root, trained


@pytest.mark.parametrize("lora_r", [4, 0])
def test_a_checkpoint_loads_with_the_trained_weights(tmp_path, base, lora_r):
    folder, model, tokenizer = base
    run, trained = trained_run(tmp_path, model, lora_r, tokenizer if lora_r else None)  # full: base's tokenizer
    assert checkpoint_weights(run) == run / "checkpoints" / "step-000003" / "model"
    _, loaded = load_checkpoint_model(run, base_model=str(folder))
    ids = torch.tensor([[1, 5, 9, 12]])
    expected = (trained.merge_and_unload() if lora_r else trained).eval()(ids).logits
    assert torch.allclose(loaded(ids).logits, expected, atol=1e-5)
    assert not torch.allclose(loaded(ids).logits, model.eval()(ids).logits, atol=1e-3)


def test_checkpoint_and_local_model_agents_play_a_benchmark_in_token_mode(tmp_path, base):
    folder, model, _ = base
    run, _ = trained_run(tmp_path / "run", model, lora_r=4)
    out = tmp_path / "bench"
    run_bench(BenchConfig(envs="ClinicalInquiry-v1", agents=f"trained=checkpoint:{run},transformers:{folder}", out=out,
                          episodes=2, base_model=str(folder), max_turn_tokens=3, max_episode_tokens=2048,
                          temperature=1.0, env_kwargs={"turn_budget": 2}, progress=False))
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {r["agent"] for r in rows} == {"trained", f"transformers:{folder.name}"}
    assert all(r["status"] == "ok" and len(r["turns"]) == 2 for r in rows)
    assert all(1 <= t["generated_tokens"] <= 3 for r in rows for t in r["turns"])
    kinds = {r["agent"]: r["agent_kind"] for r in rows}
    assert kinds["trained"].startswith("trained checkpoint")
    assert kinds[f"transformers:{folder.name}"].startswith("transformers model")
