"""The simulated actors of a benchmark run, chosen by flags the way AgentClinic (``--patient_llm``) and tau2-bench
(``--user-llm``) choose them: ``--patient MODEL`` for ClinicalInquiry's patient, ``--world-model MODEL`` for
DiagnosticWorkup's EHR world model, each at its own ``--...-base-url`` (default: ``OPENAI_BASE_URL``).

``MODEL`` is a model name served by an OpenAI-compatible endpoint, or a client spec (``openai:MODEL``,
``transformers:PATH``). Without a flag each environment keeps its embedded, rule-based actor.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from clinical_gym.llm.base import LLMClient

SPEC_PREFIXES = ("openai:", "transformers:")


@dataclass(frozen=True)
class Actor:
    """One simulated actor a flag can set: the environment argument it fills and the family that has it."""

    setting: str
    flag: str
    family: str
    env_id: str


ACTORS = (Actor("patient", "--patient", "inquiry", "ClinicalInquiry-v1"),
          Actor("world_model", "--world-model", "workup", "DiagnosticWorkup-v1"))


def actor_client(model: str, base_url: str | None = None) -> LLMClient:
    """The LLM client of ``model`` (a served model name, or ``openai:MODEL`` / ``transformers:PATH``)."""
    from clinical_gym.llm import OpenAICompatClient, make_client

    if model.startswith("transformers:"):
        if base_url:
            raise ValueError(f"{model!r} runs locally; a base URL applies to served models only")
        return make_client(model)
    name = model.removeprefix("openai:")
    if not name:
        raise ValueError(f"no model name in {model!r}")
    return OpenAICompatClient(base_url=base_url, model=name)


def actor_kwargs(family: str, models: dict[str, tuple[str | None, str | None]],
                 env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The ``gym.make`` arguments the actor flags give an environment of ``family``: ``models`` maps each actor
    setting ("patient", "world_model") to (model, base URL). Setting one both ways is an error."""
    found: dict[str, Any] = {}
    for actor in ACTORS:
        model, base_url = models.get(actor.setting, (None, None))
        if model is None or actor.family != family:
            continue
        if actor.setting in env_kwargs:
            raise ValueError(f"the {actor.setting.replace('_', ' ')} is set twice: by {actor.flag} and in the "
                             "environment arguments; keep one")
        found[actor.setting] = actor_client(model, base_url)
    return found


def check_actor_flags(models: dict[str, tuple[str | None, str | None]], families: Iterable[str]) -> None:
    """``ValueError`` for an actor flag no environment of the run uses, or a base URL without its model."""
    families = set(families)
    for actor in ACTORS:
        model, base_url = models.get(actor.setting, (None, None))
        if base_url and not model:
            raise ValueError(f"{actor.flag}-base-url needs {actor.flag} MODEL")
        if model and actor.family not in families:
            raise ValueError(f"{actor.flag} sets the {actor.setting.replace('_', ' ')} of {actor.env_id}, which this "
                             "run does not play")
