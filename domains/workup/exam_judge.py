"""Exam matching with an LLM judge (DiagGym prompts 10/11 in spirit): does an ordered exam cover a reference exam?

The catalogue's alias and sub-item rule decides first; the LLM is asked only about pairs the rule rejects, and
each pair is asked once per judge (cached), so an episode costs at most len(ordered) x len(reference) calls.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clinical_gym.llm.base import LLMClient, LLMError
from clinical_gym.domains.workup.catalogue import load_catalogue

EXAM_MATCH_PROMPT = """Two medical examination names are given. Answer "yes" if they refer to the same examination, or if one is a component or sub-item of the other (for example "hemoglobin" and "complete blood count"); otherwise answer "no".
Examination A: {a}
Examination B: {b}
Answer with one word: yes or no."""


@dataclass
class LLMExamJudge:
    """``same(a, b)``: the catalogue rule, else the LLM's yes/no. Raises ``LLMError`` on an unusable reply."""

    client: LLMClient
    max_tokens: int = 8
    _cache: dict[tuple[str, str], bool] = field(default_factory=dict, repr=False)

    def same(self, a: str, b: str) -> bool:
        if load_catalogue().match(a, b):
            return True
        key = (a.strip().lower(), b.strip().lower())
        if key not in self._cache:
            reply = self.client.chat([{"role": "user", "content": EXAM_MATCH_PROMPT.format(a=a, b=b)}],
                                     max_tokens=self.max_tokens, temperature=0.0)
            word = re.search(r"\b(yes|no)\b", reply.lower())
            if word is None:
                raise LLMError(f"exam judge gave no yes/no answer: {reply[:80]!r}")
            self._cache[key] = word.group(1) == "yes"
        return self._cache[key]
