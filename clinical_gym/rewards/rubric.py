"""Weighted rubric scores: physician-written criteria, each with points, judged met or not (DiagBench, HealthBench,
Healthcare AI GYM's process rubrics).

The score of one episode is the points of the met criteria over the points of all criteria that could be judged
(DiagGym App. A.1.2: ``sum_{r met} w_r / sum_{r} w_r``). Criteria with negative points (HealthBench-style penalties
for an undesirable step) subtract when met and are left out of the denominator; the score is clipped to [0, 1].
A criterion that could not be judged (no rule applies and no judge was configured) is left out of both sums and
counted apart, so that an unjudged criterion never reads as an unmet one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from clinical_gym.llm.base import LLMClient

RUBRIC_JUDGE_PROMPT = """You check one criterion against a clinical agent's diagnostic workup.
Read the conversation: the agent's orders and conclusions are its own turns; the results and the patient's \
presentation come from the environment. Decide whether the agent's actions over the whole conversation satisfy \
the criterion.

Conversation:
{conversation}

Criterion:
{criterion}

Reply with one word: Yes if the criterion is satisfied, No if it is not."""
"""The rubric judge's prompt, after DiagGym's rubric-adherence prompt (App., prompt 13): one criterion at a time,
the whole conversation, a Yes/No verdict."""


@dataclass(frozen=True)
class RubricVerdict:
    """One criterion's verdict: ``met`` None when it could not be judged; ``method`` "rule", "judge" or
    "ungraded"."""

    criterion: str
    points: float
    met: bool | None
    method: str


def weighted_rubric_score(verdicts: Iterable[RubricVerdict]) -> float | None:
    """Points of the met criteria over the points of the positive criteria judged, clipped to [0, 1]; None when no
    positive criterion was judged."""
    judged = [v for v in verdicts if v.met is not None]
    possible = sum(v.points for v in judged if v.points > 0)
    if possible <= 0:
        return None
    earned = sum(v.points for v in judged if v.met)
    return min(1.0, max(0.0, earned / possible))


def rubric_summary(verdicts: Sequence[RubricVerdict]) -> dict[str, object]:
    """What an outcome reports about a rubric: the weighted score, how many criteria were judged and met, the share
    of the positive points that could be judged, and each verdict."""
    positive = sum(v.points for v in verdicts if v.points > 0)
    judged = sum(v.points for v in verdicts if v.points > 0 and v.met is not None)
    return {"rubric_score": weighted_rubric_score(verdicts),
            "rubric_items": len(verdicts),
            "rubric_judged": sum(v.met is not None for v in verdicts),
            "rubric_met": sum(bool(v.met) for v in verdicts),
            "rubric_coverage": judged / positive if positive > 0 else 0.0,
            "rubric_verdicts": [{"criterion": v.criterion, "points": v.points, "met": v.met, "method": v.method}
                                for v in verdicts]}


def parse_yes_no(reply: str) -> bool:
    """True for a reply whose verdict is Yes, False for No (the last of the two words outside ``<think>``);
    ValueError when there is neither."""
    text = re.sub(r"<think>.*?</think>", " ", reply, flags=re.I | re.S)
    words = re.findall(r"\b(yes|no)\b", text, flags=re.I)
    if not words:
        raise ValueError("no Yes/No verdict found")
    return words[-1].lower() == "yes"


class LLMRubricJudge:
    """Judges one criterion at a time against a conversation (DiagGym's rubric-adherence judge). Keeps no
    per-episode state; raises ``LLMError`` when the client fails or answers neither Yes nor No twice."""

    def __init__(self, client: LLMClient, *, max_tokens: int = 64, seed: int | None = None) -> None:
        self.client = client
        self.max_tokens = max_tokens
        self.seed = seed

    def met(self, conversation: Sequence[dict[str, str]], criterion: str) -> bool:
        from clinical_gym.rewards.llm_judge import ask_judge

        text = "\n".join(f"{'Agent' if m['role'] == 'assistant' else 'Environment'}: {m['content']}"
                         for m in conversation if m["role"] != "system")
        prompt = RUBRIC_JUDGE_PROMPT.format(conversation=text or "(empty)", criterion=criterion)
        return ask_judge(self.client, [{"role": "user", "content": prompt}], parse_yes_no,
                         max_tokens=self.max_tokens, seed=self.seed, what="rubric judge")
