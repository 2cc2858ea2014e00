"""DoctorAgent-RL consultation evaluator rewards (seeds/doctoragent-rl.txt, Eqs. 2-7).

Total return R = R_accuracy + sum_t R_information^t + sum_t R_compliance^t (Eq. 7).
"""

from __future__ import annotations

from dataclasses import dataclass

from clinical_gym.rewards.text_match import word_f1


@dataclass(frozen=True)
class DoctorAgentRLRewards:
    """Every per-step reward value of the DoctorAgent-RL consultation evaluator; paper values by default.

    Where the released code differs from the paper, the field says so; set the field to reproduce the code.
    """

    format_invalid: float = -2.0
    """R_compliance, "Question Format Violation" (Eq. 5): no single ``<answer>`` block, or text after it."""
    over_budget: float = -5.0
    """R_compliance, "No Diagnosis within Allowed Turns" (Eq. 5); the episode ends."""
    multiple_questions: float = -2.0
    """R_compliance, "Question Format Violation" (Eq. 5): a question turn without exactly one "?"."""
    repeated_question: float = -2.0
    """Repeated question (doctor prompt, Fig. 11: "Repeated questions: -2.0")."""
    answered: float = 1.0
    """R_information^t when the patient agent answers normally (Eq. 3)."""
    refused: float = -2.0
    """R_information^t when the patient agent refuses to answer (Eq. 3). The released code uses -1.0 and the
    doctor prompt (Fig. 11) says ineffective questions score 0."""
    accuracy_scale: float = 5.0
    """The coefficient of R_accuracy = 5 * (F1_diagnosis + F1_recommendation) (Eq. 2)."""

    def __post_init__(self) -> None:
        if self.accuracy_scale <= 0:
            raise ValueError(f"accuracy_scale must be positive, got {self.accuracy_scale}")


def accuracy_reward(
    diagnosis: str, recommendation: str, gold_diagnosis: str, gold_recommendation: str, scale: float = 5.0
) -> float:
    """R_accuracy = scale * (F1_diagnosis + F1_recommendation), word-level F1 against the gold texts (Eq. 2).

    With the paper's scale of 5 the reward lies in [0, 10].

    >>> accuracy_reward("Gastritis", "Omeprazole", "gastritis", "omeprazole")
    10.0
    """
    return scale * (word_f1(diagnosis, gold_diagnosis) + word_f1(recommendation, gold_recommendation))
