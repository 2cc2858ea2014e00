"""Reward components: text and diagnosis matching, the DoctorAgent-RL and Doctor-R1 rewards, and LLM judges.

Each component is a small function or frozen config; environments compose them into presets.
"""

from clinical_gym.rewards.diagnosis_match import OUTCOME_SCORES, DiagnosisMatch, Outcome, match_diagnosis, split_answer
from clinical_gym.rewards.doctor_r1 import (
    DIMENSIONS,
    DoctorR1Penalties,
    outcome_reward,
    process_reward,
    validate_scores,
)
from clinical_gym.rewards.doctoragent_rl import DoctorAgentRLRewards, accuracy_reward
from clinical_gym.rewards.icd10_lookup import icd10_category, resolve_icd10
from clinical_gym.rewards.llm_judge import (
    PERCENT_PER_POINT,
    LLMDiagnosisJudge,
    LLMOutcomeJudge,
    LLMTurnJudge,
    parse_semantic_score,
    parse_turn_scores,
)
from clinical_gym.rewards.text_match import word_f1

__all__ = [
    "DIMENSIONS", "OUTCOME_SCORES", "PERCENT_PER_POINT",
    "DiagnosisMatch", "DoctorAgentRLRewards", "DoctorR1Penalties", "LLMDiagnosisJudge", "LLMOutcomeJudge",
    "LLMTurnJudge", "Outcome",
    "accuracy_reward", "icd10_category", "match_diagnosis", "outcome_reward", "parse_semantic_score",
    "parse_turn_scores", "process_reward", "resolve_icd10", "split_answer", "validate_scores", "word_f1",
]
