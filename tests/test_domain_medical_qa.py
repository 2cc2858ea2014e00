"""MedicalQA-v0 acceptance: data and tasks, tools, the scripted expert (>= 0.9 on every task), a random tool-caller
(< 0.3 mean), wrong answers (confident or diligent) scoring below 0.5, WRITE isolation, check_env, no leaks of the
key, and fuzzed arguments and actions."""

from __future__ import annotations

import json
import warnings
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import register, registry
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_gym.rewards.coherence import chosen_option
from clinical_gym.rewards.episode import EpisodeRecord, SubmittedAnswer, contains_term
from clinical_gym.rewards.five_d import score_accuracy
from clinical_gym.tool_policies import ExpertToolPolicy, RandomToolPolicy, call_text, run_episode
from clinical_gym.tool_tasks import RewardBasis
from domains.medical_qa.environment import MedicalQAEnv, bundled_db, get_environment, get_tasks
from domains.medical_qa.policies import WrongAnswerPolicy, question_id_of, tempting_distractor
from domains.medical_qa.tools import MedicalQATools
from tools import ToolKind

ENV_ID = "MedicalQA-v0"
if ENV_ID not in registry:  # the lead wires it into clinical_gym.registration
    register(id=ENV_ID, entry_point="domains.medical_qa.environment:MedicalQAEnv")
TASKS = get_tasks()


@pytest.fixture(scope="module")
def env() -> MedicalQAEnv:
    return get_environment(knowledge=None)


def call(env: MedicalQAEnv, name: str, **arguments):
    """Run one tool on the env's current episode; the result (ok, content)."""
    return env.toolkit.call(call_text(name, arguments))


def content(env: MedicalQAEnv, name: str, **arguments):
    result = call(env, name, **arguments)
    assert result.ok, result.content
    return json.loads(result.content)


# -- data --------------------------------------------------------------------------------------------------------------
def test_at_least_40_tasks_with_a_deterministic_train_test_split():
    assert len(TASKS) >= 40 and len({t.id for t in TASKS}) == len(TASKS)
    train, test = get_tasks("train"), get_tasks("test")
    assert train and test and len(train) + len(test) == len(TASKS)
    assert {t.id for t in test} == {t.id for t in get_tasks("test")}
    assert not {t.id for t in train} & {t.id for t in test}
    with pytest.raises(ValueError, match="unknown split"):
        get_tasks("dev")


def test_every_task_is_well_formed(env):
    db = bundled_db()
    assert len({question_id_of(t) for t in TASKS}) == len(TASKS)
    for task in TASKS:
        question = db.questions[question_id_of(task)]
        assert task.options == question.options and 4 <= len(task.options) <= 5, task.id
        assert task.patient_id is None and question.question_id in task.ticket
        assert task.rationale and task.uses(RewardBasis.ACTION) and task.uses(RewardBasis.NL_ASSERTION)
        assert sum(a.rule is not None for a in task.assertions) >= 4, f"{task.id} needs rule-graded assertions"
        env.reset(options={"task_id": task.id})
        for action in task.expected_actions:
            assert action.name in env.tool_kinds, (task.id, action.name)
            env.toolkit.spec(action.name).arguments.validate_json(action.arguments)
            assert action.arguments.get("question_id", question.question_id) == question.question_id
        eliminated = {a.arguments["letter"] for a in task.expected_actions if a.name == "eliminate_option"}
        assert eliminated == set(task.options) - {task.answer}, task.id


def test_correct_letters_are_spread_over_the_options():
    counts = Counter(t.answer for t in TASKS)
    assert set(counts) == set("ABCDE") and max(counts.values()) <= 0.3 * len(TASKS), counts


def test_every_gold_answer_scores_full_accuracy_and_a_wrong_one_none():
    for task in TASKS:
        for answer in (task.answer, f"({task.answer})", f"{task.answer}. {task.options[task.answer]}",
                       task.options[task.answer]):
            record = EpisodeRecord(task=task, answer=SubmittedAnswer(answer=answer, call_index=0))
            assert score_accuracy(record) == 1.0, (task.id, answer)
        for text in task.options.values():  # no option text reads as a second letter ("A ...", "B12", "D-dimer")
            assert all(chosen_option(f"{letter}. {text}", task.options) == letter for letter in task.options), text
        wrong = EpisodeRecord(task=task, answer=SubmittedAnswer(answer=tempting_distractor(task), call_index=0))
        assert score_accuracy(wrong) == 0.0


def test_tickets_and_questions_never_name_the_correct_option(env):
    for task in TASKS:
        env.reset(options={"task_id": task.id})
        shown = content(env, "get_question", question_id=question_id_of(task))
        stem = " ".join([task.ticket, shown["vignette"], shown["question"]])
        assert not contains_term(stem, task.options[task.answer]), task.id
        assert set(shown) == {"question_id", "specialty", "vignette", "question", "options"}


# -- tools -------------------------------------------------------------------------------------------------------------
def test_tool_counts_and_kinds(env):
    own = MedicalQATools.tool_specs()
    assert len(own) >= 8 and len(env.tool_kinds) >= 12
    assert {s.kind for s in own} == {ToolKind.READ, ToolKind.WRITE, ToolKind.THINK}
    assert set(env.tool_kinds.values()) == set(ToolKind)
    with_kb = get_environment(knowledge="bundled")  # mounted, opened only on first search
    assert {"search_knowledge", "get_passage", "search_by_category"} <= set(with_kb.tool_kinds)


def test_reference_ranges_and_lab_interpretation(env):
    env.reset(options={"task_id": "mqa-003"})
    high = content(env, "interpret_lab_value", analyte="K", value=7.1)
    assert high["analyte"] == "Potassium" and high["flag"] == "high" and high["times_upper_limit"] == 1.3
    assert content(env, "interpret_lab_value", analyte="sodium", value=140)["flag"] == "normal"
    needs_sex = call(env, "interpret_lab_value", analyte="Haemoglobin", value=98)
    assert not needs_sex.ok and "sex-specific" in needs_sex.content
    assert content(env, "interpret_lab_value", analyte="Hb", value=98, sex="male")["flag"] == "low"
    assert content(env, "get_reference_range", analyte="Ferritin")["reference_range"] == {"female": "15-150",
                                                                                        "male": "30-400"}
    assert content(env, "get_reference_range", analyte="bilirubin")["reference_range"] == "<21"
    missing = call(env, "get_reference_range", analyte="potasium")
    assert not missing.ok and "Did you mean 'Potassium'" in missing.content


def test_guideline_lookup_matches_titles_keywords_spellings_and_summaries(env):
    env.reset(options={"task_id": "mqa-003"})
    assert content(env, "lookup_guideline", topic="hyperkalemia treatment")["title"] == \
        "Hyperkalaemia: emergency treatment"
    assert content(env, "lookup_guideline", topic="AF anticoagulation")["title"] == \
        "Atrial fibrillation: stroke prevention"
    assert content(env, "lookup_guideline", topic="xanthochromia")["title"] == "Suspected subarachnoid haemorrhage"
    assert not call(env, "lookup_guideline", topic="zzqx").ok
    listed = content(env, "list_guideline_topics", specialty="neurology")
    assert set(listed) == {"neurology"} and "Convulsive status epilepticus" in listed["neurology"]
    canonical = env.canonical_arguments("lookup_guideline", {"topic": "hyperkalemia"})
    assert canonical == {"topic": "Hyperkalaemia: emergency treatment"}


def test_option_elimination_flags_and_thinking_tools(env):
    task = next(t for t in TASKS if t.id == "mqa-002")
    qid, gold, wrong = question_id_of(task), task.answer, tempting_distractor(task)
    env.reset(options={"task_id": task.id})
    start = env.db.get_hash()
    assert content(env, "eliminate_option", question_id=qid.lower(), letter=wrong, reason="x")["eliminated"] == wrong
    assert env.db.get_hash() != start
    again = call(env, "eliminate_option", question_id=qid, letter=wrong, reason="x")
    assert not again.ok and "already eliminated" in again.content
    listed = content(env, "list_options", question_id=qid)
    assert wrong not in listed["in_play"] and gold in listed["in_play"]
    rows = content(env, "compare_options", question_id=qid, letters=[gold, wrong], criterion="stroke prevention")
    assert [r["status"] for r in rows["options"]] == ["in play", "eliminated"]
    assert "Atrial fibrillation: stroke prevention" in rows["options"][0]["related_guidelines"]
    warned = content(env, "record_reasoning", question_id=qid, key_findings=["score 4"], conclusion=f"{wrong}: x")
    kept = content(env, "record_reasoning", question_id=qid, key_findings=["score 4"], conclusion=f"{gold}: y")
    assert "warning" in warned and "warning" not in kept and kept["options_in_play"] == listed["in_play"]
    content(env, "restore_option", question_id=qid, letter=wrong)
    assert env.db.get_hash() == start and not call(env, "restore_option", question_id=qid, letter=wrong).ok
    for letter in sorted(set(task.options) - {gold}):
        content(env, "eliminate_option", question_id=qid, letter=letter, reason="x")
    last = call(env, "eliminate_option", question_id=qid, letter=gold, reason="x")
    assert not last.ok and "last option" in last.content
    assert content(env, "flag_for_review", question_id=qid, reason="r")["flag_id"] == "FLAG-001"
    assert content(env, "flag_for_review", question_id=qid, reason="r")["flag_id"] == "FLAG-002"
    assert not call(env, "get_question", question_id="Q999").ok


def test_writes_change_only_that_episodes_database():
    one, two = get_environment(knowledge=None), get_environment(knowledge=None)
    bundled = bundled_db().get_hash()
    one.reset(options={"task_id": "mqa-001"})
    two.reset(options={"task_id": "mqa-001"})
    one.step(call_text("eliminate_option", {"question_id": "Q001", "letter": "A", "reason": "x"}))
    assert one.db.get_hash() != bundled and two.db.get_hash() == bundled == bundled_db().get_hash()
    one.reset(options={"task_id": "mqa-001"})
    assert one.db.get_hash() == bundled and not one.db.eliminations


# -- acceptance policies -----------------------------------------------------------------------------------------------
def test_scripted_expert_scores_at_least_09_on_every_task(env):
    for task in TASKS:
        reward, info = run_episode(env, ExpertToolPolicy(task), options={"task_id": task.id})
        assert reward >= 0.9, (task.id, reward, info["outcome"]["violation_names"], info["outcome"]["scores"])
        assert info["outcome"]["success"] and "wrong_answer_scale" not in info["reward_components"], task.id


def test_random_tool_caller_scores_below_03_on_average(env):
    rewards = [run_episode(env, RandomToolPolicy(env.tool_schemas, seed=seed), options={"task_id": task.id})[0]
               for task in TASKS for seed in (1, 2)]
    assert np.mean(rewards) < 0.3


@pytest.mark.parametrize("diligent", [False, True])
def test_a_wrong_answer_scores_below_05(env, diligent):
    for task in TASKS:
        reward, info = run_episode(env, WrongAnswerPolicy(task, diligent=diligent), options={"task_id": task.id})
        outcome = info["outcome"]
        assert reward < 0.5 and outcome["result"] == "wrong" and not outcome["success"], (task.id, reward)
        assert outcome["answer"] == tempting_distractor(task) and info["reward_components"]["wrong_answer_scale"] < 0
        assert ("overstated_certainty" in outcome["violation_names"]) is not diligent


def test_wrong_answer_scale_halves_the_plain_5d_total_and_sparse_is_accuracy_only():
    task = TASKS[0]
    plain = get_environment(knowledge=None, wrong_answer_scale=1.0)
    scaled = get_environment(knowledge=None)
    plain_reward, plain_info = run_episode(plain, WrongAnswerPolicy(task, diligent=True), options={"task_id": task.id})
    reward, _ = run_episode(scaled, WrongAnswerPolicy(task, diligent=True), options={"task_id": task.id})
    assert "wrong_answer_scale" not in plain_info["reward_components"] and reward == pytest.approx(plain_reward / 2)
    sparse = get_environment(knowledge=None, reward="sparse")
    assert run_episode(sparse, WrongAnswerPolicy(task), options={"task_id": task.id})[0] == 0.0
    assert run_episode(sparse, ExpertToolPolicy(task), options={"task_id": task.id})[0] == 1.0
    with pytest.raises(ValueError, match="wrong_answer_scale"):
        get_environment(knowledge=None, wrong_answer_scale=1.5)


def test_episodes_never_change_the_bundled_database(env):
    before = bundled_db().get_hash()
    for task in TASKS:
        run_episode(env, WrongAnswerPolicy(task, diligent=True), options={"task_id": task.id})
    assert bundled_db().get_hash() == before and not bundled_db().eliminations


def test_registered_id_makes_the_env_and_passes_check_env():
    env = gym.make(ENV_ID, knowledge=None, split="test", max_turns=5)
    obs, info = env.reset(seed=0)
    assert env.unwrapped.task.split == "test" and obs == env.unwrapped.task.prompt and len(info["tools"]) >= 12
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(ENV_ID, knowledge=None).unwrapped, skip_render_check=False)


_tool_names = st.sampled_from(sorted(MedicalQATools._tool_attributes))
_values = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False), st.text(max_size=30),
                    st.sampled_from(["Q001", "q002", "Q999", "A", "E", "F", "Potassium", "Hb", "female", "cardiology",
                                     "hyperkalaemia"]),
                    st.lists(st.sampled_from(["A", "B", "E", "Z", ""]), max_size=6),
                    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))
_arguments = st.dictionaries(st.sampled_from(["question_id", "letter", "letters", "reason", "criterion", "analyte",
                                              "value", "sex", "topic", "specialty", "key_findings", "conclusion"]),
                             _values, max_size=6)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(calls=st.lists(st.tuples(_tool_names, _arguments), min_size=1, max_size=6))
def test_fuzzed_arguments_to_every_domain_tool_never_crash(calls):
    env = _FUZZ_ENV
    env.reset(options={"task_id": "mqa-002"})
    for name, arguments in calls:
        obs, reward, terminated, _, info = env.step(json.dumps({"name": name, "arguments": arguments}))
        assert isinstance(obs, str) and obs and all(c["error_kind"] != "tool_crash" for c in info.get("tool_calls", []))
        if terminated:
            break


_actions = st.one_of(st.text(max_size=200), st.builds(lambda n, a: json.dumps({"name": n, "arguments": a}),
                                                      st.sampled_from(["submit_answer", "get_question", "nope", ""]),
                                                      _arguments))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(seed=st.integers(0, 50), actions=st.lists(_actions, min_size=1, max_size=8))
def test_fuzzed_actions_never_raise(seed, actions):
    env = _FUZZ_ENV
    env.reset(seed=seed)
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and obs and env.observation_space.contains(obs) and 0.0 <= reward <= 1.0
        if terminated or truncated:
            assert "outcome" in info
            env.reset(seed=seed)


_FUZZ_ENV = get_environment(knowledge=None, max_turns=8)
