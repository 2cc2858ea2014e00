"""A fake OpenAI-compatible server for tests: real HTTP on 127.0.0.1, scripted replies, recorded requests.

Usage::

    from fake_openai import serve

    with serve([("status", 500), ("ok", "Hello")]) as url:   # url == "http://127.0.0.1:PORT/v1"
        client = OpenAICompatClient(base_url=url, model="fake")
        assert client.chat([{"role": "user", "content": "hi"}]) == "Hello"
        assert url.requests[-1].body["messages"][0]["content"] == "hi"

Each request to ``/v1/chat/completions`` or ``/v1/completions`` takes the next behaviour from the script;
once the script is used up, replies come from ``default(path, body) -> text`` (by default, "fake reply").
Replies have the chat shape (``choices[0].message.content``) or the completions shape (``choices[0].text``)
according to the path; a chat reply given as a dict instead of text is the assistant message itself (e.g.
``{"content": None, "tool_calls": [...]}``, finish reason ``tool_calls``). Behaviours:

* ``("ok", text)``: 200 with ``text`` as the reply (``None`` gives null content; a dict is the chat message); a
  request with ``"stream": true`` gets it as server-sent events (chunks, then ``data: [DONE]``).
* ``("status", code)`` or ``("status", code, headers)``: that HTTP status, an OpenAI-style error body and headers,
  e.g. ``("status", 429, {"Retry-After": "0.1"})``.
* ``("sleep", seconds)`` or ``("sleep", seconds, text)``: wait, then reply ``text`` (or the default's reply).
* ``("malformed",)``: 200 with a body that is not JSON.
* ``("json", obj)``: 200 with ``obj`` as the JSON body, e.g. ``{"choices": []}``.
* ``("close_mid_body",)``: 200 headers promising a longer body, part of it, then the connection closes.

The yielded URL is a ``str`` with two extra attributes: ``requests`` (the ``Recorded`` requests, in arrival order)
and ``script`` (the behaviours not used yet).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Behaviour = tuple[Any, ...]
Responder = Callable[[str, Any], "str | dict[str, Any] | None"]

CHAT_PATH = "/v1/chat/completions"
COMPLETIONS_PATH = "/v1/completions"


@dataclass
class Recorded:
    """One request the fake server received: path, parsed JSON body (None if not JSON), lower-cased headers."""

    path: str
    body: Any
    headers: dict[str, str]


class FakeURL(str):
    """The server's base URL, carrying the recorded requests and the unused script."""

    requests: list[Recorded]
    script: deque[Behaviour]


def default_responder(path: str, body: Any) -> str:
    """The reply to requests beyond the script."""
    return "fake reply"


def reply_json(path: str, text: str | dict[str, Any] | None, model: str | None) -> dict[str, Any]:
    """An OpenAI-shaped response body for ``path`` carrying ``text`` (for chat, a dict is the message itself)."""
    if path == CHAT_PATH:
        message = {"role": "assistant", **text} if isinstance(text, dict) else {"role": "assistant", "content": text}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        choice = {"index": 0, "message": message, "finish_reason": finish}
        kind = "chat.completion"
    else:
        choice = {"index": 0, "text": text, "finish_reason": "stop"}
        kind = "text_completion"
    return {"id": "fake-1", "object": kind, "created": int(time.time()), "model": model, "choices": [choice],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


def _make_handler(url: FakeURL, default: Responder) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to one server's records, script and default responder."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server naming)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            url.requests.append(Recorded(self.path, body, {k.lower(): v for k, v in self.headers.items()}))
            if self.path not in (CHAT_PATH, COMPLETIONS_PATH):
                self._send(404, _error_body(404, f"no route {self.path}"))
                return
            behaviour = url.script.popleft() if url.script else ("default",)
            self._behave(behaviour, body)

        def _behave(self, behaviour: Behaviour, body: Any) -> None:
            kind, *args = behaviour
            model = body.get("model") if isinstance(body, dict) else None
            if kind == "ok":
                self._reply(reply_json(self.path, args[0], model), body)
            elif kind == "default":
                self._reply(reply_json(self.path, default(self.path, body), model), body)
            elif kind == "status":
                headers = args[1] if len(args) > 1 else {}
                self._send(args[0], _error_body(args[0], "fake error"), headers)
            elif kind == "sleep":
                time.sleep(args[0])
                self._behave(("ok", args[1]) if len(args) > 1 else ("default",), body)
            elif kind == "malformed":
                self._send(200, b"this is { not json")
            elif kind == "json":
                self._send(200, json.dumps(args[0]).encode())
            elif kind == "close_mid_body":
                self._send_partial(json.dumps(reply_json(self.path, "cut off", model)).encode())
            else:
                raise ValueError(f"unknown fake server behaviour {behaviour!r}")

        def _reply(self, reply: dict[str, Any], body: Any) -> None:
            """``reply`` as JSON, or as server-sent events when the request asks ``"stream": true``."""
            if isinstance(body, dict) and body.get("stream"):
                self._send_stream(reply, bool((body.get("stream_options") or {}).get("include_usage")))
            else:
                self._send(200, json.dumps(reply).encode())

        def _send_stream(self, reply: dict[str, Any], usage: bool) -> None:
            """A streamed reply: one chunk with the whole message (or text), one with the finish reason, the usage
            chunk when asked for, then ``[DONE]``."""
            choice = reply["choices"][0]
            head = {k: reply[k] for k in ("id", "created", "model")}
            kind = "chat.completion.chunk" if reply["object"] == "chat.completion" else "text_completion"
            if "message" in choice:
                delta = {k: v for k, v in choice["message"].items() if v is not None}
                if "tool_calls" in delta:
                    delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(delta["tool_calls"])]
                chunks = [{"index": 0, "delta": delta, "finish_reason": None},
                          {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]
            else:
                chunks = [{"index": 0, "text": choice["text"], "finish_reason": None},
                          {"index": 0, "text": "", "finish_reason": choice["finish_reason"]}]
            events = [{**head, "object": kind, "choices": [c]} for c in chunks]
            if usage:
                events.append({**head, "object": kind, "choices": [], "usage": reply["usage"]})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for event in events:
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def _send_partial(self, payload: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server signature)
            """Silence per-request logging."""

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore clients that hang up early (timeouts in tests)."""


def _error_body(status: int, message: str) -> bytes:
    return json.dumps({"error": {"message": f"{message} ({status})", "type": "fake", "code": status}}).encode()


@contextmanager
def serve(script: Iterable[Behaviour] = (), default: Responder = default_responder) -> Iterator[FakeURL]:
    """Run a fake OpenAI-compatible server on a free local port; yield its base URL (``.../v1``)."""
    server = _QuietServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    url = FakeURL(f"http://127.0.0.1:{server.server_address[1]}/v1")
    url.requests, url.script = [], deque(script)
    server.RequestHandlerClass = _make_handler(url, default)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
