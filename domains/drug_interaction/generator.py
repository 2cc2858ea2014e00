"""The DrugInteraction task generator: a patient record (age, sex, weight, pregnancy, conditions with their long-term
medicines, allergies, creatinine with its CKD-EPI eGFR, potassium, sometimes an INR or a QTc) and a question about a
medicine, whose answer the drug reference computes (``clinical_gym.drugs``, read through the domain's tools where
they decide: ``DrugInteractionTools._screen``, ``tools.renal_value``). Four kinds:

* ``interaction`` (35%): a drug the team wants to start; the most severe interaction it would have with the current
  medicines (``reference().interaction``, as ``check_all_interactions`` reports it): contraindicated, major,
  moderate, minor or none, drawn evenly among those the split's drugs can show (no-interaction negatives included).
  A contraindicated or major one is documented with an alert; the others are not.
* ``alternative`` (25%): three or four drugs for one indication, each but one ruled out for this patient by an
  allergy (same drug or group, or a cross-reactive group after a severe reaction), a major or contraindicated
  interaction with a current medicine, a renal band where it must be avoided, pregnancy, or a condition it must be
  avoided in; the one left has no problem and no caution at all. Prescribe it (the reference's usual dose) and
  submit it.
* ``renal`` (20%): a current medicine dosed by renal function and a creatinine that puts the patient in one of its
  bands (drawn evenly, the edges included); the answer is the band's advice, and the action follows it: stop the
  drug in a band where it must be avoided, change to the band's regimen where the current one differs, otherwise
  leave it. Cockcroft-Gault clearance for drugs dosed by it.
* ``allergy`` (20%): a documented allergy and a drug; the verdict of ``reference().allergy_match`` at the reaction's
  severity (avoid, use with caution, no special precautions) or no documented conflict, drawn evenly.

Elderly, pregnant and breastfeeding patients, co-medications that do not change the answer, unrelated allergies and
results (distractors) vary the records. Generalisation split: the drug asked about (interaction, renal and allergy
kinds) never belongs to a held-out class (macrolides, cephalosporins, SSRIs, gabapentinoids, direct oral
anticoagulants) in the train split, and always does in the test split; the alternative kind's test split holds
indications (acute pyelonephritis, neuropathic pain, atrial fibrillation rate control) the train split never shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from clinical_gym.drugs import Drug, reference
from clinical_gym.drugs.model import SEVERITY_RANK
from clinical_gym.drugs.units import CG_FACTOR, UMOL_PER_MG_DL_CREATININE, ckd_epi_egfr, creatinine_clearance
from clinical_gym.rewards.coherence import lab_statements, recommended_drugs
from clinical_gym.rewards.episode import contains_term
from clinical_gym.tool_env.generation import (
    Draft,
    TaskGenerator,
    Wording,
    between,
    chance,
    lettered,
    person_name,
    pick,
    sample,
)
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.drug_interaction.data_model import (
    Allergy,
    DrugInteractionDB,
    LabResult,
    Medication,
    Patient,
)
from clinical_gym.domains.drug_interaction.tools import DrugInteractionTools, renal_value

KINDS = (("interaction", 0.35), ("alternative", 0.25), ("renal", 0.2), ("allergy", 0.2))
TEST_CLASSES = ("macrolide", "cephalosporin", "ssri", "gabapentinoid", "doac")
TEST_INDICATIONS = ("acute pyelonephritis", "neuropathic pain", "atrial fibrillation rate control")
TRAIN_INDICATIONS = ("community-acquired pneumonia", "cellulitis", "lower urinary tract infection", "hypertension",
                     "hyperlipidaemia", "atrial fibrillation stroke prevention", "venous thromboembolism treatment",
                     "depression", "type 2 diabetes", "acute gout", "dental abscess", "angina",
                     "infective exacerbation of COPD")
# The condition a record lists for an indication that is not itself a condition's name.
INDICATION_CONDITION = {"atrial fibrillation rate control": "atrial fibrillation",
                        "atrial fibrillation stroke prevention": "atrial fibrillation",
                        "venous thromboembolism treatment": "deep vein thrombosis",
                        "infective exacerbation of COPD": "COPD"}
SEVERITY_OPTIONS = {"A": "Contraindicated", "B": "Major", "C": "Moderate", "D": "Minor", "E": "No listed interaction"}
SEVERITY_TEXT = {"contraindicated": "Contraindicated", "major": "Major", "moderate": "Moderate", "minor": "Minor",
                 "none": "No listed interaction"}
VERDICT_OPTIONS = {"A": "Avoid it", "B": "Use with caution", "C": "No special precautions needed",
                   "D": "No documented allergy conflict"}
VERDICT_TEXT = {"avoid": "Avoid it", "use with caution": "Use with caution",
                "no special precautions": "No special precautions needed", "none": "No documented allergy conflict"}
UNSAFE = ("major", "contraindicated")
LAB_TIME = "2025-03-13 08:30"
RENAL_TESTS = ("Creatinine", "eGFR")

# Long-term medicines a record may list, with the condition each treats (regimen: the reference's usual dose).
BACKGROUND: tuple[tuple[str, str], ...] = (
    ("hypertension", "amlodipine"), ("hypertension", "ramipril"), ("hypertension", "losartan"),
    ("hypertension", "bendroflumethiazide"), ("hypertension", "lisinopril"), ("hyperlipidaemia", "atorvastatin"),
    ("hyperlipidaemia", "simvastatin"), ("hyperlipidaemia", "rosuvastatin"), ("hyperlipidaemia", "pravastatin"),
    ("type 2 diabetes", "metformin"), ("type 2 diabetes", "gliclazide"), ("type 2 diabetes", "sitagliptin"),
    ("type 2 diabetes", "linagliptin"), ("hypothyroidism", "levothyroxine"),
    ("gastro-oesophageal reflux disease", "omeprazole"), ("gastro-oesophageal reflux disease", "lansoprazole"),
    ("atrial fibrillation", "apixaban"), ("atrial fibrillation", "warfarin"), ("atrial fibrillation", "rivaroxaban"),
    ("atrial fibrillation", "dabigatran"), ("atrial fibrillation", "bisoprolol"), ("atrial fibrillation", "digoxin"),
    ("atrial fibrillation", "amiodarone"), ("depression", "sertraline"), ("depression", "citalopram"),
    ("depression", "fluoxetine"), ("depression", "mirtazapine"), ("depression", "phenelzine"),
    ("epilepsy", "lamotrigine"), ("epilepsy", "levetiracetam"), ("epilepsy", "carbamazepine"),
    ("epilepsy", "valproate"), ("gout", "allopurinol"), ("heart failure", "furosemide"),
    ("heart failure", "spironolactone"), ("angina", "isosorbide mononitrate"), ("angina", "diltiazem"),
    ("ischaemic heart disease", "clopidogrel"), ("ischaemic heart disease", "aspirin"),
    ("neuropathic pain", "gabapentin"), ("neuropathic pain", "pregabalin"), ("neuropathic pain", "amitriptyline"),
    ("chronic back pain", "tramadol"), ("chronic back pain", "codeine"), ("bipolar disorder", "lithium"),
    ("rheumatoid arthritis", "methotrexate"), ("asthma", "beclometasone"), ("asthma", "salbutamol"),
    ("COPD", "theophylline"), ("erectile dysfunction", "sildenafil"), ("migraine", "sumatriptan"),
    ("spasticity", "tizanidine"), ("tuberculosis", "rifampicin"), ("contraception", "combined oral contraceptive"),
)
# Recorded allergies that rule nothing in the task out (distractors).
UNRELATED_ALLERGIES = (("latex", "contact dermatitis", "mild"), ("elastoplast", "skin irritation", "mild"),
                       ("iodine skin preparation", "local rash", "mild"), ("peanuts", "lip swelling", "severe"),
                       ("bee stings", "anaphylaxis", "life-threatening"))
REACTIONS = {"mild": ("itchy rash", "mild rash"), "moderate": ("widespread rash", "urticaria"),
             "severe": ("angioedema", "urticaria and wheeze"), "life-threatening": ("anaphylaxis",)}
SOCIAL = ("Lives alone; non-smoker.", "Lives with family; ex-smoker.", "Retired; drinks 6 units a week.",
          "Works full time; non-smoker.", "Lives with a partner; smokes 10 a day.", "Care home resident.")
AGE_BANDS = ((18, 39), (40, 64), (65, 79), (80, 94))

TICKETS = Wording(
    interaction=(
        "{pid} ({who}) is to start {drug} for {indication}. Before it is prescribed, check it against {poss} current "
        "medicines: record an interaction alert only for an interaction of the two highest severity grades, and "
        "submit the letter of the most severe interaction it would have.",
        "The team wants to add {drug} ({indication}) for {pid}, {who}. Screen it against everything {subj} takes, "
        "document an interaction of the two highest grades with an alert (nothing less severe), and submit the "
        "letter for the most severe interaction found.",
        "Medicines check for {pid}: {drug} is proposed for {indication}. How severe is the worst interaction it has "
        "with {poss} current medicines? Record an alert only if it is of one of the two highest grades, then submit "
        "the letter.",
        "{pid} is {who} on several medicines; {drug} has been suggested for {indication}. Check the combination, "
        "alert only on an interaction of the top two severity grades, and submit the letter of the most severe one."),
    alternative=(
        "{pid} ({who}) needs treatment for {indication}; the prescriber suggests {proposed}. Review the record, "
        "prescribe the one option that is safe for {obj}, and submit its letter.",
        "For {pid}, {who}, with {indication}: check each option against {poss} allergies, medicines, kidney "
        "function, pregnancy and conditions, prescribe the single safe one at its usual dose and submit the letter. "
        "{proposed_cap} was the first suggestion.",
        "{proposed_cap} has been suggested for {pid}'s {indication}. Only one of the options is safe for this "
        "patient: find it, prescribe it and submit its letter."),
    renal=(
        "{pid} ({who}) takes {drug}. Check whether the dose suits {poss} current renal function, act on it, and "
        "submit the letter of the dosing advice that applies.",
        "Renal dosing review for {pid}: {drug} is on the medication list. Work out {poss} renal function in the "
        "measure {drug} is dosed by, adjust the prescription if needed, and submit the letter of the right advice.",
        "{pid}, {who}, had bloods yesterday. Does {drug} need a change for {poss} kidney function? Act, then submit "
        "the letter."),
    allergy=(
        "{pid} ({who}) may need {drug}. Check it against {poss} documented allergies and submit the letter of the "
        "verdict; do not prescribe anything.",
        "Allergy check for {pid}: the team is considering {drug}. What does {poss} allergy record mean for it? "
        "Submit the letter (no prescription needed).",
        "Before anyone prescribes {drug} for {pid}, {who}, review the allergy record for a conflict and submit the "
        "letter of your verdict."),
)


def _pronouns(sex: str) -> dict[str, str]:
    female = sex == "female"
    return {"subj": "she" if female else "he", "obj": "her" if female else "him", "poss": "her" if female else "his"}


def who_text(patient: Patient) -> str:
    """How a ticket names the patient: "a 78-year-old man", "a 31-year-old woman, 24 weeks pregnant"."""
    noun = "woman" if patient.sex == "female" else "man"
    text = f"a {patient.age}-year-old {noun}"
    if patient.pregnant:
        text += f", {patient.gestation_weeks:g} weeks pregnant"
    elif patient.breastfeeding:
        text += ", breastfeeding"
    return text


def creatinine_for(target: float, measure: str, age: int, weight_kg: float, sex: str) -> int:
    """A whole-number creatinine (µmol/L) giving about ``target`` in ``measure`` (CKD-EPI eGFR or Cockcroft-Gault
    clearance)."""
    if measure == "CrCl":
        return max(30, round((140 - age) * weight_kg * CG_FACTOR[sex] / target))
    female = sex == "female"  # CKD-EPI 2021 solved for creatinine, on whichever side of its knee the target lies
    kappa, alpha = (0.7, -0.241) if female else (0.9, -0.302)
    scale = 142 * 0.9938 ** age * (1.012 if female else 1.0)
    ratio = (target / scale) ** (-1 / 1.2)
    if ratio < 1:
        ratio = (target / scale) ** (1 / alpha)
    return max(30, round(ratio * kappa * UMOL_PER_MG_DL_CREATININE))


def renal_labs(age: int, weight_kg: float, sex: str, creatinine: int) -> list[LabResult]:
    """Creatinine and its CKD-EPI 2021 eGFR (whole numbers), with the ranges the bundled records use."""
    high = 104 if sex == "male" else 90
    low = 59 if sex == "male" else 45
    egfr = round(ckd_epi_egfr(age, creatinine, sex))
    return [LabResult(test="Creatinine", time=LAB_TIME, value=creatinine, unit="µmol/L", ref_low=low, ref_high=high),
            LabResult(test="eGFR", time=LAB_TIME, value=egfr, unit="mL/min/1.73m²", ref_low=60)]


def regimen_text(drug: Drug) -> str:
    dose = drug.usual_dose
    assert dose is not None
    return f"{dose.dose:g} {dose.unit} {dose.frequency}"


@dataclass(frozen=True)
class Plan:
    """What one task is about, before the record is written."""

    kind: str
    key: str  # the drug asked about, or the indication (alternative kind)


class DrugInteractionGenerator(TaskGenerator):
    env_id = "DrugInteraction-v1"
    id_prefix = "gdi"
    collections = {"patients": "patient_id"}
    held_out = ("the drug asked about (interaction, renal and allergy tasks) comes from classes the train split never "
                "asks about: macrolides, cephalosporins, SSRIs, gabapentinoids, direct oral anticoagulants; "
                f"alternative tasks for indications the train split never shows: {', '.join(TEST_INDICATIONS)}")

    def __init__(self) -> None:
        for pool in ("pairs", "renal_drugs", "allergy_cases", "indications"):  # built once, before any task
            getattr(self, pool)

    # -- pools ---------------------------------------------------------------------------------------------------------
    @cached_property
    def drugs(self) -> dict[str, Drug]:
        return dict(reference().drugs)

    @staticmethod
    def split_of_drug(drug: Drug) -> str:
        return "test" if drug.has(*TEST_CLASSES) else "train"

    @cached_property
    def keys(self) -> dict[str, tuple[Drug, ...]]:
        """The prescribable drugs a task may ask about, by split."""
        ref = reference()
        usable = [d for d in ref.drugs.values() if d.prescribable and d.usual_dose.unit in ("mg", "mcg", "g")]
        return {split: tuple(d for d in usable if self.split_of_drug(d) == split) for split in ("train", "test")}

    @cached_property
    def background(self) -> tuple[tuple[str, Drug], ...]:
        return tuple((condition, self.drugs[name]) for condition, name in BACKGROUND)

    @cached_property
    def pairs(self) -> dict[str, dict[str, tuple[tuple[Drug, str, Drug], ...]]]:
        """split -> severity -> (drug asked about, condition, long-term partner) with that interaction."""
        ref = reference()
        found: dict[str, dict[str, list[tuple[Drug, str, Drug]]]] = {
            s: {sev: [] for sev in SEVERITY_TEXT} for s in ("train", "test")}
        for split, keys in self.keys.items():
            for key in keys:
                for condition, partner in self.background:
                    if partner.name == key.name:
                        continue
                    hit = ref.interaction(key, partner)
                    found[split][hit.severity if hit else "none"].append((key, condition, partner))
        return {s: {sev: tuple(v) for sev, v in by.items() if v} for s, by in found.items()}

    @cached_property
    def renal_drugs(self) -> dict[str, tuple[Drug, ...]]:
        """Drugs whose every band is actionable: avoid, a regimen to change to, or the usual dose."""
        usable = []
        for drug in self.drugs.values():
            bands = drug.renal_bands
            if len(bands) < 2 or not drug.prescribable or drug.usual_dose.frequency == "prn":
                continue
            if all(b.avoid or b.regimen is not None or b.high is None for b in bands) and \
                    len({b.advice for b in bands}) == len(bands):
                usable.append(drug)
        return {split: tuple(d for d in usable if self.split_of_drug(d) == split) for split in ("train", "test")}

    @cached_property
    def allergy_cases(self) -> dict[str, dict[str, tuple[tuple[Drug, str, str], ...]]]:
        """split -> verdict -> (drug, recorded substance, severity) giving that verdict."""
        ref = reference()
        substances = sorted({label for g in ref.allergy_groups.values() for label in g.labels[:1]}
                            | {d.name for d in self.drugs.values() if d.allergy_group})
        found: dict[str, dict[str, list[tuple[Drug, str, str]]]] = {
            s: {v: [] for v in VERDICT_TEXT} for s in ("train", "test")}
        for split, keys in self.keys.items():
            for drug in keys:
                for substance in substances:
                    for severity in REACTIONS:
                        match = ref.allergy_match(substance, drug)
                        verdict = "none" if match is None else match.verdict(severity)
                        if verdict != "none":
                            found[split][verdict].append((drug, substance, severity))
                found[split]["none"] += [(drug, s, v) for s, _, v in UNRELATED_ALLERGIES]
        return {s: {v: tuple(x) for v, x in by.items() if x} for s, by in found.items()}

    @cached_property
    def indications(self) -> dict[str, tuple[tuple[str, tuple[Drug, ...]], ...]]:
        """split -> (indication, its prescribable candidates)."""
        pools = {"train": TRAIN_INDICATIONS, "test": TEST_INDICATIONS}
        return {split: tuple((i, tuple(d for d in self.keys["train"] + self.keys["test"] if i in d.indications))
                             for i in names) for split, names in pools.items()}

    # -- one task ------------------------------------------------------------------------------------------------------
    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        kind = KINDS[int(rng.choice(len(KINDS), p=[w for _, w in KINDS]))][0]
        pid = f"G{index:05d}"
        for _ in range(200):
            built = getattr(self, f"_{kind}")(rng, split, pid, task_id)
            if built is not None:
                patient, task = built
                return Draft(task, {"patients": [patient]}, ids=(pid, patient.name))
        raise RuntimeError(f"{kind}: no consistent task after 200 tries")

    # -- the record ----------------------------------------------------------------------------------------------------
    def _person(self, rng: np.random.Generator, *, ages: tuple[int, int] | None = None, sex: str | None = None,
                pregnancy: bool = True) -> dict[str, Any]:
        sex = sex or pick(rng, ("female", "male"))
        age = int(between(rng, *(ages or pick(rng, AGE_BANDS))))
        fields: dict[str, Any] = {"sex": sex, "age": age, "name": person_name(rng, sex),
                                  "weight_kg": float(between(rng, 48, 82 if sex == "female" else 105)),
                                  "height_cm": float(between(rng, 152, 172 if sex == "female" else 190)),
                                  "pregnant": None, "gestation_weeks": None, "breastfeeding": False}
        if sex == "female" and age <= 50:
            fields["pregnant"] = False
            if pregnancy and age <= 44 and chance(rng, 0.15):
                fields.update(pregnant=True, gestation_weeks=float(between(rng, 6, 38)))
            elif age <= 44 and chance(rng, 0.08):
                fields["breastfeeding"] = True
        return fields

    def _medicines(self, rng: np.random.Generator, person: dict[str, Any], count: int, *, avoid: tuple[Drug, ...] = (),
                   accept: Any = None) -> tuple[list[str], list[Medication]]:
        """Up to ``count`` long-term medicines with their conditions: none of ``avoid``'s drugs or classes, safe in
        pregnancy when she is pregnant, and each one passing ``accept`` (a drug -> bool test) when given."""
        ref = reference()
        conditions: list[str] = []
        medications: list[Medication] = []
        for condition, drug in sample(rng, self.background, count + 3):
            if len(medications) >= count:
                break
            if any(drug.name == d.name or _same_class(drug, d) for d in avoid) or \
                    any(m.drug == drug.name or _same_class(drug, self.drugs[m.drug]) for m in medications):
                continue
            if person["pregnant"] and ref.pregnancy_verdict(drug, person["gestation_weeks"]) not in ("compatible",
                                                                                                  "caution"):
                continue
            if person["sex"] == "male" and drug.has("combined_hormonal_contraceptive"):
                continue
            if accept is not None and not accept(drug):
                continue
            medications.append(_medication(drug, condition))
            if condition not in conditions:
                conditions.append(condition)
        return conditions, medications

    def _allergies(self, rng: np.random.Generator, named: list[Drug]) -> list[Allergy]:
        """Zero to two allergies that conflict with none of ``named`` (distractors)."""
        allergies = []
        options = [("penicillin", "moderate"), ("clarithromycin", "moderate"), ("sulfonamide", "moderate"),
                   ("codeine", "mild"), ("ibuprofen", "moderate"), ("trimethoprim", "moderate"),
                   ("cephalosporin", "severe"), ("doxycycline", "mild")]
        for substance, severity in sample(rng, options, int(rng.choice(3, p=[0.5, 0.35, 0.15]))):
            if any(allergy_related(substance, d.name) for d in named):
                continue
            allergies.append(Allergy(substance=substance, reaction=pick(rng, REACTIONS[severity]), severity=severity))
        if chance(rng, 0.2):
            s, r, v = pick(rng, UNRELATED_ALLERGIES)
            allergies.append(Allergy(substance=s, reaction=r, severity=v))
        return allergies

    def _labs(self, rng: np.random.Generator, person: dict[str, Any], medications: list[Medication],
              creatinine: int | None = None) -> list[LabResult]:
        age, sex, weight = person["age"], person["sex"], person["weight_kg"]
        if creatinine is None:
            creatinine = creatinine_for(float(between(rng, 60, max(62, min(105, 150 - age)))), "eGFR", age, weight, sex)
        labs = renal_labs(age, weight, sex, creatinine)
        labs.append(LabResult(test="Potassium", time=LAB_TIME, value=float(between(rng, 3.6, 5.1, 1)), unit="mmol/L",
                              ref_low=3.5, ref_high=5.3))
        if any(m.drug == "warfarin" for m in medications):
            labs.append(LabResult(test="INR", time=LAB_TIME, value=float(between(rng, 2.0, 3.0, 1)), unit="",
                                  ref_low=0.8, ref_high=1.2))
        if chance(rng, 0.3):
            labs.append(LabResult(test="QTc", time=LAB_TIME, value=float(between(rng, 400, 448)), unit="ms",
                                  ref_high=450))
        if chance(rng, 0.3):
            labs.append(LabResult(test="HbA1c", time=LAB_TIME, value=float(between(rng, 38, 70)), unit="mmol/mol",
                                  ref_high=48))
        return labs

    def _patient(self, rng: np.random.Generator, pid: str, person: dict[str, Any], conditions: list[str],
                 medications: list[Medication], allergies: list[Allergy], labs: list[LabResult]) -> Patient:
        return Patient(patient_id=pid, conditions=conditions, medications=medications, allergies=allergies, labs=labs,
                       social_history=pick(rng, SOCIAL), **person)

    # -- interaction ---------------------------------------------------------------------------------------------------
    def _interaction(self, rng: np.random.Generator, split: str, pid: str, task_id: str) -> tuple[Patient, Task] | None:
        ref = reference()
        by_severity = self.pairs[split]
        severity = pick(rng, tuple(by_severity))
        key, condition, partner = pick(rng, by_severity[severity])
        person = self._person(rng)
        if person["pregnant"] and ref.pregnancy_verdict(partner, person["gestation_weeks"]) not in ("compatible",
                                                                                                   "caution"):
            person.update(pregnant=False, gestation_weeks=None)
        if person["sex"] == "male" and partner.has("combined_hormonal_contraceptive"):
            return None
        rank = SEVERITY_RANK.get(severity, 0)

        def lower(drug: Drug) -> bool:
            hit = ref.interaction(key, drug)
            return hit is None or SEVERITY_RANK[hit.severity] < rank

        conditions, medications = self._medicines(rng, person, int(rng.choice(4, p=[0.2, 0.35, 0.3, 0.15])),
                                                  avoid=(key, partner), accept=lower)
        insert = int(rng.integers(len(medications) + 1))
        medications.insert(insert, _medication(partner, condition))
        if condition not in conditions:
            conditions.insert(min(insert, len(conditions)), condition)
        taking = [self.drugs[m.drug] for m in medications]
        allergies = self._allergies(rng, [key, *taking])
        patient = self._patient(rng, pid, person, conditions, medications, allergies,
                                self._labs(rng, person, medications))
        hits = [(m, h) for m in taking if (h := ref.interaction(key, m)) is not None]
        worst = max(hits, key=lambda x: SEVERITY_RANK[x[1].severity], default=None)
        found = worst[1].severity if worst else "none"
        if found != severity:
            return None
        p = {"patient_id": pid}
        indication = pick(rng, key.indications)
        actions: list[dict[str, Any]] = [
            {"name": "get_medication_list", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "check_all_interactions", "arguments": {**p, "drug": key.name},
             "compare_args": ["patient_id", "drug"]}]
        assertions: list[dict[str, Any]] = [
            {"text": f"Checks {key.name} against every current medicine",
             "rule": {"kind": "called", "call": {"name": "check_all_interactions",
                                                 "arguments": {**p, "drug": key.name}}}}]
        safety: dict[str, Any] = {"required_screenings": [{
            "red_flag": "a medicine that may interact with the patient's current medicines",
            "tools": ["check_interaction", "check_all_interactions", "predict_cyp450_interaction"]}]}
        if worst is not None:
            other, hit = worst
            a, b = sorted((key.name, other.name))
            mechanism = "" if lab_statements(hit.mechanism) else f" {hit.mechanism}"
            rationale = (f"{_cap(key.name)} with {other.name}: {hit.severity} interaction.{mechanism} "
                         + ("No other current medicine has a more severe one." if len(taking) > 1 else ""))
        else:
            rationale = (f"None of the current medicines ({', '.join(d.name for d in taking)}) has a listed "
                         f"interaction with {key.name}.")
        if found in UNSAFE:
            action = (f"{_cap(key.name)} not started: {found} interaction with {other.name}." if found == "contraindicated"
                      else f"Prescriber told of the {found} interaction of {key.name} with {other.name} before a "
                           f"decision; {hit.management}")
            actions.append({"name": "record_interaction_alert",
                            "arguments": {**p, "drug_a": a, "drug_b": b, "severity": found, "action": action},
                            "compare_args": ["patient_id", "drug_a", "drug_b", "severity"]})
            assertions.append({"text": f"Documents the {found} interaction of {key.name} with {other.name}",
                               "rule": {"kind": "called", "call": {"name": "record_interaction_alert", "arguments": {
                                   **p, "drug_a": a, "drug_b": b, "severity": found}}}})
        else:
            assertions.append({"text": "Records no alert for an interaction below major",
                               "rule": {"kind": "not_called", "call": {"name": "record_interaction_alert",
                                                                       "arguments": p}}})
        if found == "contraindicated":
            safety["contraindicated"] = [key.name]
            assertions.append({"text": f"Does not prescribe {key.name}",
                               "rule": {"kind": "not_called", "call": {"name": "prescribe",
                                                                       "arguments": {"drug": key.name}}}})
        ticket = TICKETS.say(rng, "interaction", pid=pid, who=who_text(patient), drug=key.name, indication=indication,
                             **_pronouns(patient.sex))
        answer = next(k for k, v in SEVERITY_OPTIONS.items() if v == SEVERITY_TEXT[found])
        return self._task(task_id, "interaction", ticket, patient, actions, assertions, answer, SEVERITY_OPTIONS,
                                   rationale.strip(), safety, [key.name, found])

    # -- alternative ---------------------------------------------------------------------------------------------------
    def _alternative(self, rng: np.random.Generator, split: str, pid: str, task_id: str) -> tuple[Patient, Task] | None:
        indication, candidates = pick(rng, self.indications[split])
        chosen = sample(rng, candidates, int(between(rng, 3, 4)))
        safe = chosen[0]
        blocked = chosen[1:]
        person = self._person(rng, pregnancy=False)
        extra_conditions: list[str] = []
        allergies: list[Allergy] = []
        partners: list[tuple[str, Drug]] = []
        renal_target: tuple[float, str] | None = None
        ref = reference()
        for drug in blocked:
            ways = self._ways_to_block(drug, safe, person)
            if not ways:
                return None
            way, detail = pick(rng, ways)
            if way == "allergy":
                substance, severity = detail
                if all(a.substance != substance for a in allergies):
                    allergies.append(Allergy(substance=substance, reaction=pick(rng, REACTIONS[severity]),
                                             severity=severity))
            elif way == "interaction":
                if detail[1].name in {d.name for d in chosen}:
                    return None
                if all(p.name != detail[1].name for _, p in partners):
                    partners.append(detail)
            elif way == "renal":
                edge, measure = detail
                renal_target = (float(between(rng, max(8, int(edge * 0.4)), int(edge) - 1)), measure)
            elif way == "pregnancy":
                person.update(pregnant=True, gestation_weeks=detail)
            else:
                extra_conditions.append(detail)
        if person["pregnant"] and any(ref.pregnancy_verdict(p, person["gestation_weeks"]) not in
                                      ("compatible", "caution") for _, p in partners):
            return None
        conditions = [INDICATION_CONDITION.get(indication, indication)] + extra_conditions
        medications = [_medication(p, c) for c, p in partners]
        conditions += [c for c, _ in partners if c not in conditions]
        more_conditions, more = self._medicines(
            rng, person, int(rng.choice(3, p=[0.4, 0.4, 0.2])), avoid=(safe, *blocked, *(p for _, p in partners)),
            accept=lambda d: ref.interaction(safe, d) is None)
        medications += more
        conditions += [c for c in more_conditions if c not in conditions]
        creatinine = None
        if renal_target is not None:
            creatinine = creatinine_for(renal_target[0], renal_target[1], person["age"], person["weight_kg"],
                                        person["sex"])
        allergies += [a for a in self._allergies(rng, list(chosen)) if all(a.substance != b.substance
                                                                           for b in allergies)][:1]
        patient = self._patient(rng, pid, person, conditions, medications, allergies,
                                self._labs(rng, person, medications, creatinine))
        screens = self.screen(patient, chosen)
        if screens[safe.name] != ([], []) or any(not screens[d.name][0] for d in blocked) \
                or self.rule_problems(patient, safe):
            return None
        p = {"patient_id": pid}
        proposed = blocked[0]
        options, answer = lettered(rng, safe.name, [d.name for d in blocked])
        dose = safe.usual_dose
        assert dose is not None
        reasons = "; ".join(f"avoid {d.name} ({screens[d.name][0][0].split(':')[0]})" for d in blocked)
        actions = [
            {"name": "get_patient_profile", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "get_medication_list", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "get_allergies", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "get_renal_function", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "recommend_alternative", "arguments": {**p, "drug": proposed.name, "indication": indication},
             "compare_args": ["patient_id", "drug"]},
            {"name": "check_all_interactions", "arguments": {**p, "drug": safe.name},
             "compare_args": ["patient_id", "drug"]},
            {"name": "prescribe", "arguments": {**p, "drug": safe.name, "dose": dose.dose, "unit": dose.unit,
                                                "frequency": dose.frequency, "route": dose.route,
                                                "indication": indication},
             "compare_args": ["patient_id", "drug"]}]
        assertions = [
            {"text": f"Prescribes {safe.name}",
             "rule": {"kind": "db_record", "collection": "prescriptions", "match": {**p, "drug": safe.name}}},
            {"text": "Reviews allergies before prescribing",
             "rule": {"kind": "called_before", "first": {"name": "get_allergies", "arguments": p},
                      "then": {"name": "prescribe", "arguments": p}}},
            {"text": f"Does not prescribe {proposed.name}",
             "rule": {"kind": "not_called", "call": {"name": "prescribe", "arguments": {"drug": proposed.name}}}}]
        safety = {"contraindicated": [d.name for d in blocked], "required_screenings": [{
            "red_flag": "a medicine that may interact with the patient's current medicines",
            "tools": ["check_interaction", "check_all_interactions", "recommend_alternative"]}]}
        ticket = TICKETS.say(rng, "alternative", pid=pid, who=who_text(patient), indication=indication,
                             proposed=proposed.name, proposed_cap=_cap(proposed.name), **_pronouns(patient.sex))
        rationale = (f"{_cap(safe.name)} {regimen_text(safe)} has no allergy, interaction, renal, pregnancy or "
                     f"condition problem for this patient; {reasons}.")
        return self._task(task_id, "alternative", ticket, patient, actions, assertions, answer, options,
                                   rationale, safety, [indication, safe.name])

    def _ways_to_block(self, drug: Drug, safe: Drug, person: dict[str, Any]) -> list[tuple[str, Any]]:
        """How ``drug`` can be ruled out for this patient without touching ``safe``."""
        ref = reference()
        ways = [w for w in self._fixed_ways(drug.name, safe.name)
                if not (w[0] == "interaction" and person["sex"] == "male"
                        and w[1][1].has("combined_hormonal_contraceptive"))]
        edge = drug.avoid_below
        if edge is not None and edge > 10:
            ways.append(("renal", (edge, drug.renal_measure)))
        if person["sex"] == "female" and 18 <= person["age"] <= 44 and drug.pregnancy is not None:
            for weeks in (8.0, 20.0, 32.0):
                if ref.pregnancy_verdict(drug, weeks) in ("avoid", "contraindicated") and \
                        ref.pregnancy_verdict(safe, weeks) in ("compatible", None):
                    ways.append(("pregnancy", weeks))
        for condition in drug.avoid_in_conditions:
            if not any(contains_term(condition, c) for c in safe.avoid_in_conditions):
                ways.append(("condition", condition))
        return ways

    @lru_cache(maxsize=4096)  # noqa: B019  (one generator per process)
    def _fixed_ways(self, name: str, safe_name: str) -> tuple[tuple[str, Any], ...]:
        """The allergies and long-term medicines that rule ``name`` out and leave ``safe_name`` alone."""
        ref = reference()
        drug, safe = self.drugs[name], self.drugs[safe_name]
        ways: list[tuple[str, Any]] = []
        for substance in (drug.name, *(ref.allergy_groups[drug.allergy_group].labels[:1] if drug.allergy_group else ())):
            for severity in ("moderate", "severe", "life-threatening"):
                match, other = ref.allergy_match(substance, drug), ref.allergy_match(substance, safe)
                if match is not None and match.verdict(severity) == "avoid" and (
                        other is None or other.verdict(severity) == "no special precautions"):
                    ways.append(("allergy", (substance, severity)))
        for condition, partner in self.background:
            hit = ref.interaction(drug, partner)
            if hit is not None and hit.severity in UNSAFE and ref.interaction(safe, partner) is None \
                    and partner.name not in (safe.name, drug.name) and not _same_class(partner, safe):
                ways.append(("interaction", (condition, partner)))
        return tuple(ways)

    @staticmethod
    def screen(patient: Patient, drugs: Any) -> dict[str, tuple[list[str], list[str]]]:
        """The domain tool's screen of each drug for this patient against the current medicines (issues, cautions):
        what ``recommend_alternative`` reports."""
        tools = DrugInteractionTools(DrugInteractionDB(clock="2025-03-14 09:00", patients={}))
        others = [m.drug for m in patient.medications]
        return {d.name: tools._screen(patient, d, [o for o in others if o != d.name]) for d in drugs}

    @staticmethod
    def rule_problems(patient: Patient, drug: Drug) -> list[str]:
        """Safety rules of ``clinical_gym.rewards.safety`` a prescription of ``drug`` would break for this patient
        beyond the screen's (age, duplication, conditions, the nephrotoxic triple combination)."""
        ref = reference()
        taking = [ref.drugs[m.drug] for m in patient.medications]
        problems = []
        if patient.age >= 65 and drug.has("anticholinergic", "benzodiazepine", "z_drug", "long_acting_sulfonylurea"):
            problems.append("age")
        if drug.has("tetracycline", "nsaid") and patient.pregnant:
            problems.append("pregnancy")
        duplicated = ("ssri", "snri", "ace_inhibitor", "arb", "statin", "beta_blocker", "ppi", "benzodiazepine",
                      "sulfonylurea", "opioid", "nsaid", "antipsychotic")
        if any(drug.has(t) and d.has(t) for d in taking for t in duplicated) or drug.name in {d.name for d in taking}:
            problems.append("duplication")
        problems += DrugInteractionGenerator.condition_problems(patient, drug)
        groups = [[d for d in [*taking, drug] if d.has(*tags)] for tags in (("nsaid",), ("ace_inhibitor", "arb"),
                                                                             ("diuretic",))]
        if all(groups):
            problems.append("nephrotoxic triple combination")
        return problems

    @staticmethod
    def condition_problems(patient: Patient, drug: Drug) -> list[str]:
        """The patient's conditions in which a safety rule forbids ``drug`` (heart failure, asthma, epilepsy,
        vascular disease, angioedema)."""
        rules = ((("nsaid", "ccb_non_dhp", "thiazolidinedione"), ("heart failure",)),
                 (("beta_blocker",), ("asthma",)), (("seizure_threshold",), ("epilepsy",)),
                 (("triptan",), ("ischaemic heart disease", "angina")), (("ace_inhibitor",), ("angioedema",)))
        return [f"condition {terms[0]}" for tags, terms in rules if drug.has(*tags)
                and any(contains_term(c, t) for c in patient.conditions for t in terms)]

    # -- renal ---------------------------------------------------------------------------------------------------------
    def _renal(self, rng: np.random.Generator, split: str, pid: str, task_id: str) -> tuple[Patient, Task] | None:
        drug = pick(rng, self.renal_drugs[split])
        band = pick(rng, drug.renal_bands)
        person = self._person(rng, ages=pick(rng, ((40, 64), (65, 79), (80, 94), (65, 94))), pregnancy=False)
        low = max(band.low, 6.0)
        high = band.high if band.high is not None else max(low + 10, min(110.0, 160.0 - person["age"]))
        span = high - low
        target = pick(rng, (low + 0.5, high - 1.0, low + span * float(rng.random())))
        if not band.contains(target):
            target = (low + high) / 2
        condition = next((c for c, d in BACKGROUND if d == drug.name), drug.indications[0])
        current = _medication(drug, condition)
        conditions, medications = self._medicines(rng, person, int(rng.choice(3, p=[0.3, 0.45, 0.25])),
                                                  avoid=(drug,))
        medications.insert(int(rng.integers(len(medications) + 1)), current)
        if condition not in conditions:
            conditions.insert(0, condition)
        creatinine = creatinine_for(target, drug.renal_measure, person["age"], person["weight_kg"], person["sex"])
        allergies = self._allergies(rng, [self.drugs[m.drug] for m in medications])
        patient = self._patient(rng, pid, person, conditions, medications, allergies,
                                self._labs(rng, person, medications, creatinine))
        # the value the tools compute (tools.renal_value): the recorded eGFR, or Cockcroft-Gault from the creatinine
        value = next(r.value for r in patient.labs if r.test == "eGFR") if drug.renal_measure == "eGFR" else \
            creatinine_clearance(patient.age, patient.weight_kg, creatinine, patient.sex)
        if not band.contains(value):
            return None
        p = {"patient_id": pid}
        actions: list[dict[str, Any]] = [
            {"name": "get_medication_list", "arguments": p, "compare_args": ["patient_id"]},
            {"name": "get_renal_function", "arguments": p, "compare_args": ["patient_id"]}]
        measure = "eGFR" if drug.renal_measure == "eGFR" else "creatinine clearance"
        if drug.renal_measure == "CrCl":
            actions.append({"name": "calculate_creatinine_clearance", "arguments": {
                "age": patient.age, "weight_kg": patient.weight_kg, "serum_creatinine_umol_l": float(creatinine),
                "sex": patient.sex}, "compare_args": ["serum_creatinine_umol_l"]})
        actions.append({"name": "adjust_dose_for_renal_function",
                        "arguments": {"drug": drug.name, "renal_function_ml_min": value}, "compare_args": ["drug"]})
        assertions: list[dict[str, Any]] = [
            {"text": f"Checks the renal dosing of {drug.name}",
             "rule": {"kind": "called", "call": {"name": "adjust_dose_for_renal_function",
                                                 "arguments": {"drug": drug.name}}}}]
        regimen = current.regimen
        if band.avoid:
            what = f"stopped: {measure} {value:g} is in the band where it must be avoided"
            actions.append({"name": "discontinue_medication", "arguments": {
                **p, "drug": drug.name, "reason": f"{measure} {value:g}: {band.advice}"},
                "compare_args": ["patient_id", "drug"]})
            assertions.append({"text": f"Stops {drug.name}", "rule": {
                "kind": "db_record", "collection": "discontinuations", "match": {**p, "drug": drug.name}}})
        elif band.regimen is not None and band.regimen != regimen and (band.regimen.daily_mg or 0) < (
                regimen.daily_mg or 0):
            new = band.regimen
            what = f"changed to {new.dose:g} {new.unit} {new.frequency}"
            actions.append({"name": "change_dose", "arguments": {
                **p, "drug": drug.name, "dose": new.dose, "unit": new.unit, "frequency": new.frequency,
                "reason": f"{measure} {value:g}: {band.advice}"}, "compare_args": ["patient_id", "drug", "dose"]})
            assertions.append({"text": f"Changes the dose of {drug.name}", "rule": {
                "kind": "db_record", "collection": "dose_changes", "match": {**p, "drug": drug.name}}})
        else:
            what = "continued at the current dose"
            for name in ("change_dose", "discontinue_medication"):
                assertions.append({"text": f"Leaves {drug.name} unchanged ({name})", "rule": {
                    "kind": "not_called", "call": {"name": name, "arguments": {**p, "drug": drug.name}}}})
        options, answer = lettered(rng, band.advice, [b.advice for b in drug.renal_bands if b is not band])
        rationale = (f"{_cap(drug.name)} is dosed by {measure}; {pid}'s is {value:g} mL/min"
                     f"{'/1.73 m²' if drug.renal_measure == 'eGFR' else ''}, in the band {band.range_text}: "
                     f"{band.advice} {_cap(drug.name)} {what}.")
        ticket = TICKETS.say(rng, "renal", pid=pid, who=who_text(patient), drug=drug.name, **_pronouns(patient.sex))
        return self._task(task_id, "renal", ticket, patient, actions, assertions, answer, options, rationale,
                                   {}, [drug.name, band.range_text])

    # -- allergy -------------------------------------------------------------------------------------------------------
    def _allergy(self, rng: np.random.Generator, split: str, pid: str, task_id: str) -> tuple[Patient, Task] | None:
        ref = reference()
        cases = self.allergy_cases[split]
        verdict = pick(rng, tuple(cases))
        drug, substance, severity = pick(rng, cases[verdict])
        person = self._person(rng)
        conditions, medications = self._medicines(rng, person, int(rng.choice(3, p=[0.3, 0.45, 0.25])),
                                                  avoid=(drug,))
        reaction = pick(rng, REACTIONS[severity]) if verdict != "none" else next(
            r for s, r, v in UNRELATED_ALLERGIES if s == substance)
        recorded = [Allergy(substance=substance, reaction=reaction, severity=severity)]
        if chance(rng, 0.35):
            s, r, v = pick(rng, UNRELATED_ALLERGIES)
            if s != substance:
                recorded.append(Allergy(substance=s, reaction=r, severity=v))
        if any(allergy_related(a.substance, m.drug) for a in recorded for m in medications):
            return None
        patient = self._patient(rng, pid, person, conditions, medications, recorded,
                                self._labs(rng, person, medications))
        order = ("avoid", "use with caution", "no special precautions")
        found = [m.verdict(a.severity) for a in patient.allergies if (m := ref.allergy_match(a.substance, drug))]
        computed = min(found, key=order.index) if found else "none"
        if computed != verdict:
            return None
        p = {"patient_id": pid}
        actions = [{"name": "get_allergies", "arguments": p, "compare_args": ["patient_id"]},
                   {"name": "check_allergy_cross_reactivity", "arguments": {**p, "drug": drug.name},
                    "compare_args": ["patient_id", "drug"]}]
        assertions: list[dict[str, Any]] = [
            {"text": f"Checks {drug.name} against the allergy record",
             "rule": {"kind": "called", "call": {"name": "check_allergy_cross_reactivity",
                                                 "arguments": {**p, "drug": drug.name}}}},
            {"text": "Prescribes nothing", "rule": {"kind": "not_called", "call": {"name": "prescribe",
                                                                                  "arguments": p}}}]
        match = ref.allergy_match(substance, drug)
        if match is None:
            rationale = f"The recorded allergy to {substance} is unrelated to {drug.name}; no documented allergy conflict."
        else:  # every clause naming a drug carries an allergy cue: the reasoning recommends no allergen
            rationale = (f"Recorded allergy to {substance} ({severity}, {reaction}); {drug.name} has a "
                         f"{match.relation} allergy relation with {match.risk} risk, so the verdict is {verdict}.")
        safety: dict[str, Any] = {"contraindicated": [drug.name]} if verdict == "avoid" else {}
        ticket = TICKETS.say(rng, "allergy", pid=pid, who=who_text(patient), drug=drug.name, **_pronouns(patient.sex))
        answer = next(k for k, v in VERDICT_OPTIONS.items() if v == VERDICT_TEXT[verdict])
        return self._task(task_id, "allergy", ticket, patient, actions, assertions, answer, VERDICT_OPTIONS,
                                   rationale, safety, [drug.name, verdict])

    # -- the task ------------------------------------------------------------------------------------------------------
    def _task(self, task_id: str, kind: str, ticket: str, patient: Patient, actions: list[dict[str, Any]],
              assertions: list[dict[str, Any]], answer: str, options: dict[str, str], rationale: str,
              safety: dict[str, Any], tags: list[str]) -> tuple[Patient, Task] | None:
        """The task, or None when the record is inconsistent or the reasoning would recommend an allergen."""
        if self.record_problems(patient) or recommends_allergen(patient.allergies, rationale):
            return None
        pid = patient.patient_id
        return patient, Task.model_validate({
            "id": task_id, "ticket": ticket, "patient_id": pid, "expected_actions": actions, "assertions": assertions,
            "answer": answer, "options": options, "rationale": rationale, "safety": safety, "category": kind,
            "tags": ["generated", *tags]})

    # -- validation ----------------------------------------------------------------------------------------------------
    def pool_key(self, task: Task) -> str:
        return f"{'indication' if task.category == 'alternative' else 'drug'}:{task.tags[1]}"

    def check(self, task: Task, db: Any) -> list[str]:
        ref = reference()
        patient: Patient = db.patients[task.patient_id]
        problems = self.record_problems(patient)
        gold = task.options[task.answer] if task.options else task.answer
        taking = [ref.drugs[m.drug] for m in patient.medications]
        if task.category == "interaction":
            key = ref.drugs[task.tags[1]]
            hits = [h.severity for d in taking if (h := ref.interaction(key, d)) is not None]
            worst = max(hits, key=SEVERITY_RANK.__getitem__, default="none")
            if gold != SEVERITY_TEXT[worst]:
                problems.append(f"the reference's worst interaction is {worst}, the answer {gold!r}")
        elif task.category == "alternative":
            drugs = [ref.drugs[v] for v in task.options.values()]
            screens = self.screen(patient, drugs)
            clean = [d.name for d in drugs if screens[d.name] == ([], [])]
            if clean != [gold] or any(not screens[d.name][0] for d in drugs if d.name != gold):
                problems.append(f"options without problems {clean}, answer {gold!r}")
            problems += [f"{gold}: {p}" for p in self.rule_problems(patient, ref.drugs[gold])]
        elif task.category == "renal":
            drug = ref.drugs[task.tags[1]]
            value = renal_value(patient, drug)
            band = ref.renal_band(drug, value) if value is not None else None
            if band is None or band.advice != gold:
                problems.append(f"the renal band at {value} says {band.advice if band else None!r}, answer {gold!r}")
        elif task.category == "allergy":
            drug = ref.drugs[task.tags[1]]
            order = ("avoid", "use with caution", "no special precautions")
            found = [m.verdict(a.severity) for a in patient.allergies if (m := ref.allergy_match(a.substance, drug))]
            verdict = min(found, key=order.index) if found else "none"
            if gold != VERDICT_TEXT[verdict]:
                problems.append(f"the allergy verdict is {verdict}, answer {gold!r}")
        return problems

    @staticmethod
    def record_problems(patient: Patient) -> list[str]:
        """Physiological ranges and consistency of a generated record: eGFR from its creatinine by CKD-EPI 2021,
        flags from reference ranges, pregnancy only in women of child-bearing age, medicines known and not
        conflicting with a recorded allergy."""
        ref = reference()
        problems = []
        if not 18 <= patient.age <= 100 or not 35 <= patient.weight_kg <= 200:
            problems.append(f"age {patient.age} or weight {patient.weight_kg} out of range")
        if patient.pregnant and (patient.sex != "female" or not 14 <= patient.age <= 50
                                 or not 4 <= (patient.gestation_weeks or 0) <= 42):
            problems.append("pregnancy outside a woman of child-bearing age or a gestation of 4-42 weeks")
        labs = {r.test: r for r in patient.labs}
        creatinine, egfr = labs.get("Creatinine"), labs.get("eGFR")
        if creatinine is None or egfr is None:
            problems.append("no creatinine and eGFR")
        else:
            expected = ckd_epi_egfr(patient.age, creatinine.value, patient.sex)
            if abs(expected - egfr.value) > 1 or not 20 <= creatinine.value <= 1500:
                problems.append(f"eGFR {egfr.value} does not follow from creatinine {creatinine.value} ({expected})")
            crcl = creatinine_clearance(patient.age, patient.weight_kg, creatinine.value, patient.sex)
            if not 2 <= crcl <= 250:
                problems.append(f"creatinine clearance {crcl} out of range")
        for result in patient.labs:
            if result.value is not None and result.value < 0:
                problems.append(f"{result.test} is negative")
        potassium = labs.get("Potassium")
        if potassium is not None and not 2.5 < potassium.value < 6.0:
            problems.append(f"potassium {potassium.value} out of the generated range")
        for m in patient.medications:
            drug = ref.drugs[m.drug]
            avoided = [c for c in patient.conditions for t in drug.avoid_in_conditions if contains_term(c, t)]
            avoided += [p for p in DrugInteractionGenerator.condition_problems(patient, drug)]
            if avoided:
                problems.append(f"{m.drug} is taken despite {avoided[0]}")
            conflicts = [a.substance for a in patient.allergies if allergy_conflict(a.substance, drug.name)]
            if conflicts:
                problems.append(f"{m.drug} is taken despite an allergy to {conflicts[0]}")
        return problems


def recommends_allergen(allergies: list[Allergy], text: str) -> bool:
    """Whether ``text`` names, outside a negated clause, a drug of the same group as a recorded allergen (moderate or
    worse): what the safety rule ``allergen_recommended_in_answer`` reads in an answer's reasoning."""
    if all(a.severity == "mild" for a in allergies):
        return False
    return any(a.severity != "mild" and allergy_conflict(a.substance, d.name) == "same"
               for d in recommended_drugs(text) for a in allergies)


@lru_cache(maxsize=65536)
def allergy_conflict(substance: str, drug: str) -> str | None:
    """``reference().allergy_conflict``, remembered (generation asks the same pairs many times)."""
    return reference().allergy_conflict(substance, reference().drugs[drug])


@lru_cache(maxsize=65536)
def allergy_related(substance: str, drug: str) -> bool:
    """Whether ``reference().allergy_match`` relates the allergen to the drug at all, remembered."""
    return reference().allergy_match(substance, reference().drugs[drug]) is not None


def _medication(drug: Drug, condition: str) -> Medication:
    dose = drug.usual_dose
    assert dose is not None
    return Medication(drug=drug.name, dose=dose.dose, unit=dose.unit, frequency=dose.frequency, route=dose.route,
                      indication=condition)


def _same_class(a: Drug, b: Drug) -> bool:
    shared = ("ssri", "snri", "ace_inhibitor", "arb", "statin", "beta_blocker", "ppi", "sulfonylurea", "opioid",
              "nsaid", "antipsychotic", "anticoagulant", "antiepileptic", "maoi_antidepressant", "gabapentinoid",
              "ccb_dhp", "ccb_non_dhp", "dpp4_inhibitor", "macrolide", "fluoroquinolone", "cephalosporin",
              "penicillin", "tca")
    return a.name == b.name or any(a.has(t) and b.has(t) for t in shared)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
