"""Task generators of the tool domains (``clinical_gym.tool_env.generation``): for every environment with one, 200
generated tasks pass the framework's and the domain's validation with the scripted expert scoring exactly 1.0; a
random tool-caller stays low; generation is deterministic and prefix-stable; the test split holds only pool keys the
train split never shows; ``gym.make(ENV, tasks="generated:N")`` with ``task_seed`` and ``split``; one-line errors for
bad arguments; a task folder written from a generated set reads back unchanged. Domain-specific rules (the ESI
decision, drug safety, ...) have their own tests below."""

from __future__ import annotations

from functools import cache

import gymnasium as gym
import numpy as np
import pytest

import clinical_gym
from clinical_gym.tool_env.generation import (
    MAX_TASKS,
    GeneratedTasks,
    Wording,
    generator_env_ids,
    generator_for,
    parse_generated,
    validate_generated,
)
from clinical_gym.tool_env.policies import RandomToolPolicy, run_episode
from clinical_gym.tool_env.task_folder import write_task_folder

GENERATOR_ENVS = generator_env_ids()
PART_A = ("ClinicalDiagnosis-v1", "Triage-v1", "EHRManagement-v1", "MedicalQA-v1", "RadiologyReport-v1")
every_generator = pytest.mark.parametrize("env_id", GENERATOR_ENVS)


@cache
def generated(env_id: str, n: int = 200, seed: int = 0, split: str | None = None) -> GeneratedTasks:
    return generator_for(env_id).generate(n, seed, split)


def make_env(env_id: str, g: GeneratedTasks) -> gym.Env:
    return gym.make(env_id, db=g.db, tasks=g.tasks, knowledge=None).unwrapped


def test_the_part_a_domains_have_generators():
    assert set(PART_A) <= set(GENERATOR_ENVS)


@every_generator
def test_200_generated_tasks_are_valid_and_the_expert_scores_exactly_one(env_id):
    g = generated(env_id)
    assert len(g.tasks) == 200 and {t.split for t in g.tasks} == {"train", "test"}
    assert validate_generated(g) == []


@every_generator
def test_a_random_tool_caller_scores_low_on_generated_tasks(env_id):
    g = generated(env_id)
    env = make_env(env_id, g)
    rewards, correct = [], 0
    for k, task in enumerate(g.tasks[:40]):
        tools = env.reset(options={"task_id": task.id})[1]["tools"]
        reward, info = run_episode(env, RandomToolPolicy(tools, seed=k), options={"task_id": task.id})
        rewards.append(reward)
        correct += info["outcome"]["result"] == "correct"
    # Safety and format are earned by doing nothing harmful, so the 5-dimension floor of a harmless random caller is
    # about 0.3 (the bundled tasks' emergencies pull theirs lower); it never solves a task.
    assert np.mean(rewards) < 0.35 and correct <= 2, (np.mean(rewards), correct)


@every_generator
def test_generation_is_deterministic_and_a_smaller_set_is_a_prefix(env_id):
    generator = generator_for(env_id)
    small, again, other = generator.generate(12, seed=5), generator.generate(12, seed=5), generator.generate(12, seed=6)
    dump = lambda g: [t.model_dump() for t in g.tasks]  # noqa: E731
    assert dump(small) == dump(again) and small.db.get_hash() == again.db.get_hash()
    assert dump(small) != dump(other)
    assert dump(small)[:12] == dump(generated(env_id, 40, 5))[:12]
    train = generator.generate(15, seed=5, split="train")
    assert {t.split for t in train.tasks} == {"train"} and [t.id for t in train.tasks] == \
        [t.id for t in generated(env_id, 40, 5).tasks if t.split == "train"][:15]


@every_generator
def test_the_test_split_holds_what_the_train_split_never_shows(env_id):
    generator = generator_for(env_id)
    train = {generator.pool_key(t) for t in generator.generate(300, seed=1, split="train").tasks}
    test = {generator.pool_key(t) for t in generator.generate(120, seed=1, split="test").tasks}
    assert train and test and not train & test, sorted(train & test)
    assert generator.held_out


@every_generator
def test_tickets_vary_in_wording_and_never_repeat_a_task(env_id):
    g = generated(env_id)
    openings = {t.ticket.split()[0] for t in g.tasks}
    assert len(openings) >= 2
    hashes = {d.content_hash() for d in g.drafts}
    assert len(hashes) >= 0.9 * len(g.drafts)


@every_generator
def test_gym_make_generates_tasks_for_a_seed_and_split(env_id):
    env = gym.make(env_id, tasks="generated:30", task_seed=2, split="test", knowledge=None).unwrapped
    assert len(env.tasks) == 30 and {t.split for t in env.tasks} == {"test"}
    assert [t.id for t in env.tasks] == [t.id for t in generated(env_id, 30, 2, "test").tasks]
    obs, info = env.reset(seed=0)
    assert obs and info["tools"]
    default = gym.make(env_id, tasks="generated:5", knowledge=None).unwrapped
    assert [t.id for t in default.tasks] == [f"{generator_for(env_id).id_prefix}-0-{i}" for i in range(5)]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"tasks": "generated:0"}, "must be from 1 to 100,000, got 0"),
    ({"tasks": f"generated:{MAX_TASKS + 1}"}, "must be from 1 to 100,000"),
    ({"tasks": "generated:ten"}, "must be a whole number, got 'ten'"),
    ({"tasks": "generated:5", "task_seed": "x"}, "task seed must be a whole number >= 0, got 'x'"),
    ({"tasks": "generated:5", "task_seed": -3}, "task seed must be a whole number >= 0, got -3"),
    ({"tasks": "generated:5", "task_seed": 1.5}, "task seed must be a whole number >= 0, got 1.5"),
    ({"task_seed": 3}, "task_seed applies only to tasks='generated:N'"),
    ({"tasks": "generated:5", "split": "dev"}, "unknown split 'dev'"),
])
def test_bad_generator_arguments_are_one_line_errors(kwargs, message):
    with pytest.raises(ValueError, match=message) as error:
        gym.make("Triage-v1", knowledge=None, **kwargs)
    assert "\n" not in str(error.value)


def test_generated_tasks_bring_their_own_records_and_need_a_generator():
    from clinical_gym.domains.triage.environment import bundled_db

    with pytest.raises(ValueError, match="db cannot be given with generated tasks"):
        gym.make("Triage-v1", db=bundled_db(), tasks="generated:5", knowledge=None)
    without = [e.id for e in clinical_gym.ENVIRONMENTS if e.family == "tool" and e.id not in GENERATOR_ENVS]
    for env_id in without:
        with pytest.raises(ValueError, match="has no task generator; generators exist for"):
            gym.make(env_id, tasks="generated:5")
    with pytest.raises(ValueError, match="must be a whole number"):
        parse_generated("generated:")
    assert parse_generated("generated:7") == 7 and parse_generated("runs/tasks") is None


@every_generator
def test_a_task_folder_of_generated_tasks_reads_back_unchanged(env_id, tmp_path):
    g = generated(env_id, 25, 4)
    write_task_folder(tmp_path, g.tasks, g.db)
    env = gym.make(env_id, tasks=str(tmp_path), knowledge=None).unwrapped
    assert [t.model_dump() for t in env.tasks] == [t.model_dump() for t in g.tasks]
    assert env.base_db.get_hash() == g.db.get_hash()


def test_wording_needs_several_distinct_phrasings():
    with pytest.raises(ValueError, match="at least two different phrasings"):
        Wording(ticket=("Only one {pid}.",))
    wording = Wording(ticket=("See {pid}.", "Please see {pid} ({who})."))
    assert wording.fields("ticket") == {"pid", "who"}
    rng = np.random.default_rng(0)
    assert {wording.say(rng, "ticket", pid="P1", who="x") for _ in range(20)} == {"See P1.", "Please see P1 (x)."}


def test_a_validator_finds_a_task_whose_answer_was_typed_wrongly():
    g = generated("Triage-v1", 30)
    task = next(t for t in g.tasks if t.category == "esi_level")
    wrong = next(k for k in task.options if k != task.answer)
    broken = GeneratedTasks(g.env_id, 1, 0, None, g.db, [task.model_copy(update={"answer": wrong})])
    problems = validate_generated(broken)
    assert problems and all(p.startswith(f"{task.id}: ") for p in problems)
    assert any(f"answer {wrong!r} is not" in p for p in problems)


# -- Triage ------------------------------------------------------------------------------------------------------------
def test_the_esi_rules_reproduce_every_hand_written_triage_level():
    from clinical_gym.domains.triage.environment import bundled_db, get_tasks
    from clinical_gym.domains.triage.esi import esi_decision
    from clinical_gym.domains.triage.policies import expected_esi_level

    db = bundled_db()
    for task in get_tasks():
        assert esi_decision(db, db.patients[task.patient_id]).level == expected_esi_level(task), task.id


def test_esi_decision_points_at_their_boundaries():
    from clinical_gym.domains.triage.environment import bundled_db
    from clinical_gym.domains.triage.esi import esi_decision, hypotension_limit

    db = bundled_db()
    adult = db.patients["E045"]  # ESI 5: no resources, normal observations
    vitals = adult.vitals[-1]

    def level(care=None, **changes):
        patient = adult.model_copy(update={"vitals": [vitals.model_copy(update=changes)],
                                           "anticipated_care": care if care is not None else adult.anticipated_care})
        return esi_decision(db, patient).level

    assert level() == 5 and level(care=["ankle X-ray"]) == 4 and level(care=["ankle X-ray", "full blood count"]) == 3
    two = ["ankle X-ray", "full blood count"]
    assert level(care=two, heart_rate=100) == 3 and level(care=two, heart_rate=101) == 2  # danger zone: HR > 100
    assert level(care=two, spo2=92) == 3 and level(care=two, spo2=91) == 2  # SpO2 < 92
    assert level(pain_score=6) == 5 and level(pain_score=7) == 2  # severe pain: 7/10
    assert level(spo2=90) == 5 and level(spo2=89) == 1  # SpO2 below 90: ESI 1
    assert level(respiratory_rate=8) == 5 and level(respiratory_rate=7) == 1
    assert level(systolic_bp=90) == 5 and level(systolic_bp=89) == 1 and hypotension_limit(adult) == 90
    assert level(consciousness="voice") == 2 and level(consciousness="pain") == 1


# -- ClinicalDiagnosis -------------------------------------------------------------------------------------------------
def test_prescribing_safety_reads_the_drug_reference():
    from clinical_gym.domains.clinical_diagnosis.data_model import Allergy, LabResult, Medication
    from clinical_gym.domains.clinical_diagnosis.generator import ClinicalDiagnosisGenerator, Regimen

    g = generated("ClinicalDiagnosis-v1")
    task = next(t for t in g.tasks if t.category == "prescribing")
    base = g.db.patients[task.patient_id].model_copy(update={"allergies": [], "medications": []})
    blocked = ClinicalDiagnosisGenerator.blocked
    egfr = [r.model_copy(update={"value": 20.0}) if r.test == "eGFR" else r for r in base.labs]
    assert blocked(base.model_copy(update={"labs": egfr}), "nitrofurantoin")  # avoid below eGFR 30
    fine = [r.model_copy(update={"value": 60.0}) if r.test == "eGFR" else r for r in base.labs]
    assert blocked(base.model_copy(update={"labs": fine}), "nitrofurantoin") is None
    penicillin = [Allergy(substance="penicillin", reaction="anaphylaxis", severity="life-threatening")]
    assert "allergy" in blocked(base.model_copy(update={"allergies": penicillin}), "amoxicillin")
    statin = [Medication(name="simvastatin", dose="40 mg", frequency="at night")]
    assert "interaction" in blocked(base.model_copy(update={"medications": statin, "labs": fine}), "clarithromycin")
    low = base.model_copy(update={"labs": [r.model_copy(update={"value": 20.0}) if r.test == "eGFR" else r
                                           for r in base.labs if isinstance(r, LabResult)]})
    assert ClinicalDiagnosisGenerator.fitted(low, Regimen("clarithromycin", 500, "mg", "bid")).dose == 250


def test_every_prescribing_task_has_exactly_one_safe_option():
    from clinical_gym.domains.clinical_diagnosis.generator import ClinicalDiagnosisGenerator

    g = generated("ClinicalDiagnosis-v1")
    tasks = [t for t in g.tasks if t.category == "prescribing"]
    assert len(tasks) >= 40
    for task in tasks:
        patient = g.db.patients[task.patient_id]
        safe = [k for k, drug in task.options.items() if drug not in task.safety.not_indicated
                and ClinicalDiagnosisGenerator.blocked(patient, drug) is None]
        assert safe == [task.answer], task.id
        assert set(task.safety.contraindicated) == {d for k, d in task.options.items()
                                                    if k != task.answer and d not in task.safety.not_indicated}


# -- EHRManagement -----------------------------------------------------------------------------------------------------
def test_the_trend_rule_at_its_five_percent_boundary():
    from clinical_gym.domains.ehr_management.tools import trend_direction

    assert trend_direction(100, 104.9) == "stable" and trend_direction(100, 95.1) == "stable"
    assert trend_direction(100, 105) == "rising" and trend_direction(100, 95) == "falling"
    assert trend_direction(0, 0) == "stable" and trend_direction(0, 0.2) == "rising"


def test_only_critical_tasks_hold_a_critical_result_and_they_flag_it():
    g = generated("EHRManagement-v1")
    generator = generator_for("EHRManagement-v1")
    critical = [t for t in g.tasks if t.category == "critical"]
    assert len(critical) >= 30 and all(t.safety.emergency for t in critical)
    trend = next(t for t in g.tasks if t.category == "trend")
    wrong = next(k for k in trend.options if k != trend.answer)
    assert any("get_lab_trend says" in p for p in generator.check(trend.model_copy(update={"answer": wrong}), g.db))


# -- MedicalQA and RadiologyReport -------------------------------------------------------------------------------------
def test_answers_are_what_the_rules_compute():
    from clinical_gym.domains.radiology_report.follow_up_rules import fleischner_recommendation
    from clinical_gym.tools import instruments

    g = generated("MedicalQA-v1")
    for task in (t for t in g.tasks if t.category == "calculation"):
        call = next(a for a in task.expected_actions if a.name in instruments.__all__)
        assert str(int(getattr(instruments, call.name)(**call.arguments).score)) == task.options[task.answer]
    g = generated("RadiologyReport-v1")
    for task in (t for t in g.tasks if t.category == "nodule"):
        call = next(a for a in task.expected_actions if a.name == "calculate_nodule_follow_up").arguments
        rule = fleischner_recommendation(call["nodule_type"], call["long_axis_mm"], call["short_axis_mm"],
                                         call["multiple"], call["patient_risk"], call.get("solid_component_mm", 0))
        assert rule["recommendation"] == task.options[task.answer], task.id


# -- the command line and the benchmark ----------------------------------------------------------------------------------
def test_tasks_generate_writes_a_folder_that_reads_back_unchanged(tmp_path, capsys):
    from clinical_gym.cli import main

    out = tmp_path / "triage"
    assert main(["tasks", "generate", "--env", "triage", "-n", "12", "--seed", "3", "--out", str(out)]) == 0
    assert "wrote 12 Triage-v1 tasks" in capsys.readouterr().out
    assert {p.name for p in out.iterdir()} == {"tasks.json", "db.json", "generation.json"}
    env = gym.make("Triage-v1", tasks=str(out), knowledge=None).unwrapped
    again = generated("Triage-v1", 12, 3)
    assert [t.model_dump() for t in env.tasks] == [t.model_dump() for t in again.tasks]
    assert env.base_db.get_hash() == again.db.get_hash()
    assert main(["tasks", "generate", "--env", "triage", "-n", "2", "--out", str(out)]) == 2  # not empty
    assert "is not an empty folder" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["--env", "Triage-v1", "-n", "0"], "the number of tasks must be from 1 to 100,000, got 0"),
    (["--env", "Triage-v1", "-n", "many"], "the number of tasks must be a whole number, got 'many'"),
    (["--env", "Triage-v1", "-n", "3", "--seed", "1.5"], "the task seed must be a whole number >= 0"),
    (["--env", "no-such-domain", "-n", "3"], "unknown tool domain 'no-such-domain'"),
])
def test_tasks_generate_refuses_bad_arguments_in_one_line(argv, message, tmp_path, capsys):
    from clinical_gym.cli import main

    assert main(["tasks", "generate", *argv, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "x").exists()


def test_bench_plays_generated_tasks_of_the_run_seed(tmp_path):
    from clinical_gym.benchmarks.records import read_records
    from clinical_gym.benchmarks.runner import BenchConfig, run_bench

    run_bench(BenchConfig(envs="Triage-v1", agents="oracle,random", out=tmp_path, tasks="generated:6", seed=2,
                          split=None, progress=False))
    records = read_records(tmp_path)
    assert {r.case_id for r in records} == {t.id for t in generated("Triage-v1", 6, 2).tasks}
    oracle = [r.reward for r in records if r.agent == "oracle"]
    assert len(oracle) == 6 and min(oracle) == pytest.approx(1.0)
    assert max(r.reward for r in records if r.agent == "random") < 0.9
