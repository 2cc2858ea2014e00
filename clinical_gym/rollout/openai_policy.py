"""``OpenAICompatPolicy``: a policy served by an OpenAI-compatible endpoint (a vLLM server, a hosted API).

Requests go through ``clinical_gym.llm.OpenAICompatClient`` (its base URL, key, retries and backoff).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from clinical_gym.llm.openai_compat import OpenAICompatClient
from clinical_gym.rollout.native_tools import native_messages, tool_call_action
from clinical_gym.rollout.policy import Generation, Prompt

TOKEN_ID_PREFIX = "token_id:"


class OpenAICompatPolicy:
    """A ``Policy`` over ``/completions`` and ``/chat/completions`` of an OpenAI-compatible server.

    * Token mode, for prompts with ``token_ids`` (from a ``RolloutCollector`` with a tokenizer): ``POST
      /completions`` with the token ids as the prompt, ``logprobs=1`` and vLLM's ``return_tokens_as_token_ids``, so
      the reply comes back as token ids with their logprobs and nothing is re-tokenized. Needs a vLLM-style server.
    * Message mode, for prompts without token ids (any server, hosted APIs included): ``POST /chat/completions``
      with ``logprobs=true`` (set ``chat_logprobs=False`` for servers that reject it). Token ids come back only when
      the server returns ``token_id:N`` tokens (vLLM with ``return_tokens_as_token_ids`` in the client's
      ``extra_body``); otherwise generations carry text and logprobs only.
    * Native function calling (``native_tools=True``), for message-mode prompts that carry ``tools`` (a tool
      environment's schemas): the schemas are sent as ``tools``, the conversation in the API's tool-call form, and a
      reply's ``tool_calls`` become the environment's action text (``clinical_gym.rollout.native_tools``). With
      ``native_tools=False`` the model sees the tools only in the system prompt and writes calls as text.

    Requests of one batch run concurrently on up to ``max_workers`` threads; prompt ``i`` of a seeded batch is sent
    with ``seed + i``. ``sampling`` holds further request fields sent with every generation (a vLLM server's
    ``top_k``, ``min_p``, penalties: ``VLLMServerPolicy`` pins them all); ``client_kwargs`` build the client when
    ``client`` is not given.
    """

    def __init__(self, client: OpenAICompatClient | None = None, *, temperature: float = 1.0, top_p: float = 1.0,
                 max_workers: int = 8, chat_logprobs: bool = True, sampling: Mapping[str, Any] | None = None,
                 native_tools: bool = False, **client_kwargs: Any) -> None:
        self.client = client if client is not None else OpenAICompatClient(**client_kwargs)
        self.temperature = temperature
        self.top_p = top_p
        self.sampling = dict(sampling or {})
        self.max_workers = max_workers
        self.chat_logprobs = chat_logprobs
        self.native_tools = native_tools

    def generate(self, prompts: Sequence[Prompt], *, seed: int | None = None) -> list[Generation]:
        seeds = [None if seed is None else seed + i for i in range(len(prompts))]
        if len(prompts) <= 1 or self.max_workers <= 1:
            return [self._one(p, s) for p, s in zip(prompts, seeds)]
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(prompts))) as pool:
            return list(pool.map(self._one, prompts, seeds))

    def _one(self, prompt: Prompt, seed: int | None) -> Generation:
        if prompt.token_ids is not None:
            payload: dict[str, Any] = {"prompt": list(prompt.token_ids), "logprobs": 1,
                                       "return_tokens_as_token_ids": True}
            path, extract = "completions", _completion_generation
        elif self.native_tools and prompt.tools:
            payload = {"messages": native_messages(prompt.messages), "tools": [dict(t) for t in prompt.tools]}
            path, extract = "chat/completions", _native_chat_generation
        else:
            payload = {"messages": [dict(m) for m in prompt.messages]}
            path, extract = "chat/completions", _chat_generation
        if path == "chat/completions" and self.chat_logprobs:
            payload["logprobs"] = True
        payload.update(self.sampling)
        body = self.client._body(payload, prompt.max_new_tokens, self.temperature, None, seed)
        if self.top_p < 1:
            body["top_p"] = self.top_p
        return self.client._call(path, body, extract)


def _finish_reason(choice: dict[str, Any]) -> str:
    return "length" if choice.get("finish_reason") == "length" else "stop"


def _token_ids(tokens: Sequence[Any]) -> tuple[int, ...]:
    """Ids from ``token_id:N`` token strings; empty when any token is not in that form."""
    if not all(isinstance(t, str) and t.startswith(TOKEN_ID_PREFIX) for t in tokens):
        return ()
    return tuple(int(t[len(TOKEN_ID_PREFIX):]) for t in tokens)


def _completion_generation(data: Any) -> Generation:
    """A ``Generation`` from a ``/completions`` body (``choices[0].text`` and ``.logprobs.tokens/token_logprobs``)."""
    choice = data["choices"][0]
    logprobs = choice.get("logprobs") or {}
    ids = _token_ids(logprobs.get("tokens") or [])
    values = tuple(float(v) for v in logprobs.get("token_logprobs") or [])
    return Generation(choice.get("text") or "", ids, values if len(values) == len(ids) else (), _finish_reason(choice))


def _chat_generation(data: Any, text: Any = None) -> Generation:
    """A ``Generation`` from a ``/chat/completions`` body (``message.content`` and ``logprobs.content``)."""
    choice = data["choices"][0]
    entries = (choice.get("logprobs") or {}).get("content") or []
    ids = _token_ids([e["token"] for e in entries])
    values = tuple(float(e["logprob"]) for e in entries)
    if text is None:
        text = choice["message"].get("content") or ""
    return Generation(text, ids, values, _finish_reason(choice))


def _native_chat_generation(data: Any) -> Generation:
    """A ``Generation`` whose text is the environment action of the reply (its ``tool_calls`` when it has any)."""
    return _chat_generation(data, tool_call_action(data["choices"][0]["message"]))
