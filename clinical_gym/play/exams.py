"""The exam catalogue (``clinical_gym.domains.workup.catalogue``) as a person reads it while playing: every exam
grouped by kind, one name looked up, or the exams whose names hold a word."""

from __future__ import annotations

import textwrap
from collections import defaultdict

KIND_TITLES = {
    "physical_exam": "physical examination", "bedside": "bedside tests", "lab_panel": "laboratory panels",
    "lab_test": "laboratory tests", "microbiology": "microbiology", "pathology": "pathology", "imaging": "imaging",
    "endoscopy": "endoscopy", "ecg": "ECG", "physiology": "physiology",
}
WIDTH = 110


def _catalogue():
    from clinical_gym.domains.workup.catalogue import load_catalogue

    return load_catalogue()


def exam_listing() -> str:
    """Every exam of the catalogue by kind, names comma-separated."""
    by_kind: dict[str, list[str]] = defaultdict(list)
    for exam in _catalogue():
        by_kind[exam.kind].append(exam.name)
    lines = []
    for kind, title in KIND_TITLES.items():
        if by_kind.get(kind):
            text = f"{title} ({len(by_kind[kind])}): " + ", ".join(sorted(by_kind[kind], key=str.lower))
            lines.append(textwrap.fill(text, WIDTH, subsequent_indent="    "))
    return "\n".join(lines)


def look_up_exam(query: str) -> str:
    """What the catalogue makes of ``query``: the exam it names (with aliases and components), else the exams whose
    names or aliases hold it, else the closest names."""
    catalogue = _catalogue()
    exam = catalogue.resolve(query)
    if exam is not None:
        lines = [f"'{query}' is {exam.name} ({KIND_TITLES.get(exam.kind, exam.kind)})."]
        if exam.aliases:
            lines.append(textwrap.fill("also called: " + ", ".join(exam.aliases[:12]), WIDTH, subsequent_indent="    "))
        if exam.components:
            lines.append(textwrap.fill("reports: " + ", ".join(c.name for c in exam.components), WIDTH,
                                       subsequent_indent="    "))
        return "\n".join(lines)
    word = query.strip().lower()
    holding = sorted(e.name for e in catalogue if word in e.name.lower() or any(word in a for a in e.aliases))
    if holding:
        return textwrap.fill(f"Exams whose names hold '{query}': " + ", ".join(holding), WIDTH,
                             subsequent_indent="    ")
    close = catalogue.suggest(query)
    return f"'{query}' is not in the exam catalogue." + (f" Closest: {', '.join(close)}." if close else "")
