"""Simulator fidelity on imported cases: does the embedded patient and world model tell what the record holds?

    python benchmarks/fidelity.py [FILE ...] [--library] [--generated N] [--misses K]

Reads the case files (default: the public-format files in ``tests/fixtures/case_formats/``, 30+ rows each of
AgentClinic OSCE, NEJM and MIMIC-IV, MedQA-style, MTMedDialog, DiagGym (JSONL) and DiagBench (keyed JSON)) and
measures, per file and overall:

* results: every recorded test, ordered from DiagnosticWorkup's world model by its own name (and, for a nested
  name, by its last part), comes back from the record with its recorded result;
* affirmed: every symptom a present fact affirms (tags, or its own words), asked about ("Have you had any X?"),
  is answered with a fact that affirms it;
* denied: every symptom no fact affirms, asked about, is denied (in the patient's words or by a pertinent negative
  of the record), and nothing in the reply affirms it;
* paraphrased: every recorded symptom asked in each of its lay wordings (``clinical_gym.cases.lexicon.LAY_TERMS``:
  "Have you been breathless?", "Did you throw up?"), and every event a present fact names asked in other words
  (``EVENT_QUESTIONS``: "Have you been incontinent?" of "I wet myself during it"; "Did you lose consciousness?"
  of a recorded faint, ``lexicon.fact_events``), is answered with a fact that
  affirms it (or held back, where the persona withholds it); a paraphrase contradiction is a reply that denies it
  ("No, not that I know of.", or a denial of the symptom);
* relevant: open questions get the asked-about fact where the record holds one: the visit ("What brings you in
  today?": the main complaint), where the pain is (a body site, where a pain fact says one), when it started (an
  onset or duration fact), medicines, conditions, allergies and family history (a fact of that kind), and "<organ>
  problems" ("Any bowel problems?": only facts about that organ);
* contradictions: in two scripted consultations per case (the same ~120 questions forwards and backwards:
  complaint, every symptom, history, compound and event questions) no reply contradicts an earlier one
  (``clinical_gym.domains.inquiry.consistency``);
* leaks: no patient reply (and no opening) names the diagnosis (``clinical_gym.cases.leakage``).

Goals (issue "Simulator fidelity on imported cases"): results, affirmed, denied, paraphrased and relevant >= 95%
each; contradictions, paraphrase contradictions and leaks 0. The closing lines are one per goal: ``GOAL <name>:
<figure> (goal ...) PASS|SHORT``. Single thread, deterministic (seed 0).
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
from clinical_gym.cases.lexicon import EVENT_QUESTIONS, about_organ, fact_events, lay_questions, names_site
from clinical_gym.cases.topics import BROADER, PAIN_SYMPTOMS, SYMPTOM_QUESTION_NAMES, SYMPTOMS
from clinical_gym.domains.inquiry.consistency import ConsistencyCheck, case_claims, denial_reach
from clinical_gym.domains.inquiry.patient import HOLD_BACK, NO_EVENT, RuleBasedPatient, case_index
from clinical_gym.domains.workup.world_model import RecordWorldModel

FLOOR = 0.95
PUBLIC_FILES = ("agentclinic_osce.jsonl", "agentclinic_nejm.jsonl", "agentclinic_mimiciv.jsonl", "medqa_vignettes.jsonl",
                "mtmeddialog_dialogues.json", "diaggym_records.jsonl", "diagbench.json")
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
    """The measurements over one set of cases."""

    cases: int = 0
    results: Tally = field(default_factory=Tally)
    affirmed: Tally = field(default_factory=Tally)
    denied: Tally = field(default_factory=Tally)
    paraphrased: Tally = field(default_factory=Tally)
    relevant: Tally = field(default_factory=Tally)
    paraphrase_contradictions: list[str] = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    replies: int = 0

    TALLIES = ("results", "affirmed", "denied", "paraphrased", "relevant")
    LISTS = ("paraphrase_contradictions", "contradictions", "leaks")

    def add(self, other: "Fidelity") -> None:
        """Fold another set's measurements into this one (the overall row)."""
        for name in self.TALLIES:
            mine, theirs = getattr(self, name), getattr(other, name)
            mine.hits, mine.total = mine.hits + theirs.hits, mine.total + theirs.total
            mine.misses += theirs.misses[: max(0, 50 - len(mine.misses))]
        for name in self.LISTS:
            getattr(self, name).extend(getattr(other, name))
        self.cases += other.cases
        self.replies += other.replies


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
    withheld = set(case.persona.withheld)
    for symptom in sorted(affirmed_symptoms(case)):
        reply = _patient(case).reply(symptom_question(symptom))
        ok = any(symptom in claims[f].affirms or symptom in case.fact(f).topics for f in reply.facts if case.fact(f).present)
        # a symptom only withheld facts affirm may be held back (never denied)
        ok = ok or (HOLD_BACK[1:] in reply.text and not any(symptom in claims[f.id].affirms for f in case.history
                                                            if f.present and f.id not in withheld))
        affirmed.add(ok, f"{case.id}: {symptom} -> {reply.kind}: {reply.text[:90]!r}")
    for symptom in absent_symptoms(case):
        reply = _patient(case).reply(symptom_question(symptom))
        denies = symptom in reply.denied or any(symptom in claims[f].denies for f in reply.facts)
        affirms = any(symptom in claims[f].affirms for f in reply.facts)
        denied.add(denies and not affirms, f"{case.id}: {symptom} -> {reply.kind}: {reply.text[:90]!r}")


def _told(case: Case, facts, key: str) -> bool:
    """Whether told facts affirm a symptom (by claims or tags) or name an event."""
    claims = case_claims(case)
    return any(case.fact(f).present and (key in claims[f].affirms or key in case.fact(f).topics
                                         or key in fact_events(case.fact(f).text, case.fact(f).symptoms)) for f in facts)


def _denies(reply, key: str) -> bool:
    """Whether a reply denies a symptom or event: in the patient's words (a denied key that covers it) or with the
    plausible negative of an unrecorded event."""
    return any(key in denial_reach(d) for d in reply.denied) or any(no[1:] in reply.text for no in NO_EVENT.values())  # after a tone


def measure_paraphrases(case: Case, fid: Fidelity) -> None:
    """Every recorded symptom in each lay wording, every event a present fact names in its other wordings."""
    claims = case_claims(case)
    withheld = set(case.persona.withheld)
    said = [f for f in case.history if not leaked_terms(f.text, case.diagnosis)]
    probes = [(s, q, {f.id for f in said if s in claims[f.id].affirms}) for s in sorted(affirmed_symptoms(case)) for q in lay_questions(s)]
    events = sorted({c for f in said if f.present for c in fact_events(f.text, f.symptoms)})  # a faint: unconscious
    probes += [(c, q, {f.id for f in said if c in fact_events(f.text, f.symptoms)}) for c in events for q in EVENT_QUESTIONS[c]]
    for key, question, holders in probes:
        reply = _patient(case).reply(question)
        held = HOLD_BACK[1:] in reply.text and bool(holders & withheld)
        fid.paraphrased.add(_told(case, reply.facts, key) or bool(holders & set(reply.facts)) or held,
                            f"{case.id}: {key}: {question!r} -> {reply.kind}: {reply.text[:90]!r}")
        if _denies(reply, key) and not held:
            fid.paraphrase_contradictions.append(f"{case.id}: {key}: {question!r} -> {reply.text[:90]!r}")


def measure_relevance(case: Case, fid: Fidelity) -> None:
    """Open questions get the asked-about fact where the record holds one (see the module docstring)."""
    idx, withheld = case_index(case), set(case.persona.withheld)
    sayable = [f for f in idx.facts if f.id not in withheld]

    def check(question: str, ok) -> None:
        reply = _patient(case).reply(question)
        fid.relevant.add(ok(reply), f"{case.id}: {question!r} -> {reply.kind}: {reply.text[:90]!r}")

    if idx.chief:
        check("What brings you in today?", lambda r: _told(case, r.facts, idx.chief))
        if any(f.present and idx.chief in idx.said[f.id] and {"onset", "duration"} & set(f.topics) for f in sayable):
            check("When did it start?", lambda r: any({"onset", "duration"} & set(case.fact(f).topics) for f in r.facts))
    if any(f.present and f.category in ("hpi", "ros") and idx.said[f.id] & PAIN_SYMPTOMS and names_site(f.text) for f in sayable):
        check("Where is the pain?", lambda r: names_site(r.text))
    for category, question in (("medications", "Which medicines do you take?"), ("past_history", "Do you have any medical conditions?"),
                               ("allergies", "Do you have any allergies?"), ("family", "Does anything run in your family?")):
        if any(f.category == category for f in sayable):
            check(question, lambda r, c=category: any(case.fact(f).category == c for f in r.facts))
    claims = case_claims(case)
    for organ, question, symptoms in (("bowel", "Any bowel problems?", {"bowel_changes", *BROADER["bowel_changes"]}),
                                      ("heart", "Have you had any heart problems?", set())):
        check(question, lambda r, o=organ, s=symptoms: all(
            about_organ(case.fact(f).text, o) or s & (claims[f].affirms | claims[f].denies | set(case.fact(f).topics)) for f in r.facts))


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
        measure_paraphrases(case, fid)
        measure_relevance(case, fid)
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
        goal_line("recorded symptoms and events affirmed in other words", fid.paraphrased.rate, FLOOR, True),
        goal_line("paraphrase contradictions", len(fid.paraphrase_contradictions), 0, False, digits=0),
        goal_line("open questions answered with the asked-about fact", fid.relevant.rate, FLOOR, True),
        goal_line("contradictions", len(fid.contradictions), 0, False, digits=0),
        goal_line("diagnosis leaks", len(fid.leaks), 0, False, digits=0),
    ]


HEADER = (f"{'file':<28} {'cases':>5} {'results (n)':>15} {'affirmed (n)':>15} {'denied (n)':>16} {'reworded (n)':>15} "
          f"{'relevant (n)':>15} {'p-contra':>8} {'contra':>6} {'leaks':>6} {'replies':>8}")


def _row(label: str, fid: Fidelity) -> str:
    return (f"{label:<28} {fid.cases:>5} {fid.results.rate:>8.3f} ({fid.results.total:>4}) {fid.affirmed.rate:>8.3f} ({fid.affirmed.total:>4}) "
            f"{fid.denied.rate:>8.3f} ({fid.denied.total:>5}) {fid.paraphrased.rate:>8.3f} ({fid.paraphrased.total:>4}) "
            f"{fid.relevant.rate:>8.3f} ({fid.relevant.total:>4}) {len(fid.paraphrase_contradictions):>8} {len(fid.contradictions):>6} "
            f"{len(fid.leaks):>6} {fid.replies:>8}")


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
    print(HEADER)
    overall = Fidelity()
    for label, cases in sets.items():
        fid = measure(cases)
        print(_row(label, fid))
        overall.add(fid)
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
    for name in (*Fidelity.TALLIES, *Fidelity.LISTS):
        found = getattr(overall, name)
        for miss in (found.misses if isinstance(found, Tally) else found)[: args.misses]:
            print(f"  miss [{name}] {miss}")
    for line in goal_lines(overall):
        print(line)


if __name__ == "__main__":
    main()
