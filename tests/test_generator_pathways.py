"""The ClinicalPathway task generator (``domains/pathways/generator.py``): suspected-sepsis and diabetic-emergency
journeys (the other four journeys are tested in ``tests/test_generator_pathways_acute.py``) whose phases are decided by the wave-1 domains' own rules and read by their own tools in the pathway: the
ESI level from the triage view, the antibiotic the chart's allergy and interaction checks leave (the
ClinicalDiagnosis generator's ``blocked``), renal results by CKD-EPI 2021 once the bloods are ordered, the medicines
the sick-day rules withhold, the JBDS markers of severe ketoacidosis and the potassium of the second litre at its
boundary; a journey that skips a phase's action fails that phase only; the validator catches a changed answer or
antibiotic. The framework's checks run in ``tests/test_task_generators.py``."""

from __future__ import annotations

from collections import Counter
from functools import cache

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.drugs import reference
from clinical_gym.drugs.units import ckd_epi_egfr
from clinical_gym.tool_env.generation import GeneratedTasks, generator_for, validate_generated
from clinical_gym.tool_env.policies import ScriptPolicy, call_text, run_episode
from clinical_gym.domains.pathways.data_model import PathwayPatient
from clinical_gym.domains.pathways.generator import DIABETIC, DIABETIC_VARIANTS, SEPSIS, SOURCES, PathwayGenerator
from clinical_gym.domains.pathways.journeys import ACUTE_VARIANTS
from clinical_gym.domains.pathways.phases import HANDOFF
from clinical_gym.domains.triage.esi import esi_decision

ENV = "ClinicalPathway-v1"


@cache
def generated(n: int = 300, seed: int = 0) -> GeneratedTasks:
    return generator_for(ENV).generate(n, seed)


def journeys(pathway: str):
    return [t for t in generated().tasks if t.pathway == pathway]


@cache
def env():
    g = generated()
    return gym.make(ENV, db=g.db, tasks=g.tasks, knowledge=None).unwrapped


def begin(task):
    e = env()
    e.reset(options={"task_id": task.id})
    return e


def test_the_triage_level_is_the_esi_rules_on_the_pathways_triage_view():
    g = generated()
    levels = Counter()
    for task in g.tasks:
        assigned = [a.arguments["level"] for a in task.expected_actions if a.name == "assign_esi_level"]
        if task.patient_id not in g.db.triage.patients:  # a ward patient (post-operative) is not triaged
            assert assigned == [] and task.pathway == "postop_complication", task.id
            continue
        level = esi_decision(g.db.triage, g.db.triage.patients[task.patient_id]).level
        levels[task.pathway, level] += 1
        assert assigned == [level], task.id
        if task.pathway == SEPSIS:
            assert ("Septic shock" in task.answer) == (level == 1), task.id
        elif task.pathway == DIABETIC:
            assert ("hypoglycaemia" in task.answer) == (level == 1), task.id
    assert {(SEPSIS, 1), (SEPSIS, 2), (DIABETIC, 1), (DIABETIC, 2)} <= set(levels)
    assert {("chest_pain", 2), ("stroke_code", 2), ("paediatric_fever", 1), ("paediatric_fever", 2)} <= set(levels)
    assert any(level >= 3 for (pathway, level) in levels if pathway == "chest_pain")  # the ruled-out pain waits


def test_the_antibiotic_is_the_first_the_charts_checks_leave():
    ruled_out = 0
    for task in journeys(SEPSIS):
        source = next(s for s in SOURCES if s.key == task.tags[2])
        rx = next(a.arguments for a in task.expected_actions if a.name == "prescribe_medication")
        e = begin(task)
        chart = e.domain_toolkits["clinical_diagnosis"]
        assert chart.check_drug_allergy(patient_id=task.patient_id, drug=rx["drug"])["conflicts"] == []
        found = chart.check_drug_interactions(patient_id=task.patient_id, drug=rx["drug"])
        assert not any(i["severity"] in ("major", "contraindicated") for i in found["interactions"]), task.id
        preferred = [r.drug for r in source.regimens]
        before = preferred[:preferred.index(rx["drug"])]
        assert task.safety.contraindicated == before  # every better choice was ruled out by the record
        ruled_out += bool(before)
    assert ruled_out >= 5


def test_renal_results_come_back_with_the_bundles_bloods_and_follow_ckd_epi():
    task = journeys(SEPSIS)[0]
    e = begin(task)
    chart = e.domain_toolkits["clinical_diagnosis"]
    assert not [r for r in chart.get_lab_results(patient_id=task.patient_id) if r.get("test") == "eGFR"]
    ordered = {r["test"]: r["value"] for r in chart.order_lab_test(patient_id=task.patient_id,
                                                                   test="Urea and electrolytes")["results"]}
    patient = generated().db.patients[task.patient_id]
    assert abs(ckd_epi_egfr(patient.age_years, ordered["Creatinine"], patient.sex) - ordered["eGFR"]) <= 1


def test_the_medicines_withheld_are_the_sick_day_rules_and_shock_holds_blood_pressure_drugs():
    g = generated()
    held = Counter()
    for task in journeys(SEPSIS):
        patient = g.db.patients[task.patient_id]
        withheld = {a.arguments["drug"] for a in task.expected_actions if a.name == "discontinue_medication"}
        shock = "Septic shock" in task.answer
        for m in patient.medications:
            drug = reference().drugs[m.drug]
            expected = drug.has("ace_inhibitor", "arb", "diuretic", "biguanide", "sglt2_inhibitor", "nsaid") or (
                shock and drug.has("ccb_dhp", "beta_blocker"))
            assert (m.drug in withheld) == expected, (task.id, m.drug)
            held[m.drug in withheld] += 1
        destination = next(a.arguments["destination"] for a in task.expected_actions if a.name == "set_disposition")
        assert destination == ("intensive care unit" if shock else "medical ward")
    assert held[True] and held[False]


def test_a_journey_that_skips_withholding_fails_only_that_phase():
    task = next(t for t in journeys(SEPSIS) if any(a.name == "discontinue_medication" for a in t.expected_actions))
    calls = [call_text(a.name, a.arguments) for a in task.expected_actions if a.name != "discontinue_medication"]
    script = ScriptPolicy([*calls, call_text("submit_answer", {"answer": task.answer, "reasoning": task.rationale})])
    reward, info = run_episode(env(), script, options={"task_id": task.id})
    phases = info["outcome"]["phases"]
    assert [p["passed"] for p in phases] == [True, True, True, False]
    assert any("discontinue_medication" in problem for problem in phases[3]["problems"]) and reward < 1.0


def test_ketoacidosis_severity_and_potassium_follow_jbds():
    g = generated()
    seen, potassium = Counter(), set()
    for task in [t for t in journeys(DIABETIC) if t.tags[2] == "dka"]:
        patient = g.db.patients[task.patient_id]
        results = {k: r.value for k, r in patient.pending_results.items()}
        ketones = patient.arrival.bedside_results["blood ketones"].value
        v = patient.vitals[-1]
        severe = (ketones > 6 or results["Bicarbonate"] < 5 or results["Venous blood gas pH"] < 7.0
                  or results["Potassium"] < 3.5 or v.systolic_bp < 90 or not 60 <= v.heart_rate <= 100)
        assert task.answer == ("Severe diabetic ketoacidosis" if severe else "Diabetic ketoacidosis"), task.id
        second = next(a.arguments for a in task.expected_actions
                      if a.name == "start_iv_fluids" and a.arguments["duration_minutes"] == 120)
        assert second["potassium_mmol_per_l"] == (0 if results["Potassium"] > 5.5 else 40)
        potassium.add(results["Potassium"])
        destination = next(a.arguments["destination"] for a in task.expected_actions if a.name == "set_disposition")
        assert destination == ("high dependency unit" if severe else "medical ward")
        seen[severe] += 1
    assert seen[True] and seen[False]
    assert {5.5, 5.6} <= potassium  # the edge: 40 mmol/L at 5.5 (the safety rule agrees), none at 5.6
    assert PathwayGenerator.potassium_per_litre(5.5) == 40 and PathwayGenerator.potassium_per_litre(5.6) == 0
    assert PathwayGenerator.dka_severe({"Bicarbonate": 5, "Venous blood gas pH": 7.0, "Potassium": 3.5}, 6.0, 100,
                                       90) == []  # every marker at its edge is not yet severe
    assert len(PathwayGenerator.dka_severe({"Bicarbonate": 4.9, "Venous blood gas pH": 6.99, "Potassium": 3.4}, 6.1,
                                           101, 89)) == 6


def test_hypoglycaemia_gets_glucose_at_triage_and_a_sulfonylurea_is_stopped():
    for split in ("train", "test"):
        for task in [t for t in generator_for(ENV).generate(60, seed=4, split=split).tasks if t.pathway == DIABETIC
                     and t.tags[2] != "dka"]:
            names = [a.name for a in task.expected_actions]
            assert names.index("order_immediate_intervention") < names.index("assign_esi_level")
            stopped = [a.arguments["drug"] for a in task.expected_actions if a.name == "discontinue_medication"]
            assert stopped == (["gliclazide"] if task.tags[2] == "hypo_sulfonylurea" else [])
            assert (task.tags[2] == "hypo_sulfonylurea") == (split == "test")


@pytest.mark.parametrize("split", ["train", "test"])
def test_each_split_holds_its_own_sources_and_emergencies(split):
    keys = {t.tags[2] for t in generator_for(ENV).generate(250, seed=3, split=split).tasks}
    assert keys == {s.key for s in SOURCES if s.pool == split} | {v for v, pool in DIABETIC_VARIANTS if pool == split} \
        | {v for _, v, pool in ACUTE_VARIANTS if pool == split}


def test_the_validator_finds_a_changed_answer_or_antibiotic():
    g = generated()
    task = journeys(SEPSIS)[0]
    other = next(t.answer for t in g.tasks if t.answer != task.answer)
    for change in ({"answer": other}, {"expected_actions": [
            a.model_copy(update={"arguments": {**a.arguments, "drug": "doxycycline"}})
            if a.name == "prescribe_medication" else a for a in task.expected_actions]}):
        broken = GeneratedTasks(ENV, 1, 0, None, g.db, [task.model_copy(update=change)])
        assert any(p.startswith(task.id) for p in validate_generated(broken, play=False)), change.keys()


def test_generated_patient_ids_fit_the_record_and_bad_ones_are_refused():
    patient = generated().db.patients[generated().tasks[0].patient_id]
    assert patient.patient_id.startswith("GS")
    with pytest.raises(ValueError, match="patient_id"):
        PathwayPatient.model_validate({**patient.model_dump(), "patient_id": "gs-1"})
    assert HANDOFF in {a.name for a in generated().tasks[0].expected_actions}
