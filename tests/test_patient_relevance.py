"""The rule-based patient answers with the asked-about fact: a recorded event asked in other words is never denied,
"<organ> problems" gets facts about that organ, "where is the pain?" gets the site, and lay wordings of a symptom
find the fact that has it. Relevance, not only "not a repeat" (clinical_gym.cases.lexicon)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from clinical_gym.cases import library, read_case_file
from clinical_gym.cases.lexicon import EVENT_QUESTIONS, LAY_TERMS, about_organ, concepts, lay_questions, names_site, stem
from clinical_gym.cases.topic_match import affirmed_symptoms, find_topics
from clinical_gym.cases.topics import PAIN_SYMPTOMS, SYMPTOMS
from clinical_gym.domains.inquiry.consistency import case_claims
from clinical_gym.domains.inquiry.patient import HOLD_BACK, NO_EVENT, RuleBasedPatient, case_index
from clinical_gym.domains.inquiry.questions import analyze_question

FIXTURES = Path(__file__).parent / "fixtures" / "case_formats"
PUBLIC_FILES = ("agentclinic_osce.jsonl", "agentclinic_nejm.jsonl", "agentclinic_mimiciv.jsonl", "medqa_vignettes.jsonl",
                "mtmeddialog_dialogues.json", "diaggym_records.jsonl", "diagbench.json")


def ask(case, question: str):
    p = RuleBasedPatient()
    p.reset(case, np.random.default_rng(0))
    return p.reply(question)


def lib(case_id: str):
    return next(c for c in library() if c.id == case_id)


def denied_outright(reply) -> bool:
    return any(no[1:] in reply.text for no in NO_EVENT.values())


EPILEPSY = "neu-generalised-epilepsy-01"  # records "I wet myself during it" (withheld) and "I bit the side of my tongue"


@pytest.mark.parametrize("question", EVENT_QUESTIONS["incontinence"])
def test_a_recorded_event_asked_in_other_words_is_never_denied(question):
    case = lib(EPILEPSY)
    held = ask(case, question)  # the persona withholds it unless asked about the bladder: held back or told, never "No"
    assert not denied_outright(held) and (HOLD_BACK[1:] in held.text or held.facts == ("incontinence",)), held
    open_case = case.model_copy(update={"persona": case.persona.model_copy(update={"withheld": ()})})
    told = ask(open_case, question)
    assert told.facts == ("incontinence",) and "wet myself" in told.text, told


def test_events_in_an_imported_record_are_found_in_any_wording(tmp_path):
    """A row written here (not a fixture): the record's words differ from every question's."""
    row = {"OSCE_Examination": {
        "Objective_for_Doctor": "Assess a man after a collapse.",
        "Patient_Actor": {"Demographics": "35-year-old man", "History": "He had a shaking episode at work. He lost control of his "
                          "bladder during it and bit his tongue. He fell and banged his head on a desk. He cannot recall the event.",
                          "Symptoms": {"Primary_Symptom": "Shaking episode at work", "Secondary_Symptoms": ["Sore tongue"]},
                          "Past_Medical_History": "None.", "Social_History": "Office worker. Keeps two dogs."},
        "Physical_Examination_Findings": {"Vital_Signs": {"Heart_Rate": "88 bpm"}},
        "Test_Results": {"EEG": {"Findings": "Generalised spike-and-wave discharges."}},
        "Correct_Diagnosis": "Generalised tonic-clonic seizure"}}
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (case,), problems = read_case_file(path)
    assert not problems
    expected = {"incontinence": "bladder", "tongue_bite": "tongue", "head_injury": "head", "fall": "fell", "memory_gap": "recall",
                "animal_contact": "dogs"}
    for concept, word in expected.items():
        for question in EVENT_QUESTIONS[concept]:
            reply = ask(case, question)
            assert word in reply.text and not denied_outright(reply), (question, reply.text)
    assert denied_outright(ask(case, "Have you had a colonoscopy?"))  # nothing recorded: the plausible negative


def test_organ_problems_get_facts_about_that_organ_only():
    epilepsy = lib(EPILEPSY)
    bowel = ask(epilepsy, "Any bowel problems?")  # was the toddler fits of the past history
    assert bowel.denied == ("bowel_changes",) and "bowel" in bowel.text and not bowel.facts, bowel
    bladder = ask(epilepsy, "Have you had any bladder problems?")  # the persona tells it when asked about the bladder
    assert bladder.facts == ("incontinence",), bladder
    heart = ask(epilepsy, "Have you had any heart problems?")
    assert all(about_organ(epilepsy.fact(f).text, "heart") for f in heart.facts) and "heart" in heart.text.lower(), heart
    for case in library():
        for organ, question in (("bowel", "Any bowel problems?"), ("heart", "Have you had any heart problems?")):
            reply = ask(case, question)
            claims = case_claims(case)
            for fid in reply.facts:
                keys = claims[fid].affirms | claims[fid].denies | set(case.fact(fid).topics)
                assert about_organ(case.fact(fid).text, organ) or (organ == "bowel" and keys & {"bowel_changes", "diarrhea", "constipation",
                                                                                                    "blood_in_stool", "pale_stool"}), (case.id, question, reply.text)


def test_a_heart_question_without_heart_history_gets_a_plain_negative():
    case = lib("dig-appendicitis-01")
    reply = ask(case, "Have you had any heart problems?")
    assert reply.text.endswith("No, I've never had any problems with my heart.") and reply.kind == "denied" and not reply.denied


def test_remembering_gets_the_fact_about_memory_not_family_history():
    reply = ask(lib(EPILEPSY), "Do you remember them afterwards?")  # was the uncle's fits ("them")
    assert "remember" in reply.text and reply.facts and all(lib(EPILEPSY).fact(f).category != "family" for f in reply.facts), reply


def test_where_is_the_pain_gets_a_site_on_every_case_that_records_one():
    cases = [*library(), *(c for name in PUBLIC_FILES for c in read_case_file(FIXTURES / name)[0])]
    checked = 0
    for case in cases:
        idx = case_index(case)
        withheld = set(case.persona.withheld)
        if not any(f.present and f.id not in withheld and idx.said[f.id] & PAIN_SYMPTOMS and names_site(f.text) for f in idx.facts):
            continue
        checked += 1
        reply = ask(case, "Where is the pain?")
        assert reply.kind == "answered" and names_site(reply.text), (case.id, reply.text)
    assert checked > 150
    epilepsy = ask(lib(EPILEPSY), "Where is the pain?")  # no location tag in the record: the aching muscles "all over"
    assert "all over" in epilepsy.text


def test_lay_wordings_of_every_symptom_name_it():
    assert set(LAY_TERMS) == set(SYMPTOMS)
    for symptom in SYMPTOMS:
        questions = lay_questions(symptom)
        assert len(questions) >= 3
        for question in questions:
            assert symptom in analyze_question(question).explicit_symptoms, (symptom, question)


def test_lay_wordings_find_the_fact_that_has_the_symptom():
    case = lib("res-pneumonia-01")
    claims = case_claims(case)
    present = sorted({s for f in case.history if f.present for s in claims[f.id].affirms if s in SYMPTOMS})
    assert "shortness_of_breath" in present and "fever" in present
    for symptom in present:
        for question in lay_questions(symptom):
            reply = ask(case, question)
            assert any(symptom in claims[f].affirms for f in reply.facts), (symptom, question, reply.text)


def test_stems_and_event_wordings():
    assert stem("incontinent") == stem("incontinence") and stem("vomited") == stem("vomiting") == stem("vomit")
    assert stem("bit") == stem("bite") == stem("biting") == stem("bitten") and stem("threw") == stem("throwing")
    assert stem("wetting") == stem("wet") and stem("bleeding") == stem("bleed") and stem("remembered") == stem("remember")
    assert concepts("I wet myself during it.") == concepts("Have you been incontinent?") == {"incontinence"}
    assert concepts("She lost control of her bladder") == {"incontinence"} and concepts("I passed urine twice today") == set()
    assert concepts("I fall asleep easily") == set() and concepts("a camping trip") == set()  # not a fall
    assert concepts("It stings when I pee") == set() and concepts("my heart rate was high") == set()  # no sting, no rats
    assert concepts("I had a CAT scan and a PET-CT last year") == set() and concepts("Our cat scratched me") == {"animal_contact"}
    assert names_site("It's in my throat.") and names_site("My muscles ache all over") and not names_site("It started yesterday.")


def test_symptom_words_that_were_misread():
    assert {"fever", "chills"} <= affirmed_symptoms("Feeling hot and shivery.")  # not heat intolerance
    assert "heat_intolerance" not in affirmed_symptoms("Feeling hot and shivery.")
    assert "heat_intolerance" in affirmed_symptoms("She feels too hot when others are comfortable.")
    assert "alcohol" not in find_topics("She has been nauseated and drinking less.").question_types
    assert "alcohol" in find_topics("Do you drink?").question_types and "alcohol" in find_topics("I drink at parties").question_types
    assert "bowel_changes" not in affirmed_symptoms("a poor night's sleep sets one off")
    assert "lifestyle" not in find_topics("Any change in your bowel habit?").question_types
    assert "skin_lesion" not in find_topics("Have you had a sore back?").explicit_symptoms
    assert find_topics("Where do you live?").question_types == {"living_situation"}  # not "where is it?"
