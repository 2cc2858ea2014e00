"""DiagnosticWorkup's world model looks in the record first: every recorded result comes back by its own names
(recorded, nested, group, generic and catalogue names), a recorded result is never replaced by a synthesised one,
and what is synthesised follows the diagnosis where the disease table says how the exam changes."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.cases import Case, Diagnosis, LabValue, library, read_case_file
from clinical_gym.cases import TestResult as Result  # not collected as a test class
from clinical_gym.cases.disease_table import disease_for
from clinical_gym.cases.formats import convert_rows
from clinical_gym.cases.formatting import format_test_result
from clinical_gym.domains.workup.world_model import RecordWorldModel

FIXTURES = Path(__file__).parent / "fixtures" / "case_formats"
RECORD_FILES = ("agentclinic_osce.jsonl", "agentclinic_nejm.jsonl", "agentclinic_mimiciv.jsonl", "medqa_vignettes.jsonl", "diaggym_records.jsonl",
                "diagbench.json")


def world(case: Case, seed: int = 0) -> RecordWorldModel:
    wm = RecordWorldModel()
    wm.reset(case, seed)
    return wm


def osce_case(results: dict, diagnosis: str = "Congenital rubella syndrome") -> Case:
    row = {"OSCE_Examination": {"Patient_Actor": {"Demographics": "2-month-old girl", "Symptoms": {"Primary_Symptom": "Not feeding well"}},
                                "Physical_Examination_Findings": {"Cardiac_Examination": {"Murmur": "Continuous machinery murmur."}},
                                "Test_Results": results, "Correct_Diagnosis": diagnosis}}
    cases, problems = convert_rows([(1, row)], "inline.jsonl", "osce")
    assert not problems, problems
    return cases[0]


def test_every_recorded_result_of_the_public_format_files_comes_back_by_its_own_names():
    tried = 0
    for name in RECORD_FILES:
        for case in read_case_file(FIXTURES / name)[0]:
            wm = world(case)
            for test in case.tests:
                for order in {test.name, test.name.rsplit(" - ", 1)[-1]}:
                    got = wm.result(order, [])
                    assert got.source == "record" and format_test_result(test) in got.text, (case.id, order, got)
                    tried += 1
    assert tried > 450


@pytest.mark.parametrize("name", ["Blood Tests", "Blood Work", "Imaging", "Serum Biochemistry", "Biopsy", "TORCH Screen", "Anoscopy",
                                  "Barium Enema", "Ophthalmologic Consult"])
def test_names_the_catalogue_does_not_know_find_the_recorded_result(name):
    """The AgentClinic names that used to answer "is not a recognised examination"."""
    case = osce_case({name.replace(" ", "_"): {"Findings": f"Recorded {name.lower()} result: abnormal."}})
    got = world(case).result(name, [])
    assert got.source == "record" and got.text == f"Recorded {name.lower()} result: abnormal.", got


def test_a_recorded_abnormal_result_is_never_synthesised_normal():
    pml = osce_case({"MRI_Brain": {"Findings": "Multifocal white-matter lesions without enhancement.", "Comments": "No mass effect."}},
                    "Progressive multifocal leukoencephalopathy")
    pda = osce_case({"Echocardiogram": {"Findings": "Patent ductus arteriosus"}, "TORCH_Screen": {"Rubella_IgM": "Positive", "Others": "Negative"}})
    for order in ("MRI Brain", "MRI head", "mri of the brain", "Brain MRI"):
        got = world(pml).result(order, [])
        assert got.source == "record" and "Multifocal white-matter lesions" in got.text, order
    for order in ("Echocardiogram", "echo", "Transthoracic echocardiogram", "TTE"):
        got = world(pda).result(order, [])
        assert got.source == "record" and got.text == "Patent ductus arteriosus", order
    assert world(pda).result("Rubella IgM", []).text == "Rubella IgM: Value: Positive"  # a value by its own name
    assert world(pda).result("TORCH", []).source == "record"  # generic words ("screen") may be left out
    assert world(pda).result("cardiovascular examination", []).text == "Murmur: Continuous machinery murmur."


def test_group_orders_return_the_recorded_group():
    case = osce_case({"Blood_Work": {"Complete_Blood_Count": {"WBC": "Elevated", "Hemoglobin": "Slightly decreased"}, "LDH": "Elevated"},
                      "Imaging": {"CT_Chest": {"Findings": "Mediastinal nodes."}, "Abdominal_X-ray": {"Findings": "Normal gas pattern."}},
                      "Urinalysis": {"Protein": "Negative", "Blood": "Negative"}})
    wm = world(case)
    group = wm.result("Blood Work", [])
    assert group.source == "record" and "Blood Work - LDH" in group.text and "Blood Work - Complete Blood Count" in group.text
    imaging = wm.result("imaging", [])
    assert "Mediastinal nodes." in imaging.text and "Normal gas pattern." in imaging.text
    bloods = wm.result("blood tests", [])  # a doctor's group word: the blood labs, not the urinalysis
    assert "LDH" in bloods.text and "Protein" not in bloods.text
    assert wm.result("Chest CT", []).text == "Mediastinal nodes."  # by its nested part
    assert wm.result("CBC", []).text.startswith("WBC: Value: Elevated")  # by a catalogue alias of the nested part
    assert wm.result("hemoglobin", []).text == "Hemoglobin: Value: Slightly decreased"  # a component by its own name


def test_a_panel_the_record_holds_in_part_keeps_its_recorded_values():
    case = osce_case({"Hemoglobin_Blood": "7.1", "Platelet_Count_Blood": "62"})  # MIMIC-IV style: a "Blood tests" panel
    got = world(case).result("Complete blood count", [])
    assert got.source == "record+synthesised" and got.exam == "Complete blood count"
    lines = got.text.splitlines()
    assert "Hemoglobin: Value: 7.1; Numeric Value: 7.1" in lines and "Platelet Count: Value: 62; Numeric Value: 62" in lines
    assert any(line.startswith("White blood cells: Value:") for line in lines)  # the rest is synthesised


def test_unrecorded_exams_follow_the_diagnosis_found_by_icd10_category():
    """"Hypostatic pneumonia" (J18.2) is not in the disease table by name or code, but its ICD-10-CM category is
    community-acquired pneumonia's: a chest X-ray shows consolidation, not the catalogue's normal film."""
    base = next(c for c in library() if c.diagnosis.name == "Community-acquired pneumonia")
    case = base.model_copy(update={"diagnosis": Diagnosis(name="Hypostatic pneumonia", icd10="J18.2"),
                                   "tests": tuple(t for t in base.tests if "x-ray" not in t.name.lower())})
    assert disease_for(case.diagnosis).name == "Community-acquired pneumonia"
    got = world(case).result("Chest X-ray", [])
    assert got.source == "synthesised" and "opacity in the right lower lobe" in got.text


def test_unknown_orders_suggest_recorded_names_first():
    case = osce_case({"Anoscopy": {"Findings": "Thrombosed external haemorrhoid at 3 o'clock."}})
    assert world(case).result("Anoscpy", []).source == "record"  # one typo away from a recorded name
    got = world(case).result("Anoscpy canal", [])
    assert got.source == "unknown" and got.suggestions[0] == "Anoscopy"
    enema = osce_case({"Barium_Enema": {"Findings": "Transition zone in the rectosigmoid."}})
    assert world(enema).result("Barium enemma study of colon", []).source == "record"  # the catalogue's contrast enema


def test_clinical_inquiry_test_orders_use_the_same_record_lookup():
    case = osce_case({"TORCH_Screen": {"Rubella_IgM": "Positive"}, "Echocardiogram": {"Findings": "Patent ductus arteriosus"}})
    env = gym.make("ClinicalInquiry-v1", allow_tests=True, cases=[case])
    env.reset(seed=0)
    obs, *_ = env.step("<answer>Test: echo</answer>")
    assert obs.startswith("Transthoracic echocardiogram:\nPatent ductus arteriosus")
    obs, *_ = env.step("<answer>Test: TORCH</answer>")
    assert "Rubella IgM: Value: Positive" in obs
    env.close()


def test_recorded_values_win_over_a_disease_shift():
    base = next(c for c in library() if c.id == "dig-appendicitis-01")
    cbc = Result(name="Blood tests", category="lab", values=(LabValue(name="White Blood Cells", value=6.1, unit="K/uL", ref_low=4, ref_high=11),))
    case = base.model_copy(update={"tests": (cbc,)})
    for seed in range(5):
        line = next(l for l in world(case, seed).result("CBC", []).text.splitlines() if l.startswith("White Blood Cells"))
        assert "Value: 6.1" in line  # appendicitis raises the WBC, but this patient's record says 6.1


def test_a_value_recorded_in_a_group_answers_the_catalogue_test_it_is():
    """A recorded "Blood Work - TSH" (a one-component test to the catalogue) answers "Thyroid stimulating hormone"
    and the TSH of "Thyroid function tests": a suppressed TSH is never synthesised normal. A CSF white count is not
    the blood count's."""
    case = osce_case({"Blood_Work": {"TSH": "0.01 mIU/L (0.4-4.0)", "Troponin": "2.4 ng/mL (<0.04)"},
                      "Lumbar_Puncture": {"WBC": "1,200 cells/μL"}}, "Graves disease")
    wm = world(case)
    for order in ("Thyroid stimulating hormone", "Thyroid function tests"):
        got = wm.result(order, [])
        assert got.source in ("record", "record+synthesised") and "TSH: Value: 0.01" in got.text, (order, got)
    assert "Troponin: Value: 2.4" in wm.result("High-sensitivity troponin", []).text
    cbc = wm.result("Complete blood count", [])
    assert cbc.source == "synthesised" and "1200" not in cbc.text
    bloods = wm.result("blood tests", [])  # the lumbar puncture is no blood test
    assert "TSH" in bloods.text and "1200" not in bloods.text, bloods.text


def test_the_opening_tells_an_imported_complaint_once():
    """An imported case's complaint is also its first history fact: the opening's history line says it once."""
    from clinical_gym.domains.workup.environment import initial_inquiry

    for name in RECORD_FILES:
        for case in read_case_file(FIXTURES / name)[0]:
            hpi = next(line for line in initial_inquiry(case).splitlines() if line.startswith("History of present"))
            sentences = [s.strip().rstrip(".").lower() for s in hpi.split(": ", 1)[1].split(". ")]
            assert sentences.count(case.self_report.strip().rstrip(".").lower()) == 1, (case.id, hpi)
