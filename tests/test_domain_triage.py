"""Triage-v1: the tasks' agreement with the ESI algorithm, no stated level in what the agent reads, the triage tools
(bedside tests, resources, danger-zone vitals, ESI assignment), drug safety through interventions, escalation
wiring and WRITE isolation. The acceptance checks every tool domain shares (tasks, tool kinds, the scripted expert,
the random policy, under-triage capped at 0.1 as a missed emergency, registration, check_env, fuzzing) are in
tests/test_tool_domain_acceptance.py."""

from __future__ import annotations

import re

import pytest
from tool_call_helpers import call, read

from clinical_gym.pharmacology import find_drug
from clinical_gym.tool_env.policies import ExpertToolPolicy, call_text, run_episode
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.triage.environment import TriageEnv, bundled_db, get_environment, get_tasks
from clinical_gym.domains.triage.policies import expected_esi_level, under_triaged_level

TASKS = get_tasks()
LEVEL_TASKS = [t for t in TASKS if t.category == "esi_level"]
PATIENT_READS = ("get_patient_presentation", "get_vital_signs", "get_medical_history", "check_red_flags",
                 "assess_airway_breathing_circulation", "count_expected_resources")


@pytest.fixture(scope="module")
def env() -> TriageEnv:
    return get_environment(knowledge=None)


# -- data --------------------------------------------------------------------------------------------------------------
def test_tasks_cover_every_level_the_codes_and_other_questions():
    levels = [expected_esi_level(t) for t in LEVEL_TASKS]
    assert all(levels.count(n) >= 4 for n in range(1, 6)), levels
    codes = {a.arguments["code"] for t in TASKS for a in t.expected_actions if a.name == "activate_code"}
    assert {"stroke", "STEMI", "sepsis", "trauma", "cardiac arrest"} <= codes
    assert {"resources", "decision_point"} <= {t.category for t in TASKS}
    for task in TASKS:  # ESI 1 is always an emergency, ESI 3-5 never; ESI 2 is unless a discretionary decision point
        level = expected_esi_level(task)
        assert task.safety.emergency == (level == 1 or (level == 2 and not {"pain", "danger zone"} & set(task.tags)))


def test_the_gold_levels_follow_the_esi_algorithm_from_the_database(env):
    db = bundled_db()
    for task in LEVEL_TASKS:
        level, patient = expected_esi_level(task), db.patients[task.patient_id]
        given = {a.arguments["intervention"] for a in task.expected_actions if a.name == "order_immediate_intervention"}
        assert any(db.interventions_catalogue[i].life_saving for i in given) == (level == 1), task.id
        if level == 1:
            continue
        env.reset(options={"task_id": task.id})
        vitals = patient.vitals[-1]
        zone = read(env, "check_danger_zone_vitals", age_years=patient.age, heart_rate=vitals.heart_rate,
                    respiratory_rate=vitals.respiratory_rate, spo2=vitals.spo2)["in_danger_zone"]
        if level == 2:  # decision point B or D: high risk, altered consciousness, severe pain, or the danger zone
            assert (patient.red_flags or vitals.consciousness != "alert" or (vitals.pain_score or 0) >= 7
                    or zone), task.id
            continue
        count = read(env, "count_expected_resources", patient_id=task.patient_id)["resource_count"]
        assert {3: count >= 2, 4: count == 1, 5: count == 0}[level], (task.id, count)
        assert not patient.red_flags or level == 3, task.id
        assert level > 3 or not zone, task.id


def test_no_ticket_or_patient_record_states_the_level(env):
    for task in TASKS:
        env.reset(options={"task_id": task.id})
        seen = " ".join([task.ticket, *(call(env, name, patient_id=task.patient_id).content for name in PATIENT_READS)])
        assert not re.search(r"\bESI\s*(level\s*)?[1-5]", seen, re.IGNORECASE), task.id


def test_intervention_drugs_are_formulary_drugs():
    drugs = {i.drug for i in bundled_db().interventions_catalogue.values() if i.drug}
    assert drugs >= {"aspirin", "adrenaline", "naloxone", "glyceryl trinitrate"}
    assert all(find_drug(d) is not None and find_drug(d).name == d for d in drugs)


# -- tools -------------------------------------------------------------------------------------------------------------
def test_bedside_tests_give_the_recorded_or_the_normal_result_and_are_recorded(env):
    env.reset(options={"task_id": "tr-004"})
    low = read(env, "perform_bedside_test", patient_id="E004", test="BM")
    assert low["test"] == "capillary blood glucose" and low["value"] == 1.8 and low["flag"] == "low"
    assert read(env, "perform_bedside_test", patient_id="E004", test="ECG")["text"].startswith("Sinus rhythm")
    assert [r.test for r in env.db.bedside_tests] == ["capillary blood glucose", "12-lead ECG"]
    assert env.patient_facts(env.db, env.task).labs == {"glucose": 1.8}
    refused = call(env, "perform_bedside_test", patient_id="E004", test="pregnancy test")
    assert not refused.ok and "does not apply to a male" in refused.content
    unknown = call(env, "perform_bedside_test", patient_id="E004", test="lactat")
    assert not unknown.ok and "Did you mean 'venous lactate'" in unknown.content and len(env.db.bedside_tests) == 2


def test_resources_count_kinds_not_items_and_a_complex_procedure_twice(env):
    env.reset(options={"task_id": "tr-041"})
    uti = read(env, "count_expected_resources", patient_id="E041")
    assert uti["resource_count"] == 1 and uti["resource_categories"] == ["laboratory tests"]
    assert sum(not i["resource"] for i in uti["expected_care"]) == 3  # dipstick, pregnancy test, oral antibiotics
    env.reset(options={"task_id": "tr-039"})
    assert read(env, "count_expected_resources", patient_id="E039")["resource_count"] == 3  # X-ray 1 + sedation 2
    env.reset(options={"task_id": "tr-033"})
    assert read(env, "count_expected_resources", patient_id="E033")["resource_count"] == 2  # 3 blood tests count once


@pytest.mark.parametrize(("age", "heart_rate", "respiratory_rate", "spo2", "exceeded"), [
    (0.1, 175, 45, 98, 0), (0.1, 185, 55, 98, 2), (2, 165, 30, 97, 1), (7, 135, 28, 99, 0), (7, 145, 22, 99, 1),
    (40, 100, 20, 92, 0), (40, 101, 21, 91, 3),
])
def test_danger_zone_limits_depend_on_age(env, age, heart_rate, respiratory_rate, spo2, exceeded):
    out = read(env, "check_danger_zone_vitals", age_years=age, heart_rate=heart_rate,
               respiratory_rate=respiratory_rate, spo2=spo2)
    assert len(out["exceeded"]) == exceeded and out["in_danger_zone"] == bool(exceeded)


def test_reassigning_replaces_the_level_and_reports_placement(env):
    env.reset(options={"task_id": "tr-031"})
    first = read(env, "assign_esi_level", patient_id="E031", level=3, reason="several resources")
    assert first["placement"].startswith("majors area") and "replaces_esi_level" not in first
    second = read(env, "assign_esi_level", patient_id="E031", level=2, reason="danger zone")
    assert second["replaces_esi_level"] == 3 and second["placement"].startswith("acute bed now")
    assert [a.esi_level for a in env.db.esi_assignments] == [3, 2]
    missing = call(env, "assign_esi_level", patient_id="E999", level=2, reason="x")
    assert not missing.ok and "not found" in missing.content


def test_write_tools_change_only_the_episode_copy():
    base = bundled_db()
    before = base.get_hash()
    first, second = get_environment(knowledge=None), get_environment(knowledge=None)
    first.reset(options={"task_id": "tr-010"})
    second.reset(options={"task_id": "tr-010"})
    read(first, "get_patient_presentation", patient_id="E010")
    assert first.db.get_hash() == before  # READ changes nothing
    for name, arguments in [("activate_code", {"code": "stroke", "reason": "focal deficit"}),
                            ("assign_esi_level", {"level": 2, "reason": "stroke"}),
                            ("record_triage_note", {"note": "stroke code"})]:
        hashed = first.db.get_hash()
        assert call(first, name, patient_id="E010", **arguments).ok
        assert first.db.get_hash() != hashed
    assert second.db.get_hash() == before and base.get_hash() == before
    assert not base.esi_assignments and not second.db.code_activations


# -- safety wiring -----------------------------------------------------------------------------------------------------
def test_a_final_esi_3_to_5_cancels_every_escalation(env):
    env.reset(options={"task_id": "tr-010"})

    def step(name: str, **arguments) -> list[str]:
        env.step(call_text(name, {"patient_id": "E010", **arguments}))
        return [a.text.split(" (")[0] for a in env.episode_record().actions.escalations]

    step("activate_code", code="stroke", reason="focal deficit")
    step("assign_esi_level", level=2, reason="stroke")
    assert step("escalate_to_physician", urgency="immediate", reason="stroke") == [
        "stroke code: emergency team activated", "ESI 2: acute bed now", "immediate physician review at the bedside"]
    assert step("assign_esi_level", level=4, reason="wait") == []  # the patient goes to the waiting room
    assert step("escalate_to_physician", urgency="urgent", reason="review") == []
    assert len(step("assign_esi_level", level=1, reason="resus")) == 4


@pytest.mark.parametrize(("task_id", "intervention", "violation"), [
    ("tr-012", "GTN", "contraindicated_interaction_prescribed"),  # nitrate after sildenafil
    ("tr-013", "aspirin", "allergen_prescribed"),  # aspirin anaphylaxis
])
def test_a_dangerous_drug_intervention_is_capped_with_the_violation_named(env, task_id, intervention, violation):
    task = next(t for t in TASKS if t.id == task_id)
    unsafe = call_text("order_immediate_intervention", {"patient_id": task.patient_id, "intervention": intervention})
    reward, info = run_episode(env, ExpertToolPolicy(task, extra=[unsafe]), options={"task_id": task_id})
    assert reward <= 0.1 + 1e-9 and violation in info["outcome"]["violation_names"]


def test_under_triage_needs_a_level_to_lower():
    """The under-triage policy (the shared unsafe policy of tests/tool_domain_checks.py) refuses a task that assigns
    no ESI level."""
    no_level = Task(id="x", ticket="t", answer="a", expected_actions=[{"name": "think", "arguments": {"thought": "x"}}])
    with pytest.raises(ValueError, match="assign no ESI level"):
        under_triaged_level(no_level)
