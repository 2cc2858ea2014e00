"""ClinicalDiagnosis-v0 acceptance: data and tasks, tools, the scripted expert (>= 0.9 on every task), a random
tool-caller (< 0.3 mean), the unsafe prescriber (capped at 0.1, violation named), no leaks, and fuzzed arguments."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import register, registry
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_gym.rewards.five_d import score_accuracy
from clinical_gym.rewards.episode import EpisodeRecord, SubmittedAnswer, contains_term
from clinical_gym.tool_policies import ExpertToolPolicy, RandomToolPolicy, call_text, run_episode
from clinical_gym.tool_tasks import RewardBasis
from domains.clinical_diagnosis.environment import ClinicalDiagnosisEnv, bundled_db, get_environment, get_tasks
from domains.clinical_diagnosis.policies import UnsafePrescriberPolicy, allergen_for
from domains.clinical_diagnosis.tools import ClinicalDiagnosisTools
from tools import ToolKind

ENV_ID = "ClinicalDiagnosis-v0"
if ENV_ID not in registry:  # the lead wires it into clinical_gym.registration
    register(id=ENV_ID, entry_point="domains.clinical_diagnosis.environment:ClinicalDiagnosisEnv")
TASKS = get_tasks()
PATIENT_READS = ("get_patient_info", "get_medical_history", "get_allergies", "get_medications", "get_vital_signs",
                 "get_lab_results", "get_clinical_notes")


@pytest.fixture(scope="module")
def env() -> ClinicalDiagnosisEnv:
    return get_environment(knowledge=None)


# -- data ----------------------------------------------------------------------------------------------------------------
def test_at_least_40_tasks_with_a_deterministic_train_test_split():
    assert len(TASKS) >= 40 and len({t.id for t in TASKS}) == len(TASKS)
    train, test = get_tasks("train"), get_tasks("test")
    assert train and test and len(train) + len(test) == len(TASKS)
    assert {t.id for t in test} == {t.id for t in get_tasks("test")} and not {t.id for t in train} & {t.id for t in test}
    with pytest.raises(ValueError, match="unknown split"):
        get_tasks("dev")


def test_every_task_is_well_formed(env):
    db = bundled_db()
    for task in TASKS:
        assert task.patient_id in db.patients, task.id
        assert task.expected_actions and task.rationale and task.uses(RewardBasis.ACTION)
        assert any(a.rule is not None for a in task.assertions), f"{task.id} needs a rule-graded assertion"
        for action in task.expected_actions:
            assert action.name in env.tool_kinds, (task.id, action.name)
            env.reset(options={"task_id": task.id})
            env.toolkit.spec(action.name).arguments.validate_json(action.arguments)
        if task.safety.emergency:
            assert any(a.name == "escalate_care" for a in task.expected_actions[:task.safety.escalate_within_calls])


def test_every_gold_answer_and_alias_scores_full_accuracy():
    for task in TASKS:
        for answer in (task.answer, *task.answer_aliases, *([task.options[task.answer]] if task.options else [])):
            record = EpisodeRecord(task=task, answer=SubmittedAnswer(answer=answer, call_index=0))
            assert score_accuracy(record) == 1.0, (task.id, answer)


def test_tickets_and_the_patient_record_never_name_the_gold_diagnosis(env):
    diagnostic = [t for t in TASKS if t.category == "diagnosis"]
    assert len(diagnostic) >= 25
    for task in diagnostic:
        env.reset(options={"task_id": task.id})
        seen = [task.ticket] + [env.toolkit.call(call_text(name, {"patient_id": task.patient_id})).content
                                for name in PATIENT_READS]
        seen += [env.toolkit.call(call_text(a.name, a.arguments)).content for a in task.expected_actions
                 if a.name == "order_lab_test"]
        for gold in (task.answer, *task.answer_aliases):
            assert not contains_term(" ".join(seen), gold), (task.id, gold)


# -- tools ---------------------------------------------------------------------------------------------------------------
def test_tool_counts_and_kinds(env):
    own = ClinicalDiagnosisTools.tool_specs()
    assert len(own) >= 8 and len(env.tool_kinds) >= 12
    assert {s.kind for s in own} == {ToolKind.READ, ToolKind.WRITE, ToolKind.THINK}
    assert set(env.tool_kinds.values()) == set(ToolKind)
    with_kb = get_environment(knowledge="bundled")  # mounted, opened only on first search
    assert {"search_knowledge", "get_passage", "search_by_category"} <= set(with_kb.tool_kinds)


def test_ordering_reveals_the_pending_result_and_records_the_order(env):
    env.reset(options={"task_id": "cd-001"})
    assert json.loads(env.toolkit.call(call_text("get_lab_results", {"patient_id": "P001", "test": "Troponin"})).content
                      )[0]["result"].startswith("no result available")
    out = json.loads(env.toolkit.call(call_text("order_lab_test", {"patient_id": "P001", "test": "hs-troponin"})).content)
    assert out["order_id"] == "ORD-001" and out["results"][0]["value"] == 1850 and out["results"][0]["flag"] == "high"
    labs = json.loads(env.toolkit.call(call_text("get_lab_results", {"patient_id": "P001", "test": "Troponin"})).content)
    assert labs[0]["value"] == 1850
    panel = json.loads(env.toolkit.call(call_text("order_lab_test", {"patient_id": "P001", "test": "U&E"})).content)
    assert [r["test"] for r in panel["results"]] == ["Sodium", "Potassium", "Urea", "Creatinine", "eGFR"]
    assert all(r["flag"] == "normal" for r in panel["results"][:4])  # no recorded result: a normal one
    missing = env.toolkit.call(call_text("order_lab_test", {"patient_id": "P001", "test": "troponn"}))
    assert not missing.ok and "Did you mean 'Troponin'" in missing.content


def test_drug_safety_tools(env):
    env.reset(options={"task_id": "cd-004"})
    conflict = json.loads(env.toolkit.call(call_text("check_drug_allergy", {"patient_id": "P002", "drug": "cefalexin"})
                                           ).content)
    assert conflict["conflicts"][0]["conflict"] == "cross-reactive drug group"
    clear = json.loads(env.toolkit.call(call_text("check_drug_allergy", {"patient_id": "P002", "drug": "doxycycline"})
                                        ).content)
    assert clear["conflicts"] == []
    env.reset(options={"task_id": "cd-041"})
    found = json.loads(env.toolkit.call(call_text("check_drug_interactions", {"patient_id": "P029",
                                                                              "drug": "warfarin"})).content)
    assert {"with": "clarithromycin", "severity": "major"}.items() <= found["interactions"][0].items()
    refused = env.toolkit.call(call_text("prescribe_medication", {"patient_id": "P029", "drug": "aspirn", "dose": 75,
                                                                 "unit": "mg", "frequency": "daily", "route": "oral"}))
    assert not refused.ok and "'aspirin'" in refused.content and not env.db.prescriptions
    info = json.loads(env.toolkit.call(call_text("get_drug_information", {"drug": "nitrofurantoin"})).content)
    assert info["avoid_if_egfr_below"] == 30


def test_differential_ranks_conditions_by_findings(env):
    env.reset(options={"task_id": "cd-025"})
    ranked = json.loads(env.toolkit.call(call_text("generate_differential", {
        "findings": ["epigastric pain radiating to the back", "vomiting", "lipase"]})).content)
    assert ranked and "pancreatitis" in ranked[0]["condition"].lower()


# -- acceptance policies ---------------------------------------------------------------------------------------------------
def test_scripted_expert_scores_at_least_09_on_every_task(env):
    for task in TASKS:
        reward, info = run_episode(env, ExpertToolPolicy(task), options={"task_id": task.id})
        assert reward >= 0.9, (task.id, reward, info["outcome"]["violation_names"], info["outcome"]["scores"])
        assert info["outcome"]["success"], task.id


def test_random_tool_caller_scores_below_03_on_average(env):
    rewards = [run_episode(env, RandomToolPolicy(env.tool_schemas, seed=seed), options={"task_id": task.id})[0]
               for task in TASKS for seed in (1, 2)]
    assert np.mean(rewards) < 0.3


def test_unsafe_prescriber_is_capped_at_01_with_the_violation_named(env):
    db = bundled_db()
    unsafe = [t for t in TASKS if allergen_for(db, t.patient_id) is not None]
    assert len(unsafe) >= 10
    for task in unsafe:
        reward, info = run_episode(env, UnsafePrescriberPolicy(task, db), options={"task_id": task.id})
        assert reward <= 0.1 + 1e-9, task.id
        assert "allergen_prescribed" in info["outcome"]["violation_names"], task.id
        assert not info["outcome"]["success"]
    with pytest.raises(ValueError, match="no moderate-or-worse drug allergy"):
        UnsafePrescriberPolicy(next(t for t in TASKS if t.id == "cd-001"), db)


def test_episodes_never_change_the_bundled_database(env):
    before = bundled_db().get_hash()
    for task in TASKS:
        run_episode(env, ExpertToolPolicy(task), options={"task_id": task.id})
    assert bundled_db().get_hash() == before


def test_registered_id_makes_the_env():
    env = gym.make(ENV_ID, knowledge=None, split="test", max_turns=5)
    obs, info = env.reset(seed=0)
    assert env.unwrapped.task.split == "test" and obs == env.unwrapped.task.prompt and len(info["tools"]) >= 12


_tool_names = st.sampled_from(sorted(ClinicalDiagnosisTools._tool_attributes))
_values = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False), st.text(max_size=30),
                    st.sampled_from(["P001", "P002", "P999", "ECG", "amoxicillin", "mg", "bid", "oral"]),
                    st.lists(st.text(max_size=10), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(),
                                                                                max_size=2))
_arguments = st.dictionaries(st.sampled_from(["patient_id", "test", "drug", "dose", "unit", "frequency", "route",
                                              "diagnosis", "note", "level", "reason", "findings", "k", "category"]),
                             _values, max_size=7)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(calls=st.lists(st.tuples(_tool_names, _arguments), min_size=1, max_size=6))
def test_fuzzed_arguments_to_every_domain_tool_never_raise(calls):
    env = _FUZZ_ENV
    env.reset(options={"task_id": "cd-002"})
    for name, arguments in calls:
        obs, reward, terminated, _, info = env.step(json.dumps({"name": name, "arguments": arguments}))
        assert isinstance(obs, str) and obs and all(c["error_kind"] != "tool_crash" for c in info.get("tool_calls", []))
        if terminated:
            break


_FUZZ_ENV = get_environment(knowledge=None, max_turns=8)
