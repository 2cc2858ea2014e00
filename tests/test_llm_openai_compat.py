"""OpenAICompatClient against a real local HTTP server (tests/fake_openai.py): request shape, retries, failures."""

from __future__ import annotations

import socket
import time

import pytest
from fake_openai import serve

from clinical_gym.llm import LLMClient, LLMError, OpenAICompatClient, make_client

MESSAGES = [{"role": "system", "content": "You are a patient."}, {"role": "user", "content": "Any chest pain?"}]
ENV_VARS = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CLINICAL_GYM_LLM_MODEL", "OPENAI_MODEL",
            "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No client settings or proxies leak in from the environment."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def make(url: str, **kw: object) -> OpenAICompatClient:
    """A client with tiny timeouts and backoff, so failure tests stay fast."""
    settings: dict[str, object] = {"model": "fake-model", "timeout": 1.0, "backoff": 0.01, **kw}
    return OpenAICompatClient(base_url=url, **settings)  # type: ignore[arg-type]


def test_chat_sends_openai_request_and_returns_content() -> None:
    with serve([("ok", "No chest pain.")]) as url:
        client = make(url, api_key="sk-test", extra_body={"top_p": 0.9})
        reply = client.chat(MESSAGES, max_tokens=12, temperature=0.5, stop=["\nDoctor:"], seed=7)
    assert reply == "No chest pain."
    assert isinstance(client, LLMClient)
    (request,) = url.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {"model": "fake-model", "messages": MESSAGES, "max_tokens": 12, "temperature": 0.5,
                            "stop": ["\nDoctor:"], "seed": 7, "top_p": 0.9}
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["content-type"] == "application/json"
    assert client.stats == {"calls": 1, "retries": 0, "errors": 0}


def test_complete_sends_prompt_and_omits_unset_fields() -> None:
    with serve([("ok", " continued")]) as url:
        reply = make(url).complete("Patient: I feel", max_tokens=5)
    assert reply == " continued"
    (request,) = url.requests
    assert request.path == "/v1/completions"
    assert request.body == {"model": "fake-model", "prompt": "Patient: I feel", "max_tokens": 5, "temperature": 0.0}
    assert "authorization" not in request.headers


def test_null_content_is_empty_string() -> None:
    with serve([("ok", None), ("ok", None), ("ok", "")]) as url:
        client = make(url)
        assert client.chat(MESSAGES) == ""
        assert client.complete("x") == ""
        assert client.chat(MESSAGES) == ""
    assert client.stats["retries"] == 0


def test_unscripted_requests_use_default_responder() -> None:
    with serve(default=lambda path, body: f"echo {body['model']} {path}") as url:
        assert make(url).chat(MESSAGES) == "echo fake-model /v1/chat/completions"
        assert make(url).complete("x") == "echo fake-model /v1/completions"


def test_settings_fall_back_to_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with serve() as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url + "/")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
        monkeypatch.setenv("OPENAI_MODEL", "generic-model")
        monkeypatch.setenv("CLINICAL_GYM_LLM_MODEL", "gym-model")
        client = OpenAICompatClient()
        monkeypatch.delenv("CLINICAL_GYM_LLM_MODEL")
        fallback = OpenAICompatClient()
        client.chat(MESSAGES)
        fallback.complete("x")
    assert client.base_url == url
    assert [r.body["model"] for r in url.requests] == ["gym-model", "generic-model"]
    assert all(r.headers["authorization"] == "Bearer sk-env" for r in url.requests)


def test_defaults_without_environment() -> None:
    client = OpenAICompatClient(model="m")
    assert client.base_url == "http://127.0.0.1:8000/v1"
    assert client.api_key is None
    with pytest.raises(ValueError, match="no model"):
        OpenAICompatClient()


def test_slow_server_times_out_retries_then_raises() -> None:
    with serve([("sleep", 0.5, "late")] * 3) as url:
        client = make(url, timeout=0.1, max_retries=2)
        start = time.monotonic()
        with pytest.raises(LLMError, match=r"chat/completions: timed out .*after 3 attempt"):
            client.chat(MESSAGES)
        assert time.monotonic() - start < 1.0
    assert len(url.requests) == 3
    assert client.stats == {"calls": 1, "retries": 2, "errors": 1}


def test_server_error_is_retried_until_success() -> None:
    with serve([("status", 500), ("status", 503), ("ok", "recovered")]) as url:
        client = make(url)
        assert client.chat(MESSAGES) == "recovered"
    assert len(url.requests) == 3
    assert client.stats == {"calls": 1, "retries": 2, "errors": 0}


def test_server_errors_exhaust_retries() -> None:
    with serve([("status", 502)] * 2) as url:
        with pytest.raises(LLMError, match=r"HTTP 502 .*fake error.*after 2 attempt"):
            make(url, max_retries=1).complete("x")


def test_rate_limit_honours_retry_after() -> None:
    with serve([("status", 429, {"Retry-After": "0.2"}), ("ok", "after wait")]) as url:
        client = make(url, backoff=0.001)
        start = time.monotonic()
        assert client.chat(MESSAGES) == "after wait"
        assert time.monotonic() - start >= 0.2
    assert client.stats["retries"] == 1


@pytest.mark.parametrize("failure", [("malformed",), ("json", {"id": "x"}), ("json", {"choices": []}),
                                     ("json", {"choices": [{"message": "nope"}]}), ("close_mid_body",)],
                         ids=["not-json", "no-choices", "empty-choices", "bad-message", "close-mid-body"])
def test_bad_reply_is_retried_until_success(failure: tuple[object, ...]) -> None:
    with serve([failure, ("ok", "good")]) as url:
        client = make(url)
        assert client.chat(MESSAGES) == "good"
    assert len(url.requests) == 2
    assert client.stats["retries"] == 1


def test_malformed_replies_exhaust_retries() -> None:
    with serve([("malformed",)] * 2) as url:
        with pytest.raises(LLMError, match=r"malformed reply .*not json.*after 2 attempt"):
            make(url, max_retries=1).chat(MESSAGES)


def test_client_error_raises_without_retry() -> None:
    with serve([("status", 400), ("ok", "never sent")]) as url:
        client = make(url)
        with pytest.raises(LLMError, match=r"HTTP 400 .*fake error") as info:
            client.chat(MESSAGES)
    assert "chat/completions" in str(info.value)
    assert len(url.requests) == 1
    assert client.stats == {"calls": 1, "retries": 0, "errors": 1}


def test_connection_refused_is_retried_then_raises() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = make(f"http://127.0.0.1:{port}/v1", max_retries=2)
    with pytest.raises(LLMError, match=r"connection failed .*after 3 attempt"):
        client.chat(MESSAGES)
    assert client.stats["retries"] == 2


def test_deadline_bounds_all_attempts() -> None:
    with serve([("sleep", 1.0)] * 10) as url:
        client = make(url, timeout=0.2, max_retries=10, deadline=0.5)
        start = time.monotonic()
        with pytest.raises(LLMError, match="deadline of 0.5s reached"):
            client.chat(MESSAGES)
        assert time.monotonic() - start < 0.8
    assert 2 <= len(url.requests) <= 3


def test_retry_after_beyond_deadline_gives_up_at_once() -> None:
    with serve([("status", 429, {"Retry-After": "5"}), ("ok", "too late")]) as url:
        client = make(url, deadline=1.0)
        start = time.monotonic()
        with pytest.raises(LLMError, match=r"HTTP 429 .*deadline"):
            client.chat(MESSAGES)
        assert time.monotonic() - start < 0.5
    assert len(url.requests) == 1


def test_make_client_openai_spec() -> None:
    with serve([("ok", "via spec")]) as url:
        client = make_client("openai:spec-model", base_url=url, timeout=1.0)
        assert client.chat(MESSAGES) == "via spec"
    assert url.requests[0].body["model"] == "spec-model"
    with pytest.raises(ValueError, match="bad LLM client spec"):
        make_client("vllm-model")
