"""Playing any registered environment by hand, in a terminal (``clinical-gym play ENV``).

A ``PlaySession`` runs one episode: the person types what the agent would send (a question, an exam order, a tool
call), and commands that cost no turn (``help``, ``prompt``, ``tools`` / ``tests`` / ``exams``, ``record``,
``quit``) show the rules, the catalogue and what has been revealed. Each environment family has a ``PlayFamily``
(``inquiry``, ``workup``, ``tools`` modules) that turns typed lines into the family's actions.
"""

from __future__ import annotations

import importlib

from clinical_gym.play.session import PlayFamily, PlayResult, PlaySession, Typed
from clinical_gym.registration import env_family

FAMILY_CLASSES = {"inquiry": "clinical_gym.play.inquiry:InquiryFamily",
                  "workup": "clinical_gym.play.workup:WorkupFamily",
                  "tool": "clinical_gym.play.tools:ToolFamily"}

__all__ = ["FAMILY_CLASSES", "PlayFamily", "PlayResult", "PlaySession", "Typed", "family_for"]


def family_for(env_id: str) -> type[PlayFamily]:
    """The ``PlayFamily`` class that plays ``env_id``."""
    family = env_family(env_id)
    if family not in FAMILY_CLASSES:
        raise ValueError(f"{env_id}: no way to play the {family!r} family by hand")
    module, _, name = FAMILY_CLASSES[family].partition(":")
    return getattr(importlib.import_module(module), name)
