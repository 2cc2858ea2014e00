"""ClinicalInquiry reward presets: DoctorAgent-RL (the default) and Doctor-R1.

A preset turns what happened in a turn into named reward components. The environment sums the components
of a step into its reward and reports them in ``info["reward_components"]``.

* ``doctoragent_rl``: seed digests §1 exactly: -2 bad format, -2 more or fewer than one "?", -2 repeated
  question, +1 answered / -2 refused or unknown (paper Eq. 3), -5 budget exhausted, and at the end
  R_acc = 5 * (F1_diagnosis + F1_recommendation).
* ``doctor_r1``: seed digests §2: a per-turn process reward in [-1, 1] and the 1 / 0.5 / 0 outcome reward;
  -0.2 bad format, -0.2 repeated question, -0.3 over the turn limit. With an LLM judge the process reward is
  the 8-dimension weighted score with the safety/reasoning veto. With the rule judge (no LLM) it covers only
  what rules can score honestly: new information gathered (+1 new fact, +0.5 pertinent negative, 0 nothing
  new, -1 refused or unanswerable) and red-flag screening (+1 for the first question about a red-flag
  symptom), mixed as clip(0.6 * information + 0.4 * screening, -1, 1). Safety, empathy, reasoning and
  accuracy are not scored by rules. The outcome is graded by the judge when there is one (Doctor-R1's reward model
  grades correct / partially / wrong; ``outcome["rule_result"]`` keeps the rule match), else by the rule match.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from clinical_gym.cases import Case
from clinical_gym.llm.base import LLMClient
from clinical_gym.rewards import (
    DoctorAgentRLRewards, DoctorR1Penalties, LLMOutcomeJudge, LLMTurnJudge, accuracy_reward, match_diagnosis,
    outcome_reward, process_reward, word_f1,
)
from clinical_gym.domains.inquiry.patient import PatientReply
from clinical_gym.domains.inquiry.questions import analyze_question

RED_FLAG_SYMPTOMS = frozenset({
    "chest_pain", "shortness_of_breath", "syncope", "hemoptysis", "hematemesis", "blood_in_stool", "weight_loss", "night_sweats",
    "focal_weakness", "speech_difficulty", "facial_droop", "confusion", "neck_stiffness", "suicidal_thoughts", "fever",
    "vision_changes", "seizure", "jaundice", "hematuria", "vaginal_bleeding",
})


@dataclass
class TurnContext:
    """What the preset may look at for one doctor turn."""

    case: Case
    messages: list[dict[str, str]]
    action_text: str
    question: str = ""
    reply: PatientReply | None = None
    new_facts: tuple[str, ...] = ()
    screened: set[str] = field(default_factory=set)


def final_outcome(case: Case, diagnosis: str, recommendation: str) -> dict[str, Any]:
    """The terminal outcome: diagnosis match (correct/partially/wrong), ``success`` (the diagnosis is correct, whatever
    the preset; the reward is the preset's) and word F1 of diagnosis and recommendation."""
    match = match_diagnosis(diagnosis, case.diagnosis)
    return {
        "result": match.outcome,
        "success": match.outcome == "correct",
        "diagnosis": diagnosis,
        "recommendation": recommendation,
        "match_reason": match.reason,
        "diagnosis_f1": word_f1(diagnosis, case.diagnosis.name),
        "recommendation_f1": word_f1(recommendation, case.recommendation) if recommendation else 0.0,
        "gold_diagnosis": case.diagnosis.name,
        "gold_icd10": case.diagnosis.icd10,
        "gold_recommendation": case.recommendation,
    }


@dataclass
class DoctorAgentRLPreset:
    """DoctorAgent-RL's consultation evaluator (rules; no LLM)."""

    values: DoctorAgentRLRewards = DoctorAgentRLRewards()
    name: str = "doctoragent_rl"
    strict_format: bool = True
    one_question_rule: bool = True

    def invalid_format(self) -> dict[str, float]:
        return {"format": self.values.format_invalid}

    def multiple_questions(self) -> dict[str, float]:
        return {"one_question": self.values.multiple_questions}

    def over_budget(self) -> dict[str, float]:
        return {"over_budget": self.values.over_budget}

    def question(self, ctx: TurnContext) -> dict[str, float]:
        kind = ctx.reply.kind
        if kind == "repeated":
            return {"repeated": self.values.repeated_question}
        return {"information": self.values.answered if kind in ("answered", "denied") else self.values.refused}

    def final(self, ctx: TurnContext, outcome: dict[str, Any]) -> dict[str, float]:
        acc = accuracy_reward(outcome["diagnosis"], outcome["recommendation"], ctx.case.diagnosis.name,
                              ctx.case.recommendation, scale=self.values.accuracy_scale)
        return {"accuracy": acc}


@dataclass
class DoctorR1Preset:
    """Doctor-R1's two-tier reward: per-turn process reward (LLM or rule judge) and the final outcome reward."""

    penalties: DoctorR1Penalties = DoctorR1Penalties()
    judge: LLMClient | None = None
    name: str = "doctor_r1"
    strict_format: bool = True
    one_question_rule: bool = False

    def __post_init__(self) -> None:
        self._llm_judge = LLMTurnJudge(self.judge) if self.judge is not None else None
        self._outcome_judge = LLMOutcomeJudge(self.judge) if self.judge is not None else None

    def invalid_format(self) -> dict[str, float]:
        return {"format": self.penalties.format_invalid}

    def multiple_questions(self) -> dict[str, float]:
        return {"format": self.penalties.format_invalid}

    def over_budget(self) -> dict[str, float]:
        return {"over_max_turns": self.penalties.over_max_turns}

    def question(self, ctx: TurnContext) -> dict[str, float]:
        if ctx.reply.kind == "repeated":
            return {"repeated": self.penalties.repeated_question}
        return {"process": self._process(ctx)}

    def final(self, ctx: TurnContext, outcome: dict[str, Any]) -> dict[str, float]:
        if self._outcome_judge is not None:  # Doctor-R1: the reward model grades the outcome (updates ``outcome``)
            grade = self._outcome_judge.grade(outcome["diagnosis"], outcome["recommendation"], case_summary(ctx.case))
            outcome.update(rule_result=outcome["result"], result=grade, success=grade == "correct",
                           match_reason="graded by the LLM judge")
        parts = {"outcome": outcome_reward(outcome["result"])}
        if self._llm_judge is not None:
            parts["process"] = self._process(ctx)
        return parts

    def _process(self, ctx: TurnContext) -> float:
        if self._llm_judge is not None:
            scores = self._llm_judge.score_turn(ctx.messages, ctx.action_text, case_summary(ctx.case))
            return process_reward(scores)
        return rule_process_reward(ctx)


def rule_process_reward(ctx: TurnContext) -> float:
    """The rule judge's process reward for a question turn (see the module docstring)."""
    kind = ctx.reply.kind
    if kind in ("refused", "unknown"):
        info = -1.0
    elif ctx.new_facts:
        info = 1.0 if any(ctx.case.fact(f).present for f in ctx.new_facts) else 0.5
    else:
        info = 0.0
    flags = (analyze_question(ctx.question).explicit_symptoms & RED_FLAG_SYMPTOMS) - ctx.screened
    ctx.screened.update(flags)
    screening = 1.0 if flags else 0.0
    return max(-1.0, min(1.0, 0.6 * info + 0.4 * screening))


def case_summary(case: Case) -> str:
    """Ground truth for an LLM judge (never shown to the doctor)."""
    return (f"Diagnosis: {case.diagnosis.name} ({case.diagnosis.icd10}). Differential: {', '.join(case.differential)}. "
            f"Recommendation: {case.recommendation}. Key facts: " + " ".join(f.text for f in case.history))


PRESETS = {"doctoragent_rl": DoctorAgentRLPreset, "doctor_r1": DoctorR1Preset}


def make_preset(name: str, config: dict[str, Any] | None = None, judge: LLMClient | None = None):
    """Build a preset by name; ``config`` overrides its values (e.g. ``{"refused": -1.0}``) or flags."""
    if name not in PRESETS:
        raise ValueError(f"unknown reward preset {name!r}; choose one of {', '.join(PRESETS)}")
    config = dict(config or {})
    if name == "doctoragent_rl":
        preset = DoctorAgentRLPreset()
        values_field = "values"
    else:
        preset = DoctorR1Preset(judge=judge)
        values_field = "penalties"
    values = getattr(preset, values_field)
    value_names = {f.name for f in fields(values)}
    flag_names = {"strict_format", "one_question_rule"}
    unknown = set(config) - value_names - flag_names
    if unknown:
        raise ValueError(f"unknown reward_config keys {sorted(unknown)} for preset {name!r}; "
                         f"known: {sorted(value_names | flag_names)}")
    values = replace(values, **{k: v for k, v in config.items() if k in value_names})
    flags = {k: v for k, v in config.items() if k in flag_names}
    return replace(preset, **{values_field: values}, **flags)
