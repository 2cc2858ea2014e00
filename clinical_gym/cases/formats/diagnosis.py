"""Ground truth for imported records: an ICD-10-CM code for a diagnosis title, and the case's specialty."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from clinical_gym.cases.schema import SPECIALTIES

UNKNOWN_ICD10 = "R69"  # Illness, unspecified

# ICD-10-CM code ranges -> specialty, first match wins ("A00" <= code[:3] <= "B99").
_CHAPTERS: tuple[tuple[str, str, str], ...] = (
    ("A00", "B99", "infectious"), ("C15", "C26", "digestive"), ("C30", "C39", "respiratory"), ("C43", "C44", "skin"),
    ("C50", "C58", "obstetric_gynecologic"), ("C60", "C68", "genitourinary"), ("C69", "C69", "ophthalmologic"),
    ("C70", "C72", "neurological"), ("C73", "C75", "endocrine"), ("C81", "C96", "hematologic"), ("D50", "D89", "hematologic"),
    ("E00", "E89", "endocrine"), ("F01", "F99", "mental_health"), ("G00", "G99", "neurological"), ("H00", "H59", "ophthalmologic"),
    ("H60", "H95", "ent"), ("I00", "I99", "circulatory"), ("J00", "J99", "respiratory"), ("K00", "K95", "digestive"),
    ("L00", "L99", "skin"), ("M00", "M99", "musculoskeletal"), ("N00", "N29", "renal"), ("N30", "N53", "genitourinary"),
    ("N60", "N98", "obstetric_gynecologic"), ("O00", "O9A", "obstetric_gynecologic"), ("P00", "P96", "pediatric"),
    # congenital malformations (ICD-10-CM chapter 17) by the organ system of each block: a patent ductus arteriosus
    # (Q25.0) is circulatory, Hirschsprung disease (Q43.1) digestive
    ("Q00", "Q07", "neurological"), ("Q10", "Q15", "ophthalmologic"), ("Q16", "Q18", "ent"), ("Q20", "Q28", "circulatory"),
    ("Q30", "Q34", "respiratory"), ("Q35", "Q37", "ent"), ("Q38", "Q45", "digestive"), ("Q50", "Q52", "obstetric_gynecologic"),
    ("Q53", "Q56", "genitourinary"), ("Q60", "Q63", "renal"), ("Q64", "Q64", "genitourinary"), ("Q65", "Q79", "musculoskeletal"),
    ("Q80", "Q84", "skin"), ("Q85", "Q99", "pediatric"),
    ("S00", "T34", "musculoskeletal"),
)

# Symptom topic -> the specialty it most often points to (used when the diagnosis has no usable code).
_SYMPTOM_SPECIALTY: dict[str, str] = {
    **dict.fromkeys(("cough", "sputum", "hemoptysis", "shortness_of_breath", "wheezing"), "respiratory"),
    **dict.fromkeys(("chest_pain", "palpitations", "leg_swelling", "orthopnea", "calf_pain", "syncope", "cold_extremities"), "circulatory"),
    **dict.fromkeys(("abdominal_pain", "nausea", "vomiting", "hematemesis", "diarrhea", "constipation", "bowel_changes", "blood_in_stool",
                     "heartburn", "dysphagia", "bloating", "jaundice", "pale_stool", "appetite_loss"), "digestive"),
    **dict.fromkeys(("dysuria", "urinary_frequency", "urinary_urgency", "hematuria", "urinary_retention", "urinary_symptoms",
                     "penile_discharge", "testicular_pain", "dark_urine"), "genitourinary"),
    "flank_pain": "renal",
    **dict.fromkeys(("vaginal_discharge", "vaginal_bleeding", "pelvic_pain", "breast_symptoms"), "obstetric_gynecologic"),
    **dict.fromkeys(("headache", "dizziness", "confusion", "seizure", "focal_weakness", "numbness", "speech_difficulty", "facial_droop",
                     "memory_problems", "neck_stiffness"), "neurological"),
    **dict.fromkeys(("vision_changes", "eye_pain", "photophobia"), "ophthalmologic"),
    **dict.fromkeys(("hearing_loss", "ear_pain", "sore_throat", "nasal_congestion", "hoarseness", "facial_pain", "toothache"), "ent"),
    **dict.fromkeys(("rash", "itching", "skin_lesion", "hair_loss", "dry_skin"), "skin"),
    **dict.fromkeys(("joint_pain", "joint_swelling", "back_pain", "muscle_pain", "limb_pain", "limp"), "musculoskeletal"),
    **dict.fromkeys(("polyuria", "polydipsia", "heat_intolerance", "cold_intolerance", "weight_gain", "neck_swelling", "tremor"), "endocrine"),
    **dict.fromkeys(("anxiety", "low_mood", "suicidal_thoughts", "sleep_problems"), "mental_health"),
    **dict.fromkeys(("bruising", "swollen_glands"), "hematologic"),
    **dict.fromkeys(("fever", "chills", "night_sweats", "sweating"), "infectious"),
}
FALLBACK_SPECIALTY = "infectious"
# Category names of public datasets (MTMedDialog "Digestive System Diseases") -> specialty, by word start.
_CATEGORY_WORDS: tuple[tuple[str, str], ...] = (
    ("digest", "digestive"), ("gastro", "digestive"), ("respir", "respiratory"), ("infect", "infectious"), ("genitourin", "genitourinary"),
    ("urolog", "genitourinary"), ("nervous", "neurological"), ("neuro", "neurological"), ("circulat", "circulatory"),
    ("cardio", "circulatory"), ("heart", "circulatory"), ("endocrin", "endocrine"), ("metabol", "endocrine"), ("skin", "skin"), ("dermat", "skin"),
    ("musculo", "musculoskeletal"), ("psych", "mental_health"), ("mental", "mental_health"), ("hemat", "hematologic"),
    ("blood", "hematologic"), ("obstet", "obstetric_gynecologic"), ("gyn", "obstetric_gynecologic"), ("ear", "ent"),
    ("otolaryn", "ent"), ("eye", "ophthalmologic"), ("ophthal", "ophthalmologic"), ("pediatr", "pediatric"), ("renal", "renal"),
    ("kidney", "renal"),
)
_CODE = re.compile(r"^[A-Z][0-9][0-9A-Z](\.?[0-9A-Z]{1,4})?$")


@dataclass(frozen=True)
class CodedDiagnosis:
    """An ICD-10-CM code for a diagnosis and how it was found: 'given', 'looked up' or 'unknown' (then R69)."""

    icd10: str
    how: str

    @property
    def note(self) -> str:
        """The provenance line recorded in the case's ``source``."""
        if self.how == "given":
            return f"ICD-10 {self.icd10} as given"
        if self.how == "looked up":
            return f"ICD-10 {self.icd10} looked up from the diagnosis title"
        return f"ICD-10 {UNKNOWN_ICD10} (illness, unspecified): no ICD-10-CM title matched the diagnosis"


@lru_cache(maxsize=65536)
def code_diagnosis(name: str, given: str | None = None) -> CodedDiagnosis:
    """The ICD-10-CM code for a diagnosis: the given one when valid, else the code the name names best (the longest
    matched title or Alphabetic Index term, then the most general code: ``icd10_lookup.best_icd10``), else R69."""
    if given and _CODE.match(given.strip().upper()):
        return CodedDiagnosis(given.strip().upper(), "given")
    from clinical_gym.rewards.icd10_lookup import best_icd10

    folded = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))  # "Barré" -> "Barre"
    code = best_icd10(folded)
    return CodedDiagnosis(UNKNOWN_ICD10, "unknown") if code is None else CodedDiagnosis(code, "looked up")


def specialty_for(coded: CodedDiagnosis, symptoms: list[str], category: str = "") -> str:
    """The specialty of an imported case: from the dataset's category name, else the ICD-10 chapter, else the first
    symptom that points to one, else the fallback."""
    words = category.lower()
    for word, specialty in _CATEGORY_WORDS:
        if re.search(rf"\b{word}", words):
            return specialty
    if coded.how != "unknown":
        head = coded.icd10.replace(".", "")[:3]
        for low, high, specialty in _CHAPTERS:
            if low <= head <= high:
                return specialty
    for symptom in symptoms:
        if symptom in _SYMPTOM_SPECIALTY:
            return _SYMPTOM_SPECIALTY[symptom]
    return FALLBACK_SPECIALTY


assert set(_SYMPTOM_SPECIALTY.values()) | {s for *_, s in _CHAPTERS} <= set(SPECIALTIES)
