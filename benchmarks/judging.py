"""LLM-judge scores of ClinicalInquiry episodes (DoctorAgent-RL's evaluation): the diagnosis and the recommendation
each rated 0-5 against the gold by ``clinical_gym.rewards.LLMDiagnosisJudge``, reported x20 on a 0-100 scale. An
episode with nothing to rate (no diagnosis given) scores 0 without a call."""

from __future__ import annotations

from clinical_gym.benchmarks.records import EpisodeRecord
from clinical_gym.llm.base import LLMError
from clinical_gym.rewards import PERCENT_PER_POINT, LLMDiagnosisJudge


def judge_episode(judge: LLMDiagnosisJudge, record: EpisodeRecord) -> EpisodeRecord:
    """The record with ``judge`` scores, or with ``judge_error`` when the judge fails (its other metrics stand)."""
    if record.family != "inquiry" or record.status == "error":
        return record
    outcome = record.outcome or {}
    scores: dict[str, float] = {}
    try:
        for part, gold in (("diagnosis", "gold_diagnosis"), ("recommendation", "gold_recommendation")):
            answer, reference = outcome.get(part) or "", outcome.get(gold) or ""
            scores[part] = float(judge.score(answer, reference) * PERCENT_PER_POINT) if answer and reference else 0.0
    except LLMError as error:
        return record.model_copy(update={"judge_error": str(error)})
    return record.model_copy(update={"judge": scores})
