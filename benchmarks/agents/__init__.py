"""Benchmark agents, chosen by a spec string ``[LABEL=]SPEC``:

* ``random``: uniformly random text from the action space (the floor);
* ``baseline``: the family's rule-based agent: the checklist doctor (ClinicalInquiry), the test-orderer
  (DiagnosticWorkup), the protocol follower (tool domains); ``checklist``, ``test-orderer`` and ``protocol`` name
  one of them (its family only);
* ``oracle``: the upper bound, acting on the ground truth (reports say so);
* ``transformers:PATH``: a local transformers model (a folder, a cached hub id, or a ``.gguf`` file);
* ``openai:MODEL``: a model behind an OpenAI-compatible endpoint (``AgentSettings.base_url``), calling the tools of
  tool environments natively (``AgentSettings.tool_calling``);
* ``checkpoint:PATH``: a checkpoint of our trainers, LoRA adapter or full weights.

``LABEL=`` names the agent in results and reports (default: the spec, a path shortened to its last part).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from clinical_gym.benchmarks.agents.base import FAMILIES, Agent
from clinical_gym.benchmarks.agents.checklist import checklist_reply
from clinical_gym.benchmarks.agents.exam_orderer import exam_orderer_reply
from clinical_gym.benchmarks.agents.oracle import oracle_agent
from clinical_gym.benchmarks.agents.protocol import protocol_agent
from clinical_gym.benchmarks.agents.random_agent import random_agent
from clinical_gym.rollout.scripted import ScriptedPolicy

RULE_BASED = {"checklist": "inquiry", "test-orderer": "workup", "protocol": "tool"}
SCRIPTED = ("random", "baseline", "oracle", *RULE_BASED)
MODEL_KINDS = ("transformers", "openai", "checkpoint")

__all__ = ["FAMILIES", "TOOL_CALLING", "Agent", "AgentSettings", "AgentSpec", "parse_agent_specs"]


TOOL_CALLING = ("native", "text")


@dataclass(frozen=True)
class AgentSettings:
    """What model-backed and random agents are built with (``seed``: the random agent's). ``tool_calling``:
    how ``openai:`` agents call tools in tool environments: "native" (the schemas sent as the API's ``tools``, the
    reply's ``tool_calls`` turned into the action) or "text" (tools listed in the system prompt only, calls written
    as text)."""

    seed: int = 0
    temperature: float = 0.0
    base_url: str | None = None
    base_model: str | None = None
    tool_calling: str = "native"

    def __post_init__(self) -> None:
        if self.tool_calling not in TOOL_CALLING:
            raise ValueError(f"tool calling must be {' or '.join(TOOL_CALLING)}, got {self.tool_calling!r}")


@dataclass
class AgentSpec:
    """A parsed agent spec; ``build`` makes the agent for an environment family (model agents load once)."""

    label: str
    name: str
    target: str = ""
    _loaded: Agent | None = field(default=None, init=False, repr=False)

    @property
    def is_model(self) -> bool:
        return self.name in MODEL_KINDS

    def plays(self, family: str) -> bool:
        return RULE_BASED.get(self.name, family) == family

    def build(self, family: str, settings: AgentSettings) -> Agent:
        if family not in FAMILIES:
            raise ValueError(f"no benchmark agents for environment family {family!r}")
        if not self.plays(family):
            raise ValueError(f"agent {self.name!r} plays the {RULE_BASED[self.name]} family only; use 'baseline' "
                             "for each environment's rule-based agent")
        if self.is_model:
            if self._loaded is None:
                self._loaded = _load_model_agent(self.name, self.target, settings)
            return self._loaded
        if self.name == "random":
            return random_agent(settings.seed)
        if self.name == "oracle":
            return oracle_agent(family)
        return _rule_based(family)


def _rule_based(family: str) -> Agent:
    if family == "inquiry":
        return Agent("checklist doctor", ScriptedPolicy(checklist_reply))
    if family == "workup":
        return Agent("test-orderer", ScriptedPolicy(exam_orderer_reply))
    return protocol_agent()


def _load_model_agent(name: str, target: str, settings: AgentSettings) -> Agent:
    from clinical_gym.benchmarks.agents import models

    if name == "openai":
        return models.endpoint_agent(target, settings.base_url, settings.temperature,
                                     native_tools=settings.tool_calling == "native")
    if name == "transformers":
        return models.transformers_agent(target, settings.temperature)
    return models.checkpoint_agent(target, settings.base_model, settings.temperature)


def parse_agent_specs(text: str) -> list[AgentSpec]:
    """Specs from ``"oracle,baseline,grpo=checkpoint:runs/demo"``; ``ValueError`` names a bad or repeated one."""
    specs: list[AgentSpec] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        label, spec = item.split("=", 1) if "=" in item.split(":", 1)[0] else ("", item)
        name, _, target = spec.partition(":")
        if name in SCRIPTED and not target:
            specs.append(AgentSpec(label or name, name))
        elif name in MODEL_KINDS and target:
            short = Path(target.rstrip("/")).name or target
            specs.append(AgentSpec(label or f"{name}:{short}", name, target))
        else:
            raise ValueError(f"bad agent spec {item!r}: use {', '.join(SCRIPTED)}, or transformers:PATH, "
                             "openai:MODEL, checkpoint:PATH (optionally LABEL=SPEC)")
    if not specs:
        raise ValueError("no agent given")
    labels = [s.label for s in specs]
    repeated = sorted({x for x in labels if labels.count(x) > 1})
    if repeated:
        raise ValueError(f"agent label(s) {', '.join(repeated)} given twice; name them apart with LABEL=SPEC")
    return specs
