"""OpenEnv's own client and message models (``openenv-core``) against the clinical-gym server: the wire format is
OpenEnv's, so an OpenEnv user's code drives a served clinical environment unchanged."""

from __future__ import annotations

import json
import urllib.request

import gymnasium as gym
import pytest
from openenv.core.env_server.types import (
    EnvironmentMetadata,
    HealthResponse,
    ResetResponse,
    SchemaResponse,
    State,
    WSErrorResponse,
    WSObservationResponse,
    WSStateResponse,
)
from openenv.core.generic_client import GenericEnvClient

import clinical_gym  # noqa: F401
from clinical_gym.server import ServerSettings, running_server
from clinical_gym.server.protocol import jsonable

CALLS = ['{"name": "think", "arguments": {"thought": "read the vignette"}}',
         '{"name": "submit_answer", "arguments": {"answer": "B"}}']


@pytest.fixture(scope="module")
def url():
    with running_server(ServerSettings("MedicalQA-v1", max_sessions=4)) as base:
        yield base


def get(base, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_openenv_client_plays_an_episode_as_a_local_env_does(url):
    local = gym.make("MedicalQA-v1")
    obs, info = local.reset(seed=6)
    with GenericEnvClient(base_url=url).sync() as client:
        result = client.reset(seed=6)
        assert result.observation["text"] == obs and result.observation["info"] == jsonable(info)
        assert result.done is False and result.reward is None
        for call in CALLS:
            result = client.step({"text": call})
            want = local.step(call)
            assert (result.observation["text"], result.reward, result.observation["terminated"]) == want[:3]
            assert result.observation["info"] == jsonable(want[4]) and result.done == (want[2] or want[3])
        state = client.state()
    assert state["step_count"] == 2 and state["messages"] == jsonable(local.unwrapped.messages)
    State.model_validate(state)  # OpenEnv's State model accepts ours (episode_id, step_count, extras)


def test_messages_validate_against_openenv_models(url):
    from websockets.sync.client import connect

    with connect("ws" + url[4:] + "/ws") as ws:
        replies = []
        for message in ({"type": "reset", "data": {"seed": 1}}, {"type": "step", "data": {"text": CALLS[0]}},
                        {"type": "state"}, {"type": "step", "data": {}}):
            ws.send(json.dumps(message))
            replies.append(json.loads(ws.recv(timeout=30)))
    WSObservationResponse.model_validate(replies[0])
    WSObservationResponse.model_validate(replies[1])
    WSStateResponse.model_validate(replies[2])
    assert WSErrorResponse.model_validate(replies[3]).data["code"] == "VALIDATION_ERROR"
    HealthResponse.model_validate(get(url, "/health"))
    assert EnvironmentMetadata.model_validate(get(url, "/metadata")).name == "MedicalQA-v1"
    assert SchemaResponse.model_validate(get(url, "/schema")).action["required"] == ["text"]
    assert ResetResponse.model_validate(get(url, "/reset", {"seed": 1})).observation["text"]
