"""ClinicalInquiry-v1: a doctor agent interviews a simulated patient, then gives a diagnosis and recommendation."""

from __future__ import annotations

import logging
from typing import Any, Sequence

from clinical_gym.cases import Case
from clinical_gym.cases.schema import normalize
from clinical_gym.env import ClinicalEnv
from clinical_gym.experience.injector import ExperienceInjector, ExperienceSource, InjectionConfig
from clinical_gym.llm import SPECS, llm_setting
from clinical_gym.llm.base import LLMClient, LLMError
from clinical_gym.parsing import DoctorAction, parse_doctor_action
from clinical_gym.domains.inquiry.patient import Patient, PatientReply, RuleBasedPatient
from clinical_gym.domains.inquiry.patient_llm import PATIENT_PROMPTS, LLMPatient
from clinical_gym.domains.inquiry.presets import TurnContext, final_outcome, make_preset
from clinical_gym.domains.inquiry.prompts import DOCTOR_PROMPTS, FORMAT_HINT, TESTS_ADDENDUM
from clinical_gym.domains.workup.catalogue import load_catalogue

logger = logging.getLogger(__name__)
DYNAMIC_BUDGET = (2, 10)
PATIENT_FAILED = "The consultation ended because the patient simulator failed."
JUDGE_FAILED = "The consultation ended because the reward judge failed."


class ClinicalInquiryEnv(ClinicalEnv):
    """
    ## Description
    A doctor agent interviews a simulated patient who reveals facts only when asked, then gives a diagnosis and a
    recommendation (DoctorAgent-RL, Doctor-R1). The default patient is rule-based: offline, deterministic, fast.

    ## Action Space
    ``UnicodeText(10000)``: the doctor's full reply, ``<think>…</think><answer>Question: …</answer>`` or
    ``<answer>Diagnosis: …\\nRecommendation: …</answer>`` (also ``Test: …`` when ``allow_tests=True``).

    ## Observation Space
    ``UnicodeText(100000)``: the new text this step: the patient's reply (or the test result, or what was wrong
    with the action) followed by ``Turn k/N.``. The whole conversation is ``env.unwrapped.messages``.

    ## Starting State
    A case drawn with ``self.np_random`` (or ``options={"case_id": ...}`` / ``{"case": Case}``). The first
    observation is ``Patient's description: <self-report> (<sex>, <age> years old)`` (a patient under one year: "3 weeks old", "5 months old").

    ## Rewards
    Per the preset (``reward=``): ``"doctoragent_rl"`` (default) or ``"doctor_r1"``; see ``clinical_gym.domains.inquiry.presets``.
    The parts of each step's reward are in ``info["reward_components"]``.

    ## Episode End
    Termination: the doctor gives a diagnosis; the turn budget runs out without one (over-budget penalty).
    Truncation: only when a simulated actor fails for good (the LLM patient or the LLM judge, after its retries):
    reward 0, ``info["error"]`` says what failed, no ``outcome``, and a warning is logged (logger
    ``clinical_gym``), so that a training loop never takes an outage for a failed consultation. The turn budget
    is part of the task, so running out of it terminates.

    ## Information
    reset: ``system_prompt``, ``turn_budget``, ``reward_preset``, ``specialty``. Every step: ``turn``,
    ``turn_budget``, ``reward_components``, ``reply_kind``, ``facts_revealed``, and ``parse_error`` when the
    action could not be parsed. Terminal step: ``outcome`` (result correct / partially / wrong, the parsed
    diagnosis and recommendation, word F1s, the gold answer, ``success``: the diagnosis is correct) and
    ``case_id``. Nothing about the
    diagnosis appears in an observation or in info before the episode ends.

    ## Arguments
    ``gym.make("ClinicalInquiry-v1", cases="library", split=None | "train" | "test" | "all",
    patient="rules" | "rules:unsure" | "openai:MODEL" | "transformers:PATH" | Patient | LLMClient, reward="doctoragent_rl",
    patient_prompt="clinical_gym" | "doctoragent_rl" (the LLM patient's prompt: ours, or DoctorAgent-RL's Fig. 13),
    doctor_prompt="doctoragent_rl" | "doctor_r1" (the doctor's system prompt: DoctorAgent-RL's Diagnosis and
    Recommendation, or Doctor-R1's single Recommendation holding the diagnosis; both are always parsed),
    reward_config=None, judge=None | "openai:MODEL" | "transformers:PATH" | LLMClient (``doctor_r1`` only),
    turn_budget=10 | "dynamic" | (lo, hi),
    allow_tests=False, force_final_diagnosis=False, experience=None, experience_config=None, render_mode=None)``;
    ``experience`` (an ``ExperienceStore``, a store path or a ``Retriever``) injects retrieved high-reward past turns
    into the opening observation (or every turn, or the system prompt: ``experience_config``), Doctor-R1 style.

    ## Version History
    * v0: initial release.
    """

    def __init__(self, cases: str | Sequence[Case] | None = None, split: str | None = None, *,
                 patient: str | Patient | LLMClient = "rules", patient_prompt: str = "clinical_gym",
                 doctor_prompt: str = "doctoragent_rl", reward: str = "doctoragent_rl",
                 reward_config: dict[str, Any] | None = None, judge: str | LLMClient | None = None,
                 turn_budget: int | str | tuple[int, int] = 10, allow_tests: bool = False,
                 force_final_diagnosis: bool = False, experience: ExperienceSource | None = None,
                 experience_config: InjectionConfig | dict[str, Any] | None = None, render_mode: str | None = None) -> None:
        super().__init__(cases, split, render_mode=render_mode)
        if isinstance(experience_config, dict):
            experience_config = InjectionConfig(**experience_config)
        self.experience = None if experience is None else ExperienceInjector(experience, experience_config)
        self.patient = _make_patient(patient, patient_prompt)
        if doctor_prompt not in DOCTOR_PROMPTS:
            raise ValueError(f"doctor_prompt must be one of {', '.join(DOCTOR_PROMPTS)}, got {doctor_prompt!r}")
        self.doctor_prompt = DOCTOR_PROMPTS[doctor_prompt]
        judge = llm_setting(judge, "judge")
        if judge is not None and reward != "doctor_r1":
            raise ValueError(f"judge is used only by reward='doctor_r1' (Doctor-R1's turn judge); reward={reward!r} "
                             "scores by rules: drop judge or choose reward='doctor_r1'")
        self.preset = make_preset(reward, reward_config, judge)
        self._budget_range = _budget_range(turn_budget)
        self.allow_tests = allow_tests
        self.force_final_diagnosis = force_final_diagnosis

    # -- episode ------------------------------------------------------------------------------------------
    def _begin(self, case: Case) -> tuple[str, dict[str, Any]]:
        lo, hi = self._budget_range
        self.turn_budget = lo if lo == hi else int(self.np_random.integers(lo, hi + 1))
        self.turn = 0
        self._asked_tests: set[str] = set()
        self._screened: set[str] = set()
        self._final_prompted = False
        self.patient.reset(case, self.np_random)
        volunteered = " ".join(f.text for f in case.history if f.volunteered)
        d = case.demographics
        obs = f"Patient's description: {case.self_report}. {volunteered} ({d.sex}, {d.age_text})".replace("..", ".")
        system = self.doctor_prompt.format(budget=self.turn_budget, tests=TESTS_ADDENDUM if self.allow_tests else "")
        info = {"system_prompt": system, "turn_budget": self.turn_budget, "reward_preset": self.preset.name,
                "specialty": case.specialty}
        if self.experience is not None:
            obs, info = self.experience.on_reset(obs, info, case_id=case.id)
        return obs, info

    def _after_step(self, action: str, obs: str, reward: float, done: bool, info: dict[str, Any]) -> str:
        if self.experience is None:
            return obs
        return self.experience.on_step(action, obs, reward, done, info)

    def _act(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        parsed = parse_doctor_action(action, strict=self.preset.strict_format, allow_tests=self.allow_tests)
        ctx = TurnContext(case=self.case, messages=self.messages, action_text=action, screened=self._screened)
        if parsed.kind == "diagnosis":
            return self._finish(parsed, ctx)
        if parsed.kind == "invalid":
            return self._turn_end(f"Your format is invalid: {parsed.error}. {FORMAT_HINT}", self.preset.invalid_format(),
                                  {"parse_error": parsed.error, "reply_kind": "invalid"})
        if self._final_prompted:
            return self._over_budget({"reply_kind": "no_diagnosis"})
        if parsed.kind == "test":
            return self._order_test(parsed, ctx)
        if self.preset.one_question_rule and parsed.question.count("?") != 1:
            return self._turn_end("You can only ask one question at a time.", self.preset.multiple_questions(),
                                  {"reply_kind": "multiple_questions"})
        known = set(self._revealed())
        try:
            reply = self.patient.reply(parsed.question, self.messages)
        except LLMError as e:
            return self._error(str(e))
        ctx.question, ctx.reply = parsed.question, reply
        ctx.new_facts = tuple(f for f in reply.facts if f not in known)
        extra = {"reply_kind": reply.kind}
        if isinstance(self.patient, LLMPatient) and self.patient.last_leak:
            extra["patient_leak_replaced"] = True
        try:
            components = self.preset.question(ctx)
        except LLMError as e:
            return self._error(str(e), JUDGE_FAILED)
        return self._turn_end(reply.text, components, extra)

    # -- pieces -------------------------------------------------------------------------------------------
    def _turn_end(self, text: str, components: dict[str, float], extra: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Close a non-final turn: add the budget line, or end the episode when the budget is spent."""
        if self.turn >= self.turn_budget:
            if self.force_final_diagnosis and not self._final_prompted:
                self._final_prompted = True
                text = f"{text}\nYou have used all your questions. Give your final diagnosis and recommendation now."
            else:
                obs, reward, term, trunc, info = self._over_budget(extra, components)
                return f"{text}\n{obs}", reward, term, trunc, info
        else:
            text = f"{text}\nTurn {self.turn}/{self.turn_budget}."
        info = self._info(components, **extra)
        return text, sum(components.values()), False, False, info

    def _over_budget(self, extra: dict[str, Any], components: dict[str, float] | None = None) -> tuple[str, float, bool, bool, dict[str, Any]]:
        components = {**(components or {}), **self.preset.over_budget()}
        outcome = {"result": "wrong", "reason": "turn budget exhausted without a diagnosis", "success": False,
                   **self._gold()}
        info = self._info(components, outcome=outcome, case_id=self.case.id, **extra)
        return "The consultation is over: no diagnosis was given within the turn budget.", sum(components.values()), True, False, info

    def _finish(self, parsed: DoctorAction, ctx: TurnContext) -> tuple[str, float, bool, bool, dict[str, Any]]:
        outcome = final_outcome(self.case, parsed.diagnosis, parsed.recommendation)
        try:
            components = self.preset.final(ctx, outcome)
        except LLMError as e:
            return self._error(str(e), JUDGE_FAILED)
        outcome["turns"] = self.turn
        outcome["facts_revealed"] = len(self._revealed())
        info = self._info(components, outcome=outcome, case_id=self.case.id, reply_kind="diagnosis")
        obs = (f"The consultation is over. Your diagnosis was {outcome['result']} "
               f"(the patient had {self.case.diagnosis.name}).")
        return obs, sum(components.values()), True, False, info

    def _order_test(self, parsed: DoctorAction, ctx: TurnContext) -> tuple[str, float, bool, bool, dict[str, Any]]:
        key = normalize(parsed.test)
        if key in self._asked_tests:
            reply = PatientReply("You have already ordered this.", "repeated")
        else:
            self._asked_tests.add(key)
            result = find_exam_result(self.case, parsed.test)
            reply = (PatientReply(result, "answered") if result
                     else PatientReply(f"The result of '{parsed.test}' is not available in this consultation.", "unknown"))
        ctx.question, ctx.reply = parsed.test, reply
        return self._turn_end(reply.text, self.preset.question(ctx), {"reply_kind": reply.kind})

    def _error(self, message: str, observation: str = PATIENT_FAILED) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """End the episode because a simulated actor failed: truncated (never terminated), ``info["error"]``."""
        logger.warning("%s case %s: %s %s", type(self).__name__, self.case.id, observation, message)
        info = self._info({}, error=message, case_id=self.case.id, reply_kind="error")
        return observation, 0.0, False, True, info

    def _reject(self, problem: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        return self._turn_end(f"Your format is invalid: {problem}. {FORMAT_HINT}", self.preset.invalid_format(),
                              {"parse_error": problem, "reply_kind": "invalid"})

    def _info(self, components: dict[str, float], **extra: Any) -> dict[str, Any]:
        return {"turn": self.turn, "turn_budget": self.turn_budget, "reward_components": dict(components),
                "facts_revealed": len(self._revealed()), **extra}

    def _revealed(self) -> list[str]:
        return list(getattr(self.patient, "revealed", []))

    def _gold(self) -> dict[str, Any]:
        return {"gold_diagnosis": self.case.diagnosis.name, "gold_icd10": self.case.diagnosis.icd10}


def find_exam_result(case: Case, request: str) -> str | None:
    """The case's recorded result for a requested examination or test, found the way DiagnosticWorkup's world model
    finds it (``clinical_gym.domains.workup.record``: recorded, nested and group names, catalogue aliases,
    components, physical-exam sections, vitals), as "<name>:\n<result>"; None when the record holds nothing."""
    from clinical_gym.domains.workup.catalogue import load_catalogue
    from clinical_gym.domains.workup.record import RecordIndex

    hit = RecordIndex(case, load_catalogue()).find(request)
    if hit is None or not hit.complete:
        return None
    return f"{hit.label}:\n{hit.text}"


def _make_patient(patient: str | Patient | LLMClient, prompt: str = "clinical_gym") -> Patient:
    if prompt not in PATIENT_PROMPTS:
        raise ValueError(f"patient_prompt must be one of {', '.join(PATIENT_PROMPTS)}, got {prompt!r}")
    if patient == "rules":
        return RuleBasedPatient()
    if isinstance(patient, str) and patient.startswith("rules:"):  # "rules:unsure": what it says to unrecorded events
        return RuleBasedPatient(unknown_answer=patient.partition(":")[2])
    if not isinstance(patient, str) and hasattr(patient, "reply") and hasattr(patient, "reset"):
        return patient
    client = llm_setting(patient, "patient", also="'rules', a Patient, ")
    if client is None:
        raise ValueError(f"patient must not be None; use 'rules', a Patient, {SPECS}")
    return LLMPatient(client, prompt=prompt)


def _budget_range(turn_budget: int | str | tuple[int, int]) -> tuple[int, int]:
    if turn_budget == "dynamic":
        return DYNAMIC_BUDGET
    if isinstance(turn_budget, tuple) and len(turn_budget) == 2 and 1 <= turn_budget[0] <= turn_budget[1]:
        return int(turn_budget[0]), int(turn_budget[1])
    if isinstance(turn_budget, int) and turn_budget >= 1:
        return turn_budget, turn_budget
    raise ValueError(f"turn_budget must be a positive int, 'dynamic' or a (low, high) pair, got {turn_budget!r}")
