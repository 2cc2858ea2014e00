"""The efficacy benchmark's fast pieces (benchmarks/efficacy.py, clinical_gym.benchmarks.learning): the command's
one-line errors, the paired start -> trained row of efficacy.json, the balanced expert episodes of the cold start,
and the brief tool prompt and short expert of the CPU presets. The training stages themselves run in
tests/test_clinical_learning.py."""

from __future__ import annotations

import collections
import json

import pytest

from clinical_gym.benchmarks import efficacy
from clinical_gym.benchmarks.learning import stages
from clinical_gym.benchmarks.learning.paired import paired_result, results_table, write_results
from clinical_gym.benchmarks.learning.presets import PRESETS, SMOKE
from clinical_gym.benchmarks.learning.setups import DISTINCTIVE_CONDITIONS, brief_prompt, short_expert_reply
from clinical_gym.benchmarks.records import EpisodeRecord


def record(agent: str, episode: int, correct: bool) -> EpisodeRecord:
    case = f"case-{episode}"
    return EpisodeRecord(env="ClinicalInquiry-v1", family="inquiry", agent=agent, episode=episode, seed=episode,
                         case_id=case, status="ok", reward=5.0 if correct else -2.0,
                         outcome={"result": "correct" if correct else "wrong", "success": correct})


@pytest.mark.parametrize("argv, message", [
    (["--envs", "Triage-v1"], "the smoke preset has no Triage-v1; it has ClinicalInquiry-v1"),
    (["--algorithms", "dpo"], "unknown algorithm dpo; choose from grpo, ppo, ttopd"),
    (["--seeds", ","], "give at least one seed"),
    (["--threads", "0"], "--threads must be at least 1, got 0"),
    (["--jobs", "0"], "--jobs must be at least 1, got 0"),
])
def test_bad_choices_fail_in_one_line_before_anything_runs(tmp_path, capsys, argv, message):
    assert efficacy.main(["--out", str(tmp_path / "out"), *argv]) == 2
    err = capsys.readouterr().err
    assert err == f"efficacy: error: {message}\n"
    assert not (tmp_path / "out").exists()


def test_a_paired_row_holds_start_trained_and_a_case_clustered_interval(tmp_path):
    start = [record("sft", k, correct=k < 8) for k in range(24)]        # 8 of 24 right
    trained = [record("grpo", k, correct=k < 20) for k in range(24)]    # 12 more right, none lost
    row = paired_result("ClinicalInquiry-v1", "grpo", 0, start, trained)
    assert (row["metric"], row["episodes"], row["cases"]) == ("accuracy", 24, 24)
    assert row["start"] == pytest.approx(8 / 24) and row["trained"] == pytest.approx(20 / 24)
    assert row["delta"] == pytest.approx(0.5)
    assert 0 < row["delta_ci_low"] < 0.5 < row["delta_ci_high"] <= 1 and row["improved"]
    same = paired_result("ClinicalInquiry-v1", "ppo", 0, start, [record("ppo", k, k < 8) for k in range(24)])
    assert same["delta"] == 0 and not same["improved"]
    path = write_results(tmp_path, [row, same], {"preset": "test"})
    assert [r["algorithm"] for r in json.loads(path.read_text())["results"]] == ["grpo", "ppo"]
    table = results_table([row, same]).splitlines()
    assert "+0.50" in table[2] and "✓" in table[2] and "✓" not in table[3]


def test_records_sharing_no_episode_are_refused():
    with pytest.raises(ValueError, match="shares no scored episode"):
        paired_result("ClinicalInquiry-v1", "grpo", 0, [record("sft", 0, True)], [record("grpo", 1, True)])


def test_the_cold_start_sees_every_condition_in_turn(tmp_path):
    settings = SMOKE.envs[0]
    run = stages.EnvRun(settings, tmp_path / settings.env_id)
    plan = run.plan("train", 8, stages.DATA_SEED)
    cases = stages.balanced_cases(run, plan)
    diagnosis = {json.loads(line)["id"]: json.loads(line)["diagnosis"]["name"]
                 for line in run.case_file().read_text().splitlines()}
    assert len(cases) == len(set(cases)) == 8
    assert collections.Counter(diagnosis[c] for c in cases) == {c: 2 for c in DISTINCTIVE_CONDITIONS[:4]}
    held_out = {c for c in diagnosis if c not in set(plan.case_ids)}
    assert held_out and not held_out & set(cases)                      # only train-split patients


def test_brief_prompt_keeps_the_opening_the_expert_tools_and_how_to_act():
    prompt = ("You are a clinician.\n\nAnswer the question.\n\nThird paragraph.\n## Tools\n- get_question (id): the "
              "question\n- search_guidelines (q): search\n- submit_answer (answer): your answer\n## Rules\nbe kind\n"
              "## How to act\nCall one tool per reply.")
    brief = brief_prompt(prompt, ("get_question", "submit_answer"))
    assert brief == ("You are a clinician.\n\nAnswer the question.\n\n## Tools\n- get_question (id): the question\n"
                     "- submit_answer (answer): your answer\n\n## How to act\nCall one tool per reply.")


def test_short_expert_reads_the_question_then_submits_the_gold_answer():
    task = collections.namedtuple("Task", "id prompt answer")("t1", "Answer question Q0042 for the patient.", "C")
    assert "get_question" in short_expert_reply(task, 0) and "Q0042" in short_expert_reply(task, 0)
    assert "submit_answer" in short_expert_reply(task, 1) and '"C"' in short_expert_reply(task, 1)
    with pytest.raises(ValueError, match="names no question id"):
        short_expert_reply(task._replace(prompt="no id here"), 0)


def test_every_preset_trains_what_it_evaluates():
    for preset in PRESETS.values():
        assert preset.envs and preset.seeds
        for env in preset.envs:
            assert set(env.algorithms) <= {"grpo", "ppo", "ttopd"}
            assert env.train_cases > 0 and env.eval_episodes > 0 and env.sft.expert_episodes > 0


def test_jobs_are_bounded_by_the_cores_plus_one_and_the_work_and_share_the_cores():
    from clinical_gym.benchmarks.learning.workers import plan_jobs, threads_per_job

    assert plan_jobs(2, units=3, cores=2) == 2
    assert plan_jobs(8, units=3, cores=16) == 3      # never more processes than units that can run at once
    assert plan_jobs(3, units=5, cores=2) == 3       # more one-thread processes than cores: uneven units
    assert plan_jobs(8, units=9, cores=2) == 3       # but not more than one over the cores
    assert plan_jobs(2, units=0, cores=2) == 1
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        plan_jobs(0, units=3)
    assert threads_per_job(2, None, cores=2) == 1 and threads_per_job(2, None, cores=16) == 8
    assert threads_per_job(3, None, cores=2) == 1      # oversubscribed: one thread each
    assert threads_per_job(1, None, cores=16) is None  # one job: torch's own default, as before
    assert threads_per_job(2, 3, cores=2) == 3         # --threads wins


def test_two_jobs_run_every_stage_and_a_rerun_resumes_them_in_order(tmp_path):
    """The whole run_efficacy on a tiny random model: the cold start and two RL runs in two spawned processes, the
    rows in the preset's order, every held-out episode recorded per stage; a one-job rerun retrains nothing."""
    from dataclasses import replace

    from clinical_gym.benchmarks.learning.presets import INQUIRY, EnvSettings, RLSettings, SFTSettings
    from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer

    model = tmp_path / "tiny"
    tokenizer = tiny_tokenizer()
    tiny_llama(tokenizer).save_pretrained(model)
    tokenizer.save_pretrained(model)
    env = EnvSettings(INQUIRY, train_cases=4, eval_episodes=4, env_kwargs={"turn_budget": 1},
                      conditions=DISTINCTIVE_CONDITIONS[:2],
                      sft=SFTSettings(expert_episodes=2, epochs=1.0, micro_batch_size=2),
                      rl=RLSettings(steps=1, group_size=2, groups_per_step=1, max_turn_tokens=8,
                                    max_episode_tokens=2048, micro_batch_size=2))
    preset = replace(SMOKE, envs=(env,), model=str(model), dtype="float32", eval_batch_size=4, jobs=2)
    out = tmp_path / "out"
    rows = efficacy.run_efficacy(preset, out, algorithms=["ppo", "grpo"], seeds=[0])
    assert [(r["stage"], r["algorithm"]) for r in rows] == [("base -> sft", "sft"), ("sft -> rl", "grpo"),
                                                            ("sft -> rl", "ppo")]
    saved = json.loads((out / "efficacy.json").read_text())
    assert saved["results"] == rows and saved["settings"]["jobs"] == 2
    timings = saved["settings"]["timings"]
    assert {"ClinicalInquiry-v1: evaluate base", "ClinicalInquiry-v1: SFT", "ClinicalInquiry-v1: evaluate sft",
            "ClinicalInquiry-v1: train grpo-seed0", "ClinicalInquiry-v1: evaluate ppo-seed0"} <= set(timings)
    folder = out / "ClinicalInquiry-v1"
    counts = collections.Counter(r.agent for r in stages.read_records(folder / stages.EVAL_DIR))
    assert counts == {"base": 4, "sft": 4, "grpo-seed0": 4, "ppo-seed0": 4}
    for label in ("grpo-seed0", "ppo-seed0"):
        assert (folder / "rl" / label / "checkpoints" / "step-000001").is_dir()
    assert (folder / "curves.png").is_file() and (out / "report.md").is_file()

    assert all(r["train_wall_s"] > 0 for r in rows[1:])  # the runs' own step times, kept when resumed

    again = efficacy.run_efficacy(replace(preset, jobs=1), out, algorithms=["grpo", "ppo"], seeds=[0])
    assert again == rows
    retimed = json.loads((out / "efficacy.json").read_text())["settings"]
    assert retimed["jobs"] == 1 and retimed["timings"]["ClinicalInquiry-v1: train ppo-seed0"]["wall_s"] < 1


def test_jobs_writing_the_case_set_side_by_side_do_not_take_each_others_file(tmp_path, monkeypatch):
    """Two efficacy jobs that start together both find ``cases.jsonl`` missing and both write it. Here a second
    writer finishes its whole write between the first one's temporary file and its rename (the race that failed a
    two-job run with "No such file or directory: cases.tmp" when both used that one name): both succeed, the file
    holds the case set once, and no temporary file is left."""
    import os

    from clinical_gym.benchmarks.learning import setups

    args = (tmp_path, DISTINCTIVE_CONDITIONS[:2], 2, 2, 0)
    real_replace, raced = os.replace, []

    def replace_after_another_writer(src, dst):
        if not raced:
            raced.append(True)
            setups.write_case_set(*args)  # the other job, start to finish
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_after_another_writer)  # pathlib's replace calls it too
    path = setups.write_case_set(*args)
    assert raced and path == tmp_path / "cases.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and len({json.loads(line)["id"] for line in lines}) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases.jsonl"]
