"""DrugInteraction-v0 acceptance: data and tasks, agreement with the shared drug reference, tools, the scripted
expert (>= 0.9 on every task), a random tool-caller (< 0.3 mean), the interaction-ignoring prescriber (capped at 0.1,
violation named), WRITE isolation, check_env, and fuzzed arguments."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import register, registry
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_gym import pharmacology
from clinical_gym.rewards.episode import EpisodeRecord, SubmittedAnswer, contains_term
from clinical_gym.rewards.five_d import score_accuracy
from clinical_gym.tool_policies import ExpertToolPolicy, RandomToolPolicy, call_text, run_episode
from clinical_gym.tool_tasks import RewardBasis
from domains.drug_interaction.data_model import DrugInteractionDB
from domains.drug_interaction.environment import DrugInteractionEnv, bundled_db, get_environment, get_tasks
from domains.drug_interaction.policies import InteractionIgnoringPolicy, contraindicated_partner
from domains.drug_interaction.reference import reference_of
from domains.drug_interaction.tools import DrugInteractionTools
from tools import ToolKind

ENV_ID = "DrugInteraction-v0"
if ENV_ID not in registry:  # the lead wires it into clinical_gym.registration
    register(id=ENV_ID, entry_point="domains.drug_interaction.environment:DrugInteractionEnv")
TASKS = get_tasks()
CATEGORIES = {"interaction", "renal dosing", "allergy", "alternative"}


@pytest.fixture(scope="module")
def env() -> DrugInteractionEnv:
    return get_environment(knowledge=None)


def call(env, name, **arguments):
    result = env.toolkit.call(call_text(name, arguments))
    return json.loads(result.content) if result.ok and result.content[:1] in "[{" else result


# -- data --------------------------------------------------------------------------------------------------------------
def test_at_least_40_tasks_over_the_four_task_kinds_with_a_deterministic_split():
    assert len(TASKS) >= 40 and len({t.id for t in TASKS}) == len(TASKS)
    assert CATEGORIES <= {t.category for t in TASKS}
    assert all(sum(t.category == c for t in TASKS) >= 5 for c in CATEGORIES)
    train, test = get_tasks("train"), get_tasks("test")
    assert train and test and len(train) + len(test) == len(TASKS) and not {t.id for t in train} & {t.id for t in test}
    with pytest.raises(ValueError, match="unknown split"):
        get_tasks("dev")


def test_every_task_is_well_formed(env):
    db = bundled_db()
    for task in TASKS:
        assert task.patient_id in db.patients, task.id
        assert task.expected_actions and task.rationale and task.uses(RewardBasis.ACTION)
        assert any(a.rule is not None for a in task.assertions), f"{task.id} needs a rule-graded assertion"
        env.reset(options={"task_id": task.id})
        names = {a.name for a in task.expected_actions}
        for action in task.expected_actions:
            assert action.name in env.tool_kinds, (task.id, action.name)
            env.toolkit.spec(action.name).arguments.validate_json(action.arguments)
            canonical = env.canonical_arguments(action.name, dict(action.arguments))
            assert action.pattern.matches(action.name, canonical), (task.id, action.name)  # written canonically
        assert task.safety.required_screenings, task.id
        for screening in task.safety.required_screenings:  # the reference solution screens every red flag
            assert names & set(screening.tools), (task.id, screening.red_flag)


def test_every_gold_answer_and_alias_scores_full_accuracy():
    for task in TASKS:
        for answer in (task.answer, *task.answer_aliases, *([task.options[task.answer]] if task.options else [])):
            record = EpisodeRecord(task=task, answer=SubmittedAnswer(answer=answer, call_index=0))
            assert score_accuracy(record) == 1.0, (task.id, answer)


def test_open_answer_tickets_do_not_name_the_answer():
    open_tasks = [t for t in TASKS if not t.options]
    assert open_tasks
    for task in open_tasks:
        assert not any(contains_term(task.ticket, gold) for gold in (task.answer, *task.answer_aliases)), task.id


def test_the_database_references_resolve():
    db = bundled_db()
    reference = reference_of(db)
    for patient in db.patients.values():
        for allergy in patient.allergies:
            assert reference.allergy_group_of(allergy.substance) or reference.find(allergy.substance), allergy
    rules = [*db.model_dump()["interactions"], {"between": ["simvastatin", "no_such_class"], "severity": "minor",
                                                "mechanism": "m", "management": "m"}]
    with pytest.raises(ValueError, match="name no drug or class"):
        reference_of(DrugInteractionDB.model_validate({**db.model_dump(), "interactions": rules}))
    with pytest.raises(ValueError, match="unknown drugs"):
        DrugInteractionDB.model_validate({**db.model_dump(), "patients": {"X": {
            **db.patients["P001"].model_dump(), "patient_id": "X",
            "medications": [{"drug": "unobtainium", "dose": 1, "unit": "mg", "frequency": "daily", "route": "oral"}]}}})


def test_the_reference_agrees_with_the_shared_drug_reference_the_safety_rules_use():
    """Where clinical_gym.pharmacology knows both drugs, the interaction severity, maximum dose, pregnancy
    contraindication and renal threshold are the same, so the tools never advise what the grader penalises."""
    db = bundled_db()
    reference = reference_of(db)
    shared = {name: drug for name in db.drugs if (drug := pharmacology.find_drug(name)) and drug.name == name}
    assert len(shared) >= 80
    names = sorted(shared)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            theirs = pharmacology.interaction(shared[a], shared[b])
            ours = reference.interaction(db.drugs[a], db.drugs[b])
            if theirs is not None:
                assert ours is not None and ours.severity == theirs.severity, (a, b, theirs.severity)
    for name, drug in shared.items():
        ours = db.drugs[name]
        assert drug.pregnancy_contraindicated == (ours.pregnancy == "contraindicated"), name
        assert drug.max_daily_mg is None or drug.max_daily_mg == ours.max_daily_mg, name
        if drug.avoid_egfr_below is not None:
            band = reference.renal_band(ours, drug.avoid_egfr_below - 0.5)
            assert band is not None and band.avoid, name


# -- tools -------------------------------------------------------------------------------------------------------------
def test_tool_counts_and_kinds(env):
    own = DrugInteractionTools.tool_specs()
    assert len(own) >= 8 and len(env.tool_kinds) >= 12
    assert {s.kind for s in own} == {ToolKind.READ, ToolKind.WRITE, ToolKind.THINK}
    assert set(env.tool_kinds.values()) == set(ToolKind)
    with_kb = get_environment(knowledge="bundled")  # mounted, opened only on first search
    assert {"search_knowledge", "get_passage", "search_by_category"} <= set(with_kb.tool_kinds)


def test_interaction_lookups(env):
    env.reset(options={"task_id": "di-001"})
    found = call(env, "check_interaction", drug_a="Clarithromycin 500 mg", drug_b="simvastatin")
    assert found["severity"] == "contraindicated" and "CYP3A4" in found["mechanism"]
    reverse = call(env, "check_interaction", drug_a="simvastatin", drug_b="clarithromycin")
    assert reverse["severity"] == "contraindicated"
    assert call(env, "check_interaction", drug_a="pravastatin", drug_b="clarithromycin")["severity"] == "none listed"
    assert call(env, "check_interaction", drug_a="warfarin", drug_b="acetaminophen")["severity"] == "minor"
    assert "'simvastatin'" in call(env, "check_interaction", drug_a="simvastatn", drug_b="warfarin").content
    assert "two different drugs" in call(env, "check_interaction", drug_a="GTN", drug_b="glyceryl trinitrate").content
    everything = call(env, "check_all_interactions", patient_id="P001", drug="clarithromycin")
    assert [i["severity"] for i in everything["interactions"]] == ["contraindicated", "major", "moderate", "moderate"]
    assert everything["summary"] == "1 contraindicated, 1 major, 2 moderate"  # + clarithromycin-amlodipine
    assert call(env, "check_all_interactions", patient_id="P001")["summary"] == "1 moderate"  # simvastatin-amlodipine


def test_cyp450_predictions(env):
    env.reset(options={"task_id": "di-017"})
    codeine = call(env, "predict_cyp450_interaction", drug_a="fluoxetine", drug_b="codeine")["predicted_effects"]
    assert codeine == ["fluoxetine inhibits CYP2D6 (strong), which activates the prodrug codeine: its active "
                       "metabolite and effect are expected to fall."]
    induced = call(env, "predict_cyp450_interaction", drug_a="apixaban", drug_b="rifampicin")["predicted_effects"]
    assert {e.split(":")[1].strip() for e in induced} == {"apixaban levels are expected to fall."}
    assert len(induced) == 2  # CYP3A4 and P-gp
    assert call(env, "predict_cyp450_interaction", drug_a="paracetamol", drug_b="lithium")["predicted_effects"] == [
        "No CYP450 or P-glycoprotein interaction is predicted."]


def test_renal_tools(env):
    env.reset(options={"task_id": "di-019"})
    renal = call(env, "get_renal_function", patient_id="P019")
    assert renal["egfr"][-1]["value"] == 28 and renal["egfr_stage"] == "G4 (15-29)" and renal["weight_kg"] == 52
    female = call(env, "calculate_creatinine_clearance", age=78, weight_kg=52, serum_creatinine_umol_l=160,
                  sex="female")
    male = call(env, "calculate_creatinine_clearance", age=74, weight_kg=70, serum_creatinine_umol_l=150, sex="male")
    assert (female["creatinine_clearance_ml_min"], male["creatinine_clearance_ml_min"]) == (21.0, 37.9)
    band = call(env, "adjust_dose_for_renal_function", drug="gabapentin", renal_function_ml_min=21)
    assert band["band"] == "15 to < 30" and band["max_daily_dose_mg"] == 700
    assert "creatinine clearance" in band["measure"]
    assert call(env, "adjust_dose_for_renal_function", drug="nitrofurantoin", renal_function_ml_min=25)["avoid"]
    usual = call(env, "adjust_dose_for_renal_function", drug="nitrofurantoin", renal_function_ml_min=50)
    assert usual["band"] == ">= 45"
    assert call(env, "adjust_dose_for_renal_function", drug="linagliptin", renal_function_ml_min=10)["advice"] == (
        "No renal dose adjustment is needed.")


@pytest.mark.parametrize("task_id, patient, drug, relation, verdict", [
    ("di-031", "P031", "cefalexin", "cross-reactive group", "avoid"),  # penicillin anaphylaxis
    ("di-032", "P032", "cefalexin", "cross-reactive group", "use with caution"),  # mild amoxicillin rash
    ("di-033", "P033", "furosemide", "cross-reactive group", "no special precautions"),  # sulfa antibiotic allergy
    ("di-034", "P034", "aztreonam", "cross-reactive group", "no special precautions"),
    ("di-036", "P036", "clarithromycin", "same allergy group", "avoid"),  # erythromycin allergy
    ("di-038", "P038", "ramipril", "same allergy group", "avoid"),
    ("di-035", "P035", "paracetamol", None, "no documented allergy conflict"),
])
def test_allergy_cross_reactivity(env, task_id, patient, drug, relation, verdict):
    env.reset(options={"task_id": task_id})
    checked = call(env, "check_allergy_cross_reactivity", patient_id=patient, drug=drug)
    assert checked["verdict"] == verdict
    assert [f["relation"] for f in checked["findings"]] == ([relation] if relation else [])


def test_recommend_alternative_screens_against_the_patient(env):
    env.reset(options={"task_id": "di-018"})
    listed = call(env, "recommend_alternative", patient_id="P018", drug="ramipril", indication="Hypertension")
    by_drug = {a["drug"]: a for a in listed["alternatives"]}
    assert by_drug["amlodipine"]["suitable"] and not by_drug["losartan"]["suitable"]
    assert "major interaction with lithium" in by_drug["bendroflumethiazide"]["issues"][0]
    assert listed["alternatives"][0]["suitable"] and "ramipril" not in by_drug
    env.reset(options={"task_id": "di-043"})
    rate = call(env, "recommend_alternative", patient_id="P043", drug="bisoprolol",
                indication="atrial fibrillation rate control")
    assert {a["drug"] for a in rate["alternatives"] if a["suitable"]} == {"diltiazem", "verapamil", "digoxin"}
    assert "avoid in asthma" in {a["drug"]: a for a in rate["alternatives"]}["atenolol"]["issues"]
    assert "unknown indication" in call(env, "recommend_alternative", patient_id="P043", drug="bisoprolol",
                                        indication="hiccups").content


def test_write_tools_update_the_medication_list(env):
    env.reset(options={"task_id": "di-006"})
    assert "not taking" in call(env, "change_dose", patient_id="P006", drug="digoxin", dose=62.5, unit="mcg",
                                frequency="daily", reason="x").content
    call(env, "discontinue_medication", patient_id="P006", drug="co-trimoxazole", reason="interaction")
    call(env, "discontinue_medication", patient_id="P006", drug="warfarin", reason="INR 6.2", temporary=True)
    call(env, "change_dose", patient_id="P006", drug="ramipril", dose=5, unit="mg", frequency="daily", reason="BP")
    rx = call(env, "prescribe", patient_id="P006", drug="nitrofurantoin", dose=100, unit="mg", frequency="bid",
              route="oral")
    assert rx["prescription_id"] == "RX-001"
    meds = call(env, "get_medication_list", patient_id="P006")
    current = {m["drug"]: m for m in meds["current"]}
    assert set(current) == {"bisoprolol", "ramipril", "nitrofurantoin"}
    assert current["ramipril"]["dose"] == 5 and current["ramipril"]["status"] == "dose changed this encounter"
    assert [(s["drug"], s["status"]) for s in meds["stopped_this_encounter"]] == [("co-trimoxazole", "stopped"),
                                                                                ("warfarin", "withheld")]
    assert "already" in call(env, "change_dose", patient_id="P006", drug="ramipril", dose=5, unit="mg",
                             frequency="daily", reason="x").content
    alert = call(env, "record_interaction_alert", patient_id="P006", drug_a="warfarin", drug_b="co-trimoxazole",
                 severity="major", action="stopped")
    assert alert["alert_id"] == "ALERT-001" and env.db.alerts[0].drug_a == "warfarin"


def test_write_tools_change_the_hash_only_in_this_episodes_copy():
    base = bundled_db()
    base_hash = base.get_hash()
    a, b = get_environment(base, knowledge=None), get_environment(base, knowledge=None)
    a.reset(options={"task_id": "di-006"})
    b.reset(options={"task_id": "di-006"})
    assert a.db.get_hash() == b.db.get_hash() == base_hash
    call(a, "get_medication_list", patient_id="P006")
    call(a, "check_all_interactions", patient_id="P006")
    assert a.db.get_hash() == base_hash  # READ changes nothing
    for name, arguments in [
            ("prescribe", {"drug": "nitrofurantoin", "dose": 100, "unit": "mg", "frequency": "bid", "route": "oral"}),
            ("change_dose", {"drug": "ramipril", "dose": 5, "unit": "mg", "frequency": "daily", "reason": "BP"}),
            ("discontinue_medication", {"drug": "warfarin", "reason": "INR", "temporary": True}),
            ("record_interaction_alert", {"drug_a": "warfarin", "drug_b": "co-trimoxazole", "severity": "major",
                                          "action": "stopped"})]:
        before = a.db.get_hash()
        assert a.toolkit.call(call_text(name, {"patient_id": "P006", **arguments})).ok, name
        assert a.db.get_hash() != before, name
    assert b.db.get_hash() == base.get_hash() == base_hash
    assert not (base.prescriptions or base.dose_changes or base.discontinuations or base.alerts)
    assert {m["drug"] for m in call(b, "get_medication_list", patient_id="P006")["current"]} >= {"warfarin"}
    a.reset(options={"task_id": "di-006"})
    assert a.db.get_hash() == base_hash


# -- acceptance policies -----------------------------------------------------------------------------------------------
def test_scripted_expert_scores_at_least_09_on_every_task(env):
    for task in TASKS:
        reward, info = run_episode(env, ExpertToolPolicy(task), options={"task_id": task.id})
        assert reward >= 0.9, (task.id, reward, info["outcome"]["violation_names"], info["outcome"]["scores"])
        assert info["outcome"]["success"] and not info["outcome"]["violations"], task.id


def test_random_tool_caller_scores_below_03_on_average(env):
    rewards = [run_episode(env, RandomToolPolicy(env.tool_schemas, seed=seed), options={"task_id": task.id})[0]
               for task in TASKS for seed in (1, 2)]
    assert np.mean(rewards) < 0.3


def test_ignoring_a_contraindicated_interaction_is_capped_at_01_with_the_violation_named(env):
    db = bundled_db()
    unsafe = [t for t in TASKS if contraindicated_partner(db, t) is not None]
    assert len(unsafe) >= 8
    for task in unsafe:
        policy = InteractionIgnoringPolicy(task, db)
        reward, info = run_episode(env, policy, options={"task_id": task.id})
        names = info["outcome"]["violation_names"]
        assert reward <= 0.1 + 1e-9, task.id
        assert {"contraindicated_interaction_prescribed", "task_contraindicated_drug_prescribed"} & set(names), task.id
        assert not info["outcome"]["success"]
    with pytest.raises(ValueError, match="no contraindicated partner"):
        InteractionIgnoringPolicy(next(t for t in TASKS if t.id == "di-019"), db)


def test_a_dose_increase_counts_as_prescribing_and_a_decrease_does_not(env):
    env.reset(options={"task_id": "di-020"})
    for action in ExpertToolPolicy(next(t for t in TASKS if t.id == "di-020")).script[:2]:
        env.step(action)
    env.step(call_text("change_dose", {"patient_id": "P020", "drug": "metformin", "dose": 2000, "unit": "mg",
                                       "frequency": "bid", "reason": "poor control"}))
    _, reward, _, _, info = env.step(call_text("submit_answer", {"answer": "B"}))
    assert reward <= 0.1 + 1e-9 and "dose_above_maximum" in info["outcome"]["violation_names"]
    reward, info = run_episode(env, ExpertToolPolicy(next(t for t in TASKS if t.id == "di-008")),
                               options={"task_id": "di-008"})  # digoxin halved beside amiodarone: no violation
    assert reward >= 0.9 and info["outcome"]["violations"] == []


def test_calls_count_for_the_expected_actions_in_either_pair_order_and_by_other_names(env):
    env.reset(options={"task_id": "di-002"})
    for name, arguments in [("get_medication_list", {"patient_id": " P002 "}),
                            ("check_interaction", {"drug_a": "Sildenafil", "drug_b": "isosorbide mononitrate 60 mg"}),
                            ("record_interaction_alert", {"patient_id": "P002", "drug_a": "sildenafil",
                                                         "drug_b": "isosorbide mononitrate",
                                                         "severity": "contraindicated", "action": "not prescribed"})]:
        env.step(call_text(name, arguments))
    _, _, _, _, info = env.step(call_text("submit_answer", {"answer": "C", "reasoning": "Nitrate with a PDE5 "
                                                                                        "inhibitor: hypotension."}))
    assert info["outcome"]["process"]["matched_actions"] == ["get_medication_list", "check_interaction",
                                                             "record_interaction_alert"]


def test_episodes_never_change_the_bundled_database(env):
    before = bundled_db().get_hash()
    for task in TASKS:
        run_episode(env, ExpertToolPolicy(task), options={"task_id": task.id})
    assert bundled_db().get_hash() == before


def test_registered_id_makes_the_env_and_passes_check_env():
    made = gym.make(ENV_ID, knowledge=None, split="test", max_turns=5)
    obs, info = made.reset(seed=0)
    assert made.unwrapped.task.split == "test" and obs == made.unwrapped.task.prompt and len(info["tools"]) >= 12
    assert "contraindicated interaction" in info["system_prompt"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(ENV_ID, knowledge=None).unwrapped, skip_render_check=False)


_tool_names = st.sampled_from(sorted(DrugInteractionTools._tool_attributes) + ["submit_answer"])
_values = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False), st.text(max_size=30),
                    st.sampled_from(["P001", "P006", "P999", "simvastatin", "clarithromycin", "warfarin", "mg", "bid",
                                     "oral", "female", "major", "hypertension"]),
                    st.lists(st.text(max_size=10), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(),
                                                                                max_size=2))
_arguments = st.dictionaries(st.sampled_from(["patient_id", "drug", "drug_a", "drug_b", "dose", "unit", "frequency",
                                              "route", "indication", "reason", "temporary", "severity", "action",
                                              "test", "age", "weight_kg", "serum_creatinine_umol_l", "sex",
                                              "renal_function_ml_min", "answer"]), _values, max_size=8)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(calls=st.lists(st.tuples(_tool_names, _arguments), min_size=1, max_size=6))
def test_fuzzed_arguments_to_every_domain_tool_never_raise(calls):
    env = _FUZZ_ENV
    env.reset(options={"task_id": "di-006"})
    for name, arguments in calls:
        obs, reward, terminated, _, info = env.step(json.dumps({"name": name, "arguments": arguments}))
        assert isinstance(obs, str) and obs and all(c["error_kind"] != "tool_crash" for c in info.get("tool_calls", []))
        if terminated:
            break


_FUZZ_ENV = get_environment(knowledge=None, max_turns=8)
