"""Resolve free-text diagnoses to ICD-10-CM codes, through written codes and ICD-10-CM titles.

The title index maps every ICD-10-CM code's title, inclusion terms and "includes" notes, normalised, to the
codes they name.
Each title is indexed in several forms, because clinicians rarely write a title out in full:

* without qualifiers that add nothing a doctor would say ("unspecified", "NOS", "without complications");
* without parenthesised nonessential modifiers ("Essential (primary) hypertension" -> "essential hypertension");
* cut at the first comma ("Acute appendicitis with localized peritonitis, without perforation or gangrene").

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


def icd10_category(code: str) -> str:
    """The 3-character ICD-10-CM category of a code, dotted or not ("K35.80" -> "K35")."""
    return code.replace(".", "").upper()[:3]


def _title_key(text: str) -> str:
    """The index form of a diagnosis text: its normalised words without ICD qualifiers."""
    return " ".join(_WORD.findall(_QUALIFIERS.sub(" ", text.lower())))


def _title_variants(title: str) -> set[str]:
    forms = {title, _PARENTHESISED.sub(" ", title)} if "(" in title or "[" in title else {title}
    if "," in title:
        forms |= {form.split(",", 1)[0] for form in forms}
    return {key for key in map(_title_key, forms) if key and not key.replace(" ", "").isdigit()}


@lru_cache(maxsize=1)
def _title_index() -> tuple[dict[str, tuple[str, ...]], int]:
    """Normalised title -> codes it names, and the longest key in words."""
    import simple_icd_10_cm as icd

    index: dict[str, list[str]] = {}
    for code in icd.get_all_codes(True):
        if icd.is_chapter_or_block(code) or icd.is_extended_subcategory(code):
            continue
        for text in (icd.get_description(code), *icd.get_inclusion_term(code), *icd.get_includes(code)):
            for key in _title_variants(text):
                index.setdefault(key, []).append(code)
    longest = max(len(key.split()) for key in index)
    return {key: tuple(dict.fromkeys(codes)) for key, codes in index.items()}, longest


def written_codes(text: str) -> frozenset[str]:
    """Valid ICD-10-CM codes written in ``text`` ("K35.80", "J18.9", "I10"); case-sensitive, dotted form."""
    import simple_icd_10_cm as icd

    return frozenset(code for code in _WRITTEN_CODE.findall(text) if icd.is_valid_item(code))


def titled_codes(text: str) -> frozenset[str]:
    """ICD-10-CM codes whose titles ``text`` names, as whole word sequences.

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
    return frozenset(code for start, end in maximal for code in index[" ".join(words[start:end])])


def resolve_icd10(text: str) -> frozenset[str]:
    """The ICD-10-CM codes that ``text`` names: codes written in it plus codes whose titles it names."""
    return written_codes(text) | titled_codes(text)
