"""The Obstetrics task generator (``domains/obstetrics/generator.py``): every answer is what the domain's own tools
compute on the generated record (the dating calculator, the NICHD classifier, the ACOG hypertensive-disorder
criteria, the haemorrhage stager, the pregnancy and lactation drug check), the re-dating rule is exercised at its
threshold, treatment follows the finding (antihypertensive, magnesium, haemorrhage protocol, emergency birth),
normal findings carry no action, and the validator catches a typed answer. The framework's checks run in
``tests/test_task_generators.py``."""

from __future__ import annotations

from collections import Counter
from functools import cache

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.tool_env.generation import GeneratedTasks, generator_for, validate_generated
from clinical_gym.tool_env.policies import run_episode
from clinical_gym.domains.obstetrics import calculations
from clinical_gym.domains.obstetrics.generator import CTG_OPTIONS, PPH_OPTIONS, VERDICT_TEXT, crl_for
from clinical_gym.domains.obstetrics.policies import UnsafeObstetricPrescriberPolicy

ENV = "Obstetrics-v1"


@cache
def generated(split: str, n: int = 200, seed: int = 0) -> GeneratedTasks:
    return generator_for(ENV).generate(n, seed, split)


@cache
def env(split: str):
    g = generated(split)
    return gym.make(ENV, db=g.db, tasks=g.tasks, knowledge=None).unwrapped


def tool(split: str, name: str, task, **arguments):
    e = env(split)
    e.reset(options={"task_id": task.id})
    return getattr(e.domain_tools, name)(**arguments)


def of(kind: str, split: str | None = None):
    splits = (split,) if split else ("train", "test")
    return [(s, t) for s in splits for t in generated(s).tasks if t.category == kind]


def call_of(task, name: str) -> dict:
    return next(a.arguments for a in task.expected_actions if a.name == name)


@pytest.mark.parametrize("days", range(38, 98))
def test_a_crown_rump_length_is_found_for_every_first_trimester_day(days):
    assert calculations.crl_gestation_days(crl_for(days)) == days


def test_due_dates_are_the_calculators_and_the_redating_threshold_is_exercised():
    decided = Counter()
    for split, task in of("dating"):
        dated = tool(split, "calculate_gestational_age", task, **call_of(task, "calculate_gestational_age"))
        assert task.options[task.answer] == dated["edd"], task.id
        comparison = dated.get("comparison")
        if comparison is not None and dated["by_lmp"]["lmp_certain"]:
            gap, limit = comparison["discrepancy_days"], comparison["redate_if_more_than_days"]
            decided[gap - limit] += 1
            assert (dated["dating_basis"] == "ultrasound") == (gap > limit)
    assert decided[0] and decided[1]  # exactly at the threshold (keep the LMP) and one day past it (re-date)
    variants = {t.tags[1] for _, t in of("dating")}
    assert variants == {"dating:crl", "dating:naegele", "dating:uncertain_lmp", "dating:biometry"}


def test_tracings_are_classified_by_nichd_and_the_plan_follows_the_category():
    seen = Counter()
    for split, task in of("ctg"):
        category = tool(split, "classify_fetal_heart_tracing", task,
                        **call_of(task, "classify_fetal_heart_tracing"))["category"]
        seen[category] += 1
        assert task.options[task.answer] == CTG_OPTIONS["ABC"[("Category I", "Category II", "Category III").index(
            category)]], task.id
        names = [a.name for a in task.expected_actions]
        assert task.safety.emergency == ("plan_delivery" in names) == (category == "Category III")
        if category == "Category I":  # a normal tracing: nothing to do but document
            assert set(names) == {"get_fetal_heart_tracing", "classify_fetal_heart_tracing", "write_clinical_note"}
    assert set(seen) == {"Category I", "Category II", "Category III"}


def test_hypertensive_disorders_follow_acog_and_are_treated_as_they_require():
    disorders = Counter()
    for split, task in of("hypertension"):
        found = tool(split, "assess_preeclampsia_criteria", task, **call_of(task, "assess_preeclampsia_criteria"))
        disorder = found["classification"]
        disorders[disorder] += 1
        assert task.options[task.answer] == disorder, task.id
        drugs = [a.arguments["drug"] for a in task.expected_actions if a.name == "prescribe_medication"]
        severe = disorder == "HELLP syndrome" or "with severe features" in disorder
        assert ("magnesium sulfate" in drugs) == severe, task.id
        patient = generated(split).db.patients[task.patient_id]
        acute = {"labetalol", "nifedipine"} & set(drugs)
        assert bool(acute) == found["severe_range_blood_pressure"], task.id
        asthma = any(c.name == "Asthma" for c in patient.conditions)
        if acute and (asthma or any(m.name == "labetalol" for m in patient.medications)):
            assert acute == {"nifedipine"}  # no beta-blocker in asthma, no second labetalol
    assert len(disorders) >= 5 and disorders["HELLP syndrome"] and disorders["gestational hypertension"]


def test_haemorrhage_stages_are_the_stagers_and_activate_the_protocol():
    stages = Counter()
    for split, task in of("pph"):
        stage = tool(split, "stage_postpartum_haemorrhage", task,
                     **call_of(task, "stage_postpartum_haemorrhage"))["stage"]
        stages[split, stage] += 1
        assert task.options[task.answer] == PPH_OPTIONS["ABCD"[stage]], task.id
        activations = [a.arguments["stage"] for a in task.expected_actions if a.name == "activate_haemorrhage_protocol"]
        assert activations == ([stage] if stage else [])
        mode = generated(split).db.patients[task.patient_id].birth.mode
        assert (mode == "caesarean") == (split == "test")
    assert {s for _, s in stages} == {0, 1, 2, 3}


def test_drug_verdicts_are_the_references_for_the_patients_stage():
    verdicts = Counter()
    for split, task in of("drug_safety"):
        check = call_of(task, "check_pregnancy_drug_safety")
        result = tool(split, "check_pregnancy_drug_safety", task, **check)
        verdicts[result["verdict"]] += 1
        assert task.options[task.answer] == VERDICT_TEXT[result["verdict"]], task.id
        assert check["stage"] == generator_for(ENV).stage_of(generated(split).db.patients[task.patient_id])
    assert {"compatible", "caution", "avoid", "contraindicated"} <= set(verdicts)


def test_a_forbidden_prescription_is_still_capped_on_generated_patients():
    split, task = of("drug_safety", "train")[0]
    e = env(split)
    reward, info = run_episode(e, UnsafeObstetricPrescriberPolicy(task, generated(split).db),
                               options={"task_id": task.id})
    assert reward <= 0.1 and info["outcome"]["violation_names"]


def test_the_validator_finds_a_typed_answer_and_a_changed_reading():
    for kind in ("dating", "ctg", "hypertension", "pph", "drug_safety"):
        split, task = of(kind)[0]
        wrong = next(k for k in task.options if k != task.answer)
        broken = GeneratedTasks(ENV, 1, 0, None, generated(split).db, [task.model_copy(update={"answer": wrong})])
        assert any("the calculation gives" in p for p in validate_generated(broken, play=False)), kind
    split, task = of("hypertension")[0]
    actions = [a.model_copy(update={"arguments": {**a.arguments, "systolic_bp": a.arguments["systolic_bp"] + 30}})
               if a.name == "assess_preeclampsia_criteria" else a for a in task.expected_actions]
    broken = GeneratedTasks(ENV, 1, 0, None, generated(split).db,
                            [task.model_copy(update={"expected_actions": actions})])
    assert any("inputs differ from the record" in p for p in validate_generated(broken, play=False))
