"""Fakes of the parts of vLLM that clinical-gym uses, for CPU tests.

* ``install_fake_vllm(monkeypatch)``: puts a fake ``vllm`` package in ``sys.modules`` (``LLM``, ``SamplingParams``,
  ``vllm.inputs.TokensPrompt``, ``vllm.lora.request.LoRARequest``) so ``VLLMPolicy`` runs unchanged. ``FakeLLM``
  records what it is given: engine arguments, generate calls (prompts, sampling parameters, LoRA request), weights
  loaded into its model, prefix-cache resets and removed adapters.
* ``serve_vllm(...)``: a real HTTP server on 127.0.0.1 speaking the subset of vLLM's OpenAI-compatible server that
  ``VLLMServerPolicy`` uses: ``GET /v1/models``, ``POST /v1/completions`` (token-id prompts, logprobs with
  ``token_id:N`` tokens), ``POST /v1/load_lora_adapter`` and ``/v1/unload_lora_adapter``. Like vLLM, it answers 404
  for a model it does not serve and 400 for an adapter folder without ``adapter_config.json``; adapter loads return
  plain text.

Replies in both fakes come from ``reply(prompt_ids, model_name) -> list[int]`` (default ``echo_reply``: the last two
prompt tokens), cut at ``max_tokens``; the sampled token ``j`` of a reply gets logprob ``-0.1 * (j + 1)``.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[list[int], str], list[int]]


def echo_reply(prompt_ids: list[int], model: str) -> list[int]:
    """The last two prompt tokens."""
    return list(prompt_ids[-2:])


def cut(reply: list[int], max_tokens: int, stop_ids: set[int]) -> tuple[list[int], str]:
    """``reply`` ended at its first stop token or cut at ``max_tokens``, with vLLM's finish reason."""
    for i, token in enumerate(reply[:max_tokens]):
        if token in stop_ids:
            return reply[:i + 1], "stop"
    return reply[:max_tokens], "length" if len(reply) >= max_tokens else "stop"


# -- in-process engine ------------------------------------------------------------------------------------------
@dataclass
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int = 16
    logprobs: int | None = None
    seed: int | None = None
    stop_token_ids: list[int] | None = None


def tokens_prompt(prompt_token_ids: list[int]) -> dict[str, Any]:
    return {"prompt_token_ids": prompt_token_ids}


@dataclass
class LoRARequest:
    lora_name: str
    lora_int_id: int
    lora_path: str


@dataclass
class GenerateCall:
    prompts: list[list[int]]
    params: list[SamplingParams]
    lora_request: LoRARequest | None


class RunnerModel:
    """The engine's model: ``load_weights`` records each (name, tensor copy)."""

    def __init__(self) -> None:
        self.loaded: list[tuple[str, Any]] = []

    def load_weights(self, weights: list[tuple[str, Any]]) -> None:
        self.loaded += [(name, tensor.clone()) for name, tensor in weights]


class FakeLLM:
    """Stands in for ``vllm.LLM``; ``FakeLLM.instances`` lists every engine built."""

    instances: list[FakeLLM] = []
    tokenizer: Any = None
    reply: Reply = staticmethod(echo_reply)

    def __init__(self, model: str, **kwargs: Any) -> None:
        self.model = model
        self.kwargs = kwargs
        self.calls: list[GenerateCall] = []
        self.prefix_resets = 0
        self.removed_loras: list[int] = []
        self.runner = RunnerModel()
        worker = types.SimpleNamespace(model_runner=types.SimpleNamespace(model=self.runner))
        self.llm_engine = types.SimpleNamespace(model_executor=types.SimpleNamespace(driver_worker=worker),
                                                remove_lora=self.removed_loras.append)
        type(self).instances.append(self)

    def get_tokenizer(self) -> Any:
        return self.tokenizer

    def reset_prefix_cache(self) -> bool:
        self.prefix_resets += 1
        return True

    def generate(self, prompts: list[dict[str, Any]], params: list[SamplingParams], use_tqdm: bool = True,
                 lora_request: LoRARequest | None = None) -> list[Any]:
        ids = [list(p["prompt_token_ids"]) for p in prompts]
        self.calls.append(GenerateCall(ids, list(params), lora_request))
        name = lora_request.lora_name if lora_request is not None else self.model
        outputs = []
        for prompt, param in zip(ids, params, strict=True):
            stops = set(param.stop_token_ids or []) | {self.tokenizer.eos_token_id}
            tokens, finish = cut(type(self).reply(prompt, name), param.max_tokens, stops)
            logprobs = [{t: types.SimpleNamespace(logprob=-0.1 * (j + 1))} for j, t in enumerate(tokens)]
            text = self.tokenizer.decode(tokens, skip_special_tokens=True)
            completion = types.SimpleNamespace(token_ids=tokens, logprobs=logprobs, text=text, finish_reason=finish)
            outputs.append(types.SimpleNamespace(prompt_token_ids=prompt, outputs=[completion]))
        return outputs


def _module(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, loader=None, is_package=True)
    module.__dict__.update(attributes)
    return module


def install_fake_vllm(monkeypatch: Any, tokenizer: Any) -> type[FakeLLM]:
    """Install the fake ``vllm`` package for one test (``monkeypatch`` undoes it); returns a fresh ``FakeLLM``
    class whose engines use ``tokenizer``."""
    engine = type("FakeLLM", (FakeLLM,), {"instances": [], "tokenizer": tokenizer})
    modules = {"vllm": _module("vllm", LLM=engine, SamplingParams=SamplingParams),
               "vllm.inputs": _module("vllm.inputs", TokensPrompt=tokens_prompt),
               "vllm.lora": _module("vllm.lora"),
               "vllm.lora.request": _module("vllm.lora.request", LoRARequest=LoRARequest)}
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    return engine


# -- HTTP server ---------------------------------------------------------------------------------------------------
@dataclass
class ServerState:
    """What the fake server serves and has been asked."""

    base_model: str
    eos_id: int
    reply: Reply
    adapters: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    adapter_events: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class FakeServerURL(str):
    """The server's root URL (``http://127.0.0.1:PORT``), carrying its ``state``."""

    state: ServerState


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server naming)
            self._record(None)
            if self.path != "/v1/models":
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            with state.lock:
                names = [state.base_model, *state.adapters]
            self._send(200, {"object": "list", "data": [{"id": n, "object": "model"} for n in names]})

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
            self._record(body)
            route = {"/v1/completions": self._complete, "/v1/load_lora_adapter": self._load,
                     "/v1/unload_lora_adapter": self._unload}.get(self.path)
            if route is None:
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            route(body)

        def _complete(self, body: dict[str, Any]) -> None:
            with state.lock:
                served = body.get("model") in (state.base_model, *state.adapters)
            if not served:
                return self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}})
            prompt = body["prompt"]
            tokens, finish = cut(state.reply(list(prompt), body["model"]), body["max_tokens"], {state.eos_id})
            logprobs = {"tokens": [f"token_id:{t}" for t in tokens],
                        "token_logprobs": [-0.1 * (j + 1) for j in range(len(tokens))],
                        "top_logprobs": [{f"token_id:{t}": -0.1 * (j + 1)} for j, t in enumerate(tokens)]}
            choice = {"index": 0, "text": " ".join(map(str, tokens)), "logprobs": logprobs, "finish_reason": finish}
            self._send(200, {"id": "cmpl-fake", "object": "text_completion", "model": body["model"],
                             "choices": [choice]})

        def _load(self, body: dict[str, Any]) -> None:
            name, path = body.get("lora_name"), body.get("lora_path", "")
            with state.lock:
                if name in state.adapters:
                    return self._send(400, {"error": {"message": f"The lora adapter '{name}' has already been "
                                                                 "loaded."}})
                if not os.path.isfile(os.path.join(path, "adapter_config.json")):
                    return self._send(400, {"error": {"message": f"No adapter found for {path}"}})
                state.adapters[name] = path
                state.adapter_events.append(("load", name))
            self._send_text(200, f"Success: LoRA adapter '{name}' added successfully.")

        def _unload(self, body: dict[str, Any]) -> None:
            name = body.get("lora_name")
            with state.lock:
                if name not in state.adapters:
                    return self._send(404, {"error": {"message": f"The lora adapter '{name}' cannot be found."}})
                del state.adapters[name]
                state.adapter_events.append(("unload", name))
            self._send_text(200, f"Success: LoRA adapter '{name}' removed successfully.")

        def _record(self, body: Any) -> None:
            with state.lock:
                state.requests.append((self.command, self.path, body))

        def _send(self, status: int, payload: Any) -> None:
            self._send_bytes(status, json.dumps(payload).encode(), "application/json")

        def _send_text(self, status: int, text: str) -> None:
            self._send_bytes(status, text.encode(), "text/plain")

        def _send_bytes(self, status: int, data: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Silence per-request logging."""

    return Handler


@contextmanager
def serve_vllm(base_model: str = "base-model", eos_id: int = 0, reply: Reply = echo_reply) -> Iterator[FakeServerURL]:
    """Run the fake vLLM server on a free local port; yields its root URL (no ``/v1``)."""
    state = ServerState(base_model, eos_id, reply)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    url = FakeServerURL(f"http://127.0.0.1:{server.server_address[1]}")
    url.state = state
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
