"""The leakage rule: ground truth (diagnosis name, synonyms, ICD-10 title) never appears in what the patient says."""

from __future__ import annotations

import re
import warnings
from functools import lru_cache

from clinical_gym.cases.schema import Case, Diagnosis, normalize

# ICD-10-CM title words that qualify a title without naming anything a patient would say.
_TITLE_NOISE = re.compile(r"\b(unspecified|not elsewhere classified|nec|nos|site not specified|unspecified organism|without complication)\b")


@lru_cache(maxsize=4096)
def icd10_title(code: str) -> str | None:
    """The ICD-10-CM title of ``code`` (dotted or not), or None when the code is unknown."""
    with warnings.catch_warnings():  # the package reads its data with a deprecated importlib call on first import
        warnings.simplefilter("ignore", DeprecationWarning)
        import simple_icd_10_cm as icd

    return icd.get_description(code) if icd.is_valid_item(code) else None


def _title_terms(title: str) -> list[str]:
    cleaned = _TITLE_NOISE.sub(" ", title.lower())
    parts = [p for p in re.split(r"[,;()]", cleaned) if p.strip()]
    return [normalize(parts[0])] if parts else []


@lru_cache(maxsize=1)
def _symptom_names() -> frozenset[str]:
    from clinical_gym.cases.topics import SYMPTOM_NAMES, SYMPTOM_QUESTION_NAMES

    return frozenset(normalize(n) for n in (*SYMPTOM_NAMES, *SYMPTOM_NAMES.values(), *SYMPTOM_QUESTION_NAMES.values()))


def _is_symptom_name(term: str) -> bool:
    """Whether a term is only the name of a symptom ("fever", "chest pain"; the vocabulary's names, not its
    patterns, which also match words such as "migraine"): saying it reveals the complaint, not the diagnosis (a
    case coded "Fever, unspecified" must still let the patient say they have a fever)."""
    return term in _symptom_names()


@lru_cache(maxsize=4096)
def diagnosis_terms(diagnosis: Diagnosis) -> tuple[str, ...]:
    """Normalised phrases that would reveal the diagnosis if they appeared in an observation (a diagnosis or ICD-10
    title that is only a symptom's name is not one)."""
    terms = {normalize(diagnosis.name), *(normalize(s) for s in diagnosis.synonyms)}
    title = icd10_title(diagnosis.icd10)
    if title:
        terms.update(_title_terms(title))
    return tuple(sorted(t for t in terms if len(t) >= 3 and not _is_symptom_name(t)))


def leaked_terms(text: str, diagnosis: Diagnosis) -> list[str]:
    """The diagnosis terms that ``text`` contains as whole words (empty when it is safe)."""
    norm = f" {normalize(text)} "
    return [t for t in diagnosis_terms(diagnosis) if f" {t} " in norm]


def case_leaks(case: Case) -> list[str]:
    """Problems where a patient-facing text of ``case`` names its diagnosis."""
    problems = []
    for text in case.patient_texts:
        hit = leaked_terms(text, case.diagnosis)
        if hit:
            problems.append(f"patient text names the diagnosis ({', '.join(hit)}): {text[:80]!r}")
    for t in case.tests:
        hit = leaked_terms(t.text, case.diagnosis)
        if hit:
            problems.append(f"test {t.name!r} names the diagnosis ({', '.join(hit)})")
    for system, text in case.physical_exam.items():
        hit = leaked_terms(text, case.diagnosis)
        if hit:
            problems.append(f"physical exam {system!r} names the diagnosis ({', '.join(hit)})")
    return problems
