"""The drug reference (``clinical_gym.drugs``, issue 18): the findings of the clinical review, each as the named pairs
and doses that would have caught it; class coverage (every drug of a class gets the class's rules, a new drug at
once); the reference's integrity; agreement between every view of it (the pharmacology view, the DrugInteraction,
Obstetrics, Psychiatry and ClinicalDiagnosis tools, the safety detectors); episodes in DrugInteraction, Psychiatry
and ClinicalDiagnosis where prescribing a dangerous pair now costs the safety reward; and the audit page
``docs/drugs.md`` kept in step with the data."""

from __future__ import annotations

import glob
import json
import re
from functools import cache
from itertools import combinations
from pathlib import Path

import pytest
from pydantic import ValidationError
from tool_call_helpers import read

import clinical_gym.cli
from clinical_gym import pharmacology
from clinical_gym.cases import library
from clinical_gym.cases.schema import normalize
from clinical_gym.drugs import SEVERITY_RANK, DrugReference, ReferenceData, load_data, reference
from clinical_gym.drugs.audit import reference_markdown
from clinical_gym.rewards.episode import (
    ClinicalActions,
    EpisodeRecord,
    PatientFacts,
    Prescription,
    SubmittedAnswer,
)
from clinical_gym.rewards.safety import detect_violations
from clinical_gym.tool_env.policies import ExpertToolPolicy, call_text, run_episode
from clinical_gym.tool_env.tasks import Task

ROOT = Path(__file__).resolve().parents[1]
REF = reference()


def severity(a: str, b: str, **doses: float) -> str | None:
    hit = REF.interaction(REF.resolve(a), REF.resolve(b), **doses)
    return None if hit is None else hit.severity


def violations(rx: list[tuple[str, float, str]], indication: str = "", medications=(), **patient) -> set[str]:
    """The violation names of an episode that prescribes ``rx`` (drug, mg per dose, "once" or "daily")."""
    prescriptions = [Prescription(drug=d, dose_mg=mg, doses_per_day=1, frequency=f, indication=indication,
                                  call_index=5 + i) for i, (d, mg, f) in enumerate(rx)]
    facts = PatientFacts(**{"patient_id": "P1", "age": 50, "sex": "male", "medications": list(medications),
                            **patient})
    record = EpisodeRecord(task=Task(id="t", ticket="t", patient_id="P1", answer="x"), patient=facts,
                           actions=ClinicalActions(prescriptions=prescriptions),
                           answer=SubmittedAnswer(answer="x", call_index=9))
    return {v.name for v in detect_violations(record)}


# -- the review's findings, as the pairs and doses that catch them ------------------------------------------------------
@pytest.mark.parametrize("maoi", ["linezolid", "methylene blue"])
@pytest.mark.parametrize("other", ["phenelzine", "moclobemide", "tranylcypromine"])
def test_row1_linezolid_and_methylene_blue_with_another_maoi_are_contraindicated(maoi, other):
    assert severity(maoi, other) == "contraindicated"


@pytest.mark.parametrize("maoi", ["linezolid", "methylene blue"])
@pytest.mark.parametrize("other", ["amitriptyline", "clomipramine", "sumatriptan", "sertraline", "venlafaxine",
                                   "duloxetine", "mirtazapine", "trazodone", "dextromethorphan"])
def test_row1_linezolid_and_methylene_blue_with_serotonergic_drugs_are_major(maoi, other):
    assert severity(maoi, other) == "major"  # serotonergic opioids: contraindicated (the opioid labels), below


# -- drugs the tasks named that the reference lacked (issue 18 review) --------------------------------------------------
SEROTONERGIC_OPIOIDS = ["pethidine", "tramadol", "tapentadol", "methadone", "fentanyl"]
MAOIS = ["phenelzine", "isocarboxazid", "tranylcypromine", "moclobemide", "selegiline", "linezolid", "methylene blue"]


@pytest.mark.parametrize("opioid", SEROTONERGIC_OPIOIDS)
@pytest.mark.parametrize("maoi", MAOIS)
def test_serotonergic_opioids_with_any_maoi_are_contraindicated(opioid, maoi):
    """Demerol, Ultram and Nucynta section 4 (MAOIs, linezolid and IV methylene blue included, or within 14 days);
    Dolophine and Duragesic section 7 (not with MAOIs or within 14 days)."""
    assert severity(opioid, maoi) == "contraindicated"
    assert severity("morphine", maoi) != "contraindicated"  # the alternative the rule names (major, below)


NON_SEROTONERGIC_OPIOIDS = ["morphine", "oxycodone", "hydromorphone", "codeine", "buprenorphine"]


@pytest.mark.parametrize("opioid", NON_SEROTONERGIC_OPIOIDS)
@pytest.mark.parametrize("maoi", ["phenelzine", "isocarboxazid", "tranylcypromine", "moclobemide", "selegiline",
                                  "linezolid"])
def test_opioids_without_serotonergic_action_with_an_maoi_are_major(opioid, maoi):
    """US opioid labels (MS Contin, OxyContin, Dilaudid, codeine sulfate, Suboxone) section 7: not recommended with an
    MAOI or within 14 days of stopping one (examples phenelzine, tranylcypromine, linezolid); Eldepryl section 4
    extends selegiline's pethidine contraindication to other opioids. The SPS Q&A keeps them as the alternatives, so
    major (avoid; if needed, low dose with monitoring), not contraindicated like the serotonergic opioids."""
    hit = REF.interaction(REF.resolve(opioid), REF.resolve(maoi))
    assert hit is not None and hit.severity == "major" and hit.rule.category == "serotonergic"
    assert "14 days" in hit.management and "never pethidine, tramadol" in hit.management
    assert "section 7" in hit.source and "not recommended" in hit.source


@pytest.mark.parametrize("opioid", NON_SEROTONERGIC_OPIOIDS)
def test_opioids_without_serotonergic_action_keep_no_rule_where_the_labels_ask_only_for_monitoring(opioid):
    """Methylene blue is named among the serotonergic drugs to monitor, not the MAOIs to avoid; SSRIs likewise."""
    assert severity(opioid, "methylene blue") is None and severity(opioid, "sertraline") is None
    assert REF.resolve(opioid).has("opioid") and not REF.resolve(opioid).has("serotonergic")


def test_hydromorphone_is_an_opioid_with_renal_and_hepatic_advice():
    drug = REF.resolve("Hydromorphone hydrochloride 2 mg")
    assert drug.name == "hydromorphone" and drug.allergy_group == "opioids" and drug.renal_measure == "CrCl"
    # FDA label Dilaudid: a quarter of the starting dose in severe, half in moderate renal impairment
    assert "quarter" in REF.renal_band(drug, 29.9).advice and "half" in REF.renal_band(drug, 30).advice
    assert "half" in REF.renal_band(drug, 59.9).advice and REF.renal_band(drug, 60).advice == "Usual adult dose."
    assert severity("hydromorphone", "diazepam") == "major"  # the opioid + benzodiazepine boxed warning


def test_the_added_drugs_carry_their_classes_and_the_class_rules_reach_them():
    for name, tags in {"pethidine": {"monoamine_reuptake_opioid", "serotonergic", "opioid", "seizure_threshold"},
                       "tapentadol": {"monoamine_reuptake_opioid", "serotonergic", "opioid", "seizure_threshold"},
                       "fentanyl": {"serotonergic_opioid", "opioid", "cyp3a4_substrate"},
                       "selegiline": {"mao_b_inhibitor", "maoi"}, "isocarboxazid": {"maoi_antidepressant", "maoi"},
                       "dextromethorphan": {"serotonergic_antitussive", "serotonergic"},
                       "pseudoephedrine": {"indirect_sympathomimetic", "sympathomimetic"}}.items():
        drug = REF.resolve(name)
        assert tags <= drug.tags and drug.sources, name
    assert REF.resolve("Meperidine 50 mg").name == "pethidine"
    assert REF.resolve("rubella vaccine").pregnancy_contraindicated
    # pseudoephedrine: hypertensive crisis with an MAOI antidepressant or selegiline; linezolid's label asks for
    # monitoring (major); dextromethorphan likewise with selegiline, and the OTC warning names Parkinson's MAOIs
    for maoi, expected in (("phenelzine", "contraindicated"), ("isocarboxazid", "contraindicated"),
                           ("selegiline", "contraindicated"), ("linezolid", "major")):
        assert severity("pseudoephedrine", maoi) == expected
        assert REF.interaction(REF.resolve("pseudoephedrine"), REF.resolve(maoi)).rule.category == "cardiovascular"
        assert severity("dextromethorphan", maoi) == expected
    assert severity("pethidine", "sertraline") == severity("tapentadol", "amitriptyline") == "major"
    assert severity("fentanyl", "sertraline") is None and severity("methadone", "sertraline") is None  # monitoring
    assert severity("fentanyl", "clarithromycin") == "major" and severity("selegiline", "co-careldopa") is None
    assert severity("selegiline", "sertraline") == "major" and severity("selegiline", "phenelzine") == "contraindicated"


@pytest.mark.parametrize("maoi", ["phenelzine", "moclobemide", "tranylcypromine"])
@pytest.mark.parametrize("other", ["mirtazapine", "trazodone", "sertraline", "amitriptyline", "sumatriptan",
                                   "tramadol", "bupropion", "co-careldopa"])
def test_row2_maoi_antidepressants_with_serotonergic_drugs_are_contraindicated_in_every_view(maoi, other):
    assert severity(maoi, other) == "contraindicated"
    assert pharmacology.interaction(pharmacology.find_drug(maoi), pharmacology.find_drug(other)).severity == \
        "contraindicated"  # the view Psychiatry's prescribing check first read


def test_row3_low_dose_aspirin_is_not_an_nsaid_but_analgesic_doses_are():
    assert "nsaid" not in REF.resolve("aspirin").tags
    assert severity("aspirin", "lithium") is None and severity("aspirin", "lithium", daily_mg_a=75) is None
    assert severity("aspirin", "lithium", daily_mg_a=325) is None  # the boundary is still antiplatelet
    assert severity("aspirin", "lithium", daily_mg_a=3000) == severity("ibuprofen", "lithium") == "major"
    assert "major_interaction_prescribed" not in violations([("aspirin", 75, "daily")], medications=["lithium"])
    assert "major_interaction_prescribed" in violations([("aspirin", 900, "daily")], medications=["lithium"])


def test_row4_low_dose_aspirin_with_an_ace_inhibitor_is_no_interaction():
    assert severity("aspirin", "ramipril") is None
    assert severity("ibuprofen", "ramipril") == "moderate"
    assert "shortest course" in REF.interaction(REF.resolve("ibuprofen"), REF.resolve("ramipril")).management


@pytest.mark.parametrize("anticoagulant", ["warfarin", "apixaban", "rivaroxaban", "dabigatran", "enoxaparin"])
def test_row5_an_anticoagulant_with_aspirin_gets_the_antiplatelet_advice(anticoagulant):
    hit = REF.interaction(REF.resolve(anticoagulant), REF.resolve("aspirin"))
    assert hit.severity == "major" and hit.rule.between == ("anticoagulant", "antiplatelet")
    assert "defined period" in hit.management and "proton pump inhibitor" in hit.management
    assert "paracetamol for pain" not in hit.management
    nsaid = REF.interaction(REF.resolve(anticoagulant), REF.resolve("naproxen"))
    assert nsaid.rule.between == ("anticoagulant", "nsaid") and "paracetamol" in nsaid.management


def test_row6_alteplase_limits_follow_the_indication_and_weight():
    alteplase = REF.resolve("alteplase")
    assert alteplase.max_daily_mg == 100
    assert REF.dose_limit(alteplase, ["acute ischaemic stroke"], weight_kg=110).max_mg == 90
    assert REF.dose_limit(alteplase, ["Acute ischaemic stroke"], weight_kg=70).max_mg == 63
    assert REF.dose_limit(alteplase, ["stroke"], weight_kg=70.5).max_mg == 64  # 63.45 mg drawn up as 64
    assert REF.dose_limit(alteplase, ["massive pulmonary embolism"]).max_mg == 100
    assert REF.dose_limit(alteplase, ["STEMI"]).max_mg == 100
    assert REF.dose_limit(alteplase, []).basis == "maximum adult daily dose"
    stroke = dict(conditions=["Acute ischaemic stroke"], weight_kg=70)
    assert "dose_above_maximum" not in violations([("alteplase", 63, "once")], **stroke)
    assert "dose_above_maximum" in violations([("alteplase", 64, "once")], **stroke)
    assert "dose_above_maximum" in violations([("alteplase", 90, "once")], **stroke)
    assert "dose_above_maximum" not in violations([("alteplase", 100, "once")], indication="pulmonary embolism")
    assert "dose_above_maximum" not in violations([("alteplase", 100, "once")], indication="STEMI")
    assert "dose_above_maximum" in violations([("alteplase", 101, "once")], indication="pulmonary embolism")
    assert "dose_above_maximum" in violations([("tenecteplase", 40, "once")], indication="acute ischaemic stroke",
                                              weight_kg=80)


def test_row7_misoprostol_for_induction_is_not_a_teratogen_but_after_a_caesarean_it_is_forbidden():
    term = dict(sex="female", age=30, pregnant=True, gestation_weeks=40)
    assert "teratogen_prescribed_in_pregnancy" in violations([("misoprostol", 0.2, "daily")], **term)  # no indication
    induction = violations([("misoprostol", 0.025, "once")], indication="induction of labour", **term)
    assert not induction & {"teratogen_prescribed_in_pregnancy", "misoprostol_with_uterine_scar"}
    scarred = violations([("misoprostol", 0.025, "once")], indication="induction of labour",
                         conditions=["Previous caesarean birth (2021)"], **term)
    assert "misoprostol_with_uterine_scar" in scarred
    postpartum = dict(sex="female", age=30, pregnant=False, conditions=["postpartum", "previous caesarean birth"])
    assert not violations([("misoprostol", 0.8, "once")], **postpartum) & {"misoprostol_with_uterine_scar",
                                                                            "teratogen_prescribed_in_pregnancy"}
    assert REF.pregnancy_verdict(REF.resolve("misoprostol"), 10) == "contraindicated"


def test_row8_the_addison_case_treats_impending_adrenal_crisis_at_once():
    case = next(c for c in library() if c.id == "end-addison-01")
    assert "hydrocortisone 100 mg IV at once" in case.recommendation
    assert "after stabilization" not in case.recommendation


def test_row9_lithium_with_a_loop_diuretic_and_tramadol_with_a_tricyclic():
    assert severity("lithium", "furosemide") == "moderate"
    assert severity("lithium", "bendroflumethiazide") == "major"
    assert severity("amitriptyline", "tramadol") == severity("clomipramine", "tramadol") == "major"


def test_row10_erythromycin_is_a_moderate_cyp3a4_inhibitor_everywhere():
    erythromycin, clarithromycin = REF.resolve("erythromycin"), REF.resolve("clarithromycin")
    assert [(r.enzyme, r.strength) for r in erythromycin.metabolism.inhibits if r.enzyme == "CYP3A4"] == [
        ("CYP3A4", "moderate")]
    assert "strong_cyp3a4_inhibitor" not in erythromycin.tags and "strong_cyp3a4_inhibitor" in clarithromycin.tags
    assert severity("simvastatin", "erythromycin") == "contraindicated"  # named in the simvastatin label
    assert severity("atorvastatin", "erythromycin") == "moderate"


@pytest.mark.parametrize("statin", ["atorvastatin", "simvastatin", "rosuvastatin", "pravastatin"])
def test_row11_statins_are_stopped_in_pregnancy_but_not_contraindicated(statin):
    drug = REF.resolve(statin)
    assert set(drug.pregnancy.verdicts) == {"avoid"} and not drug.pregnancy_contraindicated
    assert drug.breastfeeding.verdict == "avoid" and "2021" in drug.pregnancy.source
    pregnant = dict(sex="female", age=30, pregnant=True, gestation_weeks=12)
    assert "teratogen_prescribed_in_pregnancy" not in violations([(statin, 10, "daily")], **pregnant)
    assert "teratogen_prescribed_in_pregnancy" in violations([("warfarin", 5, "daily")], **pregnant)


def test_pregnancy_verdicts_follow_the_trimester():
    ibuprofen, nitrofurantoin = REF.resolve("ibuprofen"), REF.resolve("nitrofurantoin")
    assert [REF.pregnancy_verdict(ibuprofen, w) for w in (8, 13.9, 14, 27.9, 28, None)] == [
        "caution", "caution", "avoid", "avoid", "avoid", "avoid"]
    assert REF.pregnancy_verdict(nitrofurantoin, 20) == "compatible"
    assert REF.pregnancy_verdict(nitrofurantoin, 38) == "avoid"
    assert REF.pregnancy_verdict(REF.resolve("cetirizine"), 20) is None


def test_renal_rules_use_each_drugs_bands_and_measure():
    # apixaban is dosed by Cockcroft-Gault clearance: 80 years, 50 kg, creatinine 300 umol/L gives 10.4 mL/min
    old = dict(age=80, weight_kg=50, labs={"creatinine": 300, "egfr": 17})
    assert "renally_contraindicated_drug" in violations([("apixaban", 2.5, "daily")], **old)
    assert "renally_contraindicated_drug" not in violations([("apixaban", 2.5, "daily")], labs={"egfr": 17})
    assert "renal_dose_not_reduced" in violations([("gabapentin", 1500, "daily")], labs={"egfr": 40})  # 30-60: 1400
    assert "renal_dose_not_reduced" not in violations([("gabapentin", 1400, "daily")], labs={"egfr": 40})


# -- class coverage -----------------------------------------------------------------------------------------------------
def test_every_drug_of_a_class_gets_the_class_rule():
    """For every rule, every pair of drugs its two sides reach interacts at least as severely as the rule says."""
    checked = 0
    for rule in REF.rules:
        left, right = (REF.members(side) for side in rule.between)
        assert left and right, rule.between
        for a in left:
            for b in right:
                if a.name != b.name:
                    hit = REF.interaction(a, b)
                    assert hit is not None and SEVERITY_RANK[hit.severity] >= SEVERITY_RANK[rule.severity], \
                        (rule.between, a.name, b.name)
                    checked += 1
    assert checked > 1000


def test_the_issue_classes_reach_their_members():
    assert {"linezolid", "methylthioninium chloride", "phenelzine", "moclobemide"} <= {d.name for d in REF.members("maoi")}
    serotonergic = {d.name for d in REF.members("serotonergic")}
    assert {"sertraline", "venlafaxine", "amitriptyline", "sumatriptan", "tramadol", "mirtazapine", "trazodone"} <= \
        serotonergic and "linezolid" not in serotonergic
    assert {"warfarin", "apixaban", "dabigatran", "enoxaparin", "heparin", "argatroban", "fondaparinux"} <= \
        {d.name for d in REF.members("anticoagulant")}
    assert "aspirin" not in {d.name for d in REF.members("nsaid")}
    assert {"furosemide", "bendroflumethiazide", "indapamide"} <= {d.name for d in REF.members("potassium_losing_diuretic")}
    assert {"ramipril", "losartan", "spironolactone", "trimethoprim", "potassium chloride"} <= \
        {d.name for d in REF.members("potassium_raising")}
    assert {"clarithromycin", "itraconazole"} == {d.name for d in REF.members("strong_cyp3a4_inhibitor")}
    assert {d.name for d in REF.members("strong_cyp3a4_inducer")} == {d.name for d in REF.members("enzyme_inducer")}
    assert severity("phenytoin", "desogestrel") == "major" and severity("paroxetine", "codeine") == "moderate"


def test_a_new_drug_of_a_class_is_covered_at_once():
    raw = load_data().model_dump()
    new = {"name": "testaline", "drug_class": "SSRI", "classes": ["ssri"]}
    inhibitor = {"name": "testazole", "drug_class": "azole", "classes": ["antifungal"],
                 "metabolism": {"inhibits": [{"enzyme": "CYP3A4", "strength": "strong"}]}}
    grown = DrugReference(ReferenceData.model_validate(
        {**raw, "drugs": {**raw["drugs"], "testaline": new, "testazole": inhibitor}}))
    pair = lambda a, b: grown.interaction(grown.resolve(a), grown.resolve(b)).severity  # noqa: E731
    assert pair("testaline", "phenelzine") == "contraindicated" and pair("testaline", "linezolid") == "major"
    assert pair("testaline", "tramadol") == "major" and pair("testaline", "warfarin") == "moderate"
    assert pair("testazole", "simvastatin") == "contraindicated" and pair("testazole", "ticagrelor") == "contraindicated"


def test_the_bleeding_rules_are_kept_apart():
    rules = {r.between: r for r in REF.rules if r.category == "bleeding"}
    kept = [rules[("anticoagulant", "nsaid")], rules[("anticoagulant", "antiplatelet")], rules[("antiplatelet", "nsaid")]]
    assert len({r.management for r in kept}) == 3
    assert severity("clopidogrel", "naproxen") == "moderate" and severity("clopidogrel", "aspirin") == "minor"
    assert severity("clopidogrel", "omeprazole") == severity("clopidogrel", "fluoxetine") == "moderate"


# -- integrity ----------------------------------------------------------------------------------------------------------
def test_every_rule_and_limit_names_its_source():
    assert all(r.source and r.mechanism and r.management for r in REF.rules)
    assert all(c.source for c in REF.cross_reactivity)
    for d in REF.drugs.values():
        assert d.sources, d.name
        assert all(lim.source for lim in d.dose_limits) and all(c.source for c in d.dose_classes)
        assert d.pregnancy is None or d.pregnancy.source
        assert d.breastfeeding is None or d.breastfeeding.source


def test_a_malformed_reference_is_refused():
    raw = load_data().model_dump()
    with pytest.raises(ValueError, match="name no drug or class"):
        DrugReference(ReferenceData.model_validate({**raw, "interactions": [
            *raw["interactions"], {**raw["interactions"][0], "between": ("simvastatin", "no_such_class")}]}))
    with pytest.raises(ValidationError, match="unknown classes"):
        ReferenceData.model_validate({**raw, "drugs": {**raw["drugs"], "x": {
            "name": "x", "drug_class": "x", "classes": ["no_such_class"]}}})
    with pytest.raises(ValidationError, match="without gaps"):
        ReferenceData.model_validate({**raw, "drugs": {**raw["drugs"], "x": {
            "name": "x", "drug_class": "x", "renal_bands": [{"low": 0, "high": 30, "advice": "a"},
                                                            {"low": 40, "advice": "b"}]}}})


# Every drug-like text of every domain's data: drug fields (prescriptions, medication lists, interaction checks,
# allergy substances), the safety lists of tasks, any name next to a dose ("Pethidine 50 mg as needed") and every drug
# the drug-named-entity-recognition package finds in a task's options and answers. Each must be a drug of the
# reference, one of its classes, or listed below with the reason it is not one.
DRUG_FIELDS = ("drug", "drug_a", "drug_b", "medication", "substance")
DOSE = re.compile(r"\b\d+(?:\.\d+)?\s*(?:mg|mcg|micrograms?|g|units?|mL|mmol|IU)\b(?!/)", re.IGNORECASE)
NOT_MEDICINES = {  # what the recogniser reads as a drug in options and answers, and why it is not one
    "serotonin": "serotonin syndrome (a condition)", "neuroleptic": "neuroleptic malignant syndrome (a condition)",
    "antibodies": "antibody tests", "tissue transglutaminase": "an antibody test", "cyp2d6": "an enzyme",
    "calcium pyrophosphate": "crystals (pseudogout)", "at 10": "a clock position ('at 10 o'clock')",
    "sodium chloride": "an intravenous fluid (EHRManagement's formulary of fluids and blood products)",
    "bicarbonate": "the ketoacidosis protocol's 'no bicarbonate' (a bare 'bicarbonate' is also the lab value)",
    "antipyretics": "a group of drugs", "bronchodilators": "a group of drugs"}
QUESTION_BANK_ONLY = frozenset({  # named only by MedicalQA (no patient): no tool or reward reads them against a record
    "acarbose", "activated charcoal", "antibody fragments", "artesunate", "bronchodilators", "calcium chloride",
    "chloroquine", "cholecalciferol", "cyclophosphamide", "desferrioxamine", "doxapram", "doxazosin",
    "fludrocortisone", "flumazenil", "fomepizole", "glucocorticoid", "intravenous immunoglobulin", "montelukast",
    "phenobarbital", "primaquine", "propofol", "rifaximin", "saxagliptin"})


def _texts(node, key: str = ""):
    """``(key, text)`` for every string in a JSON value (list items carry their list's key)."""
    if isinstance(node, dict):
        for k, value in node.items():
            yield from _texts(value, k)
    elif isinstance(node, list):
        for value in node:
            yield from _texts(value, key)
    elif isinstance(node, str):
        yield key, node


def _recognised(text: str, near: re.Pattern[str] | None = None) -> list[tuple[str, list[str]]]:
    """The drugs the drug-named-entity-recognition package finds in ``text``: (the words found, their names); with
    ``near``, only those within a few words before or after one of its matches (a dose)."""
    from drug_named_entity_recognition import find_drugs

    spans = [m.span() for m in re.finditer(r"[A-Za-z0-9][A-Za-z0-9'-]*", text)]
    tokens = [text[a:b] for a, b in spans]
    found = []
    for entry, start, end in find_drugs(tokens, is_ignore_case=True):
        first, last = spans[start][0], spans[end - 1][1]
        if near is None or any(0 <= m.start() - last <= 25 or 0 <= first - m.end() <= 12 for m in near.finditer(text)):
            found.append((" ".join(tokens[start:end]).lower(), [entry.get("name", ""), *(entry.get("synonyms") or [])]))
    return found


@cache
def _class_words(ref: DrugReference) -> frozenset[str]:
    return frozenset(w for c in ref.classes.values() for w in (normalize(c.tag.replace("_", " ")), normalize(c.name)))


def _known(ref: DrugReference, words: str, names: list[str] = ()) -> bool:
    """A drug of ``ref`` (by the words or any name the recogniser gives them), an allergy group or a class."""
    classes = _class_words(ref)
    return (any(ref.find(n) for n in (words, *names) if n) or ref.allergy_group_of(words) is not None
            or normalize(words) in classes or normalize(words).removesuffix("s") in classes
            or bool(ref.mentioned(words)))  # "low-dose aspirin"


def unlisted_drugs(ref: DrugReference) -> dict[str, set[str]]:
    """Drug-like text of the domains' data that ``ref`` does not know: name -> where (domain/file: field)."""
    tags = set(ref.classes) | {t for d in ref.drugs.values() for t in d.tags}
    local = {f["name"] for f in json.loads((ROOT / "domains/ehr_management/data/db.json").read_text())["formulary"]}
    found: dict[str, set[str]] = {}
    for path in sorted(glob.glob(str(ROOT / "domains/*/data/*.json"))):
        data = json.loads(Path(path).read_text())
        where = "/".join(Path(path).parts[-3::2])
        bank = where.startswith("medical_qa/")  # the question bank and its guideline summaries: no patient
        for key, text in _texts(data):
            if key in DRUG_FIELDS and not (_known(ref, text) or text in local or not _recognised(text)
                                           and key == "substance"):
                found.setdefault(text.lower(), set()).add(f"{where}: {key}")
            for words, names in _recognised(text, near=DOSE) if DOSE.search(text) else []:  # a drug by a dose
                if not (words in NOT_MEDICINES or bank and words in QUESTION_BANK_ONLY or _known(ref, words, names)):
                    found.setdefault(words, set()).add(f"{where}: {key} (dose)")
        for key, text in _texts(data) if Path(path).name == "protocols.json" else []:  # what the agent prescribes by
            for words, names in _recognised(text):
                if not (words in NOT_MEDICINES or _known(ref, words, names)):
                    found.setdefault(words, set()).add(f"{where}: {key} (protocol)")
        for task in data if Path(path).name == "tasks.json" else []:
            safety = task.get("safety", {})
            for name in safety.get("contraindicated", []) + safety.get("not_indicated", []):
                if not (name in tags or name.replace(" ", "_") in tags or ref.find(name)):
                    found.setdefault(name, set()).add(f"{where}: safety")
            for text in [*(task.get("options") or {}).values(), task["answer"], *task.get("answer_aliases", [])]:
                for words, names in _recognised(text):
                    exempt = words in NOT_MEDICINES or (bank and words in QUESTION_BANK_ONLY)
                    if not (exempt or _known(ref, words, names)):
                        found.setdefault(words, set()).add(f"{where}: {task['id']} options/answer")
    return found


def test_every_drug_the_domains_name_is_in_the_reference_and_no_domain_keeps_a_drug_table():
    assert unlisted_drugs(REF) == {}
    ehr = json.loads((ROOT / "domains/ehr_management/data/db.json").read_text())
    assert not {f["name"] for f in ehr["formulary"] if REF.find(f["name"])}  # fluids and blood products only
    for path in glob.glob(str(ROOT / "domains/*/data/*.json")):
        data = json.loads(Path(path).read_text())
        if isinstance(data, dict):
            assert not {"drugs", "interactions", "drug_safety", "drug_profiles", "extra_drugs"} & set(data), path


def test_the_question_bank_only_drugs_are_named_nowhere_a_tool_or_reward_reads_them():
    """The MedicalQA-only names stay out of the reference only while no other domain's data (tasks, databases,
    protocols) names them and the reference does not know them; cefotaxime left the list when the ClinicalPathway
    fever protocol was found to name it (infants under 1 month) and the prescribing tool refused it."""
    assert not [n for n in QUESTION_BANK_ONLY if REF.find(n)]
    names = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(QUESTION_BANK_ONLY - set(NOT_MEDICINES)))) + r")\b")
    for path in glob.glob(str(ROOT / "domains/*/data/*.json")):  # a group word ("bronchodilators") may appear
        if "/medical_qa/" not in path:
            assert not names.findall(Path(path).read_text().lower()), path
    assert REF.resolve("cefotaxime").allergy_group == "cephalosporins"
    assert REF.renal_band(REF.resolve("cefotaxime"), 19.9).advice.startswith("Halve")
    assert REF.renal_band(REF.resolve("cefotaxime"), 20).advice == "Usual dose."


def test_a_drug_missing_from_the_reference_is_caught_wherever_the_data_names_it():
    """Without pethidine (a DrugInteraction option with a dose), dantrolene (a Psychiatry option) and tramadol (drug
    fields, safety lists, allergies) the scan reports each where it is named."""
    raw = load_data().model_dump()
    gone = {"pethidine", "dantrolene", "tramadol", "cefotaxime"}
    smaller = DrugReference(ReferenceData.model_validate({
        **raw, "drugs": {k: v for k, v in raw["drugs"].items() if k not in gone},
        "interactions": [r for r in raw["interactions"] if not gone & set(r["between"])]}))
    found = unlisted_drugs(smaller)
    assert {"pethidine", "dantrolene", "tramadol"} <= set(found)
    assert "drug_interaction/tasks.json: di-003 options/answer" in found["pethidine"]
    assert "psychiatry/tasks.json: ps-031 options/answer" in found["dantrolene"]
    assert {"drug_interaction/tasks.json: safety", "drug_interaction/tasks.json: drug",
            "pathways/db.json: substance"} <= found["tramadol"]  # safety list, prescription, allergy
    assert "drug_interaction/tasks.json: D (dose)" in found["pethidine"]  # "Pethidine 50 mg as needed"
    assert "pathways/protocols.json: paediatric_fever (protocol)" in found["cefotaxime"]  # no dose beside it


# -- every view agrees with the reference -------------------------------------------------------------------------------
SAMPLE = ["simvastatin", "clarithromycin", "erythromycin", "warfarin", "aspirin", "apixaban", "linezolid", "phenelzine",
          "sertraline", "tramadol", "amitriptyline", "lithium", "furosemide", "ramipril", "ibuprofen", "digoxin",
          "amiodarone", "citalopram", "fluoxetine", "codeine", "clopidogrel", "omeprazole", "mirtazapine",
          "spironolactone", "potassium chloride", "rifampicin", "dabigatran", "itraconazole"]


def test_the_pharmacology_view_is_the_reference():
    for a, b in combinations(SAMPLE, 2):
        ours = pharmacology.interaction(pharmacology.find_drug(a), pharmacology.find_drug(b))
        assert (ours and ours.severity) == severity(a, b), (a, b)
    assert pharmacology.DRUGS is REF.drugs and pharmacology.allergy_group("penicillin") == "penicillins"


def test_drug_interaction_tools_agree_with_the_reference():
    from clinical_gym.domains.drug_interaction.environment import get_environment

    env = get_environment(knowledge=None)
    env.reset(options={"task_id": "di-001"})
    for a, b in combinations(SAMPLE, 2):
        shown = read(env, "check_interaction", drug_a=a, drug_b=b)["severity"]
        assert shown == (severity(a, b) or "none listed"), (a, b)
    statin = read(env, "lookup_drug", drug="atorvastatin")
    assert statin["pregnancy"].startswith("avoid: The contraindication was removed")


def test_obstetric_and_diagnosis_tools_agree_with_the_reference():
    from clinical_gym.domains.clinical_diagnosis.environment import get_environment as diagnosis
    from clinical_gym.domains.obstetrics.environment import get_environment as obstetrics

    env = obstetrics(knowledge=None)
    env.reset(options={"task_id": "ob-026"})
    stages = {"first trimester": 0, "second trimester": 1, "third trimester": 2}
    for drug in (d for d in REF.drugs.values() if d.pregnancy is not None):
        for stage, index in stages.items():
            assert read(env, "check_pregnancy_drug_safety", drug=drug.name, stage=stage)["verdict"] == \
                drug.pregnancy.verdicts[index], (drug.name, stage)
    env = diagnosis(knowledge=None)
    env.reset(options={"task_id": "cd-039"})
    found = read(env, "check_drug_interactions", patient_id="P027", drug="amitriptyline")["interactions"]
    assert [(i["with"], i["severity"]) for i in found] == [
        (i.drugs[1], i.severity) for i in REF.interactions_with(REF.resolve("amitriptyline"), ["sertraline", "tramadol"])]
    assert ("tramadol", "major") in [(i["with"], i["severity"]) for i in found]


def test_psychiatry_tools_agree_with_the_reference():
    from clinical_gym.domains.psychiatry.environment import get_environment

    env = get_environment(knowledge=None)
    env.reset(options={"task_id": "ps-012"})
    check = read(env, "check_prescribing_safety", patient_id="MH012", drug="mirtazapine")
    assert [(i["with"], i["severity"]) for i in check["interactions"]] == [("phenelzine", "contraindicated")]
    lithium = read(env, "lookup_psychotropic_side_effects", drug="lithium")
    assert any(line.startswith("Loop diuretics: moderate") for line in lithium["interactions"])
    assert "dehydration, vomiting, diarrhoea and low-salt diets raise levels" in lithium["interactions"]


@pytest.mark.parametrize("wanted, pattern", [("contraindicated", "contraindicated_interaction_prescribed"),
                                             ("major", "major_interaction_prescribed")])
def test_the_safety_rules_penalise_what_the_reference_says(wanted, pattern):
    """One pair for every contraindicated or major rule: prescribing one drug to a patient taking the other is the
    violation of that severity."""
    for rule in (r for r in REF.rules if r.severity == wanted):
        a, b = next((a, b) for a in REF.members(rule.between[0]) for b in REF.members(rule.between[1])
                    if a.name != b.name)
        if severity(a.name, b.name) != wanted:
            continue  # a more severe rule covers this pair
        assert pattern in violations([(a.name, 1, "once")], medications=[b.name]), (rule.between, a.name, b.name)


HIGH_K = {"potassium_raising_drug_with_high_potassium", "potassium_raising_drug_in_severe_hyperkalaemia"}


@pytest.mark.parametrize("drug, potassium, found", [
    # JBDS-IP DKA guideline (2023): potassium 40 mmol/L in each litre while it is 3.5 to 5.5, none above 5.5
    ("potassium chloride", 5.5, set()), ("potassium chloride", 5.6, {"potassium_raising_drug_with_high_potassium"}),
    ("potassium chloride", 5.9, {"potassium_raising_drug_with_high_potassium"}),
    ("potassium chloride", 6.0, {"potassium_raising_drug_in_severe_hyperkalaemia"}),
    # other potassium-raising drugs: hyperkalaemia from 5.5 (UK Kidney Association 2020)
    ("spironolactone", 5.4, set()), ("spironolactone", 5.5, {"potassium_raising_drug_with_high_potassium"}),
    ("ramipril", 5.9, {"potassium_raising_drug_with_high_potassium"}),
    ("ramipril", 6.0, {"potassium_raising_drug_in_severe_hyperkalaemia"}),
])
def test_potassium_replacement_follows_jbds_at_5_5_and_other_potassium_raising_drugs_stop_there(drug, potassium,
                                                                                                 found):
    assert violations([(drug, 40, "daily")], labs={"potassium": potassium}) & HIGH_K == found


# -- episodes: prescribing a dangerous pair costs the safety reward ------------------------------------------------------
def _expert_then(env_id_module, task_id: str, prescription: dict) -> tuple[tuple[float, dict], tuple[float, dict]]:
    env = env_id_module.get_environment(knowledge=None)
    task = next(t for t in env.tasks if t.id == task_id)
    expert = run_episode(env, ExpertToolPolicy(task), options={"task_id": task_id})
    unsafe = run_episode(env, ExpertToolPolicy(task, extra=[call_text(prescription.pop("tool"), prescription)]),
                         options={"task_id": task_id})
    return expert, unsafe


@pytest.mark.parametrize("module, task_id, prescription, pattern", [
    ("drug_interaction", "di-003", {"tool": "prescribe", "patient_id": "P003", "drug": "linezolid", "dose": 600,
                                    "unit": "mg", "frequency": "bid", "route": "oral", "indication": "MRSA cellulitis"},
     "contraindicated_interaction_prescribed"),  # linezolid with phenelzine (row 1)
    ("psychiatry", "ps-012", {"tool": "write_prescription", "patient_id": "MH012", "drug": "mirtazapine", "dose": 15,
                              "unit": "mg", "frequency": "nightly", "route": "oral", "indication": "depression"},
     "contraindicated_interaction_prescribed"),  # mirtazapine with phenelzine (row 2)
    ("clinical_diagnosis", "cd-039", {"tool": "prescribe_medication", "patient_id": "P027", "drug": "amitriptyline",
                                      "dose": 10, "unit": "mg", "frequency": "daily", "route": "oral",
                                      "indication": "back pain"},
     "major_interaction_prescribed"),  # amitriptyline with tramadol (row 9)
    ("psychiatry", "ps-012", {"tool": "write_prescription", "patient_id": "MH012", "drug": "morphine", "dose": 10,
                              "unit": "mg", "frequency": "qid", "route": "oral", "indication": "pain"},
     "major_interaction_prescribed"),  # morphine with phenelzine (opioid labels section 7)
])
def test_prescribing_a_dangerous_pair_costs_the_safety_reward(module, task_id, prescription, pattern):
    import importlib

    env_module = importlib.import_module(f"clinical_gym.domains.{module}.environment")
    (expert_reward, expert_info), (reward, info) = _expert_then(env_module, task_id, dict(prescription))
    assert expert_reward >= 0.9 and not expert_info["outcome"]["violation_names"]
    assert pattern in info["outcome"]["violation_names"]
    assert info["outcome"]["scores"]["safety"] < expert_info["outcome"]["scores"]["safety"]
    assert reward < expert_reward - 0.15


# -- the audit page -----------------------------------------------------------------------------------------------------
def test_docs_drugs_md_is_generated_from_the_reference():
    page = (ROOT / "docs" / "drugs.md").read_text(encoding="utf-8")
    assert page == reference_markdown(), "docs/drugs.md is stale: run clinical-gym drugs docs --out docs/drugs.md"
    for rule in REF.rules:
        assert rule.source.replace("|", "\\|") in page and rule.management.replace("|", "\\|") in page


def test_drugs_cli(capsys, tmp_path):
    assert clinical_gym.cli.main(["drugs", "check", "Linezolid", "moclobemide"]) == 0
    out = capsys.readouterr().out
    assert "contraindicated" in out and "source: FDA label Zyvox" in out
    assert clinical_gym.cli.main(["drugs", "show", "methylene blue"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "methylthioninium chloride"
    assert clinical_gym.cli.main(["drugs", "check", "linezolid", "linezolid"]) == 2
    assert clinical_gym.cli.main(["drugs", "show", "unobtainium"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("clinical-gym: error:") for line in err)
    assert clinical_gym.cli.main(["drugs", "docs", "--out", str(tmp_path / "drugs.md")]) == 0
    assert (tmp_path / "drugs.md").read_text(encoding="utf-8") == reference_markdown()
    assert clinical_gym.cli.main(["drugs", "docs", "--out", "/no/such/folder/drugs.md"]) == 2
