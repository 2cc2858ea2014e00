"""Putting retrieved experiences in front of the agent's prompt, in Doctor-R1's format, within a token budget::

    Experience References:
    1. State: Patient: I have had a dry cough for three weeks.
       Action: Question: Have you coughed up any blood?
    2. State: ...
       Action: ...

    Original Question:
    <prompt>
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from clinical_gym.experience.store import Experience

HEADER = "Experience References:"
SEPARATOR = "\n\nOriginal Question:\n"
INDENT = "   "

TokenCounter = Callable[[str], int]


def approx_tokens(text: str) -> int:
    """A tokenizer-free token estimate: one token per four characters, rounded up (English text, BPE vocabularies)."""
    return math.ceil(len(text) / 4)


def format_reference(number: int, experience: Experience) -> str:
    """One numbered reference: ``N. State: ...`` then ``   Action: ...``; further lines are indented alike."""
    state = f"\n{INDENT}".join(experience.state.splitlines())
    action = " ".join(experience.action.split())
    return f"{number}. State: {state}\n{INDENT}Action: {action}"


def fitting(experiences: Sequence[Experience], budget_tokens: int,
            count_tokens: TokenCounter = approx_tokens) -> list[Experience]:
    """The experiences, in order, whose references fit together in ``budget_tokens`` (references and headers
    counted by ``count_tokens``); one that does not fit is skipped and the next one tried."""
    chosen: list[Experience] = []
    for experience in experiences:
        if count_tokens(_block([*chosen, experience])) <= budget_tokens:
            chosen.append(experience)
    return chosen


def format_injection(prompt: str, experiences: Sequence[Experience]) -> str:
    """``prompt`` preceded by the numbered references to ``experiences`` (``prompt`` itself when there are none)."""
    return _block(experiences) + prompt if experiences else prompt


def inject(prompt: str, experiences: Sequence[Experience], budget_tokens: int,
           count_tokens: TokenCounter = approx_tokens) -> str:
    """``prompt`` preceded by the experiences that fit in ``budget_tokens`` tokens (``fitting``)."""
    return format_injection(prompt, fitting(experiences, budget_tokens, count_tokens))


def strip_injection(text: str) -> str:
    """The original prompt of an injected text (``text`` itself when it holds no experience references)."""
    if not text.startswith(HEADER + "\n"):
        return text
    _, found, prompt = text.partition(SEPARATOR)
    return prompt if found else text


def _block(experiences: Sequence[Experience]) -> str:
    references = (format_reference(number, e) for number, e in enumerate(experiences, 1))
    return HEADER + "\n" + "\n".join(references) + SEPARATOR
