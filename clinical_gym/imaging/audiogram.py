"""Pure-tone audiograms: air-conduction thresholds of each ear (right red O, left blue X) and unmasked bone
conduction (right <, left >), symbols after the ASHA guidelines for audiometric symbols (1990), on the standard
grid (frequency on a log axis, hearing level in dB HL growing downwards).

Grades: WHO World Report on Hearing (2021), from the better ear's four-frequency average (0.5, 1, 2, 4 kHz):
< 20 dB normal, 20-34 mild, 35-49 moderate, 50-64 moderately severe, 65-79 severe, 80-94 profound, >= 95 complete.
Patterns: conductive loss (an air-bone gap: bone conduction normal, air conduction >= 20 dB worse); age-related
(presbycusis: bilateral, symmetric, sloping high-frequency sensorineural); noise-induced (a notch at 3-6 kHz, deepest
at 4 kHz, with recovery at 8 kHz; Coles, Lutman and Buffin 2000); asymmetric sensorineural loss, a difference of 15 dB
or more between the ears at two adjacent frequencies, for which NICE NG98 (Hearing loss in adults, 2018) advises an
MRI of the internal auditory meatus (vestibular schwannoma).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from clinical_gym.imaging.canvas import Axes, Canvas

FREQUENCIES = (250, 500, 1000, 2000, 3000, 4000, 6000, 8000)
BONE_FREQUENCIES = (500, 1000, 2000, 3000, 4000)
PTA_FREQUENCIES = (500, 1000, 2000, 4000)
RED, BLUE = (200, 30, 30), (30, 60, 190)
WHO_GRADES = ((20, "normal hearing"), (35, "mild hearing loss"), (50, "moderate hearing loss"),
              (65, "moderately severe hearing loss"), (80, "severe hearing loss"), (95, "profound hearing loss"))
ASYMMETRY_DB = 15  # NICE NG98: at two adjacent test frequencies
AIR_BONE_GAP_DB = 20


@dataclass(frozen=True)
class HearingPattern:
    key: str
    name: str
    criteria: str


PATTERNS: dict[str, HearingPattern] = {p.key: p for p in (
    HearingPattern("normal", "Normal hearing", "All thresholds 20 dB HL or better in both ears."),
    HearingPattern("presbycusis", "Age-related (presbycusis) sensorineural hearing loss",
                   "Bilateral symmetric sloping high-frequency loss with bone conduction matching air conduction."),
    HearingPattern("noise_induced", "Noise-induced hearing loss",
                   "Bilateral notch at 3-6 kHz (deepest at 4 kHz) with recovery at 8 kHz; bone matches air."),
    HearingPattern("conductive", "Conductive hearing loss",
                   "One ear's air conduction 20 dB or more worse than its normal bone conduction (air-bone gap)."),
    HearingPattern("asymmetric_sensorineural", "Asymmetric sensorineural hearing loss",
                   "One ear >= 15 dB worse than the other at two adjacent frequencies, bone matching air: MRI of "
                   "the internal auditory meatus (NICE NG98)."),
)}


class AudiogramParams(BaseModel):
    """Thresholds (dB HL) by frequency for each ear, air and bone conduction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str
    affected_ear: str | None = None  # "right" / "left" for one-sided patterns
    right_air: dict[int, int]
    left_air: dict[int, int]
    right_bone: dict[int, int]
    left_bone: dict[int, int]


def _round5(x: float) -> int:
    return int(5 * round(x / 5))


def pure_tone_average(thresholds: dict[int, int]) -> float:
    return float(np.mean([thresholds[f] for f in PTA_FREQUENCIES]))


def who_grade(pta_better_ear: float) -> str:
    for limit, grade in WHO_GRADES:
        if pta_better_ear < limit:
            return grade
    return "complete or total hearing loss"


def summary(params: AudiogramParams) -> dict[str, Any]:
    """The numbers a reader reports: four-frequency averages, the WHO grade, air-bone gaps, asymmetry."""
    right, left = pure_tone_average(params.right_air), pure_tone_average(params.left_air)
    gaps = {ear: max(air[f] - bone[f] for f in BONE_FREQUENCIES)
            for ear, air, bone in (("right", params.right_air, params.right_bone),
                                   ("left", params.left_air, params.left_bone))}
    adjacent = [(a, b) for a, b in zip(FREQUENCIES, FREQUENCIES[1:])
                if abs(params.right_air[a] - params.left_air[a]) >= ASYMMETRY_DB
                and abs(params.right_air[b] - params.left_air[b]) >= ASYMMETRY_DB]
    return {"pta_right_db": round(right, 1), "pta_left_db": round(left, 1),
            "who_grade_better_ear": who_grade(min(right, left)), "max_air_bone_gap_db": gaps,
            "asymmetric_frequency_pairs": [f"{a}/{b} Hz" for a, b in adjacent],
            "thresholds_right_air": dict(params.right_air), "thresholds_left_air": dict(params.left_air),
            "thresholds_right_bone": dict(params.right_bone), "thresholds_left_bone": dict(params.left_bone)}


def sample_params(pattern: str, rng: np.random.Generator, age: int) -> AudiogramParams:
    """Thresholds of ``pattern``, with test-retest jitter, kept clear of the criteria's cut-points."""
    if pattern not in PATTERNS:
        raise ValueError(f"unknown hearing pattern {pattern!r}; known: {', '.join(PATTERNS)}")

    def jitter() -> float:
        return float(rng.choice([-5, 0, 0, 5]))

    def ear(shape: dict[int, float]) -> dict[int, int]:
        return {f: int(np.clip(_round5(shape[f] + jitter()), -10, 110)) for f in FREQUENCIES}

    normal = {f: rng.uniform(0, 12) for f in FREQUENCIES}
    affected = str(rng.choice(["right", "left"]))
    if pattern == "normal":
        right, left = ear(normal), ear(normal)
    elif pattern == "presbycusis":
        start = rng.uniform(15, 25)
        slope = {250: 0, 500: 0, 1000: 3, 2000: 15, 3000: 25, 4000: 33, 6000: 42, 8000: 50}
        shape = {f: start + slope[f] * rng.uniform(0.9, 1.1) for f in FREQUENCIES}
        right, left = ear(shape), ear(shape)
    elif pattern == "noise_induced":
        depth = rng.uniform(40, 55)
        notch = {250: 8, 500: 8, 1000: 10, 2000: 15, 3000: depth - 12, 4000: depth, 6000: depth - 8, 8000: 22}
        right, left = ear(notch), ear(notch)
    elif pattern == "conductive":
        loss = rng.uniform(40, 50)
        right, left = ear(normal), ear(normal)
        bad = {f: int(np.clip(_round5(loss + jitter()), -10, 110)) for f in FREQUENCIES}
        right, left = (bad, left) if affected == "right" else (right, bad)
    else:  # asymmetric sensorineural
        good = {f: rng.uniform(5, 15) for f in FREQUENCIES}
        poor = {f: good[f] + (10 if f <= 500 else rng.uniform(30, 45)) for f in FREQUENCIES}
        right, left = (ear(poor), ear(good)) if affected == "right" else (ear(good), ear(poor))
    normal_bone = {f: int(np.clip(_round5(normal[f] + jitter()), -10, 60)) for f in BONE_FREQUENCIES}

    def bone_of(air: dict[int, int], conductive: bool) -> dict[int, int]:
        if conductive:
            return dict(normal_bone)
        return {f: max(-10, air[f] - int(rng.choice([0, 0, 5]))) for f in BONE_FREQUENCIES}

    conductive_right = pattern == "conductive" and affected == "right"
    conductive_left = pattern == "conductive" and affected == "left"
    return AudiogramParams(pattern=pattern, affected_ear=affected if pattern in ("conductive",
                           "asymmetric_sensorineural") else None, right_air=right, left_air=left,
                           right_bone=bone_of(right, conductive_right), left_bone=bone_of(left, conductive_left))


def render(params: AudiogramParams, title: str, subtitle: str, combined: bool = False) -> bytes:
    """The audiogram (PNG): one chart per ear, or both ears on one chart with ``combined`` (as many clinics print
    them)."""
    canvas = Canvas(230.0 if not combined else 140.0, 130.0, px_per_mm=4.0)
    canvas.text(10, 3, title, 3.6)
    canvas.text(10, 8, subtitle, 3.0)
    ears = (("Right ear", params.right_air, params.right_bone, RED, "o", "<"),
            ("Left ear", params.left_air, params.left_bone, BLUE, "x", ">"))
    for i, (ear, air, bone, colour, air_mark, bone_mark) in enumerate(ears):
        x = 22 + (0 if combined else i * 108)
        axes = Axes(canvas, x, 24, 90 if not combined else 105, 88, (180, 11000), (-10, 120), log_x=True,
                    invert_y=True)
        if i == 0 or not combined:
            axes.frame(FREQUENCIES, range(-10, 121, 10), xlabel="Frequency (Hz)", ylabel="Hearing level (dB HL)",
                       xtick_text=lambda f: f"{f / 1000:g}k" if f >= 1000 else f"{f:g}")
        label = ear if not combined else "Right (red) and left (blue) ears"
        canvas.text(axes.x + axes.w / 2, 18 if not combined else 15, label, 3.2,
                    colour if not combined else (20, 20, 20), anchor="mm")
        xs = np.array(FREQUENCIES, float)
        ys = np.array([air[f] for f in FREQUENCIES], float)
        axes.plot(xs, ys, colour, 0.3)
        for f, y in zip(xs, ys):
            canvas.marker(float(axes.px(f)), float(axes.py(y)), air_mark, 3.0, colour)
        for f in BONE_FREQUENCIES:
            offset = -3.0 if bone_mark == "<" else 3.0
            canvas.marker(float(axes.px(f)) + offset, float(axes.py(bone[f])), bone_mark, 2.6, colour)
    canvas.text(22, 124, "O right air   X left air   < right bone   > left bone (unmasked)", 2.6, (90, 90, 90))
    return canvas.png()
