"""Benchmark agents on the real environments: the checklist doctor's review of systems and reading of replies, the
test-orderer, the protocol follower, the oracle, the random agent, and agent specs."""

from __future__ import annotations

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.benchmarks.agents import AgentSettings, parse_agent_specs
from clinical_gym.benchmarks.agents.checklist import REVIEW_OF_SYSTEMS, checklist_reply, heard
from clinical_gym.benchmarks.agents.disease_scoring import rank_diseases
from clinical_gym.benchmarks.agents.exam_orderer import working_hypothesis
from clinical_gym.benchmarks.agents.findings import Findings, read_answer, read_statement
from clinical_gym.benchmarks.agents.random_agent import random_text_reply
from clinical_gym.cases.disease_table import find_disease
from clinical_gym.cases.topic_match import find_topics
from clinical_gym.rollout import Prompt

SETTINGS = AgentSettings(seed=0)


def play(env_id: str, agent, case_id: str, **env_kwargs) -> dict:
    """One episode with a built agent (its reset hook included); the terminal info."""
    env = gym.make(env_id, **env_kwargs)
    obs, info = env.reset(seed=0, options={"case_id": case_id})
    if agent.on_reset is not None:
        agent.on_reset(obs, info, env.unwrapped)
    while True:
        action = agent.policy.generate([Prompt(list(env.unwrapped.messages), 256)])[0].text
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info


def test_every_review_of_systems_question_names_exactly_its_symptoms():
    for _, question, symptoms in REVIEW_OF_SYSTEMS:
        assert find_topics(question).explicit_symptoms == symptoms, question
        assert question.count("?") == 1


def test_replies_are_read_as_present_and_absent_symptoms():
    findings = Findings()
    read_answer(frozenset({"fever", "chills", "weight_loss"}),
                "Um, I've been running a fever since Tuesday. No, I haven't had any chills or weight loss.", findings)
    assert findings.present == {"fever"} and findings.absent == {"chills", "weight_loss"}
    read_statement("No swollen ankles, but I get out of breath on the stairs.", findings)
    assert "leg_swelling" in findings.absent and "shortness_of_breath" in findings.present


def test_the_disease_table_ranks_a_textbook_presentation_first():
    findings = Findings(present={"abdominal_pain", "nausea", "fever", "appetite_loss"},
                        absent={"diarrhea", "dysuria", "cough"}, age=22, sex="male")
    top = [d.name for d in rank_diseases(findings)[:3]]
    assert find_disease("acute appendicitis").name in top


def test_checklist_doctor_asks_its_review_then_diagnoses_appendicitis():
    agent = parse_agent_specs("baseline")[0].build("inquiry", SETTINGS)
    info = play("ClinicalInquiry-v1", agent, "dig-appendicitis-01")
    assert info["outcome"]["result"] == "correct" and info["turn"] == len(REVIEW_OF_SYSTEMS) + 1


def test_checklist_doctor_keeps_to_a_short_budget():
    env = gym.make("ClinicalInquiry-v1", turn_budget=3)
    env.reset(seed=0, options={"case_id": "res-asthma-01"})
    for _ in range(2):
        env.step(checklist_reply(env.unwrapped.messages))
    assert "<answer>Diagnosis:" in checklist_reply(env.unwrapped.messages)
    assert heard(env.unwrapped.messages).present  # something was learned on the way


def test_test_orderer_orders_the_key_exams_of_its_hypothesis():
    agent = parse_agent_specs("baseline")[0].build("workup", SETTINGS)
    info = play("DiagnosticWorkup-v1", agent, "gen-cystitis-01")
    disease = working_hypothesis(gym.make("DiagnosticWorkup-v1").reset(options={"case_id": "gen-cystitis-01"})[0])
    assert info["outcome"]["exams_ordered"] == list(disease.key_exams)
    assert info["outcome"]["result"] == "correct" and info["outcome"]["exam_f1"] == 1.0


@pytest.mark.parametrize("env_id, family, case_id", [("ClinicalInquiry-v1", "inquiry", "res-pe-01"),
                                                     ("DiagnosticWorkup-v1", "workup", "res-pe-01")])
def test_oracle_reaches_the_ceiling_on_the_case_families(env_id, family, case_id):
    agent = parse_agent_specs("oracle")[0].build(family, SETTINGS)
    assert agent.privileged and "ground truth" in agent.kind
    info = play(env_id, agent, case_id)
    assert info["outcome"]["result"] == "correct"


def test_tool_agents_follow_the_protocol_and_the_oracle_the_task():
    env = gym.make("ClinicalDiagnosis-v1", split="test")
    task = env.unwrapped.tasks[0]
    oracle = parse_agent_specs("oracle")[0].build("tool", SETTINGS)
    protocol = parse_agent_specs("protocol")[0].build("tool", SETTINGS)
    assert play("ClinicalDiagnosis-v1", oracle, task.id, split="test")["outcome"]["success"]
    outcome = play("ClinicalDiagnosis-v1", protocol, task.id, split="test")["outcome"]
    names = [c["name"] for c in outcome["tool_calls"]]
    assert names[0] == "get_patient_info" and names[-1] == "submit_answer"
    assert not any(c["kind"] == "write" for c in outcome["tool_calls"])  # it never writes


def test_random_agent_is_random_text_fixed_by_seed_and_conversation():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}]
    reply = random_text_reply(3)
    assert reply(messages) == reply(messages) != random_text_reply(4)(messages)
    longer = [*messages, {"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}]
    assert reply(messages) != reply(longer)
    agent = parse_agent_specs("random")[0].build("inquiry", SETTINGS)
    info = play("ClinicalInquiry-v1", agent, "res-pe-01")
    assert info["outcome"]["result"] == "wrong"


def test_agent_specs_parse_labels_and_reject_bad_ones():
    specs = parse_agent_specs("oracle, grpo=checkpoint:runs/demo/grpo/,openai:gpt-x,transformers:/m/a.gguf")
    assert [(s.label, s.name, s.target) for s in specs] == [
        ("oracle", "oracle", ""), ("grpo", "checkpoint", "runs/demo/grpo/"), ("openai:gpt-x", "openai", "gpt-x"),
        ("transformers:a.gguf", "transformers", "/m/a.gguf")]
    for bad, message in (("wizard", "bad agent spec"), ("checkpoint", "bad agent spec"), ("random,random", "twice"),
                         ("", "no agent")):
        with pytest.raises(ValueError, match=message):
            parse_agent_specs(bad)
    with pytest.raises(ValueError, match="plays the inquiry family only"):
        parse_agent_specs("checklist")[0].build("workup", SETTINGS)
