"""Converting public data into tool-domain tasks, with the tools an expert would use assigned.

* ``convert_mcq``: MedQA-style multiple-choice rows (``clinical_gym.cases.formats.medqa.MedQARow``) become
  ``MedicalQA-v1`` questions in the bank and tasks: read the question, list the options, search the knowledge
  base, compare the answer with a distractor, eliminate the wrong options, record the reasoning, submit the letter.
* ``convert_cases``: cases (``clinical_gym.cases.Case``, from any loader: OSCE, MTMedDialog, DiagGym, MedQA, HF
  or the library) become ``ClinicalDiagnosis-v1`` patients and diagnosis tasks: review the chart, record the
  diagnosis, submit it.

Only what the source says goes into the task: a case's missing weight stays unrecorded, an allergy without a
stated severity is ``not recorded``. Task ids are a hash of the content (``mqa-x-<12 hex>``, ``cd-x-<12 hex>``), so
converting the same file twice gives the same tasks. Converted items that repeat a hand-written one (the same
question or the same patient and diagnosis) or each other are dropped and reported in ``Conversion.duplicates``;
rows that cannot become a task are reported in ``Conversion.skipped``.

    clinical-gym tools convert --from medqa.jsonl --domain MedicalQA-v1 --out converted/
    gym.make("MedicalQA-v1", tasks="converted/")   # the tasks with their questions (converted/db.json)
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clinical_gym.cases.formats.medqa import MedQARow
from clinical_gym.cases.schema import Case
from clinical_gym.tool_env.database import DomainDB
from clinical_gym.tool_env.task_folder import write_task_folder
from clinical_gym.tool_env.tasks import Task

SIMILAR = 0.9  # word-set Jaccard at or above which two question texts are the same question
_WORD = re.compile(r"[a-z0-9]+")
_LEAD_IN = re.compile(r"(?s)^(?P<vignette>.*[.!])\s+(?P<lead_in>[^.!?]*\?)\s*$")

# Specialty of a converted question, from words in its text; the first table row with a hit wins.
SPECIALTY_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("obstetrics", ("pregnant", "gestation", "weeks' gestation", "postpartum", "prenatal", "labor", "labour")),
    ("paediatrics", ("infant", "newborn", "neonate", "month-old", "toddler")),
    ("psychiatry", ("depressed", "depression", "hallucinations", "suicidal", "anxiety", "psychiatric", "mania")),
    ("toxicology", ("overdose", "ingested", "poisoning", "toxicity")),
    ("cardiology", ("chest pain", "murmur", "myocardial", "ecg", "electrocardiogra", "atrial", "heart failure")),
    ("respiratory", ("dyspnea", "dyspnoea", "cough", "wheez", "pulmonary", "pneumonia", "asthma")),
    ("neurology", ("seizure", "headache", "weakness of", "stroke", "neurologic", "numbness", "gait")),
    ("infectious disease", ("fever", "infection", "hiv", "antibiotic", "culture")),
    ("gastroenterology", ("abdominal pain", "diarrhea", "diarrhoea", "vomiting", "dysphagia", "rectal bleeding")),
    ("hepatology", ("jaundice", "hepatitis", "cirrhosis", "liver")),
    ("nephrology", ("creatinine", "kidney", "renal", "proteinuria")),
    ("endocrinology", ("thyroid", "diabetes", "glucose", "insulin", "cortisol")),
    ("haematology", ("anemia", "anaemia", "hemoglobin", "haemoglobin", "platelet", "bleeding", "bruising")),
    ("rheumatology", ("joint pain", "arthritis", "lupus", "rash over", "synovial")),
    ("dermatology", ("rash", "lesion", "pruritus", "skin")),
    ("urology", ("dysuria", "hematuria", "haematuria", "prostate", "urinary")),
    ("ophthalmology", ("vision", "eye pain", "visual")),
    ("surgery", ("trauma", "postoperative", "laceration", "fracture")),
)
FALLBACK_SPECIALTY = "emergency medicine"  # the broadest specialty of the bank's list


@dataclass
class Conversion:
    """Tasks made from a source, the database they run on, and what was left out (with reasons)."""

    db: DomainDB
    tasks: list[Task]
    skipped: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"{len(self.tasks)} tasks converted; {len(self.duplicates)} duplicates dropped; "
                f"{len(self.skipped)} rows skipped")


def content_id(prefix: str, content: Any) -> str:
    """A deterministic id: ``prefix`` and the first 12 hex digits of the SHA-256 of the canonical JSON content."""
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"{prefix}-{digest[:12]}"


def words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def specialty_of(text: str) -> str:
    low = text.lower()
    return next((name for name, cues in SPECIALTY_WORDS if any(c in low for c in cues)), FALLBACK_SPECIALTY)


# ---------------------------------------------------------------------------------------------------------------
# multiple-choice questions -> MedicalQA-v1
# ---------------------------------------------------------------------------------------------------------------
def convert_mcq(rows: Iterable[tuple[str, Any]], db: Any | None = None, existing: Sequence[Task] | None = None
                ) -> Conversion:
    """MedicalQA tasks from ``(where, row)`` pairs of MedQA-style rows (``where`` names the row in reports).

    ``db`` (default: the bundled bank) gets the new questions, numbered after its highest ``Q`` number in the
    order of their task ids; ``existing`` (default: the bundled tasks) is what duplicates are checked against.
    """
    from clinical_gym.domains.medical_qa.data_model import LETTERS, Question
    from clinical_gym.domains.medical_qa.environment import MedicalQAEnv

    db = (db or MedicalQAEnv.default_db()).model_copy(deep=True)
    existing = list(existing if existing is not None else MedicalQAEnv.default_tasks())
    seen = [words(f"{q.vignette} {q.lead_in}") for q in db.questions.values()]
    known_ids = {t.id for t in existing}
    conversion = Conversion(db, [])
    drafts: list[tuple[str, dict[str, Any]]] = []
    for where, raw in rows:
        try:
            row = MedQARow.model_validate(raw)
            options, answer_text = row.option_texts(), row.answer_text()
        except (ValidationError, ValueError) as e:
            conversion.skipped.append(f"{where}: {_first_line(e)}")
            continue
        letters = list(options)
        if letters != list(LETTERS[:len(letters)]) or not 2 <= len(letters) <= len(LETTERS):
            conversion.skipped.append(f"{where}: options must be lettered A.. and number 2-5, got {letters}")
            continue
        answer = next(k for k, v in options.items() if v == answer_text)
        question = " ".join(row.question.split())
        split = _LEAD_IN.match(question)
        vignette, lead_in = (split["vignette"], split["lead_in"]) if split else (question, "Which option is correct?")
        content = {"question": question, "options": options, "answer": answer}
        task_id = content_id("mqa-x", content)
        text_words = words(f"{vignette} {lead_in}")
        if task_id in known_ids or any(jaccard(text_words, other) >= SIMILAR for other in seen):
            conversion.duplicates.append(f"{where}: the same question as one already in the bank ({task_id})")
            continue
        seen.append(text_words)
        known_ids.add(task_id)
        drafts.append((task_id, {"vignette": vignette, "lead_in": lead_in, "options": options, "answer": answer}))

    number = max((int(q[1:]) for q in db.questions), default=0)
    for task_id, draft in sorted(drafts):
        number += 1
        qid = f"Q{number:03d}"
        specialty = specialty_of(draft["vignette"])
        db.questions[qid] = Question(question_id=qid, specialty=specialty, topic=draft["lead_in"][:80],
                                     vignette=draft["vignette"], lead_in=draft["lead_in"], options=draft["options"])
        conversion.tasks.append(_mcq_task(task_id, qid, specialty, draft))
    return conversion


def _mcq_task(task_id: str, qid: str, specialty: str, draft: dict[str, Any]) -> Task:
    options, answer = draft["options"], draft["answer"]
    distractor = next(k for k in options if k != answer)
    findings = [s.strip() for s in re.split(r"(?<=[.;])\s+", draft["vignette"]) if s.strip()][:3]
    query = " ".join(sorted(words(draft["lead_in"] + " " + options[answer]), key=len, reverse=True)[:6])
    q = {"question_id": qid}
    return Task.model_validate({
        "id": task_id,
        "ticket": f"Question {qid} in the question bank ({specialty}) needs an answer: read it and work it "
                  "through with the tools.",
        "expected_actions": [
            {"name": "get_question", "arguments": q, "compare_args": ["question_id"]},
            {"name": "list_options", "arguments": q, "compare_args": ["question_id"]},
            {"name": "search_knowledge", "arguments": {"query": query}, "compare_args": []},
            {"name": "compare_options", "arguments": {**q, "letters": sorted([answer, distractor]),
                                                      "criterion": "fit with the vignette's key findings"},
             "compare_args": ["question_id"]},
            *({"name": "eliminate_option", "compare_args": ["question_id", "letter"],
               "arguments": {**q, "letter": letter, "reason": f"a worse fit for the vignette than option {answer}"}}
              for letter in options if letter != answer),
            {"name": "record_reasoning", "arguments": {**q, "key_findings": findings,
                                                       "conclusion": f"{answer}: {options[answer]}"},
             "compare_args": ["question_id"]},
        ],
        "assertions": [
            {"text": "Reads the question before answering",
             "rule": {"kind": "called_before", "first": {"name": "get_question", "arguments": q},
                      "then": {"name": "submit_answer", "arguments": {}}}},
            {"text": "Does not eliminate the correct option",
             "rule": {"kind": "not_called",
                      "call": {"name": "eliminate_option", "arguments": {**q, "letter": answer}}}},
            {"text": "Lays out the reasoning before answering",
             "rule": {"kind": "called_before", "first": {"name": "record_reasoning", "arguments": q},
                      "then": {"name": "submit_answer", "arguments": {}}}},
        ],
        "answer": answer,
        "options": options,
        "rationale": f"The answer is {answer}: {options[answer]}.",
        "category": "converted",
        "tags": ["converted", "medqa", specialty],
    })


# ---------------------------------------------------------------------------------------------------------------
# cases -> ClinicalDiagnosis-v1
# ---------------------------------------------------------------------------------------------------------------
def convert_cases(cases: Iterable[Case], db: Any | None = None, existing: Sequence[Task] | None = None
                  ) -> Conversion:
    """ClinicalDiagnosis diagnosis tasks from ``cases``: each case becomes a patient in ``db`` (default: the
    bundled database; ids ``X0001``, ... in task-id order) and a task to review the chart and record the diagnosis.
    A case repeats a hand-written diagnosis task (``existing``, default: the bundled tasks) when the diagnosis, the
    patient's age and sex are the same, and another converted case when the chief complaint is the same too."""
    from clinical_gym.domains.clinical_diagnosis.environment import ClinicalDiagnosisEnv

    db = (db or ClinicalDiagnosisEnv.default_db()).model_copy(deep=True)
    existing = list(existing if existing is not None else ClinicalDiagnosisEnv.default_tasks())
    written = {(" ".join(words(t.answer)), db.patients[t.patient_id].age, db.patients[t.patient_id].sex)
               for t in existing if t.patient_id in db.patients and t.category == "diagnosis"}
    converted: set[tuple[str, int, str, str]] = set()
    conversion = Conversion(db, [])
    drafts: list[tuple[str, Case]] = []
    for case in cases:
        task_id = content_id("cd-x", case.model_dump(mode="json", exclude={"id", "source"}))
        patient = (" ".join(words(case.diagnosis.name)), case.demographics.age, case.demographics.sex)
        key = (*patient, " ".join(sorted(words(case.chief_complaint))))
        if patient in written:
            conversion.duplicates.append(f"{case.id}: the same patient and diagnosis as a hand-written task")
            continue
        if key in converted:
            conversion.duplicates.append(f"{case.id}: the same patient, complaint and diagnosis as another case")
            continue
        converted.add(key)
        drafts.append((task_id, case))
    for n, (task_id, case) in enumerate(sorted(drafts, key=lambda d: d[0]), 1):
        patient_id = f"X{n:04d}"
        db.patients[patient_id] = chart_patient(patient_id, case, db.clock)
        conversion.tasks.append(_case_task(task_id, patient_id, case))
    return conversion


def chart_patient(patient_id: str, case: Case, clock: str) -> Any:
    """A case as a ClinicalDiagnosis ``Patient`` (notes from its history and examination, results, vital signs;
    nothing the case does not say)."""
    from clinical_gym.domains.clinical_diagnosis.data_model import (Allergy, Condition, LabResult, Medication, Note, Patient,
                                                       VitalSigns)

    volunteered = " ".join(f.text for f in case.history if f.volunteered and f.present)
    notes = [Note(time=clock, author="triage nurse", text=f"Presenting complaint: {case.chief_complaint}. "
                                                         f"{case.self_report} {volunteered}".strip())]
    if case.physical_exam:
        notes.append(Note(time=clock, author="admitting doctor", text="Examination: " + " ".join(
            f"{system.replace('_', ' ')}: {text}" for system, text in case.physical_exam.items())))
    labs = [_lab(t.name, v, clock) for t in case.tests for v in t.values]
    labs += [LabResult(test=t.name, time=clock, text=t.text) for t in case.tests if not t.values and t.text]
    vitals = []
    if case.vitals is not None:
        v = case.vitals
        vitals.append(VitalSigns(time=clock, temperature_c=v.temperature_c, heart_rate=v.heart_rate,
                                 systolic_bp=v.systolic_bp, diastolic_bp=v.diastolic_bp,
                                 respiratory_rate=v.respiratory_rate, spo2=v.spo2))
    return Patient(
        patient_id=patient_id, name=f"Patient {patient_id}", age=case.demographics.age, sex=case.demographics.sex,
        weight_kg=None,
        allergies=[Allergy(substance=_allergen(a), reaction=_reaction(a), severity="not recorded")
                   for a in case.allergies if not re.search(r"(?i)\bno (known )?(drug )?allerg", a)],
        medications=[Medication(name=m, dose="not recorded", frequency="not recorded") for m in case.medications],
        conditions=[Condition(name=c) for c in case.past_history],
        family_history=list(case.family_history), social_history=" ".join(case.social_history),
        vitals=vitals, labs=labs, notes=notes)


# Conventional units -> the SI units the domain (and its safety rules) read: (from unit, factor, to unit).
SI_UNITS: dict[str, tuple[str, float, str]] = {
    "glucose": ("mg/dl", 1 / 18.016, "mmol/L"),
    "calcium": ("mg/dl", 1 / 4.008, "mmol/L"),
    "creatinine": ("mg/dl", 88.42, "umol/L"),
}
# Body-fluid tests whose analytes must not read as blood values (a CSF glucose is not a blood glucose).
FLUIDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Urine", re.compile(r"(?i)\b(?:urine|urinalysis|dipstick)\b")),
    ("CSF", re.compile(r"(?i)\b(?:csf|cerebrospinal|lumbar puncture)\b")),
    ("Pleural fluid", re.compile(r"(?i)\bpleural\b")),
    ("Synovial fluid", re.compile(r"(?i)\b(?:synovial|joint aspirat\w*|arthrocentesis)\b")),
    ("Ascitic fluid", re.compile(r"(?i)\b(?:ascitic|peritoneal|paracentesis)\b")),
)


def _lab(test: str, value: Any, clock: str) -> Any:
    """One case lab value as a chart result: body-fluid analytes are named by their fluid (``Urine pH``, ``CSF
    glucose``: not blood values) and glucose, calcium and creatinine in mg/dL are converted to SI units."""
    from clinical_gym.domains.clinical_diagnosis.data_model import LabResult

    name = value.name
    for fluid, pattern in FLUIDS:
        if pattern.search(test):
            if not pattern.search(name) and not name.lower().startswith(fluid.lower()):
                name = f"{fluid} {name[0].lower()}{name[1:]}"
            break
    numbers = (value.value, value.ref_low, value.ref_high)
    unit = value.unit
    rule = SI_UNITS.get(name.lower())
    if rule is not None and unit.lower().replace(" ", "") == rule[0]:
        numbers = tuple(None if n is None else round(n * rule[1], 1 if rule[1] < 1 else 0) for n in numbers)
        unit = rule[2]
    return LabResult(test=name, time=clock, value=numbers[0], unit=unit, ref_low=numbers[1], ref_high=numbers[2],
                     text=value.text or "")


def _allergen(text: str) -> str:
    return text.split("(")[0].strip() or text


def _reaction(text: str) -> str:
    found = re.search(r"\(([^)]+)\)", text)
    return found.group(1).strip() if found else "not recorded"


def _case_task(task_id: str, patient_id: str, case: Case) -> Task:
    p = {"patient_id": patient_id}
    reads = [{"name": name, "arguments": p, "compare_args": ["patient_id"]}
             for name in ("get_patient_info", "get_medical_history", "get_clinical_notes", "get_vital_signs",
                          "get_lab_results")]
    record = {"name": "record_diagnosis", "arguments": {**p, "diagnosis": case.diagnosis.name,
                                                       **({"icd10": case.diagnosis.icd10} if case.diagnosis.icd10
                                                          else {})},
              "compare_args": ["patient_id"]}
    findings = [f.text for f in case.history if f.present][:3]
    rationale = f"{case.diagnosis.name}" + (f", given: {'; '.join(findings)}." if findings else ".")
    return Task.model_validate({
        "id": task_id,
        "ticket": f"Patient {patient_id} presents with {case.chief_complaint.rstrip('.')}. Review the chart, record "
                  "your working diagnosis and submit it.",
        "patient_id": patient_id,
        "expected_actions": [*reads, record],
        "assertions": [
            {"text": "Reads the clinical notes before recording a diagnosis",
             "rule": {"kind": "called_before", "first": {"name": "get_clinical_notes", "arguments": p},
                      "then": {"name": "record_diagnosis", "arguments": {}}}},
            {"text": "Records a diagnosis for the patient",
             "rule": {"kind": "db_record", "collection": "diagnoses", "match": p}},
        ],
        "answer": case.diagnosis.name,
        "answer_aliases": list(case.diagnosis.synonyms),
        "rationale": rationale,
        "category": "diagnosis",
        "tags": ["converted", case.specialty, case.source],
    })


def write_conversion(conversion: Conversion, folder: str | Path) -> None:
    """The task folder (``folder/tasks.json`` and ``folder/db.json``, ``clinical_gym.tool_env.task_folder``) that
    ``gym.make(ENV, tasks=folder)`` and ``clinical-gym bench --tasks folder`` read."""
    write_task_folder(folder, conversion.tasks, conversion.db)


def _first_line(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc']) or 'row'}: {first['msg']}"
    return str(error).splitlines()[0]
