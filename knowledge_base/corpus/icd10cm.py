"""Passages from ICD-10-CM (CMS/NCHS, public domain) as shipped by ``simple-icd-10-cm``.

One passage per chapter, block, category and subcategory code (codes made by appending a 7th character are
described in their parent's passage): its description, where it sits (chapter, block, parent), inclusion
terms, includes / excludes notes, coding instructions and its subdivisions.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import version

import simple_icd_10_cm as cm

from clinical_gym.knowledge_base.passage import Passage

CATEGORY = "icd10cm"
MAX_LISTED = 30


def _listing(label: str, items: list[str]) -> str:
    if not items:
        return ""
    more = f"; and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return f" {label}: {'; '.join(items[:MAX_LISTED])}{more}."


def _kind(code: str) -> str:
    if cm.is_chapter(code):
        return "chapter"
    if cm.is_category(code):  # a block holding a single category shares its code: describe the category
        return "category"
    return "block" if cm.is_block(code) else "code"


def _passage(code: str, source: str) -> Passage:
    kind = _kind(code)
    desc = cm.get_description(code)
    ancestors = [a for a in cm.get_ancestors(code) if a != code]
    where = ", ".join(f"{_kind(a)} {a} ({cm.get_description(a)})" for a in reversed(ancestors))
    text = f"{desc}. ICD-10-CM {kind} {code}" + (f", within {where}." if where else ".")
    text += _listing("Inclusion terms", cm.get_inclusion_term(code))
    text += _listing("Includes", cm.get_includes(code))
    text += _listing("Excludes1 (not coded here)", cm.get_excludes1(code))
    text += _listing("Excludes2 (not part of this condition; may be coded together)", cm.get_excludes2(code))
    for label, note in (("Code first", cm.get_code_first(code)), ("Use additional code", cm.get_use_additional_code(code)),
                        ("Code also", cm.get_code_also(code)), ("Note", cm.get_notes(code))):
        if note:
            text += f" {label}: {' '.join(note.split())}."
    seventh = cm.get_seven_chr_def(code)
    if seventh:
        text += _listing("Seventh characters", [f"{c} {d}" for c, d in seventh.items()])
    children = [c for c in cm.get_children(code) if not cm.is_extended_subcategory(c)]
    text += _listing("Subdivisions", [f"{c} {cm.get_description(c)}" for c in children])
    title = f"ICD-10-CM {kind} {code}: {desc}" if kind in ("chapter", "block") else f"{code} {desc}"
    return Passage(doc_id=f"icd10cm:{code}", title=title, content=text, source=source, category=CATEGORY,
                   dataset_name="icd10cm")


def icd10cm_passages() -> Iterator[Passage]:
    """A passage for every ICD-10-CM chapter, block and code without a 7th-character extension."""
    source = f"ICD-10-CM tabular list (CMS/NCHS, public domain) via simple-icd-10-cm {version('simple-icd-10-cm')}"
    for code in dict.fromkeys(cm.get_all_codes(with_dots=True)):
        if not cm.is_extended_subcategory(code):
            yield _passage(code, source)
