"""Simulator fidelity on imported cases: does the embedded patient and world model tell what the record holds?

    python benchmarks/fidelity.py [FILE ...] [--library] [--generated N] [--misses K]

Reads the case files (default: the public-format files in ``tests/fixtures/case_formats/``, 30+ rows each of
AgentClinic OSCE, NEJM and MIMIC-IV, MedQA-style, MTMedDialog and DiagBench) and measures, per file and overall:

* results: every recorded test, ordered from DiagnosticWorkup's world model by its own name (and, for a nested
  name, by its last part), comes back from the record with its recorded result;
* affirmed: every symptom a present fact affirms (tags, or its own words), asked about ("Have you had any X?"),
  is answered with a fact that affirms it;
* denied: every symptom no fact affirms, asked about, is denied (in the patient's words or by a pertinent negative
  of the record), and nothing in the reply affirms it;
* contradictions: in two scripted consultations per case (the same ~120 questions forwards and backwards:
  complaint, every symptom, history, compound and event questions) no reply contradicts an earlier one
  (``clinical_gym.domains.inquiry.consistency``);
* leaks: no patient reply (and no opening) names the diagnosis (``clinical_gym.cases.leakage``).

Goals (issue "Simulator fidelity on imported cases"): results, affirmed, denied >= 95% each; contradictions and
leaks 0. The closing lines are one per goal: ``GOAL <name>: <figure> (goal ...) PASS|SHORT``. Single thread,
deterministic (seed 0).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from clinical_gym.cases import Case, read_case_file
from clinical_gym.cases.formatting import format_test_result
from clinical_gym.cases.leakage import leaked_terms
from clinical_gym.cases.topics import BROADER, SYMPTOM_QUESTION_NAMES, SYMPTOMS
from clinical_gym.domains.inquiry.consistency import ConsistencyCheck, case_claims
from clinical_gym.domains.inquiry.patient import RuleBasedPatient
from clinical_gym.domains.workup.world_model import RecordWorldModel

FLOOR = 0.95
PUBLIC_FILES = ("agentclinic_osce.jsonl", "agentclinic_nejm.jsonl", "agentclinic_mimiciv.jsonl", "medqa_vignettes.jsonl",
                "mtmeddialog_dialogues.json", "diagbench.json")
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "case_formats"
_BROAD_ONLY = frozenset({"bowel_changes", "urinary_symptoms"})  # asked about, they find the narrower symptoms

CONSULTATION_OPENING = [
    "What brings you in today?", "When did it start?", "How long has this been going on?", "Where exactly is it?",
    "Can you describe it?", "How bad is it on a scale of one to ten?", "Does it spread anywhere?", "Does it come and go?",
    "What makes it worse?", "Does anything make it better?", "Have you noticed any other symptoms?", "Are you in any pain?",
]
CONSULTATION_HISTORY = [
    "Do you have any long-term medical conditions?", "Have you had any heart problems?", "Have you ever had an operation?",
    "Which medicines do you take?", "Are you allergic to anything?", "Tell me about your lifestyle: work, smoking, alcohol?",
    "Do you smoke?", "How much alcohol do you drink?", "Do you use any recreational drugs?", "Does anything run in your family?",
    "Have you travelled recently?", "Has anyone around you been unwell?", "Are your vaccinations up to date?",
    "Have you had a colonoscopy?", "Have you had any tests?", "Have you ever had a blood transfusion?",
    "Do you have a fever or any allergies?", "Any cough, or shortness of breath when you lie flat?",
    "Any trouble sleeping?", "How many pillows do you sleep on?", "What do you think is wrong with me?",
]


def symptom_question(symptom: str) -> str:
    return f"Have you had any {SYMPTOM_QUESTION_NAMES[symptom]}?"


def consultation() -> list[str]:
    """The scripted consultation: the complaint, every symptom, then history, compound and event questions."""
    return [*CONSULTATION_OPENING, *(symptom_question(s) for s in SYMPTOMS), *CONSULTATION_HISTORY]


@dataclass
class Tally:
    """Hits over attempts for one goal, with the first misses kept for the report."""

    hits: int = 0
    total: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, ok: bool, miss: str) -> None:
        self.total += 1
        self.hits += ok
        if not ok and len(self.misses) < 50:
            self.misses.append(miss)

    @property
    def rate(self) -> float:
        return self.hits / self.total if self.total else float("nan")


@dataclass
class Fidelity:
    """The five measurements over one set of cases."""

    cases: int = 0
    results: Tally = field(default_factory=Tally)
    affirmed: Tally = field(default_factory=Tally)
    denied: Tally = field(default_factory=Tally)
    contradictions: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    replies: int = 0


def _patient(case: Case) -> RuleBasedPatient:
    patient = RuleBasedPatient()
    patient.reset(case, np.random.default_rng(0))
    return patient


def affirmed_symptoms(case: Case) -> set[str]:
    """Symptoms some present fact of the case affirms (its tags or its own words)."""
    claims = case_claims(case)
    return {s for f in case.history if f.present for s in claims[f.id].affirms if s in SYMPTOMS}


def absent_symptoms(case: Case) -> list[str]:
    """Symptoms no present fact affirms (nor a narrower one they cover)."""
    present = affirmed_symptoms(case)
    related = present | {broad for broad, narrow in BROADER.items() if present & set(narrow)}
    return sorted(set(SYMPTOMS) - related - _BROAD_ONLY)


def measure_results(case: Case, tally: Tally) -> None:
    world = RecordWorldModel()
    world.reset(case, 0)
    for test in case.tests:
        for name in dict.fromkeys([test.name, test.name.rsplit(" - ", 1)[-1]]):
            got = world.result(name, [])
            tally.add(got.source == "record" and format_test_result(test) in got.text,
                      f"{case.id}: {name!r} -> {got.source} {got.exam!r}")


def measure_symptoms(case: Case, affirmed: Tally, denied: Tally) -> None:
    claims = case_claims(case)
    for symptom in sorted(affirmed_symptoms(case)):
        reply = _patient(case).reply(symptom_question(symptom))
        ok = any(symptom in claims[f].affirms or symptom in case.fact(f).topics for f in reply.facts if case.fact(f).present)
        affirmed.add(ok, f"{case.id}: {symptom} -> {reply.kind}: {reply.text[:90]!r}")
    for symptom in absent_symptoms(case):
        reply = _patient(case).reply(symptom_question(symptom))
        denies = symptom in reply.denied or any(symptom in claims[f].denies for f in reply.facts)
        affirms = any(symptom in claims[f].affirms for f in reply.facts)
        denied.add(denies and not affirms, f"{case.id}: {symptom} -> {reply.kind}: {reply.text[:90]!r}")


def measure_consultations(case: Case, fid: Fidelity, questions: list[str]) -> None:
    opening = f"{case.self_report} " + " ".join(f.text for f in case.history if f.volunteered)
    if leaked_terms(opening, case.diagnosis):
        fid.leaks.append(f"{case.id}: opening names the diagnosis: {opening[:90]!r}")
    for order in (questions, questions[::-1]):
        patient, check = _patient(case), ConsistencyCheck(case)
        for question in order:
            reply = patient.reply(question)
            fid.replies += 1
            fid.contradictions += [f"{case.id}: {p} ({question!r} -> {reply.text[:80]!r})" for p in check.add(reply.facts, reply.denied)]
            if leaked_terms(reply.text, case.diagnosis):
                fid.leaks.append(f"{case.id}: {question!r} -> {reply.text[:90]!r}")


def measure(cases: Iterable[Case]) -> Fidelity:
    fid, questions = Fidelity(), consultation()
    for case in cases:
        fid.cases += 1
        measure_results(case, fid.results)
        measure_symptoms(case, fid.affirmed, fid.denied)
        measure_consultations(case, fid, questions)
    return fid


def goal_line(name: str, figure: float, goal: float, at_least: bool, unit: str = "", digits: int = 3) -> str:
    met = figure == figure and (figure >= goal if at_least else figure <= goal)
    return f"GOAL {name}: {figure:.{digits}f}{unit} (goal {'>=' if at_least else '<='} {goal:g}{unit}) {'PASS' if met else 'SHORT'}"


def goal_lines(fid: Fidelity) -> list[str]:
    return [
        goal_line("recorded results retrievable by their own names", fid.results.rate, FLOOR, True),
        goal_line("recorded symptoms affirmed", fid.affirmed.rate, FLOOR, True),
        goal_line("absent symptoms denied", fid.denied.rate, FLOOR, True),
        goal_line("contradictions", len(fid.contradictions), 0, False, digits=0),
        goal_line("diagnosis leaks", len(fid.leaks), 0, False, digits=0),
    ]


def _row(label: str, fid: Fidelity) -> str:
    return (f"{label:<28} {fid.cases:>5} {fid.results.rate:>8.3f} ({fid.results.total:>4}) {fid.affirmed.rate:>8.3f} ({fid.affirmed.total:>4}) "
            f"{fid.denied.rate:>8.3f} ({fid.denied.total:>5}) {len(fid.contradictions):>6} {len(fid.leaks):>6} {fid.replies:>8}")


def _load(path: Path) -> list[Case]:
    cases, problems = read_case_file(path)
    if problems:
        print(f"{path.name}: {len(problems)} rows not read; first: {problems[0]}")
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="case files (default: the public-format fixtures)")
    ap.add_argument("--library", action="store_true", help="also measure the bundled library (reported apart)")
    ap.add_argument("--generated", type=int, default=0, help="also measure N generated cases (reported apart)")
    ap.add_argument("--misses", type=int, default=3, help="misses to print per goal")
    args = ap.parse_args()
    files = args.files or [DEFAULT_DIR / name for name in PUBLIC_FILES]
    start = time.perf_counter()
    sets = {path.name: _load(path) for path in files}
    print(f"{'file':<28} {'cases':>5} {'results (n)':>15} {'affirmed (n)':>15} {'denied (n)':>16} {'contra':>6} {'leaks':>6} {'replies':>8}")
    overall = Fidelity()
    for label, cases in sets.items():
        fid = measure(cases)
        print(_row(label, fid))
        for part in ("results", "affirmed", "denied"):
            getattr(overall, part).hits += getattr(fid, part).hits
            getattr(overall, part).total += getattr(fid, part).total
            getattr(overall, part).misses += getattr(fid, part).misses
        overall.cases += fid.cases
        overall.replies += fid.replies
        overall.contradictions += fid.contradictions
        overall.leaks += fid.leaks
    print(_row("all public-format files", overall))
    extra = {}
    if args.library:
        from clinical_gym.cases import library

        extra["library"] = list(library())
    if args.generated:
        from clinical_gym.cases import load_cases

        extra[f"generated:common ({args.generated})"] = load_cases("generated:common", n=args.generated, seed=0)
    for label, cases in extra.items():
        print(_row(label, measure(cases)))
    print(f"({time.perf_counter() - start:.1f} s)")
    for name, misses in (("results", overall.results.misses), ("affirmed", overall.affirmed.misses),
                         ("denied", overall.denied.misses), ("contradictions", overall.contradictions), ("leaks", overall.leaks)):
        for miss in misses[: args.misses]:
            print(f"  miss [{name}] {miss}")
    for line in goal_lines(overall):
        print(line)


if __name__ == "__main__":
    main()
