"""MedQA-style multiple-choice JSONL: ``{"question", "options": {"A": ..} or [..], "answer" / "answer_idx"}``.

The vignette's sentences are sorted: the presenting complaint becomes the self-report (and the first fact), vital
signs become ``Vitals`` (or exam text when some are missing), examination findings become exam entries,
investigations become tests (lines such as "Hemoglobin 10.2 g/dL" become lab values), and every other sentence
becomes a history fact. The correct option is the diagnosis and the other options the differential. Rows whose
question asks for something other than a diagnosis (next step, mechanism, drug) are skipped and reported.
An integer ``answer_idx`` counts options from 0.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.cases.formats.complaint import Complaint, complaint_items, presenting_complaint
from clinical_gym.cases.formats.demographics import demographics_from
from clinical_gym.cases.formats.facts import FactBuilder, category_for
from clinical_gym.cases.formats.findings import (add_exam_text, category_for_test, exam_system_for, inline_values, names_vitals,
                                                 parse_lab_line, vitals_from_text)
from clinical_gym.cases.formats.imported import CaseFormat, Origin, imported_case
from clinical_gym.cases.formats.text import Text, as_text, patient_voice, sentences
from clinical_gym.cases.schema import Case, ExamSystem, FactCategory, LabValue, TestResult

LABEL = "MedQA"

ASKS_DIAGNOSIS = re.compile(
    r"(?i)\bdiagnos[ie]s\b|\bmost likely (?:cause of (?:this|these|the) (?:patient|child|man|woman|boy|girl|infant)\w*'?s? "
    r"(?:symptoms|findings|condition|presentation|illness)|condition|disorder|disease|underlying (?:condition|disorder|disease))"
    r"|\b(?:condition|disorder|disease) (?:does|is) (?:this|the) \w+ most likely"
)
_EXAM = re.compile(
    r"(?i)\bexam(?:ination)?\b|\bauscultation\b|\bpalpation\b|\bpercussion\b|\bappears?\b|\b(?:is|are) (?:noted|seen|palpated|heard|"
    r"present) on\b|\b(?:is|are) (?:noted|palpated|heard)\b|\btender(?:ness)?\b|\bmurmur\b|\bcrackles\b|\brales\b|\bguarding\b"
)
_TEST = re.compile(
    r"(?i)\b(?:laborator\w*|labs?|serum|plasma|urinalysis|urine (?:studies|test|culture|dipstick)|blood (?:count|culture|tests?|smear)"
    r"|hemoglobin|leukocyte count|platelet count|x-rays?|radiograph\w*|ct|mri|ultraso\w*|sonograph\w*|echocardiogra\w*|ecg|ekg"
    r"|electrocardiogra\w*|biopsy|culture|gram stain|smear|lumbar puncture|csf|cerebrospinal|spirometry|titers?|assay|pcr"
    r"|\w+scopy|\w*graphy|\w+centesis|mammogra\w*|(?:[\w-]+ )?tests?|testing|antibod\w+|antigens?|serolog\w*|studies|\w+ breath test"
    r"|(?:[a-z]+ )?(?:concentrations?|levels?|activity|count)(?= (?:is|was|are|were|of)\b))\b"
)
_TEST_NAME = re.compile(r"(?i)^(?:(?:an?|the|his|her|their)\s+)?(?P<name>.+?)\s+(?:shows?|showed|reveals?|revealed|demonstrates?|is|are|was|were)\b")
# A visit with no complaint in the opening sentence ("comes to the physician for a follow-up examination").
_VISIT = re.compile(r"(?i)\b(?:follow-up|routine|health maintenance|check-?up|well-child|annual|preoperative|prenatal)\b|^(?:an? )?(?:examination|visit|evaluation)$")
_CATEGORY_CUES: tuple[tuple[FactCategory, re.Pattern[str]], ...] = (
    ("family", re.compile(r"(?i)\b(?:mother|father|sister|brother|parents?|siblings?|family history|grand(?:mother|father))\b")),
    ("allergies", re.compile(r"(?i)\ballerg")),
    ("gynecologic", re.compile(r"(?i)\b(?:menstrua\w*|menarche|menses|gravida|para \d|contracept\w*|last period)\b")),
    ("social", re.compile(r"(?i)\b(?:smok\w*|cigarettes?|pack-years?|alcohol|drinks?|illicit|drug use|works? as|employed|lives? (?:with|alone)"
                          r"|sexually active|travel\w*|occupation)\b")),
    ("medications", re.compile(r"(?i)\b(?:medications?|takes|taking|treated with|receiving|prescribed)\b")),
    ("surgical_history", re.compile(r"(?i)\b(?:underwent|surgery|surgical|appendectomy|cholecystectomy|operation)\b")),
    ("past_history", re.compile(r"(?i)(?<!-day )(?<!-week )(?<!-month )(?<!-year )\bhistory of\b|\bdiagnosed with\b|\bhas (?:had )?(?:type \d )?"
                                r"(?:diabetes|hypertension|asthma)\b")),
)
# A sentence that says a test was done without saying what it found ("Laboratory testing was performed.").
_NO_FINDING = re.compile(r"(?i)\b(?:was|were|is|are|has been|have been) (?:performed|obtained|done|ordered|sent|measured|examined|requested|"
                         r"carried out)\.?$")
_SHORT_RESULT = re.compile(r"(?i)^(?P<name>[A-Za-z][\w ,+\-/()']{0,40}?)\s*:?\s+(?P<value>positive|negative|trace|normal|abnormal|"
                           r"absent|present|none|not detected|detected|[1-4]\+|\d+\s*[-–]\s*\d+\s*/hpf)$")
MAX_TEST_NAME_WORDS = 8


class MedQARow(BaseModel):
    """One multiple-choice item (the fields used; others are ignored)."""

    model_config = ConfigDict(extra="ignore")

    id: Any = None
    question: Text = Field(min_length=1)
    options: dict[str, Text] | list[Any]
    answer: Text = ""
    answer_idx: Any = None

    def option_texts(self) -> dict[str, str]:
        """Options by letter (list options are lettered A, B, ...; [{"key", "value"}] lists use their keys)."""
        if isinstance(self.options, dict):  # datasets fill options a row lacks with None: those are dropped
            return {k.strip(): v for k, v in self.options.items() if v}
        out = {}
        for i, item in enumerate(self.options):
            if isinstance(item, dict) and "key" in item:
                out[str(item["key"])] = as_text(item.get("value"))
            else:
                out[chr(ord("A") + i)] = as_text(item)
        return out

    def answer_text(self) -> str:
        """The correct option's text; raises ValueError when the answer fields are missing or disagree."""
        options = self.option_texts()
        letters = list(options)
        by_idx = None
        if isinstance(self.answer_idx, int) and not isinstance(self.answer_idx, bool):
            if not 0 <= self.answer_idx < len(letters):
                raise ValueError(f"answer_idx {self.answer_idx} is out of range for {len(letters)} options")
            by_idx = options[letters[self.answer_idx]]
        elif self.answer_idx not in (None, ""):
            key = str(self.answer_idx).strip()
            if key not in options:
                raise ValueError(f"answer_idx {key!r} is not one of the options {letters}")
            by_idx = options[key]
        answer = self.answer.strip()
        by_answer = options.get(answer) if answer in options else answer or None
        if by_idx and by_answer and by_idx.strip().lower() != by_answer.lower():
            raise ValueError(f"answer {answer!r} and answer_idx {self.answer_idx!r} disagree")
        text = by_idx or by_answer
        if not text:
            raise ValueError("no answer (give answer or answer_idx)")
        if text not in options.values():
            raise ValueError(f"answer {text!r} is not one of the options")
        return text


def matches(row: dict) -> bool:
    return "question" in row and "options" in row


def _test_name(sentence: str) -> str:
    m = _TEST_NAME.match(sentence)
    name = m.group("name").strip(" :") if m else ""
    if not name or len(name.split()) > MAX_TEST_NAME_WORDS or not _TEST.search(name):
        found = _TEST.search(sentence)
        name = found.group(0) if found else "Investigations"
    return name[:1].upper() + name[1:]


def _short_result(line: str) -> LabValue | None:
    """A non-numeric result line under a results header ("Nitrite positive", "Protein: trace"), or None."""
    m = _SHORT_RESULT.match(line.strip())
    return LabValue(name=m.group("name").strip(), text=m.group("value")) if m else None


def _category(sentence: str) -> FactCategory:
    return next((cat for cat, cue in _CATEGORY_CUES if cue.search(sentence)), None) or category_for(sentence)


class Vignette:
    """A vignette sorted into the parts of a case."""

    def __init__(self, text: str) -> None:
        self.facts = FactBuilder()
        self.self_report = ""
        self._visit = ""  # an opening sentence that named a visit, not a complaint
        self.complaint_facts: list[str] = []  # the presenting complaint as fact texts
        self.vital_text: list[str] = []
        self.exam: dict[ExamSystem, str] = {}
        self.tests: list[TestResult] = []
        self.background: dict[str, list[str]] = {}
        lab_name, labs, listing = "Laboratory studies", [], False
        for line in text.splitlines():
            value = parse_lab_line(line) or (_short_result(line) if listing else None)
            if value is not None:
                labs.append(value)
                continue
            self._flush_labs(lab_name, labs)
            labs = []
            for sentence in sentences(line):
                listing = sentence.endswith(":")  # a header: the lines after it are results
                if listing:
                    lab_name = _test_name(sentence) if _TEST.search(sentence) else sentence.rstrip(" :")
                else:
                    self._sort(sentence)
        self._flush_labs(lab_name, labs)

    def _complaint(self, sentence: str) -> None:
        """The opening sentence: the presenting complaint is the self-report, and each symptom it lists a fact (with
        the duration it gives). A visit without a complaint ("for a follow-up examination") leaves it to the next
        sentence that states one ("She has had increasing fatigue ...")."""
        complaint = presenting_complaint(sentence)
        if complaint is not None and _VISIT.search(complaint.what) and not self._visit:
            self._visit = sentence
            return
        if complaint is None and self._visit:
            complaint = presenting_complaint(self._visit)
            self.facts.add_text(sentence, _category(sentence))
        if complaint is None:
            self.self_report = sentence[:1].upper() + sentence[1:].rstrip(".")
            self.facts.add_text(patient_voice(sentence), "hpi")
            return
        self.self_report = complaint.what[:1].upper() + complaint.what[1:]
        self.complaint_facts = [Complaint(item, complaint.when).sentence for item in complaint_items(complaint.what)]
        for text in self.complaint_facts:
            self.facts.add(text, "hpi")

    def _flush_labs(self, name: str, labs: list[LabValue]) -> None:
        if labs:
            self.tests.append(TestResult(name=name, category=category_for_test(name) or "lab", values=tuple(labs)))

    def _sort(self, sentence: str) -> None:
        """File one sentence under the part of the case it belongs to."""
        if not self.self_report:
            self._complaint(sentence)
        elif _NO_FINDING.search(sentence) and _TEST.search(sentence):
            return  # a test ordered, no result: neither a result nor something the patient says
        elif names_vitals(sentence):
            self.vital_text.append(sentence)
        elif _TEST.search(sentence) and not _EXAM.search(sentence.split(" show")[0]):
            name = _test_name(sentence)
            values = inline_values(sentence)
            category = category_for_test(name) or ("lab" if values else "other")
            self.tests.append(TestResult(name=name, category=category, text=sentence, values=tuple(values)))
        elif _EXAM.search(sentence):
            add_exam_text(self.exam, exam_system_for(sentence), sentence)
        else:
            category = _category(sentence)
            self.facts.add_text(sentence, category)
            if category not in ("hpi", "gynecologic"):
                self.background.setdefault(category, []).append(sentence)


def split_question(text: str) -> tuple[str, str]:
    """(vignette, question): the question is the closing sentence(s) that end in '?' (else the last sentence)."""
    parts = sentences(text.replace("\r", ""))
    cut = len(parts)
    while cut > 1 and parts[cut - 1].rstrip().endswith("?"):
        cut -= 1
    if cut == len(parts) and cut > 1:
        cut -= 1
    question = " ".join(parts[cut:])
    body = text[: text.rfind(parts[cut])] if cut < len(parts) else text
    return body, question


def to_case(row: MedQARow, origin: Origin) -> Case:
    body, question = split_question(row.question)
    if not ASKS_DIAGNOSIS.search(question):
        raise ValueError(f"the question asks for something other than a diagnosis ({question[:80]!r})")
    answer = row.answer_text()
    v = Vignette(body)
    vitals_text = " ".join(v.vital_text)
    vitals = vitals_from_text(vitals_text) if vitals_text else None
    if vitals_text and vitals is None:
        add_exam_text(v.exam, "vitals", vitals_text)
    return imported_case(
        LABEL, origin, v.facts, demographics=demographics_from(body), chief_complaint=v.self_report, self_report=v.self_report,
        diagnosis=answer, case_id=row.id, past_history=v.background.get("past_history", []) + v.background.get("surgical_history", []),
        medications=v.background.get("medications", []), allergies=v.background.get("allergies", []),
        social_history=v.background.get("social", []), family_history=v.background.get("family", []), vitals=vitals,
        physical_exam=v.exam, tests=v.tests, differential=[t for t in row.option_texts().values() if t != answer],
    )


FORMAT = CaseFormat(name="medqa", label=LABEL, matches=matches, row_model=MedQARow, convert=to_case)
