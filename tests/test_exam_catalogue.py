"""The DiagnosticWorkup exam catalogue: coverage, name resolution, exam matching, reference ranges, normal results."""

from __future__ import annotations

import copy
import json
import pickle
from typing import get_args

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clinical_gym.cases.loading import library
from clinical_gym.cases.schema import ExamSystem, TestCategory
from clinical_gym.domains.workup.catalogue import (
    LAB_KINDS,
    Catalogue,
    Component,
    Exam,
    ExamKind,
    catalogue_from_json,
    exam_words,
    load_catalogue,
)


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue()


# ---------------------------------------------------------------------------------------------------------------------
# Coverage

def test_catalogue_size_and_breadth(catalogue):
    assert len(catalogue) >= 150
    kinds = {e.kind for e in catalogue}
    assert kinds == set(get_args(ExamKind))
    assert all(e.test_category() in get_args(TestCategory) for e in catalogue)
    assert {e.exam_system for e in catalogue if e.kind == "physical_exam"} == set(get_args(ExamSystem))
    assert sum(e.kind in ("lab_panel", "lab_test") for e in catalogue) >= 60
    assert sum(e.kind == "imaging" for e in catalogue) >= 40


def test_every_library_test_name_resolves(catalogue):
    names = {t.name for case in library() for t in case.tests} | {k for case in library() for k in case.key_exams}
    unresolved = sorted(n for n in names if catalogue.resolve(n) is None)
    assert not unresolved, f"library test names with no catalogue exam: {unresolved}"


@pytest.mark.parametrize(("library_name", "exam"), [
    ("Venous duplex ultrasound of left leg", "Lower extremity venous duplex ultrasound"),
    ("X-ray of both hands", "X-ray hand"),
    ("Lumbar puncture (CSF analysis)", "Lumbar puncture (CSF analysis)"),
    ("Heterophile antibody test (Monospot)", "Heterophile antibody test"),
    ("KOH preparation of toe web scraping", "KOH preparation"),
    ("Facial nerve examination", "Cranial nerve examination"),
    ("Rapid plasma reagin", "Syphilis serology"),
    ("Urine toxicology and pregnancy screen", "Urine drug screen"),
])
def test_library_names_resolve_to_the_right_exam(catalogue, library_name, exam):
    assert catalogue.resolve(library_name).name == exam


def test_every_alias_resolves_to_its_owner(catalogue):
    for exam in catalogue:
        for alias in (exam.name, exam.name.upper(), *exam.aliases):
            assert catalogue.resolve(alias) is exam, alias


def test_every_component_alias_resolves_to_its_smallest_panel(catalogue):
    for exam in catalogue:
        for c in exam.components:
            for alias in (c.name, *c.aliases):
                panel = catalogue.resolve(alias)
                assert c in panel.components, alias
                assert len(panel.components) <= len(exam.components), alias


# ---------------------------------------------------------------------------------------------------------------------
# Resolution

ALIASES = [
    ("CBC", "Complete blood count"), ("full blood count", "Complete blood count"), ("FBC", "Complete blood count"),
    ("complete blood count", "Complete blood count"), ("BMP", "Basic metabolic panel"),
    ("basic metabolic panel", "Basic metabolic panel"), ("U&E", "Basic metabolic panel"), ("chem 7", "Basic metabolic panel"),
    ("CMP", "Comprehensive metabolic panel"), ("LFTs", "Liver function tests"), ("liver function tests", "Liver function tests"),
    ("hepatic panel", "Liver function tests"), ("troponin", "Troponin"), ("trop", "Troponin"), ("hs-troponin", "Troponin"),
    ("troponin I", "Troponin"), ("D-dimer", "D-dimer"), ("lipase", "Lipase"), ("CXR", "Chest X-ray"),
    ("chest x-ray", "Chest X-ray"), ("chest radiograph", "Chest X-ray"), ("chest xray", "Chest X-ray"),
    ("CT head without contrast", "CT head without contrast"), ("non-contrast CT head", "CT head without contrast"),
    ("CT brain", "CT head without contrast"), ("head CT w/o contrast", "CT head without contrast"), ("ECG", "ECG"),
    ("EKG", "ECG"), ("12-lead", "ECG"), ("urinalysis", "Urinalysis"), ("UA", "Urinalysis"), ("urine dip", "Urinalysis"),
    ("blood cultures", "Blood cultures"), ("blood culture", "Blood cultures"), ("TSH", "Thyroid stimulating hormone"),
    ("free T4", "Free T4"), ("HbA1c", "Hemoglobin A1c"), ("cortisol", "Morning serum cortisol"),
    ("ACTH", "ACTH"), ("glucose", "Plasma glucose"), ("lipid profile", "Lipid panel"), ("ABG", "Arterial blood gas"),
    ("VBG", "Venous blood gas"), ("UDS", "Urine drug screen"), ("HIV test", "HIV antigen/antibody test"),
    ("monospot", "Heterophile antibody test"), ("RVP", "Respiratory viral PCR panel"), ("C. diff", "Clostridioides difficile toxin/PCR"),
    ("CTA head and neck", "CT angiography head and neck"), ("CTPA", "CT pulmonary angiogram"), ("MRI head", "MRI brain"),
    ("echo", "Transthoracic echocardiogram"), ("TTE", "Transthoracic echocardiogram"), ("FAST", "FAST scan"),
    ("RUQ US", "Right upper quadrant ultrasound"), ("DVT scan", "Lower extremity venous duplex ultrasound"),
    ("Doppler scrotum", "Scrotal ultrasound with Doppler"), ("peak flow", "Peak expiratory flow"),
    ("bladder scan", "Post-void residual bladder scan"), ("fingerstick glucose", "Point-of-care glucose"),
    ("pregnancy test", "Urine pregnancy test"), ("orthostatic vitals", "Orthostatic vital signs"),
    ("fundoscopy", "Fundoscopy"), ("LP", "Lumbar puncture (CSF analysis)"), ("spinal tap", "Lumbar puncture (CSF analysis)"),
    ("EGD", "Upper GI endoscopy (EGD)"), ("colonoscopy", "Colonoscopy"), ("paracentesis", "Ascitic fluid analysis"),
    ("punch biopsy", "Skin punch biopsy"), ("DRE", "Digital rectal examination"), ("abdo exam", "Abdominal examination"),
    ("HEENT", "HEENT examination"), ("neuro exam", "Neurological examination"), ("pelvic exam", "Pelvic examination"),
    ("Haemoglobin A1c", "Hemoglobin A1c"), ("faecal calprotectin", "Fecal calprotectin"),
]


@pytest.mark.parametrize(("spelling", "exam"), ALIASES)
def test_alias_spellings_resolve(catalogue, spelling, exam):
    assert catalogue.resolve(spelling).name == exam


@pytest.mark.parametrize(("request_text", "exam"), [
    ("please order a stat CBC", "Complete blood count"), ("CBC stat please", "Complete blood count"),
    ("I'd like a complete blood count", "Complete blood count"), ("Get me the chest X-rays", "Chest X-ray"),
    ("x-ray of the chest", "Chest X-ray"), ("serial troponins", "Troponin"), ("blood cultures x2", "Blood cultures"),
    ("CT head to rule out bleed", "CT head without contrast"), ("x-ray right wrist", "X-ray wrist"),
    ("CT abdomen/pelvis with IV contrast", "CT abdomen and pelvis with contrast"),
    ("magnetic resonance imaging of the brain", "MRI brain"), ("US abdomen", "Abdominal ultrasound"),
    ("ultrasound of the kidneys", "Renal ultrasound"), ("sputum for AFB x3", "Sputum AFB smear and culture"),
    ("AST/ALT", "Liver function tests"), ("Echocardiogram (TTE)", "Transthoracic echocardiogram"),
])
def test_requests_with_noise_resolve(catalogue, request_text, exam):
    assert catalogue.resolve(request_text).name == exam


@pytest.mark.parametrize(("typo", "exam"), [
    ("complet blood count", "Complete blood count"), ("troponn", "Troponin"), ("urinanalysis", "Urinalysis"),
    ("lipse", "Lipase"), ("chest xary", "Chest X-ray"), ("chestxray", "Chest X-ray"), ("magnesiun", "Magnesium"),
    ("electrocardiagram", "ECG"), ("mri brian", "MRI brain"), ("ultrasond abdomen", "Abdominal ultrasound"),
])
def test_typos_resolve(catalogue, typo, exam):
    assert catalogue.resolve(typo).name == exam


@pytest.mark.parametrize(("component", "panel", "analyte"), [
    ("hemoglobin", "Complete blood count", "Hemoglobin"), ("hb", "Complete blood count", "Hemoglobin"),
    ("hgb", "Complete blood count", "Hemoglobin"), ("platelets", "Complete blood count", "Platelets"),
    ("potassium", "Basic metabolic panel", "Potassium"), ("K", "Basic metabolic panel", "Potassium"),
    ("creatinine", "Basic metabolic panel", "Creatinine"), ("ALT", "Liver function tests", "ALT"),
    ("bilirubin", "Liver function tests", "Total bilirubin"), ("INR", "Coagulation panel", "INR"),
    ("HDL", "Lipid panel", "HDL cholesterol"), ("nitrites", "Urinalysis", "Nitrite"),
    ("CSF protein", "Lumbar puncture (CSF analysis)", "CSF protein"), ("FEV1", "Spirometry", "FEV1, % predicted"),
    ("PaO2", "Arterial blood gas", "PaO2"), ("influenza A", "Influenza A/B PCR", "Influenza A RNA"),
])
def test_component_names_resolve_to_their_smallest_panel(catalogue, component, panel, analyte):
    hit = catalogue.lookup(component)
    assert (hit.exam.name, hit.component.name) == (panel, analyte)


def test_a_single_test_exam_wins_over_panels_reporting_the_same_analyte(catalogue):
    assert catalogue.lookup("lactate").exam.name == "Lactate"  # not the venous blood gas, which also reports it
    assert catalogue.lookup("ferritin").exam.name == "Ferritin"  # not iron studies


UNRELATED = ["quantum flux scan", "banana", "hello how are you", "give aspirin 300 mg", "admit to ICU", "start ceftriaxone",
             "pneumonia", "the answer is appendicitis", "reassure and discharge", "hepatitis", "kidney", "xyz", "", "   ",
             "!!!", "potassium chloride infusion"]


@pytest.mark.parametrize("text", UNRELATED)
def test_unrelated_text_resolves_to_nothing(catalogue, text):
    assert catalogue.resolve(text) is None


def test_unknown_names_get_suggestions(catalogue):
    suggestions = catalogue.suggest("quantum flux scan")
    assert len(suggestions) == 3 and len(set(suggestions)) == 3
    assert all(catalogue.resolve(s).name == s for s in suggestions)
    assert catalogue.suggest("magnetic brain picture", k=1) == ["MRI brain"]
    assert "Thyroid function tests" in catalogue.suggest("thyroid hormone stuff")
    assert len(catalogue.suggest("quantum flux scan", k=5)) == 5
    assert catalogue.suggest("   ") == []


def test_long_text_is_matched_exactly_only(catalogue):
    short = "old chest x ray films reviewed"
    sentence = "the patient is a sixty year old man whose old chest x ray films were reviewed by the radiologist yesterday"
    assert catalogue.resolve(short).name == "Chest X-ray"  # a known name inside a short request
    assert catalogue.resolve(sentence) is None  # a sentence is not searched for names inside it
    assert catalogue.resolve("CBC " + "please " * 40).name == "Complete blood count"  # trailing filler is stripped
    assert catalogue.resolve("history: chest pain, and we should get a troponin").name == "Troponin"  # a list part


def test_catalogue_survives_pickling_and_copying(catalogue):
    catalogue.resolve("CBC")  # populate the caches first
    for clone in (pickle.loads(pickle.dumps(catalogue)), copy.deepcopy(catalogue)):
        assert len(clone) == len(catalogue)
        assert clone.resolve("troponn").name == "Troponin"


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60))
def test_resolution_never_raises_and_is_consistent(text):
    catalogue = load_catalogue()
    found = catalogue.resolve(text)
    assert found is None or found in catalogue.exams
    assert catalogue.match(text, text) == (found is not None or bool(exam_words(text)))


# ---------------------------------------------------------------------------------------------------------------------
# Exam matching (the DiagGym rule judge)

@pytest.mark.parametrize(("a", "b"), [
    ("CBC", "full blood count"), ("CT head", "CT head without contrast"), ("troponin I", "hs-troponin"),
    ("hemoglobin", "CBC"), ("K", "potassium"), ("potassium", "CMP"), ("BMP", "CMP"), ("glucose", "BMP"),
    ("lactate", "venous blood gas"), ("TSH", "thyroid function tests"), ("ferritin", "iron studies"),
    ("hepatitis C antibody", "acute viral hepatitis panel"), ("spirometry", "pulmonary function tests"),
    ("pulse oximetry", "vital signs"), ("facial nerve examination", "neurological examination"),
    ("CSF Gram stain and culture", "lumbar puncture"), ("fundoscopy", "eye examination"),
    ("blood cultures", "blood culture x2"), ("Chest X-ray", "CXR"), ("quantum flux", "Quantum flux"),
])
def test_matching_names(catalogue, a, b):
    assert catalogue.match(a, b)
    assert catalogue.match(b, a)


@pytest.mark.parametrize(("a", "b"), [
    ("hemoglobin", "platelets"), ("ABG", "VBG"), ("TSH", "free T4"), ("troponin", "CK-MB"), ("CT head", "MRI brain"),
    ("urine culture", "urinalysis"), ("PT", "INR"), ("glucose", "fingerstick glucose"), ("CTPA", "CT chest with contrast"),
    ("CBC", "quantum flux"), ("quantum flux", "banana"), ("", ""),
])
def test_non_matching_names(catalogue, a, b):
    assert not catalogue.match(a, b)
    assert not catalogue.match(b, a)


# ---------------------------------------------------------------------------------------------------------------------
# Reference ranges and normal results

@pytest.mark.parametrize(("exam", "component", "male", "female"), [
    ("CBC", "hemoglobin", (13.5, 17.5), (12.0, 15.5)),
    ("CBC", "hct", (41.0, 53.0), (36.0, 46.0)),
    ("BMP", "creatinine", (0.74, 1.35), (0.59, 1.04)),
    ("ferritin", "ferritin", (24, 336), (11, 307)),
    ("troponin", "High-sensitivity troponin I", (0, 34), (0, 16)),
    ("lipid panel", "HDL", (40, None), (50, None)),
    ("ECG", "QTc", (350, 450), (350, 460)),
])
def test_sex_specific_reference_ranges(catalogue, exam, component, male, female):
    e = catalogue.resolve(exam)
    assert e.reference(component, "male") == male
    assert e.reference(component, "female") == female


def test_shared_ranges_and_reference_errors(catalogue):
    bmp = catalogue.resolve("BMP")
    assert bmp.reference("K", "male") == bmp.reference("potassium", "female") == (3.5, 5.1)
    with pytest.raises(KeyError):
        bmp.reference("hemoglobin", "male")
    with pytest.raises(ValueError, match="qualitative"):
        catalogue.resolve("urinalysis").reference("nitrite", "female")


def _decimals_ok(value: float, decimals: int) -> bool:
    return abs(value * 10 ** decimals - round(value * 10 ** decimals)) < 1e-6


@pytest.mark.parametrize("sex", ["male", "female"])
def test_normal_results_lie_within_range(catalogue, sex):
    rng = np.random.default_rng(7)
    for exam in catalogue:
        values = catalogue.normal_result(exam, sex, rng)
        assert [v.name for v in values] == [c.name for c in exam.components]
        for v, c in zip(values, exam.components):
            assert v.flag == "normal"
            if not c.numeric:
                assert v.text == c.normal_text and v.value is None
                continue
            low, high = c.reference(sex)
            assert (v.ref_low, v.ref_high, v.unit) == (low, high, c.unit)
            lo, hi = c.sampling_range(sex)
            assert lo <= v.value <= hi, (exam.name, c.name, v.value)
            assert (low is None or v.value >= low) and (high is None or v.value <= high)
            assert _decimals_ok(v.value, c.decimals), (c.name, v.value)


def test_normal_results_are_deterministic_per_seed(catalogue):
    first = catalogue.normal_result("CBC", "female", np.random.default_rng(11))
    again = catalogue.normal_result("CBC", "female", np.random.default_rng(11))
    other = catalogue.normal_result("CBC", "female", np.random.default_rng(12))
    assert first == again
    assert first != other
    with pytest.raises(KeyError):
        catalogue.normal_result("quantum flux scan", "male", np.random.default_rng(0))


def test_non_lab_exams_have_normal_text(catalogue):
    for exam in catalogue:
        if exam.kind not in LAB_KINDS:
            assert exam.normal_text and len(exam.normal_text) > 10, exam.name
    cxr = catalogue.resolve("CXR")
    assert catalogue.normal_result(cxr, "male", np.random.default_rng(0)) == []
    assert "pneumothorax" in cxr.normal_text


@pytest.mark.parametrize(("exam", "category"), [
    ("CBC", "lab"), ("lipase", "lab"), ("blood cultures", "microbiology"), ("CXR", "imaging"), ("EGD", "imaging"),
    ("ECG", "ecg"), ("bladder scan", "bedside"), ("abdominal exam", "bedside"), ("skin punch biopsy", "pathology"),
    ("EEG", "other"),
])
def test_result_category(catalogue, exam, category):
    assert catalogue.resolve(exam).test_category() == category


# ---------------------------------------------------------------------------------------------------------------------
# Normalisation and validation

def test_exam_words_normalises_requests():
    assert exam_words("Please order a STAT chest X-rays") == ("chest", "x", "ray")
    assert exam_words("Haemoglobin") == exam_words("hemoglobin")
    assert exam_words("non-contrast CT head") == exam_words("noncontrast CT head") == ("without", "contrast", "ct", "head")
    assert exam_words("Hepatitis A IgM") == ("hepatitis", "a", "igm")  # only a leading "a" is an article


def _lab(name: str, *aliases: str, low: float = 1.0, high: float = 2.0) -> Component:
    return Component(name=name, aliases=aliases, unit="U/L", low=low, high=high)


def test_catalogue_validation_rejects_conflicts():
    a, b = _lab("Alpha"), _lab("Beta")
    Catalogue([Exam(name="Alpha test", kind="lab_test", components=(a,))])
    with pytest.raises(ValueError, match="belongs to both"):
        Catalogue([Exam(name="One", kind="lab_test", aliases=("shared",), components=(a,)),
                   Exam(name="Two", kind="lab_test", aliases=("Shared",), components=(b,))])
    with pytest.raises(ValueError, match="component alias"):
        Catalogue([Exam(name="One", kind="lab_test", components=(_lab("Alpha", "x1"),)),
                   Exam(name="Two", kind="lab_test", components=(_lab("Beta", "x1"),))])
    with pytest.raises(ValueError, match="defined twice"):
        Catalogue([Exam(name="One", kind="lab_test", components=(a,)),
                   Exam(name="Two", kind="lab_test", components=(_lab("Alpha", high=3.0),))])
    with pytest.raises(ValueError, match="two smallest panels"):
        Catalogue([Exam(name="One", kind="lab_test", components=(a,)),
                   Exam(name="Two", kind="lab_test", components=(a,))])
    with pytest.raises(ValueError, match="part_of"):
        Catalogue([Exam(name="One", kind="bedside", normal_text="Normal.", part_of="Nowhere")])


def test_model_validation_rejects_bad_entries():
    with pytest.raises(ValueError, match="not below"):
        _lab("Bad", low=5.0, high=1.0)
    with pytest.raises(ValueError, match="either a numeric range or a normal_text"):
        Component(name="Both", low=1.0, high=2.0, normal_text="negative")
    with pytest.raises(ValueError, match="open-ended"):
        Component(name="Open", low=1.0)
    with pytest.raises(ValueError, match="no value with 0 decimals"):
        Component(name="Narrow", low=1.1, high=1.4, decimals=0)
    with pytest.raises(ValueError, match="at least two components"):
        Exam(name="Panel", kind="lab_panel", components=(_lab("Alpha"),))
    with pytest.raises(ValueError, match="needs a normal_text"):
        Exam(name="Film", kind="imaging", components=(_lab("Alpha"),))
    with pytest.raises(ValueError, match="needs a normal_text"):
        Exam(name="Swab", kind="microbiology", components=(Component(name="Virus", normal_text="not detected"),))
    with pytest.raises(ValueError, match="exam_system"):
        Exam(name="Look", kind="physical_exam", normal_text="Normal.")


def test_json_loader_checks_component_references():
    component = {"name": "Alpha", "unit": "U/L", "low": 1, "high": 2}
    exam = {"name": "Alpha test", "kind": "lab_test", "components": ["Alpha"]}
    assert len(catalogue_from_json(json.dumps({"components": [component], "exams": [exam]}))) == 1
    with pytest.raises(ValueError, match="undefined components"):
        catalogue_from_json(json.dumps({"components": [component], "exams": [{**exam, "components": ["Beta"]}]}))
    with pytest.raises(ValueError, match="used by no exam"):
        catalogue_from_json(json.dumps({"components": [component, {**component, "name": "Beta"}], "exams": [exam]}))
