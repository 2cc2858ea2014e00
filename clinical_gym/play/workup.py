"""Playing DiagnosticWorkup by hand: an exam name typed alone is an order, ``Diagnosis: X`` concludes; both are sent
in the ``<answer>`` form the environment reads (DiagGym's phrase format typed in full passes unchanged)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clinical_gym.play.exams import exam_listing, look_up_exam
from clinical_gym.play.session import PlayFamily, Typed

_DIAGNOSIS = re.compile(r"(?i)\s*(?:final\s+)?diagnosis\s*[:：]\s*(.*)", re.S)
_ORDER_PREFIX = re.compile(r"(?i)\s*(?:test|exam|examination|order)\s*[:：]\s*")
_PHRASES = re.compile(r"(?i)(investigations?|investigation\(s\)|examinations?|tests?)\s+(should be performed|"
                      r"(is|are) needed|(is|are) required)\s*[:：]")
FORCE = "!"


class WorkupFamily(PlayFamily):
    """DiagnosticWorkup-v1: the person orders exams from the world model, then diagnoses."""

    label = "result"
    opening_label = "record"
    catalogue_commands = ("exams", "tests")
    catalogue_help = "the exam catalogue by kind; 'exams WORD' looks a name up or lists the exams holding WORD"

    def how_to_act(self) -> list[str]:
        return ["You are the physician. Each line you type uses one turn:",
                "  one examination to order, e.g.  Complete blood count   (or CBC, chest x-ray, abdominal exam)",
                "  your conclusion, e.g.           Diagnosis: acute pancreatitis",
                f"A name the exam catalogue does not know is not sent (no turn); start the line with '{FORCE}' to send "
                "it anyway."]

    def parse(self, line: str) -> Typed:
        if "<answer>" in line.lower() or _PHRASES.search(line):
            return Typed(action=line)
        found = _DIAGNOSIS.match(line)
        if found:
            return Typed(action=f"<answer>Diagnosis: {found.group(1).strip()}</answer>")
        forced = line.startswith(FORCE)
        name = _ORDER_PREFIX.sub("", line.lstrip(FORCE), count=1).strip()
        if not name:
            return Typed(notice="Type an examination to order, or 'Diagnosis: ...'.")
        if not forced:
            from clinical_gym.domains.workup.catalogue import load_catalogue

            catalogue = load_catalogue()
            if catalogue.resolve(name) is None:
                close = catalogue.suggest(name)
                hint = f" Closest: {', '.join(close)}." if close else ""
                return Typed(notice=f"'{name}' is not in the exam catalogue, so nothing was sent (no turn).{hint} "
                                    f"Type '{FORCE}{name}' to send it anyway; 'exams WORD' searches the catalogue.")
        return Typed(action=f"<answer>Test: {name}</answer>")

    def catalogue(self, query: str) -> str:
        if query:
            return look_up_exam(query)
        return (exam_listing() + "\nOrder one per turn by name; aliases and abbreviations work ('exams NAME' checks "
                                  "one).")

    def record(self) -> str:
        history = getattr(self.env, "history", [])
        if not history:
            return "No examination ordered yet."
        lines = [f"Results so far ({self.env.turn} turn(s) used):"]
        for exam, text in history:
            lines.append(f"  {exam}:\n" + "\n".join(f"     {row}" for row in text.splitlines()))
        return "\n".join(lines)

    def turns(self) -> tuple[int, int]:
        return self.env.turn, self.env.reward_values.max_turns

    def last_turn_warning(self) -> str:
        return ("Last turn: conclude now with 'Diagnosis: ...'. An exam ordered now uses the last turn and the workup "
                "ends without a diagnosis.")

    def ending(self, outcome: Mapping[str, Any]) -> list[str]:
        lines = []
        if "exam_f1" in outcome:
            lines.append(f"exams: precision {outcome['exam_precision']:.2f}, recall {outcome['exam_recall']:.2f}, "
                         f"F1 {outcome['exam_f1']:.2f}; key exams were: {', '.join(outcome.get('key_exams') or [])}")
        if outcome.get("diagnosis"):
            lines.append(f"your diagnosis: {outcome['diagnosis']}")
        if outcome.get("gold_diagnosis"):
            lines.append(f"correct diagnosis: {outcome['gold_diagnosis']} ({outcome.get('gold_icd10', '')})")
        return lines
