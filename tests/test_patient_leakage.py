"""No observation names the diagnosis before the episode ends, whatever the doctor asks."""

from __future__ import annotations

import gymnasium as gym

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.cases import library
from clinical_gym.cases.leakage import leaked_terms
from question_bank import STANDARD_QUESTIONS


def ask(q: str) -> str:
    return f"<think>screening</think><answer>Question: {q}</answer>"


def test_standard_questions_never_reveal_the_diagnosis():
    env = gym.make("ClinicalInquiry-v1", turn_budget=len(STANDARD_QUESTIONS) + 1)
    leaks = []
    for case in library():
        obs, info = env.reset(seed=0, options={"case_id": case.id})
        seen = [obs, info["system_prompt"], repr({k: v for k, v in info.items() if k != "system_prompt"})]
        for q in STANDARD_QUESTIONS:
            obs, reward, terminated, truncated, info = env.step(ask(q))
            assert not terminated
            seen += [obs, repr(info)]
        leaks += [(case.id, t[:80]) for t in seen if leaked_terms(t, case.diagnosis)]
    assert not leaks, leaks[:5]


def test_library_cases_pass_the_leakage_rule():
    from clinical_gym.cases.leakage import case_leaks

    problems = {c.id: case_leaks(c) for c in library() if case_leaks(c)}
    assert not problems
