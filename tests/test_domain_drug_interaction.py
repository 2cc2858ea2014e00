"""DrugInteraction-v1: the task kinds, canonical expected actions, the patients' references into the drug reference
(tests/test_drug_reference.py checks the reference itself), the tools (interactions, CYP450, renal dosing, allergy cross-reactivity, alternatives,
medication writes), dose changes as prescribing, matching calls to expected actions, and WRITE isolation. The
acceptance checks every tool domain shares (tasks, tickets, tool kinds, the scripted expert, the random policy, the
interaction-ignoring prescriber capped at 0.1, registration, check_env, fuzzing) are in
tests/test_tool_domain_acceptance.py."""

from __future__ import annotations

import json

import pytest

from clinical_gym.tool_env.policies import ExpertToolPolicy, call_text, run_episode
from clinical_gym.domains.drug_interaction.data_model import DrugInteractionDB
from clinical_gym.domains.drug_interaction.environment import DrugInteractionEnv, bundled_db, get_environment, get_tasks
from clinical_gym.drugs import reference

TASKS = get_tasks()
CATEGORIES = {"interaction", "renal dosing", "allergy", "alternative"}


@pytest.fixture(scope="module")
def env() -> DrugInteractionEnv:
    return get_environment(knowledge=None)


def call(env, name, **arguments):
    result = env.toolkit.call(call_text(name, arguments))
    return json.loads(result.content) if result.ok and result.content[:1] in "[{" else result


# -- data --------------------------------------------------------------------------------------------------------------
def test_tasks_cover_the_four_task_kinds():
    assert CATEGORIES <= {t.category for t in TASKS}
    assert all(sum(t.category == c for t in TASKS) >= 5 for c in CATEGORIES)


def test_expected_actions_are_written_canonically_and_every_task_has_a_red_flag_to_screen(env):
    for task in TASKS:
        env.reset(options={"task_id": task.id})
        for action in task.expected_actions:
            canonical = env.canonical_arguments(action.name, dict(action.arguments))
            assert action.pattern.matches(action.name, canonical), (task.id, action.name)  # written canonically
        assert task.safety.required_screenings, task.id  # the shared suite checks the expected actions screen it


def test_the_database_references_resolve():
    db = bundled_db()
    drugs = reference()
    for patient in db.patients.values():
        for allergy in patient.allergies:
            assert drugs.allergy_group_of(allergy.substance) or drugs.find(allergy.substance), allergy
    with pytest.raises(ValueError, match="not in the drug reference"):
        DrugInteractionDB.model_validate({**db.model_dump(), "patients": {"X": {
            **db.patients["P001"].model_dump(), "patient_id": "X",
            "medications": [{"drug": "unobtainium", "dose": 1, "unit": "mg", "frequency": "daily", "route": "oral"}]}}})


# -- tools -------------------------------------------------------------------------------------------------------------
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


# -- safety wiring -----------------------------------------------------------------------------------------------------
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
