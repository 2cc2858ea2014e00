"""AgentClinic NEJM image-challenge JSONL (``agentclinic_nejm.jsonl``): ``{"image_url", "question", "answers":
[{"text", "correct"}], "patient_info", "physical_exams"}``.

* ``image_url`` is kept in ``Case.images`` (and named in ``source``); the environments use the text findings.
* ``question`` is the vignette: its opening sentence gives the presenting complaint (the self-report), its vital
  signs, examination and investigation sentences become ``vitals``, exam text and tests, as for MedQA-style rows.
* ``patient_info`` is the actor's brief, written to the patient in the second person ("You are a 55-year-old
  woman who has noticed your skin darkening"): its items become history facts in the first person, without the
  brief's framing ("For your role as a patient ...", "Remember, ..."). When it is empty, the vignette's history
  sentences are the facts.
* ``physical_exams`` is the measurement reader's text ("Dermoscopy findings: ...", "- CT scan of the neck: ..."):
  each named item becomes a test under its own name, unnamed items go under the heading above them.
* The answer marked ``correct`` is the diagnosis; the other answers are the differential.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.cases.formats.demographics import demographics_from
from clinical_gym.cases.formats.facts import FactBuilder
from clinical_gym.cases.formats.findings import category_for_test, results_from_tree, vitals_from_text
from clinical_gym.cases.formats.imported import CaseFormat, Origin, imported_case
from clinical_gym.cases.formats.medqa import Vignette, split_question
from clinical_gym.cases.formats.text import Text, first_person, is_instruction, is_placeholder, sentences
from clinical_gym.cases.schema import Case, TestResult, normalize

LABEL = "AgentClinic NEJM"

# Bullets ("- ", "• "), numbered items ("1. ") and run-in headings ("... Imaging results: ...") that start an item.
_ITEM_BREAK = re.compile(
    r"(?:^|\s+)(?:[-•*]|\d{1,2}\.)\s+(?=\S)|\n+"
    r"|(?<=[a-z)])\s+(?=[A-Z][a-z]+(?:\s+[a-z]+){0,2}\s+(?:results|findings)\s*:)"  # "... Negative Imaging results:"
    r"|(?<=[\w).])\s+(?=[A-Z][\w-]*(?:\s+[a-z][\w-]*){0,3}:\s+(?:[-•*]|\d{1,2}\.)\s)"  # "... Positive Laboratory studies: - ..."
    r"|(?<=[.)])\s+(?=[A-Z][\w-]*(?:\s+[\w()-]+){0,5}:\s)"  # "... (reference value, <40) MRI of the brain: ..."
)
# Image panel references in a vignette ("(shown)", "(left)", "(arrows)").
_PANEL = re.compile(r"(?i)\s*\((?:shown|left|right|middle|center|top|bottom|arrows?|arrowheads?|asterisks?|inset|box|panels? [a-d])\b[^)]*\)")
# The brief's framing before what it says about the patient ("For your role as a patient, you are ...").
_FRAMING = re.compile(r"(?i)^(?:for (?:your|the) role as (?:a|the) patient(?: actor)?|as (?:a|the) patient(?: actor)?|in this role)"
                      r"(?:,?\s*here(?:'s| is| are)[^:]*:)?[,:]?\s*")
# "Dermoscopy findings: ..." -> "Dermoscopy"; a name is at most this many words before its colon.
_NAMED = re.compile(r"^(?P<name>[^:]{2,90}?):\s*(?P<text>.*)$", re.S)
_NAME_TAIL = re.compile(r"(?i)\s+(?:findings?|results?|readings?|report)$")
MAX_NAME_WORDS = 10
_LABEL_ONLY = re.compile(r"^[A-Z][\w /'()&-]{0,40}:\s*")  # "Symptoms: ", "Age and Background: " in a brief


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: Text = Field(min_length=1)
    correct: bool = False


class NejmRow(BaseModel):
    """One AgentClinic NEJM image-challenge record (the fields used; others are ignored)."""

    model_config = ConfigDict(extra="ignore")

    id: Any = None
    image_url: Text = ""
    question: Text = Field(min_length=1)
    answers: list[Answer] = Field(min_length=2)
    patient_info: Text = ""
    physical_exams: Text = ""

    def answer_text(self) -> str:
        correct = [a.text for a in self.answers if a.correct]
        if len(correct) != 1:
            raise ValueError(f"answers: expected exactly one marked correct, found {len(correct)}")
        return correct[0]


def matches(row: dict) -> bool:
    return "question" in row and "answers" in row and ("patient_info" in row or "image_url" in row or "physical_exams" in row)


def items(text: str) -> list[str]:
    """The items of a bulleted or numbered text (one item when it has no bullets)."""
    return [i.strip() for i in _ITEM_BREAK.split(text or "") if i and i.strip()]


def tests_from_findings(text: str) -> list[TestResult]:
    """Tests from a measurement reader's text: 'Name: result' items become tests named Name ("Dermoscopy findings"
    -> "Dermoscopy"); the items under a heading ("Lyme serology:", "Imaging results:") are read together, as one
    panel or as one test each ("Imaging - CT scan of the neck"); unnamed items are the heading's findings."""
    tree: dict[str, Any] = {}
    section: dict[str, Any] = tree
    heading_kind = None
    for item in items(text):
        if item.endswith(":"):  # a heading: the items after it belong to it (a long one is only an introduction)
            name = _NAME_TAIL.sub("", item.rstrip(" :")).strip()
            section = tree.setdefault(name[:1].upper() + name[1:], {}) if 0 < len(name.split()) <= 5 else tree
            heading_kind = category_for_test(name) if section is not tree else None
            continue
        m = _NAMED.match(item)
        if m and len(m.group("name").split()) <= MAX_NAME_WORDS and m.group("text").strip():
            name = _NAME_TAIL.sub("", m.group("name").strip()).strip() or m.group("name").strip()
            key, body = name[:1].upper() + name[1:], m.group("text").strip()
        elif not is_placeholder(item):
            key, body = "Findings", item
        else:
            continue
        kind = category_for_test(key)
        target = tree if section is not tree and kind and heading_kind and kind != heading_kind else section  # an MRI after the labs
        target[key] = f"{target[key]} {body}" if isinstance(target.get(key), str) else body
    return [t for name, value in tree.items() for t in results_from_tree(name, value)]


def _brief_facts(brief: str, facts: FactBuilder) -> None:
    """History facts from the actor's second-person brief, in the patient's first person, framing left out."""
    for item in items(re.sub(r"\*\*([^*]+)\*\*:?", r"\1:", brief)):
        for sentence in sentences(item):
            sentence = _FRAMING.sub("", sentence)
            if ":" in sentence and len(sentence.split(":", 1)[0].split()) <= 5:
                sentence = _LABEL_ONLY.sub("", sentence)
            if sentence.strip(" :.") and not is_instruction(sentence) and not sentence.rstrip().endswith(":"):
                facts.add_text(first_person(sentence), "hpi")


def to_case(row: NejmRow, origin: Origin) -> Case:
    body, _question = split_question(_PANEL.sub("", row.question))
    answer = row.answer_text()
    v = Vignette(body)
    facts = v.facts
    if row.patient_info.strip():
        facts = FactBuilder()
        for sentence_facts in v.complaint_facts:
            facts.add(sentence_facts, "hpi")
        _brief_facts(row.patient_info, facts)
    tests = tests_from_findings(row.physical_exams)
    measured = [n for t in tests for n in (normalize(t.name), *(normalize(x.name) for x in t.values)) if n]
    tests += [t for t in v.tests if not any(f" {n} " in f" {normalize(t.name)} " or f" {n} " in f" {normalize(t.text)} "
                                            or normalize(t.name) in n for n in measured)]  # the vignette's copy of a measured result
    vitals_text = " ".join(v.vital_text)
    vitals = vitals_from_text(vitals_text) if vitals_text else None
    if vitals_text and vitals is None:
        v.exam["vitals"] = vitals_text
    images = (row.image_url.strip(),) if row.image_url.strip() else ()
    notes = (f"image {images[0]}",) if images else ()
    return imported_case(
        LABEL, origin, facts, demographics=demographics_from(body, row.patient_info), chief_complaint=v.self_report,
        self_report=v.self_report, diagnosis=answer, case_id=row.id, vitals=vitals, physical_exam=v.exam, tests=tests,
        differential=[a.text for a in row.answers if not a.correct], images=images, notes=notes,
    )


FORMAT = CaseFormat(name="nejm", label=LABEL, matches=matches, row_model=NejmRow, convert=to_case)
