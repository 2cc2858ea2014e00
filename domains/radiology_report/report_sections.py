"""Reading a free-text radiology report into its sections.

A section starts with a heading followed by a colon (``"IMPRESSION:"``, ``"**Findings:**"``, ``"## Comparison:"``), at
the start of a line or after the end of a sentence, or with a heading alone on its line (``"FINDINGS"``). Headings are
matched case-insensitively against the names and common synonyms in ``SECTION_ALIASES`` ("Conclusion" is the
impression, "Clinical history" the indication, "BI-RADS" the assessment, ...). Other headings ("Lungs:", "Heart:")
are part of the section's text. A section is present when its text is not empty ("Comparison: None." is present).

>>> parse_sections("INDICATION: Fall.\\nFINDINGS: No fracture.\\nConclusion: Normal study.")
{'indication': 'Fall.', 'findings': 'No fracture.', 'impression': 'Normal study.'}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from clinical_gym.cases.schema import normalize

SECTION_ALIASES: dict[str, tuple[str, ...]] = {
    "examination": ("examination", "exam", "study", "procedure name"),
    "indication": ("indication", "indications", "clinical indication", "clinical history", "history",
                   "clinical details", "clinical information", "reason for examination", "reason for exam",
                   "reason for study", "clinical question"),
    "technique": ("technique", "techniques", "protocol", "procedure", "examination technique",
                  "technique and protocol"),
    "comparison": ("comparison", "comparisons", "comparison studies", "prior studies", "priors", "prior imaging"),
    "breast composition": ("breast composition", "breast density", "composition", "density"),
    "findings": ("findings", "finding"),
    "impression": ("impression", "impressions", "conclusion", "conclusions", "summary", "opinion"),
    "assessment": ("assessment", "final assessment", "overall assessment", "bi rads assessment", "bi rads category",
                   "bi rads", "birads"),
    "recommendation": ("recommendation", "recommendations", "follow up", "follow up recommendation", "management"),
    "communication": ("communication", "critical result communication", "result communication",
                      "critical results", "critical result"),
}
_ALIAS_TO_SECTION = {alias: name for name, aliases in SECTION_ALIASES.items() for alias in aliases}


def _alias_pattern(alias: str) -> str:
    # words separated by any run of spaces, hyphens or slashes: "bi rads" matches "BI-RADS", "follow up" "Follow-up"
    return r"[\s\-/]*".join(re.escape(word) for word in alias.split())


_ALTERNATIVES = "|".join(_alias_pattern(a) for a in sorted(_ALIAS_TO_SECTION, key=len, reverse=True))
_MARK = r"(?:\*\*|__)?"
_WITH_COLON = re.compile(
    rf"(?:^|(?<=[.!?;]))[ \t]*(?:\#{{1,6}}[ \t]*)?{_MARK}[ \t]*(?P<name>{_ALTERNATIVES})[ \t]*{_MARK}[ \t]*:"
    rf"[ \t]*{_MARK}",
    re.IGNORECASE | re.MULTILINE)
_ALONE = re.compile(rf"^[ \t]*(?:\#{{1,6}}[ \t]*)?{_MARK}[ \t]*(?P<name>{_ALTERNATIVES})[ \t]*{_MARK}[ \t]*$",
                    re.IGNORECASE | re.MULTILINE)
_STRIP = " \t\r\n*_#"
_ENUMERATOR = re.compile(r"^\s*(?:\(?\d{1,2}[.)]|[-•*])\s+")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def parse_sections(text: str) -> dict[str, str]:
    """The report's sections by canonical name (keys of ``SECTION_ALIASES``), in the order they first appear; a
    heading used twice has its texts joined. Text before the first heading is left out."""
    return dict(_parse(text))


@lru_cache(maxsize=1024)
def _parse(text: str) -> tuple[tuple[str, str], ...]:
    headings = sorted({m.start("name"): m for m in (*_WITH_COLON.finditer(text), *_ALONE.finditer(text))}.values(),
                      key=lambda m: m.start())
    kept = []
    for match in headings:  # drop a heading inside the span of the one before it
        if not kept or match.start() >= kept[-1].end():
            kept.append(match)
    sections: dict[str, str] = {}
    for i, match in enumerate(kept):
        end = kept[i + 1].start() if i + 1 < len(kept) else len(text)
        body = text[match.end():end].strip(_STRIP)
        name = _ALIAS_TO_SECTION[normalize(match.group("name"))]
        if body:
            sections[name] = f"{sections[name]}\n{body}" if name in sections else body
        else:
            sections.setdefault(name, "")
    return tuple((name, body) for name, body in sections.items() if body)


def missing_sections(sections: dict[str, str], required: Iterable[str]) -> list[str]:
    """The ``required`` section names that ``sections`` lacks or leaves empty."""
    return [name for name in required if not sections.get(name, "").strip()]


def impression_headline(sections: dict[str, str]) -> str:
    """The impression's first statement (its first line, without a list number, up to the first full stop)."""
    impression = sections.get("impression", "")
    line = next((ln for ln in impression.splitlines() if ln.strip()), "")
    line = _ENUMERATOR.sub("", line).strip()
    end = _SENTENCE_END.search(line)
    return line[:end.start()].strip() if end else line
