"""The cosine length-controlled reward of TT-OPD (Healthcare AI GYM, Eq. 3; after Yeo et al., 2025): a correct
answer earns more the shorter the response, a wrong one loses more the longer it is, and a truncated one gets a
fixed penalty. Pure Python (no torch): trainers apply it through ``clinical_gym.trainers.common.length_reward``.

    R(correct, L) = R_max − ½ (R_max − R_min) (1 − cos(π L / L_max))      correct: R_max at L = 0, R_min at L_max
    R(wrong, L)   = − ½ R_wrong (1 − cos(π L / L_max))                  wrong:   0 at L = 0, −R_wrong at L_max
    R(truncated)  = R_penalty                                            cut by a limit, or L > L_max

Eq. 3 writes the wrong case with |R_min| for R_wrong; the paper's released settings use R_max 1.1, R_min 0.7,
R_wrong 0.3 (wrong: 0 → −0.3), R_penalty −0.5 and L_max 12,288 tokens, the defaults here.

>>> reward = CosineLengthReward(r_max=1.0, r_min=0.5, r_wrong=0.4, r_penalty=-1.0, max_length=100)
>>> [round(reward(correct=True, length=n), 6) for n in (0, 50, 100)]
[1.0, 0.75, 0.5]
>>> [round(reward(correct=False, length=n), 6) for n in (0, 50, 100)], reward(correct=True, length=101)
([0.0, -0.2, -0.4], -1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class CosineLengthReward:
    """Eq. 3 with its constants; call it with the outcome and the response length in tokens.

    ``r_wrong`` is the magnitude of the wrong-answer reward at ``max_length`` (None: ``|r_min|``, Eq. 3 as printed).
    """

    r_max: float = 1.1
    r_min: float = 0.7
    r_wrong: float | None = 0.3
    r_penalty: float = -0.5
    max_length: int = 12288

    def __post_init__(self) -> None:
        if self.max_length < 1:
            raise ValueError(f"max_length (L_max) must be >= 1, got {self.max_length}")
        if self.r_min > self.r_max:
            raise ValueError(f"r_min ({self.r_min}) must not exceed r_max ({self.r_max}): a longer correct answer "
                             "must not earn more")
        if self.r_wrong is not None and self.r_wrong < 0:
            raise ValueError(f"r_wrong is a magnitude and must be >= 0, got {self.r_wrong}")

    def __call__(self, correct: bool, length: int, truncated: bool = False) -> float:
        if length < 0:
            raise ValueError(f"length must be >= 0, got {length}")
        if truncated or length > self.max_length:
            return self.r_penalty
        # 1 − cos(π L / L_max) rises from 0 at L = 0 to 2 at L = L_max
        rise = 1.0 - math.cos(math.pi * length / self.max_length)
        if correct:
            return self.r_max - 0.5 * (self.r_max - self.r_min) * rise
        wrong = abs(self.r_min) if self.r_wrong is None else self.r_wrong
        return -0.5 * wrong * rise + 0.0  # + 0.0: no −0.0 at L = 0
