"""The verifiers environment package (clinical_gym_verifiers, clinical_gym.integrations.verifiers) run by verifiers'
own evaluation entry point (vf-eval's ``main``) against the fake OpenAI-compatible server, with the episodes on a
clinical-gym server: multi-turn exchanges, and a rubric that is the environment's reward components."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from fake_openai import serve
from verifiers.v1.cli.eval.main import main as vf_eval

import clinical_gym  # noqa: F401
from clinical_gym.integrations.verifiers import ClinicalTaskset, ClinicalTasksetConfig
from clinical_gym.server import ServerSettings, running_server

ENV_KWARGS = {"turn_budget": 3}
REPLIES = ["<think>x</think><answer>Question: Where exactly is the pain, and does it spread anywhere?</answer>",
           "<think>x</think><answer>Diagnosis: NSTEMI\nRecommendation: aspirin, ticagrelor and heparin</answer>"]


def test_taskset_holds_one_task_per_case_with_the_environments_opening():
    tasks = list(ClinicalTaskset(ClinicalTasksetConfig(id="clinical-gym-verifiers", env_id="Triage-v1", num_tasks=3,
                                                       seed=4)))
    env = gym.make("Triage-v1")
    assert len(tasks) == 3
    for task in tasks:
        obs, info = env.reset(seed=4, options={"case_id": task.data.case_id})
        assert task.data.prompt == obs and task.data.system_prompt == info["system_prompt"]
        assert task.data.name == f"Triage-v1#{task.data.case_id}" and task.data.env_id == "Triage-v1"


def test_vf_eval_plays_served_episodes_and_scores_them_with_the_reward_components(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_API_KEY", "not-a-secret")
    with running_server(ServerSettings("ClinicalInquiry-v1", ENV_KWARGS, max_sessions=2)) as env_url, \
            serve([("ok", reply) for reply in REPLIES]) as model_url:
        vf_eval(["clinical-gym-verifiers", "--env.taskset.env-id", "ClinicalInquiry-v1", "--env.taskset.remote",
                 env_url, "--env.taskset.num-tasks", "1", "--env.taskset.seed", "2", "--model", "fake",
                 "--client.base-url", model_url, "--client.api-key-var", "FAKE_API_KEY",
                 "--env.player.runtime.type", "subprocess", "-n", "1", "--output-dir", str(tmp_path),
                 "--push", "false"])
    [traces_file] = tmp_path.rglob("traces.jsonl")
    [record] = [json.loads(line) for line in traces_file.read_text().splitlines()]
    trace = record["traces"][0]
    assert trace["errors"] == [] and trace["stop_condition"] == "terminated"
    # multi-turn: the second request carries the patient's answer to the first reply
    local = gym.make("ClinicalInquiry-v1", **ENV_KWARGS)
    case_id = record["task"]["data"]["case_id"] if "data" in record["task"] else trace["task"]["data"]["case_id"]
    local.reset(seed=2, options={"case_id": case_id})
    components: dict[str, float] = {}
    steps = [local.step(reply) for reply in REPLIES]
    for step in steps:
        for name, value in step[4]["reward_components"].items():
            components[name] = components.get(name, 0.0) + value
    answer, total, (_, _, terminated, _, info) = steps[0][0], sum(s[1] for s in steps), steps[-1]
    assert terminated
    chats = [r.body["messages"] for r in model_url.requests]
    assert len(chats) == 2 and chats[1][-1]["content"] == answer and chats[1][-2]["content"] == REPLIES[0]
    # the rubric: one reward per component (summed over the episode), weight 1; their total is the episode reward
    assert {name: (r["score"], r["weight"]) for name, r in trace["rewards"].items()} == {
        name: (pytest.approx(value), 1.0) for name, value in components.items()}
    assert sum(components.values()) == pytest.approx(total) and trace["metrics"]["env_reward"] == pytest.approx(total)
    assert trace["metrics"]["turns"] == 2 and trace["info"]["outcome"]["result"] == info["outcome"]["result"]
