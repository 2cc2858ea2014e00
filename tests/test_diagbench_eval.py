"""DiagBench evaluation in DiagnosticWorkup-v1 and the bench: rubrics kept from DiagGym-format rows, the weighted
rubric score (rule stand-in and LLM judge), the single-turn protocol and its hit ratio, unrecognised orders in
precision. The rows below are written here in DiagBench's format."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401
from clinical_gym.benchmarks.metrics import episode_metrics, task_of
from clinical_gym.benchmarks.records import read_records
from clinical_gym.benchmarks.runner import BenchConfig, run_bench
from clinical_gym.cases import load_cases
from clinical_gym.llm import OpenAICompatClient
from clinical_gym.rewards.rubric import RubricVerdict, parse_yes_no, weighted_rubric_score
from fake_openai import serve

CBC = ("White Blood Cells: Value: 15.2; Numeric Value: 15.2; Units: K/uL; Reference Range: 4.0 - 11.0; Flag: abnormal\n"
       "Neutrophils: Value: 84.0; Numeric Value: 84.0; Units: %; Reference Range: 34.0 - 71.0; Flag: abnormal")
ROWS = {
    "rb-1": {"profile": {"sex": "F", "age": 29, "chief_complaint": "Right lower quadrant pain",
                         "hpi": "Pain started around the navel this morning and moved to the right lower abdomen. "
                                "She feels sick and has no appetite.", "pmh": "None.", "allergies": "None."},
             "exam_chain": [{"exam_name": "Urine hCG", "exam_results": "Negative"},
                            {"exam_name": "Complete Blood Count", "exam_results": CBC},
                            {"exam_name": "CT abdomen and pelvis with contrast",
                             "exam_results": "Inflamed, dilated appendix with periappendiceal stranding."}],
             "final_diagnosis": "Acute appendicitis",
             "rubrics": [{"criterion": "Orders a pregnancy test before imaging in a woman of childbearing age",
                          "points": 8},
                         {"criterion": "Obtains cross-sectional imaging to confirm appendicitis", "points": 9},
                         {"criterion": "Measures TSH and free T4", "points": 2},
                         {"criterion": "Requests surgical consultation", "points": 7}]},
    "rb-2": {"profile": {"sex": "M", "age": 58, "chief_complaint": "Crushing chest pain",
                         "hpi": "One hour of central chest pressure spreading to the left arm, with sweating."},
             "exam_chain": [{"exam_name": "ECG", "exam_results": "ST elevation in II, III and aVF."},
                            {"exam_name": "Troponin T", "exam_results": "Troponin T: Value: 0.9; Numeric Value: 0.9; "
                             "Units: ng/mL; Reference Range: 0.0 - 0.01; Flag: abnormal"}],
             "final_diagnosis": "Inferior ST-elevation myocardial infarction",
             "rubrics": [{"criterion": "Checks cardiac troponin", "points": 6},
                         {"criterion": "Gives aspirin", "points": 5}]},
}


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    path = tmp_path_factory.mktemp("diagbench") / "rows.json"
    path.write_text(json.dumps(ROWS), encoding="utf-8")
    return load_cases(str(path))


def order(exam: str) -> str:
    return f"<answer>Test: {exam}</answer>"


def diagnose(name: str) -> str:
    return f"<answer>Diagnosis: {name}</answer>"


def play(env, case_id, actions, **reset):
    env.reset(seed=0, options={"case_id": case_id})
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
    return obs, reward, terminated, truncated, info


def test_rows_keep_their_rubrics_and_reference_workup(cases):
    first = next(c for c in cases if c.id == "rb-1")
    assert [(r.criterion[:6], r.points) for r in first.rubrics] == [("Orders", 8), ("Obtain", 9), ("Measur", 2),
                                                                    ("Reques", 7)]
    assert first.key_exams == ("Urine hCG", "Complete Blood Count", "CT abdomen and pelvis with contrast")


def test_rule_stand_in_scores_the_criteria_it_can_settle(cases):
    env = gym.make("DiagnosticWorkup-v1", cases=cases)
    *_, info = play(env, "rb-1", [order("Urine hCG"), order("CT abdomen and pelvis with contrast"),
                                  diagnose("Acute appendicitis")])
    out = info["outcome"]
    methods = [(v["met"], v["method"]) for v in out["rubric_verdicts"]]
    # pregnancy test before imaging: met; CT is cross-sectional imaging: met; TSH/T4 never ordered: unmet;
    # a surgical consultation is not something the rules can see in a workup: unjudged
    assert methods == [(True, "rule"), (True, "rule"), (False, "rule"), (None, "ungraded")]
    assert out["rubric_score"] == pytest.approx((8 + 9) / (8 + 9 + 2))
    assert out["rubric_coverage"] == pytest.approx(19 / 26) and out["rubric_judged"] == 3
    assert info["reward_components"] == {"diagnosis": 1.0, "exams": pytest.approx(0.5 * 0.8), "turn": 0.1}

    *_, info = play(env, "rb-1", [order("CT abdomen and pelvis with contrast"), order("Urine hCG"),
                                  diagnose("Acute appendicitis")])
    assert info["outcome"]["rubric_verdicts"][0]["met"] is False  # the pregnancy test came after the imaging


def test_rubrics_can_be_switched_off_and_cases_without_rubrics_report_none(cases):
    env = gym.make("DiagnosticWorkup-v1", cases=cases, rubrics=False)
    *_, info = play(env, "rb-2", [diagnose("STEMI")])
    assert "rubric_score" not in info["outcome"]
    env = gym.make("DiagnosticWorkup-v1")
    env.reset(seed=0)
    *_, info = env.step(diagnose("flu"))
    assert "rubric_score" not in info["outcome"]


def test_llm_judge_judges_every_criterion_with_the_conversation(cases):
    def reply(path, body):
        prompt = body["messages"][-1]["content"]
        if "Criterion:" in prompt:
            return "<think>checked</think> Yes" if "troponin" in prompt.split("Criterion:")[1].lower() else "No"
        if "Examination A:" in prompt:
            return "no"  # the exam-matching judge
        return "<answer>5</answer>"  # the diagnosis judge

    with serve(default=reply) as url:
        judge = OpenAICompatClient(base_url=url, model="judge", timeout=2, max_retries=0)
        env = gym.make("DiagnosticWorkup-v1", cases=cases, judge=judge)
        *_, info = play(env, "rb-2", [order("Troponin T"), diagnose("Inferior STEMI")])
        rubric_prompts = [r.body["messages"][-1]["content"] for r in url.requests
                          if "Criterion:" in r.body["messages"][-1]["content"]]
    out = info["outcome"]
    assert [(v["met"], v["method"]) for v in out["rubric_verdicts"]] == [(True, "judge"), (False, "judge")]
    assert out["rubric_score"] == pytest.approx(6 / 11) and out["rubric_coverage"] == 1.0
    assert len(rubric_prompts) == 2 and all("Test: Troponin T" in p and "Diagnosis: Inferior STEMI" in p
                                            for p in rubric_prompts)


def test_a_failing_rubric_judge_truncates_the_episode(cases):
    with serve(default=lambda path, body: "maybe") as url:
        judge = OpenAICompatClient(base_url=url, model="judge", timeout=2, max_retries=0)
        env = gym.make("DiagnosticWorkup-v1", cases=cases, judge=judge)
        env.reset(seed=0, options={"case_id": "rb-2"})
        _, reward, terminated, truncated, info = env.step(diagnose("Inferior STEMI"))
    assert truncated and not terminated and reward == 0.0 and "outcome" not in info and info["error"]


def test_weighted_rubric_score_follows_diagbench_and_healthbench():
    verdicts = [RubricVerdict("a", 6, True, "rule"), RubricVerdict("b", 4, False, "rule"),
                RubricVerdict("c", 5, None, "ungraded"), RubricVerdict("d", -3, True, "rule")]
    assert weighted_rubric_score(verdicts[:3]) == pytest.approx(0.6)  # unjudged criteria are out of both sums
    assert weighted_rubric_score(verdicts) == pytest.approx(0.3)  # a met penalty subtracts
    assert weighted_rubric_score([RubricVerdict("x", 4, None, "ungraded")]) is None
    assert weighted_rubric_score([RubricVerdict("x", -2, True, "rule")]) is None
    assert parse_yes_no("<think>no idea, yes maybe</think>\nNo.") is False and parse_yes_no("Yes") is True
    with pytest.raises(ValueError):
        parse_yes_no("perhaps")


def test_unrecognised_orders_count_against_precision():
    env = gym.make("DiagnosticWorkup-v1")
    *_, info = play(env, "dig-appendicitis-01", [order("Complete Blood Count"), order("Lipase"),
                                                 order("quantum flux scan"), diagnose("Acute appendicitis")])
    out = info["outcome"]
    assert out["exams_unrecognised"] == ["quantum flux scan"]
    assert out["exam_precision"] == pytest.approx(1 / 3) and out["exam_recall"] == pytest.approx(1 / 2)
    *_, info = play(env, "dig-appendicitis-01", [order("quantum flux scan"), order("Quantum  flux scan"),
                                                 diagnose("Acute appendicitis")])
    assert info["outcome"]["exams_unrecognised"] == ["quantum flux scan"]  # the same name once


def test_single_turn_items_score_one_reply_against_the_exams_still_to_come(cases):
    env = gym.make("DiagnosticWorkup-v1", cases=cases, protocol="single_turn")
    assert env.unwrapped.episode_ids == ["rb-1@0", "rb-1@1", "rb-1@2", "rb-2@0", "rb-2@1", "rb-1@dx", "rb-2@dx"]
    obs, info = env.reset(seed=0, options={"case_id": "rb-1@2"})
    assert "Urine hCG:\nNegative" in obs and "White Blood Cells" in obs and "appendix" not in obs.lower()
    assert obs.endswith("Next step you should query examination.") and info["single_turn_step"] == "2"
    _, reward, terminated, _, info = env.step(order("CT abdomen and pelvis with contrast"))
    assert terminated and reward == 1.0 and info["outcome"]["hit"] == 1.0 and info["outcome"]["kind"] == "exam"
    env.reset(seed=0, options={"case_id": "rb-1@2"})
    _, reward, terminated, _, info = env.step(order("Urine hCG"))  # already done: not a hit
    assert terminated and reward == 0.0 and info["outcome"]["hit"] == 0.0
    env.reset(seed=0, options={"case_id": "rb-1@0"})
    assert env.step(diagnose("Acute appendicitis"))[4]["outcome"]["hit"] == 0.0  # an exam was asked for
    obs, _ = env.reset(seed=0, options={"case_id": "rb-1@dx"})
    assert obs.endswith("Next step you should make final diagnosis.") and "Inflamed, dilated appendix" in obs
    _, reward, terminated, _, info = env.step(diagnose("Appendicitis, acute"))
    assert terminated and reward == 1.0 and info["outcome"]["accuracy"] == 1.0
    env.reset(seed=0, options={"case_id": "rb-1@dx"})
    assert env.step("")[4]["outcome"]["accuracy"] == 0.0  # an unusable reply scores 0 and ends the item
    obs, info = env.reset(seed=3)  # a random item
    assert info["single_turn_step"] in ("0", "1", "2", "dx")
    with pytest.raises(ValueError, match="single-turn steps"):
        env.reset(options={"case_id": "rb-2@7"})
    with pytest.raises(ValueError, match="protocol"):
        gym.make("DiagnosticWorkup-v1", protocol="multi")


def test_bench_reports_rubric_score_and_single_turn_hit_ratio(cases, tmp_path):
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(ROWS), encoding="utf-8")
    for protocol in ("end_to_end", "single_turn"):
        out = tmp_path / protocol
        run_bench(BenchConfig(envs="DiagnosticWorkup-v1", agents="oracle", out=out, cases=str(path), split=None,
                              env_kwargs={"protocol": protocol}, progress=False))
        records = read_records(out)
        metrics = [episode_metrics(r) for r in records]
        summary = json.loads((out / "summary.json").read_text())
        text = json.dumps(summary)
        if protocol == "end_to_end":
            assert len(records) == 2 and all(m["single_turn_hit"] is None for m in metrics)
            # the oracle orders every key exam, but not TSH and free T4 (rb-1)
            assert sorted(m["rubric_score"] for m in metrics) == [pytest.approx(17 / 19), 1.0]
            assert "rubric_score" in text
        else:
            assert sorted(r.case_id for r in records) == sorted(["rb-1@0", "rb-1@1", "rb-1@2", "rb-2@0", "rb-2@1",
                                                                 "rb-1@dx", "rb-2@dx"])
            hits = [m["single_turn_hit"] for m in metrics if m["single_turn_hit"] is not None]
            accuracy = [m["accuracy"] for m in metrics if m["accuracy"] is not None]
            assert hits == [1.0] * 5 and accuracy == [1.0] * 2 and all(m["exam_f1"] is None for m in metrics)
            assert {task_of(r) for r in records} == {"rb-1", "rb-2"}  # intervals resample cases, not items
            assert "single_turn_hit" in text
