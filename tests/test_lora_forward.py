"""The trainers' LoRA forward (trainers/common/lora_forward.py) gives peft's values and gradients, and hands every
case it does not cover back to peft."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
peft = pytest.importorskip("peft")

from clinical_gym.trainers.common.lora_forward import fast_lora_forward, install_fast_lora  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402


def lora_model(dropout: float = 0.0):
    model = tiny_llama(tiny_tokenizer(), hidden_size=32, num_layers=2)
    model = peft.get_peft_model(model, peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=dropout,
                                                       target_modules="all-linear", task_type="CAUSAL_LM"))
    with torch.no_grad():  # lora_B starts at zero; give the adapter a value so it shows in the output
        generator = torch.Generator().manual_seed(1)
        for name, param in model.named_parameters():
            if "lora_B" in name:
                param.copy_(torch.randn(param.shape, generator=generator) * 0.1)
    return model


def lora_layers(model):
    return [m for m in model.modules() if isinstance(m, peft.tuners.lora.layer.Linear)]


def test_install_routes_every_lora_layer_once():
    model = lora_model()
    layers = lora_layers(model)
    assert install_fast_lora(model) == len(layers) == 14  # 7 linears a layer, 2 layers
    assert install_fast_lora(model) == 14
    assert all(layer.forward.__func__ is fast_lora_forward for layer in layers)
    assert install_fast_lora(tiny_llama(tiny_tokenizer(), hidden_size=32, num_layers=1)) == 0


def test_values_and_gradients_match_peft():
    reference = lora_model()
    fast = copy.deepcopy(reference)
    install_fast_lora(fast)
    ids = torch.randint(0, 100, (3, 7))
    with torch.no_grad():
        assert torch.allclose(fast(input_ids=ids).logits, reference(input_ids=ids).logits, atol=1e-5, rtol=1e-5)
        with_adapter = reference(input_ids=ids).logits
        with reference.disable_adapter():
            assert not torch.allclose(with_adapter, reference(input_ids=ids).logits, atol=1e-3)  # the adapter counts
    fast(input_ids=ids).logits.square().mean().backward()
    reference(input_ids=ids).logits.square().mean().backward()
    grads = {n: p.grad for n, p in reference.named_parameters() if p.requires_grad}
    assert grads and all("lora_" in n for n in grads)
    for name, param in fast.named_parameters():
        if param.requires_grad:
            assert torch.allclose(param.grad, grads[name], atol=1e-6, rtol=1e-4), name


def test_other_cases_go_to_peft():
    model = lora_model(dropout=0.5)
    install_fast_lora(model)
    layer = lora_layers(model)[0]
    peft_forward = type(layer).forward
    x = torch.randn(2, 5, layer.in_features)
    # dropout active in training: peft's own forward, same random draws
    layer.train()
    torch.manual_seed(3)
    ours = layer(x)
    torch.manual_seed(3)
    assert torch.equal(ours, peft_forward(layer, x))
    layer.eval()  # dropout off: the fast path, same value
    assert torch.allclose(layer(x), peft_forward(layer, x), atol=1e-6)
    # adapters disabled: the base layer alone
    with model.disable_adapter():
        assert torch.equal(layer(x), layer.base_layer(x))
    # a second adapter, both active: their sum, as peft computes it
    model.add_adapter("second", peft.LoraConfig(r=2, lora_alpha=2, target_modules="all-linear"))
    with torch.no_grad():
        layer.lora_B["second"].weight.fill_(0.05)
    layer.set_adapter(["default", "second"])
    both = layer(x)
    assert torch.equal(both, peft_forward(layer, x))
    layer.set_adapter("default")
    assert not torch.allclose(both, layer(x))


def test_prepare_model_installs_it():
    from clinical_gym.trainers.common.config import TrainerConfig
    from clinical_gym.trainers.common.model import prepare_model

    cfg = TrainerConfig(model="unused", lora_r=4, lora_target_modules="all-linear")
    model = prepare_model(tiny_llama(tiny_tokenizer(), hidden_size=32, num_layers=1), cfg)
    assert lora_layers(model) and all(m.forward.__func__ is fast_lora_forward for m in lora_layers(model))
