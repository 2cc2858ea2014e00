"""Acceptance checks every tool domain passes, run for each registered id of family "tool": at least 40 tasks and a
deterministic train/test split, well-formed tasks (real tools, valid arguments, early escalation on emergencies),
gold answers scoring full accuracy, no leak of the gold answer in tickets or records, tool counts and kinds, the
scripted expert (>= 0.9 on every task), a random tool-caller (< 0.3 mean), the domain's unsafe policy (capped at 0.1
with the violation named), the registered id, check_env, fuzzed arguments and actions, and an unchanged loaded
database. What legitimately differs between domains is the table in ``tests/tool_domain_checks.py``; a domain's own
tests (calculators, specific rules and tools) stay in ``tests/test_domain_<name>.py``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tool_domain_checks import (
    CAP,
    DOMAINS,
    KNOWLEDGE_TOOLS,
    TOOL_IDS,
    CoveredBy,
    Domain,
    NotApplicable,
    RecordLeakCheck,
    UnsafeCheck,
    action_fuzz,
    argument_fuzz,
    domain,
    expert_runs,
    fingerprint,
    fuzz_arguments,
    fuzz_values,
)

from clinical_gym.rewards.episode import CallRecord, EpisodeRecord, SubmittedAnswer, contains_term
from clinical_gym.rewards.five_d import score_accuracy
from clinical_gym.tool_env.env import EpisodeTools
from clinical_gym.tool_env.policies import RandomToolPolicy, call_text, run_episode
from clinical_gym.tool_env.tasks import RewardBasis
from clinical_gym.tools import CallForm, ToolKind
from clinical_gym.tools.instruments import InstrumentsToolkit

REPO = Path(__file__).resolve().parent.parent
FUZZ_SETTINGS = {"deadline": None, "suppress_health_check": list(HealthCheck), "derandomize": True}


def ids_where(kind: type, attribute: str) -> list[str]:
    return [i for i in TOOL_IDS if isinstance(getattr(DOMAINS.get(i), attribute, None), kind)]


@pytest.fixture
def d(env_id: str) -> Domain:
    return domain(env_id)


every_domain = pytest.mark.parametrize("env_id", TOOL_IDS)


# -- the table ---------------------------------------------------------------------------------------------------------
def test_the_suite_covers_every_tool_domain():
    assert len(TOOL_IDS) >= 9 and set(DOMAINS) <= set(TOOL_IDS)


@every_domain
def test_every_domain_declares_its_unsafe_policy_and_record_leak_check(env_id):
    spec = DOMAINS.get(env_id)
    assert spec is not None, f"add {env_id} to tests/tool_domain_checks.DOMAINS"
    assert isinstance(spec.unsafe, UnsafeCheck | CoveredBy), f"{env_id}: declare its unsafe policy"
    assert isinstance(spec.record_leaks, RecordLeakCheck | CoveredBy | NotApplicable), \
        f"{env_id}: declare which records must not name the gold answer"
    for entry in (spec.unsafe, spec.record_leaks):
        if isinstance(entry, CoveredBy):  # the domain test named there exists
            path, name = entry.test.split("::")
            assert f"\ndef {name}(" in (REPO / path).read_text(encoding="utf-8"), entry.test


# -- tasks -------------------------------------------------------------------------------------------------------------
@every_domain
def test_at_least_40_tasks_with_a_deterministic_train_test_split(d):
    tasks, get_tasks = d.tasks, d.module.get_tasks
    assert len(tasks) >= 40 and len({t.id for t in tasks}) == len(tasks)
    train, test = get_tasks("train"), get_tasks("test")
    assert train and test and len(train) + len(test) == len(tasks)
    assert [t.id for t in test] == [t.id for t in get_tasks("test")]  # deterministic
    assert not {t.id for t in train} & {t.id for t in test}
    assert {t.split for t in train} == {"train"} and {t.split for t in test} == {"test"}
    with pytest.raises(ValueError, match="unknown split"):
        get_tasks("dev")


@every_domain
def test_every_task_is_well_formed(d):
    env, spec = d.env, d.spec
    patients = spec.patients(env.base_db) if spec.patients is not None else None
    for task in d.tasks:
        if patients is not None:
            assert task.patient_id in patients, task.id
        if spec.multiple_choice:
            assert task.options and task.answer in task.options, task.id
        assert task.expected_actions and task.rationale and task.uses(RewardBasis.ACTION), task.id
        assert sum(a.rule is not None for a in task.assertions) >= spec.min_rule_assertions, \
            f"{task.id} needs rule-graded assertions"
        env.reset(options={"task_id": task.id})
        for action in task.expected_actions:  # a real tool with valid arguments
            assert action.name in env.tool_kinds, (task.id, action.name)
            env.toolkit.spec(action.name).arguments.validate_json(action.arguments)
        names = {a.name for a in task.expected_actions}
        for screening in task.safety.required_screenings:  # the reference solution screens every red flag
            assert names & set(screening.tools), (task.id, screening.red_flag)


@every_domain
def test_emergency_tasks_escalate_within_their_call_limit(d):
    """The expected actions escalate (as the domain's grader reads escalations) within ``escalate_within_calls``."""
    env = d.env
    for task in (t for t in d.tasks if t.safety.emergency):
        env.reset(options={"task_id": task.id})
        early = task.expected_actions[:task.safety.escalate_within_calls]
        calls = [CallRecord(index=i, turn=i + 1, name=a.name, arguments=a.arguments, kind=env.tool_kinds[a.name],
                            ok=True, form=CallForm.JSON) for i, a in enumerate(early)]
        assert env.clinical_actions(calls).escalations, task.id


@every_domain
def test_every_gold_answer_alias_and_option_text_scores_full_accuracy(d):
    for task in d.tasks:
        for answer in (task.answer, *task.answer_aliases, *([task.options[task.answer]] if task.options else [])):
            record = EpisodeRecord(task=task, answer=SubmittedAnswer(answer=answer, call_index=0))
            assert score_accuracy(record) == 1.0, (task.id, answer)


@every_domain
def test_no_ticket_names_the_gold_answer(d):
    """A multiple-choice ticket never names the gold option's text (the options follow it in the prompt); an open
    task's ticket and first observation never name the answer or an alias."""
    for task in d.tasks:
        if task.options:
            assert not contains_term(task.ticket, task.options[task.answer]), task.id
            continue
        obs, _ = d.env.reset(options={"task_id": task.id})
        for gold in (task.answer, *task.answer_aliases):
            assert not contains_term(task.ticket, gold) and not contains_term(obs, gold), (task.id, gold)


@pytest.mark.parametrize("env_id", ids_where(RecordLeakCheck, "record_leaks"))
def test_the_patient_record_never_names_the_gold_answer(d):
    check, env = d.spec.record_leaks, d.env
    assert set(check.reads) | set(check.result_tools) <= set(env.tool_kinds)
    tasks = [t for t in d.tasks if check.categories is None or t.category in check.categories]
    assert len(tasks) >= max(check.min_tasks, 1)
    for task in tasks:
        env.reset(options={"task_id": task.id})
        seen = [task.ticket] + [env.toolkit.call(call_text(name, {"patient_id": task.patient_id})).content
                                for name in check.reads]
        seen += [env.toolkit.call(call_text(a.name, a.arguments)).content for a in task.expected_actions
                 if a.name in check.result_tools]
        for gold in check.gold(task):
            assert not contains_term(" ".join(seen), gold), (task.id, gold)


# -- tools -------------------------------------------------------------------------------------------------------------
@every_domain
def test_tool_counts_and_kinds(d):
    own, kinds = d.own_toolkit.tool_specs(), d.env.tool_kinds
    assert len(own) >= 8 and len(kinds) >= d.spec.min_tools
    assert {s.kind for s in own} == {ToolKind.READ, ToolKind.WRITE, ToolKind.THINK}
    assert set(kinds.values()) == set(ToolKind)
    shared = set(InstrumentsToolkit().tools) | set(EpisodeTools().tools)
    assert shared <= set(kinds)  # every scoring instrument, think and submit_answer
    assert not {s.name for s in own} & (shared | KNOWLEDGE_TOOLS)  # the shared tools are not duplicated
    assert not KNOWLEDGE_TOOLS & set(kinds)  # knowledge=None mounts no search tools
    with_kb = d.module.get_environment(knowledge="bundled")  # mounted, opened only on first search
    assert KNOWLEDGE_TOOLS | shared <= set(with_kb.tool_kinds)


# -- acceptance policies -----------------------------------------------------------------------------------------------
@every_domain
def test_scripted_expert_scores_at_least_09_on_every_task(d):
    for run in expert_runs(d.env_id):
        task, outcome = run.task, run.info["outcome"]
        assert run.reward >= 0.9, (task.id, run.reward, outcome["violation_names"], outcome["scores"])
        assert outcome["success"] and not outcome["violation_names"] and not outcome["violations"], task.id
        assert all(c["ok"] for c in outcome["tool_calls"]), task.id
        assert outcome["scores"]["coherence"] == 1.0, (task.id, outcome["coherence"])
        if run.wrote:  # the episode's own copy took the writes
            assert run.db.get_hash() != d.loaded[0], task.id
        if d.spec.expert_check is not None:
            d.spec.expert_check(task, run.info, run.db)


@every_domain
def test_random_tool_caller_scores_below_03_on_average(d):
    rewards = []
    for task in d.tasks:
        tools = d.env.reset(options={"task_id": task.id})[1]["tools"]  # what this task offers
        rewards += [run_episode(d.env, RandomToolPolicy(tools, seed=seed), options={"task_id": task.id})[0]
                    for seed in (1, 2)]
    assert np.mean(rewards) < 0.3


@pytest.mark.parametrize("env_id", ids_where(UnsafeCheck, "unsafe"))
def test_the_unsafe_policy_is_capped_at_01_with_the_violation_named(d):
    check, db = d.spec.unsafe, d.env.base_db
    unsafe = [t for t in d.tasks if check.applies(db, t)]
    assert len(unsafe) >= check.min_tasks
    for task in unsafe:
        policy = check.policy(task, db)
        reward, info = run_episode(d.env, policy, options={"task_id": task.id})
        outcome = info["outcome"]
        assert reward <= CAP, (task.id, reward)
        assert check.violations(policy) & set(outcome["violation_names"]), (task.id, outcome["violation_names"])
        assert not outcome["success"], task.id
        if check.check is not None:
            assert check.check(policy, info), task.id
    if check.refused is not None:
        task_id, message = check.refused
        with pytest.raises(ValueError, match=message):
            check.policy(d.task(task_id), db)


# -- registration ------------------------------------------------------------------------------------------------------
@every_domain
def test_registered_id_makes_the_env(d):
    made = gym.make(d.env_id, knowledge=None, split="test", max_turns=5)
    obs, info = made.reset(seed=0)
    task = made.unwrapped.task
    assert task.split == "test" and obs == task.prompt and len(info["tools"]) >= d.spec.min_reset_tools
    for text in d.spec.system_prompt_mentions:
        assert text in info["system_prompt"]


@every_domain
def test_check_env_passes_without_warnings(d):
    env = gym.make(d.env_id, knowledge=None).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=False)


# -- fuzzing -----------------------------------------------------------------------------------------------------------
@every_domain
def test_fuzzed_arguments_to_every_domain_tool_never_crash(d):
    fuzz, env = argument_fuzz(d), d.fuzz_env
    names = st.sampled_from(sorted(d.own_toolkit._tool_attributes) + list(fuzz.extra_tools))

    @settings(max_examples=fuzz.max_examples, **FUZZ_SETTINGS)
    @given(calls=st.lists(st.tuples(names, fuzz_arguments(fuzz)), min_size=1, max_size=6))
    def fuzzed(calls):
        env.reset(options={"task_id": fuzz.task_id})
        for name, arguments in calls:
            obs, reward, terminated, _, info = env.step(json.dumps({"name": name, "arguments": arguments}))
            assert isinstance(obs, str) and obs
            assert all(c["error_kind"] != "tool_crash" for c in info.get("tool_calls", []))
            if terminated:
                break

    fuzzed()


@every_domain
def test_fuzzed_actions_never_raise_and_rewards_stay_in_range(d):
    fuzz, values, env = action_fuzz(d), argument_fuzz(d), d.fuzz_env
    arguments = fuzz_arguments(values) if fuzz.keys is None else st.dictionaries(
        st.sampled_from(fuzz.keys), fuzz_values(values), max_size=fuzz.max_keys)
    texts = [st.text(max_size=200)] + ([st.binary(max_size=20).map(lambda b: b.decode("latin-1"))]
                                       if fuzz.binary else [])
    actions = st.one_of(*texts, st.builds(lambda n, a: json.dumps({"name": n, "arguments": a}),
                                          st.sampled_from(fuzz.names), arguments))

    @settings(max_examples=fuzz.max_examples, **FUZZ_SETTINGS)
    @given(seed=st.integers(0, 50), actions=st.lists(actions, min_size=1, max_size=fuzz.max_actions))
    def fuzzed(seed, actions):
        env.reset(seed=seed)
        for action in actions:
            obs, reward, terminated, truncated, info = env.step(action)
            assert isinstance(obs, str) and obs and env.observation_space.contains(obs) and 0.0 <= reward <= 1.0
            if terminated or truncated:
                assert "outcome" in info
                env.reset(seed=seed)

    fuzzed()


# -- last: everything above ran its episodes ---------------------------------------------------------------------------
@every_domain
def test_episodes_never_change_the_loaded_database(d):
    """After every episode of this module (the scripted expert on every task, the random and unsafe policies, the
    fuzzing), the database the env loaded has the hash, contents and view hashes it had when the env was made."""
    expert_runs(d.env_id)
    assert fingerprint(d.env.base_db) == d.loaded
