"""ToolDomainEnv, the base of the tool-using domains: reset options, the system prompt and tool schemas, dispatch on
an episode-local database, bad input as observations, episode end, the outcome, check_env and fuzzing.

The domain used is ClinicalDiagnosis over a two-patient database written here (tau2-bench style injection)."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import pytest
from gymnasium.envs.registration import register, registry
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_gym.env import EpisodeOverError
from clinical_gym.llm.base import LLMError
from clinical_gym.tool_env.env import ToolDomainEnv
from clinical_gym.tool_env.policies import ExpertToolPolicy, call_text, run_episode
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.clinical_diagnosis.data_model import ClinicalDiagnosisDB
from clinical_gym.domains.clinical_diagnosis.environment import bundled_db, get_environment

ENV_ID = "ClinicalDiagnosis-v1"
if ENV_ID not in registry:  # the lead wires it into clinical_gym.registration
    register(id=ENV_ID, entry_point="clinical_gym.domains.clinical_diagnosis.environment:ClinicalDiagnosisEnv")


def small_db() -> ClinicalDiagnosisDB:
    base = bundled_db()
    tests = {k: base.tests[k] for k in ("ECG", "Troponin", "Potassium", "Chest X-ray")}
    patient = {"patient_id": "P1", "name": "Ann Lee", "age": 60, "sex": "female", "weight_kg": 70,
               "allergies": [{"substance": "penicillin", "reaction": "anaphylaxis", "severity": "life-threatening"}],
               "medications": [{"name": "amlodipine", "dose": "5 mg", "frequency": "daily"}],
               "vitals": [{"time": "09:00", "temperature_c": 38.4, "heart_rate": 104, "systolic_bp": 120,
                           "diastolic_bp": 70, "respiratory_rate": 22, "spo2": 94}],
               "labs": [{"test": "Potassium", "time": "09:00", "value": 4.1, "unit": "mmol/L", "ref_low": 3.5,
                         "ref_high": 5.3}],
               "pending_results": {"Chest X-ray": {"test": "Chest X-ray", "time": "09:00",
                                                   "text": "Right lower lobe consolidation."}}}
    other = {**patient, "patient_id": "P2", "name": "Bo Chan", "allergies": [], "pending_results": {}}
    return ClinicalDiagnosisDB.model_validate({"clock": "2025-03-14 09:00", "patients": {"P1": patient, "P2": other},
                                               "tests": {k: v.model_dump() for k, v in tests.items()}})


TASKS = [
    Task.model_validate({
        "id": "pneu", "ticket": "Patient P1 has a cough. Diagnose.", "patient_id": "P1", "answer": "Pneumonia",
        "rationale": "Fever with right lower lobe consolidation.",
        "expected_actions": [{"name": "get_vital_signs", "arguments": {"patient_id": "P1"}},
                             {"name": "order_lab_test", "arguments": {"patient_id": "P1", "test": "Chest X-ray"}},
                             {"name": "record_diagnosis", "arguments": {"patient_id": "P1", "diagnosis": "Pneumonia"},
                              "compare_args": ["patient_id"]}],
        "assertions": [{"text": "Orders a chest X-ray", "rule": {"kind": "called", "call": {
            "name": "order_lab_test", "arguments": {"test": "Chest X-ray"}}}},
                       {"text": "Explains the consolidation"}]}),
    Task.model_validate({"id": "mcq", "ticket": "Patient P1: which antibiotic?", "patient_id": "P1", "answer": "B",
                         "options": {"A": "Amoxicillin", "B": "Doxycycline"},
                         "expected_actions": [{"name": "get_allergies", "arguments": {"patient_id": "P1"}}]}),
]


def make(**kwargs) -> ToolDomainEnv:
    return get_environment(small_db(), tasks=TASKS, knowledge=None, **kwargs)


@pytest.fixture
def env():
    return make()


def step(env, name, **arguments):
    return env.step(call_text(name, arguments))


def test_reset_gives_the_ticket_policy_and_tool_schemas(env):
    obs, info = env.reset(options={"task_id": "pneu"})
    assert obs == "Patient P1 has a cough. Diagnose."
    assert set(info) == {"system_prompt", "tools", "max_turns"}
    assert "check allergies" in info["system_prompt"].lower() or "review allergies" in info["system_prompt"].lower()
    names = [t["function"]["name"] for t in info["tools"]]
    assert {"get_vital_signs", "order_lab_test", "prescribe_medication", "think", "submit_answer", "curb_65"} <= set(names)
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in info["tools"])
    assert all(f"- {n} (" in info["system_prompt"] for n in names)
    assert "Pneumonia" not in json.dumps(info)  # no ground truth before the end
    assert [m["role"] for m in env.messages] == ["system", "user"]


def test_multiple_choice_ticket_lists_the_options(env):
    obs, _ = env.reset(options={"task": TASKS[1]})
    assert "A. Amoxicillin" in obs and "B. Doxycycline" in obs


def test_reset_options(env):
    assert env.reset(options={"case_id": "mcq"}) and env.task.id == "mcq"
    assert env.reset(options={"task": TASKS[0].model_dump()}) and env.task.id == "pneu"
    with pytest.raises(ValueError, match="unknown task_id"):
        env.reset(options={"task_id": "nope"})
    with pytest.raises(ValueError, match="tasks, not patient cases"):
        env.reset(options={"case": {}})
    with pytest.raises(TypeError):
        env.reset(options={"task": 3})
    first = [env.reset(seed=s)[0] for s in range(6)]
    assert first == [env.reset(seed=s)[0] for s in range(6)]
    with pytest.raises(ValueError, match="no tasks"):
        get_environment(small_db(), tasks=[], knowledge=None)


def test_tool_calls_return_results_and_zero_reward(env):
    env.reset(options={"task_id": "pneu"})
    obs, reward, terminated, truncated, info = step(env, "get_vital_signs", patient_id="P1")
    assert json.loads(obs)[0]["heart_rate"] == 104
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info == {"turn": 1, "reward_components": {},
                    "tool_calls": [{"name": "get_vital_signs", "ok": True, "error_kind": None}]}
    obs, *_ = step(env, "order_lab_test", patient_id="P1", test="cxr")
    assert json.loads(obs)["results"][0]["report"] == "Right lower lobe consolidation."
    obs, *_ = env.step('[{"name": "get_allergies", "arguments": {"patient_id": "P1"}}, {"name": "think", '
                       '"arguments": {"thought": "penicillin allergy"}}]')
    assert obs.startswith("[1] get_allergies:") and "[2] think: Noted." in obs


@pytest.mark.parametrize("action, expected", [
    ("hello doctor", "no tool call found"),
    ('{"name": "get_vitals", "arguments": {}}', "Did you mean 'get_vital_signs'"),
    ('{"name": "get_vital_signs", "arguments": {"patient_id": 7}}', "expected string, got number 7"),
    ('{"name": "get_vital_signs", "arguments": {"patient_id": "P9"}}', "not found"),
    ('{"name": "get_vital_signs", "arguments": {"patient_id": "P1"', "invalid JSON"),
    ('{"name": "order_lab_test", "arguments": {"patient_id": "P1", "test": "MRI knee"}}', "unknown test"),
    ("", "your reply is empty"),
    (None, "must be text"),
    ("x" * 10_001, "too long"),
    ("[" + ",".join(['{"name": "think", "arguments": {"thought": "a"}}'] * 5) + "]", "5 tool calls in one turn"),
])
def test_bad_input_is_an_observation_never_an_exception(env, action, expected):
    env.reset(options={"task_id": "pneu"})
    obs, reward, terminated, truncated, _ = env.step(action)
    assert obs.startswith("Error") or "Error:" in obs
    assert expected in obs and reward == 0.0 and not terminated and not truncated


def test_submit_ends_the_episode_with_the_outcome(env):
    reward, info = run_episode(env, ExpertToolPolicy(TASKS[0]), options={"task_id": "pneu"})
    outcome = info["outcome"]
    assert reward == pytest.approx(1.0) and info["task_id"] == "pneu"
    assert outcome["result"] == "correct" and outcome["success"] and outcome["gold_answer"] == "Pneumonia"
    assert set(outcome["scores"]) == {"accuracy", "process", "safety", "format", "coherence", "assertions"}
    assert [a["method"] for a in outcome["assertions"]] == ["rule", "ungraded"]
    assert outcome["violations"] == [] and outcome["db_hash"] == env.db.get_hash()
    assert [c["name"] for c in outcome["tool_calls"]][-1] == "submit_answer"
    assert sum(info["reward_components"].values()) == pytest.approx(reward)
    assert json.loads(json.dumps(info))["outcome"]["result"] == "correct"  # info is plain JSON data
    with pytest.raises(EpisodeOverError):
        step(env, "think", thought="again")


def test_turn_limit_ends_without_an_answer():
    env = make(max_turns=3)
    env.reset(options={"task_id": "pneu"})
    for _ in range(2):
        assert not step(env, "get_vital_signs", patient_id="P1")[2]
    obs, reward, terminated, _, info = step(env, "get_vital_signs", patient_id="P1")
    assert terminated and "turn limit (3)" in obs
    assert info["outcome"]["result"] == "no_answer" and "no_decision_reached" in info["outcome"]["violation_names"]
    scores = info["outcome"]["scores"]
    assert scores["accuracy"] == scores["coherence"] == 0.0 and scores["format"] == 0.5  # no final answer
    assert reward == pytest.approx(sum(info["reward_components"].values())) and reward < 0.4


def test_unsafe_prescription_is_capped_and_named(env):
    env.reset(options={"task_id": "pneu"})
    step(env, "get_allergies", patient_id="P1")
    step(env, "prescribe_medication", patient_id="P1", drug="amoxicillin", dose=500, unit="mg", frequency="tid",
         route="oral")
    _, reward, _, _, info = step(env, "submit_answer", answer="Pneumonia", reasoning="Consolidation on X-ray.")
    assert reward == pytest.approx(0.1)
    violation = next(v for v in info["outcome"]["violations"] if v["name"] == "allergen_prescribed")
    assert violation["severity"] == 5 and "penicillin" in violation["evidence"][0]


def test_write_tools_change_only_this_episodes_copy():
    base = small_db()
    base_hash = base.get_hash()
    a, b = get_environment(base, tasks=TASKS, knowledge=None), get_environment(base, tasks=TASKS, knowledge=None)
    a.reset(options={"task_id": "pneu"})
    b.reset(options={"task_id": "pneu"})
    start = a.db.get_hash()
    assert start == b.db.get_hash() == base_hash
    step(a, "get_lab_results", patient_id="P1")
    assert a.db.get_hash() == start  # READ changes nothing
    for name, args in [("order_lab_test", {"test": "Chest X-ray"}), ("write_clinical_note", {"note": "seen"}),
                       ("record_diagnosis", {"diagnosis": "Pneumonia"})]:
        before = a.db.get_hash()
        step(a, name, patient_id="P1", **args)
        assert a.db.get_hash() != before
    assert b.db.get_hash() == base.get_hash() == base_hash
    assert "Chest X-ray" in base.patients["P1"].pending_results and not base.notes
    assert json.loads(step(b, "order_lab_test", patient_id="P1", test="Chest X-ray")[0])["results"][0]["report"]
    a.reset(options={"task_id": "pneu"})
    assert a.db.get_hash() == base_hash


def test_format_reflects_how_calls_were_written(env):
    env.reset(options={"task_id": "mcq"})
    env.step('```json\n{"name": "get_allergies", "arguments": {"patient_id": "P1"}}\n```')
    env.step("I am thinking")
    _, _, _, _, info = step(env, "submit_answer", answer="B", reasoning="Penicillin anaphylaxis.")
    assert info["outcome"]["scores"]["format"] == pytest.approx((0.8 + 0.0 + 1.0) / 3)
    assert info["outcome"]["result"] == "correct"



def test_a_turn_of_several_calls_scores_its_worst_form_also_after_a_submit(env):
    env.reset(options={"task_id": "mcq"})
    obs, *_ = env.step('[{"name": "get_allergies", "arguments": {"patient_id": "P1"}}, {"arguments": {}}]')
    assert obs.startswith("[1] get_allergies: ") and "\n\n[2] call: Error: " in obs
    assert env.turn_formats == [0.0]  # the nameless call is invalid
    _, _, terminated, _, info = env.step('[{"name": "submit_answer", "arguments": {"answer": "B"}}, {"arguments": {}}]')
    assert terminated and env.turn_formats == [0.0, 0.0]  # the call after the submit is not run, but it was written
    assert len(info["outcome"]["tool_calls"]) == 3

def test_sparse_reward_and_reward_config():
    env = make(reward="sparse")
    reward, info = run_episode(env, ExpertToolPolicy(TASKS[1]), options={"task_id": "mcq"})
    assert reward == 1.0 and info["reward_components"] == {"accuracy": 1.0}
    assert info["outcome"]["scores"]["safety"] == 1.0
    with pytest.raises(ValueError, match="unknown reward_config"):
        make(reward_config={"bogus": 1})
    with pytest.raises(ValueError, match="reward must be"):
        make(reward="dense")


class _Judge:
    def __init__(self, reply):
        self.reply = reply

    def chat(self, messages, **kwargs):
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply

    complete = chat


def test_llm_judge_grades_rule_less_assertions_and_a_judge_failure_truncates():
    _, info = run_episode(make(judge=_Judge("FAIL")), ExpertToolPolicy(TASKS[0]), options={"task_id": "pneu"})
    assert [a["passed"] for a in info["outcome"]["assertions"]] == [True, False]
    assert info["outcome"]["grader_errors"] == 0
    env = make(judge=_Judge(LLMError("down")))
    env.reset(options={"task_id": "pneu"})
    policy = ExpertToolPolicy(TASKS[0])
    truncated = False
    while not truncated:
        obs, reward, terminated, truncated, info = env.step(policy(env.messages))
        assert not terminated
    assert reward == 0.0 and "outcome" not in info and "judge failed on 1 assertion(s): down" in info["error"]
    assert obs.endswith("The task ended because the reward judge failed.")


def test_same_actions_same_rewards(env):
    script = [call_text("get_vital_signs", {"patient_id": "P1"}), "junk",
              call_text("submit_answer", {"answer": "Viral infection"})]
    results = []
    for _ in range(2):
        env.reset(options={"task_id": "pneu"})
        for action in script:
            out = env.step(action)
        results.append((out[1], out[4]["outcome"]["scores"]))
    assert results[0] == results[1]


def test_check_env_passes_without_warnings():
    env = gym.make(ENV_ID, knowledge=None).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=False)


_names = st.sampled_from(["get_vital_signs", "order_lab_test", "prescribe_medication", "submit_answer", "think",
                          "escalate_care", "curb_65", "get_lab_results", "nope", "", "Get_Vital_Signs"])
_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=3), max_leaves=8)
_calls = st.builds(lambda n, a: json.dumps({"name": n, "arguments": a}, allow_nan=True), _names,
                   st.dictionaries(st.sampled_from(["patient_id", "test", "drug", "dose", "unit", "thought", "answer",
                                                    "x"]), _json_values, max_size=4))
_actions = st.one_of(
    st.text(max_size=200), _calls, _calls.map(lambda c: c[: len(c) // 2]), _calls.map(lambda c: f"```json\n{c}\n```"),
    st.lists(_calls, max_size=6).map(lambda cs: "[" + ",".join(cs) + "]"), _calls.map(lambda c: f'{{"tool_calls": {c}}}'),
    st.tuples(st.sampled_from("{[\"("), st.integers(9_990, 12_000)).map(lambda t: t[0] * t[1]),
    st.none(), st.integers(), st.binary(max_size=10),
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(seed=st.integers(0, 50), actions=st.lists(_actions, min_size=1, max_size=8))
def test_fuzzed_actions_never_raise(seed, actions):
    env = _FUZZ_ENV
    env.reset(seed=seed)
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and obs and env.observation_space.contains(obs)
        assert isinstance(reward, float) and 0.0 <= reward <= 1.0
        if terminated or truncated:
            assert "outcome" in info
            env.reset(seed=seed)


_FUZZ_ENV = make(max_turns=6)


def test_every_reset_binds_the_same_tools_in_the_same_order_to_its_own_database(env):
    # the merged toolkit is rebuilt from the shared tools collected once: same names and order as the schemas
    names = [schema["function"]["name"] for schema in env.tool_schemas]
    toolkits = []
    for task_id in ("pneu", "mcq", "pneu"):
        env.reset(options={"task_id": task_id})
        assert list(env.toolkit.tools) == names
        assert env.toolkit.tools["order_lab_test"].function.__self__.db is env.db
        toolkits.append(env.toolkit)
    assert toolkits[0].tools["think"] is toolkits[2].tools["think"]  # the shared toolkits are bound once


def test_a_reset_binds_a_domain_tool_only_when_looked_up_and_the_view_is_the_merged_toolkit(env):
    from clinical_gym.tools import Toolkit

    env.reset(options={"task_id": "pneu"})
    merged = Toolkit.merge(env.domain_tools, *env._shared)  # what the episode's toolkit stands for
    tools = env.toolkit.tools
    assert list(tools) == list(merged.tools) and len(tools) == len(merged.tools) and len(env.toolkit) == len(merged)
    assert "think" in tools and "get_patient_info" in env.toolkit and "no_such_tool" not in tools
    assert tools.get("no_such_tool") is None and tools.get("no_such_tool", 7) == 7
    with pytest.raises(KeyError):
        tools["no_such_tool"]
    with pytest.raises(TypeError):
        tools["think"] = tools["think"]  # read-only, as before
    assert tools._bound == {}  # nothing bound until the agent calls a tool
    obs, *_ = env.step(call_text("get_patient_info", {"patient_id": env.task.patient_id}))
    assert json.loads(obs)["patient_id"] == env.task.patient_id
    assert list(tools._bound) == ["get_patient_info"]
    for name, bound in tools.items():  # every tool bound to this episode's toolkit, as merge binds them
        expected = merged.tools[name]
        assert (bound.spec, bound.owner) == (expected.spec, expected.owner)
        assert getattr(bound.function, "__self__", None) in (env.domain_tools, getattr(expected.function,
                                                                                      "__self__", None))
    assert dict(tools).keys() == dict(merged.tools).keys()
    env.reset(options={"task_id": "pneu"})
    assert env.toolkit.tools._bound == {} and env.toolkit.tools["get_patient_info"].function.__self__.db is env.db


def test_call_records_equal_validated_ones_and_odd_review_categories_still_validate(env):
    from pydantic import ValidationError

    from clinical_gym.rewards.episode import CallRecord

    env.reset(options={"task_id": "pneu"})
    env.step(call_text("get_patient_info", {"patient_id": env.task.patient_id}))
    env.step('{"name": "get_patient_info", "arguments": {"patient_id": ')
    for record in env.calls:  # built without validation: the same as validating the same values
        twin = CallRecord(**record.model_dump())
        assert record == twin and record.model_dump_json() == twin.model_dump_json()
    assert env.calls[0].reviews == frozenset({"demographics"}) and env.calls[1].reviews == frozenset()
    env.review_categories = {"get_patient_info": {"demographics"}}  # a set, not a frozenset: validated into one
    env.step(call_text("get_patient_info", {"patient_id": env.task.patient_id}))
    assert type(env.calls[-1].reviews) is frozenset and env.calls[-1].reviews == {"demographics"}
    env.review_categories = {"get_patient_info": frozenset({"chart"})}  # not a category: refused as before
    with pytest.raises(ValidationError):
        env.step(call_text("get_patient_info", {"patient_id": env.task.patient_id}))


@pytest.mark.parametrize("env_id", ("ClinicalDiagnosis-v1", "Triage-v1", "ClinicalPathway-v1", "MedicalQA-v1",
                                    "VisualDiagnosis-v0"))
def test_an_episode_copy_is_the_copy_pydantic_makes(env_id):
    # episode_copy builds the copy directly (DomainDB.copy_with), not through model_copy: same fields in the same
    # order, fields set, extra and private attributes as model_copy(update=...) of the copied collections
    base = gym.make(env_id).unwrapped.base_db
    copy = base.episode_copy()
    replaced = {name: value for name, value in copy.__dict__.items() if value is not base.__dict__[name]}
    pydantic_copy = base.model_copy(update=replaced)
    assert replaced and list(copy.__dict__) == list(pydantic_copy.__dict__) and copy == pydantic_copy
    assert copy.model_fields_set == pydantic_copy.model_fields_set
    assert copy.__pydantic_extra__ == pydantic_copy.__pydantic_extra__
    assert list(copy.__pydantic_private__) == list(base.__pydantic_private__)
    assert copy.get_hash() == base.get_hash()
    for name, value in replaced.items():  # the collections tools write to are the copy's own
        assert value == base.__dict__[name] and value is not base.__dict__[name]
