"""Experience injection: the exact Doctor-R1 format, the token budget, and injection into real ClinicalInquiry-v1
episodes through the wrapper (once per episode, every turn, system prompt) and the collector hook, with recording."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.experience import (BM25Index, Experience, ExperienceRecorder, ExperienceStore, ExperienceWrapper,
                                     InjectionConfig, Retriever, dialogue_state, fitting, inject, strip_injection,
                                     trajectory_experiences, with_experience)
from clinical_gym.rollout import EpisodeSpec, RolloutCollector, ScriptedPolicy

CASE = "dig-appendicitis-01"
QUESTIONS = ["<think>Where is it now?</think><answer>Question: Where is the pain now?</answer>",
             "<answer>Question: Have you had a fever?</answer>"]
DIAGNOSIS = "<answer>Diagnosis: acute appendicitis\nRecommendation: urgent surgical review</answer>"
CHEST = Experience(id=7, state="Patient: crushing chest pain for an hour.",
                   action="Question: Does it spread to your arm?", reward=0.9)
BELLY = Experience(id=9, state="Patient: belly pain.\nDoctor: Where is it?\nPatient: Lower right.",
                   action="Question: Any fever?", reward=1.0)


def words(text: str) -> int:
    return len(text.split())


def test_the_references_come_before_the_original_question():
    assert inject("Patient's description: sore throat.", [CHEST, BELLY], budget_tokens=1000) == (
        "Experience References:\n"
        "1. State: Patient: crushing chest pain for an hour.\n"
        "   Action: Question: Does it spread to your arm?\n"
        "2. State: Patient: belly pain.\n"
        "   Doctor: Where is it?\n"
        "   Patient: Lower right.\n"
        "   Action: Question: Any fever?\n"
        "\n"
        "Original Question:\n"
        "Patient's description: sore throat.")


def test_the_budget_caps_the_injected_text():
    def added(experiences):  # words the injection adds to a one-word prompt
        return words(inject("P", experiences, 1000, count_tokens=words)) - 1

    # headers 4 words; CHEST's reference 17, BELLY's 16 (first) or 16 (second: "2." replaces "1.")
    assert (added([CHEST]), added([BELLY]), added([CHEST, BELLY])) == (21, 20, 37)
    assert fitting([CHEST, BELLY], 37, count_tokens=words) == [CHEST, BELLY]
    assert fitting([CHEST, BELLY], 36, count_tokens=words) == [CHEST]
    assert fitting([CHEST, BELLY], 20, count_tokens=words) == [BELLY]  # one that does not fit is skipped
    assert inject("P", [CHEST, BELLY], 20, count_tokens=words) == inject("P", [BELLY], 1000)
    assert inject("P", [CHEST, BELLY], 19, count_tokens=words) == "P"
    assert InjectionConfig(prompt_tokens=1500).budget_tokens == 750  # half the prompt budget


def test_strip_injection_gives_back_the_prompt():
    prompt = "Patient's description: sore throat.\nTurn 1/10."
    assert strip_injection(inject(prompt, [CHEST, BELLY], 1000)) == prompt
    assert strip_injection(prompt) == prompt
    assert strip_injection("Experience References:\nno separator") == "Experience References:\nno separator"


def test_a_state_is_the_dialogue_without_reasoning_and_long_ones_keep_the_opening_and_the_latest():
    messages = [{"role": "system", "content": "You are a doctor."},
                {"role": "user", "content": "Patient's description: cough\nfor a week."},
                {"role": "assistant", "content": "<think>Infection?</think><answer>Question: Any fever?</answer>"},
                {"role": "user", "content": "Yes, since Tuesday."}]
    assert dialogue_state(messages) == ("Patient: Patient's description: cough for a week.\n"
                                        "Doctor: Question: Any fever?\nPatient: Yes, since Tuesday.")
    long = messages[:2] + [{"role": r, "content": f"{r} message number {i:02d}"}
                           for i in range(40) for r in ("assistant", "user")]
    state = dialogue_state(long, max_chars=200)
    lines = state.splitlines()
    assert len(state) <= 200 and lines[:2] == ["Patient: Patient's description: cough for a week.", "…"]
    assert lines[-1] == "Patient: user message number 39"
    assert lines[2:] == dialogue_state(long).splitlines()[-len(lines[2:]):]  # the newest messages, in order


def test_injection_settings_are_checked():
    with pytest.raises(ValueError, match="system prompt"):
        InjectionConfig(mode="turn", target="system_prompt")
    with pytest.raises(ValueError, match="mode"):
        InjectionConfig(mode="always")


# -- real episodes -------------------------------------------------------------------------------------------
def seeded_store(path) -> ExperienceStore:
    """Good and ordinary turns from other consultations (and one from this case, which must never be shown)."""
    store = ExperienceStore(path)
    ordinary = [Experience(state=f"Patient: Patient's description: {s}", action="Question: How long has it been?",
                           reward=0.7, case_id=f"other-{i}")
                for i, s in enumerate(["I have a headache.", "My knee hurts.", "I feel dizzy.", "I have a rash.",
                                       "My ear hurts.", "I keep coughing.", "My back hurts.", "I cannot sleep."])]
    good = [Experience(state="Patient: Patient's description: stomach ache since this morning and I threw up.",
                       action="Question: Where exactly is the pain?", reward=1.0, case_id="other-belly"),
            Experience(state="Patient: Patient's description: tummy pain that started near my navel.",
                       action="Question: Has the pain moved anywhere?", reward=1.0, case_id="other-navel"),
            Experience(state="Patient: Patient's description: I've had a bad pain in my belly since yesterday.",
                       action="Diagnosis: acute appendicitis", reward=1.0, case_id=CASE)]
    store.add(ordinary + good)
    return store


def bm25(store: ExperienceStore) -> Retriever:
    """A retriever over ``store`` with the BM25 index (the MiniLM path is exercised by the first episode test)."""
    return Retriever(store, BM25Index(store))


def make_env(**kwargs):
    return gym.make("ClinicalInquiry-v1", reward="doctor_r1", **kwargs)


def play(env, replies=(*QUESTIONS, DIAGNOSIS)):
    obs, info = env.reset(seed=0, options={"case_id": CASE})
    steps = [(obs, info)]
    for reply in replies:
        obs, reward, terminated, truncated, info = env.step(reply)
        steps.append((obs, info))
    assert terminated
    return steps


def test_once_per_episode_injection_into_the_observation(tmp_path):
    store = seeded_store(tmp_path / "e.sqlite")
    plain = play(make_env())
    env = ExperienceWrapper(make_env(), store)
    steps = play(env)
    (opening, info), later = steps[0], steps[1:]
    assert opening.startswith("Experience References:\n1. State: ") and strip_injection(opening) == plain[0][0]
    shown = store.get(info["experience_ids"])
    assert len(shown) == 2 and {e.case_id for e in shown} == {"other-belly", "other-navel"}  # never its own case
    assert all(e.action in opening for e in shown)
    assert [obs for obs, _ in later] == [obs for obs, _ in plain[1:]]  # retrieval happened once
    assert env.unwrapped.messages[1]["content"] == plain[0][0]  # the environment never sees the references


def test_every_turn_injection_and_the_system_prompt_target(tmp_path):
    store = seeded_store(tmp_path / "e.sqlite")
    plain = play(make_env())
    steps = play(ExperienceWrapper(make_env(), bm25(store), InjectionConfig(mode="turn")))
    for (obs, info), (plain_obs, _) in zip(steps[:-1], plain[:-1]):
        assert obs.startswith("Experience References:") and strip_injection(obs) == plain_obs
        assert info["experience_ids"]
    assert steps[-1][0] == plain[-1][0]  # nothing is injected once the episode is over

    env = ExperienceWrapper(make_env(), bm25(store), InjectionConfig(target="system_prompt"))
    obs, info = env.reset(seed=0, options={"case_id": CASE})
    assert obs == plain[0][0]
    assert info["system_prompt"].startswith("Experience References:")
    assert strip_injection(info["system_prompt"]) == plain[0][1]["system_prompt"]


def test_budget_too_small_leaves_the_observation_alone(tmp_path):
    store = seeded_store(tmp_path / "e.sqlite")
    env = ExperienceWrapper(make_env(), bm25(store), InjectionConfig(prompt_tokens=20))
    obs, info = env.reset(seed=0, options={"case_id": CASE})
    assert not obs.startswith("Experience References:") and info["experience_ids"] == []


def test_the_wrapped_environment_passes_the_checker(tmp_path):
    store = seeded_store(tmp_path / "e.sqlite")
    env = ExperienceWrapper(make_env().unwrapped, bm25(store), InjectionConfig(mode="turn"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=".*different from the unwrapped")  # said of every wrapper
        check_env(env, skip_render_check=True)


def test_recording_stores_the_good_turns_of_the_episode(tmp_path):
    store = ExperienceStore(tmp_path / "e.sqlite")
    env = ExperienceWrapper(make_env(), store, InjectionConfig(mode="turn", record=True))
    steps = play(env)
    assert len(store) == 2  # the fever question (process reward 1.0) and the correct diagnosis (outcome 1.0)
    fever, diagnosis = store.get([c.id for c in store.changes(0)])
    assert (fever.action, fever.turn, fever.case_id, fever.reward) == ("Question: Have you had a fever?", 2, CASE, 1.0)
    opening, first_reply = (" ".join(strip_injection(obs).split()) for obs, _ in steps[:2])
    assert fever.state == f"Patient: {opening}\nDoctor: Question: Where is the pain now?\nPatient: {first_reply}"
    assert diagnosis.action.startswith("Diagnosis: acute appendicitis") and diagnosis.turn == 3
    assert "Experience References" not in diagnosis.state


def fixed_doctor(messages) -> str:
    """The next scripted reply, by the number of replies so far (injected text does not change it)."""
    return [*QUESTIONS, DIAGNOSIS][sum(m["role"] == "assistant" for m in messages)]


def test_collector_hook_injects_and_the_recorder_stores_clean_turns(tmp_path):
    store = seeded_store(tmp_path / "e.sqlite")
    specs = [EpisodeSpec(seed=0, options={"case_id": CASE}, group=0)] * 2  # a group: same case, same patient
    plain = RolloutCollector(ScriptedPolicy(fixed_doctor), make_env, num_envs=2).collect(specs)
    injected = RolloutCollector(ScriptedPolicy(fixed_doctor),
                                with_experience(make_env, bm25(store), InjectionConfig(mode="turn")),
                                num_envs=2).collect(specs)
    for trajectory in injected:
        users = [m["content"] for m in trajectory.messages if m["role"] == "user"]
        assert all(u.startswith("Experience References:") for u in users[:-1])
    assert [[(e.state, e.action, e.reward) for e in trajectory_experiences(t)] for t in injected] == \
        [[(e.state, e.action, e.reward) for e in trajectory_experiences(t)] for t in plain]

    recorded = ExperienceStore(tmp_path / "recorded.sqlite")
    assert ExperienceRecorder(recorded)(injected) == 2  # the second episode repeats the first: duplicates merge
    fever = recorded.get([c.id for c in recorded.changes(0)])[0]
    messages = injected[0].messages
    assert fever.state == dialogue_state([{"role": m["role"], "content": strip_injection(m["content"])}
                                          for m in messages[1:4]])


def test_the_environment_option_injects_and_logs_what_the_agent_saw(tmp_path):
    store = seeded_store(tmp_path / "e.sqlite")
    plain = play(make_env())
    steps = play(make_env(experience=bm25(store), experience_config={"mode": "turn"}))
    opening, info = steps[0]
    assert opening.startswith("Experience References:\n1. State: ") and strip_injection(opening) == plain[0][0]
    assert {e.case_id for e in store.get(info["experience_ids"])} <= {"other-belly", "other-navel"}
    middle, middle_info = steps[1]
    assert "Original Question:" in middle and strip_injection(middle) == plain[1][0]
    env = make_env(experience=bm25(store))
    obs, _ = env.reset(seed=0, options={"case_id": CASE})
    assert env.unwrapped.messages[1]["content"] == obs  # the log holds what the agent saw


def test_the_recorder_runs_as_an_on_collect_hook_after_every_collect_call(tmp_path):
    store = ExperienceStore(tmp_path / "hooked.sqlite")
    seen = []
    collector = RolloutCollector(ScriptedPolicy(fixed_doctor), make_env, num_envs=2,
                                 on_collect=[ExperienceRecorder(store), seen.append])
    first = collector.collect([EpisodeSpec(seed=0, options={"case_id": CASE})])
    after_first = len(store)
    assert seen == [first] and after_first == sum(
        1 for e in trajectory_experiences(first[0]) if e.reward >= store.threshold)
    assert after_first > 0  # the scripted doctor's diagnosis of this case is rewarded
    collector.collect([EpisodeSpec(seed=1, options={"case_id": CASE})])
    assert len(seen) == 2 and len(store) >= after_first  # each call is stored as one more batch
