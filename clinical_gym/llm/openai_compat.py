"""An LLM client for OpenAI-compatible HTTP endpoints (vLLM server, hosted APIs), on the standard library only."""

from __future__ import annotations

import http.client
import json
import os
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from clinical_gym.llm.base import LLMError

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
EXCERPT_CHARS = 200


class _Transient(Exception):
    """One attempt failed in a way worth retrying; ``retry_after`` is the server's requested wait, if any."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class OpenAICompatClient:
    """``LLMClient`` over ``/chat/completions`` and ``/completions`` of an OpenAI-compatible server.

    Arguments left ``None`` fall back to environment variables read here: ``OPENAI_BASE_URL`` (default
    ``http://127.0.0.1:8000/v1``), ``OPENAI_API_KEY`` (sent as a Bearer token when set), and
    ``CLINICAL_GYM_LLM_MODEL`` then ``OPENAI_MODEL``. ``timeout`` bounds each request, ``deadline`` (optional)
    all attempts of one call together. Timeouts, connection failures, HTTP 5xx and 429 and malformed replies are
    retried ``max_retries`` times with exponential backoff from ``backoff`` seconds, jittered and capped at
    ``max_backoff`` (429 waits ``Retry-After`` when given; a wait that would pass the deadline ends the call);
    other HTTP errors raise ``LLMError`` at once. ``extra_body`` is merged into every request body, last.
    ``stats`` counts ``calls``, ``retries`` and ``errors`` (calls that raised ``LLMError``).
    """

    def __init__(self, base_url: str | None = None, api_key: str | None = None, model: str | None = None,
                 timeout: float = 60.0, max_retries: int = 3, backoff: float = 0.5, deadline: float | None = None,
                 extra_body: dict[str, Any] | None = None, *, max_backoff: float = 8.0) -> None:
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.model = model or os.environ.get("CLINICAL_GYM_LLM_MODEL") or os.environ.get("OPENAI_MODEL")
        if not self.model:
            raise ValueError("no model: pass model= or set CLINICAL_GYM_LLM_MODEL or OPENAI_MODEL")
        if max_retries < 0 or timeout <= 0 or backoff < 0:
            raise ValueError("need max_retries >= 0, timeout > 0 and backoff >= 0")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.deadline = deadline
        self.extra_body = dict(extra_body or {})
        self.stats: dict[str, int] = {"calls": 0, "retries": 0, "errors": 0}
        self._stats_lock = threading.Lock()
        self._opener = urllib.request.build_opener()

    def __repr__(self) -> str:
        return f"OpenAICompatClient(base_url={self.base_url!r}, model={self.model!r})"

    def chat(self, messages: list[dict[str, str]], *, max_tokens: int = 256, temperature: float = 0.0,
             stop: list[str] | None = None, seed: int | None = None) -> str:
        """Reply to an OpenAI-style message list via ``POST {base_url}/chat/completions``."""
        body = self._body({"messages": messages}, max_tokens, temperature, stop, seed)
        return self._call("chat/completions", body, _chat_text)

    def complete(self, prompt: str, *, max_tokens: int = 256, temperature: float = 0.0,
                 stop: list[str] | None = None, seed: int | None = None) -> str:
        """Continue a raw prompt via ``POST {base_url}/completions``."""
        body = self._body({"prompt": prompt}, max_tokens, temperature, stop, seed)
        return self._call("completions", body, _completion_text)

    def _body(self, payload: dict[str, Any], max_tokens: int, temperature: float, stop: list[str] | None,
              seed: int | None) -> dict[str, Any]:
        """The JSON request body: model, payload, sampling parameters, then ``extra_body``."""
        body: dict[str, Any] = {"model": self.model, **payload, "max_tokens": max_tokens, "temperature": temperature}
        if stop:
            body["stop"] = list(stop)
        if seed is not None:
            body["seed"] = seed
        return {**body, **self.extra_body}

    def _count(self, key: str) -> None:
        with self._stats_lock:
            self.stats[key] += 1

    def _call(self, path: str, body: dict[str, Any], extract: Callable[[Any], str]) -> str:
        """POST ``body`` to ``path`` with retries; the extracted reply text, or ``LLMError``."""
        self._count("calls")
        try:
            return self._with_retries(f"{self.base_url}/{path}", json.dumps(body).encode(), extract)
        except LLMError:
            self._count("errors")
            raise

    def _with_retries(self, url: str, payload: bytes, extract: Callable[[Any], str]) -> str:
        """Attempt the request until it succeeds, fails for good, runs out of retries or passes the deadline."""
        start = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._attempt(url, payload, self._attempt_timeout(start), extract)
            except _Transient as err:
                failure = err
            if attempt > self.max_retries:
                raise LLMError(f"POST {url}: {failure.reason} after {attempt} attempt(s)")
            wait = failure.retry_after if failure.retry_after is not None else self._backoff_delay(attempt)
            if self._past_deadline(start, wait):
                raise LLMError(f"POST {url}: {failure.reason}; deadline of {self.deadline}s reached "
                               f"after {attempt} attempt(s)")
            self._count("retries")
            time.sleep(wait)

    def _attempt_timeout(self, start: float) -> float:
        """The per-request timeout, shortened to what is left of the deadline."""
        if self.deadline is None:
            return self.timeout
        return max(0.001, min(self.timeout, self.deadline - (time.monotonic() - start)))

    def _backoff_delay(self, attempt: int) -> float:
        """Capped exponential backoff with jitter (between half and all of the nominal delay)."""
        nominal = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        return random.uniform(nominal / 2, nominal)

    def _past_deadline(self, start: float, wait: float) -> bool:
        """Whether waiting ``wait`` seconds would leave no time for another attempt."""
        return self.deadline is not None and time.monotonic() - start + wait >= self.deadline

    def _attempt(self, url: str, payload: bytes, timeout: float, extract: Callable[[Any], str]) -> str:
        """One HTTP round trip: the reply text, ``_Transient`` when worth retrying, ``LLMError`` when not."""
        request = urllib.request.Request(url, data=payload, headers=self._headers(), method="POST")
        try:
            with self._opener.open(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            raise _http_failure(err) from None
        except urllib.error.URLError as err:
            if isinstance(err.reason, OSError):
                raise _Transient(_transport_reason(err.reason, timeout)) from None
            raise LLMError(f"POST {url}: {err.reason}") from err
        except (OSError, http.client.HTTPException) as err:
            raise _Transient(_transport_reason(err, timeout)) from None
        return _parse(raw, extract)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers


def _http_failure(err: urllib.error.HTTPError) -> Exception:
    """``_Transient`` for 429 and 5xx (with the Retry-After wait), else a final ``LLMError``."""
    try:
        excerpt = err.read(EXCERPT_CHARS * 4).decode("utf-8", "replace")[:EXCERPT_CHARS]
    except (OSError, http.client.HTTPException):
        excerpt = ""
    reason = f"HTTP {err.code} {excerpt!r}"
    if err.code == 429 or err.code >= 500:
        return _Transient(reason, _retry_after(err.headers.get("Retry-After") if err.headers else None))
    return LLMError(f"POST {err.url}: {reason}")


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header given in seconds; None when absent or not a number."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _transport_reason(err: BaseException, timeout: float) -> str:
    """A short description of a network failure."""
    if isinstance(err, TimeoutError):
        return f"timed out (timeout {timeout:.3g}s)"
    if isinstance(err, http.client.IncompleteRead):
        return f"connection closed mid-body ({err!r})"
    return f"connection failed ({type(err).__name__}: {err})"


def _parse(raw: bytes, extract: Callable[[Any], str]) -> str:
    """The reply text from a response body; ``_Transient`` when the body is not the expected JSON."""
    try:
        return extract(json.loads(raw))
    except (ValueError, KeyError, IndexError, TypeError) as err:
        excerpt = raw[:EXCERPT_CHARS].decode("utf-8", "replace")
        raise _Transient(f"malformed reply ({type(err).__name__}: {err}; body {excerpt!r})") from None


def _first_choice(data: Any) -> dict[str, Any]:
    choice = data["choices"][0]
    if not isinstance(choice, dict):
        raise TypeError("choices[0] is not an object")
    return choice


def _text_or_empty(value: Any) -> str:
    """``value`` when it is a string, "" when null; anything else is malformed."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"content is {type(value).__name__}, not a string")
    return value


def _chat_text(data: Any) -> str:
    """``choices[0].message.content`` of a chat completion."""
    message = _first_choice(data)["message"]
    if not isinstance(message, dict):
        raise TypeError("choices[0].message is not an object")
    return _text_or_empty(message.get("content"))


def _completion_text(data: Any) -> str:
    """``choices[0].text`` of a text completion."""
    return _text_or_empty(_first_choice(data).get("text"))
