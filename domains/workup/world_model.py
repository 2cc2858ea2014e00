"""EHR world models for DiagnosticWorkup: what an ordered examination returns for this patient.

* ``RecordWorldModel`` (the default): record first. An order is looked up in the case's own results under every
  name it may use (``clinical_gym.domains.workup.record``: recorded names, nested and group names, their generic
  forms, the catalogue's aliases, lab values by component); only what the record does not hold is synthesised
  from the exam catalogue (normal values, a child's reference intervals where they differ), shifted by the disease
  knowledge table where the diagnosis says how that analyte changes. A recorded result is never replaced by a
  synthesised one, and a panel the record holds in part keeps its recorded values. Deterministic per (case,
  analyte, seed): an analyte has one value in an episode, whichever exam reports it. Whether a result was recorded or
  synthesised is reported to the environment (for ``info``), never written into the result text.
* ``LLMWorldModel``: DiagGym's completion prompt over any ``LLMClient`` (e.g. a vLLM server with the published
  DiagGym weights), or a chat variant for chat-only models.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from clinical_gym.cases import Case, LabValue, TestResult
from clinical_gym.cases.disease_table import Disease, disease_for
from clinical_gym.cases.formatting import format_test_result, format_vitals
from clinical_gym.llm.base import LLMClient
from clinical_gym.domains.workup.catalogue import Component, Exam, load_catalogue
from clinical_gym.domains.workup.paediatric_ranges import paediatric_reference
from clinical_gym.domains.workup.record import RecordIndex

ResultSource = Literal["record", "record+synthesised", "synthesised", "llm", "unknown"]


@dataclass(frozen=True)
class ExamResult:
    """What the world model returned for one order. ``exam`` is the catalogue name (None when unrecognised)."""

    text: str
    source: ResultSource
    exam: str | None = None
    suggestions: tuple[str, ...] = ()


class WorldModel(Protocol):
    def reset(self, case: Case, seed: int) -> None: ...

    def result(self, exam_name: str, history: list[tuple[str, str]]) -> ExamResult: ...


def _stable_seed(*parts: object) -> int:
    return zlib.crc32("\x1f".join(str(p) for p in parts).encode())


def _synthesised(case: Case, exam: Exam, disease: Disease | None, seed: int, recorded: dict[str, LabValue] | None = None) -> str:
    """A plausible result: normal values (a child's reference intervals where they differ from the adult ones:
    ``paediatric_ranges``), moved into the disease's typical range where the table says so; the components in
    ``recorded`` keep their recorded values. Each analyte is drawn from its own seed (episode seed, case, analyte),
    so it has one value whichever exam reports it (the potassium of a BMP, of a CMP and of a potassium order)."""
    disease_text = next((r.text for r in (disease.results if disease else ()) if _same_exam(r.test, exam)), None)
    if exam.exam_system == "vitals" and case.vitals:
        return format_vitals(case.vitals)
    if not exam.components:
        return disease_text or exam.normal_text
    values = [recorded[c.name] if recorded and c.name in recorded else _analyte(case, c, disease, seed) for c in exam.components]
    text = "" if exam.kind in ("lab_panel", "lab_test") else (disease_text or exam.normal_text)
    return format_test_result(TestResult(name=exam.name, category=exam.test_category(), text=text, values=tuple(values)))


def _analyte(case: Case, component: Component, disease: Disease | None, seed: int) -> LabValue:
    """One synthesised analyte, from its own seed: normal for the patient's age and sex, or in the disease's typical
    range (with the table's frequency) where the table shifts it, whichever test the table names it under."""
    d = case.demographics
    rng = np.random.default_rng(_stable_seed(seed, case.id, component.name))
    value = component.normal_value(d.sex, rng, paediatric_reference(component.name, d.sex, d.age_in_days))
    shift = next((s for s in (disease.labs if disease else ()) if s.component.lower() == component.name.lower()), None)
    if shift is None or not component.numeric or rng.random() >= shift.frequency:
        return value
    number = round(float(rng.uniform(shift.typical_low, shift.typical_high)), 2)
    flag = "high" if number > shift.ref_high else "low" if number < shift.ref_low else "normal"
    return LabValue(name=component.name, value=number, unit=value.unit, ref_low=value.ref_low, ref_high=value.ref_high, flag=flag)


def _same_exam(name: str, exam: Exam) -> bool:
    resolved = load_catalogue().resolve(name)
    return resolved is not None and resolved.name == exam.name


@dataclass
class RecordWorldModel:
    """Record-backed world model (the default): recorded results first, synthesised ones otherwise."""

    seed: int = 0
    case: Case | None = None
    _disease: Disease | None = field(default=None, repr=False)
    _record: RecordIndex | None = field(default=None, repr=False)

    def reset(self, case: Case, seed: int) -> None:
        self.case, self.seed = case, seed
        self._disease = disease_for(case.diagnosis)
        self._record = RecordIndex(case, load_catalogue())

    def result(self, exam_name: str, history: list[tuple[str, str]] | None = None) -> ExamResult:
        catalogue = load_catalogue()
        hit = self._record.find(exam_name)
        if hit is not None and hit.complete:
            return ExamResult(hit.text, "record", hit.label)
        found = catalogue.lookup(exam_name)
        exam = hit.exam if hit is not None else (found.exam if found is not None else None)
        if exam is None:
            suggestions = [*self._record.suggest(exam_name), *catalogue.suggest(exam_name, k=3)]
            return ExamResult("", "unknown", None, tuple(dict.fromkeys(suggestions))[:3])
        if hit is None and found.component is not None:  # "creatinine": that analyte, not its panel
            value = _analyte(self.case, found.component, self._disease, self.seed)
            text = format_test_result(TestResult(name=found.component.name, category=exam.test_category(), values=(value,)))
            return ExamResult(text, "synthesised", exam.name)
        text = _synthesised(self.case, exam, self._disease, self.seed, hit.components if hit is not None else None)
        return ExamResult(text, "record+synthesised" if hit is not None else "synthesised", exam.name)


# -- LLM world model (DiagGym prompt) -------------------------------------------------------------------------
DIAGGYM_STOP = ["<SEP>", "<endoftext>"]
CHAT_SYSTEM_PROMPT = ("You simulate a hospital's electronic health record. Given a patient's profile and the results "
                      "so far, write the result of the requested examination exactly as it would appear in the record. "
                      "Reply with the result only.")


def patient_profile(case: Case) -> str:
    """DiagGym's background profile B: demographics, history and the final diagnosis (hidden from the agent)."""
    d = case.demographics
    by = lambda *cats: " ".join(f.text for f in case.history if f.category in cats) or "None"  # noqa: E731
    return "\n".join([
        f"Sex: {'M' if d.sex == 'male' else 'F'}", f"Age: {d.age if d.age or d.age_days is None else d.age_text}",
        f"Allergies: {', '.join(case.allergies) or by('allergies')}",
        f"Chief Complaint: {case.chief_complaint}",
        f"History of Present Illness: {by('hpi', 'ros')}",
        f"Past Medical History: {', '.join(case.past_history) or by('past_history', 'surgical_history')}",
        f"Social History: {', '.join(case.social_history) or by('social')}",
        f"Family History: {', '.join(case.family_history) or by('family')}",
        f"Final diagnosis: {case.diagnosis.name}",
    ])


def diaggym_prompt(context: str, history: list[tuple[str, str]], exam_name: str) -> str:
    """The DiagGym world-model completion prompt, exactly as the released code builds it."""
    prompt = context + "\nThe following summarizes the results from the patient's medical examination:\n"
    past = [f"Exam name:\n{name}\nExam results:\n{result}" for name, result in history]
    prompt += "<SEP>".join(past)
    prompt += f"<SEP>Exam name:\n{exam_name}\nExam results:\n"
    return prompt


@dataclass
class LLMWorldModel:
    """A world model played by an LLM: ``mode="completion"`` (DiagGym weights) or ``"chat"``."""

    client: LLMClient
    mode: Literal["completion", "chat"] = "completion"
    max_tokens: int = 512
    temperature: float = 1.0
    case: Case | None = None

    def reset(self, case: Case, seed: int) -> None:
        self.case, self._seed, self._context = case, seed, patient_profile(case)

    def result(self, exam_name: str, history: list[tuple[str, str]]) -> ExamResult:
        """Ask the LLM; raises ``LLMError`` when the backend fails for good (the env ends the episode)."""
        prompt = diaggym_prompt(self._context, history, exam_name)
        seed = _stable_seed(self._seed, len(history), exam_name)
        if self.mode == "completion":
            text = self.client.complete(prompt, max_tokens=self.max_tokens, temperature=self.temperature,
                                        stop=DIAGGYM_STOP, seed=seed)
        else:
            messages = [{"role": "system", "content": CHAT_SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
            text = self.client.chat(messages, max_tokens=self.max_tokens, temperature=self.temperature,
                                    stop=DIAGGYM_STOP, seed=seed)
        exam = load_catalogue().resolve(exam_name)
        return ExamResult(text.split("<SEP>")[0].strip() or "No result was returned.", "llm", exam.name if exam else exam_name)
