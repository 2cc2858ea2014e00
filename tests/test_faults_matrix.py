"""Every LLM backend (patient, world model, judge, policy endpoint) against every server fault (hangs, 500s, 429
with Retry-After, a connection closed mid-body, malformed JSON): retries with backoff within the deadline, then the
episode ends (truncated, never terminated, with ``info["error"]`` and a logged warning for simulator and judge
failures; a failed agent for the policy endpoint) and the benchmark counts it apart; the rest of the rollout batch and
the run go on, and the collector marks the episode so that trainers leave it out of the loss (issue 12 section 3,
issue 17).

Each backend is a real ``OpenAICompatClient`` talking to a real HTTP server on 127.0.0.1 (``tests/fake_openai.py``).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from clinical_gym.benchmarks.agents import Agent
from clinical_gym.benchmarks.plan import plan_env
from clinical_gym.benchmarks.runner import BenchConfig, play_chunk
from clinical_gym.benchmarks.summary import summarize_agent
from clinical_gym.llm import OpenAICompatClient, as_client
from clinical_gym.rollout import EpisodeSpec, OpenAICompatPolicy, RolloutCollector, RolloutLimits, ScriptedPolicy
from clinical_gym.domains.inquiry.environment import ClinicalInquiryEnv
from fake_openai import serve

QUESTION = "<answer>Question: Have you had a fever, chills or any weight loss?</answer>"
DIAGNOSIS = "<answer>Diagnosis: Acute bronchitis\nRecommendation: rest and fluids</answer>"
ORDER = "<answer>Test: Complete Blood Count</answer>"
FAULTS = {
    "hangs": ("sleep", 3.0),
    "500": ("status", 500),
    "429 with Retry-After": ("status", 429, {"Retry-After": "0.05"}),
    "closes mid-body": ("close_mid_body",),
    "malformed JSON": ("malformed",),
}
RETRIES = 2
DEADLINE = 4.0


def faulty_client(url: str, model: str) -> OpenAICompatClient:
    return OpenAICompatClient(base_url=url, model=model, timeout=0.3, max_retries=RETRIES, backoff=0.01,
                              deadline=DEADLINE)


def play(env_id: str, reply, chunk=(0, 1), agent: Agent | None = None, **env_kwargs):
    plan = plan_env(env_id, cases=None, tasks=None, split="test", episodes=None, seed=0, env_kwargs=env_kwargs)
    config = BenchConfig(envs=env_id, agents="x", out=Path("unused"), timeout_s=30.0)
    return play_chunk(plan, "x", agent or Agent("scripted", ScriptedPolicy(reply)), list(chunk), config)


def assert_counted_as_errors(records, status: str) -> None:
    summary = summarize_agent(records, seed=0)
    assert [r.status for r in records] == [status] * len(records)
    assert (summary.errors if status == "error" else summary.failed) == len(records)
    assert summary.episodes == len(records)


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_patient_faults_end_episodes_with_an_error(fault):
    with serve([fault] * 40) as url:
        client = faulty_client(url, "patient")
        began = time.monotonic()
        records = play("ClinicalInquiry-v1", lambda m: QUESTION, patient=client)
        assert time.monotonic() - began < 2 * (DEADLINE + 1)
    assert_counted_as_errors(records, "error")
    assert client.stats["errors"] == len(records) and client.stats["retries"] >= len(records)
    assert all(r.reason for r in records)


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_world_model_faults_end_episodes_with_an_error(fault):
    with serve([fault] * 40) as url:
        client = faulty_client(url, "world-model")
        records = play("DiagnosticWorkup-v1", lambda m: ORDER, world_model=client)
    assert_counted_as_errors(records, "error")
    assert client.stats["errors"] == len(records) and client.stats["retries"] >= len(records)


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_judge_faults_end_episodes_with_an_error(fault):
    with serve([fault] * 40) as url:
        client = faulty_client(url, "judge")
        records = play("ClinicalInquiry-v1", lambda m: QUESTION, reward="doctor_r1", judge=client)
    assert_counted_as_errors(records, "error")
    assert client.stats["errors"] == len(records)
    env = ClinicalInquiryEnv(reward="doctor_r1", judge=client)
    env.reset(seed=0)
    with serve([fault] * 40) as url:
        client.base_url = url
        obs, reward, terminated, truncated, info = env.step(QUESTION)
    assert truncated and not terminated and reward == 0.0
    assert obs == "The consultation ended because the reward judge failed."
    assert info["error"] and "outcome" not in info


@pytest.mark.parametrize("fault", [FAULTS["500"], FAULTS["malformed JSON"]], ids=["500", "malformed JSON"])
def test_workup_judge_and_tool_assertion_judge_faults_truncate(fault):
    with serve([fault] * 40) as url:
        records = play("DiagnosticWorkup-v1", lambda m: "<answer>Diagnosis: Pneumonia</answer>",
                       judge=faulty_client(url, "judge"))
        assert_counted_as_errors(records, "error")
        assert all(r.turns[-1].info["error"] and r.outcome is None for r in records)
        submit = '{"name": "submit_answer", "arguments": {"answer": "Community-acquired pneumonia"}}'
        records = play("ClinicalDiagnosis-v1", lambda m: submit, judge=faulty_client(url, "judge"))
    assert_counted_as_errors(records, "error")
    assert all("assertion judge failed" in r.reason for r in records)


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_policy_endpoint_faults_fail_the_agent_not_the_run(fault):
    with serve([fault] * 40) as url:
        policy = OpenAICompatPolicy(faulty_client(url, "doctor"), chat_logprobs=False)
        records = play("ClinicalInquiry-v1", None, agent=Agent("endpoint", policy))
    assert_counted_as_errors(records, "failed")
    assert all(r.reason.startswith("exception: LLMError") for r in records)


def test_a_failing_backend_ends_only_its_own_episodes_and_the_batch_goes_on():
    """Half the environments of one collector batch talk to a dead patient server, half to the rule patient."""
    with serve([("status", 500)] * 40) as url:
        client = faulty_client(url, "patient")
        made = []

        def make_env():
            env = ClinicalInquiryEnv(patient=client if len(made) % 2 == 0 else "rules", turn_budget=2)
            made.append(env)
            return env

        collector = RolloutCollector(ScriptedPolicy(lambda m: QUESTION if len(m) < 4 else DIAGNOSIS), make_env,
                                     limits=RolloutLimits(64, 4096), num_envs=4)
        trajectories = collector.collect([EpisodeSpec(seed=s) for s in range(4)], seed=0)
    errors = [t for t in trajectories if t.error is not None]
    finished = [t for t in trajectories if t.outcome and t.outcome["result"] in ("correct", "wrong", "partially")]
    assert len(errors) == 2 and len(finished) == 2
    assert all(t.truncation == "env" and not t.terminated and "500" in t.error for t in errors)
    assert all(sum(t.loss_mask()) == 0 for t in errors)  # out of any trainer's loss
    assert all(len(t.turns) == 2 for t in finished)  # the healthy episodes asked, then diagnosed


def test_backends_are_chosen_by_spec_string(monkeypatch):
    with serve([("ok", "It started two days ago.")]) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        env = ClinicalInquiryEnv(patient="openai:patient-model")
        env.reset(seed=0)
        obs, *_ = env.step(QUESTION)
        assert obs.startswith("It started two days ago.")
        assert url.requests[0].body["model"] == "patient-model"
    with pytest.raises(ValueError, match="judge: bad LLM client spec"):
        as_client("transformers:", "judge")
    with pytest.raises(ValueError, match="patient='llm' is not accepted; use 'rules', a Patient, 'openai:MODEL'"):
        ClinicalInquiryEnv(patient="llm")
