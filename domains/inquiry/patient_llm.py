"""The LLM patient backend: an LLM plays the patient from a hidden profile (any ``LLMClient``).

A question is "already asked" when it repeats an earlier question's words (the LLM's facts are not known, so
distinct questions on one topic are always answered), the doctor's ``<think>`` never reaches the patient (it sees
only the parsed question), and a reply that names the diagnosis is replaced and flagged.

Two prompts: ``prompt="clinical_gym"`` (the default: a chat with a hidden profile and a persona, one or two
sentences) and ``prompt="doctoragent_rl"`` (DoctorAgent-RL's, Fig. 13: one fresh prompt per question with the
enhanced description and the questions so far, one sentence, the paper's refusal and repeat sentences, the reply
read from ``<answer>``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from clinical_gym.cases import Case
from clinical_gym.cases.leakage import leaked_terms
from clinical_gym.llm.base import LLMClient
from clinical_gym.domains.inquiry.patient import NO_DIAGNOSIS, REFUSE, REPEATED, PatientReply
from clinical_gym.domains.inquiry.prompts import (doctoragent_rl_patient_prompt, enhanced_description,
                                                  patient_system_prompt)
from clinical_gym.domains.inquiry.questions import analyze_question

PATIENT_PROMPTS = ("clinical_gym", "doctoragent_rl")


@dataclass
class LLMPatient:
    """A patient played by ``client``. ``leaks_replaced`` counts replies replaced because they named the diagnosis."""

    client: LLMClient
    max_tokens: int = 128
    temperature: float = 0.7
    seed: int | None = None
    prompt: str = "clinical_gym"
    case: Case | None = None
    asked: set = field(default_factory=set)
    last_leak: bool = False

    def __post_init__(self) -> None:
        if self.prompt not in PATIENT_PROMPTS:
            raise ValueError(f"patient prompt must be one of {', '.join(PATIENT_PROMPTS)}, got {self.prompt!r}")

    def reset(self, case: Case, rng: np.random.Generator) -> None:
        self.case = case
        self._questions: list[str] = []
        self.asked = set()
        self._system = patient_system_prompt(case)
        self._dialogue: list[dict[str, str]] = []
        self._seed = int(rng.integers(2**31)) if self.seed is None else self.seed

    def reply(self, question: str, history: list[dict[str, str]] | None = None) -> PatientReply:
        """Ask the LLM; raises ``LLMError`` when the backend fails for good (the env ends the episode)."""
        key = analyze_question(question).words or question.strip().lower()
        if key in self.asked:
            return PatientReply(REPEATED, "repeated")
        self.asked.add(key)
        if self.prompt == "doctoragent_rl":
            messages = [{"role": "user", "content": doctoragent_rl_patient_prompt(
                enhanced_description(self.case), self._questions, question)}]
        else:
            messages = [{"role": "system", "content": self._system}, *self._dialogue,
                        {"role": "user", "content": question}]
        text = self.client.chat(messages, max_tokens=self.max_tokens, temperature=self.temperature,
                                seed=self._seed + len(self._dialogue)).strip()
        self._questions.append(question)
        if self.prompt == "doctoragent_rl":
            text = _answer_part(text)
            if text.startswith(REPEATED[:25]):
                self.last_leak = False
                self._dialogue += [{"role": "user", "content": question}, {"role": "assistant", "content": text}]
                return PatientReply(REPEATED, "repeated")
        self.last_leak = bool(leaked_terms(text, self.case.diagnosis))
        if self.last_leak:
            text = NO_DIAGNOSIS
        self._dialogue += [{"role": "user", "content": question}, {"role": "assistant", "content": text}]
        kind = "refused" if (not text or text.startswith(REFUSE[:20]) or self.last_leak) else "answered"
        return PatientReply(text or REFUSE, kind)


def _answer_part(reply: str) -> str:
    """The ``<answer>`` part of a reply in DoctorAgent-RL's format (the reply without ``<think>`` when untagged)."""
    found = re.search(r"<answer>(.*?)(?:</answer>|$)", reply, flags=re.I | re.S)
    text = found.group(1) if found else re.sub(r"<think>.*?(?:</think>|$)", " ", reply, flags=re.I | re.S)
    return " ".join(text.split())
