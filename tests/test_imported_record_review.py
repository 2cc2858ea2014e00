"""Issue 20 review of imported cases: a de-identified age never becomes another number of the record (a relative's
age, a duration) or 0; BNP and NT-proBNP answer for each other in the record-backed world model and nothing else
reads across; the rule patient answers "Were you unconscious?" from a recorded faint."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_workup_record import FIXTURES, osce_case, world

from clinical_gym.cases import library, read_case_file
from clinical_gym.cases.formats.demographics import age_is_masked, coded_age, demographics_from
from clinical_gym.cases.schema import Fact
from clinical_gym.domains.inquiry.patient import RuleBasedPatient

MASKED = "the age is de-identified ('___ y/o'); give an 'age' field"


# -- de-identified ages -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("texts, fields", [
    (("___ y/o F", "Fall, 2 days ago"), {}),  # a short field with one number: was age 2
    (("", "Her 45-year-old son brought her in.", "Chest pain"), {"age": "___", "sex": "F"}),  # was 45
    (("Pt is ___ y/o M", "Vomiting after infant formula change"), {}),  # a newborn word: was 0
    (("Age: ___  Sex: F", "She is 3 weeks post partum."), {"sex": "F"}),
    (("[**Age over 90 **] y/o M", "aged 12 years when first diagnosed"), {}),  # MIMIC-III style mask
])
def test_a_masked_age_is_reported_never_read_from_other_numbers(texts, fields):
    assert age_is_masked(*texts, age=fields.get("age"))
    with pytest.raises(ValueError, match=MASKED.replace("(", r"\(").replace(")", r"\)")):
        demographics_from(*texts, **fields)


def test_a_coded_age_still_wins_and_unmasked_text_is_read():
    assert demographics_from("___ y/o F", "Her 45-year-old son", age="58.0").age == 58
    assert demographics_from("___ y/o F", age=0).age == 0  # a coded 0 is a newborn, not a mask
    assert demographics_from("67 y/o F with cough").age == 67
    assert demographics_from("A 3-week-old girl").age_days == 21
    assert [coded_age(v) for v in ("___", "", None, "58", 58.9, True, "[**Age**]")] == [None, None, None, 58, 58, None, None]
    assert not age_is_masked("67 y/o F") and age_is_masked("Patient: ___-year-old man")


def test_diaggym_records_with_masked_ages_are_skipped_with_the_reason(tmp_path):
    rows = [{"id": "m-1", "profile": {"age": "___", "sex": "F", "chief_complaint": "Fall x 2 days",
                                      "hpi": "Her 45-year-old son found her on the floor."}, "final_diagnosis": "Syncope"},
            {"id": "m-2", "initial_inquiry": "- Patient Information: ___ y/o M\n- Chief Complaint: Fever for 3 days\n"
                                             "- History of Present Illness: Fever and cough.", "final_diagnosis": "Pneumonia"},
            {"id": "m-3", "profile": {"age": 71, "sex": "M", "patient": "___ y/o M", "hpi": "Cough."},
             "final_diagnosis": "Pneumonia"}]
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cases, problems = read_case_file(path, "diaggym")
    assert [c.id for c in cases] == ["m-3"] and cases[0].demographics.age == 71
    assert problems == [f"{path}:1: no patient age found: {MASKED}", f"{path}:2: no patient age found: {MASKED}"]
    loaded, failed = read_case_file(FIXTURES / "diaggym_records.jsonl")  # MIMIC notes with coded ages: all load
    assert len(loaded) >= 30 and not failed and all(c.demographics.age > 0 for c in loaded)


# -- BNP and NT-proBNP --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("recorded, value, orders", [
    ("NT-proBNP", "8400 pg/mL", ["BNP", "Brain natriuretic peptide", "natriuretic peptide", "NT-proBNP", "proBNP"]),
    ("BNP", "1250 pg/mL", ["NT-proBNP", "pro BNP", "N-terminal pro B-type natriuretic peptide", "BNP"]),
])
def test_bnp_and_nt_probnp_answer_for_each_other_under_their_own_name(recorded, value, orders):
    """ESC 2021 heart failure guideline: either peptide, each at its own cut-off; a recorded 8400 pg/mL NT-proBNP
    used to come back as a synthesised normal BNP of 37 pg/mL."""
    wm = world(osce_case({"Blood_Tests": {recorded: value}}, "Heart failure"))
    for order in orders:
        got = wm.result(order, [])
        assert got.source == "record" and got.text.startswith(f"{recorded}: Value: {value.split()[0]};"), (order, got)
        assert "Units: pg/mL" in got.text


def test_only_the_natriuretic_peptides_read_across():
    wm = world(osce_case({"Blood_Tests": {"Procalcitonin": "0.05 ng/mL", "ANP": "30 pg/mL"}}, "Heart failure"))
    for order in ("BNP", "NT-proBNP"):
        got = wm.result(order, [])
        assert got.source == "synthesised" and "Procalcitonin" not in got.text and "ANP" not in got.text
    both = world(osce_case({"Blood_Tests": {"BNP": "900 pg/mL", "NT_proBNP": "5100 pg/mL"}}, "Heart failure"))
    assert both.result("BNP", []).text == "BNP: Value: 900; Numeric Value: 900; Units: pg/mL"
    assert both.result("NT-proBNP", []).text == "NT proBNP: Value: 5100; Numeric Value: 5100; Units: pg/mL"  # as recorded
    bnp_only = world(osce_case({"Blood_Tests": {"BNP": "1250 pg/mL"}}, "Heart failure"))
    assert bnp_only.result("BMP", []).source != "record"  # a basic metabolic panel is no BNP


# -- the rule patient and a recorded faint ------------------------------------------------------------------------------
BASE = next(c for c in library() if any(f.id == "blackout" for f in c.history))  # subarachnoid haemorrhage
LOC_QUESTIONS = ("Were you unconscious?", "Did you pass out?", "Did you lose consciousness?", "Did you black out?")


def _with_faint(text: str, present: bool = True):
    kept = tuple(f for f in BASE.history if "syncope" not in f.topics)
    return BASE.model_copy(update={"history": (*kept, Fact(id="faint", category="hpi", text=text, topics=("syncope",),
                                                               present=present))})


def _reply(case, question: str):
    patient = RuleBasedPatient()
    patient.reset(case, np.random.default_rng(0))
    return patient.reply(question)


@pytest.mark.parametrize("text", ["I fainted in the queue at the supermarket.",
                                  "My friend said I went blank and slumped for a few seconds right after it hit.",
                                  "He collapsed at work and was out for about a minute."])
def test_a_recorded_faint_answers_every_loss_of_consciousness_question(text):
    for question in LOC_QUESTIONS:
        reply = _reply(_with_faint(text), question)
        assert text in reply.text and reply.kind == "answered" and "faint" in reply.facts, (question, reply)


def test_a_recorded_denial_is_told_and_a_record_without_a_faint_denies():
    for question in LOC_QUESTIONS:
        denial = _reply(_with_faint("I haven't blacked out.", present=False), question)
        assert "I haven't blacked out." in denial.text and denial.kind == "denied", (question, denial)
        none = _reply(BASE.model_copy(update={"history": tuple(f for f in BASE.history if "syncope" not in f.topics)}),
                      question)
        assert none.kind == "denied" and "slumped" not in none.text, (question, none)
