"""The rule stand-in for DiagBench's rubric judge: which criteria a workup's transcript settles without an LLM.

DiagBench's criteria are free text judged by GPT-4o (DiagGym App. A.1.2). Without a judge, a criterion is judged
only when its words leave no doubt, and left unjudged (out of the score, counted apart) otherwise:

* an order criterion: an ordering verb first ("Orders", "Obtains", "Checks", "Measures", "Sends", "Draws",
  "Performs", "Requests"), then only examination names the exam catalogue knows, joined by "and" (all must be
  ordered) or "or" (one must be); a purpose clause ("to confirm appendicitis", "for ...", "in a woman ...") is
  ignored. "A before B" (B an examination, or "imaging" for any imaging study) is met when A was ordered, and
  before B when B was ordered too. Timing words the workup cannot show ("within 10 minutes", "immediately",
  "without delaying", "after", "repeat", "monitors") leave it unjudged, as does any word that names no
  examination ("free light chains").
* a diagnosis criterion: a diagnosing verb first ("Diagnoses", "Identifies", "Recognises", "Makes the
  diagnosis of") naming the case's own diagnosis: met when the final diagnosis was correct.

Everything else (treatment, consultation, transfer, reasoning) is left to the LLM judge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from clinical_gym.cases import Case
from clinical_gym.cases.leakage import leaked_terms
from clinical_gym.domains.workup.catalogue import Exam, load_catalogue

ORDER_VERBS = frozenset({"order", "orders", "obtain", "obtains", "check", "checks", "measure", "measures", "send",
                         "sends", "draw", "draws", "perform", "performs", "request", "requests"})
DIAGNOSIS_VERBS = frozenset({"diagnose", "diagnoses", "identify", "identifies", "recognise", "recognises",
                             "recognize", "recognizes", "makes", "establishes", "confirms"})
UNCHECKABLE = re.compile(r"\b(within|without|immediately|urgent(?:ly)?|after|repeat(?:s|ed)?|serial|daily|monitors?|"
                         r"trend(?:s)?|promptly|early|avoids?|not|never|unnecessary)\b")
PURPOSE = re.compile(r"\s(?:to|for|in|as|when|if|because|given)\s.*$")
CONNECTORS = frozenset({"a", "an", "both", "either", "or", "level", "levels", "test", "tests", "study", "studies",
                        "serum", "plasma", "blood", "urine", "also"})
GROUPS = {"imaging": lambda e: e.test_category() == "imaging",
          "cross-sectional imaging": lambda e: e.test_category() == "imaging" and bool(re.search(r"\b(ct|mri)\b",
                                                                                            e.name.lower()))}
"""Words for a kind of examination rather than one: "imaging" (any imaging study), "cross-sectional imaging" (CT or
MRI)."""


def rule_verdict(criterion: str, ordered: Sequence[str], diagnosis_correct: bool, case: Case) -> bool | None:
    """Whether the workup (``ordered``: exam names in order; ``diagnosis_correct``) meets ``criterion``; None when
    the rule cannot tell (see the module docstring)."""
    text = " ".join(criterion.lower().replace("prior to", "before").split()).rstrip(".")
    first = text.split(" ", 1)[0] if text else ""
    if first in DIAGNOSIS_VERBS and leaked_terms(criterion, case.diagnosis) and not _exams(text)[0]:
        return diagnosis_correct
    if first not in ORDER_VERBS or UNCHECKABLE.search(text):
        return None
    body = text.split(" ", 1)[1] if " " in text else ""
    before, _, after = body.partition(" before ")
    first_order = _first_of(PURPOSE.sub("", f" {before}").strip(), ordered, need_all=True)
    if first_order is None:
        return None
    if not after:
        return first_order >= 0
    later = _first_of(PURPOSE.sub("", f" {after}").strip(), ordered, need_all=False)
    if later is None:
        return None
    return first_order >= 0 and (later == -1 or first_order < later)


def _exams(phrase: str) -> tuple[list[Exam], tuple[str, ...]]:
    return load_catalogue().names_in(phrase)


def _first_of(phrase: str, ordered: Sequence[str], need_all: bool) -> int | None:
    """When the exams a phrase names were ordered: the first order of them (-1 when the phrase is not met: with
    ``need_all``, all of them unless joined by "or"; else any one); None when a word of the phrase names no
    examination (the rule cannot tell)."""
    catalogue = load_catalogue()
    phrase = re.sub(r"^(?:an?|the|any)\s+", "", phrase)
    if phrase in GROUPS:
        hits = [i for i, name in enumerate(ordered)
                if (exam := catalogue.resolve(name)) is not None and GROUPS[phrase](exam)]
        return hits[0] if hits else -1
    exams, rest = _exams(phrase)
    if not exams or any(w not in CONNECTORS for w in rest):
        return None
    positions = [next((i for i, name in enumerate(ordered) if catalogue.match(name, exam.name)), None)
                 for exam in exams]
    found = [p for p in positions if p is not None]
    if not found or (need_all and len(found) < len(positions) and not re.search(r"\bor\b", phrase)):
        return -1
    return min(found)
