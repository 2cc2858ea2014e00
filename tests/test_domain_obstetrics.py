"""Obstetrics-v1: the obstetric calculations against hand-worked examples (Naegele's rule, crown-rump length, the ACOG
re-dating rule, NICHD categories, ACOG hypertensive disorders, haemorrhage stages), the task kinds and their
agreement with the calculators and the drug reference, the tools, safety wiring (the obstetric violation patterns),
isolation, and the dating calculator under fuzzed dates. The acceptance checks every tool domain shares (tasks,
leaks, tool kinds, the scripted expert, the random policy, the unsafe prescriber capped at 0.1 with the violation
named, registration, check_env, fuzzing) are in tests/test_tool_domain_acceptance.py."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tool_call_helpers import call, read

from clinical_gym.drugs import reference
from clinical_gym.rewards.episode import CallRecord
from clinical_gym.tool_env.policies import ScriptPolicy, call_text, run_episode
from clinical_gym.domains.obstetrics import calculations as calc
from clinical_gym.domains.obstetrics.environment import ObstetricsEnv, bundled_db, get_environment, get_tasks
from clinical_gym.domains.obstetrics.policies import unsafe_drug_for
from clinical_gym.tools import CallForm, ToolKind
from clinical_gym.tools.instruments import bishop_score

TASKS = get_tasks()
BY_ID = {t.id: t for t in TASKS}
D = date.fromisoformat


@pytest.fixture(scope="module")
def env() -> ObstetricsEnv:
    return get_environment(knowledge=None)


# -- calculations: dating ----------------------------------------------------------------------------------------------
# Worked by hand: 8.052 * sqrt(CRL) + 23.73, e.g. 45 mm: 8.052 * 6.708 + 23.73 = 77.74 -> 78 days = 11+1 weeks.
@pytest.mark.parametrize(("crl_mm", "days", "text"), [(10, 49, "7+0"), (22, 61, "8+5"), (45, 78, "11+1"),
                                                      (60, 86, "12+2"), (84, 98, "14+0")])
def test_crown_rump_length_gives_the_robinson_gestation(crl_mm, days, text):
    assert calc.crl_gestation_days(crl_mm) == days and calc.weeks_days(days) == f"{text} weeks"
    with pytest.raises(ValueError, match="3-84 mm"):
        calc.crl_gestation_days(90)


def test_naegele_rule_with_and_without_a_cycle_adjustment():
    plain = calc.gestational_age(D("2025-06-10"), lmp=D("2025-01-20"))
    assert plain["edd"] == "2025-10-27" and plain["gestational_age"] == "20+1 weeks" and plain["dating_basis"] == "lmp"
    assert "suboptimally dated" in plain["reason"] and plain["trimester"] == "second"
    long_cycle = calc.gestational_age(D("2025-06-10"), lmp=D("2025-04-07"), cycle_length_days=35)
    assert long_cycle["edd"] == "2026-01-19" and long_cycle["gestational_age"] == "8+1 weeks"
    assert "+ 7 days for a 35-day cycle" in long_cycle["by_lmp"]["rule"]


def test_a_first_trimester_scan_re_dates_only_beyond_7_days():
    kept = calc.gestational_age(D("2025-06-10"), lmp=D("2025-01-20"), scan_date=D("2025-04-01"), crl_mm=45)
    # LMP: 10+1 weeks at the scan; CRL 45 mm: 11+1 weeks -> 7 days apart, not more than 7: keep the LMP date
    assert kept["comparison"]["discrepancy_days"] == 7 and kept["dating_basis"] == "lmp" and kept["edd"] == "2025-10-27"
    assert kept["by_ultrasound"]["edd"] == "2025-10-20"
    redated = calc.gestational_age(D("2025-06-10"), lmp=D("2025-01-06"), scan_date=D("2025-03-24"), crl_mm=22)
    # LMP: 11+0 weeks; CRL 22 mm: 8+5 weeks -> 16 days: re-date to scan date + (280 - 61) days
    assert redated["comparison"]["discrepancy_days"] == 16 and redated["dating_basis"] == "ultrasound"
    assert redated["edd"] == "2025-10-29" and redated["gestational_age"] == "19+6 weeks"


@pytest.mark.parametrize(("lmp_days_at_scan", "threshold"), [(56, 5), (62, 5), (63, 7), (111, 7), (112, 10),
                                                              (153, 10), (154, 14), (195, 14), (196, 21), (250, 21)])
def test_redating_thresholds_follow_the_acog_table(lmp_days_at_scan, threshold):
    assert calc.redating_threshold(lmp_days_at_scan)[0] == threshold
    scan = D("2025-05-01")
    lmp = date.fromordinal(scan.toordinal() - lmp_days_at_scan)
    for gap, redate in ((threshold, False), (threshold + 1, True)):
        ga = lmp_days_at_scan - gap
        result = calc.gestational_age(D("2025-06-10"), lmp=lmp, scan_date=scan, scan_weeks=ga // 7, scan_days=ga % 7)
        assert (result["dating_basis"] == "ultrasound") is redate, (lmp_days_at_scan, gap)


def test_uncertain_or_missing_lmp_is_dated_by_ultrasound_and_bad_input_is_refused():
    uncertain = calc.gestational_age(D("2025-06-10"), lmp=D("2025-01-28"), lmp_certain=False, scan_date=D("2025-04-22"),
                                     crl_mm=62)
    assert uncertain["comparison"]["discrepancy_days"] == 3 and uncertain["edd"] == "2025-11-01"
    assert uncertain["dating_basis"] == "ultrasound"
    scan_only = calc.gestational_age(D("2025-06-10"), scan_date=D("2025-05-19"), scan_weeks=19, scan_days=2)
    assert scan_only["edd"] == "2025-10-11" and scan_only["gestational_age"] == "22+3 weeks"
    for kwargs, message in [({}, "give lmp_date"), ({"crl_mm": 40}, "give scan_date"),
                            ({"scan_date": D("2025-04-01")}, "give the scan's crl_mm"),
                            ({"scan_date": D("2025-04-01"), "crl_mm": 40, "scan_weeks": 11}, "not both"),
                            ({"lmp": D("2025-07-01")}, "after the date"), ({"lmp": D("2025-01-01"),
                                                                            "cycle_length_days": 60}, "20-45")]:
        with pytest.raises(ValueError, match=message):
            calc.gestational_age(D("2025-06-10"), **kwargs)


# -- calculations: fetal heart rate ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("amplitude", "category"), [(0, "absent"), (3, "minimal"), (5, "minimal"), (6, "moderate"),
                                                     (25, "moderate"), (26, "marked")])
def test_variability_bands(amplitude, category):
    assert calc.variability_category(amplitude) == category


@pytest.mark.parametrize(("kwargs", "category"), [
    ({"baseline_bpm": 140, "variability_amplitude_bpm": 10, "accelerations": True, "early_decelerations": True}, "I"),
    ({"baseline_bpm": 140, "variability_amplitude_bpm": 10, "accelerations": False}, "I"),
    ({"baseline_bpm": 150, "variability_amplitude_bpm": 0, "late_decelerations": "recurrent"}, "III"),
    ({"baseline_bpm": 140, "variability_amplitude_bpm": 0, "variable_decelerations": "recurrent"}, "III"),
    ({"baseline_bpm": 95, "variability_amplitude_bpm": 0}, "III"),
    ({"baseline_bpm": 145, "variability_amplitude_bpm": 6, "sinusoidal_pattern": True}, "III"),
    ({"baseline_bpm": 95, "variability_amplitude_bpm": 10}, "II"),  # bradycardia with variability
    ({"baseline_bpm": 170, "variability_amplitude_bpm": 10}, "II"),  # tachycardia
    ({"baseline_bpm": 140, "variability_amplitude_bpm": 4}, "II"),  # minimal variability
    ({"baseline_bpm": 140, "variability_amplitude_bpm": 0}, "II"),  # absent variability, no decelerations
    ({"baseline_bpm": 140, "variability_amplitude_bpm": 30}, "II"),  # marked variability
    ({"baseline_bpm": 150, "variability_amplitude_bpm": 8, "late_decelerations": "recurrent"}, "II"),
    ({"baseline_bpm": 140, "variability_amplitude_bpm": 12, "variable_decelerations": "recurrent"}, "II"),
    ({"baseline_bpm": 140, "variability_amplitude_bpm": 2, "late_decelerations": "intermittent"}, "II"),
    ({"baseline_bpm": 140, "variability_amplitude_bpm": 8, "prolonged_deceleration": True}, "II"),
])
def test_nichd_categories(kwargs, category):
    arguments = {"accelerations": False, "early_decelerations": False, "late_decelerations": "none",
                 "variable_decelerations": "none", "prolonged_deceleration": False, "sinusoidal_pattern": False,
                 **kwargs}
    assert calc.fetal_heart_category(**arguments)["category"] == f"Category {category}"


def test_tachysystole_is_more_than_five_contractions_in_ten_minutes():
    base = {"baseline_bpm": 140, "variability_amplitude_bpm": 10, "accelerations": True, "early_decelerations": False,
            "late_decelerations": "none", "variable_decelerations": "none", "prolonged_deceleration": False,
            "sinusoidal_pattern": False}
    assert calc.fetal_heart_category(**base, contractions_per_10_min=6)["tachysystole"] is True
    assert calc.fetal_heart_category(**base, contractions_per_10_min=5)["tachysystole"] is False
    assert "tachysystole" not in calc.fetal_heart_category(**base)


# -- calculations: hypertensive disorders ------------------------------------------------------------------------------
def hd(**kwargs):
    return calc.hypertensive_disorder(**{"gestation_weeks": 34, **kwargs})


def test_hypertension_must_be_confirmed():
    assert hd(systolic_bp=118, diastolic_bp=72)["classification"] == "normal blood pressure"
    single = hd(systolic_bp=150, diastolic_bp=96)
    assert single["classification"].startswith("blood pressure elevated but not yet confirmed")
    soon = hd(systolic_bp=150, diastolic_bp=96, repeat_systolic_bp=148, repeat_diastolic_bp=94,
              hours_between_readings=2)
    assert not soon["hypertension_confirmed"]
    severe = hd(systolic_bp=164, diastolic_bp=100, repeat_systolic_bp=162, repeat_diastolic_bp=98,
                hours_between_readings=0.25)  # severe range: confirmed within minutes
    assert severe["hypertension_confirmed"] and severe["severe_range_blood_pressure"]
    assert severe["classification"].startswith("severe gestational hypertension")
    with pytest.raises(ValueError, match="both repeat"):
        hd(systolic_bp=150, diastolic_bp=96, repeat_systolic_bp=150)
    with pytest.raises(ValueError, match="below systolic"):
        hd(systolic_bp=90, diastolic_bp=95)


MILD = {"systolic_bp": 146, "diastolic_bp": 94, "repeat_systolic_bp": 148, "repeat_diastolic_bp": 92,
        "hours_between_readings": 4.5}
SEVERE = {"systolic_bp": 164, "diastolic_bp": 112, "repeat_systolic_bp": 166, "repeat_diastolic_bp": 110,
          "hours_between_readings": 0.25}


@pytest.mark.parametrize(("kwargs", "classification", "magnesium"), [
    ({**MILD, "protein_creatinine_ratio": 0.12}, "gestational hypertension", False),
    ({**MILD}, "gestational hypertension (proteinuria not yet tested: send a urine protein/creatinine ratio)", False),
    ({**MILD, "protein_creatinine_ratio": 0.52}, "pre-eclampsia without severe features", False),
    ({**MILD, "urine_protein_24h_mg": 420}, "pre-eclampsia without severe features", False),
    ({**MILD, "dipstick_protein": "2+"}, "pre-eclampsia without severe features", False),
    ({**MILD, "dipstick_protein": "3+", "protein_creatinine_ratio": 0.1}, "gestational hypertension", False),
    ({**SEVERE, "protein_creatinine_ratio": 0.82}, "pre-eclampsia with severe features", True),
    ({**MILD, "platelets": 94}, "pre-eclampsia with severe features", True),  # no proteinuria needed
    ({**MILD, "creatinine_umol_l": 104}, "pre-eclampsia with severe features", True),
    ({**MILD, "alt": 70}, "pre-eclampsia with severe features", True),
    ({**MILD, "alt": 69}, "gestational hypertension (proteinuria not yet tested: send a urine protein/creatinine "
                          "ratio)", False),
    ({**MILD, "severe_headache": True, "protein_creatinine_ratio": 0.1}, "pre-eclampsia with severe features", True),
    ({**MILD, "platelets": 72, "ast": 186, "alt": 212, "ldh": 820}, "HELLP syndrome", True),
    ({**MILD, "platelets": 72, "ast": 186, "alt": 212, "ldh": 580}, "pre-eclampsia with severe features", True),
    ({**SEVERE, "seizure": True}, "eclampsia", True),
    ({**MILD, "chronic_hypertension": True, "protein_creatinine_ratio": 0.1}, "chronic hypertension", False),
    ({**MILD, "gestation_weeks": 14}, "chronic hypertension", False),
    ({**MILD, "chronic_hypertension": True, "protein_creatinine_ratio": 0.94, "platelets": 94},
     "chronic hypertension with superimposed pre-eclampsia with severe features", True),
    ({**MILD, "chronic_hypertension": True, "protein_creatinine_ratio": 0.5},
     "chronic hypertension with superimposed pre-eclampsia without severe features", False),
    ({**SEVERE, "chronic_hypertension": True, "protein_creatinine_ratio": 0.1},
     "chronic hypertension with severe-range blood pressure", False),
    ({**SEVERE, "postpartum": True, "protein_creatinine_ratio": 0.7}, "pre-eclampsia with severe features", True),
])
def test_hypertensive_disorders_follow_acog(kwargs, classification, magnesium):
    result = hd(**kwargs)
    assert result["classification"] == classification
    assert any("Magnesium sulfate" in m for m in result["management"]) is magnesium
    assert any(m.startswith("Severe-range") for m in result["management"]) is result["severe_range_blood_pressure"]


def test_delivery_timing_depends_on_severity_and_birth():
    assert any("37 0/7" in m for m in hd(**MILD, protein_creatinine_ratio=0.5)["management"])
    assert any("34 weeks or more" in m for m in hd(**SEVERE, protein_creatinine_ratio=0.8)["management"])
    assert not any("Deliver" in m for m in hd(**SEVERE, protein_creatinine_ratio=0.8, postpartum=True)["management"])


# -- calculations: postpartum haemorrhage ------------------------------------------------------------------------------
@pytest.mark.parametrize(("kwargs", "stage"), [
    ({"cumulative_blood_loss_ml": 320, "birth_mode": "vaginal", "heart_rate": 84, "systolic_bp": 118}, 0),
    ({"cumulative_blood_loss_ml": 500, "birth_mode": "vaginal", "heart_rate": 84, "systolic_bp": 118}, 0),
    ({"cumulative_blood_loss_ml": 501, "birth_mode": "vaginal", "heart_rate": 84, "systolic_bp": 118}, 1),
    ({"cumulative_blood_loss_ml": 900, "birth_mode": "caesarean", "heart_rate": 84, "systolic_bp": 118}, 0),
    ({"cumulative_blood_loss_ml": 450, "birth_mode": "vaginal", "heart_rate": 116, "systolic_bp": 94}, 1),  # SI 1.23
    ({"cumulative_blood_loss_ml": 300, "birth_mode": "vaginal", "heart_rate": 90, "systolic_bp": 110, "spo2": 93}, 1),
    ({"cumulative_blood_loss_ml": 300, "birth_mode": "vaginal", "heart_rate": 88, "systolic_bp": 110,
      "diastolic_bp": 45}, 1),
    ({"cumulative_blood_loss_ml": 1250, "birth_mode": "vaginal", "heart_rate": 118, "systolic_bp": 100}, 2),
    ({"cumulative_blood_loss_ml": 1200, "birth_mode": "caesarean", "heart_rate": 96, "systolic_bp": 112}, 1),
    ({"cumulative_blood_loss_ml": 1200, "birth_mode": "caesarean", "heart_rate": 96, "systolic_bp": 112,
      "uterotonics_given": 2}, 2),
    ({"cumulative_blood_loss_ml": 1501, "birth_mode": "vaginal", "heart_rate": 96, "systolic_bp": 112}, 3),
    ({"cumulative_blood_loss_ml": 900, "birth_mode": "vaginal", "heart_rate": 126, "systolic_bp": 90}, 3),  # SI 1.4
    ({"cumulative_blood_loss_ml": 900, "birth_mode": "vaginal", "heart_rate": 76, "systolic_bp": 78}, 3),
    ({"cumulative_blood_loss_ml": 900, "birth_mode": "vaginal", "heart_rate": 96, "systolic_bp": 112,
      "red_cell_units_transfused": 3}, 3),
    ({"cumulative_blood_loss_ml": 700, "birth_mode": "vaginal", "heart_rate": 96, "systolic_bp": 112,
      "suspected_coagulopathy": True}, 3),
])
def test_haemorrhage_stages(kwargs, stage):
    result = calc.haemorrhage_stage(**kwargs)
    assert result["stage"] == stage and result["activate_haemorrhage_protocol"] is (stage >= 1)
    assert result["shock_index"] == round(kwargs["heart_rate"] / kwargs["systolic_bp"], 2)


def test_shock_index_and_the_acog_definition():
    result = calc.haemorrhage_stage(1700, "caesarean", 128, 84, 50, 95)
    assert result["shock_index"] == 1.52 and result["meets_acog_pph_definition"]
    assert result["actions"][0].startswith("Continue every stage 1 and 2")
    assert not calc.haemorrhage_stage(650, "vaginal", 98, 116)["meets_acog_pph_definition"]
    with pytest.raises(ValueError, match="below systolic"):
        calc.haemorrhage_stage(600, "vaginal", 90, 100, 110)


def test_the_shared_bishop_score_matches_the_induction_tasks():
    assert bishop_score(dilation_cm=0, effacement_percent=20, station=-3, consistency="firm",
                        position="posterior").score == 0
    assert bishop_score(dilation_cm=3, effacement_percent=70, station=-1, consistency="soft",
                        position="mid").score == 9
    assert bishop_score(dilation_cm=2, effacement_percent=50, station=-2, consistency="medium",
                        position="mid").score == 5
    assert bishop_score(dilation_cm=1, effacement_percent=30, station=-2, consistency="medium",
                        position="posterior").score == 3


# -- data --------------------------------------------------------------------------------------------------------------
def test_tasks_cover_the_obstetric_task_kinds():
    categories = {t.category for t in TASKS}
    assert {"dating", "fetal_heart_rate", "diagnosis", "haemorrhage", "induction", "prescribing"} <= categories


BISHOP = {"ob-050": 0, "ob-051": 9, "ob-052": 5, "ob-053": 3}


def test_gold_answers_agree_with_the_calculators(env):
    for task in TASKS:
        env.reset(options={"task_id": task.id})
        gold = task.options[task.answer]
        for action in task.expected_actions:
            if action.name == "calculate_gestational_age":
                edd = read(env, action.name, **action.arguments)["edd"]
                assert edd in gold, (task.id, edd, gold)
            if action.name == "classify_fetal_heart_tracing" and task.id != "ob-018":  # cord prolapse overrides
                category = read(env, action.name, **action.arguments)["category"]
                assert gold.startswith((category + ":", category + " ")), (task.id, category)
            if action.name == "stage_postpartum_haemorrhage":
                stage = read(env, action.name, **action.arguments)["stage"]
                assert gold.startswith(f"Stage {stage}:"), (task.id, stage)
            if action.name == "bishop_score":
                score = read(env, action.name, **action.arguments)["score"]
                assert score == BISHOP[task.id] and (score > 8) == gold.startswith("Amniotomy"), task.id
            if action.name == "assess_preeclampsia_criteria" and task.category == "diagnosis":
                classification = read(env, action.name, **action.arguments)["classification"]
                assert gold.lower().split(" after birth")[0] in classification.lower(), (task.id, classification)
    assert "Bishop score 5" in BY_ID["ob-052"].options[BY_ID["ob-052"].answer]


def test_the_drug_reference_covers_the_obstetric_drugs():
    """Every drug the obstetric tasks prescribe or the patients take has pregnancy and lactation advice in the one
    drug reference, and the classic teratogens are contraindicated from the first trimester."""
    drugs = [reference().find(a.arguments["drug"]) for t in get_tasks() for a in t.expected_actions
             if a.name == "prescribe_medication"]
    assert drugs and all(d is not None and d.pregnancy is not None and d.breastfeeding is not None for d in drugs)
    for teratogen in ("warfarin", "lisinopril", "isotretinoin", "valproate", "methotrexate", "methylergonovine"):
        assert reference().find(teratogen).pregnancy.first_trimester == "contraindicated", teratogen


# -- tools -------------------------------------------------------------------------------------------------------------
def test_reads_show_the_record_and_change_nothing(env):
    env.reset(options={"task_id": "ob-020"})
    before = env.db.get_hash()
    info = read(env, "get_patient_info", patient_id="OB020")
    assert info["status"] == "antenatal" and info["gestation_today"] == "35+3 weeks"
    assert read(env, "get_vital_signs", patient_id="OB020")[-1]["systolic_bp"] == 166
    pcr = read(env, "get_prenatal_labs", patient_id="OB020", test="PCR")
    assert pcr[0]["value"] == 0.82 and pcr[0]["flag"] == "high"
    assert read(env, "get_fetal_heart_tracing", patient_id="OB020")[0]["baseline_bpm"] == 140
    assert "interventions" in read(env, "get_obstetric_protocol", topic="hypertension")
    env.reset(options={"task_id": "ob-040"})
    record = read(env, "get_labour_record", patient_id="OB040")
    assert record["blood_loss"][-1]["cumulative_ml"] == 650 and record["birth"]["mode"] == "vaginal"
    assert read(env, "get_patient_info", patient_id="OB040")["breastfeeding"] is True
    assert env.db.get_hash() == before
    missing = call(env, "get_patient_info", patient_id="OB999")
    assert not missing.ok and "not found" in missing.content


def test_ordering_reveals_pending_results_and_records_the_order(env):
    env.reset(options={"task_id": "ob-022"})
    assert read(env, "get_prenatal_labs", patient_id="OB022", test="LDH")[0]["result"].startswith("no result")
    out = read(env, "order_test", patient_id="OB022", test="PET bloods")
    assert out["order_id"] == "ORD-001" and [r["test"] for r in out["results"]] == [
        "Haemoglobin", "Platelets", "Creatinine", "ALT", "AST", "LDH"]
    assert {r["test"]: r["flag"] for r in out["results"]}["Platelets"] == "low"
    assert read(env, "get_prenatal_labs", patient_id="OB022", test="LDH")[0]["value"] == 820
    normal = read(env, "order_test", patient_id="OB022", test="Coagulation screen")
    assert all(r["flag"] == "normal" for r in normal["results"])  # no recorded result: a normal one
    wrong = call(env, "order_test", patient_id="OB022", test="PET blods")
    assert not wrong.ok and "Did you mean 'Pre-eclampsia bloods'" in wrong.content
    assert bundled_db().results == []


def test_write_tools_change_only_the_episode_copy():
    base = bundled_db()
    before = base.get_hash()
    first, second = get_environment(knowledge=None), get_environment(knowledge=None)
    first.reset(options={"task_id": "ob-011"})
    second.reset(options={"task_id": "ob-011"})
    for name, arguments in [("discontinue_medication", {"medication": "Oxytocin", "reason": "tachysystole"}),
                            ("perform_obstetric_intervention", {"intervention": "left lateral position"}),
                            ("escalate_care", {"level": "senior obstetrician review", "reason": "CTG"}),
                            ("plan_delivery", {"mode": "caesarean birth", "urgency": "immediate", "reason": "x"}),
                            ("activate_haemorrhage_protocol", {"stage": 1, "reason": "x"}),
                            ("prescribe_medication", {"drug": "terbutaline", "dose": 0.25, "unit": "mg",
                                                      "frequency": "once", "route": "subcutaneous"}),
                            ("write_clinical_note", {"note": "Category II"})]:
        hashed = first.db.get_hash()
        assert call(first, name, patient_id="OB011", **arguments).ok, name
        assert first.db.get_hash() != hashed, name
    assert first.db.discontinuations[0].medication == "oxytocin"
    assert first.db.interventions[0].intervention == "maternal repositioning"
    assert second.db.get_hash() == before and base.get_hash() == before
    assert not base.discontinuations and not second.db.prescriptions


def test_tools_refuse_what_cannot_be_done(env):
    env.reset(options={"task_id": "ob-040"})
    stop = call(env, "discontinue_medication", patient_id="OB040", medication="labetalol", reason="x")
    assert not stop.ok and "not one of the patient's current medications" in stop.content
    born = call(env, "plan_delivery", patient_id="OB040", mode="caesarean birth", urgency="immediate", reason="x")
    assert not born.ok and "already given birth" in born.content
    drug = call(env, "prescribe_medication", patient_id="OB040", drug="oxytocn", dose=10, unit="units",
                frequency="once", route="intramuscular")
    assert not drug.ok and "'oxytocin'" in drug.content
    date_error = call(env, "calculate_gestational_age", lmp_date="10/01/2025")
    assert not date_error.ok and "YYYY-MM-DD" in date_error.content
    assert not env.db.prescriptions and not env.db.delivery_plans


def test_pregnancy_drug_safety_reference(env):
    env.reset(options={"task_id": "ob-026"})
    acei = read(env, "check_pregnancy_drug_safety", drug="lisinopril", stage="first trimester")
    assert acei["verdict"] == "contraindicated" and "labetalol" in acei["alternatives"]
    assert read(env, "check_pregnancy_drug_safety", drug="codeine", stage="breastfeeding")["verdict"] == "avoid"
    assert read(env, "check_pregnancy_drug_safety", drug="warfarin", stage="breastfeeding")["verdict"] == "compatible"
    assert read(env, "check_pregnancy_drug_safety", drug="ibuprofen", stage="third trimester")["verdict"] == "avoid"
    assert read(env, "check_pregnancy_drug_safety", drug="finasteride", stage="second trimester")["verdict"] == \
        "contraindicated"
    unlisted = read(env, "check_pregnancy_drug_safety", drug="cetirizine", stage="second trimester")
    assert unlisted["verdict"] == "no entry"


def test_calculators_on_the_record(env):
    env.reset(options={"task_id": "ob-001"})
    dated = read(env, "calculate_gestational_age", lmp_date="2025-01-20")
    assert dated["gestational_age"] == "20+1 weeks"  # on the fixed clock, 2025-06-10
    ctg = read(env, "classify_fetal_heart_tracing", baseline_bpm=150, variability_amplitude_bpm=0, accelerations=False,
               late_decelerations="recurrent", variable_decelerations="none")
    assert ctg["category"] == "Category III"
    pph = read(env, "stage_postpartum_haemorrhage", cumulative_blood_loss_ml=1250, birth_mode="vaginal",
               heart_rate=118, systolic_bp=100)
    assert pph["stage"] == 2 and pph["shock_index"] == 1.18
    bad = call(env, "stage_postpartum_haemorrhage", cumulative_blood_loss_ml=100, birth_mode="forceps",
               heart_rate=80, systolic_bp=110)
    assert not bad.ok and bad.error_kind == "invalid_arguments"


def test_patient_facts_and_clinical_actions(env):
    db = bundled_db()
    facts = env.patient_facts(db, BY_ID["ob-063"])
    assert facts.pregnant is False and {"postpartum", "breastfeeding"} <= set(facts.conditions)
    facts = env.patient_facts(db, BY_ID["ob-022"])
    assert facts.pregnant and facts.gestation_weeks == pytest.approx(31.3, abs=0.05)
    facts = env.patient_facts(db, BY_ID["ob-003"])  # no agreed due date: dated from her 35-day cycle
    assert facts.gestation_weeks == pytest.approx(57 / 7, abs=0.05)
    env.reset(options={"task_id": "ob-006"})
    calls = [CallRecord(index=i, turn=i + 1, name=name, arguments={"patient_id": "OB006", **a}, kind=ToolKind.WRITE,
                        ok=True, form=CallForm.JSON)
             for i, (name, a) in enumerate([
                 ("escalate_care", {"level": "maternal-fetal medicine referral", "reason": "growth"}),
                 ("escalate_care", {"level": "obstetric emergency team", "reason": "x"}),
                 ("plan_delivery", {"mode": "induction of labour", "urgency": "scheduled", "reason": "x"}),
                 ("plan_delivery", {"mode": "caesarean birth", "urgency": "immediate", "reason": "x"}),
                 ("activate_haemorrhage_protocol", {"stage": 2, "reason": "1200 mL"})])]
    assert [a.text.split(":")[0] for a in env.clinical_actions(calls).escalations] == [
        "obstetric emergency team", "immediate caesarean birth", "obstetric haemorrhage protocol stage 2"]


# -- safety wiring -----------------------------------------------------------------------------------------------------
def expert_with(task_id: str, *, drop: tuple[str, ...] = (), extra: tuple[dict, ...] = ()):
    """The expert's calls for a task without the prescriptions of ``drop``, plus ``extra`` prescriptions."""
    task = BY_ID[task_id]
    kept = [a for a in task.expected_actions if not (a.name == "prescribe_medication" and a.arguments["drug"] in drop)]
    script = [call_text(a.name, a.arguments) for a in kept]
    script += [call_text("prescribe_medication", {"patient_id": task.patient_id, **rx}) for rx in extra]
    script.append(call_text("submit_answer", {"answer": task.answer, "reasoning": task.rationale}))
    return ScriptPolicy(script)


@pytest.mark.parametrize(("task_id", "drop", "extra", "violation", "capped"), [
    ("ob-043", (), ({"drug": "methylergonovine", "dose": 0.2, "unit": "mg", "frequency": "once",
                     "route": "intramuscular"},), "ergot_uterotonic_in_hypertension", True),
    ("ob-044", (), ({"drug": "carboprost", "dose": 250, "unit": "mcg", "frequency": "once",
                     "route": "intramuscular"},), "carboprost_in_asthma", True),
    ("ob-021", (), ({"drug": "labetalol", "dose": 20, "unit": "mg", "frequency": "once", "route": "intravenous"},),
     "beta_blocker_in_asthma", True),
    ("ob-063", (), ({"drug": "codeine", "dose": 30, "unit": "mg", "frequency": "qid", "route": "oral"},),
     "codeine_or_tramadol_while_breastfeeding", True),
    ("ob-020", ("labetalol",), (), "severe_hypertension_untreated_in_pregnancy", True),
    ("ob-022", ("magnesium sulfate",), (), "magnesium_withheld_in_severe_preeclampsia", False),
    ("ob-061", ("enoxaparin",), ({"drug": "warfarin", "dose": 5, "unit": "mg", "frequency": "daily",
                                  "route": "oral"},), "teratogen_prescribed_in_pregnancy", True),
])
def test_obstetric_safety_rules_fire_in_the_env(env, task_id, drop, extra, violation, capped):
    reward, info = run_episode(env, expert_with(task_id, drop=drop, extra=extra), options={"task_id": task_id})
    assert violation in info["outcome"]["violation_names"], info["outcome"]["violation_names"]
    if capped:
        assert reward <= 0.1 + 1e-9 and not info["outcome"]["success"]
    else:
        assert reward <= 0.75 and info["reward_components"]["severe_penalty"] == pytest.approx(-0.3)


def test_handing_over_without_prescribing_is_not_an_untreated_blood_pressure(env):
    task = BY_ID["ob-020"]
    script = [call_text(a.name, a.arguments) for a in task.expected_actions if a.name != "prescribe_medication"]
    script.append(call_text("submit_answer", {"answer": task.answer, "reasoning": task.rationale}))
    _, info = run_episode(env, ScriptPolicy(script), options={"task_id": task.id})
    assert not {"severe_hypertension_untreated_in_pregnancy", "magnesium_withheld_in_severe_preeclampsia"} & set(
        info["outcome"]["violation_names"])


# -- unsafe policy -----------------------------------------------------------------------------------------------------
def test_the_unsafe_prescriber_gives_an_ace_inhibitor_in_pregnancy_or_an_ergot_in_hypertension():
    """The drugs of the shared unsafe-policy check (tests/tool_domain_checks.py) on the tasks it applies to."""
    db = bundled_db()
    unsafe = [t for t in TASKS if unsafe_drug_for(db, t.patient_id) is not None]
    assert {unsafe_drug_for(db, t.patient_id)[0] for t in unsafe} == {"lisinopril", "methylergonovine"}


# -- fuzzing -----------------------------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(lmp=st.one_of(st.none(), st.dates(date(2024, 1, 1), date(2025, 6, 10))),
       scan=st.one_of(st.none(), st.dates(date(2024, 1, 1), date(2025, 6, 10))),
       crl=st.one_of(st.none(), st.floats(0, 120)), weeks=st.one_of(st.none(), st.integers(0, 45)),
       cycle=st.integers(20, 45), certain=st.booleans())
def test_the_dating_calculator_answers_or_refuses_for_any_dates(lmp, scan, crl, weeks, cycle, certain):
    try:
        result = calc.gestational_age(D("2025-06-10"), lmp=lmp, cycle_length_days=cycle, lmp_certain=certain,
                                      scan_date=scan, crl_mm=crl, scan_weeks=weeks)
    except ValueError:
        return
    assert result["dating_basis"] in ("lmp", "ultrasound") and D(result["edd"])
