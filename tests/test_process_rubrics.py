"""Process rubrics of tool tasks (Healthcare AI GYM, App. A.5): rubric items weigh 70% of the process dimension when
a task has them; required tools, required and forbidden elements by rule, others by the judge or left out."""

from __future__ import annotations

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401
from clinical_gym.llm import OpenAICompatClient
from clinical_gym.rewards.five_d import FiveDConfig
from clinical_gym.tool_env.policies import ExpertToolPolicy
from clinical_gym.tool_env.tasks import RubricItem
from fake_openai import serve

RUBRIC = [
    RubricItem(criterion="Assesses airway, breathing and circulation", points=8,
               rule={"kind": "called", "call": {"name": "assess_airway_breathing_circulation"}}),
    RubricItem(criterion="Orders a chest X-ray first", points=2,
               rule={"kind": "called", "call": {"name": "order_imaging"}}),
    RubricItem(criterion="Does not name thrombolysis", points=5,
               rule={"kind": "answer_omits", "none_of": ["thrombolysis"]}),
    RubricItem(criterion="Explains the plan kindly", points=5),  # no rule: the judge's, or left out
]


def expert_episode(task, **make):
    env = gym.make("Triage-v1", tasks=[task], **make)
    env.reset(seed=0, options={"task_id": task.id})
    policy = ExpertToolPolicy(task)
    while True:
        _, reward, terminated, truncated, info = env.step(policy(env.unwrapped.messages))
        if terminated or truncated:
            return reward, info


@pytest.fixture(scope="module")
def task():
    return gym.make("Triage-v1", split=None).unwrapped.tasks[0]


def test_rubric_items_weigh_70_percent_of_process(task):
    _, plain = expert_episode(task)
    base = plain["outcome"]["scores"]["process"]
    assert "rubric" not in plain["outcome"]["process"] and "rubric" not in plain["outcome"]

    reward, info = expert_episode(task.model_copy(update={"rubrics": RUBRIC}))
    out = info["outcome"]
    assert [(v["passed"], v["method"]) for v in out["rubric"]] == [(True, "rule"), (False, "rule"), (True, "rule"),
                                                                   (None, "ungraded")]
    rubric = (8 + 5) / (8 + 2 + 5)  # the ungraded item is out of both sums
    assert out["process"]["rubric"] == pytest.approx(rubric)
    assert out["scores"]["process"] == pytest.approx(0.3 * base + 0.7 * rubric)
    assert info["reward_components"]["process"] == pytest.approx(0.2 * (0.3 * base + 0.7 * rubric))
    assert reward == pytest.approx(sum(info["reward_components"].values()))

    _, custom = expert_episode(task.model_copy(update={"rubrics": RUBRIC}),
                               reward_config={"rubric_share": 0.5})
    assert custom["outcome"]["scores"]["process"] == pytest.approx(0.5 * base + 0.5 * rubric)
    with pytest.raises(ValueError, match="rubric_share"):
        FiveDConfig(rubric_share=1.5)


def test_a_rubric_nothing_could_grade_leaves_process_unchanged(task):
    _, plain = expert_episode(task)
    _, info = expert_episode(task.model_copy(update={"rubrics": RUBRIC[3:]}))
    assert info["outcome"]["scores"]["process"] == plain["outcome"]["scores"]["process"]
    assert info["outcome"]["rubric"][0]["passed"] is None


def test_the_judge_grades_items_without_a_rule_and_its_failure_truncates(task):
    with serve(default=lambda path, body: "PASS") as url:
        judge = OpenAICompatClient(base_url=url, model="judge", timeout=2, max_retries=0)
        _, info = expert_episode(task.model_copy(update={"rubrics": RUBRIC}), judge=judge)
    assert info["outcome"]["rubric"][3] == {"text": "Explains the plan kindly", "passed": True, "method": "judge",
                                            "error": None}
    assert info["outcome"]["process"]["rubric"] == pytest.approx((8 + 5 + 5) / 20)
    with serve(default=lambda path, body: "no idea") as url:
        judge = OpenAICompatClient(base_url=url, model="judge", timeout=2, max_retries=0)
        reward, info = expert_episode(task.model_copy(update={"rubrics": RUBRIC[3:], "assertions": []}), judge=judge)
    assert reward == 0.0 and "error" in info and "outcome" not in info
