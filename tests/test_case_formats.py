"""Public case formats: each fixture loads to the expected fields, bad rows are reported by line, exports round-trip,
and every format's file plays in ClinicalInquiry-v1."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.cases import library, read_case_file
from clinical_gym.cases.formats import FORMAT_NAMES, cases_from_hf, detect_format, read_hf_rows, to_hf_dataset
from clinical_gym.cases.formats.demographics import demographics_from
from clinical_gym.cases.formats.diagnosis import CodedDiagnosis, code_diagnosis, specialty_for
from clinical_gym.cases.formats.findings import parse_lab_line, parse_mimic_line, parse_value, results_from_tree, vitals_from_text
from clinical_gym.cases.formats.text import clauses, patient_voice
from clinical_gym.cases.formatting import format_lab_value
from clinical_gym.cases.topics import SYMPTOM_NAMES

FIXTURES = Path(__file__).parent / "fixtures" / "case_formats"
OSCE, MTMED, DIAGGYM, MEDQA = (FIXTURES / n for n in ("osce.jsonl", "mtmeddialog.json", "diaggym.jsonl", "medqa.jsonl"))
ALL_FIXTURES = (OSCE, MTMED, DIAGGYM, MEDQA)


def load(path: Path, **kwargs):
    cases, problems = read_case_file(path, **kwargs)
    return {c.id: c for c in cases}, problems


def lines_of(problems: list[str], path: Path) -> list[int]:
    return [int(p.removeprefix(f"{path}:").split(":", 1)[0]) for p in problems]


def fact(case, text_start: str):
    return next(f for f in case.history if f.text.startswith(text_start))


# -- AgentClinic OSCE ---------------------------------------------------------------------------------------------
def test_osce_fixture_fields():
    cases, problems = load(OSCE)
    assert set(cases) == {"osce-1", "osce-2"}
    chole = cases["osce-1"]
    assert (chole.demographics.age, chole.demographics.sex) == (52, "female")
    assert chole.self_report == chole.chief_complaint == "Pain in the right upper abdomen"
    assert chole.diagnosis.name == "Acute cholecystitis" and chole.diagnosis.icd10 == "K81.0"
    assert chole.specialty == "digestive" and "K81.0 looked up from the diagnosis title" in chole.source
    negatives = fact(chole, "No chest pain")
    assert not negatives.present and negatives.category == "ros"
    assert set(negatives.topics) == {"chest_pain", "cough", "shortness_of_breath"}
    assert fact(chole, "No yellowing").topics == ("jaundice",)  # "Denies yellowing ..." in patient words
    assert fact(chole, "Feeling feverish").topics == ("onset", "fever") and fact(chole, "Feeling feverish").present  # "since this morning"
    assert fact(chole, "Her mother had gallstones").topics == ("family_history",)
    assert chole.past_history == ("Type 2 diabetes treated with metformin.", "No previous abdominal surgery.")
    assert chole.vitals is not None and (chole.vitals.temperature_c, chole.vitals.heart_rate, chole.vitals.spo2) == (38.4, 104, 97)
    assert "Palpation: Tender in the right upper quadrant" in chole.physical_exam["abdominal"]
    cbc = chole.test("complete blood count")
    wbc = next(v for v in cbc.values if v.name == "WBC")
    assert (wbc.value, wbc.unit, wbc.ref_low, wbc.ref_high, wbc.flag) == (14200, "/μL", 4000, 11000, "high")
    ultrasound = chole.test("imaging - abdominal ultrasound")  # the nested name is kept
    assert ultrasound.category == "imaging" and "pericholecystic fluid" in ultrasound.text
    graves = cases["osce-2"]
    assert graves.vitals is None and "138/64 mmHg" in graves.physical_exam["vitals"]  # no SpO2: kept as exam text
    assert graves.physical_exam["eye"].startswith("Inspection: Bilateral proptosis") and graves.specialty == "endocrine"
    tsh = graves.test("thyroid function tests").values[0]
    assert (tsh.text, tsh.unit, tsh.flag) == ("<0.01", "mIU/L", "low")
    assert graves.test("TSH receptor antibodies").values[0].text == "Positive"
    assert graves.test("ecg").category == "ecg"
    assert lines_of(problems, OSCE) == [4, 5, 6]
    assert "Correct_Diagnosis: Field required" in problems[0] and "invalid JSON" in problems[1] and "no patient age and sex" in problems[2]


# -- MTMedDialog -------------------------------------------------------------------------------------------------
def test_mtmeddialog_fixture_fields():
    cases, problems = load(MTMED)
    assert set(cases) == {"mtmeddialog-2", "mtmeddialog-51"}  # ids from the line each record starts on
    ulcer = cases["mtmeddialog-2"]
    assert (ulcer.demographics.age, ulcer.demographics.sex) == (41, "male")
    assert ulcer.self_report == "Burning pain in the upper belly for two weeks, worse at night"
    assert ulcer.specialty == "digestive" and ulcer.diagnosis.icd10.startswith("K26")
    assert ulcer.recommendation.startswith("Stop ibuprofen")
    denial = fact(ulcer, "No, nothing like that.")
    assert not denial.present and set(denial.symptoms) == {"blood_in_stool", "hematemesis"}  # from the question asked
    assert fact(ulcer, "About ten cigarettes").category == "social" and fact(ulcer, "About ten cigarettes").topics == ("smoking",)
    assert fact(ulcer, "It eases for a while").topics[-1] == "abdominal_pain"
    assert sum(f.text.startswith("Burning pain in the upper belly") for f in ulcer.history) == 1  # description not repeated
    pneumonia = cases["mtmeddialog-51"]
    assert pneumonia.specialty == "respiratory" and (pneumonia.demographics.age, pneumonia.demographics.sex) == (67, "female")
    assert fact(pneumonia, "I have type 2 diabetes").category == "past_history"
    assert lines_of(problems, MTMED) == [76, 87]
    assert "diagnosis: Field required" in problems[0] and "no patient age and sex" in problems[1]


# -- DiagGym -----------------------------------------------------------------------------------------------------
def test_diaggym_fixture_fields():
    cases, problems = load(DIAGGYM)
    pyelo, pe = cases["diag-pyelo-001"], cases["diag-pe-002"]
    assert (pyelo.demographics.age, pyelo.demographics.sex) == (34, "female")
    assert pyelo.diagnosis.icd10 == "N10" and pyelo.specialty == "renal"
    assert [(r.criterion, r.points) for r in pyelo.rubrics] == [("Orders a urinalysis", 5.0), ("Sends a urine culture before starting antibiotics", 4.0)]
    assert pyelo.key_exams == ("Urinalysis", "Urine culture")
    assert pyelo.allergies == ("No known drug allergies.",) and fact(pyelo, "No known drug").present is False
    ua = pyelo.test("urinalysis")
    assert [v.name for v in ua.values] == ["Leukocyte Esterase", "Nitrite", "White Blood Cells"]
    assert ua.values[2].flag == "high" and ua.text == "White cell casts seen."
    neut = next(v for v in pyelo.test("complete blood count").values if v.name == "Neutrophils")
    assert (neut.value, neut.unit, neut.ref_low, neut.ref_high, neut.flag) == (86.0, "%", 40.0, 75.0, "high")
    assert pyelo.test("urine culture").category == "microbiology"
    assert fact(pyelo, "No vaginal discharge").category == "ros"
    assert (pe.demographics.age, pe.demographics.sex) == (58, "male")
    assert pe.diagnosis.icd10 == "I26.99" and "I26.99 as given" in pe.source
    assert pe.test("CT pulmonary angiography").category == "imaging"
    assert lines_of(problems, DIAGGYM) == [3, 4, 5]
    assert "exam_chain" in problems[0] and "final_diagnosis" in problems[1] and "expected a JSON object" in problems[2]


# -- MedQA -------------------------------------------------------------------------------------------------------
def test_medqa_fixture_fields():
    cases, problems = load(MEDQA)
    assert set(cases) == {"medqa-1", "mcq-inferior-mi", "medqa-4"}
    cystitis = cases["medqa-1"]
    assert cystitis.diagnosis.name == "Acute cystitis" and cystitis.diagnosis.icd10 == "N30.0"
    assert "Acute pyelonephritis" in cystitis.differential and "Acute cystitis" not in cystitis.differential
    assert cystitis.self_report == "Burning on urination and needing to pass urine every hour"  # "... because of a 2-day history of ..."
    assert fact(cystitis, "Burning on urination for 2 days").topics == ("duration", "dysuria")
    assert not fact(cystitis, "She has had no fever").present
    assert fact(cystitis, "Her last menstrual period").category == "gynecologic"
    assert not any("Which of the following" in f.text for f in cystitis.history)
    assert [v.text for v in cystitis.test("urinalysis").values] == ["positive", "positive", "25-30/hpf"]
    assert "suprapubic tenderness" in cystitis.physical_exam["abdominal"]
    mi = cases["mcq-inferior-mi"]  # list options, integer answer_idx counted from 0
    assert mi.diagnosis.name == "Inferior wall myocardial infarction" and mi.specialty == "circulatory"
    assert mi.vitals is not None and (mi.vitals.heart_rate, mi.vitals.systolic_bp, mi.vitals.spo2) == (52, 100, 95)
    assert mi.test("ECG").category == "ecg" and "aVF" in mi.test("ECG").text
    assert mi.family_history == ("His father died of a heart attack at the age of 60 years.",)
    assert mi.social_history == ("He has smoked one pack of cigarettes daily for 30 years.",)
    kawasaki = cases["medqa-4"]  # answer given as a letter; the ICD-10-CM Alphabetic Index codes the name (M30.3)
    assert kawasaki.diagnosis.icd10 == "M30.3" and "M30.3 looked up from the diagnosis title" in kawasaki.source
    assert kawasaki.specialty == "musculoskeletal" and (kawasaki.demographics.age, kawasaki.demographics.sex) == (3, "male")
    platelets = next(v for v in kawasaki.test("Laboratory studies").values if v.name == "Platelet count")
    assert (platelets.value, platelets.unit) == (520000, "/mm3")
    assert kawasaki.physical_exam["vitals"].startswith("His temperature is 39.6°C")
    assert lines_of(problems, MEDQA) == [3, 5, 6]
    assert "something other than a diagnosis" in problems[0] and "not one of the options" in problems[1] and "options" in problems[2]


def test_a_repeated_case_id_is_a_bad_row(tmp_path):
    row = DIAGGYM.read_text().splitlines()[0]
    path = tmp_path / "twice.jsonl"
    path.write_text(f"{row}\n{row}\n")
    cases, problems = read_case_file(path)
    assert [c.id for c in cases] == ["diag-pyelo-001"]
    assert problems == [f"{path}:2: duplicate case id 'diag-pyelo-001' (first on line 1)"]


def test_medqa_answer_fields_must_agree():
    row = {"question": "A 30-year-old man comes to the physician because of a red, hot, swollen big toe since last night. "
                       "Which of the following is the most likely diagnosis?",
           "options": {"A": "Gout", "B": "Cellulitis"}, "answer": "Gout", "answer_idx": "B"}
    cases, problems = read_hf_rows([row], "inline")
    assert not cases and problems == ["inline:1: answer 'Gout' and answer_idx 'B' disagree"]


# -- format selection ----------------------------------------------------------------------------------------------
def test_explicit_format_and_detection():
    detected, _ = read_case_file(MEDQA)
    assert read_case_file(MEDQA, format="medqa")[0] == detected
    wrong, problems = read_case_file(MEDQA, format="osce")
    assert not wrong and len(problems) == 6 and all("OSCE_Examination: Field required" in p for p in problems)
    with pytest.raises(ValueError, match="unknown case format 'csv'"):
        read_case_file(MEDQA, format="csv")
    assert FORMAT_NAMES == ("native", "osce", "mimiciv", "nejm", "mtmeddialog", "diaggym", "medqa", "hf")
    assert detect_format(library()[0].model_dump(mode="json")) == "native"
    assert detect_format({"question": "?", "options": []}) == "medqa"
    assert detect_format({"something": "else"}) is None  # in no format: read_case_file says which were tried


def test_a_broken_json_array_keeps_the_rows_before_the_error(tmp_path):
    good = json.loads(MTMED.read_text())[0]
    path = tmp_path / "dialogues.json"
    path.write_text(json.dumps([good], indent=2)[:-2] + ",\n  {\"self_report\": oops}\n]\n")
    cases, problems = read_case_file(path)
    assert len(cases) == 1 and len(problems) == 1 and "invalid JSON" in problems[0] and f"{path}:" in problems[0]


# -- exports round-trip ----------------------------------------------------------------------------------------------
def test_hf_dataset_round_trip_and_saved_folder(tmp_path):
    cases = list(library()[:5]) + [c for f in ALL_FIXTURES for c in read_case_file(f)[0]]
    dataset = to_hf_dataset(cases)
    assert dataset.num_rows == len(cases) and dataset.features["history"].dtype == "string"
    assert dataset.features["past_history"].feature.dtype == "string"
    assert json.loads(dataset[0]["diagnosis"])["icd10"] == cases[0].diagnosis.icd10
    assert cases_from_hf(dataset) == cases
    dataset.save_to_disk(str(tmp_path / "ds"))
    reloaded, problems = read_case_file(tmp_path / "ds")
    assert reloaded == cases and not problems


def test_hf_rows_in_a_public_format_and_bad_rows():
    import datasets

    rows = [json.loads(line) for line in MEDQA.read_text().splitlines()[:2]]
    rows[1]["answer_idx"] = 7  # out of range for 5 options
    dataset = datasets.Dataset.from_list([{k: r.get(k) for k in ("question", "options", "answer", "answer_idx")} for r in rows[:1]])
    assert [c.diagnosis.name for c in cases_from_hf(dataset)] == ["Acute cystitis"]
    with pytest.warns(UserWarning, match=r"skipped 1 bad dataset rows: dataset:2: answer_idx 7 is out of range"):
        assert len(cases_from_hf(rows)) == 1
    with pytest.raises(TypeError, match="one split"):
        cases_from_hf(datasets.DatasetDict({"train": dataset}))


def test_a_folder_that_is_not_a_dataset_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="is a folder"):
        read_case_file(tmp_path)


def test_datasets_is_not_imported_with_clinical_gym():
    code = "import sys, clinical_gym, clinical_gym.cases.formats; print('datasets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- environments take any source ------------------------------------------------------------------------------------
@pytest.mark.parametrize("source", ["osce", "mtmeddialog", "diaggym", "medqa", "hf"])
def test_clinical_inquiry_plays_each_format(source, tmp_path):
    if source == "hf":
        to_hf_dataset(read_case_file(OSCE)[0]).save_to_disk(str(tmp_path / "hf"))
        path = tmp_path / "hf"
    else:
        path = next(f for f in ALL_FIXTURES if f.name.startswith(source))
    case = read_case_file(path)[0][0]
    symptom_fact = next(f for f in case.history if f.present and f.symptoms and f.category == "hpi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fixtures' broken rows are reported as a warning
        env = gym.make("ClinicalInquiry-v1", cases=str(path))
    obs, info = env.reset(seed=0, options={"case_id": case.id})
    assert obs.startswith(f"Patient's description: {case.self_report}")
    question = f"<think>t</think><answer>Question: Have you had any {SYMPTOM_NAMES[symptom_fact.symptoms[0]]}?</answer>"
    obs, reward, terminated, truncated, info = env.step(question)
    assert "Turn 1/10." in obs and not terminated and info["reply_kind"] == "answered" and info["facts_revealed"] >= 1
    reply = obs.split("\nTurn")[0]
    assert any(f.text in reply for f in case.history if f.present and symptom_fact.symptoms[0] in f.symptoms)
    obs, reward, terminated, truncated, info = env.step(f"<answer>Diagnosis: {case.diagnosis.name}\nRecommendation: treat</answer>")
    assert terminated and info["outcome"]["gold_diagnosis"] == case.diagnosis.name
    env.close()


# -- the pieces --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,expected", [
    ("12,000 /μL", (12000, "/μL", None, None, "normal")),
    ("5.8 mmol/L (3.5-5.0)", (5.8, "mmol/L", 3.5, 5.0, "high")),
    ("150 mg/dL (normal <100)", (150, "mg/dL", None, 100, "high")),
    ("36.6°C", (36.6, "°C", None, None, "normal")),
    ("4.2 x 10^9/L", (4.2, "x 10^9/L", None, None, "normal")),
])
def test_value_unit_text_becomes_a_lab_value(text, expected):
    v = parse_value("X", text)
    assert (v.value, v.unit, v.ref_low, v.ref_high, v.flag) == expected


@pytest.mark.parametrize("text", ["125/80 mmHg", "3 days ago", "Positive", "2 cm mass in the right lobe", "25-30/hpf"])
def test_text_that_is_not_one_value_stays_text(text):
    assert parse_value("X", text) is None


def test_mimic_lines_round_trip_through_the_formatter():
    """Every library lab value that its MIMIC-style line fully describes is read back unchanged."""
    checked = 0
    for case in library():
        for v in (v for t in case.tests for v in t.values):
            lossless = (v.value is None) != (v.text is None) and not (v.value is None and v.flag in ("high", "low"))
            if lossless and not (v.value is not None and v.flag == "abnormal" and v.ref_low is not None):
                assert parse_mimic_line(format_lab_value(v)) == v
                checked += 1
    assert checked > 500
    assert parse_lab_line("Leukocyte count: 11,500/mm3").value == 11500 and parse_lab_line("Chest clear") is None


def test_vitals_from_text_need_all_six_and_convert_fahrenheit():
    text = "Temp 101.3°F, pulse 112/min, respirations 22/min, blood pressure 96/58 mm Hg, pulse oximetry shows an oxygen saturation of 93%."
    v = vitals_from_text(text)
    assert (v.temperature_c, v.heart_rate, v.respiratory_rate, v.systolic_bp, v.diastolic_bp, v.spo2) == (38.5, 112, 22, 96, 58, 93)
    assert vitals_from_text("Temperature 37°C, pulse 80/min") is None


def test_nested_results_become_panels_or_separate_reports_and_keep_their_names():
    tests = results_from_tree("Results", {"Urinalysis": {"Nitrite": "Positive", "Protein": "Trace"},
                                        "Imaging": {"Chest_X-ray": "Right lower lobe consolidation.", "CT_Head": "No acute findings."}})
    assert [(t.name, t.category) for t in tests] == [("Results - Urinalysis", "lab"), ("Results - Imaging - Chest X-ray", "imaging"),
                                                     ("Results - Imaging - CT Head", "imaging")]
    assert [v.text for v in tests[0].values] == ["Positive", "Trace"]
    # a study's report fields are one test named by the study, never a test called "Findings"
    reports = results_from_tree("Imaging", {"Chest_CT": {"Findings": "Normal, no thymoma."}, "MRI_Brain": {"Findings": "Lesions.", "Comments": "T2."}})
    assert [(t.name, t.text) for t in reports] == [("Imaging - Chest CT", "Normal, no thymoma."),
                                                   ("Imaging - MRI Brain", "Findings: Lesions.\nComments: T2.")]
    # a folder's loose results stay under the folder's name; placeholders are no result
    work = results_from_tree("Blood Work", {"Complete_Blood_Count": {"WBC": "Elevated"}, "LDH": "Elevated", "CRP": "Not Provided"})
    assert [t.name for t in work] == ["Blood Work - LDH", "Blood Work - Complete Blood Count"]
    nested = results_from_tree("Blood Tests", {"Sodium": "131 mmol/L", "Iron_Studies": {"Ferritin": "8 ng/mL"}})[0]
    assert [v.name for v in nested.values] == ["Sodium", "Iron Studies - Ferritin"]


def test_denials_are_split_from_statements():
    assert clauses("Has a cough but no fever") == [("Has a cough", False), ("no fever", True)]
    assert clauses("She has had no fever, flank pain, or vaginal discharge.")[0][1] is True
    assert patient_voice("Patient denies chest pain") == "No chest pain."
    assert patient_voice("She reports palpitations") == "Palpitations."


def test_demographics_and_diagnosis_defaults():
    d = demographics_from("Cough for 3 days (male, 37 years old)")
    assert (d.age, d.sex) == (37, "male")  # "3 days" is not an age
    assert demographics_from("A 6-month-old girl is brought in").age == 0
    assert demographics_from("", age="61", sex="F").sex == "female"
    with pytest.raises(ValueError, match="no patient age"):
        demographics_from("Painful knee, female")
    assert code_diagnosis("Acute appendicitis").how == "looked up" and code_diagnosis("Acute appendicitis").icd10.startswith("K35")
    assert code_diagnosis("Zorblatt disease").icd10 == "R69"
    assert code_diagnosis("anything", "j18.9").icd10 == "J18.9"
    assert specialty_for(code_diagnosis("Zorblatt disease"), ["cough"]) == "respiratory"
    assert specialty_for(code_diagnosis("Acute appendicitis"), [], "Heart Diseases") == "circulatory"


@pytest.mark.parametrize("code, specialty", [("Q25.0", "circulatory"), ("Q20.0", "circulatory"), ("Q28.9", "circulatory"),
                                             ("Q30.0", "respiratory"), ("Q40.0", "digestive"), ("Q43.1", "digestive"),
                                             ("Q05.9", "neurological"), ("Q61.3", "renal"), ("Q64.1", "genitourinary"),
                                             ("Q90.9", "pediatric")])
def test_congenital_malformations_are_filed_by_organ_system(code, specialty):
    """ICD-10-CM chapter 17 by block: a patent ductus arteriosus is circulatory (it fell through to 'infectious')."""
    assert specialty_for(CodedDiagnosis(code, "given"), ["fever"]) == specialty
    assert specialty_for(code_diagnosis("Patent ductus arteriosus"), []) == "circulatory"


# -- the public formats of the written 30-row files ------------------------------------------------------------------
def test_nejm_image_cases_keep_the_image_and_read_the_brief_and_findings():
    cases, problems = load(FIXTURES / "agentclinic_nejm.jsonl")
    assert not problems and len(cases) >= 30
    lyme = cases["agentclinic_nejm-2"]
    assert lyme.images == ("https://images.example.org/image-challenge/ic-002.jpg",) and "image https://" in lyme.source
    assert lyme.source.startswith("AgentClinic NEJM") and lyme.diagnosis.name == "Erythema migrans"
    assert lyme.differential == ("Tinea corporis", "Cellulitis", "Fixed drug eruption", "Granuloma annulare")
    assert lyme.self_report == "Expanding red patch on my right thigh" and (lyme.demographics.age, lyme.demographics.sex) == (34, "female")
    texts = [f.text for f in lyme.history]
    assert "I went hiking in the woods three weeks ago." in texts  # the brief, in the patient's own first person
    assert not any("role" in t or "Remember" in t for t in texts)  # without its framing
    serology = lyme.test("lyme serology")
    assert [(v.name, v.text) for v in serology.values] == [("Enzyme immunoassay", "Positive"), ("IgM immunoblot", "Positive")]
    wilson = cases["agentclinic_nejm-6"]
    assert wilson.test("mri of the brain").category == "imaging"  # named after the labs, still its own test
    assert next(v for v in wilson.test("laboratory studies").values if v.name == "Serum ceruloplasmin").ref_low == 20
    assert "(shown)" not in wilson.physical_exam["general"] and wilson.test("serum") is None  # no copy of a measured result


def test_mimiciv_results_are_gathered_by_specimen_and_placeholders_dropped():
    cases, problems = load(FIXTURES / "agentclinic_mimiciv.jsonl")
    assert not problems and len(cases) >= 30
    cellulitis = cases["agentclinic_mimiciv-2"]
    assert cellulitis.source.startswith("AgentClinic MIMIC-IV") and cellulitis.diagnosis.icd10 == "L03.116"
    blood = cellulitis.test("blood tests")
    assert [v.name for v in blood.values][:4] == ["White Blood Cells", "Hemoglobin", "Platelet Count", "Neutrophils"]
    assert "BMI: 38.2" in cellulitis.physical_exam["vitals"] and cellulitis.test("bmi") is None
    pneumonia = cases["agentclinic_mimiciv-4"]
    assert pneumonia.test("procalcitonin") is None and not any("Not Provided" in t.text for t in pneumonia.tests)
    csf = cases["agentclinic_mimiciv-14"].test("cerebrospinal fluid tests")
    assert [v.name for v in csf.values] == ["WBC", "Lymphs", "Polys", "Glucose", "Total Protein"]
    assert detect_format(json.loads((FIXTURES / "agentclinic_mimiciv.jsonl").read_text().splitlines()[0])) == "mimiciv"
    assert detect_format(json.loads((FIXTURES / "agentclinic_osce.jsonl").read_text().splitlines()[0])) == "osce"


def test_diagbench_objects_keyed_by_id_keep_rubrics_and_exam_lists(tmp_path):
    cases, problems = load(FIXTURES / "diagbench.json")
    assert not problems and len(cases) >= 30
    appendix, stemi = cases["db-001"], cases["db-002"]
    assert appendix.source.startswith("DiagGym/DiagBench (diagbench.json:2)")  # the line the record starts on
    assert appendix.key_exams == ("Complete Blood Count", "CT abdomen and pelvis with contrast")
    assert stemi.key_exams == ("ECG", "Troponin T", "Basic Metabolic Panel", "Cardiac catheterization")  # the exam chain
    assert [r.points for r in stemi.rubrics] == [10.0, 8.0, 10.0, 6.0] and sum(len(c.rubrics) > 0 for c in cases.values()) >= 12
    dka = cases["db-006"]  # DiagAgent's initial-inquiry text as the profile
    assert (dka.demographics.age, dka.demographics.sex) == (24, "male") and dka.self_report == "Polyuria, vomiting and abdominal pain"
    masked = {"x-1": {"initial_inquiry": "- Patient Information: ___ y/o F\n- Chief Complaint: Cough", "exam_chain": [], "final_diagnosis": "Asthma"},
              "x-2": {"profile": {"sex": "F", "age": 40, "hpi": "Cough."}, "final_diagnosis": "Asthma", "rubrics": [{"criterion": "x", "points": 40}]}}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(masked, indent=1))
    assert read_case_file(path) == ([], [f"{path}:2: no patient age found: the age is de-identified ('___ y/o'); give an 'age' field",
                                          f"{path}:7: rubrics.1: needs a criterion text and numeric points between -10 and 10 "
                                          "({'criterion': 'x', 'points': 40})"])


def test_diaggym_records_read_one_item_mimic_results_and_study_names():
    """DiagGym's events are one lab item each ("Anion Gap": "Value: 16; Numeric Value: 16.0; Units: mEq/L; ...") and
    MIMIC study names ("CHEST (PA AND LAT)", "CTA CHEST", "RENAL U.S."): values and categories are read from them."""
    cases, problems = load(FIXTURES / "diaggym_records.jsonl")
    assert not problems and len(cases) >= 30
    pancreatitis = cases["12834091-DS-14"]
    (lipase,) = pancreatitis.test("Lipase").values
    assert (lipase.name, lipase.value, lipase.unit, lipase.ref_high, lipase.flag) == ("Lipase", 2150.0, "IU/L", 60.0, "high")
    assert pancreatitis.test("Lipase").category == "lab" and pancreatitis.test("CT ABD & PELVIS WITH CONTRAST").category == "imaging"
    categories = {t.name: t.category for c in cases.values() for t in c.tests}
    for name in ("CHEST (PA AND LAT)", "CHEST (PORTABLE AP)", "CTA CHEST", "RENAL U.S.", "LIVER OR GALLBLADDER US (SINGLE ORGAN)",
                 "UNILAT LOWER EXT VEINS LEFT", "TRANSTHORACIC ECHO", "KNEE (2 VIEWS) RIGHT", "MRCP", "EGD"):
        assert categories[name] == "imaging", name
    assert categories["BLOOD CULTURE"] == "microbiology" and categories["WBC, Ascites"] == "lab" and categories["EKG"] == "ecg"
    assert all(t.category != "other" for c in cases.values() for t in c.tests)
    ketone = cases["19033572-DS-11"].test("Ketone").values[0]  # no reference range: the record's flag is kept
    assert (ketone.value, ketone.flag) == (150.0, "abnormal")
    inquiry = cases["15502267-DS-9"]  # DiagAgent's initial-inquiry text
    assert (inquiry.demographics.age, inquiry.demographics.sex) == (71, "female") and inquiry.medications == ("Metformin, levothyroxine.",)


def test_a_file_in_no_known_format_names_every_format_tried(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text('{"title": "chest pain", "notes": "x"}\n')
    cases, problems = read_case_file(path)
    assert not cases and len(problems) == 1
    assert problems[0].startswith(f"{path}:1: not in a known case format; tried native (id: Field required")
    for name in ("osce (OSCE_Examination: Field required)", "mimiciv", "nejm (question: Field required", "mtmeddialog", "diaggym", "medqa"):
        assert name in problems[0]


@pytest.mark.parametrize("opening,self_report,facts", [
    ("A 23-year-old woman presents with fever, dysuria and right flank pain for 2 days.", "Fever, dysuria and right flank pain",
     ["Fever for 2 days.", "Dysuria for 2 days.", "Right flank pain for 2 days."]),
    ("A 45-year-old man comes to the emergency department 2 hours after the onset of severe chest pain.", "Severe chest pain",
     ["Severe chest pain for 2 hours."]),
    ("A 3-year-old boy is brought to the physician by his mother because of a rash for 3 days.", "Rash", ["Rash for 3 days."]),
    ("A 60-year-old man with a history of hypertension presents with chest pain.", "Chest pain", ["Chest pain."]),
    ("A 34-year-old woman comes to the physician because of a 3-week history of fatigue and joint pain.", "Fatigue and joint pain",
     ["Fatigue for 3 weeks.", "Joint pain for 3 weeks."]),
    ("A 41-year-old woman comes to the clinic with pain in her right knee since yesterday.", "Pain in my right knee",
     ["Pain in my right knee since yesterday."]),
    ("A 65-year-old woman comes to the physician for a follow-up examination. She has had increasing fatigue for 4 months.",
     "Increasing fatigue", ["Increasing fatigue for 4 months."]),
])
def test_medqa_presenting_complaints_from_the_common_phrasings(opening, self_report, facts):
    row = {"question": f"{opening} Her temperature is 37.0°C. Which of the following is the most likely diagnosis?",
           "options": {"A": "Migraine", "B": "Gout"}, "answer": "Gout"}
    cases, problems = read_hf_rows([row])
    assert not problems and cases[0].self_report == self_report
    assert [f.text for f in cases[0].history][: len(facts)] == facts and all(f.present for f in cases[0].history[: len(facts)])


def test_cases_show_prints_images_and_rubrics():
    from clinical_gym.cli.cases import render_case

    nejm = load(FIXTURES / "agentclinic_nejm.jsonl")[0]["agentclinic_nejm-1"]
    assert "Images: https://images.example.org/image-challenge/ic-001.jpg" in render_case(nejm)
    stemi = load(FIXTURES / "diagbench.json")[0]["db-002"]
    assert "Rubrics (4):\n  [10] Obtains an ECG within 10 minutes of arrival" in render_case(stemi)
