"""``VLLMPolicy``: generation with an in-process vLLM engine (``vllm.LLM``, colocated with the trainer on its GPU),
kept in step with the training model. CUDA only; ``vllm`` is imported on construction.

The CPU test suite drives it with a fake ``vllm`` module (``tests/fake_vllm.py``); the real path is described, with
what was verified, in ``docs/gpu.md``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from clinical_gym.rollout.policy import Generation, Prompt
from clinical_gym.rollout.selection import require_vllm
from clinical_gym.rollout.vllm_sync import (
    LORA_SYNC_MODES,
    SyncedEngine,
    WeightVersions,
    remove_folder,
    save_adapter,
    vllm_weights,
)


class VLLMPolicy(SyncedEngine):
    """A ``Policy`` over ``vllm.LLM``: prompts go in as token ids (``TokensPrompt``), so nothing is re-tokenized.

    ``model`` is a model folder or hub id (``engine_kwargs`` go to ``vllm.LLM``, e.g. ``gpu_memory_utilization=0.3``
    to share the GPU with a trainer, ``enable_lora=True, max_lora_rank=16`` for adapter syncs) or an existing
    ``vllm.LLM``. A new engine runs inside this process (``distributed_executor_backend="external_launcher"``, one
    engine per training process) and reports the logprobs of the sampling distribution after temperature
    (``logprobs_mode="processed_logprobs"``). Prompt ``i`` of a seeded batch samples with ``seed + i``.

    Weight sync (``sync_weights``, see ``SyncedEngine``): full weights are loaded into the engine's model in place
    (single process, unsharded models), then the prefix cache is cleared. A peft model with ``lora_sync="adapter"``
    is saved to ``adapter_dir/v{n}`` and served as ``LoRARequest(f"{adapter_name}-v{n}", n, path)`` from then on;
    the base weights are never merged, and the previous version is dropped from the engine and disk. ``versions``
    records which version generated each batch (``versions.last``) and ``metrics()`` the ``engine/*`` figures.
    """

    def __init__(self, model: str | Any, *, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0,
                 stop_token_ids: Iterable[int] | None = None, adapter_dir: str | os.PathLike[str] | None = None,
                 adapter_name: str = "policy", lora_sync: str = "adapter", sync_every: int = 1,
                 **engine_kwargs: Any) -> None:
        if lora_sync not in LORA_SYNC_MODES:
            raise ValueError(f"lora_sync must be one of {', '.join(LORA_SYNC_MODES)}; got {lora_sync!r}")
        vllm = require_vllm()
        if isinstance(model, str):
            engine_kwargs.setdefault("distributed_executor_backend", "external_launcher")
            engine_kwargs.setdefault("logprobs_mode", "processed_logprobs")
            if engine_kwargs["distributed_executor_backend"] == "external_launcher":
                _single_process_rendezvous()
            self.llm = vllm.LLM(model=model, **engine_kwargs)
        else:
            self.llm = model
        self.tokenizer = self.llm.get_tokenizer()
        self.temperature, self.top_p, self.top_k = temperature, top_p, top_k
        self.stop_token_ids = list(stop_token_ids) if stop_token_ids is not None else None
        self.adapter_dir = Path(adapter_dir) if adapter_dir is not None else None
        self.adapter_name = adapter_name
        self.lora_sync = lora_sync
        self.versions = WeightVersions(sync_every)
        self.lora_request: Any | None = None

    def generate(self, prompts: Sequence[Prompt], *, seed: int | None = None) -> list[Generation]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        inputs, params = [], []
        for i, prompt in enumerate(prompts):
            ids = prompt.token_ids if prompt.token_ids is not None else self._template(prompt)
            inputs.append(TokensPrompt(prompt_token_ids=list(ids)))
            params.append(SamplingParams(n=1, temperature=self.temperature, top_p=self.top_p, top_k=self.top_k,
                                         max_tokens=prompt.max_new_tokens, logprobs=0,
                                         seed=None if seed is None else seed + i, stop_token_ids=self.stop_token_ids))
        self.versions.record(len(prompts))
        kwargs = {"lora_request": self.lora_request} if self.lora_request is not None else {}
        outputs = self.llm.generate(inputs, params, use_tqdm=False, **kwargs)
        return [_generation(out.outputs[0]) for out in outputs]

    def _template(self, prompt: Prompt) -> list[int]:
        encoded = self.tokenizer.apply_chat_template(list(prompt.messages), add_generation_prompt=True, tokenize=True,
                                                     return_dict=True)
        return list(encoded["input_ids"])

    def _push_full(self, model: Any) -> None:
        runner_model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
        for name, tensor in vllm_weights(model):
            runner_model.load_weights([(name, tensor)])
        self.llm.reset_prefix_cache()

    def _push_adapter(self, model: Any, number: int) -> None:
        from vllm.lora.request import LoRARequest

        if self.adapter_dir is None:
            raise ValueError("syncing a LoRA adapter needs adapter_dir (a folder for the adapter versions)")
        path = save_adapter(model, self.adapter_dir / f"v{number}")
        previous = self.lora_request
        self.lora_request = LoRARequest(f"{self.adapter_name}-v{number}", number, str(path))
        if previous is not None:
            remove_lora = getattr(self.llm.llm_engine, "remove_lora", None)
            if remove_lora is not None:
                remove_lora(previous.lora_int_id)
            remove_folder(previous.lora_path)


def _generation(output: Any) -> Generation:
    ids = tuple(output.token_ids)
    steps = output.logprobs or []
    logprobs = tuple(step[token].logprob for step, token in zip(steps, ids, strict=True)) if steps else ()
    return Generation(output.text, ids, logprobs, "length" if output.finish_reason == "length" else "stop")


def _single_process_rendezvous() -> None:
    """The torch.distributed variables vLLM's in-process launcher reads, for a run not started by a launcher
    (``accelerate launch`` and ``torchrun`` set them already)."""
    for name, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1")):
        os.environ.setdefault(name, value)
    if "MASTER_PORT" not in os.environ:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            os.environ["MASTER_PORT"] = str(probe.getsockname()[1])
