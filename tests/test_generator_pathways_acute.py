"""The ClinicalPathway generator's chest pain, stroke, post-operative and febrile-child journeys
(``domains/pathways/journeys.py``) and the guideline rules they decide by (``domains/pathways/guidelines.py``):
every threshold on both sides of its edge; the generated records drawn at those edges; the decisions read back
through the pathway's own tools (the troponin the chart returns, the alteplase dose the calculator gives, NEWS2
from the observations the chart shows, the traffic light from the child's observations); the validator catching a
task that disagrees with its record; the expert passing every phase and a skipped decision failing only its
phase. The framework's checks (200 tasks valid, oracle 1.0, random low, splits) run in
``tests/test_task_generators.py``."""

from __future__ import annotations

from collections import Counter
from functools import cache

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.tool_env.generation import GeneratedTasks, generator_for, validate_generated
from clinical_gym.tool_env.policies import ExpertToolPolicy, ScriptPolicy, call_text, run_episode
from clinical_gym.domains.pathways.guidelines import (
    aki_stage,
    alteplase_dose,
    chest_pain_outcome,
    ich_lowers_pressure,
    lumbar_puncture_needed,
    naloxone_indicated,
    news2_response,
    red_cell_units,
    thrombolysis_barriers,
    traffic_light,
    weight_based_dose,
)
from clinical_gym.domains.pathways.generator import PathwayGenerator
from clinical_gym.domains.pathways.journeys import ACUTE_VARIANTS, CHEST, FEVER, POSTOP, STROKE, news2_of

ENV = PathwayGenerator.env_id  # ClinicalPathway-v1


@cache
def generated(n: int = 500, seed: int = 11) -> GeneratedTasks:
    return generator_for(ENV).generate(n, seed)


def of(variant: str) -> list:
    return [t for t in generated().tasks if t.tags[2] == variant]


@cache
def env():
    g = generated()
    return gym.make(ENV, db=g.db, tasks=g.tasks, knowledge=None).unwrapped


def actions(task, name: str) -> list[dict]:
    return [a.arguments for a in task.expected_actions if a.name == name]


def drugs(task) -> dict[str, dict]:
    return {a["drug"]: a for a in actions(task, "prescribe_medication")}


# -- the rules at their edges -----------------------------------------------------------------------------------------
def test_chest_pain_outcome_follows_the_esc_0h_troponin_thresholds():
    assert chest_pain_outcome(True, 3, 0.5) == "stemi"  # ST elevation decides whatever the troponin
    assert chest_pain_outcome(False, 52, 1) == "nstemi" and chest_pain_outcome(False, 51, 6) == "observe"
    assert chest_pain_outcome(False, 4, 3.1) == "rule_out"
    assert chest_pain_outcome(False, 5, 6) == "observe"  # 5 ng/L is not below 5
    assert chest_pain_outcome(False, 4, 3) == "observe"  # pain for exactly 3 hours: too early to rule out


def test_thrombolysis_barriers_follow_aha_asa_at_each_edge():
    assert thrombolysis_barriers(270, 185, 110, platelets=100, inr=1.7, glucose=2.7) == []
    assert thrombolysis_barriers(271, 150, 90) == ["last known well 271 minutes ago, beyond 4.5 hours"]
    assert len(thrombolysis_barriers(60, 186, 90)) == 1 and len(thrombolysis_barriers(60, 150, 111)) == 1
    assert thrombolysis_barriers(60, 150, 90, platelets=99) == ["platelets 99 below 100"]
    assert thrombolysis_barriers(60, 150, 90, inr=1.8) == ["INR 1.8 above 1.7"]
    assert thrombolysis_barriers(60, 150, 90, glucose=2.6) == ["glucose 2.6 below 2.7 mmol/L"]
    assert thrombolysis_barriers(60, 150, 90, anticoagulated=True) == ["taking an anticoagulant"]
    assert thrombolysis_barriers(60, 150, 90, haemorrhage=True) == ["haemorrhage on CT"]


def test_alteplase_is_0_9_mg_per_kg_capped_at_90_mg():
    assert alteplase_dose(78) == 70.2 and alteplase_dose(99) == 89.1
    assert alteplase_dose(100) == 90 and alteplase_dose(131) == 90


def test_intracerebral_haemorrhage_pressure_is_lowered_from_150_to_220():
    assert [ich_lowers_pressure(s) for s in (149, 150, 220, 221)] == [False, True, True, False]


def test_news2_response_follows_the_rcp_bands():
    assert news2_response(7, False) == "emergency" and news2_response(6, True) == "urgent"
    assert news2_response(5, False) == "urgent" and news2_response(4, False) == "ward"
    assert news2_response(3, True) == "urgent"  # a single parameter scoring 3
    assert news2_response(0, False) == "ward"


def test_red_cells_for_a_major_bleed_or_below_70_g_per_litre_naloxone_and_kdigo_stages():
    assert red_cell_units(12.0, 121, 110) == 2 and red_cell_units(12.0, 100, 89) == 2  # ATLS class III-IV
    assert red_cell_units(6.9, 120, 90) == 1 and red_cell_units(7.0, 120, 90) == 0  # NICE NG24 below 70 g/L
    assert naloxone_indicated(9, "alert") and not naloxone_indicated(10, "alert") and naloxone_indicated(12, "pain")
    assert not naloxone_indicated(12, "voice")
    assert aki_stage(149, 100) == 1  # a rise of 49 umol/L (26.5 or more) even below 1.5 times
    assert aki_stage(110, 100) == 0 and aki_stage(126.5, 100) == 1 and aki_stage(126, 100) == 0
    assert aki_stage(150, 100) == 1 and aki_stage(199, 100) == 1 and aki_stage(200, 100) == 2
    assert aki_stage(299, 100) == 2 and aki_stage(300, 100) == 3 and aki_stage(354, 200) == 3
    assert aki_stage(353, 200) == 1  # 353 umol/L at 1.77 times: stage 1


def test_nice_ng143_traffic_light_edges():
    well = {"temperature": 38.5, "heart_rate": 120, "respiratory_rate": 30, "spo2": 98, "capillary_refill_s": 2}
    assert traffic_light(700, **well)[0] == "green"
    assert traffic_light(89, **{**well, "temperature": 38.0})[0] == "red"  # under 3 months, 38 °C
    assert traffic_light(89, **{**well, "temperature": 37.9})[0] == "green"
    assert traffic_light(91, **{**well, "temperature": 38.0})[0] == "red"  # 91 days is under 3 months
    assert traffic_light(92, **{**well, "temperature": 38.0})[0] == "green"  # 92 days is not
    assert traffic_light(700, **{**well, "respiratory_rate": 61})[0] == "red"
    assert traffic_light(700, **well, non_blanching_rash=True)[0] == "red"
    assert traffic_light(120, **{**well, "temperature": 39.0})[0] == "amber"  # 3-6 months
    assert traffic_light(120, **{**well, "temperature": 38.9})[0] == "green"
    for days, limit in ((300, 160), (400, 150), (800, 140)):  # heart rate by age band
        assert traffic_light(days, **{**well, "heart_rate": limit})[0] == "green"
        assert traffic_light(days, **{**well, "heart_rate": limit + 1})[0] == "amber"
    assert traffic_light(300, **{**well, "respiratory_rate": 50})[0] == "green"
    assert traffic_light(300, **{**well, "respiratory_rate": 51})[0] == "amber"
    assert traffic_light(400, **{**well, "respiratory_rate": 40})[0] == "green"
    assert traffic_light(400, **{**well, "respiratory_rate": 41})[0] == "amber"
    assert traffic_light(700, **{**well, "spo2": 96})[0] == "green"
    assert traffic_light(700, **{**well, "spo2": 95})[0] == "amber"
    assert traffic_light(700, **{**well, "capillary_refill_s": 3})[0] == "amber"
    assert traffic_light(700, **well, fever_days=5)[0] == "amber" and traffic_light(700, **well, fever_days=4)[0] == "green"


def test_weight_based_doses_round_to_whole_mg_and_stop_at_the_maximum():
    assert weight_based_dose(13.9, 15) == 208 and weight_based_dose(4.0, 50) == 200
    assert weight_based_dose(49.9, 80, 4000) == 3992 and weight_based_dose(50, 80, 4000) == 4000
    assert weight_based_dose(62, 80, 4000) == 4000


def test_lumbar_puncture_under_one_month_or_white_cells_outside_5_to_15():
    assert lumbar_puncture_needed(29, 10.0)
    assert not lumbar_puncture_needed(30, 5.0) and not lumbar_puncture_needed(30, 15.0)
    assert lumbar_puncture_needed(30, 4.9) and lumbar_puncture_needed(88, 15.1)


# -- the generated journeys -------------------------------------------------------------------------------------------
def test_every_journey_and_its_variants_are_generated_and_valid():
    g = generated()
    seen = Counter((t.pathway, t.tags[2]) for t in g.tasks)
    assert {(j, v) for j, v, _ in ACUTE_VARIANTS} <= set(seen)
    assert validate_generated(g, play=False) == []


def test_chest_pain_decision_follows_the_ecg_and_the_troponin_the_chart_returns():
    e = env()
    clopidogrel = 0
    for task in [t for t in generated().tasks if t.pathway == CHEST]:
        e.reset(options={"task_id": task.id})
        chart = e.domain_toolkits["clinical_diagnosis"]
        troponin = chart.order_lab_test(patient_id=task.patient_id, test="Troponin")["results"][0]["value"]
        ecg = e.db.patients[task.patient_id].arrival.bedside_results["12-lead ECG"].text
        hours = 6 if task.tags[2] != "stemi" else 1  # the generated onsets: over 3 hours unless ST elevation
        outcome = chest_pain_outcome("ST elevation" in ecg and "no ST elevation" not in ecg, troponin, hours)
        assert outcome == {"stemi": "stemi", "nstemi": "nstemi", "chest_wall": "rule_out"}[task.tags[2]], task.id
        rx = drugs(task)
        assert ("aspirin" in rx) == (outcome != "rule_out")
        assert (actions(task, "activate_code") != []) == (outcome == "stemi")
        destination = actions(task, "set_disposition")[0]["destination"]
        assert destination == {"stemi": "cardiac catheterisation laboratory", "nstemi": "coronary care unit",
                               "rule_out": "discharge home"}[outcome]
        if "clopidogrel" in rx:  # ticagrelor ruled out by the record, as the chart's checks show
            clopidogrel += 1
            assert task.safety.contraindicated[0] == "ticagrelor"
    assert clopidogrel >= 2
    troponins = {generated().db.patients[t.patient_id].pending_results["Troponin"].value for t in of("nstemi")}
    assert 52 in troponins  # the rule-in edge is drawn
    assert {generated().db.patients[t.patient_id].pending_results["Troponin"].value for t in of("chest_wall")} <= {2, 3, 4}


def test_stroke_alteplase_dose_is_the_calculators_and_the_window_edges_are_drawn():
    e = env()
    since = Counter()
    for task in [t for t in generated().tasks if t.pathway == STROKE]:
        patient = generated().db.patients[task.patient_id]
        lkw = patient.notes[0].text.split("Last known well ")[1][:5]
        minutes = 600 - (int(lkw[:2]) * 60 + int(lkw[3:]))
        since[task.tags[2], minutes in (270, 271)] += 1
        rx = drugs(task)
        v = patient.vitals[-1]
        assert ("alteplase" in rx) == (task.tags[2] == "thrombolysis") == (minutes <= 270 and task.tags[2] != "ich")
        if "alteplase" in rx:
            assert v.systolic_bp <= 185 and v.diastolic_bp <= 110
            e.reset(options={"task_id": task.id})
            calc = actions(task, "calculate_weight_based_dose")[0]
            worked = e.domain_toolkits["pathway"].calculate_weight_based_dose(**calc)
            assert rx["alteplase"]["dose"] == worked["dose"] == alteplase_dose(patient.weight_kg)
        if task.tags[2] == "ich":
            assert ("labetalol" in rx) == (150 <= v.systolic_bp <= 220)
            assert task.safety.contraindicated == ["thrombolytic", "antiplatelet", "anticoagulant"]
        assert actions(task, "set_disposition")[0]["destination"] == "hyperacute stroke unit"
    assert since["thrombolysis", True] and since["late_ischaemic", True]  # 270 and 271 minutes both drawn


def test_postop_response_is_news2_of_the_charted_observations():
    e = env()
    transfused, edges = Counter(), set()
    for task in [t for t in generated().tasks if t.pathway == POSTOP]:
        e.reset(options={"task_id": task.id})
        charted = e.domain_toolkits["clinical_diagnosis"].get_vital_signs(patient_id=task.patient_id)
        latest = charted[-1] if isinstance(charted, list) else charted["vitals"][-1]
        patient = generated().db.patients[task.patient_id]
        assert latest["respiratory_rate"] == patient.vitals[-1].respiratory_rate
        score, three = news2_of(patient.vitals[-1])
        called = actions(task, "news2")[0]
        assert called["respiratory_rate"] == latest["respiratory_rate"] and called["pulse"] == latest["heart_rate"]
        emergency = news2_response(score, three) == "emergency"
        assert (actions(task, "escalate_care") != []) == emergency == task.safety.emergency, task.id
        assert emergency == (task.tags[2] != "aki")
        if task.tags[2] == "bleeding":
            hb, v = patient.pending_results["Haemoglobin"].value, patient.vitals[-1]
            units = sum(a["units"] for a in actions(task, "transfuse_blood_products"))
            assert units == red_cell_units(hb, v.heart_rate, v.systolic_bp)
            transfused[units] += 1
            edges |= {v.heart_rate, v.systolic_bp} & {120, 121, 90}
            assert {"drug": "enoxaparin", "temporary": True}.items() <= actions(task, "discontinue_medication")[0].items()
        if task.tags[2] == "aki":
            stopped = {a["drug"]: a["temporary"] for a in actions(task, "discontinue_medication")}
            assert stopped["ibuprofen"] is False  # the NSAID is stopped, the sick-day medicines only withheld
            baseline = next(r.value for r in patient.labs if r.test == "Creatinine")
            assert aki_stage(patient.pending_results["Creatinine"].value, baseline) >= 1
    haemoglobins = {generated().db.patients[t.patient_id].pending_results["Haemoglobin"].value for t in of("bleeding")}
    assert {6.9, 7.0} <= haemoglobins and set(transfused) == {0, 1, 2} and {120, 121, 90} <= edges
    assert 9 in {generated().db.patients[t.patient_id].vitals[-1].respiratory_rate for t in of("opioid")}


def test_febrile_child_traffic_light_doses_and_lumbar_puncture():
    ages, white_cells = set(), set()
    for task in [t for t in generated().tasks if t.pathway == FEVER]:
        patient = generated().db.patients[task.patient_id]
        rx = drugs(task)
        assert "aspirin" not in rx and "codeine" not in rx
        if task.tags[2] == "green_child":
            assert rx["paracetamol"]["dose"] == round(15 * patient.weight_kg) and not task.safety.emergency
            assert traffic_light(int(patient.age_years * 365.25), *_signs(patient))[0] == "green"
            assert actions(task, "set_disposition")[0]["destination"] == "discharge home"
        elif task.tags[2] == "meningococcal":
            assert rx["ceftriaxone"]["dose"] == round(min(80 * patient.weight_kg, 4000))
            assert traffic_light(int(patient.age_years * 365.25), *_signs(patient), non_blanching_rash=True)[0] == "red"
            assert actions(task, "start_iv_fluids")[0]["volume_ml"] == round(10 * patient.weight_kg)
            assert "Lumbar puncture" not in [a["test"] for a in actions(task, "order_lab_test")]
        else:
            wbc = patient.pending_results["White cell count"].value
            assert traffic_light(patient.age_days, *_signs(patient))[0] == "red"
            ages.add(patient.age_days < 30)
            white_cells.add(wbc)
            lp = "Lumbar puncture" in [a["test"] for a in actions(task, "order_lab_test")]
            assert lp == lumbar_puncture_needed(patient.age_days, wbc)
            assert ("cefotaxime" in rx) == (patient.age_days < 30) != ("ceftriaxone" in rx)
            assert rx["amoxicillin"]["dose"] == round(50 * patient.weight_kg)
    assert ages == {True, False} and len(white_cells & {4.9, 5.0, 15.0, 15.1}) >= 2


def _signs(patient) -> tuple:
    """Temperature, pulse, respiratory rate and SpO2 as the chart holds them, and the capillary refill the
    examination note records."""
    v = patient.vitals[-1]
    refill = float(patient.notes[0].text.split("Capillary refill ")[1].split(" ")[0])
    return v.temperature_c, v.heart_rate, v.respiratory_rate, v.spo2, refill


@pytest.mark.parametrize("variant", ["thrombolysis", "bleeding", "young_infant", "nstemi"])
def test_the_validator_finds_a_task_that_disagrees_with_its_record(variant):
    g = generated()
    task = of(variant)[0]
    change = {"thrombolysis": lambda a: a.model_copy(update={"arguments": {**a.arguments, "dose": 90.0}})
              if a.name == "prescribe_medication" else a,
              "bleeding": lambda a: a.model_copy(update={"arguments": {**a.arguments, "level": "specialist referral"}})
              if a.name == "escalate_care" else a,
              "young_infant": lambda a: a.model_copy(update={"arguments": {**a.arguments, "test": "Urinalysis"}})
              if a.name == "order_lab_test" and a.arguments["test"] in ("Lumbar puncture", "Urine culture") else a,
              "nstemi": lambda a: a.model_copy(update={"arguments": {**a.arguments, "drug": "paracetamol"}})
              if a.name == "prescribe_medication" and a.arguments["drug"] == "aspirin" else a}[variant]
    broken = task.model_copy(update={"expected_actions": [change(a) for a in task.expected_actions]})
    assert broken.expected_actions != task.expected_actions
    found = validate_generated(GeneratedTasks(ENV, 1, 0, None, g.db, [broken]), play=False)
    assert any(p.startswith(task.id) for p in found), found


@pytest.mark.parametrize("variant", [v for _, v, _ in ACUTE_VARIANTS])
def test_the_expert_passes_every_phase(variant):
    task = of(variant)[0]
    reward, info = run_episode(env(), ExpertToolPolicy(task), options={"task_id": task.id})
    assert reward == pytest.approx(1.0) and info["outcome"]["phases_passed"] == len(task.phases)


def test_thrombolysis_skipped_fails_only_the_treatment_phase():
    task = of("thrombolysis")[0]
    calls = [call_text(a.name, a.arguments) for a in task.expected_actions
             if not (a.name == "prescribe_medication" and a.arguments["drug"] == "alteplase")]
    script = ScriptPolicy([*calls, call_text("submit_answer", {"answer": task.answer, "reasoning": task.rationale})])
    reward, info = run_episode(env(), script, options={"task_id": task.id})
    assert [p["passed"] for p in info["outcome"]["phases"]] == [True, True, False, True] and reward < 1.0
