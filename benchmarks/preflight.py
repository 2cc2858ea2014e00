"""Before a benchmark plays an episode, every LLM endpoint it will talk to must answer: the agents' (``openai:``),
the LLM patient's, the world model's and the judges'. One request each (a one-token reply, one retry, a short
timeout); an endpoint that does not answer stops the run with one line naming its role, URL, model and error,
instead of a run whose every episode fails.

Clients that run in this process (``transformers:``) need no check: they load, or fail, when they are made.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from clinical_gym.llm import OpenAICompatClient, llm_setting
from clinical_gym.llm.base import LLMError

PING_TIMEOUT_S = 30.0
ACTOR_ARGUMENTS = ("patient", "world_model", "judge")  # gym.make arguments that may name an LLM


@dataclass(frozen=True)
class Endpoint:
    """One endpoint to check: who uses it, its client, and whether it is asked for chat or completions."""

    role: str
    client: OpenAICompatClient
    completions: bool = False

    @property
    def key(self) -> tuple[str, str | None, bool]:
        return self.client.base_url, self.client.model, self.completions


def agent_endpoint(label: str, agent: Any) -> Endpoint | None:
    """The endpoint of an agent whose policy talks to an OpenAI-compatible server, else None."""
    client = getattr(getattr(agent, "policy", None), "client", None)
    return Endpoint(f"agent {label}", client) if isinstance(client, OpenAICompatClient) else None


def actor_endpoints(env_id: str, kwargs: Mapping[str, Any]) -> list[Endpoint]:
    """The endpoints of the simulated actors an environment's ``gym.make`` arguments name (patient, world model,
    judge) that are OpenAI-compatible servers; the completion-mode world model is asked for completions."""
    found = []
    for name in ACTOR_ARGUMENTS:
        value = kwargs.get(name)
        if isinstance(value, str) and value.partition(":")[0] not in ("openai", "transformers"):
            continue  # "rules", "record": built in
        client = llm_setting(value, name) if isinstance(value, str) else value
        client = getattr(client, "client", client)  # an LLMPatient / LLMWorldModel passed as an object
        if isinstance(client, OpenAICompatClient):
            completions = name == "world_model" and kwargs.get("world_model_mode", "completion") == "completion"
            found.append(Endpoint(f"{name.replace('_', ' ')} of {env_id}", client, completions))
    return found


def ping(endpoint: Endpoint) -> str | None:
    """None when the endpoint answers a one-token request, else why not (one line)."""
    source = endpoint.client
    client = OpenAICompatClient(base_url=source.base_url, api_key=source.api_key, model=source.model,
                                timeout=min(source.timeout, PING_TIMEOUT_S), max_retries=1, backoff=0.2)
    try:
        if endpoint.completions:
            client.complete("ping", max_tokens=1, temperature=0.0)
        else:
            client.chat([{"role": "user", "content": "ping"}], max_tokens=1, temperature=0.0)
    except LLMError as e:
        return str(e).splitlines()[0]
    return None


def check_endpoints(endpoints: Iterable[Endpoint]) -> None:
    """Ping each distinct endpoint; ``ValueError`` (one line) naming every one that does not answer."""
    failures, seen = [], set()
    for endpoint in endpoints:
        if endpoint.key in seen:
            continue
        seen.add(endpoint.key)
        reason = ping(endpoint)
        if reason is not None:
            failures.append(f"{endpoint.role} ({endpoint.client.base_url}, model {endpoint.client.model}): {reason}")
    if failures:
        raise ValueError(f"{len(failures)} endpoint(s) do not answer, nothing was played: " + "; ".join(failures))
