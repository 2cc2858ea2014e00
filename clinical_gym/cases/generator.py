"""The case generator: unlimited varied patients sampled from the disease knowledge table.

``generate_cases(n, seed)`` returns ``Case`` objects that meet the library's quality bar
(``clinical_gym.cases.quality.case_problems``). Case ``i`` depends only on ``(seed, i)``: generating 10 cases
gives the first 10 of 1,000. Diseases are drawn evenly: every block of ``len(table)`` consecutive indices holds
each disease once, in an order shuffled per block, so case ids (``gen-<seed>-<i>``) say nothing about the diagnosis.

A generated patient has the disease's chief symptom, its other symptoms by frequency (one phrasing each, plus
the chosen history-of-present-illness details as separate facts), history items by frequency, standard answers
for the usual history questions, pertinent negatives drawn from the differential's symptoms, exam findings and
vitals, and lab values inside the disease's typical range when the abnormality is sampled (else normal).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence, get_args

import numpy as np

from clinical_gym.cases.disease_table import Disease, LabShift, VitalsRange, disease_table, find_disease
from clinical_gym.cases.leakage import leaked_terms
from clinical_gym.cases.schema import Case, Demographics, Diagnosis, Fact, LabValue, Persona, TestResult, Vitals, normalize
from clinical_gym.cases.topics import BROADER, SYMPTOM_NAMES, SYMPTOMS

SOURCE = "clinical-gym generator"
MIN_TESTS = 3
NEGATIVES = (3, 5)  # pertinent negatives per case, inclusive range
CHIEF_DETAIL_P = 0.9  # chance each HPI detail of the chief symptom is part of the history
OTHER_DETAIL_P = 0.5  # ... of another symptom
VOLUNTEER_ONSET_P = 0.5  # chance the chief symptom's onset is said unprompted
WITHHOLD_P = 0.2  # chance the persona holds back one symptom until asked about it
FORGETFUL_P = 0.15  # chance of a forgetful persona from age FORGETFUL_AGE
FORGETFUL_AGE = 70

FEMALE_ONLY = frozenset({"vaginal_discharge", "vaginal_bleeding"})
MALE_ONLY = frozenset({"penile_discharge", "testicular_pain"})
VAGUE = frozenset(BROADER)  # broad keys ("bowel_changes") make poor pertinent negatives
RED_FLAGS = ("fever", "weight_loss", "night_sweats", "chest_pain", "shortness_of_breath", "syncope", "confusion",
             "blood_in_stool", "hemoptysis", "focal_weakness", "vomiting", "headache")

DENIALS = ("No, I haven't had any {}.", "No {} that I've noticed.", "I haven't had any {}, no.", "Not that I know of, no {}.")
CONNECTIVES = ("", "", "", "Also, ", "And ", "On top of that, ")
GREETINGS = ("", "", "", "Hello doctor, ", "Hi, ", "Doctor, ", "Hello, ")
NO_DIAGNOSIS_RULE = "Do not name or guess a diagnosis."

EMOTIONS: tuple[str, ...] = get_args(Persona.model_fields["emotion"].annotation)
LANGUAGES: tuple[str, ...] = get_args(Persona.model_fields["language"].annotation)


@dataclass(frozen=True)
class StandardAnswer:
    """What a patient without that history item says to the usual question about it."""

    category: str
    phrasings: tuple[str, ...]
    adult_phrasings: tuple[str, ...] = ()  # added from age 18


ADULT_AGE = 18
STANDARD_ANSWERS: dict[str, StandardAnswer] = {
    "past_history": StandardAnswer("past_history", (
        "I don't have any long-term health problems.", "I've been pretty healthy, no medical conditions that I know of.",
        "Nothing really, I'm generally well.")),
    "surgical_history": StandardAnswer("surgical_history", (
        "I've never had an operation.", "No operations, no.", "I've never had any surgery.")),
    "medications": StandardAnswer("medications", (
        "I don't take any regular medicines.", "No regular medication.", "I'm not on any tablets or anything.")),
    "allergies": StandardAnswer("allergies", (
        "No allergies that I know of.", "I'm not allergic to anything.", "None that I'm aware of, no allergies.")),
    "smoking": StandardAnswer("social", ("I don't smoke.", "I've never smoked.", "No, I'm a non-smoker.")),
    "alcohol": StandardAnswer("social", ("I don't drink alcohol.", "No, I don't drink."), (
        "Just the odd glass of wine now and then.", "Only a drink or two at the weekend.", "Hardly ever, maybe at a party.")),
    "family_history": StandardAnswer("family", (
        "Nothing runs in my family that I know of.", "My family are all fairly healthy.",
        "No illnesses in the family that I'm aware of.")),
    "travel": StandardAnswer("social", (
        "I haven't travelled anywhere recently.", "No, I've not been away anywhere.", "No trips abroad or anything lately.")),
}

# A standard answer that would contradict a sampled item of the other topic gives way to these.
ALONGSIDE: dict[str, tuple[str, tuple[str, ...]]] = {
    "medications": ("past_history", ("I take a few regular tablets, but I can't remember all their names.",
                                     "Just my usual tablets; I've got a list of them at home.")),
    "past_history": ("medications", ("Nothing else really, apart from what I take my tablets for.",
                                     "Only what I'm on the tablets for.")),
}

OCCUPATIONS = (
    "a teacher", "a nurse", "an electrician", "a bus driver", "an accountant", "a shop assistant", "a chef", "a plumber",
    "a hairdresser", "a software developer", "a care worker", "a warehouse operative", "a receptionist", "a builder",
    "a police officer", "a cleaner", "a farmer", "a lawyer", "a postal worker", "a mechanic", "an office manager",
    "a security guard", "a pharmacist", "a taxi driver", "a librarian", "a gardener", "a call centre agent", "an engineer",
    "a carpenter", "a waiter", "a graphic designer", "a factory worker", "a social worker", "a bank clerk", "a painter and decorator",
)
WORK_FORMS = ("I work as {}.", "I'm {}.", "I've been working as {} for a few years now.")
RETIRED_FORMS = ("I'm retired now; I used to work as {}.", "I retired a few years ago, I was {}.")
CHILD_WORK = ("I'm at school.", "I go to school, I'm in primary school.", "I'm still at school.")
TEEN_WORK = ("I'm at secondary school.", "I'm at school, doing my exams this year.", "I'm still at school.")
STUDENT_WORK = ("I'm a student at university.", "I'm studying at college.")
RETIREMENT_AGE = 67
LIVING = {
    "child": ("I live with my mum and dad.", "I live with my mum and my little brother.", "I live with my parents and two sisters.",
              "I live with my dad and his partner."),
    "adult": ("I live with my partner.", "I live on my own.", "I live with my husband and our two kids.",
              "I live with my wife and daughter.", "I share a flat with two friends.", "I live with my partner and our dog."),
    "older": ("I live with my wife.", "I live with my husband.", "I live alone since my partner died.",
              "I live on my own, my daughter visits most days.", "I live with my partner in a bungalow."),
}

NORMAL_EXAM: dict[str, tuple[str, ...]] = {
    "cardiovascular": ("Heart sounds normal, no murmurs.", "Regular rhythm, normal heart sounds, no added sounds."),
    "respiratory": ("Chest clear, good air entry bilaterally.", "Clear to auscultation bilaterally, no added sounds."),
    "abdominal": ("Soft, non-tender, no masses or organomegaly.", "Abdomen soft and non-tender, bowel sounds normal."),
    "neurological": ("Alert and oriented, no focal neurological deficit.", "Cranial nerves intact, normal power and sensation."),
}


@dataclass(frozen=True)
class DiseasePlan:
    """What every case of one disease shares, computed once per disease."""

    disease: Disease
    diagnosis: Diagnosis
    own_symptoms: frozenset[str]  # never denied: lacking one of the disease's own symptoms is no pertinent negative
    differential_symptoms: dict[str, float]  # symptom key -> highest frequency among the differential's table entries
    safe_denials: frozenset[str]  # symptom keys whose lay names do not name the diagnosis
    normal_exam: tuple[str, ...]  # systems the disease says nothing about

    @classmethod
    def of(cls, disease: Disease) -> "DiseasePlan":
        """The plan of ``disease``; its differential is looked up in the bundled table with ``find_disease``."""
        dx = Diagnosis(name=disease.name, icd10=disease.icd10, synonyms=disease.synonyms)
        symptoms: dict[str, float] = {}
        for name in disease.differential:
            other = find_disease(name)
            if other is None or other.id == disease.id:
                continue
            for s in other.symptoms:
                symptoms[s.symptom] = max(symptoms.get(s.symptom, 0.0), s.frequency)
        systems = {f.system for f in disease.exam_findings}
        own = frozenset(s.symptom for s in disease.symptoms)
        return cls(disease, dx, own, symptoms, safe_denials(dx), tuple(s for s in NORMAL_EXAM if s not in systems))


class IndexedGenerator:
    """A case source where case ``i`` of ``seed`` is a pure function of ``(seed, i)``; subclasses define ``case``.

    Case ids are ``<id_prefix>-<seed>-<i>``: they never name the diagnosis.
    """

    id_prefix = "gen"

    def case(self, seed: int, i: int) -> Case:
        raise NotImplementedError

    def case_id(self, seed: int, i: int) -> str:
        return f"{self.id_prefix}-{seed}-{i}"

    @staticmethod
    def entry(seed: int, i: int, n: int) -> int:
        """Which of ``n`` entries case ``i`` is about: each block of ``n`` consecutive cases covers all, shuffled."""
        return _block_order(seed, i // n, n)[i % n]

    def cases(self, n: int, seed: int = 0, split: str | None = None) -> list[Case]:
        """Cases 0..n-1 of ``seed``; with ``split``, the first ``n`` whose id falls in it (see ``loading.split_of``)."""
        if n < 0 or seed < 0:
            raise ValueError(f"n and seed must be >= 0, got n={n}, seed={seed}")
        if split is None:
            return [self.case(seed, i) for i in range(n)]
        from clinical_gym.cases.loading import split_of

        indices = (i for i in itertools.count() if split_of(self.case_id(seed, i)) == split)
        return [self.case(seed, i) for i in itertools.islice(indices, n)]


class CaseGenerator(IndexedGenerator):
    """Samples cases from a disease table (default: the bundled one)."""

    def __init__(self, diseases: Sequence[Disease] | None = None) -> None:
        table = tuple(disease_table() if diseases is None else diseases)
        if not table:
            raise ValueError("no diseases to generate from: the disease table (clinical_gym/data/diseases/*.json) is empty")
        self.plans = tuple(DiseasePlan.of(d) for d in table)

    def case(self, seed: int, i: int) -> Case:
        plan = self.plans[self.entry(seed, i, len(self.plans))]
        return _sample_case(plan, np.random.default_rng([seed, 0, i]), self.case_id(seed, i))


def generate_cases(n: int, seed: int = 0, diseases: Sequence[Disease] | None = None) -> list[Case]:
    """Cases 0..n-1 of ``seed`` sampled from ``diseases`` (default: the bundled disease table)."""
    return CaseGenerator(diseases).cases(n, seed)


@lru_cache(maxsize=64)
def _block_order(seed: int, block: int, n: int) -> tuple[int, ...]:
    return tuple(int(x) for x in np.random.default_rng([seed, 1, block]).permutation(n))


# -- sampling one case ------------------------------------------------------------------------------------------
def pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    """One of ``options``, uniformly."""
    return options[int(rng.random() * len(options))]


def randint(rng: np.random.Generator, low: int, high: int) -> int:
    """An integer uniform in ``[low, high]`` (both included)."""
    return low + int(rng.random() * (high - low + 1))


def safe_denials(diagnosis: Diagnosis) -> frozenset[str]:
    """Symptom keys whose lay names (used in denials) do not name ``diagnosis``."""
    return frozenset(s for s in SYMPTOMS if not leaked_terms(SYMPTOM_NAMES[s], diagnosis))


def with_lead(lead: str, text: str) -> str:
    """``text`` after a lead-in ("Also, "), lower-casing its first letter unless it starts with the pronoun I."""
    if not lead:
        return text
    first = text.split(" ", 1)[0].rstrip(",.")
    keep = first == "I" or first.startswith(("I'", "I’"))
    return lead + (text if keep else text[0].lower() + text[1:])


def denial(rng: np.random.Generator, symptom: str) -> str:
    """A patient's varied first-person denial of ``symptom``."""
    return pick(rng, DENIALS).format(SYMPTOM_NAMES[symptom])


def fits_sex(symptom: str, sex: str) -> bool:
    """Whether a patient of ``sex`` can have ``symptom`` (no vaginal bleeding in men, no testicular pain in women)."""
    return not (symptom in FEMALE_ONLY and sex == "male" or symptom in MALE_ONLY and sex == "female")


def related_symptoms(symptoms: set[str]) -> set[str]:
    """``symptoms`` plus the broad keys they imply and the narrow keys their broad keys cover."""
    related = set(symptoms)
    for broad, narrow in BROADER.items():
        if symptoms & set(narrow) or broad in symptoms:
            related.add(broad)
            related.update(narrow if broad in symptoms else ())
    return related


def _sample_case(plan: DiseasePlan, rng: np.random.Generator, cid: str) -> Case:
    d = plan.disease
    age = randint(rng, *d.age_range)
    sex = "male" if rng.random() < d.male_fraction else "female"
    symptom_facts = _symptom_facts(d, rng, sex)
    history = [*symptom_facts, *_history_facts(d, rng, sex, age),
               *negative_facts(rng, plan.differential_symptoms, plan.safe_denials, plan.own_symptoms, sex)]
    return Case(
        id=cid, specialty=d.specialty, source=SOURCE, demographics=Demographics(age=age, sex=sex),
        chief_complaint=d.chief_complaint, self_report=with_lead(pick(rng, GREETINGS), pick(rng, d.self_reports)),
        history=tuple(history), vitals=sample_vitals(d.vitals, rng), physical_exam=_exam(plan, rng), tests=_tests(d, rng),
        key_exams=d.key_exams, diagnosis=plan.diagnosis, differential=d.differential, recommendation=d.management,
        persona=sample_persona(rng, symptom_facts, age, d.chief_symptom),
    )


def _symptom_facts(d: Disease, rng: np.random.Generator, sex: str) -> list[Fact]:
    facts: list[Fact] = []
    seen: set[str] = set()
    for pattern in d.symptoms:
        s = pattern.symptom
        chief = s == d.chief_symptom
        if s in seen or not chief and (not fits_sex(s, sex) or rng.random() >= pattern.frequency):
            continue
        seen.add(s)
        text = pick(rng, pattern.phrasings)
        facts.append(Fact(id=s, category="hpi" if chief else "ros", volunteered=chief,
                          text=text if chief else with_lead(pick(rng, CONNECTIVES), text),
                          topics=(s,) if chief else (s, "associated")))
        for hpi, options in pattern.details.items():
            if rng.random() < (CHIEF_DETAIL_P if chief else OTHER_DETAIL_P):
                facts.append(Fact(id=f"{s}_{hpi}", category="hpi", text=pick(rng, options), topics=(s, hpi),
                                  volunteered=chief and hpi == "onset" and rng.random() < VOLUNTEER_ONSET_P))
    return facts


def _history_facts(d: Disease, rng: np.random.Generator, sex: str, age: int) -> list[Fact]:
    """Sampled history items (one fact per topic), then standard answers for the usual questions they leave open."""
    by_topic: dict[str, tuple[str, list[str]]] = {}
    for item in d.history:
        if (item.topic == "menstrual_history" or item.category == "gynecologic") and sex == "male":
            continue
        if rng.random() < item.frequency:
            by_topic.setdefault(item.topic, (item.category, []))[1].append(pick(rng, item.phrasings))
    facts = [Fact(id=f"hx_{topic}", category=cat, text=" ".join(texts), topics=(topic,)) for topic, (cat, texts) in by_topic.items()]
    return facts + standard_facts(rng, age, set(by_topic))


def standard_facts(rng: np.random.Generator, age: int, covered: set[str]) -> list[Fact]:
    """Answers to the usual history questions (allergies, smoking, work, home, ...) whose topics are not ``covered``."""
    facts = []
    for topic, answer in STANDARD_ANSWERS.items():
        if topic not in covered:
            options = answer.phrasings + (answer.adult_phrasings if age >= ADULT_AGE else ())
            if topic in ALONGSIDE and ALONGSIDE[topic][0] in covered:
                options = ALONGSIDE[topic][1]
            facts.append(Fact(id=f"hx_{topic}", category=answer.category, text=pick(rng, options), topics=(topic,)))
    if "occupation" not in covered:
        facts.append(Fact(id="hx_occupation", category="social", text=occupation(rng, age), topics=("occupation",)))
    if "living_situation" not in covered:
        group = "child" if age < ADULT_AGE else "older" if age >= RETIREMENT_AGE else "adult"
        facts.append(Fact(id="hx_living_situation", category="social", text=pick(rng, LIVING[group]), topics=("living_situation",)))
    return facts


def occupation(rng: np.random.Generator, age: int) -> str:
    """What the patient does all day, in their words, fitting their age."""
    if age < 11:
        return pick(rng, CHILD_WORK)
    if age < ADULT_AGE:
        return pick(rng, TEEN_WORK)
    if age < 23 and rng.random() < 0.5:
        return pick(rng, STUDENT_WORK)
    forms = RETIRED_FORMS if age >= RETIREMENT_AGE else WORK_FORMS
    return pick(rng, forms).format(pick(rng, OCCUPATIONS))


def negative_facts(rng: np.random.Generator, candidates: dict[str, float], safe: frozenset[str], keep: set[str] | frozenset[str],
                   sex: str) -> list[Fact]:
    """Pertinent negatives: ``candidates`` (symptom -> weight) outside ``keep``, topped up with red flags.

    ``keep`` holds symptoms never denied (the patient's, or all of the disease's); only symptoms in ``safe``
    (see ``safe_denials``) are denied.
    """
    excluded = related_symptoms(set(keep)) | VAGUE
    usable = [s for s in candidates if s not in excluded and s in safe and fits_sex(s, sex)]
    chosen = weighted_sample(rng, usable, [candidates[s] for s in usable], randint(rng, *NEGATIVES))
    flags = [s for s in RED_FLAGS if s not in excluded and s not in chosen and s in safe]
    chosen += weighted_sample(rng, flags, [1.0] * len(flags), NEGATIVES[0] - len(chosen))
    return [Fact(id=f"no_{s}", category="ros", text=denial(rng, s), topics=(s,), present=False) for s in chosen]


def weighted_sample(rng: np.random.Generator, items: list[str], weights: list[float], k: int) -> list[str]:
    """Up to ``k`` distinct items, each draw proportional to its weight among those left (Efraimidis-Spirakis)."""
    if k <= 0 or not items:
        return []
    keys = np.log(rng.random(len(items))) / np.asarray(weights)
    return [items[int(j)] for j in np.argsort(-keys, kind="stable")[:k]]


def sample_persona(rng: np.random.Generator, facts: list[Fact], age: int, chief: str) -> Persona:
    """Emotion and language at random; sometimes one associated symptom held back until asked; forgetful in some elders."""
    withheld: tuple[str, ...] = ()
    rules = [NO_DIAGNOSIS_RULE]
    hideable = [f for f in facts if f.id != chief and "associated" in f.topics]
    if hideable and rng.random() < WITHHOLD_P:
        fact = hideable[randint(rng, 0, len(hideable) - 1)]
        withheld = (fact.id,)
        rules.append(f"Do not bring up this symptom unless the doctor asks about it directly: {SYMPTOM_NAMES[fact.id]}.")
    forgetful = age >= FORGETFUL_AGE and rng.random() < FORGETFUL_P
    return Persona(emotion=pick(rng, EMOTIONS), language=pick(rng, LANGUAGES), cognitive="forgetful" if forgetful else "normal",
                   withheld=withheld, disclosure_rules=tuple(rules))


def sample_vitals(r: VitalsRange, rng: np.random.Generator) -> Vitals:
    """Vitals uniform within the ranges (diastolic kept at least 15 below systolic)."""
    systolic = randint(rng, *r.systolic_bp)
    diastolic = min(randint(rng, *r.diastolic_bp), systolic - 15)
    return Vitals(temperature_c=round(float(rng.uniform(*r.temperature_c)), 1),
                  heart_rate=randint(rng, *r.heart_rate),
                  respiratory_rate=randint(rng, *r.respiratory_rate),
                  systolic_bp=systolic, diastolic_bp=diastolic, spo2=randint(rng, *r.spo2))


def _exam(plan: DiseasePlan, rng: np.random.Generator) -> dict[str, str]:
    findings = [f for f in plan.disease.exam_findings if rng.random() < f.frequency]
    if not findings:
        findings = [max(plan.disease.exam_findings, key=lambda f: f.frequency)]
    exam: dict[str, str] = {}
    for f in findings:
        exam[f.system] = f"{exam[f.system]} {f.text}" if f.system in exam else f.text
    for system in plan.normal_exam:
        exam[system] = pick(rng, NORMAL_EXAM[system])
    return exam


def _tests(d: Disease, rng: np.random.Generator) -> tuple[TestResult, ...]:
    """Every lab test (values normal or shifted), text results by frequency, key exams always, at least MIN_TESTS."""
    values: dict[str, list[LabValue]] = {}
    for shift in d.labs:
        values.setdefault(shift.test, []).append(lab_value(shift, rng, abnormal=rng.random() < shift.frequency))
    texts: dict[str, tuple[str, str]] = {}
    skipped = []
    for r in d.results:
        if r.test in d.key_exams or rng.random() < r.frequency:
            texts.setdefault(r.test, (r.category, r.text))
        else:
            skipped.append(r)
    for r in sorted(skipped, key=lambda r: -r.frequency):
        if len(values.keys() | texts.keys()) >= MIN_TESTS:
            break
        texts.setdefault(r.test, (r.category, r.text))
    tests = [TestResult(name=name, category=texts[name][0] if name in texts else "lab", text=texts.get(name, ("", ""))[1],
                        values=tuple(vals)) for name, vals in values.items()]
    tests += [TestResult(name=name, category=cat, text=text) for name, (cat, text) in texts.items() if name not in values]
    return tuple(tests)


def lab_value(shift: LabShift, rng: np.random.Generator, abnormal: bool) -> LabValue:
    """A value uniform in the typical range (``abnormal``) or the reference range, flagged against the reference."""
    lo, hi = (shift.typical_low, shift.typical_high) if abnormal else (shift.ref_low, shift.ref_high)
    value = round(float(rng.uniform(lo, hi)), _decimals(shift))
    return LabValue(name=shift.component, value=value, unit=shift.unit, ref_low=shift.ref_low, ref_high=shift.ref_high,
                    flag=lab_flag(value, shift.ref_low, shift.ref_high))


def lab_flag(value: float, ref_low: float | None, ref_high: float | None) -> str:
    if ref_low is not None and value < ref_low:
        return "low"
    if ref_high is not None and value > ref_high:
        return "high"
    return "normal"


@lru_cache(maxsize=4096)
def _decimals(shift: LabShift) -> int:
    """As many decimals as the table writes its bounds with (135 -> 0, 3.5 -> 1, 0.04 -> 2), and one below 20."""
    bounds = (shift.ref_low, shift.ref_high, shift.typical_low, shift.typical_high)
    written = max(len(np.format_float_positional(b, trim="-").partition(".")[2]) for b in bounds)
    return min(4, max(written, int(max(abs(b) for b in bounds) < 20)))


def history_key(case: Case) -> tuple[str, ...]:
    """The case's history as the patient tells it, for spotting duplicate patients."""
    return tuple(normalize(f.text) for f in case.history)
