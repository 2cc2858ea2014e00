"""The rule-based patient answers what is asked: facts in the case come back, absent symptoms are denied."""

from __future__ import annotations

import re

import numpy as np
import pytest

from clinical_gym.cases import library
from clinical_gym.cases.topics import BROADER, PAIN_SYMPTOMS, SYMPTOMS
from clinical_gym.domains.inquiry.patient import RuleBasedPatient
from question_bank import presence_question, question_for

FLOOR = 0.90


def fresh_patient(case, seed=0):
    p = RuleBasedPatient()
    p.reset(case, np.random.default_rng(seed))
    return p


def fact_hit_rate(cases):
    hits, misses = 0, []
    for case in cases:
        for fact in case.history:
            q = question_for(fact)
            reply = fresh_patient(case).reply(q)
            if fact.text.lower() in reply.text.lower():
                hits += 1
            else:
                misses.append((case.id, fact.id, q, reply.text))
    return hits / (hits + len(misses)), misses


def absent_symptoms(case):
    present = {s for f in case.history for s in f.symptoms}
    related = set(present)
    for broad, narrow in BROADER.items():
        if present & set(narrow):
            related.add(broad)
    return sorted(set(SYMPTOMS) - related - {"bowel_changes", "urinary_symptoms"})


def denial_rate(cases):
    hits, misses = 0, []
    for case in cases:
        for s in absent_symptoms(case):
            reply = fresh_patient(case).reply(presence_question(s))
            if reply.kind == "denied" and re.search(r"\bno\b", reply.text.lower()):
                hits += 1
            else:
                misses.append((case.id, s, reply.kind, reply.text))
    return hits / (hits + len(misses)), misses


def test_present_facts_are_revealed_when_asked():
    rate, misses = fact_hit_rate(library())
    assert rate >= FLOOR, f"fact fidelity {rate:.3f} < {FLOOR}; first misses: {misses[:10]}"


def test_absent_symptoms_are_denied():
    rate, misses = denial_rate(library())
    assert rate >= FLOOR, f"denial rate {rate:.3f} < {FLOOR}; first misses: {misses[:10]}"


def test_patient_reveals_only_what_is_asked():
    case = library()[0]
    p = fresh_patient(case)
    reply = p.reply("Do you smoke?")
    assert reply.facts == ("smoking",)
    assert all(f.text not in reply.text for f in case.history if f.id != "smoking")


def test_repeated_question_is_detected():
    p = fresh_patient(library()[0])
    assert p.reply("Do you have any allergies?").kind == "answered"
    again = p.reply("Are you allergic to anything?")
    assert again.kind == "repeated" and "already asked" in again.text


def test_patient_does_not_know_lab_values():
    reply = fresh_patient(library()[0]).reply("What was your white cell count?")
    assert reply.kind == "unknown" and "don't know" in reply.text


def test_unrelated_question_is_refused():
    reply = fresh_patient(library()[0]).reply("What is the capital of France?")
    assert reply.kind == "refused" and reply.text == "Sorry, I cannot answer this question."


def test_withheld_fact_needs_a_specific_question():
    cases = [c for c in library() if c.persona.withheld]
    if not cases:
        pytest.fail("the library should have cases with disclosure rules (persona.withheld)")
    for case in cases:
        fid = case.persona.withheld[0]
        fact = case.fact(fid)
        general = fresh_patient(case)
        for q in ("Have you had any other symptoms?", "Is there anything else you want to tell me?"):
            assert fid not in general.reply(q).facts, case.id
        specific = fresh_patient(case).reply(presence_question(fact.symptoms[0]))
        assert fid in specific.facts, (case.id, specific.text)


def test_persona_changes_tone_but_not_facts():
    case = next(c for c in library() if c.persona.emotion in ("anxious", "frustrated"))
    fact = next(f for f in case.history if f.category == "allergies") if any(f.category == "allergies" for f in case.history) else case.history[0]
    texts = {fresh_patient(case, seed).reply(question_for(fact)).text for seed in range(12)}
    assert len(texts) > 1, "an emotional persona should vary its tone across seeds"
    assert all(fact.text.lower() in t.lower() for t in texts)


def test_same_seed_same_replies():
    case = library()[3]
    qs = ["When did it start?", "How bad is it?", "Any fever?", "Do you take medications?"]
    a = [fresh_patient(case, 7).reply(q).text for q in qs]
    b = [fresh_patient(case, 7).reply(q).text for q in qs]
    assert a == b


def test_pain_question_without_pain_is_denied():
    case = next((c for c in library() if not any(s in PAIN_SYMPTOMS for f in c.history if f.present for s in f.symptoms)), None)
    if case is None:
        pytest.skip("every library case has a pain symptom")
    assert fresh_patient(case).reply("Are you in any pain?").kind == "denied"
