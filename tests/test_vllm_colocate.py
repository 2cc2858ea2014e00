"""``VLLMPolicy`` (vLLM inside the training process) against a fake ``vllm`` package: token-exact generation, full
and LoRA-adapter weight syncs with their bookkeeping, and the colocated policy ``generation_policy`` builds."""

from __future__ import annotations

import copy
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from fake_vllm import install_fake_vllm  # noqa: E402
from peft import LoraConfig, get_peft_model, get_peft_model_state_dict  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from clinical_gym.rollout import Prompt, selection  # noqa: E402
from clinical_gym.rollout.vllm_policy import VLLMPolicy  # noqa: E402
from clinical_gym.trainers.common.config import TrainerConfig  # noqa: E402
from clinical_gym.trainers.common.generation import engine_metrics, generation_policy, sync_generation_policy  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402

MESSAGES = [{"role": "system", "content": "answer with one word"},
            {"role": "user", "content": "the patient has a fever"}]
RENDEZVOUS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


@pytest.fixture
def engine(monkeypatch, tokenizer):
    """The fake vllm package, with a private copy of the environment (a new engine sets rendezvous variables)."""
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k not in RENDEZVOUS})
    return install_fake_vllm(monkeypatch, tokenizer)


def lora_model(tokenizer, seed=0):
    model = get_peft_model(tiny_llama(tokenizer, hidden_size=32, seed=seed),
                           LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    with torch.no_grad():  # LoRA B starts at zero; give the adapter an effect
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.02)
    return model


def train_step(model):
    """One AdamW step on a language-modelling loss (changes every trainable parameter)."""
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    ids = torch.tensor([[3, 4, 5, 6, 7, 8]])
    model(input_ids=ids, labels=ids).loss.backward()
    optimizer.step()


def test_generation_is_token_exact_with_per_prompt_seeds(engine, tokenizer):
    eos = tokenizer.eos_token_id
    engine.reply = staticmethod(lambda ids, name: [ids[-1], 7, eos])
    policy = VLLMPolicy("/models/doctor", temperature=0.7, top_p=0.9, gpu_memory_utilization=0.3)
    llm = engine.instances[-1]
    assert llm.model == "/models/doctor"
    assert llm.kwargs == {"gpu_memory_utilization": 0.3, "distributed_executor_backend": "external_launcher",
                          "logprobs_mode": "processed_logprobs"}

    out = policy.generate([Prompt(MESSAGES, 8, token_ids=(11, 12, 13)), Prompt(MESSAGES, 2)], seed=40)
    call = llm.calls[-1]
    templated = tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True, tokenize=True,
                                              return_dict=True)["input_ids"]
    assert call.prompts == [[11, 12, 13], list(templated)]
    assert [p.seed for p in call.params] == [40, 41] and [p.max_tokens for p in call.params] == [8, 2]
    assert all(p.temperature == 0.7 and p.top_p == 0.9 and p.logprobs == 0 for p in call.params)
    assert call.lora_request is None
    assert out[0].token_ids == (13, 7, eos) and out[0].finish_reason == "stop"
    assert out[0].logprobs == pytest.approx((-0.1, -0.2, -0.3))
    assert out[1].token_ids == (templated[-1], 7) and out[1].finish_reason == "length"


def test_a_new_engine_gets_single_process_rendezvous_variables(engine):
    VLLMPolicy("/models/doctor")
    assert {k: os.environ[k] for k in RENDEZVOUS[:4]} == {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1",
                                                         "MASTER_ADDR": "127.0.0.1"}
    assert 0 < int(os.environ["MASTER_PORT"]) < 65536


def test_full_weight_sync_loads_every_weight_and_skips_unchanged_weights(engine, tokenizer):
    model = tiny_llama(tokenizer, hidden_size=32)
    policy = VLLMPolicy("/models/doctor")
    llm = engine.instances[-1]

    assert policy.sync_weights(model) is True
    names = [name for name, _ in model.named_parameters()]
    assert [name for name, _ in llm.runner.loaded] == names
    assert all(torch.equal(t, p) for (_, t), p in zip(llm.runner.loaded, model.parameters(), strict=True))
    assert llm.prefix_resets == 1 and policy.versions.engine_version == 1

    assert policy.sync_weights(model) is False  # nothing changed: nothing sent
    assert len(llm.runner.loaded) == len(names) and policy.versions.skipped == 1

    train_step(model)
    assert policy.sync_weights(model) is True
    latest = dict(llm.runner.loaded[len(names):])
    assert all(torch.equal(latest[n], p) for n, p in model.named_parameters())
    assert llm.prefix_resets == 2
    policy.generate([Prompt(MESSAGES, 4, token_ids=(1, 2))])
    assert policy.versions.last.version == 2 and policy.versions.last.staleness == 0


def test_merged_sync_of_a_lora_model_sends_merged_base_weights_and_leaves_the_model_unmerged(engine, tokenizer):
    model = lora_model(tokenizer)
    before = {n: p.clone() for n, p in model.named_parameters()}
    merged = copy.deepcopy(model).merge_and_unload()
    policy = VLLMPolicy("/models/doctor", lora_sync="merged")
    llm = engine.instances[-1]

    assert policy.sync_weights(model)
    loaded = dict(llm.runner.loaded)
    assert set(loaded) == {n for n, _ in merged.named_parameters()}  # vLLM names: no peft prefixes, no LoRA tensors
    assert all(torch.allclose(loaded[n], p, atol=1e-6) for n, p in merged.named_parameters())
    assert not torch.equal(loaded["model.layers.0.self_attn.q_proj.weight"],
                           before["base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight"])
    assert all(torch.allclose(p, before[n], atol=1e-6) for n, p in model.named_parameters())  # unmerged again
    assert policy.lora_request is None


def test_lora_sync_serves_each_adapter_version_without_merging(engine, tokenizer, tmp_path):
    model = lora_model(tokenizer)
    policy = VLLMPolicy("/models/doctor", adapter_dir=tmp_path, adapter_name="doctor")
    llm = engine.instances[-1]

    assert policy.sync_weights(model)
    first = policy.lora_request
    assert (first.lora_name, first.lora_int_id, first.lora_path) == ("doctor-v1", 1, str(tmp_path / "v1"))
    saved = load_file(os.path.join(first.lora_path, "adapter_model.safetensors"))
    expected = get_peft_model_state_dict(model)
    assert saved.keys() == expected.keys() and all(torch.equal(saved[k], expected[k]) for k in saved)
    assert llm.runner.loaded == [] and llm.prefix_resets == 0  # base weights untouched
    policy.generate([Prompt(MESSAGES, 4, token_ids=(1, 2))])
    assert llm.calls[-1].lora_request is first

    assert not policy.sync_weights(model)
    train_step(model)
    assert policy.sync_weights(model)
    second = policy.lora_request
    assert (second.lora_name, second.lora_int_id) == ("doctor-v2", 2)
    assert llm.removed_loras == [1] and not os.path.exists(first.lora_path) and os.path.isdir(second.lora_path)
    saved = load_file(os.path.join(second.lora_path, "adapter_model.safetensors"))
    assert all(torch.equal(saved[k], v) for k, v in get_peft_model_state_dict(model).items())
    policy.generate([Prompt(MESSAGES, 4, token_ids=(1, 2))])
    assert llm.calls[-1].lora_request is second


def test_lora_sync_without_an_adapter_folder_is_refused(engine, tokenizer):
    with pytest.raises(ValueError, match="adapter_dir"):
        VLLMPolicy("/models/doctor").sync_weights(lora_model(tokenizer))
    with pytest.raises(ValueError, match="lora_sync"):
        VLLMPolicy("/models/doctor", lora_sync="fused")


def test_sync_every_defers_pushes_and_generations_record_their_staleness(engine, tokenizer):
    model = tiny_llama(tokenizer, hidden_size=32)
    policy = VLLMPolicy("/models/doctor", sync_every=2)
    prompt = [Prompt(MESSAGES, 4, token_ids=(1, 2))]
    assert policy.sync_weights(model, force=True)
    policy.generate(prompt)
    train_step(model)
    assert not policy.sync_weights(model)  # one change behind: deferred
    policy.generate(prompt)
    assert (policy.versions.last.version, policy.versions.last.staleness) == (1, 1)
    metrics = policy.metrics()
    assert metrics["engine/staleness_max"] == 1 and metrics["engine/staleness_mean"] == 0.5
    assert metrics["engine/deferred_syncs"] == 1 and metrics["engine/syncs"] == 1
    assert metrics["engine/weight_version"] == 1 and metrics["engine/model_version"] == 2
    train_step(model)
    assert policy.sync_weights(model)
    policy.generate(prompt)
    metrics = engine_metrics(policy)
    assert metrics["engine/staleness_max"] == 0 and metrics["engine/weight_version"] == 3
    assert metrics["engine/syncs"] == 2 and metrics["engine/sync_s"] > 0


def test_generation_policy_builds_a_colocated_engine_with_lora_slots(engine, tokenizer, tmp_path, monkeypatch):
    monkeypatch.setattr(selection, "cuda_available", lambda: True)
    cfg = TrainerConfig(model="/models/doctor", generation_engine="vllm", lora_r=4, output_dir=str(tmp_path),
                        vllm_gpu_memory_utilization=0.25, vllm_max_model_len=1024, dtype="bfloat16", seed=3)
    model = lora_model(tokenizer)
    policy = generation_policy(cfg, model, tokenizer)
    llm = engine.instances[-1]
    assert isinstance(policy, VLLMPolicy) and llm.model == "/models/doctor"
    assert {k: llm.kwargs[k] for k in ("gpu_memory_utilization", "max_model_len", "dtype", "seed", "enable_lora",
                                       "max_lora_rank", "max_loras")} == {
        "gpu_memory_utilization": 0.25, "max_model_len": 1024, "dtype": "bfloat16", "seed": 3, "enable_lora": True,
        "max_lora_rank": 8, "max_loras": 1}
    assert policy.lora_request.lora_path == str(tmp_path / "vllm_adapters" / "rank0" / "v1")  # synced at once
    assert not sync_generation_policy(policy, model)
    train_step(model)
    assert sync_generation_policy(policy, model) and policy.lora_request.lora_name == "policy-v2"


def test_generation_policy_with_full_weights_and_a_gguf_file(engine, tokenizer, tmp_path, monkeypatch):
    monkeypatch.setattr(selection, "cuda_available", lambda: True)
    cfg = TrainerConfig(model="/models/smol", gguf_file="m.gguf", generation_engine="auto", lora_r=4,
                        vllm_lora_sync="merged", output_dir=str(tmp_path))
    policy = generation_policy(cfg, lora_model(tokenizer), tokenizer)
    llm = engine.instances[-1]
    assert llm.model == os.path.join("/models/smol", "m.gguf") and "enable_lora" not in llm.kwargs
    assert llm.runner.loaded and policy.lora_request is None and llm.prefix_resets == 1
