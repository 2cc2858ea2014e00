"""``VLLMServerPolicy``: generation against a vLLM server over HTTP (token ids in, token ids and logprobs out),
kept in step with the training model.

Endpoints used (vLLM's OpenAI-compatible server): ``GET /v1/models``, ``POST /v1/completions`` (prompt token ids,
``logprobs``, ``return_tokens_as_token_ids``), and for LoRA syncs ``POST /v1/load_lora_adapter`` and
``/v1/unload_lora_adapter`` (the server runs with ``--enable-lora`` and ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``).
Full-weight syncs go through a ``WeightTransport``; the default one is TRL's NCCL weight-transfer client (server
started with ``trl vllm-serve``), which needs CUDA. Commands: ``docs/gpu.md``.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from clinical_gym.llm.openai_compat import OpenAICompatClient
from clinical_gym.rollout.openai_policy import OpenAICompatPolicy
from clinical_gym.rollout.policy import Generation, Prompt
from clinical_gym.rollout.vllm_sync import (
    LORA_SYNC_MODES,
    SyncedEngine,
    WeightVersions,
    remove_folder,
    save_adapter,
    vllm_weights,
)

DEFAULT_SERVER_URL = "http://127.0.0.1:8000"


class VLLMServerError(RuntimeError):
    """The vLLM server refused or failed a management request (model list, adapter load or unload)."""


class WeightTransport(Protocol):
    """Sends full weights to a vLLM server. ``push`` gets a function that streams ``(name, tensor)`` pairs under
    vLLM's names (each call a fresh pass; a peft model stays merged only while one is being read)."""

    def push(self, weights: Callable[[], Iterator[tuple[str, Any]]]) -> None: ...


class VLLMServerPolicy(SyncedEngine):
    """A ``Policy`` served by a vLLM server at ``base_url`` (``http://host:port``; a trailing ``/v1`` is accepted).

    Generation goes through ``OpenAICompatPolicy`` in token mode: each prompt is one ``/v1/completions`` request
    with its token ids (requests of a batch run concurrently on ``max_workers`` threads; the server batches them),
    prompt ``i`` of a seeded batch with ``seed + i``. Every request pins the whole sampling distribution
    (``pinned_sampling``): the tempered softmax, cut only by ``top_p`` / ``top_k`` (0: no cut), which is what
    ``TransformersPolicy`` samples from and what the trainers score. ``model`` is the served model name (default:
    the first one ``/v1/models`` lists).

    Weight sync (``sync_weights``, see ``SyncedEngine``):

    * a peft model with ``lora_sync="adapter"``: its adapter is saved to ``adapter_dir/v{n}`` (a folder the server
      can read: same machine or shared disk), loaded with ``/v1/load_lora_adapter`` as ``{adapter_name}-v{n}``, and
      requests name that adapter from then on; the previous version is unloaded and its folder deleted. The base
      weights are never merged.
    * otherwise every weight (a peft model's adapters merged in) is handed to ``weight_transport`` (default:
      ``TRLWeightTransport(base_url)``).

    In a multi-process run only the main process (``is_main_process``) saves, loads and pushes; every process calls
    ``sync_weights`` at the same point, and ``barrier`` (e.g. ``accelerate.PartialState().wait_for_everyone``) makes
    the others wait until the new weights are served.
    """

    def __init__(self, base_url: str = DEFAULT_SERVER_URL, *, model: str | None = None, temperature: float = 1.0,
                 top_p: float = 1.0, top_k: int = 0, max_workers: int = 64, timeout: float = 600.0, max_retries: int = 2,
                 api_key: str | None = None, adapter_dir: str | os.PathLike[str] | None = None,
                 adapter_name: str = "policy", lora_sync: str = "adapter", sync_every: int = 1,
                 weight_transport: WeightTransport | None = None, is_main_process: bool = True,
                 barrier: Callable[[], None] | None = None) -> None:
        if lora_sync not in LORA_SYNC_MODES:
            raise ValueError(f"lora_sync must be one of {', '.join(LORA_SYNC_MODES)}; got {lora_sync!r}")
        self.base_url = server_root(base_url)
        self.timeout = timeout
        self.api_key = api_key
        self.base_model = model or self.served_models()[0]
        client = OpenAICompatClient(base_url=f"{self.base_url}/v1", api_key=api_key or "", model=self.base_model,
                                    timeout=timeout, max_retries=max_retries)
        self.http = OpenAICompatPolicy(client, temperature=temperature, top_p=top_p, max_workers=max_workers,
                                       sampling=pinned_sampling(temperature, top_p, top_k))
        self.adapter_dir = Path(adapter_dir) if adapter_dir is not None else None
        self.adapter_name = adapter_name
        self.lora_sync = lora_sync
        self.versions = WeightVersions(sync_every)
        self.weight_transport = weight_transport
        self.is_main_process = is_main_process
        self.barrier = barrier
        self.adapter: str | None = None
        self._adapter_path: Path | None = None

    @property
    def model(self) -> str:
        """The model name requests are sent with: the current adapter version, else the base model."""
        return self.http.client.model or self.base_model

    def generate(self, prompts: Sequence[Prompt], *, seed: int | None = None) -> list[Generation]:
        self.versions.record(len(prompts))
        return self.http.generate(prompts, seed=seed)

    def served_models(self) -> list[str]:
        """The model names the server serves (base model and loaded adapters)."""
        data = json.loads(self._request("GET", "/v1/models"))
        names = [entry["id"] for entry in data.get("data", [])]
        if not names:
            raise VLLMServerError(f"{self.base_url}/v1/models lists no model")
        return names

    # -- weight sync ----------------------------------------------------------------------------------------------
    def _push_adapter(self, model: Any, number: int) -> None:
        name = f"{self.adapter_name}-v{number}"
        path = None
        if self.is_main_process:
            if self.adapter_dir is None:
                raise ValueError("syncing a LoRA adapter needs adapter_dir (a folder the server can read)")
            path = save_adapter(model, self.adapter_dir / f"v{number}")
            self._request("POST", "/v1/load_lora_adapter", {"lora_name": name, "lora_path": str(path)})
        self._wait()
        previous, previous_path = self.adapter, self._adapter_path
        self.adapter, self._adapter_path = name, path
        self.http.client.model = name
        if self.is_main_process and previous is not None:
            self._request("POST", "/v1/unload_lora_adapter", {"lora_name": previous})
            remove_folder(previous_path)

    def _push_full(self, model: Any) -> None:
        if self.is_main_process:
            if self.weight_transport is None:
                self.weight_transport = TRLWeightTransport(self.base_url)
            self.weight_transport.push(lambda: vllm_weights(model))
        self._wait()
        self.adapter = None
        self.http.client.model = self.base_model

    def _wait(self) -> None:
        if self.barrier is not None:
            self.barrier()

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> str:
        """One management request; the response text, or ``VLLMServerError``."""
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.base_url}{path}", data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as err:
            detail = err.read(400).decode("utf-8", "replace")
            raise VLLMServerError(f"{method} {self.base_url}{path}: HTTP {err.code} {detail!r}") from None
        except (urllib.error.URLError, OSError) as err:
            raise VLLMServerError(f"{method} {self.base_url}{path}: {err}") from None


class TRLWeightTransport:
    """Full weights to a vLLM server over NCCL with TRL's ``VLLMClient`` (the protocol of ``trl vllm-serve``:
    vLLM's weight-transfer engine). The trainer process joins the server's NCCL group on its first push (on
    ``device``, default the current CUDA device; ``group_port`` is the rendezvous port). Needs CUDA, trl and vllm."""

    def __init__(self, base_url: str, *, group_port: int = 51216, device: Any | None = None) -> None:
        self.base_url = server_root(base_url)
        self.group_port = group_port
        self.device = device
        self.client: Any | None = None
        self._metadata: list[tuple[str, str, list[int]]] | None = None

    def push(self, weights: Callable[[], Iterator[tuple[str, Any]]]) -> None:
        import torch

        if self.client is None:
            from trl.generation.vllm_client import VLLMClient

            self.client = VLLMClient(base_url=self.base_url, group_port=self.group_port)
            device = self.device if self.device is not None else torch.cuda.current_device()
            self.client.init_communicator(device=device)
        if self._metadata is None:  # the server must know every tensor before the first is broadcast
            self._metadata = [(name, str(t.dtype).removeprefix("torch."), list(t.shape)) for name, t in weights()]
        self.client.update_named_params(self._metadata, weights())
        self.client.reset_prefix_cache()


def pinned_sampling(temperature: float, top_p: float = 1.0, top_k: int = 0) -> dict[str, Any]:
    """Every field of a vLLM ``/v1/completions`` request that shapes the sampling distribution, set: a vLLM server
    fills the fields a request leaves out from the model's ``generation_config.json`` (``--generation-config auto``,
    its default: often ``top_k``, ``top_p`` and ``repetition_penalty``), and then the rollouts would not come from
    the policy the trainer scores. ``top_k`` 0 (no cut) is sent as -1, which every vLLM version reads as "off";
    ``min_p``, the penalties and ``min_tokens`` (EOS blocked before it) are off; ``logprobs`` 1 returns the sampled
    token's logprob."""
    if temperature < 0 or not 0 < top_p <= 1 or top_k < 0:
        raise ValueError(f"need temperature >= 0, 0 < top_p <= 1 and top_k >= 0; got {temperature}, {top_p}, {top_k}")
    return {"temperature": temperature, "top_p": top_p, "top_k": top_k if top_k > 0 else -1, "min_p": 0.0,
            "repetition_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0, "min_tokens": 0,
            "logprobs": 1}


def server_root(url: str) -> str:
    """``http://host:port`` from a server URL given with or without a trailing ``/`` or ``/v1``."""
    root = url.rstrip("/")
    return root.removesuffix("/v1").rstrip("/")
