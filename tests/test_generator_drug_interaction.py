"""The DrugInteraction task generator (``domains/drug_interaction/generator.py``): every answer is what the domain's
own tools say on the generated record (the interaction check, the renal dosing calculator, the screened
alternatives, the allergy check), the records are consistent (eGFR by CKD-EPI 2021 from the creatinine), the
validator catches a typed answer, and the split holds out drug classes. The framework's checks (200 tasks with the
expert at exactly 1.0, a low random agent, determinism, pools) run in ``tests/test_task_generators.py``."""

from __future__ import annotations

from collections import Counter
from functools import cache

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.drugs import reference
from clinical_gym.drugs.units import ckd_epi_egfr
from clinical_gym.tool_env.generation import GeneratedTasks, generator_for, validate_generated
from clinical_gym.domains.drug_interaction.generator import (
    SEVERITY_TEXT,
    TEST_CLASSES,
    TEST_INDICATIONS,
    VERDICT_TEXT,
    creatinine_for,
)

ENV = "DrugInteraction-v1"


@cache
def generated(n: int = 240, seed: int = 0) -> GeneratedTasks:
    return generator_for(ENV).generate(n, seed)


@cache
def env():
    g = generated()
    return gym.make(ENV, db=g.db, tasks=g.tasks, knowledge=None).unwrapped


def tool(name: str, task_id: str, **arguments):
    """What a domain tool returns on the task's record (a fresh episode of the task)."""
    e = env()
    e.reset(options={"task_id": task_id})
    return getattr(e.domain_tools, name)(**arguments)


def by_kind(kind: str):
    return [t for t in generated().tasks if t.category == kind]


def test_ckd_epi_2021_at_its_knee_and_a_published_example():
    # NKF worked example: a 55-year-old woman with creatinine 0.9 mg/dL has an eGFR of about 76
    assert ckd_epi_egfr(55, 0.9 * 88.4, "female") == pytest.approx(76, abs=1)
    # the two slopes meet at creatinine = kappa (0.7 mg/dL women, 0.9 men): continuous, and falling on both sides
    for sex, kappa in (("female", 0.7), ("male", 0.9)):
        knee = kappa * 88.4
        assert ckd_epi_egfr(60, knee - 0.01, sex) == pytest.approx(ckd_epi_egfr(60, knee + 0.01, sex), abs=0.1)
        assert ckd_epi_egfr(60, knee - 20, sex) > ckd_epi_egfr(60, knee, sex) > ckd_epi_egfr(60, knee + 20, sex)
    # the same creatinine means less filtration in a woman (kappa 0.7), despite the 1.012 factor
    assert ckd_epi_egfr(40, 88.4, "female") < ckd_epi_egfr(40, 88.4, "male")


@pytest.mark.parametrize("target", [8, 14.5, 29.5, 30, 45, 59.5, 90])
@pytest.mark.parametrize(("age", "sex"), [(24, "female"), (58, "male"), (88, "female")])
def test_creatinine_for_hits_the_target_egfr_and_clearance(target, age, sex):
    from clinical_gym.drugs.units import creatinine_clearance

    assert ckd_epi_egfr(age, creatinine_for(target, "eGFR", age, 70, sex), sex) == pytest.approx(target, abs=0.6)
    assert creatinine_clearance(age, 70, creatinine_for(target, "CrCl", age, 70, sex), sex) == pytest.approx(
        target, rel=0.02, abs=0.3)


def test_every_kind_and_answer_class_occurs_with_varied_records():
    g = generated()
    kinds = Counter(t.category for t in g.tasks)
    assert set(kinds) == {"interaction", "alternative", "renal", "allergy"} and min(kinds.values()) >= 30
    severities = {t.options[t.answer] for t in by_kind("interaction")}
    assert severities == set(SEVERITY_TEXT.values())  # no-interaction negatives and minor ones included
    assert {t.options[t.answer] for t in by_kind("allergy")} == set(VERDICT_TEXT.values())
    patients = list(g.db.patients.values())
    assert any(p.pregnant for p in patients) and any(p.age >= 80 for p in patients) and any(p.breastfeeding
                                                                                          for p in patients)
    assert sum(len(p.medications) >= 3 for p in patients) >= 30 and sum(bool(p.allergies) for p in patients) >= 60


def test_interaction_answers_are_what_check_all_interactions_reports():
    for task in by_kind("interaction")[:40]:
        drug = task.tags[1]
        found = tool("check_all_interactions", task.id, patient_id=task.patient_id, drug=drug)
        worst = [f["severity"] for f in found["interactions"] if drug in f["drugs"]]
        assert task.options[task.answer] == SEVERITY_TEXT[worst[0] if worst else "none"], task.id
        alerts = [a for a in task.expected_actions if a.name == "record_interaction_alert"]
        assert bool(alerts) == (worst[:1] in (["major"], ["contraindicated"]))


def test_renal_answers_are_the_band_the_calculator_gives_at_the_patients_value():
    for task in by_kind("renal")[:30]:
        drug = reference().drugs[task.tags[1]]
        renal = tool("get_renal_function", task.id, patient_id=task.patient_id)
        creatinine = renal["creatinine"][-1]["value"]
        value = renal["egfr"][-1]["value"] if drug.renal_measure == "eGFR" else tool(
            "calculate_creatinine_clearance", task.id, age=renal["age"], weight_kg=renal["weight_kg"],
            serum_creatinine_umol_l=creatinine, sex=renal["sex"])["creatinine_clearance_ml_min"]
        advice = tool("adjust_dose_for_renal_function", task.id, drug=drug.name, renal_function_ml_min=value)
        band = reference().renal_band(drug, value)
        assert task.options[task.answer] == band.advice, task.id
        acts = {a.name for a in task.expected_actions}
        assert ("discontinue_medication" in acts) == band.avoid == advice.get("avoid", False)


def test_the_alternative_is_the_only_option_recommend_alternative_finds_suitable_without_cautions():
    for task in by_kind("alternative")[:30]:
        proposed = next(a.arguments for a in task.expected_actions if a.name == "recommend_alternative")
        listed = tool("recommend_alternative", task.id, **proposed)["alternatives"]
        options = set(task.options.values())
        clean = [r["drug"] for r in listed if r["drug"] in options and r["suitable"] and not r["cautions"]]
        assert clean == [task.options[task.answer]] and proposed["drug"] in options, task.id
        assert set(task.safety.contraindicated) == options - set(clean)


def test_allergy_answers_are_the_verdict_of_check_allergy_cross_reactivity():
    for task in by_kind("allergy")[:30]:
        verdict = tool("check_allergy_cross_reactivity", task.id, patient_id=task.patient_id,
                       drug=task.tags[1])["verdict"]
        expected = "none" if verdict == "no documented allergy conflict" else verdict
        assert task.options[task.answer] == VERDICT_TEXT[expected], task.id


def test_records_are_consistent():
    g = generated()
    generator = generator_for(ENV)
    for patient in g.db.patients.values():
        labs = {r.test: r.value for r in patient.labs}
        assert abs(ckd_epi_egfr(patient.age, labs["Creatinine"], patient.sex) - labs["eGFR"]) <= 1
        assert generator.record_problems(patient) == []


def test_the_validator_finds_a_typed_answer_and_an_inconsistent_record():
    g = generated()
    generator = generator_for(ENV)
    for task in [by_kind(k)[0] for k in ("interaction", "alternative", "renal", "allergy")]:
        wrong = next(k for k in task.options if k != task.answer)
        broken = GeneratedTasks(ENV, 1, 0, None, g.db, [task.model_copy(update={"answer": wrong})])
        assert any(p.startswith(task.id) for p in validate_generated(broken, play=False)), task.category
    patient = g.db.patients[by_kind("renal")[0].patient_id]
    labs = [r.model_copy(update={"value": r.value + 25}) if r.test == "eGFR" else r for r in patient.labs]
    assert any("does not follow from creatinine" in p
               for p in generator.record_problems(patient.model_copy(update={"labs": labs})))


def test_the_test_split_asks_about_held_out_classes_and_indications_only():
    generator = generator_for(ENV)
    for split in ("train", "test"):
        for task in generator.generate(150, seed=2, split=split).tasks:
            if task.category == "alternative":
                assert (task.tags[1] in TEST_INDICATIONS) == (split == "test"), task.id
            else:
                assert reference().drugs[task.tags[1]].has(*TEST_CLASSES) == (split == "test"), task.id

