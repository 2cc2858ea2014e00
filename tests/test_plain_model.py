"""``examples/trl_grpo.py`` without ``--tiny`` (issue 17): SmolLM2 loaded from its GGUF file keeps quantization
markers that transformers' Trainer (TRL's GRPOTrainer) refuses; ``plain_model`` gives the same weights as a plain,
trainable checkpoint."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="needs the [train] extra")

from transformers.trainer_utils import validate_quantization_for_training  # noqa: E402

from clinical_gym.trainers.common.tiny_models import load_smollm2, plain_model, tiny_llama, tiny_tokenizer  # noqa: E402


def test_a_gguf_model_becomes_a_plain_trainable_checkpoint_with_the_same_outputs():
    tokenizer, gguf = load_smollm2()
    with pytest.raises(ValueError, match="quantized"):
        validate_quantization_for_training(gguf)
    plain = plain_model(gguf)
    validate_quantization_for_training(plain)  # what GRPOTrainer checks first: no error now
    assert getattr(plain, "hf_quantizer", None) is None and getattr(plain.config, "quantization_config", None) is None
    assert plain.get_output_embeddings().weight.data_ptr() == plain.get_input_embeddings().weight.data_ptr()
    ids = tokenizer("The patient has a fever and a cough.", return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.equal(gguf(ids).logits, plain(ids).logits)
    tiny = tiny_llama(tiny_tokenizer())
    assert plain_model(tiny) is tiny  # nothing to do for a model without markers
