"""The environment server (``clinical_gym.server``) over real loopback HTTP and WebSocket: remote episodes equal
local ones, sessions are isolated, bounded and reclaimed, and bad requests get clear errors."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401
from clinical_gym.cli import main as cli_main
from clinical_gym.env import EpisodeOverError
from clinical_gym.server import RemoteEnv, RemoteEnvError, ServerSettings, running_server
from clinical_gym.server.protocol import jsonable

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from perf_server import compare, episodes_for, play, run_local, run_remote  # noqa: E402

INQUIRY_REPLIES = ["<think>x</think><answer>Question: Where exactly is the pain?</answer>", "", 42,
                   "no tags at all", "<think>x</think><answer>Diagnosis: unstable angina\nRecommendation: aspirin</answer>"]


@pytest.fixture(scope="module")
def inquiry_url():
    with running_server(ServerSettings("ClinicalInquiry-v1", {"turn_budget": 4}, max_sessions=8)) as url:
        yield url


def episode(env, seed, options, replies):
    """Everything an episode shows the agent and the trainer, as JSON types, and the message log."""
    out = [jsonable(env.reset(seed=seed, options=options))]
    for reply in replies:
        result = env.step(reply)
        out.append(jsonable(result))
        if result[2] or result[3]:
            break
    return out, jsonable(env.unwrapped.messages)


def test_remote_episodes_equal_local_ones_reply_for_reply(inquiry_url):
    remote = gym.make("ClinicalInquiry-v1", remote=inquiry_url)
    local = gym.make("ClinicalInquiry-v1", turn_budget=4)
    for seed, options in [(3, None), (7, {"case_id": "cir-nstemi-01"}), (7, {"case_id": "cir-nstemi-01"})]:
        got, want = episode(remote, seed, options, INQUIRY_REPLIES), episode(local, seed, options, INQUIRY_REPLIES)
        assert got == want
        assert got[0][0][1]["system_prompt"] and got[0][-1][2]  # the info dict travels; the diagnosis ended the episode
    assert remote.unwrapped.case.id == "cir-nstemi-01" and "cir-nstemi-01" in [c.id for c in remote.unwrapped.cases]
    state = remote.unwrapped.state()
    assert state["step_count"] == len(got[0]) - 1 and state["done"] and state["messages"] == jsonable(local.unwrapped.messages)
    with pytest.raises(EpisodeOverError, match="call reset"):
        remote.step("one more")
    remote.close()


def test_tool_env_sends_its_tool_schemas_and_tool_results():
    calls = ['{"name": "think", "arguments": {"thought": "chart first"}}', '{"name": "no_such_tool", "arguments": {}}',
             '{"name": "submit_answer", "arguments": {"answer": "ESI 2"}}']
    with running_server(ServerSettings("Triage-v1", max_sessions=2)) as url:
        remote = RemoteEnv(url, "Triage-v1")
        local = gym.make("Triage-v1")
        got, want = episode(remote, 5, None, calls), episode(local, 5, None, calls)
        remote.close()
    assert got == want
    tools = got[0][0][1]["tools"]
    assert {"think", "submit_answer"} <= {t["function"]["name"] for t in tools}
    assert "outcome" in got[0][-1][4] and "reward_components" in got[0][-1][4]


def test_concurrent_sessions_across_four_servers_equal_local_runs():
    env_ids = ("ClinicalInquiry-v1", "DiagnosticWorkup-v1", "Triage-v1", "MedicalQA-v1")
    plan = episodes_for(env_ids, 48, steps=4, seed=11)
    with running_server(ServerSettings(env_ids[0], max_sessions=12)) as a, \
            running_server(ServerSettings(env_ids[1], max_sessions=12)) as b, \
            running_server(ServerSettings(env_ids[2], max_sessions=12)) as c, \
            running_server(ServerSettings(env_ids[3], max_sessions=12)) as d:
        remote, _ = run_remote(plan, dict(zip(env_ids, (a, b, c, d), strict=True)))
    local, _ = run_local(plan)
    assert [r.error for r in remote] == [None] * 48
    assert compare(local, remote) == []
    assert sum(len(r.records) for r in remote) > 48 * 2  # episodes ran several steps


def test_capacity_is_enforced_and_freed_slots_are_reused():
    with running_server(ServerSettings("MedicalQA-v1", max_sessions=1)) as url:
        first, second = RemoteEnv(url), RemoteEnv(url)
        first.reset(seed=0)
        with pytest.raises(RemoteEnvError, match="capacity"):
            second.reset(seed=0)
        first.close()
        deadline = time.monotonic() + 5
        while info(url)["active_sessions"] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert second.reset(seed=0)[0]
        second.close()


def test_idle_sessions_are_reclaimed_and_active_ones_kept():
    with running_server(ServerSettings("ClinicalInquiry-v1", max_sessions=4, session_timeout=0.6)) as url:
        idle, busy = RemoteEnv(url), RemoteEnv(url)
        idle.reset(seed=1)
        busy.reset(seed=1)
        for _ in range(8):  # busy keeps talking for longer than the timeout
            time.sleep(0.15)
            busy.state()
        assert info(url)["reclaimed_sessions"] == 1 and info(url)["active_sessions"] == 1
        with pytest.raises(RemoteEnvError, match="reclaimed this session: session idle for more than 0.6 s"):
            idle.step("hello")
        assert busy.step("<think>x</think><answer>Question: any fever?</answer>")[0]
        assert idle.reset(seed=1)[0]  # a new session after the reclaimed one
        idle.close()
        busy.close()


def test_a_client_that_drops_its_connection_does_not_disturb_another(inquiry_url):
    dropped, kept = RemoteEnv(inquiry_url), RemoteEnv(inquiry_url)
    local = gym.make("ClinicalInquiry-v1", turn_budget=4)
    kept_seen = [jsonable(kept.reset(seed=9))]
    local_seen = [jsonable(local.reset(seed=9))]
    dropped.reset(seed=2)
    dropped.step(INQUIRY_REPLIES[0])
    dropped._socket.socket.shutdown(socket.SHUT_RDWR)  # the client vanishes mid-episode, without a close message
    for reply in INQUIRY_REPLIES:
        kept_seen.append(jsonable(kept.step(reply)))
        local_seen.append(jsonable(local.step(reply)))
        if local_seen[-1][2] or local_seen[-1][3]:
            break
    assert kept_seen == local_seen and len(kept_seen) > 2
    kept.close()
    deadline = time.monotonic() + 5
    while info(inquiry_url)["active_sessions"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert info(inquiry_url)["active_sessions"] == 0


def ws_exchange(url, messages):
    from websockets.sync.client import connect

    with connect("ws" + url[4:] + "/ws") as ws:
        replies = []
        for message in messages:
            ws.send(message if isinstance(message, str) else json.dumps(message))
            replies.append(json.loads(ws.recv(timeout=30)))
        return replies


def test_bad_messages_get_openenv_error_codes_and_the_session_goes_on(inquiry_url):
    replies = ws_exchange(inquiry_url, [
        "{not json", {"type": "jump"}, {"type": "step", "data": {"text": "hi"}},
        {"type": "reset", "data": {"seed": -1}}, {"type": "reset", "data": {"options": {"case_id": "nope"}}},
        {"type": "reset", "data": {"sed": 1}}, {"type": "step", "data": {"message": "hi"}},
        {"type": "reset", "data": {"seed": 1, "episode_id": "ep-1"}}, {"type": "step", "data": {"text": "Any fever?"}},
        {"type": "state"}])
    codes = [r["data"].get("code") for r in replies[:7]]
    assert codes == ["INVALID_JSON", "UNKNOWN_TYPE", "EXECUTION_ERROR", "VALIDATION_ERROR", "EXECUTION_ERROR",
                     "VALIDATION_ERROR", "VALIDATION_ERROR"]
    assert "reset" in replies[2]["data"]["message"] and "unknown case_id 'nope'" in replies[4]["data"]["message"]
    assert "'text'" in replies[6]["data"]["message"]
    assert replies[7]["type"] == "observation" and replies[7]["data"]["observation"]["episode_id"] == "ep-1"
    assert replies[8]["type"] == "observation", replies[8]
    assert replies[8]["data"]["done"] is False and replies[8]["data"]["reward"] is not None
    assert replies[9] == {"type": "state", "data": {**replies[9]["data"], "episode_id": "ep-1", "step_count": 1}}


def http(url, path, body=None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(url + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def info(url):
    return http(url, "/info")[1]


def test_http_endpoints_follow_openenv(inquiry_url):
    assert http(inquiry_url, "/health") == (200, {"status": "healthy"})
    status, metadata = http(inquiry_url, "/metadata")
    assert status == 200 and metadata["name"] == "ClinicalInquiry-v1" and set(metadata) == {
        "name", "description", "readme_content", "version", "author", "documentation_url"}
    assert set(http(inquiry_url, "/schema")[1]) == {"action", "observation", "state"}
    status, reset = http(inquiry_url, "/reset", {"seed": 4})
    local = gym.make("ClinicalInquiry-v1", turn_budget=4)
    assert status == 200 and reset["observation"]["text"] == local.reset(seed=4)[0] and reset["done"] is False
    assert http(inquiry_url, "/reset", {"options": {"case_id": "nope"}})[0] == 400
    assert http(inquiry_url, "/reset", b"[1, 2]")[0] == 422
    assert http(inquiry_url, "/step", {"action": {"wrong": 1}})[0] == 422
    status, refused = http(inquiry_url, "/step", {"action": {"text": "hi"}})
    assert status == 409 and "/ws" in refused["detail"]
    assert http(inquiry_url, "/state")[1]["step_count"] == 0


def test_gym_make_remote_checks_the_id_and_refuses_local_arguments(inquiry_url):
    with pytest.raises(ValueError, match="serves ClinicalInquiry-v1, not Triage-v1"):
        gym.make("Triage-v1", remote=inquiry_url)
    with pytest.raises(TypeError, match="clinical-gym serve --env-kwargs"):
        gym.make("ClinicalInquiry-v1", remote=inquiry_url, turn_budget=2)
    with pytest.raises(RemoteEnvError, match="no clinical-gym server answers"):
        RemoteEnv("http://127.0.0.1:9")
    with pytest.raises(ValueError, match="starts with http"):
        RemoteEnv("127.0.0.1:8000")


def test_serve_command_errors_are_one_line(capsys):
    assert cli_main(["serve", "--env", "Nope-v0"]) == 2
    assert cli_main(["serve", "--env", "Triage-v1", "--max-sessions", "0"]) == 2
    assert cli_main(["serve", "--env", "Triage-v1", "--port", "70000"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 3 and all(e.startswith("clinical-gym: error: ") for e in errors)
    assert "unknown environment 'Nope-v0'" in errors[0] and "max_sessions" in errors[1] and "--port" in errors[2]


def test_serve_command_serves_until_interrupted():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "clinical_gym.cli", "serve", "--env", "MedicalQA-v1", "--port",
                                str(port), "--max-sessions", "3"], stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                assert info(url)["max_sessions"] == 3
                break
            except (urllib.error.URLError, ConnectionError):
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        with ThreadPoolExecutor(3) as pool:  # three clients at once
            results = list(pool.map(lambda e: play(lambda: RemoteEnv(url), e),
                                    episodes_for(["MedicalQA-v1"], 3, steps=3, seed=2)))
        assert [r.error for r in results] == [None] * 3
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert f"serving MedicalQA-v1 at {url}" in err and process.returncode in (0, 130)
