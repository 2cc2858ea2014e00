"""MedicalQA's reward: the 5-dimension reward with the total of an episode that misses the correct option scaled
down.

Without a patient, the safety dimension is earned whatever option is chosen, and format and coherence too for any
clearly stated letter: under the plain 5-dimension reward a wrong option after a thorough process keeps about
0.65, and a random tool-caller about 0.3. Scaling the total of every episode whose result is not "correct" (a wrong
option or no answer) by ``wrong_answer_scale`` keeps each of them below every correct answer while preserving their
order, so process shaping among wrong answers survives. The adjustment is reported as the ``wrong_answer_scale``
reward component. With the sparse variant (accuracy only) a wrong answer already scores 0 and nothing changes.
"""

from __future__ import annotations

from clinical_gym.rewards.episode import EpisodeRecord
from clinical_gym.rewards.five_d import FiveDReward, FiveDResult

DEFAULT_WRONG_ANSWER_SCALE = 0.5


class WrongAnswerScaledReward:
    """``inner``'s reward, with the total of an episode that does not choose the correct option multiplied by
    ``scale`` (1.0: the plain 5-dimension reward)."""

    def __init__(self, inner: FiveDReward, scale: float = DEFAULT_WRONG_ANSWER_SCALE) -> None:
        if not 0.0 <= scale <= 1.0:
            raise ValueError(f"wrong_answer_scale must be in [0, 1], got {scale}")
        self.inner = inner
        self.scale = scale

    def evaluate(self, record: EpisodeRecord) -> FiveDResult:
        graded = self.inner.evaluate(record)
        if graded.result == "correct" or self.scale == 1.0 or self.inner.config.sparse:
            return graded
        adjustment = graded.total * (self.scale - 1.0)
        return graded.model_copy(update={"total": graded.total + adjustment,
                                         "components": {**graded.components, "wrong_answer_scale": adjustment}})
