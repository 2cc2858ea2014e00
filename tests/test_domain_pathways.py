"""ClinicalPathway-v1: journeys and tasks, no leak of the answer in what the agent reads or is announced, the pathway
engine (phases, tool gating, hand-overs, time limits, per-phase evaluation), contraindicated treatments capped at
0.1, copy-on-write views and the pathway tools. The acceptance checks every tool domain shares (tasks, tool kinds,
the scripted expert with every phase passed, the random policy, the unsafe prescriber capped at 0.1, an unchanged
loaded database and its views, registration, check_env, fuzzed pathway tools) are in
tests/test_tool_domain_acceptance.py."""

from __future__ import annotations

import json

import pytest
from tool_call_helpers import call

from clinical_gym.rewards.episode import contains_term
from clinical_gym.tool_env.policies import ExpertToolPolicy, ScriptPolicy, call_text, run_episode
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.pathways.environment import ClinicalPathwayEnv, bundled_db, get_environment, get_pathways, get_tasks
from clinical_gym.domains.pathways.phases import HANDOFF, PathwaySpec, PathwayTask, resolve_task
from clinical_gym.domains.pathways.policies import SkippingExpertPolicy, StallingExpertPolicy

TASKS = get_tasks()
BY_ID = {t.id: t for t in TASKS}
JOURNEYS = {"chest_pain", "diabetic_emergency", "stroke_code", "sepsis_bundle", "postop_complication",
            "paediatric_fever"}
PATIENT_READS = ("get_patient_presentation", "get_vital_signs", "get_medical_history", "check_red_flags",
                 "assess_airway_breathing_circulation", "count_expected_resources", "get_patient_info",
                 "get_allergies", "get_medications", "get_lab_results", "get_clinical_notes", "get_medication_list",
                 "get_renal_function")
RESULT_TOOLS = ("order_lab_test", "perform_bedside_test", "order_immediate_intervention")


def script_of(task: PathwayTask) -> list[str]:
    """The scripted expert's replies: the expected actions, then the gold answer."""
    return ExpertToolPolicy(task).script


def play(env: ClinicalPathwayEnv, task: PathwayTask, replies: list[str]) -> tuple[float, dict]:
    return run_episode(env, ScriptPolicy(replies), options={"task_id": task.id})


def phases_of(info: dict) -> dict[str, dict]:
    return {p["name"]: p for p in info["outcome"]["phases"]}


@pytest.fixture(scope="module")
def env() -> ClinicalPathwayEnv:
    return get_environment(knowledge=None)


# -- journeys and tasks ------------------------------------------------------------------------------------------------
def test_six_journeys_with_at_least_six_tasks_each():
    assert set(get_pathways()) == JOURNEYS
    assert all(sum(t.pathway == j for t in TASKS) >= 6 for j in JOURNEYS)


def test_every_task_fits_its_journey(env):
    db = bundled_db()
    for task in TASKS:
        assert len(task.phases) == len(get_pathways()[task.pathway].phases), task.id
        assert task.expected_actions[-1].name != HANDOFF and sum(a.name == HANDOFF for a in task.expected_actions) \
            == len(task.phases) - 1
        env.reset(options={"task_id": task.id})
        for i, phase in enumerate(task.phases):
            for action in phase.required_actions:  # a tool the phase (or an earlier one) opens
                assert env.plan.opens_at[action.name] <= i, (task.id, phase.name, action.name)
        if any("drug_interaction" in p.tools for p in task.phases):  # the medicines view knows every medicine
            assert len(db.medicines.patients[task.patient_id].medications) == len(db.patients[task.patient_id]
                                                                                  .medications), task.id


def test_tickets_records_results_and_phase_announcements_never_name_the_gold_diagnosis(env):
    for task in TASKS:
        seen = [env.reset(options={"task_id": task.id})[0]]
        seen += [r.content for name in PATIENT_READS if (r := call(env, name, patient_id=task.patient_id)).ok]
        seen += [env.toolkit.call(call_text(a.name, a.arguments)).content for a in task.expected_actions
                 if a.name in RESULT_TOOLS]
        env.reset(options={"task_id": task.id})
        for _ in task.phases[:-1]:
            seen.append(env.step(call_text(HANDOFF, {"summary": "handing over"}))[0])
        for gold in (task.answer, *task.answer_aliases):
            assert not contains_term(" ".join(seen), gold), (task.id, gold)


def test_a_journey_cannot_open_a_tool_twice_and_tasks_must_fit_their_journey():
    spec = get_pathways()["chest_pain"].model_dump()
    spec["phases"][1]["tools"]["triage"] = ["get_vital_signs"]
    with pytest.raises(ValueError, match="opened by both"):
        PathwaySpec.model_validate(spec)
    raw = json.loads(BY_ID["pw-cp-01"].model_dump_json(include={"id", "ticket", "patient_id", "answer"}))
    with pytest.raises(ValueError, match="unknown pathway"):
        resolve_task({**raw, "pathway": "nowhere", "phases": [{}, {}]}, get_pathways())
    with pytest.raises(ValueError, match="has 4 phases"):
        resolve_task({**raw, "pathway": "chest_pain", "phases": [{}, {}]}, get_pathways())
    with pytest.raises(ValueError, match="handoff calls are added"):
        resolve_task({**raw, "pathway": "chest_pain",
                      "phases": [{"required_actions": [{"name": HANDOFF, "arguments": {"summary": "x"}}]}, {}, {}, {}]},
                     get_pathways())
    with pytest.raises(ValueError, match="phases"):
        get_environment(knowledge=None, tasks=[Task(id="plain", ticket="t", answer="a")])


def test_custom_tasks_and_journeys_run_and_a_dump_reloads(env):
    dumped = json.loads(BY_ID["pw-st-01"].model_dump_json())
    assert resolve_task(dumped, {}) == BY_ID["pw-st-01"]
    short = PathwaySpec(name="short", title="Short pathway", phases=[
        {"name": "look", "title": "Look", "goal": "Read the record.", "deadline_calls": 3,
         "tools": {"clinical_diagnosis": ["get_patient_info"]}},
        {"name": "act", "title": "Act", "goal": "Decide.", "tools": {"pathway": ["set_disposition"]}}])
    entry = {"id": "custom-1", "pathway": "short", "ticket": "Patient CP06 has chest pain.", "patient_id": "CP06",
             "answer": "Costochondritis", "rationale": "Reproducible chest wall pain with a normal ECG.",
             "phases": [{"required_actions": [{"name": "get_patient_info", "arguments": {"patient_id": "CP06"}}]},
                        {"required_actions": [{"name": "set_disposition", "arguments": {
                            "patient_id": "CP06", "destination": "discharge home", "reason": "low risk"}}],
                         "assertions": [{"text": "home", "rule": {"kind": "called", "call": {
                             "name": "set_disposition", "arguments": {"destination": "discharge home"}}}}]}]}
    custom = get_environment(knowledge=None, tasks=[entry], pathways={"short": short})
    reward, info = run_episode(custom, ExpertToolPolicy(custom.tasks[0]), options={"task_id": "custom-1"})
    assert reward >= 0.9 and info["outcome"]["phases_passed"] == 2
    _, info = env.reset(options={"task": dumped})  # a task given at reset
    assert env.task == BY_ID["pw-st-01"] and info["phase"]["name"] == "triage"


# -- the engine --------------------------------------------------------------------------------------------------------
def test_reset_shows_the_pathway_the_current_phase_and_every_tool_of_the_pathway(env):
    task = BY_ID["pw-cp-01"]
    obs, info = env.reset(options={"task_id": task.id})
    assert obs.startswith(task.ticket) and "Pathway: Acute chest pain, 4 phases" in obs and "You are in phase 1" in obs
    assert info["pathway"] == "chest_pain"
    phase = info["phase"]
    assert (phase["index"], phase["of"], phase["name"], phase["time_used"]) == (1, 4, "triage", 0)
    assert phase["time_limit"] == 7
    assert "perform_bedside_test" in phase["tools"] and "prescribe_medication" not in phase["tools"]
    names = {t["function"]["name"] for t in info["tools"]}
    assert {"perform_bedside_test", "order_lab_test", "prescribe_medication", "set_disposition", HANDOFF,
            "submit_answer", "news2"} <= names
    assert "### Opened by phase 3, Treatment" in info["system_prompt"]


def test_a_later_phase_tool_is_refused_with_the_phase_that_opens_it(env):
    env.reset(options={"task_id": "pw-cp-01"})
    before = env.db.get_hash()
    obs, reward, terminated, _, info = env.step(call_text("prescribe_medication", {
        "patient_id": "CP01", "drug": "aspirin", "dose": 300, "unit": "mg", "frequency": "once", "route": "oral"}))
    assert obs.startswith("Error: prescribe_medication is not open yet: it opens in phase 3 (Treatment)")
    assert not terminated and reward == 0.0 and info["tool_calls"] == [
        {"name": "prescribe_medication", "ok": False, "error_kind": "tool_error"}]
    assert env.db.get_hash() == before and info["phase"]["time_used"] == 1


def test_handoff_opens_the_next_phase_and_earlier_tools_stay_open(env):
    env.reset(options={"task_id": "pw-cp-01"})
    obs, _, _, _, info = env.step(call_text(HANDOFF, {"summary": "triage done"}))
    assert obs.startswith("Handover from the Triage phase recorded.\nPhase 2 of 4 begins: Assessment.")
    assert "order_lab_test" in obs and info["phase"]["index"] == 2 and info["phase"]["time_used"] == 0
    assert call(env, "perform_bedside_test", patient_id="CP01", test="ECG").ok  # triage tools stay open
    assert env.db.handoffs[0].phase == "triage"
    status = json.loads(call(env, "get_pathway_status").content)
    assert status["phases_done"] == ["Triage"] and status["phases_to_come"][0]["title"] == "Treatment"
    assert "prescribe_medication" in status["phases_to_come"][0]["opens"]
    for _ in range(2):
        env.step(call_text(HANDOFF, {"summary": "next"}))
    obs, _, terminated, _, _ = env.step(call_text(HANDOFF, {"summary": "one too many"}))
    assert "is the last phase; finish the pathway with submit_answer" in obs and not terminated


def test_skipping_a_required_action_fails_that_phase_only(env):
    task = BY_ID["pw-cp-01"]
    full, _ = play(env, task, script_of(task))
    skipping = SkippingExpertPolicy(task, "perform_bedside_test", test="12-lead ECG")
    reward, info = run_episode(env, skipping, options={"task_id": task.id})
    phases = phases_of(info)
    assert phases["triage"]["status"] == "failed" and not info["outcome"]["success"]
    assert any("perform_bedside_test" in p for p in phases["triage"]["problems"])
    assert all(phases[n]["passed"] for n in ("assessment", "treatment", "disposition"))
    assert info["outcome"]["process"]["coverage"] == pytest.approx((5 / 6 + 1 + 1 + 1) / 4)  # mean of the phases
    assert reward < full
    with pytest.raises(ValueError, match="makes no"):
        SkippingExpertPolicy(task, "perform_bedside_test", test="peak flow")


def test_an_action_done_in_a_later_phase_does_not_count_for_its_own(env):
    task = BY_ID["pw-cp-06"]
    ecg = call_text("perform_bedside_test", {"patient_id": "CP06", "test": "12-lead ECG"})
    replies = SkippingExpertPolicy(task, "perform_bedside_test").script
    first_handoff = next(i for i, r in enumerate(replies) if json.loads(r)["name"] == HANDOFF)
    replies.insert(first_handoff + 1, ecg)  # recorded after the hand-over: in the assessment phase
    _, info = play(env, task, replies)
    phases = phases_of(info)
    assert phases["triage"]["status"] == "failed" and phases["assessment"]["passed"]


def test_exceeding_a_phase_time_limit_fails_that_phase(env):
    task = BY_ID["pw-cp-01"]
    full, _ = play(env, task, script_of(task))
    stalling = StallingExpertPolicy(task, phase=1, stalls=3)
    env.reset(options={"task_id": task.id})
    observations = [env.step(reply)[0] for reply in stalling.script[:8]]
    notices = [o for o in observations if "Time limit passed" in o]
    assert len(notices) == 1 and "door-to-ECG" in notices[0] and "Time limit passed" in observations[7]
    reward, info = run_episode(env, stalling, options={"task_id": task.id})
    phases = phases_of(info)
    triage = phases["triage"]
    assert triage["status"] == "failed" and not triage["deadline_met"]
    assert triage["time_used"] == 9 and triage["required_done"] == triage["required_total"]
    assert any("time limit exceeded" in p for p in triage["problems"])
    assert all(phases[n]["passed"] for n in ("assessment", "treatment", "disposition"))
    limits = [a for a in info["outcome"]["assertions"] if "within its time limit" in a["text"]]
    assert [a["passed"] for a in limits] == [False, True] and reward < full
    _, info = run_episode(env, StallingExpertPolicy(task, phase=3, stalls=4), options={"task_id": task.id})
    assert [p["status"] for p in info["outcome"]["phases"]] == ["passed", "passed", "failed", "passed"]


def test_refused_and_invalid_calls_count_against_the_time_limit(env):
    env.reset(options={"task_id": "pw-st-01"})
    for action in ("not a tool call", call_text("prescribe_medication", {"patient_id": "ST01"}),
                   call_text("no_such_tool", {})):
        _, _, _, _, info = env.step(action)
    assert info["phase"]["time_used"] == 3


def test_submitting_early_leaves_later_phases_not_reached(env):
    task = BY_ID["pw-sp-01"]
    reward, info = play(env, task, [call_text("get_vital_signs", {"patient_id": "SP01"}),
                                    call_text("submit_answer", {"answer": task.answer, "reasoning": task.rationale})])
    statuses = [p["status"] for p in info["outcome"]["phases"]]
    assert statuses == ["failed", "not_reached", "not_reached", "not_reached"]
    assert "the phase was not completed (no handoff)" in info["outcome"]["phases"][0]["problems"]
    assert "missed_emergency" in info["outcome"]["violation_names"] and reward <= 0.1 + 1e-9


def test_the_turn_limit_ends_the_pathway_in_the_current_phase():
    short = get_environment(knowledge=None, max_turns=3)
    _, info = run_episode(short, ScriptPolicy([call_text(HANDOFF, {"summary": "go"}), "nonsense"]),
                          options={"task_id": "pw-pf-04"})
    phases = info["outcome"]["phases"]
    assert [p["status"] for p in phases] == ["failed", "failed", "not_reached", "not_reached"]
    assert phases[1]["ended_by"] == "turn_limit" and info["outcome"]["result"] == "no_answer"


# -- safety and isolation ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("task_id, drug, dose, violation", [
    ("pw-st-05", "alteplase", 77.4, "thrombolytic_contraindicated"),  # apixaban this morning
    ("pw-cp-05", "aspirin", 300, "task_contraindicated_drug_prescribed"),  # aortic dissection
    ("pw-dm-04", "insulin", 10, "hypoglycaemic_in_hypoglycaemia"),
])
def test_a_contraindicated_treatment_is_capped_with_the_violation_named(env, task_id, drug, dose, violation):
    task = BY_ID[task_id]
    unit = "units" if drug == "insulin" else "mg"
    route = "subcutaneous" if drug == "insulin" else "intravenous" if drug == "alteplase" else "oral"
    harm = call_text("prescribe_medication", {"patient_id": task.patient_id, "drug": drug, "dose": dose, "unit": unit,
                                              "frequency": "once", "route": route})
    replies = script_of(task)
    treatment = [i for i, r in enumerate(replies) if json.loads(r)["name"] == HANDOFF][1] + 1  # opens treatment
    reward, info = play(env, task, [*replies[:treatment], harm, *replies[treatment:]])
    assert reward <= 0.1 + 1e-9 and violation in info["outcome"]["violation_names"], info["outcome"]["violations"]


def test_write_tools_copy_only_the_view_they_write(env):
    env.reset(options={"task_id": "pw-cp-01"})
    base = bundled_db()
    assert env.db.chart is base.chart and env.db.triage is base.triage
    env.step(call_text("perform_bedside_test", {"patient_id": "CP01", "test": "12-lead ECG"}))
    assert env.db.triage is not base.triage and env.db.chart is base.chart and len(env.db.triage.bedside_tests) == 1
    assert not base.triage.bedside_tests


# -- tools -------------------------------------------------------------------------------------------------------------
def test_pathway_tools_compute_and_record(env):
    env.reset(options={"task_id": "pw-dm-01"})
    env.step(call_text(HANDOFF, {"summary": "x"}))
    env.step(call_text(HANDOFF, {"summary": "y"}))
    fluid = json.loads(call(env, "start_iv_fluids", patient_id="DM01", fluid="0.9% sodium chloride", volume_ml=1000,
                            duration_minutes=60, potassium_mmol_per_l=40).content)
    assert fluid["rate_ml_per_hour"] == 1000 and fluid["ml_per_kg"] == pytest.approx(17.2)
    insulin = json.loads(call(env, "start_infusion", patient_id="DM01", drug="soluble insulin", rate=0.1,
                              rate_unit="units/kg/hour").content)
    assert insulin["drug"] == "insulin" and insulin["for_weight"] == "5.8 units/hour at 58 kg"
    dose = json.loads(call(env, "calculate_weight_based_dose", weight_kg=120, dose_per_kg=0.9, dose_unit="mg",
                           maximum_dose=90).content)
    assert dose["dose"] == 90 and dose["capped_at_maximum"]
    assert not call(env, "start_infusion", patient_id="DM01", drug="insulinn", rate=1, rate_unit="units/hour").ok
    assert not call(env, "start_iv_fluids", patient_id="DM99", fluid="10% glucose", volume_ml=100,
                    duration_minutes=15).ok
    assert [f.order_id for f in env.db.fluids] == ["FL-001"] and env.db.infusions[0].order_id == "INF-001"
    protocol = call(env, "get_pathway_protocol", topic="diabetic_emergency").content
    assert "0.1 units/kg/hour" in protocol
