"""Resolve free-text diagnoses to ICD-10-CM codes, through written codes and ICD-10-CM titles.

The title index maps every ICD-10-CM code's title, inclusion terms and "includes" notes, normalised, to the
codes they name.
Each title is indexed in several forms, because clinicians rarely write a title out in full:

* without qualifiers that add nothing a doctor would say ("unspecified", "NOS", "without complications");
* without parenthesised nonessential modifiers ("Essential (primary) hypertension" -> "essential hypertension");
* cut at the first comma ("Acute appendicitis with localized peritonitis, without perforation or gangrene"), for
  code titles whose part before the comma has two words or more: a one-word head ("Abscess, furuncle and carbuncle
  of nose", "Calculus, tonsil") and every inclusion term ("Deep vein thrombosis, antepartum") keep their comma
  clause, which says where or when, so "abscess", "calculus" or "deep vein thrombosis" alone never name them.

Possessives and British spellings are folded ("Addison's" = "Addison", "haemorrhage" = "hemorrhage"). Clinical
names the tabular list does not hold are added from the ICD-10-CM Alphabetic Index (``INDEX_TERMS``), and a text
naming several codes ranks them by the length of the matched words (``ranked_codes``): "renal cell carcinoma" is
C64.9, not the C80.1 of "carcinoma".

Seventh-character codes are left out: their titles are their parent's plus a comma clause ("..., initial
encounter", "..., right eye"), so the parent already resolves to the same category. The index is built once, on
first use (under a second, after the ``simple_icd_10_cm`` import), from ``simple_icd_10_cm``.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Longest first, so that "unspecified organism" goes before "unspecified".
_QUALIFIERS = re.compile(
    r"\b(?:unspecified organism|unspecified site|site not specified|not elsewhere classified|"
    r"not otherwise specified|without complications?|unspecified|nec|nos)\b"
)
_PARENTHESISED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_WRITTEN_CODE = re.compile(r"\b[A-Z][0-9][0-9A-Z](?:\.[0-9A-Z]{1,4})?\b")
_WORD = re.compile(r"[a-z0-9]+")  # the words of clinical_gym.cases.schema.normalize
_POSSESSIVE = re.compile(r"(?<=[a-z])['’]s\b")
_BRITISH = re.compile(r"haem|aemia|oesophag|oedem|oestr|ischaem|diarrhoe|noea\b|tumour|paed|foet|caec|gynaec")
_AMERICAN = {"haem": "hem", "aemia": "emia", "oesophag": "esophag", "oedem": "edem", "oestr": "estr",
             "ischaem": "ischem", "diarrhoe": "diarrhe", "noea": "nea", "tumour": "tumor", "paed": "ped", "foet": "fet",
             "caec": "cec", "gynaec": "gynec"}

# Clinical names the tabular titles and inclusion terms miss or send elsewhere, coded as the ICD-10-CM Alphabetic
# Index (FY2025) codes them (they replace what the titles would give those words); the first code is the one an
# imported case gets. Checked code by code against the
# ICD-10-CM 2025 tabular list (tests/test_icd10_lookup.py).
INDEX_TERMS: dict[str, tuple[str, ...]] = {
    # Ketoacidosis, diabetic: see Diabetes, by type, with ketoacidosis; type not stated: E11 (Guideline I.C.4.a.2)
    "diabetic ketoacidosis": ("E11.10", "E10.10", "E13.10"),
    "subarachnoid hemorrhage": ("I60.9",),  # Hemorrhage, subarachnoid (nontraumatic) I60.9
    "ureteral calculus": ("N20.1",), "ureteric calculus": ("N20.1",),  # Calculus, ureter N20.1
    "ureteral stone": ("N20.1",), "kidney stone": ("N20.0",),  # Calculus, kidney N20.0
    "norovirus": ("A08.11",), "norovirus gastroenteritis": ("A08.11",),  # Gastroenteritis, due to norovirus A08.11
    # Erythema, chronicum migrans (Lyme) A69.20; the tabular's A26.0 inclusion "Erythema migrans" is erysipeloid
    "erythema migrans": ("A69.20", "A26.0"),
    "calculous cholecystitis": ("K80.10",),  # Cholecystitis, with calculus: Calculus, gallbladder, with cholecystitis
    "acute calculous cholecystitis": ("K80.00",), "acute cholecystitis with calculus": ("K80.00",),
    "cholangitis due to choledocholithiasis": ("K80.30",),  # Calculus, bile duct, with cholangitis K80.30
    "acute cholangitis due to choledocholithiasis": ("K80.32",),
    "acute alcoholic pancreatitis": ("K85.20",),  # Pancreatitis, acute, alcohol induced K85.20
    "adhesive small bowel obstruction": ("K56.50",), "adhesive bowel obstruction": ("K56.50",),  # Obstruction,
    "small bowel obstruction": ("K56.609",), "bowel obstruction": ("K56.609",),  # intestine, adhesive / NOS
    "testicular torsion": ("N44.00",),  # Torsion, testis N44.00
    "pelvic inflammatory disease": ("N73.9",),  # Disease, pelvis, inflammatory (female) N73.9
    "copd": ("J44.9",), "exacerbation of copd": ("J44.1",), "copd exacerbation": ("J44.1",),  # Disease, lung,
    "pulmonary tuberculosis": ("A15.0",),  # obstructive (chronic), with exacerbation J44.1; Tuberculosis, lung A15.0
    "aortic dissection": ("I71.00",),  # Dissection, aorta I71.00
    "diverticulitis": ("K57.92",), "sigmoid diverticulitis": ("K57.32",),  # Diverticulitis (intestine) / large
    "idiopathic intracranial hypertension": ("G93.2",),  # Hypertension, intracranial, benign G93.2
    "renal cell carcinoma": ("C64.9",),  # Carcinoma, renal cell: Neoplasm, kidney, malignant C64.9
    "pancreatic adenocarcinoma": ("C25.9",), "pancreatic cancer": ("C25.9",),  # Neoplasm, pancreas, malignant
    "esophageal adenocarcinoma": ("C15.9",), "esophageal cancer": ("C15.9",),  # Neoplasm, esophagus, malignant
    "non small cell lung cancer": ("C34.90",),  # Neoplasm, lung, malignant C34.90
    "kawasaki disease": ("M30.3",),  # Kawasaki's syndrome M30.3
    "mallory weiss tear": ("K22.6",),  # Mallory-Weiss syndrome K22.6
    "hyponatremia": ("E87.1",),  # Hyponatremia E87.1
    "aortic stenosis": ("I35.0",),  # Stenosis, aortic (valve) I35.0
    "psoriatic arthritis": ("L40.50",),  # Arthritis, psoriatic L40.50
    "septic arthritis": ("M00.9",),  # Arthritis, septic: see Arthritis, pyogenic M00.9
    "gouty arthritis": ("M10.9",),  # Arthritis, gouty: see Gout M10.9
    "pneumococcal pneumonia": ("J13",),  # Pneumonia, pneumococcal J13
    "orbital cellulitis": ("H05.019",),  # Cellulitis, orbit H05.01-
    "giant cell arteritis": ("M31.6",),  # Arteritis, giant cell NEC M31.6
    "infantile hypertrophic pyloric stenosis": ("Q40.0",),  # Stenosis, pylorus, hypertrophic, infantile Q40.0
    "drug rash with eosinophilia and systemic symptoms": ("D72.12",),  # DRESS syndrome D72.12
    "angioedema": ("T78.3",),  # Angioedema (allergic) (any site) T78.3
    "atrioventricular nodal reentrant tachycardia": ("I47.19",),  # Tachycardia, atrioventricular re-entrant I47.19
    "cushing disease": ("E24.0",),  # Cushing's disease: Cushing's syndrome, pituitary-dependent E24.0
    # Syphilis (acquired) A53.9 (the tabular's "Syphilis (late)" of A52.3 is "... of central nervous system NOS")
    "syphilis": ("A53.9",), "primary syphilis": ("A51.0",),  # Syphilis, primary A51.0
    "croup": ("J05.0",),  # Croup, croupous (catarrhal) (infectious) (inflammatory) (nondiphtheritic) J05.0
    "deep venous thrombosis": ("I82.40",),  # Thrombosis, vein, deep (lower extremity) I82.40-
    "pheochromocytoma": ("D35.00",),  # Pheochromocytoma, benign, unspecified site D35.00
    "invasive ductal carcinoma": ("C50.919",),  # Carcinoma, duct, infiltrating, unspecified site (female) C50.91-
    "gastroesophageal reflux disease": ("K21.9",), "gerd": ("K21.9",),  # Reflux, gastroesophageal K21.9
    "peripheral arterial disease": ("I73.9",), "peripheral artery disease": ("I73.9",),  # Disease, peripheral
    "lumbar disc herniation": ("M51.26",),  # arterial I73.9; Displacement, intervertebral disc, lumbar M51.26
    "lumbar disc herniation with sciatica": ("M51.16",),  # Disorder, disc, lumbar, with radiculopathy M51.16
    "benign paroxysmal positional vertigo": ("H81.10",),  # Vertigo, benign paroxysmal (positional) H81.1-
    "herpes labialis": ("B00.1",), "cold sore": ("B00.1",),  # Herpes, labialis B00.1
    "uterine fibroid": ("D25.9",), "uterine fibroids": ("D25.9",),  # Fibroid (tumor), uterus D25.9
    "diabetic peripheral neuropathy": ("E11.42", "E10.42"),  # Polyneuropathy, diabetic: by type, E11.42 default
    "major depressive disorder": ("F32.9",),  # Disorder, depressive, major (single episode) F32.9
    "tinea capitis": ("B35.0",),  # Tinea, capitis B35.0
}


def icd10_category(code: str) -> str:
    """The 3-character ICD-10-CM category of a code, dotted or not ("K35.80" -> "K35")."""
    return code.replace(".", "").upper()[:3]


def _title_key(text: str) -> str:
    """The index form of a diagnosis text: its normalised words without ICD qualifiers, possessives or British
    spellings."""
    text = _BRITISH.sub(lambda m: _AMERICAN[m.group(0)], _POSSESSIVE.sub("", text.lower()))
    return " ".join(_WORD.findall(_QUALIFIERS.sub(" ", text)))


def _title_variants(title: str, *, cut: bool = True) -> set[str]:
    """The index keys of one text; ``cut``: also the part before the first comma when it has two words or more."""
    forms = {title, _PARENTHESISED.sub(" ", title)} if "(" in title or "[" in title else {title}
    keys = {_title_key(form) for form in forms}
    if cut and "," in title:
        keys |= {head for form in forms if len((head := _title_key(form.split(",", 1)[0])).split()) >= 2}
    return {key for key in keys if key and not key.replace(" ", "").isdigit()}


_INDEX_KEYS = frozenset(_title_key(term) for term in INDEX_TERMS)


@lru_cache(maxsize=1)
def _title_index() -> tuple[dict[str, tuple[str, ...]], int]:
    """Normalised title -> codes it names, and the longest key in words."""
    import simple_icd_10_cm as icd

    index: dict[str, list[str]] = {}
    for code in icd.get_all_codes(True):
        if icd.is_chapter_or_block(code) or icd.is_extended_subcategory(code):
            continue
        for key in _title_variants(icd.get_description(code)):
            index.setdefault(key, []).append(code)
        for text in (*icd.get_inclusion_term(code), *icd.get_includes(code)):
            for key in _title_variants(text, cut=False):
                index.setdefault(key, []).append(code)
    for term, codes in INDEX_TERMS.items():  # the Alphabetic Index decides what these words name
        index[_title_key(term)] = list(codes)
    longest = max(len(key.split()) for key in index)
    return {key: tuple(dict.fromkeys(codes)) for key, codes in index.items()}, longest


def written_codes(text: str) -> frozenset[str]:
    """Valid ICD-10-CM codes written in ``text`` ("K35.80", "J18.9", "I10"); case-sensitive, dotted form."""
    import simple_icd_10_cm as icd

    return frozenset(code for code in _WRITTEN_CODE.findall(text) if icd.is_valid_item(code))


def ranked_codes(text: str) -> tuple[str, ...]:
    """ICD-10-CM codes whose titles ``text`` names, as whole word sequences, best first: the codes of the match with
    the most words first; within one match, an Alphabetic Index term's own order, else the most general code first.

    Only the longest matches count: "aspiration pneumonia" resolves to J69.0, not also to the "pneumonia" of J18.9.
    """
    index, longest = _title_index()
    words = _title_key(text).split()
    spans = [
        (start, end)
        for start in range(len(words))
        for end in range(start + 1, min(len(words), start + longest) + 1)
        if " ".join(words[start:end]) in index
    ]
    maximal = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]
    ranked: list[str] = []
    for start, end in sorted(maximal, key=lambda s: (s[0] - s[1], s[0])):
        key = " ".join(words[start:end])
        codes = index[key]
        if key not in _INDEX_KEYS:
            codes = tuple(sorted(codes, key=lambda c: (len(c.replace(".", "")), c)))
        ranked += [c for c in codes if c not in ranked]
    return tuple(ranked)


def titled_codes(text: str) -> frozenset[str]:
    """ICD-10-CM codes whose titles ``text`` names (every code of ``ranked_codes``)."""
    return frozenset(ranked_codes(text))


def best_icd10(text: str) -> str | None:
    """The one code ``text`` names best: a code written in it, else the first of ``ranked_codes``; None if none."""
    written = sorted(written_codes(text))
    ranked = ranked_codes(text)
    return written[0] if written else ranked[0] if ranked else None


def resolve_icd10(text: str) -> frozenset[str]:
    """The ICD-10-CM codes that ``text`` names: codes written in it plus codes whose titles it names."""
    return written_codes(text) | titled_codes(text)
