"""Environment arguments are checked when the environment is made (``gym.make``), with one line that names the
argument and what it accepts; a judge that the chosen reward preset would never call is an error too."""

from __future__ import annotations

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401  (registers the ids)
from clinical_gym.llm import OpenAICompatClient


class Judge:
    """An LLMClient that is never called here."""

    def chat(self, messages, **kw):  # pragma: no cover - construction only
        raise AssertionError("not called")

    complete = chat


def make_error(env_id: str, **kwargs) -> str:
    with pytest.raises(ValueError) as caught:
        gym.make(env_id, **kwargs)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


SPEC_WORDS = "'openai:MODEL', 'transformers:PATH' or an LLMClient"


@pytest.mark.parametrize("env_id", ["ClinicalInquiry-v1", "DiagnosticWorkup-v1", "Triage-v1", "MedicalQA-v1"])
@pytest.mark.parametrize("judge", ["rule", "gpt-4o", 3])
def test_a_judge_that_is_no_llm_client_is_refused(env_id, judge):
    kwargs = {"reward": "doctor_r1"} if env_id == "ClinicalInquiry-v1" else {}
    message = make_error(env_id, judge=judge, **kwargs)
    assert message.startswith("judge") and SPEC_WORDS in message and "None" in message


def test_a_judge_the_reward_preset_ignores_is_an_error():
    message = make_error("ClinicalInquiry-v1", judge=Judge())
    assert "judge is used only by reward='doctor_r1'" in message and "'doctoragent_rl'" in message
    assert "judge" in make_error("ClinicalInquiry-v1", judge="openai:gpt-4o")
    assert "reward='sparse'" in make_error("Triage-v1", judge=Judge(), reward="sparse")
    assert gym.make("ClinicalInquiry-v1", reward="doctor_r1", judge=Judge()).unwrapped.preset.judge is not None
    judge = gym.make("Triage-v1", judge="openai:judge-model").unwrapped.reward_fn.judge.client
    assert isinstance(judge, OpenAICompatClient) and judge.model == "judge-model"


def test_patient_and_world_model_specs_are_checked(tmp_path, monkeypatch):
    assert "patient='llm' is not accepted; use 'rules', a Patient, " + SPEC_WORDS in make_error(
        "ClinicalInquiry-v1", patient="llm")
    assert "patient must not be a int" in make_error("ClinicalInquiry-v1", patient=7)
    assert "patient must not be None" in make_error("ClinicalInquiry-v1", patient=None)
    assert f"no model folder '{tmp_path / 'missing'}'" in make_error(
        "ClinicalInquiry-v1", patient=f"transformers:{tmp_path / 'missing'}")
    monkeypatch.delenv("CLINICAL_GYM_LLM_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    assert "patient='openai:': no model" in make_error("ClinicalInquiry-v1", patient="openai:")
    assert "world_model='oracle' is not accepted; use 'record', a WorldModel, " + SPEC_WORDS in make_error(
        "DiagnosticWorkup-v1", world_model="oracle")
    assert "world_model_mode" in make_error("DiagnosticWorkup-v1", world_model_mode="poem")
    assert "judge='rule' is not accepted" in make_error("DiagnosticWorkup-v1", judge="rule")


def test_unknown_splits_name_the_choices():
    for env_id in ("ClinicalInquiry-v1", "Triage-v1"):
        assert "choose one of train, test or all" in make_error(env_id, split="validation")
