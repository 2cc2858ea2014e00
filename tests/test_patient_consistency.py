"""The rule-based patient never contradicts what it already said, answers every topic of a compound question,
calls a question "already asked" only when it would tell nothing new, and answers unrecorded events plausibly."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.cases import library, load_cases, read_case_file
from clinical_gym.cases.leakage import leaked_terms
from clinical_gym.cases.topics import SYMPTOMS
from clinical_gym.domains.inquiry.consistency import ConsistencyCheck, case_claims
from clinical_gym.domains.inquiry.patient import HOLD_BACK, NO_EVENT, RuleBasedPatient, case_index
from question_bank import STANDARD_QUESTIONS, presence_question

FIXTURES = Path(__file__).parent / "fixtures" / "case_formats"
PUBLIC_FILES = ("agentclinic_osce.jsonl", "agentclinic_nejm.jsonl", "agentclinic_mimiciv.jsonl", "medqa_vignettes.jsonl",
                "mtmeddialog_dialogues.json", "diaggym_records.jsonl", "diagbench.json")
HISTORY = ["Tell me about your lifestyle: work, smoking, alcohol?", "Have you had any heart problems?", "Have you ever had an operation?",
           "Do you have a fever or any allergies?", "Any trouble sleeping?", "How many pillows do you sleep on?",
           "Have you had a colonoscopy?", "Have you had any tests?", "Are you unresponsive during the episodes?",
           "Do you remember them afterwards?", "Any changes in your bowel habits?", "Any blood in your stool?"]


def patient(case, unknown_answer="deny"):
    p = RuleBasedPatient(unknown_answer=unknown_answer)
    p.reset(case, np.random.default_rng(0))
    return p


def consultation(case) -> list[str]:
    """The standard clinical questions, every symptom the case affirms, six it does not, and history questions."""
    claims = case_claims(case)
    affirmed = sorted({s for f in case.history if f.present for s in claims[f.id].affirms if s in SYMPTOMS})
    absent = [s for s in SYMPTOMS if s not in affirmed][:: len(SYMPTOMS) // 6][:6]
    return [*STANDARD_QUESTIONS[:15], *(presence_question(s) for s in affirmed + absent), *HISTORY]


def contradictions_and_leaks(cases) -> tuple[list[str], list[str]]:
    problems, leaks = [], []
    for case in cases:
        p, check = patient(case), ConsistencyCheck(case)
        for question in consultation(case):
            reply = p.reply(question)
            problems += [f"{case.id}: {m} ({question!r} -> {reply.text[:70]!r})" for m in check.add(reply.facts, reply.denied)]
            if leaked_terms(reply.text, case.diagnosis):
                leaks.append(f"{case.id}: {question!r} -> {reply.text[:70]!r}")
    return problems, leaks


def test_no_contradiction_or_leak_in_the_library_1000_generated_cases_and_the_public_format_files():
    imported = [c for name in PUBLIC_FILES for c in read_case_file(FIXTURES / name)[0]]
    cases = [*library(), *load_cases("generated:common", n=1000, seed=0), *imported]
    assert len(imported) >= 180
    problems, leaks = contradictions_and_leaks(cases)
    assert not problems, problems[:5]
    assert not leaks, leaks[:5]


def test_the_check_catches_a_contradiction():
    case = next(c for c in library() if c.id == "cir-decompensated-heart-failure-01")
    check = ConsistencyCheck(case)
    assert check.add(["orthopnea"]) == []  # "I've had to sleep propped up on four pillows, and I wake up ... gasping"
    assert check.add([], ["sleep_problems"])  # "No, I haven't had any trouble sleeping" after that
    assert ConsistencyCheck(case).add(["legs"], ["<pain>"]) == []  # swollen "up to my knees" is not a pain
    assert ConsistencyCheck(case).add([], ["bowel_changes"]) == []


def test_the_issue_examples_no_longer_contradict():
    case = next(c for c in library() if c.id == "cir-decompensated-heart-failure-01")
    p = patient(case)
    pillows = p.reply("How many pillows do you sleep on?")
    assert "four pillows" in pillows.text and "trouble sleeping" not in pillows.text
    sleeping = p.reply("Any trouble sleeping?")  # already told, in the pillows answer: nothing new to say
    assert sleeping.kind == "repeated"
    heart = p.reply("Have you had any heart problems?")
    assert "heart attack five years ago" in heart.text  # past history, not "my heart isn't racing"


def test_a_question_that_tells_something_new_is_never_already_asked():
    case = next(c for c in library() if c.id == "dig-appendicitis-01")
    p = patient(case)
    first = p.reply("When did the pain start?")
    second = p.reply("Where exactly is the pain?")  # the same symptom, another fact
    assert first.kind == second.kind == "answered" and set(first.facts).isdisjoint(second.facts)
    again = p.reply("Where is the pain?")  # nothing new
    assert again.kind == "repeated"
    bowel = [p.reply("Any diarrhea?"), p.reply("Any blood in your stool?")]  # a second, different bowel question
    assert all(r.kind != "repeated" for r in bowel)


def test_compound_questions_answer_every_topic_they_name():
    case = next(c for c in library() if c.id == "cir-stable-angina-01")
    reply = patient(case).reply("Tell me about your lifestyle: work, smoking, alcohol?")
    for fact_id in ("alcohol", "work", "smoking"):
        assert case.fact(fact_id).text in reply.text
    both = patient(case).reply("Do you have a fever or any allergies?")
    assert "fever" in both.text.lower() and case.fact("allergies").text in both.text and both.denied == ("fever",)


@pytest.mark.parametrize("question", ["Have you had a colonoscopy?", "Have you ever had a blood transfusion?", "Did you have a CT scan before?"])
def test_unrecorded_events_get_a_plausible_negative(question):
    case = next(c for c in library() if c.id == "dig-appendicitis-01")
    deny, unsure = patient(case).reply(question), patient(case, "unsure").reply(question)
    assert deny.kind == unsure.kind == "denied" and not deny.facts and not deny.denied
    assert deny.text.endswith(NO_EVENT["deny"]) and unsure.text.endswith(NO_EVENT["unsure"])  # after the persona's tone
    assert not leaked_terms(deny.text, case.diagnosis)
    assert patient(case).reply("What is the capital of France?").kind == "refused"  # not an event: still refused


def test_unknown_answer_is_validated_and_reaches_the_environment():
    with pytest.raises(ValueError, match="unknown_answer"):
        RuleBasedPatient(unknown_answer="maybe")
    env = gym.make("ClinicalInquiry-v1", patient="rules:unsure")
    env.reset(seed=0, options={"case_id": "dig-appendicitis-01"})
    obs, reward, *_ = env.step("<answer>Question: Have you had a colonoscopy?</answer>")
    assert NO_EVENT["unsure"] in obs and reward == 1.0  # DoctorAgent-RL: an answered question, not a refusal
    env.close()


def test_a_withheld_topic_is_held_back_not_denied():
    case = next(c for c in library() if c.persona.withheld and any(case_claims(c)[f].affirms for f in c.persona.withheld))
    fid = case.persona.withheld[0]
    keys = sorted(case_claims(case)[fid].affirms)
    check, p = ConsistencyCheck(case), patient(case)
    for question in ["Have you had any other symptoms?", "Do you use any recreational drugs?", *(presence_question(k) for k in keys if k in SYMPTOMS)]:
        reply = p.reply(question)
        assert not check.add(reply.facts, reply.denied), (case.id, question, reply.text)


def test_an_event_question_about_a_recorded_fact_is_never_denied():
    """A yes/no event question in the patient's other words or tense finds the recorded fact ("Did you bite your
    tongue?" / "I bit the side of my tongue"); one about a withheld fact is held back, not denied."""
    case = next(c for c in library() if c.id == "neu-generalised-epilepsy-01")
    assert case.persona.withheld == ("incontinence",)
    tongue = patient(case).reply("Did you bite your tongue?")
    assert tongue.kind == "answered" and tongue.facts == ("tongue",)
    for question in ("Did you wet yourself?", "Have you wet yourself during one?"):
        reply = patient(case).reply(question)
        assert HOLD_BACK[1:] in reply.text and NO_EVENT["deny"][1:] not in reply.text, (question, reply.text)
    assert patient(case).reply("Did you pass urine during it?").facts == ("incontinence",)  # asked specifically


@pytest.mark.parametrize("question", ["What brings you in?", "What's the problem?", "How can I help you?",
                                      "Why did you come in today?", "Tell me what happened."])
def test_an_open_question_about_the_visit_is_answered_with_the_complaint(question):
    """The first thing a doctor asks gets the main complaint on every library case (it was refused, -2, or answered
    with whatever fact shared a word: "What's wrong?" told a brother's lung history)."""
    for case in library():
        reply = patient(case).reply(question)
        assert reply.kind == "answered" and reply.facts, (case.id, question, reply.text)
        chief = case_index(case).chief
        assert chief in case_claims(case)[reply.facts[0]].affirms, (case.id, question, reply.text)
        assert not leaked_terms(reply.text, case.diagnosis)
