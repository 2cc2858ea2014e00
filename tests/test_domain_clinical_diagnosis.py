"""ClinicalDiagnosis-v1: the domain's own tools (test ordering and pending results, drug safety, the differential).
The acceptance checks every tool domain shares (tasks, leaks, tool kinds, the scripted expert, the random and unsafe
policies, registration, fuzzing) are in tests/test_tool_domain_acceptance.py."""

from __future__ import annotations

import json

import pytest

from clinical_gym.tool_env.policies import call_text
from clinical_gym.domains.clinical_diagnosis.environment import ClinicalDiagnosisEnv, get_environment


@pytest.fixture(scope="module")
def env() -> ClinicalDiagnosisEnv:
    return get_environment(knowledge=None)


def test_ordering_reveals_the_pending_result_and_records_the_order(env):
    env.reset(options={"task_id": "cd-001"})
    assert json.loads(env.toolkit.call(call_text("get_lab_results", {"patient_id": "P001", "test": "Troponin"})).content
                      )[0]["result"].startswith("no result available")
    out = json.loads(env.toolkit.call(call_text("order_lab_test", {"patient_id": "P001", "test": "hs-troponin"}))
                     .content)
    assert out["order_id"] == "ORD-001" and out["results"][0]["value"] == 1850 and out["results"][0]["flag"] == "high"
    labs = json.loads(env.toolkit.call(call_text("get_lab_results", {"patient_id": "P001", "test": "Troponin"}))
                      .content)
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
    assert info["renal_dosing"]["measure"] == "eGFR" and info["renal_dosing"]["bands"][0]["range"] == "0 to < 30"
    alteplase = json.loads(env.toolkit.call(call_text("get_drug_information", {"drug": "alteplase"})).content)
    assert alteplase["max_daily_dose_mg"] == 100 and any(
        limit.startswith("acute ischaemic stroke: 0.9 mg/kg") for limit in alteplase["dose_limits_by_indication"])


def test_differential_ranks_conditions_by_findings(env):
    env.reset(options={"task_id": "cd-025"})
    ranked = json.loads(env.toolkit.call(call_text("generate_differential", {
        "findings": ["epigastric pain radiating to the back", "vomiting", "lipase"]})).content)
    assert ranked and "pancreatitis" in ranked[0]["condition"].lower()


def test_the_hash_of_a_database_with_nothing_written_follows_its_clock_and_records():
    base = ClinicalDiagnosisEnv.default_db()
    fresh = lambda db: type(db).model_validate(db.model_dump())  # noqa: E731 - the same content, its own caches
    copy = base.episode_copy()
    assert copy.get_hash() == fresh(copy).get_hash() == base.get_hash()
    later = copy.model_copy(update={"clock": "2031-05-06 07:08"})  # shares the copy's caches
    assert later.get_hash() == fresh(later).get_hash() != copy.get_hash()
    assert copy.get_hash() == base.get_hash()  # each clock its own head
