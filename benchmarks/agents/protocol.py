"""The protocol follower, the rule-based baseline of the tool domains: it follows the domain policy's working
order without any knowledge of the task's expected actions.

From the system prompt (the domain's ``policy.md`` and its tool list) and the ticket it plans: every READ tool that
needs nothing but the patient id, in the order the policy mentions them ("start with the patient's record: ..."),
then a knowledge search on the ticket. Then it submits: for a multiple-choice task the option whose words the
gathered results share most; otherwise the disease of the knowledge table that best explains the symptoms the
results name. It never writes (orders, prescriptions), so it does nothing unsafe, and it does not escalate either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym

from clinical_gym.benchmarks.agents.base import Agent
from clinical_gym.benchmarks.agents.conversations import ByOpening, opening
from clinical_gym.benchmarks.agents.disease_scoring import rank_diseases
from clinical_gym.benchmarks.agents.findings import Findings, read_statement
from clinical_gym.content_parts import text_of
from clinical_gym.rollout.policy import Message
from clinical_gym.rollout.scripted import ScriptedPolicy
from clinical_gym.tool_env.policies import SUBMIT, call_text

_TOOL_LINE = re.compile(r"^- (\w+) \((\w+)\):", re.M)
_TURNS = re.compile(r"at most (\d+) turns")
_PATIENT_ID = re.compile(r"\b[A-Z]{1,4}-?\d{2,}\b")
_OPTION = re.compile(r"^([A-Z])\. (.+)$", re.M)
_WORD = re.compile(r"[a-z0-9]+")
PATIENT_ARGUMENT = "patient_id"
SEARCH_TOOL, SEARCH_ARGUMENT = "search_knowledge", "query"


def plan(system_prompt: str, ticket: str, tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tool calls (JSON text) the protocol makes before submitting."""
    policy, _, listing = system_prompt.partition("## Tools")
    kinds = dict(_TOOL_LINE.findall(listing))
    required = {t["function"]["name"]: set(t["function"]["parameters"].get("required", ())) for t in tools}
    patient = _PATIENT_ID.search(ticket)
    reads = [name for name, kind in kinds.items()
             if kind == "read" and name in required and required[name] <= {PATIENT_ARGUMENT}
             and (patient is not None or PATIENT_ARGUMENT not in required[name])]
    reads.sort(key=lambda name: (policy.find(name) < 0, policy.find(name)))
    calls = [call_text(name, {PATIENT_ARGUMENT: patient.group(0)} if patient and PATIENT_ARGUMENT in required[name]
                       else {}) for name in reads]
    if required.get(SEARCH_TOOL) == {SEARCH_ARGUMENT}:
        calls.append(call_text(SEARCH_TOOL, {SEARCH_ARGUMENT: ticket.split("\n")[0][:200]}))
    turns = _TURNS.search(system_prompt)
    return calls[: int(turns.group(1)) - 1] if turns else calls


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def answer(ticket: str, results: str) -> tuple[str, str]:
    """The submitted answer and its reasoning, from the ticket and the text of the tool results."""
    options = dict(_OPTION.findall(ticket))
    if options:
        evidence = _words(results)
        best = max(options, key=lambda letter: (len(_words(options[letter]) & evidence), -ord(letter)))
        return best, f"Option {best} matches the record best."
    findings = Findings()
    read_statement(f"{ticket}\n{results}", findings)
    disease = rank_diseases(findings)[0]
    present = ", ".join(sorted(findings.present)) or "the record"
    return disease.name, f"The findings ({present}) fit {disease.name} best."


class ProtocolReply:
    """The protocol's replies; the tool schemas come from each episode's reset info."""

    def __init__(self) -> None:
        self.tools: ByOpening[list[Mapping[str, Any]]] = ByOpening()

    def on_reset(self, first_observation: str, info: Mapping[str, Any], env: gym.Env) -> None:
        self.tools.remember(first_observation, list(info.get("tools") or []))

    def __call__(self, messages: Sequence[Message]) -> str:
        ticket = opening(messages)
        system = next((text_of(m["content"]) for m in messages if m["role"] == "system"), "")
        calls = plan(system, ticket, self.tools.recall(messages))
        turn = sum(m["role"] == "assistant" for m in messages)
        if turn < len(calls):
            return calls[turn]
        replies = [text_of(m["content"]) for m in messages if m["role"] != "system" and m["role"] != "assistant"][1:]
        text, reasoning = answer(ticket, "\n".join(replies))
        return call_text(SUBMIT, {"answer": text, "reasoning": reasoning})


def protocol_agent() -> Agent:
    reply = ProtocolReply()
    return Agent("protocol follower", ScriptedPolicy(reply), on_reset=reply.on_reset)
