"""``VLLMServerPolicy`` against a fake vLLM server (real HTTP on 127.0.0.1): token-exact generation, LoRA adapter
versions loaded and unloaded through the dynamic LoRA endpoints, full-weight pushes through a transport, several
processes sharing one server, and the server policy ``generation_policy`` builds."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from fake_vllm import serve_vllm  # noqa: E402
from peft import LoraConfig, get_peft_model, get_peft_model_state_dict  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from clinical_gym.rollout import Prompt, make_policy  # noqa: E402
from clinical_gym.rollout.vllm_server import VLLMServerError, VLLMServerPolicy, server_root  # noqa: E402
from clinical_gym.trainers.common.config import TrainerConfig  # noqa: E402
from clinical_gym.trainers.common.generation import engine_metrics, generation_policy  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402

MESSAGES = [{"role": "user", "content": "the patient has a fever"}]
EOS = 2
# What a vLLM /v1/completions request must set so that the server samples from the tempered softmax the trainer
# scores, whatever the model's generation_config.json says (vLLM fills a field left out from it): written out here,
# not imported, so that dropping a field from the request fails the tests.
NEUTRAL = {"min_p": 0.0, "repetition_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0,
           "min_tokens": 0, "logprobs": 1}


def pinned(body, temperature, top_p, top_k=-1):
    """The request's sampling fields equal the given ones and the neutral rest."""
    expected = {"temperature": temperature, "top_p": top_p, "top_k": top_k, **NEUTRAL}
    return {k: body.get(k, "missing") for k in expected} == expected


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


def lora_model(tokenizer):
    return get_peft_model(tiny_llama(tokenizer, hidden_size=32),
                          LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))


def train_step(model):
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    ids = torch.tensor([[3, 4, 5, 6, 7, 8]])
    model(input_ids=ids, labels=ids).loss.backward()
    optimizer.step()


def completions(url):
    return [(body["model"], body) for method, path, body in url.state.requests if path == "/v1/completions"]


def adapter_matches(folder, model):
    saved = load_file(os.path.join(folder, "adapter_model.safetensors"))
    expected = get_peft_model_state_dict(model)
    return saved.keys() == expected.keys() and all(torch.equal(saved[k], expected[k]) for k in saved)


class RecordingTransport:
    """A ``WeightTransport`` that keeps copies of what it is sent."""

    def __init__(self):
        self.pushes = []

    def push(self, weights):
        self.pushes.append([(name, tensor.clone()) for name, tensor in weights()])


def test_generation_sends_token_ids_and_reads_token_ids_back():
    with serve_vllm(eos_id=EOS, reply=lambda ids, model: [ids[-1], 5, EOS]) as url:
        policy = VLLMServerPolicy(url + "/v1/", temperature=0.5, top_p=0.9)
        out = policy.generate([Prompt(MESSAGES, 8, token_ids=(11, 12, 13)), Prompt(MESSAGES, 2, token_ids=(4, 6))],
                              seed=7)
        bodies = {tuple(body["prompt"]): body for _, body in completions(url)}
    assert policy.base_model == "base-model" and policy.model == "base-model"
    assert out[0].token_ids == (13, 5, EOS) and out[0].finish_reason == "stop"
    assert out[0].logprobs == pytest.approx((-0.1, -0.2, -0.3))
    assert out[1].token_ids == (6, 5) and out[1].finish_reason == "length"
    first, second = bodies[(11, 12, 13)], bodies[(4, 6)]
    assert (first["seed"], second["seed"]) == (7, 8) and (first["max_tokens"], second["max_tokens"]) == (8, 2)
    assert all(b["model"] == "base-model" and b["return_tokens_as_token_ids"] is True and pinned(b, 0.5, 0.9)
               for b in (first, second))
    assert policy.versions.last.version == 0  # no sync yet: the weights the server started with


def test_lora_sync_loads_each_adapter_version_and_unloads_the_previous_one(tokenizer, tmp_path):
    model = lora_model(tokenizer)
    with serve_vllm(eos_id=EOS, reply=lambda ids, name: [9, EOS]) as url:
        policy = VLLMServerPolicy(url, adapter_dir=tmp_path / "adapters", adapter_name="doctor")
        assert policy.sync_weights(model)
        assert url.state.adapters == {"doctor-v1": str(tmp_path / "adapters" / "v1")}
        assert adapter_matches(url.state.adapters["doctor-v1"], model)
        policy.generate([Prompt(MESSAGES, 4, token_ids=(1, 2))])
        assert completions(url)[-1][0] == "doctor-v1"

        requests = len(url.state.requests)
        assert not policy.sync_weights(model)  # unchanged: no request at all
        assert len(url.state.requests) == requests

        train_step(model)
        assert policy.sync_weights(model)
        assert url.state.adapter_events == [("load", "doctor-v1"), ("load", "doctor-v2"), ("unload", "doctor-v1")]
        assert not (tmp_path / "adapters" / "v1").exists() and adapter_matches(url.state.adapters["doctor-v2"], model)
        policy.generate([Prompt(MESSAGES, 4, token_ids=(1, 2))])
        assert completions(url)[-1][0] == "doctor-v2" and policy.model == "doctor-v2"
    assert (policy.versions.last.version, policy.versions.pushes, policy.versions.skipped) == (2, 2, 1)


def test_processes_sharing_a_server_wait_for_the_main_process_to_load_the_adapter(tokenizer, tmp_path):
    model = lora_model(tokenizer)
    waits = []
    with serve_vllm(eos_id=EOS, reply=lambda ids, name: [9, EOS]) as url:
        main = VLLMServerPolicy(url, adapter_dir=tmp_path, barrier=lambda: waits.append("main"))
        worker = VLLMServerPolicy(url, adapter_dir=tmp_path, is_main_process=False,
                                  barrier=lambda: waits.append("worker"))
        assert main.sync_weights(model) and worker.sync_weights(model)
        assert [e for e in url.state.adapter_events] == [("load", "policy-v1")]  # loaded once, by the main process
        worker.generate([Prompt(MESSAGES, 4, token_ids=(1, 2))])
        assert completions(url)[-1][0] == "policy-v1"
    assert waits == ["main", "worker"]


def test_full_weights_go_through_the_transport_and_requests_name_the_base_model(tokenizer):
    model = tiny_llama(tokenizer, hidden_size=32)
    transport = RecordingTransport()
    with serve_vllm(eos_id=EOS) as url:
        policy = VLLMServerPolicy(url, weight_transport=transport)
        assert policy.sync_weights(model) and not policy.sync_weights(model)
        train_step(model)
        assert policy.sync_weights(model)
        policy.generate([Prompt(MESSAGES, 4, token_ids=(1, 2))])
        assert completions(url)[-1][0] == "base-model" and url.state.adapter_events == []
    assert len(transport.pushes) == 2
    assert [n for n, _ in transport.pushes[-1]] == [n for n, _ in model.named_parameters()]
    assert all(torch.equal(t, p) for (_, t), p in zip(transport.pushes[-1], model.parameters(), strict=True))
    assert not all(torch.equal(a, b) for (_, a), (_, b) in zip(*transport.pushes, strict=True))


def test_merged_lora_weights_go_through_the_transport(tokenizer):
    model = lora_model(tokenizer)
    transport = RecordingTransport()
    with serve_vllm() as url:
        VLLMServerPolicy(url, weight_transport=transport, lora_sync="merged").sync_weights(model)
    names = [n for n, _ in transport.pushes[0]]
    assert "model.layers.0.self_attn.q_proj.weight" in names and not any("lora" in n for n in names)


def test_server_errors_name_the_request(tokenizer, tmp_path):
    with serve_vllm() as url:
        url.state.adapters["policy-v1"] = "/elsewhere"
        policy = VLLMServerPolicy(url, adapter_dir=tmp_path)
        with pytest.raises(VLLMServerError, match="load_lora_adapter: HTTP 400 .*already been loaded"):
            policy.sync_weights(lora_model(tokenizer))
        gone = str(url)
    with pytest.raises(VLLMServerError, match="GET .*/v1/models"):
        VLLMServerPolicy(gone)
    assert server_root("http://h:8000/v1/") == "http://h:8000" and server_root("http://h:8000") == "http://h:8000"


def test_generation_policy_and_make_policy_build_a_server_policy(tokenizer, tmp_path):
    model = lora_model(tokenizer)
    with serve_vllm(eos_id=EOS, reply=lambda ids, name: [9, EOS]) as url:
        cfg = TrainerConfig(model="/models/doctor", vllm_mode="server", vllm_server_url=url, lora_r=4,
                            output_dir=str(tmp_path), temperature=0.8, vllm_server_timeout=30)
        policy = generation_policy(cfg, model, tokenizer)
        assert isinstance(policy, VLLMServerPolicy) and policy.timeout == 30
        assert url.state.adapters == {"policy-v1": str(tmp_path / "vllm_adapters" / "v1")}
        policy.generate([Prompt(MESSAGES, 4, token_ids=(1, 2))])
        assert pinned(completions(url)[-1][1], 0.8, 1.0)   # top_p 1 is sent too: the server's default may differ
        metrics = engine_metrics(policy)
        assert metrics["engine/weight_version"] == 1 and metrics["engine/syncs"] == 1
        assert isinstance(make_policy(f"vllm:{url}", temperature=0.3), VLLMServerPolicy)


def test_every_request_pins_the_sampling_distribution_after_syncs(tokenizer, tmp_path):
    model = lora_model(tokenizer)
    with serve_vllm(eos_id=EOS, reply=lambda ids, name: [9, EOS]) as url:
        policy = VLLMServerPolicy(url, temperature=0.7, top_p=1.0, top_k=20, adapter_dir=tmp_path)
        policy.generate([Prompt(MESSAGES, 4, token_ids=(1, 2)), Prompt(MESSAGES, 4, token_ids=(3,))], seed=1)
        policy.sync_weights(model)
        policy.generate([Prompt(MESSAGES, 4, token_ids=(1, 2))])
        bodies = [body for _, body in completions(url)]
    assert len(bodies) == 3 and all(pinned(b, 0.7, 1.0, top_k=20) for b in bodies)
    assert bodies[-1]["model"] == "policy-v1"
    with pytest.raises(ValueError, match="top_k >= 0"):
        VLLMServerPolicy("http://127.0.0.1:1", model="m", top_k=-5)
