"""Quality rules every library case must meet (the foundation issue's bar), reported as readable problems."""

from __future__ import annotations

from clinical_gym.cases.leakage import case_leaks, icd10_title
from clinical_gym.cases.schema import Case


def case_problems(case: Case) -> list[str]:
    """Everything that keeps ``case`` from meeting the library bar (empty list: it passes)."""
    p: list[str] = []
    if len(case.history) < 8:
        p.append(f"needs at least 8 history facts, has {len(case.history)}")
    if not any(not f.present for f in case.history):
        p.append("needs at least one pertinent negative (a fact with present=false)")
    if not any(f.volunteered for f in case.history):
        p.append("needs at least one volunteered fact (what the patient says unprompted)")
    if not case.physical_exam:
        p.append("needs a physical exam")
    if case.vitals is None:
        p.append("needs vitals")
    if len(case.tests) < 3:
        p.append(f"needs at least 3 test results, has {len(case.tests)}")
    for t in case.tests:
        for v in t.values:
            if v.value is not None and (not v.unit or v.ref_low is None and v.ref_high is None):
                p.append(f"test {t.name!r} value {v.name!r} needs a unit and a reference range")
    if not any(t.values for t in case.tests):
        p.append("needs at least one lab test with structured values")
    if icd10_title(case.diagnosis.icd10) is None:
        p.append(f"ICD-10 code {case.diagnosis.icd10!r} is not a valid ICD-10-CM code")
    if len(case.differential) < 2:
        p.append("needs a differential of at least 2 diagnoses")
    if not case.recommendation:
        p.append("needs a recommendation")
    if not case.key_exams:
        p.append("needs key_exams (the tests that settle the diagnosis)")
    names = {t.name for t in case.tests}
    for k in case.key_exams:
        if k not in names:
            p.append(f"key exam {k!r} is not one of the case's tests")
    for fid in case.persona.withheld:
        if not case.fact(fid).symptoms:
            p.append(f"withheld fact {fid!r} needs a symptom topic so a specific question can reveal it")
    p.extend(case_leaks(case))
    return p


def disease_problems(disease) -> list[str]:
    """What keeps a disease-table entry from the bar: valid ICD-10-CM, no diagnosis named in patient-facing text."""
    from clinical_gym.cases.leakage import leaked_terms
    from clinical_gym.cases.schema import Diagnosis

    p: list[str] = []
    if icd10_title(disease.icd10) is None:
        p.append(f"ICD-10 code {disease.icd10!r} is not a valid ICD-10-CM code")
    dx = Diagnosis(name=disease.name, icd10=disease.icd10 if icd10_title(disease.icd10) else "R69", synonyms=disease.synonyms)
    texts = [*disease.self_reports, *(t for s in disease.symptoms for t in (*s.phrasings, *(x for v in s.details.values() for x in v))),
             *(t for h in disease.history for t in h.phrasings), *(e.text for e in disease.exam_findings), *(r.text for r in disease.results)]
    for t in texts:
        hit = leaked_terms(t, dx)
        if hit:
            p.append(f"text names the diagnosis ({', '.join(hit)}): {t[:80]!r}")
    if len(disease.symptoms) < 5:
        p.append("needs at least 5 symptoms (with frequencies)")
    if len(disease.history) < 3:
        p.append("needs at least 3 risk factor / history items")
    return p
