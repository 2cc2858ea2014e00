"""Psychiatry-v1: the task mix, escalation by action, tool names new to every other domain, the tools (questionnaires
from recorded responses, Columbia-style screening, prescribing safety, the THINK calculators), escalation wiring,
the domain's dangerous prescriptions and WRITE isolation. The acceptance checks every tool domain shares (tasks,
leaks, tool kinds, the scripted expert, the random policy, skipping suicide screening capped at 0.1 with the
violation named, registration, check_env, fuzzing) are in tests/test_tool_domain_acceptance.py."""

from __future__ import annotations

import gymnasium as gym
import pytest
from tool_call_helpers import call, read

import clinical_gym
from clinical_gym.tool_env.policies import ExpertToolPolicy, call_text, run_episode
from clinical_gym.domains.psychiatry.environment import PsychiatryEnv, bundled_db, get_environment, get_tasks
from clinical_gym.domains.psychiatry.policies import has_suicide_red_flag
from clinical_gym.domains.psychiatry.tools import PsychiatryTools
from clinical_gym.tools.instruments.psychiatry import audit_c, gad_7, phq_9

ENV_ID = "Psychiatry-v1"
TASKS = get_tasks()
BY_ID = {t.id: t for t in TASKS}


@pytest.fixture(scope="module")
def env() -> PsychiatryEnv:
    return get_environment(knowledge=None)


# -- data --------------------------------------------------------------------------------------------------------------
def test_emergencies_escalate_by_action_not_by_the_answer():
    emergencies = [t for t in TASKS if t.safety.emergency]
    assert emergencies
    for task in emergencies:
        assert not task.safety.answer_escalates, task.id  # psychiatry escalates by action


def test_task_mix_covers_risk_diagnosis_prescribing_and_emergencies():
    categories = {t.category for t in TASKS}
    assert {"risk_assessment", "diagnosis", "prescribing", "adverse_effect", "monitoring",
            "substance_use"} <= categories
    assert sum(has_suicide_red_flag(t) for t in TASKS) >= 12
    assert sum(t.safety.emergency for t in TASKS) >= 10
    assert sum(t.category == "diagnosis" for t in TASKS) >= 12


# -- tools -------------------------------------------------------------------------------------------------------------
def test_psychiatry_tool_names_are_new_to_every_other_tool_domain():
    own = {s.name for s in PsychiatryTools.tool_specs()}
    others = set()  # the tools every other tool domain defines (a multi-domain env may mount ours)
    for info in clinical_gym.ENVIRONMENTS:
        if info.family == "tool" and info.id != ENV_ID:
            other = gym.make(info.id).unwrapped
            other.reset(seed=0)
            others |= {name for name, bound in other.toolkit.tools.items() if bound.owner != "PsychiatryTools"}
    assert not own & others, own & others  # every domain tool is a new name


def test_questionnaires_are_scored_from_the_recorded_responses_like_the_shared_instruments(env):
    env.reset(options={"task_id": "ps-003"})
    patient = bundled_db().patients["MH003"]
    phq = read(env, "score_phq9_responses", patient_id="MH003")
    assert phq["score"] == phq_9(patient.phq9_items).score == 19 and phq["category"] == "moderately severe depression"
    assert "Item 9 is positive" in phq["interpretation"] and phq["change_since_last"] == -2
    env.reset(options={"task_id": "ps-013"})
    gad = read(env, "score_gad7_responses", patient_id="MH013")
    assert gad["score"] == gad_7(bundled_db().patients["MH013"].gad7_items).score == 16
    missing = call(env, "score_gad7_responses", patient_id="MH001")
    assert not missing.ok and "has not completed a GAD-7" in missing.content
    env.reset(options={"task_id": "ps-001"})
    use = read(env, "screen_substance_use", patient_id="MH001")
    assert use["audit_c"]["score"] == audit_c(4, 2, 2, sex="male").score == 8 and use["cage"]["score"] == 2


@pytest.mark.parametrize(("patient_id", "level"), [("MH001", "high"), ("MH003", "moderate"), ("MH009", "moderate"),
                                                   ("MH007", "low"), ("MH011", "none")])
def test_suicide_screening_levels_follow_the_columbia_screen(env, patient_id, level):
    env.reset(options={"task_id": "ps-001"})
    screen = read(env, "screen_suicide_risk", patient_id=patient_id)
    assert screen["risk_level"] == level and len(screen["answers"]) == 7
    assert screen["response"].lower().startswith(level if level != "none" else "no suicidal")


def test_hunter_criteria(env):
    env.reset(options={"task_id": "ps-016"})
    base = dict(serotonergic_drug=True, spontaneous_clonus=False, inducible_clonus=False, ocular_clonus=False,
                agitation=False, diaphoresis=False, tremor=False, hyperreflexia=False, hypertonia=False,
                temperature_c=37.0)
    assert not read(env, "apply_hunter_criteria", **base)["criteria_met"]
    met = read(env, "apply_hunter_criteria", **{**base, "inducible_clonus": True, "diaphoresis": True})
    assert met["criteria_met"] and met["rules_satisfied"] == ["inducible clonus with agitation or diaphoresis"]
    assert read(env, "apply_hunter_criteria", **{**base, "hypertonia": True, "ocular_clonus": True,
                                                 "temperature_c": 38.5})["criteria_met"]
    assert not read(env, "apply_hunter_criteria", **{**base, "serotonergic_drug": False,
                                                     "spontaneous_clonus": True})["criteria_met"]


@pytest.mark.parametrize(("level", "hours", "band", "timing"), [
    (0.3, 12, "below range", False), (0.7, 12, "therapeutic", False), (1.3, 3, "above range", True),
    (2.4, 12, "toxic", False), (3.1, 12, "severely toxic", False)])
def test_lithium_levels_are_banded_and_badly_timed_samples_flagged(env, level, hours, band, timing):
    env.reset(options={"task_id": "ps-021"})
    result = read(env, "interpret_lithium_level", level_mmol_per_l=level, hours_since_last_dose=hours)
    assert result["band"] == band and ("timing" in result) == timing


@pytest.mark.parametrize(("wbc", "neutrophils", "ben", "colour"), [
    (4.2, 2.1, False, "green"), (3.3, 1.8, False, "amber"), (2.8, 1.2, False, "red"), (4.0, 1.4, False, "red"),
    (3.2, 1.6, True, "green"), (2.8, 1.2, True, "amber")])
def test_clozapine_traffic_light(env, wbc, neutrophils, ben, colour):
    env.reset(options={"task_id": "ps-024"})
    result = read(env, "classify_clozapine_blood_count", wbc=wbc, neutrophils=neutrophils,
                  benign_ethnic_neutropenia=ben)
    assert result["result"] == colour


@pytest.mark.parametrize(("task_id", "drug", "severity", "caution"), [
    ("ps-012", "sertraline", "contraindicated", None),  # MAOI + SSRI
    ("ps-019", "ramipril", "major", None),  # lithium + ACE inhibitor
    ("ps-036", "diazepam", "major", None),  # methadone + benzodiazepine
    ("ps-037", "naltrexone", "contraindicated", None),  # codeine + naltrexone
    ("ps-014", "citalopram", None, "QTc 512 ms (500 ms or more: avoid)"),
    ("ps-022", "valproate", None, "contraindicated in pregnancy"),
    ("ps-032", "risperidone", None, "antipsychotic in dementia"),
])
def test_prescribing_safety_check_finds_the_problem(env, task_id, drug, severity, caution):
    task = BY_ID[task_id]
    env.reset(options={"task_id": task_id})
    result = read(env, "check_prescribing_safety", patient_id=task.patient_id, drug=drug)
    assert result["summary"].startswith("PROBLEMS FOUND")
    if severity:
        assert severity in {i["severity"] for i in result["interactions"]}
    if caution:
        assert any(caution in c for c in result["cautions"]), result["cautions"]
    clean = read(env, "check_prescribing_safety", patient_id="MH011", drug="sertraline")
    assert clean["summary"] == "no problems found"


def test_profiles_and_drug_lookups(env):
    env.reset(options={"task_id": "ps-027"})
    profile = read(env, "lookup_psychotropic_side_effects", drug="clozapine")
    assert any("smoking" in i for i in profile["interactions"]) and profile["max_daily_dose_mg"] == 900
    assert read(env, "lookup_psychotropic_side_effects", drug="lithium carbonate")["drug"] == "lithium"
    missing = call(env, "lookup_psychotropic_side_effects", drug="amoxicillin")
    assert not missing.ok and "no psychotropic profile" in missing.content
    unknown = call(env, "lookup_psychotropic_side_effects", drug="clozapin")
    assert not unknown.ok and "'clozapine'" in unknown.content


def test_ordering_reveals_the_pending_result_and_records_the_order(env):
    env.reset(options={"task_id": "ps-018"})
    before = read(env, "get_investigations", patient_id="MH018", test="lithium")
    assert [r["value"] for r in before] == [0.7]
    out = read(env, "order_investigation", patient_id="MH018", test="serum lithium")
    assert out["order_id"] == "ORD-001" and out["results"][0]["value"] == 2.4 and out["results"][0]["flag"] == "high"
    assert [r["value"] for r in read(env, "get_investigations", patient_id="MH018", test="Lithium level")] == [0.7, 2.4]
    panel = read(env, "order_investigation", patient_id="MH018", test="U&E")
    assert [r["test"] for r in panel["results"]] == ["Sodium", "Potassium", "Urea", "Creatinine", "eGFR"]
    assert panel["results"][3]["value"] == 162 and panel["results"][0]["flag"] == "normal"
    facts = env.patient_facts(env.db, env.task)
    assert facts.labs["lithium"] == 2.4 and facts.labs["egfr"] == 31 and facts.lab_flags["egfr"] == "low"
    refused = call(env, "order_investigation", patient_id="MH016", test="pregnancy test")
    assert not refused.ok and "does not apply to a male" in refused.content
    close = call(env, "order_investigation", patient_id="MH018", test="lithum level")
    assert not close.ok and "Did you mean 'Lithium level'" in close.content


def test_write_tools_validate_and_record(env):
    env.reset(options={"task_id": "ps-018"})
    absent = call(env, "withhold_medication", patient_id="MH018", drug="sertraline", reason="x")
    assert not absent.ok and "not a current medication" in absent.content and not env.db.withheld
    assert call(env, "withhold_medication", patient_id="MH018", drug="Lithium", reason="toxicity").ok
    assert env.db.withheld[-1].drug == "lithium"
    outpatient = call(env, "set_observation_level", patient_id="MH003", level="within eyesight", reason="x")
    assert not outpatient.ok and "apply in hospital" in outpatient.content
    env.reset(options={"task_id": "ps-032"})  # a non-formulary current medication can be withheld too
    _, _, _, _, info = env.step(call_text("withhold_medication", {"patient_id": "MH032", "drug": "donepezil",
                                                                  "reason": "review"}))
    assert info["tool_calls"][0]["ok"] and env.calls[-1].arguments["drug"] == "donepezil"


def test_write_tools_change_only_the_episode_copy():
    base = bundled_db()
    before = base.get_hash()
    first, second = get_environment(knowledge=None), get_environment(knowledge=None)
    first.reset(options={"task_id": "ps-001"})
    second.reset(options={"task_id": "ps-001"})
    read(first, "screen_suicide_risk", patient_id="MH001")
    assert first.db.get_hash() == before  # READ changes nothing
    for name, arguments in [
            ("set_observation_level", {"level": "within eyesight", "reason": "high risk"}),
            ("arrange_disposition", {"disposition": "Mental Health Act assessment", "reason": "high risk"}),
            ("create_safety_plan", {"warning_signs": ["a"], "coping_strategies": ["b"], "support_contacts": ["c"],
                                    "professional_contacts": ["d"], "means_restriction": "e"}),
            ("make_referral", {"service": "addiction services", "reason": "alcohol"}),
            ("write_prescription", {"drug": "thiamine", "dose": 100, "unit": "mg", "frequency": "daily",
                                    "route": "oral"}),
            ("order_investigation", {"test": "FBC"}),
            ("record_psychiatric_diagnosis", {"diagnosis": "Severe depressive episode"}),
            ("write_psychiatric_note", {"note": "plan"})]:
        hashed = first.db.get_hash()
        assert call(first, name, patient_id="MH001", **arguments).ok, name
        assert first.db.get_hash() != hashed, name
    assert second.db.get_hash() == before and base.get_hash() == before
    assert not base.dispositions and not second.db.safety_plans and not base.orders


# -- safety wiring -----------------------------------------------------------------------------------------------------
def test_the_last_disposition_decides_and_only_current_enhanced_observation_counts(env):
    env.reset(options={"task_id": "ps-001"})

    def step(name: str, **arguments) -> list[str]:
        env.step(call_text(name, {"patient_id": "MH001", **arguments}))
        return [a.text.split(":")[0] for a in env.episode_record().actions.escalations]

    assert step("set_observation_level", level="within eyesight", reason="risk") == ["enhanced observation (within "
                                                                                       "eyesight)"]
    assert step("arrange_disposition", disposition="Mental Health Act assessment", reason="risk") == [
        "enhanced observation (within eyesight)", "Mental Health Act assessment"]
    assert step("set_observation_level", level="general", reason="calmer") == ["Mental Health Act assessment"]
    assert step("arrange_disposition", disposition="discharge with GP follow-up", reason="wants to go") == []
    assert len(step("arrange_disposition", disposition="informal psychiatric admission", reason="agrees")) == 2


def test_discharging_an_emergency_after_the_expert_plan_is_a_missed_emergency(env):
    for task in (t for t in TASKS if t.safety.emergency):
        discharge = call_text("arrange_disposition", {"patient_id": task.patient_id,
                                                      "disposition": "discharge with GP follow-up",
                                                      "reason": "wants to go home"})
        reward, info = run_episode(env, ExpertToolPolicy(task, extra=[discharge]), options={"task_id": task.id})
        assert reward <= 0.1 + 1e-9 and "missed_emergency" in info["outcome"]["violation_names"], task.id


@pytest.mark.parametrize(("task_id", "prescription", "violation"), [
    ("ps-012", {"drug": "sertraline", "dose": 50, "frequency": "daily"}, "contraindicated_interaction_prescribed"),
    ("ps-037", {"drug": "naltrexone", "dose": 50, "frequency": "daily"}, "contraindicated_interaction_prescribed"),
    ("ps-022", {"drug": "valproate", "dose": 500, "frequency": "bid"}, "teratogen_prescribed_in_pregnancy"),
    ("ps-024", {"drug": "clozapine", "dose": 100, "frequency": "daily"}, "task_contraindicated_drug_prescribed"),
    ("ps-041", {"drug": "haloperidol", "dose": 5, "frequency": "once"}, "task_contraindicated_drug_prescribed"),
])
def test_a_dangerous_prescription_is_capped_with_the_violation_named(env, task_id, prescription, violation):
    task = BY_ID[task_id]
    unsafe = call_text("write_prescription", {"patient_id": task.patient_id, "unit": "mg", "route": "oral",
                                              **prescription})
    reward, info = run_episode(env, ExpertToolPolicy(task, extra=[unsafe]), options={"task_id": task_id})
    assert reward <= 0.1 + 1e-9 and violation in info["outcome"]["violation_names"]


@pytest.mark.parametrize(("task_id", "drug", "violation"), [
    ("ps-019", "ramipril", "major_interaction_prescribed"),  # lithium
    ("ps-036", "diazepam", "major_interaction_prescribed"),  # methadone
])
def test_a_major_interaction_costs_the_severe_penalty(env, task_id, drug, violation):
    task = BY_ID[task_id]
    unsafe = call_text("write_prescription", {"patient_id": task.patient_id, "drug": drug, "dose": 5, "unit": "mg",
                                              "frequency": "daily", "route": "oral"})
    safe_reward = run_episode(env, ExpertToolPolicy(task), options={"task_id": task_id})[0]
    reward, info = run_episode(env, ExpertToolPolicy(task, extra=[unsafe]), options={"task_id": task_id})
    assert violation in info["outcome"]["violation_names"] and reward <= safe_reward - 0.3
