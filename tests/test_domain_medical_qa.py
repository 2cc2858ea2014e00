"""MedicalQA-v1: tasks as bank questions worked by option elimination, the spread of correct letters, the written
forms of a letter answer, no leak of the key in the question, the tools (reference ranges, guidelines, elimination),
wrong answers (confident or diligent) scoring below 0.5, the wrong-answer scale and WRITE isolation. The acceptance
checks every tool domain shares (tasks, tickets, tool kinds, the scripted expert, the random policy, registration,
check_env, fuzzing, an unchanged loaded database) are in tests/test_tool_domain_acceptance.py."""

from __future__ import annotations

from collections import Counter

import pytest
from tool_call_helpers import call, read

from clinical_gym.rewards.coherence import chosen_option
from clinical_gym.rewards.episode import EpisodeRecord, SubmittedAnswer, contains_term
from clinical_gym.rewards.five_d import score_accuracy
from clinical_gym.tool_env.policies import ExpertToolPolicy, call_text, run_episode
from clinical_gym.tool_env.tasks import RewardBasis
from clinical_gym.domains.medical_qa.environment import MedicalQAEnv, bundled_db, get_environment, get_tasks
from clinical_gym.domains.medical_qa.policies import WrongAnswerPolicy, question_id_of, tempting_distractor

TASKS = get_tasks()


@pytest.fixture(scope="module")
def env() -> MedicalQAEnv:
    return get_environment(knowledge=None)


# -- data --------------------------------------------------------------------------------------------------------------
def test_every_task_is_one_bank_question_worked_by_eliminating_every_wrong_option():
    db = bundled_db()
    assert len({question_id_of(t) for t in TASKS}) == len(TASKS)
    for task in TASKS:
        question = db.questions[question_id_of(task)]
        assert task.options == question.options and 4 <= len(task.options) <= 5, task.id
        assert task.patient_id is None and question.question_id in task.ticket
        assert task.uses(RewardBasis.NL_ASSERTION), task.id
        for action in task.expected_actions:
            assert action.arguments.get("question_id", question.question_id) == question.question_id
        eliminated = {a.arguments["letter"] for a in task.expected_actions if a.name == "eliminate_option"}
        assert eliminated == set(task.options) - {task.answer}, task.id


def test_correct_letters_are_spread_over_the_options():
    counts = Counter(t.answer for t in TASKS)
    assert set(counts) == set("ABCDE") and max(counts.values()) <= 0.3 * len(TASKS), counts


def test_every_written_form_of_the_gold_letter_scores_full_accuracy_and_a_wrong_one_none():
    for task in TASKS:
        for answer in (f"({task.answer})", f"{task.answer}. {task.options[task.answer]}"):
            record = EpisodeRecord(task=task, answer=SubmittedAnswer(answer=answer, call_index=0))
            assert score_accuracy(record) == 1.0, (task.id, answer)
        for text in task.options.values():  # no option text reads as a second letter ("A ...", "B12", "D-dimer")
            assert all(chosen_option(f"{letter}. {text}", task.options) == letter for letter in task.options), text
        wrong = EpisodeRecord(task=task, answer=SubmittedAnswer(answer=tempting_distractor(task), call_index=0))
        assert score_accuracy(wrong) == 0.0


def test_tickets_and_questions_never_name_the_correct_option(env):
    for task in TASKS:
        env.reset(options={"task_id": task.id})
        shown = read(env, "get_question", question_id=question_id_of(task))
        stem = " ".join([task.ticket, shown["vignette"], shown["question"]])
        assert not contains_term(stem, task.options[task.answer]), task.id
        assert set(shown) == {"question_id", "specialty", "vignette", "question", "options"}


# -- tools -------------------------------------------------------------------------------------------------------------
def test_reference_ranges_and_lab_interpretation(env):
    env.reset(options={"task_id": "mqa-003"})
    high = read(env, "interpret_lab_value", analyte="K", value=7.1)
    assert high["analyte"] == "Potassium" and high["flag"] == "high" and high["times_upper_limit"] == 1.3
    assert read(env, "interpret_lab_value", analyte="sodium", value=140)["flag"] == "normal"
    needs_sex = call(env, "interpret_lab_value", analyte="Haemoglobin", value=98)
    assert not needs_sex.ok and "sex-specific" in needs_sex.content
    assert read(env, "interpret_lab_value", analyte="Hb", value=98, sex="male")["flag"] == "low"
    assert read(env, "get_reference_range", analyte="Ferritin")["reference_range"] == {"female": "15-150",
                                                                                        "male": "30-400"}
    assert read(env, "get_reference_range", analyte="bilirubin")["reference_range"] == "<21"
    missing = call(env, "get_reference_range", analyte="potasium")
    assert not missing.ok and "Did you mean 'Potassium'" in missing.content


def test_guideline_lookup_matches_titles_keywords_spellings_and_summaries(env):
    env.reset(options={"task_id": "mqa-003"})
    assert read(env, "lookup_guideline", topic="hyperkalemia treatment")["title"] == \
        "Hyperkalaemia: emergency treatment"
    assert read(env, "lookup_guideline", topic="AF anticoagulation")["title"] == \
        "Atrial fibrillation: stroke prevention"
    assert read(env, "lookup_guideline", topic="xanthochromia")["title"] == "Suspected subarachnoid haemorrhage"
    assert not call(env, "lookup_guideline", topic="zzqx").ok
    listed = read(env, "list_guideline_topics", specialty="neurology")
    assert set(listed) == {"neurology"} and "Convulsive status epilepticus" in listed["neurology"]
    canonical = env.canonical_arguments("lookup_guideline", {"topic": "hyperkalemia"})
    assert canonical == {"topic": "Hyperkalaemia: emergency treatment"}


def test_option_elimination_flags_and_thinking_tools(env):
    task = next(t for t in TASKS if t.id == "mqa-002")
    qid, gold, wrong = question_id_of(task), task.answer, tempting_distractor(task)
    env.reset(options={"task_id": task.id})
    start = env.db.get_hash()
    assert read(env, "eliminate_option", question_id=qid.lower(), letter=wrong, reason="x")["eliminated"] == wrong
    assert env.db.get_hash() != start
    again = call(env, "eliminate_option", question_id=qid, letter=wrong, reason="x")
    assert not again.ok and "already eliminated" in again.content
    listed = read(env, "list_options", question_id=qid)
    assert wrong not in listed["in_play"] and gold in listed["in_play"]
    rows = read(env, "compare_options", question_id=qid, letters=[gold, wrong], criterion="stroke prevention")
    assert [r["status"] for r in rows["options"]] == ["in play", "eliminated"]
    assert "Atrial fibrillation: stroke prevention" in rows["options"][0]["related_guidelines"]
    warned = read(env, "record_reasoning", question_id=qid, key_findings=["score 4"], conclusion=f"{wrong}: x")
    kept = read(env, "record_reasoning", question_id=qid, key_findings=["score 4"], conclusion=f"{gold}: y")
    assert "warning" in warned and "warning" not in kept and kept["options_in_play"] == listed["in_play"]
    read(env, "restore_option", question_id=qid, letter=wrong)
    assert env.db.get_hash() == start and not call(env, "restore_option", question_id=qid, letter=wrong).ok
    for letter in sorted(set(task.options) - {gold}):
        read(env, "eliminate_option", question_id=qid, letter=letter, reason="x")
    last = call(env, "eliminate_option", question_id=qid, letter=gold, reason="x")
    assert not last.ok and "last option" in last.content
    assert read(env, "flag_for_review", question_id=qid, reason="r")["flag_id"] == "FLAG-001"
    assert read(env, "flag_for_review", question_id=qid, reason="r")["flag_id"] == "FLAG-002"
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


# -- wrong answers -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("diligent", [False, True])
def test_a_wrong_answer_scores_below_05(env, diligent):
    before = bundled_db().get_hash()
    for task in TASKS:
        reward, info = run_episode(env, WrongAnswerPolicy(task, diligent=diligent), options={"task_id": task.id})
        outcome = info["outcome"]
        assert reward < 0.5 and outcome["result"] == "wrong" and not outcome["success"], (task.id, reward)
        assert outcome["answer"] == tempting_distractor(task) and info["reward_components"]["wrong_answer_scale"] < 0
        assert ("overstated_certainty" in outcome["violation_names"]) is not diligent
    assert bundled_db().get_hash() == before and not bundled_db().eliminations  # episodes work on copies


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
