"""The drug reference under the names its first users imported: a view of ``clinical_gym.drugs`` (the one source of
drug knowledge). New code should import ``clinical_gym.drugs`` and call ``reference()``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from clinical_gym.drugs import Drug, Interaction, reference
from clinical_gym.drugs.reference import AllergyConflict

__all__ = ["DRUGS", "Drug", "Interaction", "allergy_conflict", "allergy_group", "drugs_mentioned", "find_drug",
           "interaction", "interactions_with"]


def find_drug(name: str) -> Drug | None:
    """The drug ``name`` refers to (any alias, case or punctuation; a trailing strength or form is ignored), or None."""
    return reference().find(name)


def drugs_mentioned(text: str) -> tuple[Drug, ...]:
    """The drugs named in ``text``, in order of first mention, without repeats."""
    return reference().mentioned(text)


def allergy_group(substance: str) -> str | None:
    """The allergy group a recorded allergen belongs to, or None."""
    return reference().allergy_group_of(substance)


def allergy_conflict(substance: str, drug: Drug) -> AllergyConflict | None:
    """"same", "cross" or None: how prescribing ``drug`` conflicts with an allergy to ``substance``."""
    return reference().allergy_conflict(substance, drug)


def interaction(a: Drug, b: Drug) -> Interaction | None:
    """The most severe interaction rule between two different drugs, or None."""
    return reference().interaction(a, b)


def interactions_with(drug: Drug, others: Iterable[str]) -> list[Interaction]:
    """The interactions of ``drug`` with each of ``others`` (unknown names are skipped)."""
    return reference().interactions_with(drug, others)


def __getattr__(name: str) -> Any:
    if name == "DRUGS":  # loaded on first use, not at import
        drugs: Mapping[str, Drug] = reference().drugs
        return drugs
    raise AttributeError(name)
