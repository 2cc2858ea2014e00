"""Paper recipes (issue 26): each bundled recipe loads and builds a valid trainer config and environment, --recipe
and --print-config on train and bench resolve defaults < recipe < --config < flags, roles fill their environment
argument, a copied and edited recipe file works, and docs/papers.md is exactly what the recipes generate."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

import clinical_gym.cli
from clinical_gym.cli.train import config_class
from clinical_gym.recipes import RECIPES, load_recipe, parse_recipe, resolved, resolved_value
from clinical_gym.recipes.page import papers_page, recipe_section

ROOT = Path(__file__).resolve().parents[1]


def run_cli(argv, capsys):
    code = clinical_gym.cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def printed_yaml(text: str) -> dict:
    return yaml.safe_load(text)


@pytest.mark.parametrize("name", RECIPES)
def test_every_recipe_builds_its_trainer_configs_and_environments(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the Doctor-R1 recipe's experience store is a relative path
    recipe = load_recipe(name)
    values = resolved(recipe)
    for algorithm in recipe.train:
        settings = recipe.train_settings(algorithm)
        config_class(algorithm)(**{"model": "m", **settings})
        gym.make(recipe.env, **settings.get("env_kwargs", {})).close()
    gym.make(recipe.env, **recipe.bench_settings().get("env_kwargs", {})).close()
    for row in recipe.settings:
        if row.ours:
            resolved_value(values, row.ours)  # every row points at a real setting
    assert {r.name for r in recipe.roles} and all(r.stand_in for r in recipe.roles)


def test_docs_papers_md_is_generated_from_the_recipes():
    assert (ROOT / "docs" / "papers.md").read_text(encoding="utf-8") == papers_page(), \
        "docs/papers.md and the recipes disagree: clinical-gym recipes docs --out docs/papers.md"


def test_a_changed_recipe_value_changes_its_row_and_the_match():
    data = yaml.safe_load((ROOT / "clinical_gym" / "recipes" / "doctoragent-rl.yaml").read_text())
    before = recipe_section(parse_recipe(data))
    data["train"]["grpo"]["learning_rate"] = 3e-6
    after = recipe_section(parse_recipe(data))
    row = next(line for line in after.splitlines() if line.startswith("| Learning rate"))
    assert before != after and "| 3e-06 (`train.grpo.learning_rate`) | no |" in row


def test_train_print_config_resolves_the_recipe_then_flags(capsys, tmp_path):
    code, out, _ = run_cli(["train", "grpo", "--recipe", "doctoragent-rl", "--print-config"], capsys)
    settings = printed_yaml(out)
    assert code == 0 and "# recipe: doctoragent-rl" in out and "stand-in: the rule-based patient" in out
    assert (settings["entropy_coef"], settings["loss_aggregation"], settings["temperature"]) == \
        (0.001, "sequence-mean", 0.7)
    assert (settings["dynamic_sampling"], settings["num_minibatches"], settings["group_size"]) == (False, 1, 8)
    assert settings["env_kwargs"] == {"reward": "doctoragent_rl", "turn_budget": "dynamic",
                                      "patient_prompt": "doctoragent_rl"}
    assert settings["epsilon_high"] == 0.28 and settings["model"] == ""  # untouched defaults are printed too

    config = tmp_path / "config.yaml"
    config.write_text(out)
    code, again, _ = run_cli(["train", "grpo", "--config", str(config), "--print-config"], capsys)
    assert printed_yaml(again) == settings  # the printout is a --config file

    code, out, _ = run_cli(["train", "grpo", "--recipe", "doctoragent-rl", "--config", str(config), "--temperature",
                            "1.0", "--env-kwargs", '{"turn_budget": 4}', "--role", "patient=openai:qwen",
                            "--print-config"], capsys)
    settings = printed_yaml(out)
    assert settings["temperature"] == 1.0 and settings["env_kwargs"] == {
        "reward": "doctoragent_rl", "turn_budget": 4, "patient_prompt": "doctoragent_rl", "patient": "openai:qwen"}
    assert "# role patient (env_kwargs.patient): openai:qwen" in out


def test_ttopd_recipe_fixes_the_inherited_settings(capsys):
    code, out, _ = run_cli(["train", "ttopd", "--recipe", "healthcare-gym-ttopd", "--print-config"], capsys)
    settings = printed_yaml(out)
    assert code == 0 and settings["num_minibatches"] == 1 and settings["max_episode_tokens"] == 12288
    assert (settings["lambda_distill"], settings["ema_alpha"], settings["beta"], settings["lora_r"]) == \
        (4.0, 0.995, 0.01, 64)
    code, out, _ = run_cli(["train", "grpo", "--recipe", "healthcare-gym-ttopd", "--print-config"], capsys)
    assert code == 0 and printed_yaml(out)["cosine_reward"] is False  # the paper's GRPO baseline


def test_bad_recipe_use_is_one_line_and_exit_2(capsys, tmp_path):
    for argv, message in ((["train", "ppo", "--recipe", "diaggym"], "no settings for 'train ppo'"),
                          (["train", "grpo", "--recipe", "nope"], "no recipe 'nope'"),
                          (["train", "grpo", "--recipe", "diaggym", "--role", "patient=openai:x"], "no role 'patient'"),
                          (["train", "grpo", "--role", "judge=openai:x"], "--role needs --recipe"),
                          (["bench", "--recipe", "diaggym", "--role", "judge"], "NAME=SPEC")):
        code, _, err = run_cli(argv, capsys)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, (argv, err)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nenv: ClinicalInquiry-v1\ntrain: {grpo: {learning_rate: fast}}\n")
    code, _, err = run_cli(["train", "grpo", "--recipe", str(broken), "--print-config"], capsys)
    assert code == 2 and "learning_rate" in err


def test_a_copied_and_edited_recipe_file(capsys, tmp_path):
    code, text, _ = run_cli(["recipes", "show", "diaggym"], capsys)
    mine = tmp_path / "mine.yaml"
    mine.write_text(text.replace("group_size: 5", "group_size: 6"))
    code, out, _ = run_cli(["train", "grpo", "--recipe", str(mine), "--print-config"], capsys)
    settings = printed_yaml(out)
    assert code == 0 and settings["group_size"] == 6 and settings["groups_per_step"] == 512
    assert settings["env_kwargs"]["reward_config"] == {"diagnosis_weight": 1.0, "exam_weight": 0.5,
                                                       "turn_bonus": 0.1, "max_turns": 12}


def test_bench_print_config_and_a_recipe_run(capsys, tmp_path):
    code, out, _ = run_cli(["bench", "--recipe", "doctoragent-rl", "--role", "evaluator=openai:judge-32b",
                            "--temperature", "0.2", "--print-config"], capsys)
    settings = printed_yaml(out)
    assert code == 0 and settings["envs"] == "ClinicalInquiry-v1" and settings["judge"] == "judge-32b"
    assert settings["env_kwargs"]["force_final_diagnosis"] is True and settings["env_kwargs"]["turn_budget"] == 10
    assert settings["temperature"] == 0.2 and settings["max_turn_tokens"] == 256

    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps({"r1": {
        "profile": {"sex": "M", "age": 40, "chief_complaint": "Crushing chest pain",
                    "hpi": "Central chest pressure for an hour spreading to the left arm."},
        "exam_chain": [{"exam_name": "ECG", "exam_results": "ST elevation in II, III and aVF."}],
        "final_diagnosis": "Inferior myocardial infarction",
        "rubrics": [{"criterion": "Obtains an ECG", "points": 9}]}}))
    out_dir = tmp_path / "run"
    code, out, err = run_cli(["bench", "--recipe", "diaggym", "--agent", "oracle", "--cases", str(rows), "--out",
                              str(out_dir), "--no-progress"], capsys)
    assert "recipe diaggym: world_model: rule stand-in (the record-backed world model" in err
    run = json.loads((out_dir / "run.json").read_text())
    assert code == 0 and run["env_kwargs"] == {"protocol": "end_to_end", "rubrics": True,
                                               "reward_config": {"max_turns": 12}}
    record = json.loads((out_dir / "results.jsonl").read_text().splitlines()[0])
    assert record["outcome"]["rubric_score"] == 1.0


def test_recipes_list_and_docs_commands(capsys, tmp_path):
    code, out, _ = run_cli(["recipes", "list"], capsys)
    assert code == 0 and all(name in out for name in RECIPES)
    page = tmp_path / "papers.md"
    code, _, _ = run_cli(["recipes", "docs", "--out", str(page)], capsys)
    assert code == 0 and page.read_text() == papers_page()
