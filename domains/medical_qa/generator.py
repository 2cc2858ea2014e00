"""The MedicalQA task generator: single-best-answer questions written into the question bank with their tasks.

Four kinds, drawn evenly:

* ``diagnosis``: a vignette of a patient sampled from the disease knowledge table (``clinical_gym.cases.generator``:
  the patient's own words, observations, examination and results); options: the condition and four from its
  differential (topped up from the same specialty);
* ``management``: a vignette of the same kind asking for the first-line management; options: the table's management
  of the condition and of four others of its specialty;
* ``laboratory``: four results, exactly one outside its adult reference range, as the bank's reference ranges and
  the ``interpret_lab_value`` tool place it (the tool's own code decides);
* ``calculation``: a scoring instrument's inputs in words and numbers, sampled around its thresholds; the answer is
  the score ``clinical_gym.tools.instruments`` computes, among five consecutive values.

Each task reads the question, lists the options, uses the tool its kind needs (reference-range interpretation, the
instrument), compares the answer with a distractor, eliminates every other option, records its reasoning and
submits the letter. Generalisation split: the test split holds conditions (the same 12 of 63 the ClinicalDiagnosis
generator holds out), abnormal analytes and instruments (qSOFA, Glasgow Coma Scale) that the train split never shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from clinical_gym.cases.disease_table import Disease, disease_table, find_disease
from clinical_gym.cases.generator import CaseGenerator
from clinical_gym.cases.loading import split_of
from clinical_gym.rewards.episode import contains_term
from clinical_gym.tool_env.generation import (
    Draft,
    TaskGenerator,
    Wording,
    between,
    case_sources,
    chance,
    condition_pools,
    lettered,
    pick,
    sample,
)
from clinical_gym.tool_env.tasks import Task
from clinical_gym.tools import instruments
from clinical_gym.domains.medical_qa.data_model import MedicalQADB, Question
from clinical_gym.domains.medical_qa.tools import MedicalQATools
from clinical_gym.domains.task_conversion import specialty_of

KINDS = ("diagnosis", "management", "laboratory", "calculation")
FIRST_QUESTION = 100_000  # generated question ids are Q100000 and up (the bank's pattern allows six digits)

TICKETS = Wording(
    question=(
        "Question {qid} in the question bank ({specialty}) needs an answer: read it and work it through with the "
        "tools.",
        "Answer question {qid} ({specialty}). Read the vignette, reason through the options with the tools and "
        "submit the letter of the single best answer.",
        "Work through bank question {qid} from {specialty}: rule out what does not fit, record your reasoning and "
        "submit one letter.",
        "A {specialty} question, {qid}, is waiting in the bank. Read it, check what you need, and submit the best "
        "option's letter."),
)
LEAD_INS = Wording(
    diagnosis=("What is the most likely diagnosis?", "Which diagnosis best explains this presentation?",
               "Which of the following is the most likely cause of these findings?"),
    management=("What is the most appropriate first-line management?",
                "Which of the following is the most appropriate initial management?",
                "What should be done first for this condition?"),
    laboratory=("Which of these results lies outside its adult reference range?",
                "Which result is abnormal?", "Only one of these results is outside the adult reference range. Which?"),
    calculation=("What is the {name}?", "Calculate the {name}. What is it?", "What {name} does this patient have?"),
)
PRESENTS = ("presents with", "comes to the clinic with", "is seen in the emergency department with",
            "attends with")


@dataclass(frozen=True)
class Scored:
    """An instrument question: its name in words, the specialty, a sampler of (arguments, vignette), the score's
    range."""

    key: str
    name: str
    specialty: str
    pool: str
    low: int
    high: int
    sample: Callable[[np.random.Generator], tuple[dict[str, Any], str]]


def _curb65(rng: np.random.Generator) -> tuple[dict[str, Any], str]:
    age = int(between(rng, 45, 90))
    confused = chance(rng, 0.35)
    urea = float(between(rng, 4.0, 12.0, 1))
    rr = int(between(rng, 18, 36))
    sbp, dbp = int(between(rng, 82, 140)), int(between(rng, 52, 84))
    dbp = min(dbp, sbp - 25)
    text = (f"A {age}-year-old with community-acquired pneumonia is {'newly confused (AMT 6/10)' if confused else 'alert and orientated'}. "
            f"Respiratory rate {rr}/min, blood pressure {sbp}/{dbp} mmHg, serum urea {urea:g} mmol/L.")
    return {"confusion": confused, "urea_mmol_l": urea, "respiratory_rate": rr, "systolic_bp": sbp,
            "diastolic_bp": dbp, "age": age}, text


def _cha2ds2vasc(rng: np.random.Generator) -> tuple[dict[str, Any], str]:
    age = int(between(rng, 50, 90))
    sex = pick(rng, ("female", "male"))
    items = {k: chance(rng, p) for k, p in (("congestive_heart_failure", 0.25), ("hypertension", 0.55),
                                             ("diabetes", 0.3), ("stroke_tia_or_thromboembolism", 0.2),
                                             ("vascular_disease", 0.25))}
    words = {"congestive_heart_failure": "heart failure", "hypertension": "treated hypertension",
             "diabetes": "type 2 diabetes", "stroke_tia_or_thromboembolism": "a previous transient ischaemic attack",
             "vascular_disease": "peripheral arterial disease"}
    history = [words[k] for k, v in items.items() if v]
    text = (f"A {age}-year-old {'woman' if sex == 'female' else 'man'} has newly diagnosed non-valvular atrial "
            f"fibrillation. " + (f"History: {', '.join(history)}." if history else "No other medical history."))
    return {"age": age, "sex": sex, **items}, text


def _centor(rng: np.random.Generator) -> tuple[dict[str, Any], str]:
    age = int(between(rng, 5, 70))
    temperature = float(between(rng, 36.8, 39.4, 1))
    items = {k: chance(rng, 0.5) for k in ("cough_absent", "tender_anterior_cervical_nodes",
                                           "tonsillar_swelling_or_exudate")}
    text = (f"A {age}-year-old has a sore throat. Temperature {temperature:g} °C; "
            f"{'no cough' if items['cough_absent'] else 'a cough'}; "
            f"{'tender' if items['tender_anterior_cervical_nodes'] else 'no tender'} anterior cervical nodes; tonsils "
            f"{'swollen with exudate' if items['tonsillar_swelling_or_exudate'] else 'not swollen, no exudate'}.")
    return {"age": age, "temperature_c": temperature, **items}, text


def _qsofa(rng: np.random.Generator) -> tuple[dict[str, Any], str]:
    rr, sbp = int(between(rng, 16, 30)), int(between(rng, 86, 130))
    altered = chance(rng, 0.4)
    text = (f"An adult with a suspected urinary infection has a respiratory rate of {rr}/min and blood pressure "
            f"{sbp}/{min(int(between(rng, 50, 80)), sbp - 25)} mmHg, and is "
            f"{'newly confused (GCS 14)' if altered else 'alert with a GCS of 15'}.")
    return {"respiratory_rate": rr, "systolic_bp": sbp, "altered_mentation": altered}, text


GCS_WORDS = {
    "eye": {4: "opens the eyes spontaneously", 3: "opens the eyes to speech", 2: "opens the eyes only to pain",
            1: "does not open the eyes"},
    "verbal": {5: "is orientated", 4: "is confused but conversing", 3: "says inappropriate words",
               2: "makes incomprehensible sounds", 1: "makes no sounds"},
    "motor": {6: "obeys commands", 5: "localises to pain", 4: "withdraws from pain", 3: "flexes abnormally to pain",
              2: "extends to pain", 1: "makes no movement"},
}


def _gcs(rng: np.random.Generator) -> tuple[dict[str, Any], str]:
    values = {"eye": int(between(rng, 1, 4)), "verbal": int(between(rng, 1, 5)), "motor": int(between(rng, 1, 6))}
    text = ("After a fall down the stairs, a patient " + ", ".join(GCS_WORDS[k][v] for k, v in values.items()) + ".")
    return values, text


SCORED: tuple[Scored, ...] = (
    Scored("curb_65", "CURB-65 score", "respiratory", "train", 0, 5, _curb65),
    Scored("cha2ds2_vasc", "CHA2DS2-VASc score", "cardiology", "train", 0, 9, _cha2ds2vasc),
    Scored("centor_mcisaac", "Centor score with McIsaac's age modification", "infectious disease", "train", -1, 5,
           _centor),
    Scored("qsofa", "qSOFA score", "infectious disease", "test", 0, 3, _qsofa),
    Scored("glasgow_coma_scale", "Glasgow Coma Scale score", "neurology", "test", 3, 15, _gcs),
)
# Laboratory question analytes: (analyte, its usual span of values either side of the range).
ANALYTE_SPECIALTY = {"Haemoglobin": "haematology", "Platelets": "haematology", "White cell count": "haematology",
                     "Neutrophils": "haematology", "MCV": "haematology", "Ferritin": "haematology",
                     "TSH": "endocrinology", "Free T4": "endocrinology", "Glucose": "endocrinology",
                     "HbA1c": "endocrinology", "Adjusted calcium": "endocrinology", "ALT": "hepatology",
                     "Bilirubin": "hepatology", "ALP": "hepatology", "Albumin": "hepatology",
                     "Creatinine": "nephrology", "Urea": "nephrology", "Potassium": "nephrology",
                     "Sodium": "nephrology", "eGFR": "nephrology", "Lithium": "psychiatry", "Digoxin": "cardiology",
                     "Troponin T": "cardiology", "INR": "haematology"}


class MedicalQAGenerator(TaskGenerator):
    env_id = "MedicalQA-v1"
    id_prefix = "gmq"
    collections = {"questions": "question_id"}

    @cached_property
    def held_out(self) -> str:  # type: ignore[override]
        return ("conditions (diagnosis and management questions): " + ", ".join(d.name for d in self.diseases["test"])
                + "; abnormal analytes: " + ", ".join(self.analytes["test"])
                + "; instruments: " + ", ".join(s.name for s in SCORED if s.pool == "test"))

    @property
    def diseases(self) -> dict[str, tuple[Disease, ...]]:
        return condition_pools()

    @property
    def case_sources(self) -> dict[str, CaseGenerator]:
        return case_sources()

    @cached_property
    def by_name(self) -> dict[str, Disease]:
        return {d.name: d for d in disease_table()}

    @cached_property
    def related(self) -> dict[str, tuple[list[Disease], list[Disease]]]:
        """Per condition: the conditions of its differential found in the table, and the others of its specialty."""
        table = disease_table()
        found = {d.id: [o for name in d.differential if (o := find_disease(name)) is not None and o.id != d.id]
                 for d in table}
        return {d.id: (found[d.id], [o for o in table if o.specialty == d.specialty and o.id != d.id]) for d in table}

    @cached_property
    def bank(self) -> MedicalQADB:
        return self.base_db()  # type: ignore[return-value]

    @cached_property
    def tools(self) -> MedicalQATools:
        return MedicalQATools(self.bank)

    @cached_property
    def analytes(self) -> dict[str, tuple[str, ...]]:
        names = tuple(a for a in ANALYTE_SPECIALTY if a in self.bank.reference_ranges)
        return {split: tuple(a for a in names if split_of(f"analyte:{a}") == split) for split in ("train", "test")}

    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        kind = pick(rng, KINDS)
        qid = f"Q{FIRST_QUESTION + index}"
        make = {"diagnosis": self._condition, "management": self._condition, "laboratory": self._laboratory,
                "calculation": self._calculation}[kind]
        specialty, vignette, options, answer, extra, findings, pool = make(rng, split, kind)
        question = Question(question_id=qid, specialty=specialty, topic=f"{kind}: {pool}"[:80], vignette=vignette,
                            lead_in=LEAD_INS.say(rng, kind, name=extra.get("name", "")), options=options)
        task = self._task(rng, task_id, question, answer, kind, extra, findings, pool)
        return Draft(task, {"questions": [question]}, ids=(qid,))

    # -- the question kinds --------------------------------------------------------------------------------------------
    def _condition(self, rng: np.random.Generator, split: str, kind: str) -> tuple[Any, ...]:
        case = self.case_sources[split].case(int(rng.integers(2**31)), 0)
        disease = self.by_name[case.diagnosis.name]
        sex = case.demographics.sex
        words = " ".join(f.text for f in case.history if f.present and (f.volunteered or chance(rng, 0.5)))[:600]
        v = case.vitals
        observations = (f"Temperature {v.temperature_c:g} °C, pulse {v.heart_rate}/min, blood pressure "
                        f"{v.systolic_bp}/{v.diastolic_bp} mmHg, respiratory rate {v.respiratory_rate}/min, SpO2 "
                        f"{v.spo2}% on air." if v else "")
        exam = " ".join(case.physical_exam.values())
        results = []
        for test in case.tests[:3]:
            if test.values:
                results += [f"{x.name} {x.value:g} {x.unit} (reference {x.ref_low:g}-{x.ref_high:g})"
                            for x in test.values[:2] if x.value is not None and x.ref_low is not None
                            and x.ref_high is not None]
            elif test.text:
                results.append(f"{test.name}: {test.text}")
        vignette = (f"A {case.demographics.age}-year-old {'woman' if sex == 'female' else 'man'} {pick(rng, PRESENTS)} "
                    f"{case.chief_complaint}. In {'her' if sex == 'female' else 'his'} words: \"{words}\" "
                    f"{observations} Examination: {exam} " + (f"Results: {'; '.join(results)}." if results else ""))
        others, same = self.related[disease.id]
        if kind == "diagnosis":
            correct = disease.name
            pool_names = list(dict.fromkeys([*(n for n in disease.differential), *(d.name for d in sample(rng, same, 6))]))
            distractors = [n for n in pool_names if n != correct and not self._same_condition(n, disease)][:4]
            findings = [case.chief_complaint, *results[:2]]
        else:
            correct = disease.management
            candidates = list(dict.fromkeys(d.management for d in [*others, *sample(rng, same, 6),
                                                                   *sample(rng, list(disease_table()), 6)]))
            distractors = [m for m in candidates if m != correct][:4]
            findings = [case.chief_complaint, f"the picture of {disease.name}"]
        options, answer = lettered(rng, correct, distractors)
        specialty = specialty_of(f"{case.chief_complaint} {disease.name}")
        return specialty, vignette.strip(), options, answer, {"disease": disease.name}, findings, disease.name

    @staticmethod
    def _same_condition(name: str, disease: Disease) -> bool:
        return any(contains_term(name, n) or contains_term(n, name) for n in (disease.name, *disease.synonyms))

    def _laboratory(self, rng: np.random.Generator, split: str, kind: str) -> tuple[Any, ...]:
        abnormal = pick(rng, self.analytes[split])
        normal_pool = [a for a in (*self.analytes["train"], *self.analytes["test"]) if a != abnormal]
        sex = pick(rng, ("female", "male"))
        texts, flags = [], {}
        for analyte in [abnormal, *sample(rng, normal_pool, 3)]:
            r = self.bank.reference_ranges[analyte]
            bounds = r.bounds(sex)
            low, high = bounds.low, bounds.high
            span = (high if high is not None else low * 2) - (low if low is not None else 0)
            if analyte == abnormal:
                direction = "high" if low is None or (high is not None and chance(rng, 0.6)) else "low"
                value = (high + span * float(rng.uniform(0.1, 0.8))) if direction == "high" \
                    else low - min(low * 0.6, span * float(rng.uniform(0.1, 0.5)))
            else:
                value = float(rng.uniform(low if low is not None else 0.0, high if high is not None else low * 1.6))
            value = self._round(value, r)
            flag = self.tools.interpret_lab_value(analyte, value, sex)["flag"]
            flags[analyte] = flag
            texts.append((analyte, f"{analyte} {value:g} {r.unit}".strip(), value))
        if [a for a, f in flags.items() if f != "normal"] != [abnormal]:
            return self._laboratory(rng, split, kind)
        correct = texts[0][1]
        options, answer = lettered(rng, correct, [t[1] for t in texts[1:]])
        vignette = (f"A {int(between(rng, 20, 80))}-year-old {'woman' if sex == 'female' else 'man'} has routine blood "
                    f"tests before elective surgery. The results are listed in the options.")
        extra = {"analyte": abnormal, "value": texts[0][2], "sex": sex, "flag": flags[abnormal]}
        return ANALYTE_SPECIALTY[abnormal], vignette, options, answer, extra, [f"{correct} is {flags[abnormal]}"], abnormal

    @staticmethod
    def _round(value: float, r: Any) -> float:
        bound = r.high if r.high is not None else (r.low if r.low is not None else 10)
        if r.by_sex:
            bound = r.by_sex["male"].high or 10
        return round(value, 0 if bound >= 100 else 1 if bound >= 5 else 2)

    def _calculation(self, rng: np.random.Generator, split: str, kind: str) -> tuple[Any, ...]:
        scored = pick(rng, tuple(s for s in SCORED if s.pool == split))
        arguments, vignette = scored.sample(rng)
        result = getattr(instruments, scored.key)(**arguments)
        score = int(result.score)
        start = min(max(scored.low, score - int(between(rng, 0, 4))), scored.high - 4)
        values = [str(v) for v in range(start, start + 5)]
        options = {letter: value for letter, value in zip("ABCDE", values)}
        answer = next(k for k, v in options.items() if v == str(score))
        extra = {"name": scored.name, "instrument": scored.key, "arguments": arguments, "category": result.category}
        return scored.specialty, vignette, options, answer, extra, [f"{scored.name} {score} ({result.category})"], \
            scored.key

    # -- the task --------------------------------------------------------------------------------------------------
    def _task(self, rng: np.random.Generator, task_id: str, question: Question, answer: str, kind: str,
              extra: dict[str, Any], findings: list[str], pool: str) -> Task:
        q = {"question_id": question.question_id}
        options = question.options
        wrong = [letter for letter in options if letter != answer]
        distractor = pick(rng, wrong)
        actions: list[dict[str, Any]] = [
            {"name": "get_question", "arguments": q, "compare_args": ["question_id"]},
            {"name": "list_options", "arguments": q, "compare_args": ["question_id"]}]
        assertions: list[dict[str, Any]] = [
            {"text": "Reads the question before answering",
             "rule": {"kind": "called_before", "first": {"name": "get_question", "arguments": q},
                      "then": {"name": "submit_answer", "arguments": {}}}},
            {"text": "Lays out the reasoning before answering",
             "rule": {"kind": "called_before", "first": {"name": "record_reasoning", "arguments": q},
                      "then": {"name": "submit_answer", "arguments": {}}}}]
        if kind == "laboratory":
            lab = {"analyte": extra["analyte"], "value": extra["value"], "sex": extra["sex"]}
            actions.append({"name": "interpret_lab_value", "arguments": lab, "compare_args": ["analyte"]})
            assertions.append({"text": f"Checks the {extra['analyte']} against its reference range",
                               "rule": {"kind": "called", "call": {"name": "interpret_lab_value",
                                                                   "arguments": {"analyte": extra["analyte"]}}}})
        elif kind == "calculation":
            actions.append({"name": extra["instrument"], "arguments": extra["arguments"]})
            assertions.append({"text": f"Calculates the {extra['name']} from the findings",
                               "rule": {"kind": "called", "call": {"name": extra["instrument"],
                                                                   "arguments": extra["arguments"]}}})
        reasons = {"diagnosis": "fits the findings less well than option {a}",
                   "management": "is not the first-line management here; option {a} is",
                   "laboratory": "lies inside its reference range",
                   "calculation": "is not the score the findings give; it is {s}"}
        actions.append({"name": "compare_options", "arguments": {**q, "letters": sorted([answer, distractor]),
                                                                 "criterion": "fit with the key findings"},
                        "compare_args": ["question_id", "letters"]})
        for letter in wrong:
            reason = reasons[kind].format(a=answer, s=options[answer])
            actions.append({"name": "eliminate_option", "arguments": {**q, "letter": letter,
                                                                       "reason": f"{options[letter]} {reason}"},
                            "compare_args": ["question_id", "letter"]})
        actions.append({"name": "record_reasoning", "arguments": {**q, "key_findings": findings,
                                                                  "conclusion": f"{answer}: {options[answer]}"},
                        "compare_args": ["question_id"]})
        assertions.append({"text": f"Rules out option {distractor}",
                           "rule": {"kind": "db_record", "collection": "eliminations",
                                    "match": {**q, "letter": distractor}}})
        rationale = {"diagnosis": f"The answer is {answer}: {options[answer]} explains the presentation.",
                     "management": f"The answer is {answer}: the first-line management for {extra.get('disease', '')}.",
                     "laboratory": f"The answer is {answer}: {options[answer]} is {extra.get('flag')} for the "
                                   f"reference range; the other results are inside theirs.",
                     "calculation": f"The answer is {answer}: the {extra.get('name')} is {options[answer]} "
                                    f"({extra.get('category')})."}[kind]
        ticket = TICKETS.say(rng, "question", qid=question.question_id, specialty=question.specialty)
        return Task.model_validate({
            "id": task_id, "ticket": ticket, "expected_actions": actions, "assertions": assertions, "answer": answer,
            "options": dict(options), "rationale": rationale, "category": kind,
            "tags": ["generated", kind, pool, question.specialty]})

    # -- validation ----------------------------------------------------------------------------------------------------
    def pool_key(self, task: Task) -> str:
        return task.tags[2]

    def check(self, task: Task, db: Any) -> list[str]:
        problems = []
        qid = next(a.arguments["question_id"] for a in task.expected_actions if a.name == "get_question")
        question = db.questions[qid]
        if dict(question.options) != task.options:
            problems.append("the task's options differ from the question's")
        gold = task.options[task.answer]
        if task.category == "diagnosis" and contains_term(question.vignette, gold):
            problems.append(f"the vignette names the answer {gold!r}")
        if task.category == "laboratory":
            tools = MedicalQATools(db)
            sex = next(a.arguments["sex"] for a in task.expected_actions if a.name == "interpret_lab_value")
            flagged = []
            for letter, text in task.options.items():
                found = max((a for a in db.reference_ranges if text.startswith(a + " ")), key=len)
                value = float(text[len(found) + 1:].split()[0])
                if tools.interpret_lab_value(found, value, sex)["flag"] != "normal":
                    flagged.append(letter)
            if flagged != [task.answer]:
                problems.append(f"abnormal options {flagged}, answer {task.answer}")
        if task.category == "calculation":
            call = next(a for a in task.expected_actions if a.name in instruments.__all__)
            score = getattr(instruments, call.name)(**call.arguments).score
            if str(int(score)) != gold:
                problems.append(f"the instrument gives {score}, the answer is {gold}")
        return problems
