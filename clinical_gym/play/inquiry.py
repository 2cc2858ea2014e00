"""Playing ClinicalInquiry by hand: typed questions, ``Test:`` orders and ``Diagnosis: ...; Recommendation: ...``
lines become the doctor's ``<answer>`` replies."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, get_args

from clinical_gym.cases.schema import ExamSystem
from clinical_gym.play.exams import look_up_exam
from clinical_gym.play.session import PlayFamily, Typed

_LABELLED = re.compile(r"(?i)\s*(diagnosis|test|examination)\s*[:：]")
_TEST_LINE = re.compile(r"(?i)\s*(test|examination)\s*[:：]")
_ASKS_FOR_TESTS = re.compile(  # "What tests can I order?", "Which exams are available?": meant for the game
    r"(?i)\b(what|which)\b.*\b(tests?|exams?|examinations?|investigations?|labs?)\b.*"
    r"\b((can|could|may|should) i (order|do|request|get|ask)|available)\b")
_TURN_LINE = re.compile(r"\n?Turn \d+/\d+\.\s*$")
_ANSWER = re.compile(r"(?is)<answer>\s*(.*?)\s*(?:</answer>|$)")


def as_doctor_action(line: str) -> str:
    """What a person typed in the doctor's format: ``<answer>Diagnosis: X\\nRecommendation: Y</answer>`` for
    ``Diagnosis: X; Recommendation: Y``, ``<answer>Test: X</answer>``, else ``<answer>Question: ...</answer>``."""
    text = line.strip()
    if "<answer>" in text:
        return text
    if _LABELLED.match(text):
        text = re.sub(r"(?i)\s*;\s*(recommendation\s*[:：])", r"\n\1", text)
        return f"<answer>{text}</answer>"
    return f"<answer>Question: {text}</answer>"


class InquiryFamily(PlayFamily):
    """ClinicalInquiry-v1: the person is the doctor."""

    label = "patient"
    opening_label = "patient"
    catalogue_commands = ("tests", "exams")
    catalogue_help = "what can be examined or tested (with --tests); 'tests NAME' looks a name up"

    def how_to_act(self) -> list[str]:
        lines = ["You are the doctor. Each line you type uses one turn:",
                 "  a question for the patient, e.g.  When did the pain start?",
                 "  your conclusion, e.g.             Diagnosis: migraine; Recommendation: triptan and rest"]
        if self.env.allow_tests:
            lines.insert(2, "  an examination or test, e.g.     Test: abdominal examination   ('tests' lists them)")
        lines.append("A question without '?' gets one added. The patient answers one question per turn.")
        return lines

    def parse(self, line: str) -> Typed:
        if _ASKS_FOR_TESTS.search(line) and not _LABELLED.match(line):
            return Typed(notice=self.catalogue("") + "\n(Asked here, that question would go to the patient and use "
                                                     "a turn.)")
        if _TEST_LINE.match(line) and not self.env.allow_tests:
            return Typed(notice="Ordering examinations and tests is off in this consultation; start play with "
                                "--tests to allow 'Test: ...' lines. No turn was used.")
        if "<answer>" not in line and not _LABELLED.match(line) and "?" not in line:
            line = line.rstrip(".! ") + "?"
        return Typed(action=as_doctor_action(line))

    def catalogue(self, query: str) -> str:
        if not self.env.allow_tests:
            return ("Ordering examinations and tests is off in this consultation (start play with --tests); you can "
                    "only ask questions and conclude.")
        if query:
            return look_up_exam(query) + "\nWhether this patient has a result shows when you order it (one turn)."
        systems = ", ".join(s for s in get_args(ExamSystem) if s != "vitals")
        return ("Order one per turn with 'Test: NAME':\n"
                "  vital signs (Test: vital signs)\n"
                f"  a physical examination by system (Test: respiratory examination): {systems}\n"
                "  a laboratory, imaging or bedside test by name (Test: Complete Blood Count, Test: Chest X-ray)\n"
                "Names are matched with the exam catalogue's names and aliases ('full blood count' = 'FBC' = Complete "
                "blood count); 'tests NAME' looks one up. Only results in this patient's record are available: "
                "anything else is 'not available' and still uses the turn.")

    def record(self) -> str:
        exchanges = list(_exchanges(self.env.messages))
        if not exchanges:
            return "Nothing asked yet."
        lines = [f"Revealed so far ({getattr(self.env, 'turn', len(exchanges))} turn(s); "
                 f"{len(getattr(self.env.patient, 'revealed', []))} history fact(s) revealed):"]
        lines += [f"  {i}. {asked}\n     -> {reply}" for i, (asked, reply) in enumerate(exchanges, 1)]
        return "\n".join(lines)

    def turns(self) -> tuple[int, int]:
        return self.env.turn, self.env.turn_budget

    def last_turn_warning(self) -> str:
        return ("Last turn: conclude now with 'Diagnosis: ...; Recommendation: ...'. Anything else uses the last "
                "turn and the visit ends without a diagnosis.")

    def after_step(self, observation: str, info: Mapping[str, Any]) -> str | None:
        if "not available in this consultation" in observation:
            return "  (type 'tests' for what can be ordered; 'tests NAME' checks a name without using a turn)"
        return None

    def ending(self, outcome: Mapping[str, Any]) -> list[str]:
        lines = []
        if outcome.get("diagnosis") or outcome.get("recommendation"):
            lines.append(f"your diagnosis: {outcome.get('diagnosis') or '-'}   recommendation: "
                         f"{outcome.get('recommendation') or '-'}")
        if outcome.get("gold_diagnosis"):
            lines.append(f"correct diagnosis: {outcome['gold_diagnosis']} ({outcome.get('gold_icd10', '')})")
        if outcome.get("reason"):
            lines.append(f"why: {outcome['reason']}")
        return lines


def _exchanges(messages: list[dict[str, str]]):
    """(what the doctor asked or ordered, the reply without the turn counter) for each step so far."""
    for asked, reply in zip(messages[2::2], messages[3::2]):
        if asked.get("role") != "assistant":
            continue
        found = _ANSWER.search(asked["content"])
        yield (found.group(1) if found else asked["content"]).strip(), _TURN_LINE.sub("", reply["content"]).strip()
