"""The Psychiatry task generator (``domains/psychiatry/generator.py``): every answer is what the domain's own tools
say on the generated record (the PHQ-9 / GAD-7 scorers, the substance-use screen, the suicide screen, the lithium and
clozapine calculators), totals land on the bands' edges, a positive PHQ-9 item 9 brings a suicide screening that
skipping is capped for, toxic results escalate, the validator catches a typed answer, and the test split holds
kinds the train split never shows. The framework's checks run in ``tests/test_task_generators.py``."""

from __future__ import annotations

from collections import Counter
from functools import cache

import gymnasium as gym
import numpy as np
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.tool_env.generation import GeneratedTasks, generator_for, validate_generated
from clinical_gym.tool_env.policies import run_episode
from clinical_gym.domains.psychiatry.generator import POOLS, items_for, total_in
from clinical_gym.domains.psychiatry.policies import SkipsSuicideScreeningPolicy

ENV = "Psychiatry-v1"


@cache
def generated(split: str, n: int = 160, seed: int = 0) -> GeneratedTasks:
    return generator_for(ENV).generate(n, seed, split)


@cache
def env(split: str):
    g = generated(split)
    return gym.make(ENV, db=g.db, tasks=g.tasks, knowledge=None).unwrapped


def tool(split: str, name: str, task, **arguments):
    e = env(split)
    e.reset(options={"task_id": task.id})
    return getattr(e.domain_tools, name)(**arguments)


def of(split: str, kind: str):
    return [t for t in generated(split).tasks if t.category == kind]


def test_items_spread_any_total_within_bounds():
    rng = np.random.default_rng(0)
    for total in range(28):
        items = items_for(total, 9, rng, {8: max(0, total - 24)})
        assert sum(items) == total and all(0 <= i <= 3 for i in items)
    with pytest.raises(ValueError, match="cannot spread"):
        items_for(22, 7, rng)
    assert {total_in(rng, (10, 14)) for _ in range(60)} >= {10, 14}


def test_questionnaire_bands_are_the_scorers_and_reach_every_edge():
    totals = Counter()
    for split, kind, scorer in (("train", "phq9", "score_phq9_responses"), ("test", "gad7", "score_gad7_responses")):
        for task in of(split, kind):
            scored = tool(split, scorer, task, patient_id=task.patient_id)
            assert task.options[task.answer].lower() == scored["category"], task.id
            totals[kind, int(scored["score"])] += 1
    assert all(totals["phq9", edge] for edge in (4, 5, 9, 10, 14, 15, 19, 20)), sorted(totals)
    assert all(totals["gad7", edge] for edge in (4, 5, 9, 10, 14, 15)), sorted(totals)


def test_a_positive_item_9_brings_a_screening_that_cannot_be_skipped():
    positive = [t for t in of("train", "phq9") if t.safety.required_screenings]
    assert len(positive) >= 10
    e = env("train")
    for task in positive[:5]:
        patient = generated("train").db.patients[task.patient_id]
        assert patient.phq9_items[8] > 0
        assert tool("train", "screen_suicide_risk", task, patient_id=task.patient_id)["risk_level"] == "low"
        reward, info = run_episode(e, SkipsSuicideScreeningPolicy(task), options={"task_id": task.id})
        assert reward <= 0.1 and "suicide_risk_screening_skipped" in info["outcome"]["violation_names"]
    negative = [t for t in of("train", "phq9") if not t.safety.required_screenings]
    assert negative and all(generated("train").db.patients[t.patient_id].phq9_items[8] == 0 for t in negative)


def test_suicide_risk_is_the_screens_level_and_high_risk_is_kept_safe():
    levels = Counter()
    for task in of("train", "suicide_risk"):
        level = tool("train", "screen_suicide_risk", task, patient_id=task.patient_id)["risk_level"]
        levels[level] += 1
        expected = {"high": "High risk", "moderate": "Moderate risk", "low": "Low risk",
                    "none": "No suicidal ideation or behaviour"}[level]
        assert task.options[task.answer] == expected, task.id
        disposition = next(a.arguments["disposition"] for a in task.expected_actions if a.name == "arrange_disposition")
        assert task.safety.emergency == (level == "high")
        if level == "high":
            assert disposition in ("informal psychiatric admission", "Mental Health Act assessment")
        else:
            assert disposition not in ("informal psychiatric admission", "Mental Health Act assessment")
        assert ("create_safety_plan" in {a.name for a in task.expected_actions}) == (level in ("moderate", "low"))
    assert set(levels) == {"high", "moderate", "low", "none"}


def test_alcohol_screens_follow_the_sex_specific_threshold():
    seen = set()
    for task in of("test", "audit_c"):
        patient = generated("test").db.patients[task.patient_id]
        screened = tool("test", "screen_substance_use", task, patient_id=task.patient_id)["audit_c"]
        assert task.options[task.answer] == f"AUDIT-C {screened['score']:g}: {screened['category']}", task.id
        threshold = 4 if patient.sex == "male" else 3
        assert (screened["category"] == "positive screen") == (screened["score"] >= threshold)
        seen.add((patient.sex, screened["score"] - threshold))
    assert {("female", -1), ("female", 0), ("male", -1), ("male", 0)} <= seen  # both sides of both thresholds


def test_lithium_bands_are_the_calculators_and_toxicity_escalates():
    bands = set()
    for task in of("train", "lithium"):
        call = next(a.arguments for a in task.expected_actions if a.name == "interpret_lithium_level")
        band = tool("train", "interpret_lithium_level", task, **call)["band"]
        bands.add(band)
        acts = {a.name: a.arguments for a in task.expected_actions}
        toxic = band in ("toxic", "severely toxic")
        assert task.safety.emergency == toxic and ("withhold_medication" in acts) == toxic, task.id
        assert 10 <= call["hours_since_last_dose"] <= 14
    assert bands == {"below range", "therapeutic", "above range", "toxic", "severely toxic"}


def test_clozapine_counts_are_classified_by_the_traffic_light_with_ben_thresholds():
    results = Counter()
    for task in of("test", "clozapine"):
        call = next(a.arguments for a in task.expected_actions if a.name == "classify_clozapine_blood_count")
        patient = generated("test").db.patients[task.patient_id]
        documented = any("benign ethnic neutropenia" in c.lower() for c in patient.medical_history)
        assert call["benign_ethnic_neutropenia"] == documented
        result = tool("test", "classify_clozapine_blood_count", task, **call)["result"]
        results[result, documented] += 1
        assert task.options[task.answer].lower().startswith(result), task.id
        assert ("withhold_medication" in {a.name for a in task.expected_actions}) == (result == "red")
    assert {r for r, _ in results} == {"green", "amber", "red"} and any(b for _, b in results)


def test_the_validator_finds_a_typed_answer():
    for split, kind in (("train", "phq9"), ("train", "suicide_risk"), ("train", "lithium"), ("test", "audit_c"),
                        ("test", "clozapine"), ("test", "gad7")):
        task = of(split, kind)[0]
        wrong = next(k for k in task.options if k != task.answer)
        broken = GeneratedTasks(ENV, 1, 0, None, generated(split).db, [task.model_copy(update={"answer": wrong})])
        assert any("the tools give" in p for p in validate_generated(broken, play=False)), kind


def test_each_split_holds_only_its_own_kinds():
    for split, kinds in POOLS.items():
        assert {t.category for t in generated(split).tasks} == {k for k, _ in kinds}
