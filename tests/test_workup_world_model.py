"""DiagnosticWorkup's record-backed world model: a value is looked up on the specimen asked for, an analyte has one
synthesised value in an episode whichever exam reports it, children get children's reference intervals, ages under
one year read in weeks or months, and common exam names and MIMIC study names find the recorded study."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.cases import Case, library
from clinical_gym.cases.formats import convert_rows
from clinical_gym.cases.formats.demographics import demographics_from
from clinical_gym.domains.workup.catalogue import catalogue_from_json, load_catalogue
from clinical_gym.domains.workup.environment import initial_inquiry
from clinical_gym.domains.workup.paediatric_ranges import ADULT_DAYS, PAEDIATRIC_BANDS, paediatric_reference
from clinical_gym.domains.workup.world_model import RecordWorldModel


def world(case: Case, seed: int = 0) -> RecordWorldModel:
    wm = RecordWorldModel()
    wm.reset(case, seed)
    return wm


def osce(results: dict, demographics: str = "40-year-old woman", diagnosis: str = "Bacterial meningitis") -> Case:
    row = {"OSCE_Examination": {"Patient_Actor": {"Demographics": demographics, "Symptoms": {"Primary_Symptom": "Headache and fever"}},
                                "Test_Results": results, "Correct_Diagnosis": diagnosis}}
    cases, problems = convert_rows([(1, row)], "inline.jsonl", "osce")
    assert not problems, problems
    return cases[0]


def line(text: str, name: str) -> str:
    return next(row for row in text.splitlines() if row.startswith(f"{name}:"))


def test_a_value_is_looked_up_on_the_specimen_the_order_asks_for():
    case = osce({"Lumbar_Puncture": {"Glucose": "18 mg/dL (40-70)", "Protein": "280 mg/dL (15-45)"}, "Urinalysis": {"Glucose": "4+"}})
    wm = world(case)
    for order in ("plasma glucose", "glucose", "serum glucose", "blood glucose"):  # never the CSF's 18 or the urine's 4+
        got = wm.result(order, [])
        assert got.source == "synthesised" and "Value: 18" not in got.text and "4+" not in got.text, (order, got)
    csf = wm.result("CSF glucose", [])
    assert csf.source == "record" and "Value: 18" in csf.text and "4+" not in csf.text, csf  # not a synthesised normal CSF panel
    assert wm.result("CSF protein", []).source == "record" and "Value: 280" in wm.result("CSF protein", []).text
    urine = wm.result("urine glucose", [])
    assert urine.source == "record" and "4+" in urine.text and "18" not in urine.text, urine
    both = osce({"Blood_Tests": {"Glucose": "6.1 mmol/L"}, "Lumbar_Puncture": {"Glucose": "1.2 mmol/L"}})
    got = world(both).result("glucose", [])
    assert got.source == "record" and "6.1" in got.text and "1.2" not in got.text, got
    assert "1.2" in world(both).result("CSF glucose", []).text and "6.1" not in world(both).result("CSF glucose", []).text


def test_an_analyte_synthesised_twice_in_an_episode_has_one_value():
    case = next(c for c in library() if c.id == "neu-migraine-01").model_copy(update={"tests": ()})
    wm = world(case, seed=3)
    potassium = {order: line(wm.result(order, []).text, "Potassium") for order in ("Basic metabolic panel", "CMP", "potassium", "U&E")}
    assert len(set(potassium.values())) == 1, potassium
    creatinine = {line(wm.result(order, []).text, "Creatinine") for order in ("BMP", "renal function", "creatinine")}
    assert len(creatinine) == 1, creatinine
    seeds = {line(world(case, seed).result("BMP", []).text, "Sodium") for seed in range(8)}
    assert len(seeds) > 1  # another episode seed, another draw


def test_ordering_one_analyte_returns_that_analyte_and_keeps_the_record():
    """"creatinine" on a record holding the electrolytes: the creatinine alone, never a synthesised normal BMP that
    contradicts the recorded sodium and potassium."""
    case = osce({"Serum_Electrolytes": {"Sodium": "132 mmol/L (135-145)", "Potassium": "3.1 mmol/L (3.5-5.5)"}})
    got = world(case).result("creatinine", [])
    assert got.source == "synthesised" and got.text.startswith("Creatinine:") and len(got.text.splitlines()) == 1, got
    assert "Value: 3.1" in world(case).result("BMP", []).text


@pytest.mark.parametrize("days, component, sex, expected", [
    (27, "Creatinine", "male", (0.3, 1.0)), (28, "Creatinine", "male", (0.1, 0.4)), (364, "Creatinine", "male", (0.1, 0.4)),
    (365, "Creatinine", "female", (0.3, 0.7)), (ADULT_DAYS - 1, "Creatinine", "male", (0.5, 1.0)), (ADULT_DAYS, "Creatinine", "male", None),
    (30, "Hemoglobin", "female", (15.0, 24.0)), (31, "Hemoglobin", "female", (10.5, 14.0)), (12 * 365, "Hemoglobin", "male", (12.5, 16.1)),
    (12 * 365, "Hemoglobin", "female", (12.0, 15.0)), (7, "Platelets", "male", (84, 478)), (8, "Platelets", "male", (150, 450)),
    (13 * 365, "Alkaline phosphatase", "male", (100, 495)), (13 * 365, "Alkaline phosphatase", "female", (100, 420)),
    (40, "Potassium", "male", (4.0, 6.2)), (5 * 365, "Potassium", "male", None), (40, "Troponin", "male", None),
])
def test_paediatric_reference_intervals_at_their_band_edges(days, component, sex, expected):
    assert paediatric_reference(component, sex, days) == expected


def test_paediatric_bands_are_catalogue_components_and_well_formed():
    names = {c.name for e in load_catalogue() for c in e.components}
    for component, bands in PAEDIATRIC_BANDS.items():
        assert component in names, component
        for band in bands:
            assert 0 <= band.from_days < band.to_days <= ADULT_DAYS and band.low < band.high, (component, band)


def test_children_get_childrens_ranges_and_ages_read_in_weeks_or_months():
    baby = osce({"Abdominal_Ultrasound": {"Findings": "Pyloric muscle 5 mm thick."}}, "5-week-old boy", "Hypertrophic pyloric stenosis")
    assert (baby.demographics.age, baby.demographics.age_days, baby.demographics.age_text) == (0, 35, "5 weeks old")
    creatinine = line(world(baby).result("creatinine", []).text, "Creatinine")
    assert "Reference Range: 0.1 - 0.4" in creatinine and 0.1 <= float(creatinine.split("Value: ")[1].split(";")[0]) <= 0.4, creatinine
    cbc = world(baby).result("CBC", []).text
    assert "Reference Range: 10.5 - 14" in line(cbc, "Hemoglobin") and "Reference Range: 6 - 17" in line(cbc, "White blood cells")
    adult = osce({}, "40-year-old man")
    assert "Reference Range: 0.74 - 1.35" in world(adult).result("creatinine", []).text
    assert initial_inquiry(baby).startswith("Patient: 5-week-old male.")
    env = gym.make("ClinicalInquiry-v1", cases=[baby])
    obs, _ = env.reset(seed=0)
    assert obs.endswith("(male, 5 weeks old)"), obs
    env.close()
    assert demographics_from("A 3-week-old girl").age_text == "3 weeks old"
    assert demographics_from("a 6-month-old boy").age_adjective == "6-month-old"
    assert demographics_from("an 18-month-old boy").age == 1  # was 0 ("months old" counted as under a year)


@pytest.mark.parametrize("recorded, order", [
    ("Suction_Rectal_Biopsy", "rectal biopsy"), ("Barium_Enema", "contrast enema"), ("Contrast_Enema", "barium enema"),
    ("Head_Ultrasound", "cranial ultrasound"), ("Cranial_Ultrasound", "head ultrasound"), ("MRI_Brain_and_Orbits", "MRI"),
    ("Right_Upper_Quadrant_Ultrasound", "abdominal ultrasound"), ("CHEST (PORTABLE AP)", "chest x-ray"), ("KNEE (2 VIEWS) RIGHT", "knee x-ray"),
    ("RENAL U.S.", "renal ultrasound"), ("UNILAT LOWER EXT VEINS LEFT", "leg doppler"), ("CTA HEAD AND NECK", "CT angiogram"),
])
def test_common_names_find_the_recorded_study(recorded, order):
    case = osce({recorded: {"Findings": "Recorded abnormal study."}})
    got = world(case).result(order, [])
    assert got.source == "record" and got.text == "Recorded abnormal study.", (order, got)


def test_a_bare_modality_finds_the_one_recorded_study_of_it_only():
    two = osce({"MRI_Brain": {"Findings": "Lesions."}, "MRI_Spine": {"Findings": "Normal."}})
    got = world(two).result("MRI", [])
    assert got.source == "unknown" and {"MRI Brain", "MRI Spine"} & set(got.suggestions), got


def test_an_exam_includes_only_catalogue_exams():
    assert load_catalogue().resolve("abdominal ultrasound").includes == (
        "Right upper quadrant ultrasound", "Renal ultrasound", "Abdominal aortic ultrasound")
    raw = {"components": [], "exams": [{"name": "Abdominal ultrasound", "kind": "imaging", "normal_text": "Normal.", "includes": ["Liver scan"]}]}
    with pytest.raises(ValueError, match="includes unknown exam 'Liver scan'"):
        catalogue_from_json(json.dumps(raw))
