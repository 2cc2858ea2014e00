"""Expert data for the SFT cold start: collection from agents, the min-reward filter, templated rationales (never a
fact the case does not hold), MTMedDialog dialogues played in the environment, JSONL and Hugging Face round trips,
and ``clinical-gym data expert``. Every stored reply is replayed in a fresh environment to check it parses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gymnasium as gym
import pytest

import clinical_gym.cli
from clinical_gym.benchmarks.agents import _rule_based
from clinical_gym.benchmarks.agents.oracle import oracle_agent
from clinical_gym.cases import load_cases
from clinical_gym.cases.formats.mtmeddialog import MTMedDialogRow
from clinical_gym.cases.topic_match import find_topics
from clinical_gym.cases.topics import SYMPTOMS
from clinical_gym.parsing import parse_doctor_action
from clinical_gym.rollout import EpisodeSpec
from clinical_gym.domains.inquiry.prompts import DOCTOR_SYSTEM_PROMPT
from clinical_gym.trainers.sft.data import (
    CONVERSATIONS_FILE,
    DATASET_DIR,
    SUMMARY_FILE,
    ExpertExample,
    collect_examples,
    dialogue_examples,
    excerpt,
    load_examples,
    rejection,
    save_examples,
    shorten_recommendation,
)
from clinical_gym.trainers.sft.rationale import THINK, with_rationale

pytest.importorskip("datasets", reason="the Hugging Face dataset needs the [train] extra")

INQUIRY = "ClinicalInquiry-v1"
MTMED = Path(__file__).parent / "fixtures" / "case_formats" / "mtmeddialog.json"
CASES = load_cases("generated:common", "train", n=24, seed=0)
BUDGET = 4


def make_env() -> gym.Env:
    return gym.make(INQUIRY, cases=CASES, turn_budget=BUDGET)


def specs(n: int) -> list[EpisodeSpec]:
    return [EpisodeSpec(seed=100 + i, options={"case_id": CASES[i % len(CASES)].id}, group=i) for i in range(n)]


def oracle_examples(n: int = len(CASES), **kwargs):
    agent = oracle_agent("inquiry")
    return collect_examples(agent.policy, make_env, specs(n), env_id=INQUIRY, source="agent:oracle",
                            on_reset=agent.on_reset, **{"rationale": "template", **kwargs})


def checklist_examples(n: int = len(CASES), **kwargs):
    agent = _rule_based("inquiry")
    return collect_examples(agent.policy, make_env, specs(n), env_id=INQUIRY, source="agent:baseline", **kwargs)


def replay(example: ExpertExample, env: gym.Env, options: dict) -> None:
    """Play the stored replies in a fresh environment: each must parse, the environment must say what was stored,
    and the episode must end on the last reply with the stored reward."""
    obs, info = env.reset(seed=example.seed, options=options)
    messages = [m.model_dump() for m in example.messages]
    assert messages[0] == {"role": "system", "content": info["system_prompt"]}
    assert messages[1] == {"role": "user", "content": obs}
    total, actions = 0.0, example.actions
    for i, action in enumerate(actions):
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        assert rejection(info) is None, (action, info)
        if i + 1 < len(actions):
            assert messages[3 + 2 * i] == {"role": "user", "content": obs}
    assert terminated and total == pytest.approx(example.reward)


def test_agent_conversations_are_what_the_environment_logged_and_every_reply_parses():
    for examples, report in (oracle_examples(), checklist_examples()):
        assert report.kept == len(examples) == len(CASES) and not report.dropped
        for example in examples:
            assert example.env == INQUIRY and example.messages[-1].role == "assistant"
            assert all(THINK.search(action) for action in example.actions)  # reasoning in every reply
            replay(example, make_env(), {"case_id": example.case_id})


def test_oracle_replies_get_templated_reasoning_and_the_checklist_keeps_its_own():
    oracle, _ = oracle_examples(4)
    checklist, _ = checklist_examples(4)
    assert all("Ground truth" not in a for e in oracle for a in e.actions)
    assert all(a.startswith("<think>Review of systems:") for e in checklist for a in e.actions[:-1])
    assert all(e.result == "correct" and e.success for e in oracle)


# -- the rationale holds only facts of the case ---------------------------------------------------------------------
SENTENCE = re.compile(r"(?<=\.) (?=[A-Z])")
LIST_SENTENCE = re.compile(r"^(Reported|Denied|Differential|Typical of (.+?)): (.+)\.$")


def symptom_keys(names: str) -> list[str]:
    keys = [name.strip().replace(" ", "_") for name in names.split(", ")]
    assert all(k in SYMPTOMS for k in keys), names
    return keys


def check_rationale(example: ExpertExample, case) -> None:
    messages = [m.model_dump() for m in example.messages]
    facts = {s: f for f in case.history for s in f.symptoms}
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        think = THINK.search(message["content"]).group(1)
        heard = " ".join(m["content"] for m in messages[:index] if m["role"] == "user").lower()
        parsed = parse_doctor_action(message["content"])
        for sentence in SENTENCE.split(think):
            listed = LIST_SENTENCE.match(sentence)
            if listed and listed.group(1) in ("Reported", "Denied"):
                for key in symptom_keys(listed.group(3)):
                    present = listed.group(1) == "Reported"
                    fact = next(f for f in case.history if key in f.symptoms and f.present == present)
                    assert fact.text.lower().rstrip(".") in heard  # said by the patient before this reply
            elif listed and listed.group(1) == "Differential":
                assert set(listed.group(3).split(", ")) <= {*case.differential, case.diagnosis.name}
            elif listed:
                assert listed.group(2) == parsed.diagnosis
                assert all(facts[k].present for k in symptom_keys(listed.group(3)))
            elif sentence.startswith("Presenting complaint: "):
                assert sentence == f"Presenting complaint: {case.chief_complaint}."
            elif sentence.startswith("Next I ask about "):
                asked = find_topics(parsed.question)
                named = sentence.removeprefix("Next I ask about ").removesuffix(".").split(", ")
                assert {n.replace(" ", "_") for n in named} <= asked.explicit_symptoms | asked.question_types, named
            elif sentence.startswith("The most likely diagnosis is "):
                assert sentence == f"The most likely diagnosis is {parsed.diagnosis}."
            else:
                assert sentence == "Next I ask a focused question to narrow it down.", sentence


def test_rationale_never_mentions_a_fact_absent_from_the_case():
    by_id = {c.id: c for c in CASES}
    examples, _ = oracle_examples()
    for example in examples:
        check_rationale(example, by_id[example.case_id])
    assert any("Reported: " in a for e in examples for a in e.actions)
    assert any("Denied: " in a for e in examples for a in e.actions)
    assert any("Typical of " in a for e in examples for a in e.actions)


def test_rationale_modes_and_placement():
    env = make_env()
    env.reset(seed=0, options={"case_id": CASES[0].id})
    episode = env.unwrapped
    question = "<answer>Question: Have you had a fever?</answer>"
    own = "<think>my own reasoning</think><answer>Question: Have you had a fever?</answer>"
    templated = with_rationale(question, "inquiry", episode, episode.messages, "fill")
    assert templated.startswith("<think>") and templated.endswith(question)
    assert parse_doctor_action(templated).question == "Have you had a fever?"
    assert with_rationale(own, "inquiry", episode, episode.messages, "fill") == own
    replaced = with_rationale(own, "inquiry", episode, episode.messages, "template")
    assert "my own reasoning" not in replaced and replaced.count("<think>") == 1
    assert with_rationale(question, "inquiry", episode, episode.messages, "source") == question
    doctor_r1 = "<answer>Recommendation: influenza; rest, fluids and paracetamol</answer>"  # one field, Doctor-R1
    reasoned = with_rationale(doctor_r1, "inquiry", episode, episode.messages, "fill")
    assert reasoned.endswith(doctor_r1) and "I give my diagnosis and recommendation." in reasoned
    assert with_rationale(question, "workup", episode, episode.messages, "template") == question
    assert with_rationale("no format at all", "inquiry", episode, episode.messages, "template") == "no format at all"
    with pytest.raises(ValueError, match="rationale must be one of"):
        with_rationale(question, "inquiry", episode, episode.messages, "invent")


# -- filters and shaping --------------------------------------------------------------------------------------------
def test_min_reward_keeps_exactly_the_episodes_at_or_above_it():
    everything, _ = checklist_examples()
    threshold = 10.0
    kept, report = checklist_examples(min_reward=threshold)
    expected = [e for e in everything if e.reward >= threshold]
    assert 0 < len(kept) < len(everything)  # the checklist doctor is right about half the time
    assert [e.case_id for e in kept] == [e.case_id for e in expected]
    assert report.kept == len(kept) and report.dropped == {"below min reward": len(everything) - len(kept)}


def test_unfinished_and_rejected_episodes_are_dropped():
    from clinical_gym.rollout import RolloutLimits, ScriptedPolicy

    asks_twice = ScriptedPolicy(lambda m: "<answer>Question: Any fever? Any cough?</answer>")
    examples, report = collect_examples(asks_twice, make_env, specs(2), env_id=INQUIRY, source="test")
    assert not examples and report.dropped == {"rejected action (multiple questions)": 2}
    asks = ScriptedPolicy(lambda m: f"<answer>Question: Question number {len(m)}, any fever?</answer>")
    examples, report = collect_examples(asks, make_env, specs(2), env_id=INQUIRY, source="test",
                                        limits=RolloutLimits(max_turns=1))
    assert not examples and report.dropped == {"not finished": 2}


def test_recommendations_can_be_cut_to_an_excerpt_and_still_parse():
    text = ("Stop ibuprofen, start a proton pump inhibitor, test for Helicobacter pylori and treat it if present; "
            "seek urgent care for black stools.")
    assert excerpt(text, 6) == "Stop ibuprofen."
    assert excerpt(text, 9) == "Stop ibuprofen, start a proton pump inhibitor."
    assert excerpt("Rest and fluids.", 10) == "Rest and fluids."
    action = f"<think>x</think><answer>Diagnosis: Duodenal ulcer\nRecommendation: {text}</answer>"
    short = shorten_recommendation(action, 9)
    assert short.endswith("Recommendation: Stop ibuprofen, start a proton pump inhibitor.</answer>")
    assert parse_doctor_action(short).diagnosis == "Duodenal ulcer"
    assert shorten_recommendation("<answer>Question: Any fever?</answer>", 3).endswith("Any fever?</answer>")
    thinking = "<think>My recommendation: wait and see, then review.</think>"
    assert shorten_recommendation(thinking + action[16:], 9) == thinking + short[16:]
    examples, _ = oracle_examples(6, max_recommendation_words=12)
    for example in examples:
        final = parse_doctor_action(example.actions[-1])
        assert 1 <= len(final.recommendation.split()) <= 12 and final.diagnosis
        replay(example, make_env(), {"case_id": example.case_id})


# -- recorded dialogues -----------------------------------------------------------------------------------------------
def test_mtmeddialog_dialogues_are_played_in_the_environment_with_the_recorded_answers():
    rows = json.loads(MTMED.read_text())
    examples, report = dialogue_examples(MTMED)
    assert report.kept == len(examples) == 2 and report.dropped == {"not a usable MTMedDialog record": 2}
    for example, row in zip(examples, rows[:2], strict=True):
        record = MTMedDialogRow.model_validate(row)
        turns = [(t.doctor_question, t.patient_response) for t in record.dialogue]
        budget = len(turns) + 1
        messages = [m.model_dump() for m in example.messages]
        assert messages[0]["content"] == DOCTOR_SYSTEM_PROMPT.format(budget=budget, tests="")
        assert messages[1]["content"].startswith("Patient's description: ")
        assert example.source == "dialogues:mtmeddialog.json" and example.success
        for k, (question, answer) in enumerate(turns, 1):
            reply = parse_doctor_action(messages[2 * k]["content"])
            assert reply.kind == "question" and reply.question == question
            assert messages[2 * k + 1]["content"] == f"{answer}\nTurn {k}/{budget}."
        final = parse_doctor_action(example.actions[-1])
        assert final.diagnosis == record.diagnosis and final.recommendation == record.recommendation
        assert all(THINK.search(a) for a in example.actions)


def test_dialogue_turns_the_environment_rejects_drop_the_dialogue(tmp_path):
    rows = json.loads(MTMED.read_text())[:2]
    rows[1]["dialogue"][0]["doctor_question"] = "Are you short of breath? Do you have a fever?"
    path = tmp_path / "dialogues.json"
    path.write_text(json.dumps(rows))
    examples, report = dialogue_examples(path, min_reward=0.0)
    assert len(examples) == 1 and report.dropped == {"rejected action (multiple questions)": 1}
    with pytest.raises(ValueError, match="ClinicalInquiry-family"):
        dialogue_examples(path, env_id="DiagnosticWorkup-v1")


# -- storage ----------------------------------------------------------------------------------------------------------
def test_jsonl_and_hugging_face_dataset_round_trip(tmp_path):
    from datasets import load_from_disk

    examples, _ = oracle_examples(5)
    examples += dialogue_examples(MTMED)[0]
    out = save_examples(examples, tmp_path / "expert", {"agent": "oracle"})
    assert load_examples(out) == examples
    assert load_examples(out / DATASET_DIR) == examples
    assert load_examples(out / CONVERSATIONS_FILE) == examples
    dataset = load_from_disk(str(out / DATASET_DIR))
    assert dataset.num_rows == len(examples) and dataset[0]["messages"][0]["role"] == "system"  # TRL's chat format
    summary = json.loads((out / SUMMARY_FILE).read_text())
    assert summary["examples"] == len(examples) and summary["agent"] == "oracle"
    assert summary["envs"] == [INQUIRY] and summary["assistant_turns"] == sum(len(e.actions) for e in examples)


def test_bad_data_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [{"role": "user", "content": "hi"}], "env": "x", "source": "y", "reward": 0}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: not an expert conversation"):
        load_examples(bad)
    with pytest.raises(ValueError, match="holds no expert data"):
        load_examples(tmp_path)
    with pytest.raises(ValueError, match="no expert data at"):
        load_examples(tmp_path / "missing.jsonl")
    with pytest.raises(ValueError, match="no conversation to save"):
        save_examples([], tmp_path / "empty")
    with pytest.raises(ValueError, match="alternate"):
        ExpertExample(messages=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                                {"role": "assistant", "content": "c"}], env="x", source="y", reward=0.0)


# -- the command line -------------------------------------------------------------------------------------------------
def run_cli(*args: str) -> int:
    return clinical_gym.cli.main(["data", "expert", *args, "--no-progress"])


def test_data_expert_command(tmp_path, capsys):
    out = tmp_path / "expert"
    assert run_cli("--env", INQUIRY, "--agent", "oracle", "--episodes", "6", "--cases", "generated:common:30",
                   "--env-kwargs", '{"turn_budget": 3}', "--max-recommendation-words", "10", "--out", str(out)) == 0
    assert "kept 6, dropped 0" in capsys.readouterr().out
    examples = load_examples(out)
    assert len(examples) == 6 and all(len(e.actions) == 3 for e in examples)
    summary = json.loads((out / SUMMARY_FILE).read_text())
    assert summary["rationale"] == "template" and summary["split"] == "train"
    assert summary["max_recommendation_words"] == 10
    test_ids = {c.id for c in load_cases("generated:common", "test", n=30, seed=0)}
    assert not {e.case_id for e in examples} & test_ids  # expert data comes from the train split

    assert run_cli("--dialogues", str(MTMED), "--out", str(tmp_path / "dialogues")) == 0
    assert "kept 2, dropped 2" in capsys.readouterr().out
    workup = tmp_path / "workup"
    assert run_cli("--env", "DiagnosticWorkup-v1", "--agent", "baseline", "--episodes", "4", "--out", str(workup)) == 0
    assert all(e.env == "DiagnosticWorkup-v1" for e in load_examples(workup))


@pytest.mark.parametrize(("args", "message"), [
    (["--out", "x"], "give either --agent SPEC"),
    (["--agent", "oracle", "--dialogues", "f.json", "--out", "x"], "give either --agent SPEC"),
    (["--agent", "wizard", "--out", "x"], "bad agent spec"),
    (["--agent", "oracle", "--env", "Nope-v0", "--out", "x"], "Nope-v0"),
    (["--agent", "oracle", "--episodes", "0", "--out", "x"], "at least 1"),
    (["--agent", "test-orderer", "--out", "x"], "plays the workup family only"),
    (["--dialogues", "missing.json", "--out", "x"], "no dialogue file"),
    (["--agent", "oracle", "--min-reward", "99", "--episodes", "2", "--out", "{tmp}/y"], "no conversation passed"),
])
def test_data_expert_errors_are_one_line(args, message, tmp_path, capsys):
    assert run_cli(*[a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and err.startswith("clinical-gym: error:")
