"""The oracle: an UPPER BOUND, not a fair agent. It reads each episode's ground truth (the case or task behind the
environment, through ``env.unwrapped``) and acts on it; reports label it "oracle (ground truth)".

* ClinicalInquiry: the checklist doctor's review-of-systems questions (so it earns the same information reward),
  then the case's diagnosis and recommendation;
* DiagnosticWorkup: the case's key examinations, one per turn, then its diagnosis (in the single-turn protocol, the
  step's key examination, or the diagnosis at the diagnosis step);
* tool domains: ``clinical_gym.tool_env.policies.ExpertToolPolicy``: the task's expected actions, then the gold answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym

from clinical_gym.benchmarks.agents.base import Agent
from clinical_gym.benchmarks.agents.checklist import REVIEW_OF_SYSTEMS, turn_budget
from clinical_gym.benchmarks.agents.conversations import ByOpening
from clinical_gym.cases import Case
from clinical_gym.rollout.policy import Message
from clinical_gym.rollout.scripted import ScriptedPolicy
from clinical_gym.tool_env.policies import ExpertToolPolicy


class OracleReply:
    """Replies from the ground truth recorded at each reset."""

    def __init__(self, family: str) -> None:
        self.family = family
        self.truth: ByOpening[Any] = ByOpening()

    def on_reset(self, opening: str, info: Mapping[str, Any], env: gym.Env) -> None:
        self.truth.remember(opening, (env.case, info.get("single_turn_step")))

    def __call__(self, messages: Sequence[Message]) -> str:
        truth, step = self.truth.recall(messages)
        turn = sum(m["role"] == "assistant" for m in messages)
        if self.family == "inquiry":
            return inquiry_reply(truth, turn, turn_budget(messages))
        if self.family == "workup":
            return workup_reply(truth, turn if step is None else int(step) if step.isdigit() else len(truth.key_exams))
        return ExpertToolPolicy(truth)(messages)


def inquiry_reply(case: Case, turn: int, budget: int) -> str:
    if turn < min(len(REVIEW_OF_SYSTEMS), budget - 1):
        return f"<answer>Question: {REVIEW_OF_SYSTEMS[turn][1]}</answer>"
    recommendation = " ".join(case.recommendation.split())
    return (f"<think>Ground truth.</think><answer>Diagnosis: {case.diagnosis.name}\n"
            f"Recommendation: {recommendation}</answer>")


def workup_reply(case: Case, turn: int) -> str:
    if turn < len(case.key_exams):
        return ("Current diagnosis: known\nBased on the current findings, the following additional investigation(s) "
                f"are needed: {case.key_exams[turn]}\nReason: a key examination.")
    return ("The available information is sufficient to make a diagnosis.\n"
            f"Diagnosis: {case.diagnosis.name}\nReason: ground truth.")


def oracle_agent(family: str) -> Agent:
    reply = OracleReply(family)
    return Agent("oracle (ground truth)", ScriptedPolicy(reply), on_reset=reply.on_reset, privileged=True)
