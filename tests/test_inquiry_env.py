"""ClinicalInquiry-v1: the env contract (DESIGN.md), the reward presets, budgets, tests, and LLM backends."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import clinical_gym
from clinical_gym.cases import library
from clinical_gym.env import EpisodeOverError
from clinical_gym.llm import OpenAICompatClient
from clinical_gym.domains.inquiry.environment import ClinicalInquiryEnv
from fake_openai import serve

APPENDIX = "dig-appendicitis-01"


def q(text: str) -> str:
    return f"<think>t</think><answer>Question: {text}</answer>"


def dx(diagnosis: str, recommendation: str = "") -> str:
    return f"<think>t</think><answer>Diagnosis: {diagnosis}\nRecommendation: {recommendation}</answer>"


@pytest.fixture
def env():
    e = gym.make("ClinicalInquiry-v1")
    yield e
    e.close()


def test_every_registered_id_passes_check_env_without_warnings():
    for env_id in clinical_gym.env_ids():
        env = gym.make(env_id).unwrapped
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env, skip_render_check=False)


def test_full_episode_with_no_arguments(env):
    obs, info = env.reset(seed=0)
    assert obs.startswith("Patient's description: ")
    assert {"system_prompt", "turn_budget", "reward_preset", "specialty"} <= set(info)
    assert "outcome" not in info and "case_id" not in info
    obs, reward, terminated, truncated, info = env.step(q("When did it start?"))
    assert obs.endswith("Turn 1/10.") and reward == 1.0 and not terminated
    assert info["reward_components"] == {"information": 1.0}
    case = env.unwrapped.case
    obs, reward, terminated, truncated, info = env.step(dx(case.diagnosis.name, case.recommendation))
    assert terminated and not truncated
    assert info["outcome"]["result"] == "correct" and info["outcome"]["success"]
    assert reward == pytest.approx(10.0)
    assert info["case_id"] == case.id
    roles = [m["role"] for m in env.unwrapped.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]


def test_same_seed_same_episode():
    def run(seed):
        env = gym.make("ClinicalInquiry-v1", turn_budget="dynamic")
        obs, info = env.reset(seed=seed)
        out = [obs, info["turn_budget"]]
        for text in ["Where is the pain?", "Any fever?", "Do you smoke?"]:
            out.append(env.step(q(text))[:2])
        return out

    assert run(11) == run(11)
    assert any(run(11) != run(s) for s in range(12, 20))


def test_case_options(env):
    obs, _ = env.reset(options={"case_id": APPENDIX})
    assert env.unwrapped.case.id == APPENDIX
    other = library()[5]
    env.reset(options={"case": other})
    assert env.unwrapped.case is other
    env.reset(options={"case": other.model_dump(mode="json")})
    assert env.unwrapped.case == other
    with pytest.raises(ValueError, match="unknown case_id"):
        env.reset(options={"case_id": "nope"})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"cases": 1})


def test_stepping_a_finished_episode_raises(env):
    env.reset(seed=1)
    env.step(dx("something"))
    with pytest.raises(EpisodeOverError, match="call reset"):
        env.step(q("Hello?"))


@pytest.mark.parametrize("action,why", [(None, "must be text"), ("", "empty"), ("   ", "empty"),
                                        ("x" * 20_000, "too long"), (42, "must be text")])
def test_unusable_actions_become_observations(env, action, why):
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    assert why in obs and reward == -2.0 and not terminated
    assert info["reward_components"] == {"format": -2.0}


def test_doctoragent_rl_step_rewards(env):
    env.reset(seed=0, options={"case_id": APPENDIX})
    steps = [
        ("no tags at all", -2.0, "format"),
        (q("When did it start? And where?"), -2.0, "one_question"),
        (q("Do you smoke?"), 1.0, "information"),
        (q("Do you smoke?"), -2.0, "repeated"),
        (q("What is the capital of France?"), -2.0, "information"),
    ]
    for action, reward, part in steps:
        _, r, _, _, info = env.step(action)
        assert (r, list(info["reward_components"])) == (reward, [part]), action


def test_over_budget_terminates_with_penalty():
    env = gym.make("ClinicalInquiry-v1", turn_budget=2)
    env.reset(seed=0, options={"case_id": APPENDIX})
    assert not env.step(q("Do you smoke?"))[2]
    obs, reward, terminated, _, info = env.step(q("Any fever?"))
    assert terminated and reward == 1.0 - 5.0
    assert info["outcome"]["result"] == "wrong" and "budget" in info["outcome"]["reason"]


def test_force_final_diagnosis_gives_one_more_turn():
    env = gym.make("ClinicalInquiry-v1", turn_budget=1, force_final_diagnosis=True)
    env.reset(seed=0, options={"case_id": APPENDIX})
    obs, _, terminated, _, _ = env.step(q("Do you smoke?"))
    assert not terminated and "final diagnosis" in obs
    _, _, terminated, _, info = env.step(dx("Acute appendicitis", "surgery"))
    assert terminated and info["outcome"]["result"] == "correct"


def test_dynamic_budget_range():
    env = gym.make("ClinicalInquiry-v1", turn_budget="dynamic")
    budgets = {env.reset(seed=s)[1]["turn_budget"] for s in range(200)}
    assert budgets == set(range(2, 11))


def test_partial_and_wrong_outcomes(env):
    env.reset(seed=0, options={"case_id": APPENDIX})
    info = env.step(dx("Mesenteric adenitis; differential: acute appendicitis", "analgesia"))[4]
    assert info["outcome"]["result"] == "partially"
    env.reset(seed=0, options={"case_id": APPENDIX})
    info = env.step(dx("Migraine", "rest"))[4]
    assert info["outcome"]["result"] == "wrong" and info["outcome"]["diagnosis_f1"] == 0.0


def test_test_ordering_returns_case_results():
    env = gym.make("ClinicalInquiry-v1", allow_tests=True)
    obs, info = env.reset(seed=0, options={"case_id": APPENDIX})
    assert "Test:" in info["system_prompt"]
    obs, r, *_ = env.step("<answer>Test: Complete Blood Count</answer>")
    assert "White Blood Cells: Value: 14.8; Numeric Value: 14.8; Units: K/uL; Reference Range: 4 - 11; Flag: abnormal" in obs and r == 1.0
    obs, r, *_ = env.step("<answer>Test: abdominal examination</answer>")
    assert "McBurney" in obs
    obs, r, *_ = env.step("<answer>Test: MRI knee</answer>")
    assert "not available" in obs and r == -2.0


def test_doctor_r1_preset_with_rule_judge():
    env = gym.make("ClinicalInquiry-v1", reward="doctor_r1")
    env.reset(seed=0, options={"case_id": APPENDIX})
    _, r, _, _, info = env.step(q("Have you had a fever?"))
    assert info["reward_components"] == {"process": pytest.approx(1.0)}  # new fact + red-flag screening
    _, r, _, _, info = env.step(q("Have you had a fever?"))
    assert info["reward_components"] == {"repeated": -0.2}
    _, r, _, _, info = env.step(q("Do you smoke?"))
    assert r == pytest.approx(0.6)
    _, r, _, _, info = env.step("bad")
    assert r == pytest.approx(-0.2)
    _, r, terminated, _, info = env.step("<answer>Recommendation: Acute appendicitis, refer to surgery.</answer>")
    assert terminated and info["reward_components"] == {"outcome": 1.0}


def test_reward_config_overrides_and_rejects_unknown_keys():
    env = gym.make("ClinicalInquiry-v1", reward_config={"refused": -1.0})
    env.reset(seed=0, options={"case_id": APPENDIX})
    assert env.step(q("What is the capital of France?"))[1] == -1.0
    with pytest.raises(ValueError, match="unknown reward_config keys"):
        gym.make("ClinicalInquiry-v1", reward_config={"bogus": 1})
    with pytest.raises(ValueError, match="unknown reward preset"):
        gym.make("ClinicalInquiry-v1", reward="nope")


def test_llm_patient_over_http_and_leak_replacement():
    case = library()[0]
    script = [("ok", "It started yesterday."), ("ok", f"The doctor said it might be {case.diagnosis.name}.")]
    with serve(script) as url:
        client = OpenAICompatClient(base_url=url, model="patient", timeout=2, max_retries=0)
        env = ClinicalInquiryEnv(patient=client)
        env.reset(seed=0, options={"case_id": case.id})
        obs, r, _, _, info = env.step(q("When did it start?"))
        assert obs.startswith("It started yesterday.") and r == 1.0
        sent = url.requests[0].body
        assert sent["messages"][0]["role"] == "system" and case.diagnosis.name not in sent["messages"][0]["content"]
        assert sent["messages"][-1] == {"role": "user", "content": "When did it start?"}  # no <think>, no tags
        obs, r, _, _, info = env.step(q("What did they say?"))
        assert case.diagnosis.name.lower() not in obs.lower() and info["patient_leak_replaced"]


def test_llm_patient_failure_truncates_the_episode_with_an_error(caplog):
    with serve([("status", 500)] * 3) as url:
        client = OpenAICompatClient(base_url=url, model="patient", timeout=1, max_retries=1, backoff=0.01)
        env = ClinicalInquiryEnv(patient=client)
        env.reset(seed=0)
        with caplog.at_level("WARNING", logger="clinical_gym"):
            obs, r, terminated, truncated, info = env.step(q("When did it start?"))
        assert truncated and not terminated and r == 0.0 and "500" in info["error"] and "outcome" not in info
        assert obs == "The consultation ended because the patient simulator failed."
        assert "patient simulator failed" in caplog.text and "500" in caplog.text


def test_doctor_r1_with_llm_judge():
    scores = '{"safety": 4, "information_gathering": 3, "reasoning": 4, "faithfulness": 4, "completeness": 3, ' \
             '"medical_accuracy": 4, "empathy_clarity": 2, "epistemic_humility": 4}'
    with serve(default=lambda path, body: scores) as url:
        judge = OpenAICompatClient(base_url=url, model="judge", timeout=2, max_retries=0)
        env = gym.make("ClinicalInquiry-v1", reward="doctor_r1", judge=judge)
        env.reset(seed=0, options={"case_id": APPENDIX})
        _, r, _, _, info = env.step(q("Have you had a fever?"))
        assert r == pytest.approx(0.719, abs=1e-3)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="turn_budget"):
        ClinicalInquiryEnv(turn_budget=0)
    with pytest.raises(ValueError, match="patient='martian' is not accepted"):
        ClinicalInquiryEnv(patient="martian")
    with pytest.raises(ValueError, match="no cases"):
        ClinicalInquiryEnv(cases=[])


def test_render_ansi():
    env = gym.make("ClinicalInquiry-v1", render_mode="ansi")
    env.reset(seed=0)
    env.step(q("Any fever?"))
    text = env.render()
    assert "[user] Patient's description" in text and "[assistant]" in text
