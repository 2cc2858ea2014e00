"""Cardiotocographs: a fetal heart-rate trace (4 Hz) and uterine activity (toco) drawn from NICHD features, on CTG
paper at 1 cm/min (20 bpm/cm, 30 minutes) or 3 cm/min (30 bpm/cm, 12 minutes).

Definitions (Macones GA et al., NICHD workshop report, Obstet Gynecol 2008;112:661-6; ACOG Practice Bulletin 106):
baseline over 10 minutes rounded to 5 bpm (110-160 normal); variability as the peak-to-trough amplitude (absent:
undetectable, minimal <= 5 bpm, moderate 6-25, marked > 25); an acceleration rises >= 15 bpm for >= 15 s (at 32 weeks
or more); early and late decelerations are gradual (onset to nadir >= 30 s), the early one's nadir at the peak of the
contraction, the late one's after it; variable decelerations are abrupt (< 30 s to a nadir >= 15 bpm below baseline,
lasting 15 s to 2 min); a prolonged deceleration lasts 2-10 minutes; decelerations are recurrent when they occur with
half or more of the contractions in 20 minutes; a sinusoidal pattern undulates smoothly at 3-5 cycles per minute for
20 minutes or more. The category comes from the Obstetrics domain's own classifier
(``clinical_gym.domains.obstetrics.calculations.fetal_heart_category``), so both domains agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.imaging.canvas import BLACK, Canvas

FS_HZ = 4.0
Pattern = Literal["none", "intermittent", "recurrent"]
GREEN_BAND = (235, 245, 235)


class CtgParams(BaseModel):
    """The NICHD features a CTG is drawn from, the contraction frequency, paper speed and the noise seed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario: str
    seed: int = Field(ge=0)
    baseline_bpm: int
    variability_bpm: float  # peak-to-trough amplitude of the baseline's fluctuations
    accelerations: bool
    early_decelerations: bool = False
    late_decelerations: Pattern = "none"
    variable_decelerations: Pattern = "none"
    prolonged_deceleration: bool = False
    sinusoidal: bool = False
    contractions_per_10_min: float
    paper_speed_cm_min: Literal[1, 3] = 1
    gestation_weeks: int = 39

    @property
    def duration_min(self) -> int:
        return 30 if self.paper_speed_cm_min == 1 else 12

    def category(self) -> dict[str, Any]:
        """The Obstetrics domain's NICHD classification of these features."""
        from clinical_gym.domains.obstetrics.calculations import fetal_heart_category

        return fetal_heart_category(self.baseline_bpm, self.variability_bpm, self.accelerations,
                                    self.early_decelerations, self.late_decelerations, self.variable_decelerations,
                                    self.prolonged_deceleration, self.sinusoidal, self.contractions_per_10_min)


@dataclass(frozen=True)
class CtgScenario:
    """A tracing pattern: its NICHD category and how its features are drawn."""

    key: str
    category: str
    description: str


SCENARIOS: dict[str, CtgScenario] = {s.key: s for s in (
    CtgScenario("reassuring", "Category I", "normal baseline, moderate variability, accelerations"),
    CtgScenario("early_decelerations", "Category I", "normal baseline, moderate variability, early decelerations"),
    CtgScenario("minimal_variability", "Category II", "normal baseline, minimal variability, no accelerations"),
    CtgScenario("recurrent_variable", "Category II", "moderate variability with recurrent variable decelerations"),
    CtgScenario("recurrent_late_moderate", "Category II", "moderate variability with recurrent late decelerations"),
    CtgScenario("tachycardia", "Category II", "fetal baseline above 160 bpm with moderate variability"),
    CtgScenario("prolonged_deceleration", "Category II", "a prolonged deceleration, moderate variability"),
    CtgScenario("absent_late", "Category III", "absent variability with recurrent late decelerations"),
    CtgScenario("absent_variable", "Category III", "absent variability with recurrent variable decelerations"),
    CtgScenario("absent_bradycardia", "Category III", "fetal baseline below 110 bpm with absent variability"),
    CtgScenario("sinusoidal", "Category III", "sinusoidal pattern"),
)}


def sample_params(scenario: str, rng: np.random.Generator, paper_speed_cm_min: int | None = None) -> CtgParams:
    """Features for ``scenario`` drawn well inside the NICHD definitions. A trace in which a reader
    (``clinical_gym.imaging.ctg_reading``) would read other features (noise can make a gradual deceleration look
    abrupt; under 1% of draws) is redrawn with a new noise seed, so the picture always shows its ground truth."""
    params = _draw(scenario, rng, paper_speed_cm_min)
    for _ in range(20):
        if readable(params):
            return params
        params = params.model_copy(update={"seed": int(rng.integers(2**31))})
    raise RuntimeError(f"no readable {scenario} tracing in 20 draws")  # pragma: no cover - under 1% per draw


def readable(params: CtgParams) -> bool:
    """Whether the features read off the drawn traces are those the tracing was drawn with (baseline within 5 bpm,
    the same variability class, decelerations, sinusoidal pattern and category)."""
    from clinical_gym.domains.obstetrics.calculations import fetal_heart_category, variability_category
    from clinical_gym.imaging.ctg_reading import features

    read = features(build(params), params.duration_min)
    return (abs(read["baseline_bpm"] - params.baseline_bpm) <= 5
            and variability_category(read["variability_amplitude_bpm"]) == variability_category(
                params.variability_bpm)
            and read["late_decelerations"] == params.late_decelerations
            and read["variable_decelerations"] == params.variable_decelerations
            and read["prolonged_deceleration"] == params.prolonged_deceleration
            and read["sinusoidal_pattern"] == params.sinusoidal
            and fetal_heart_category(**read)["category"] == params.category()["category"])


def _draw(scenario: str, rng: np.random.Generator, paper_speed_cm_min: int | None) -> CtgParams:
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown CTG scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    speed = paper_speed_cm_min or int(rng.choice([1, 3]))
    base: dict[str, Any] = {
        "scenario": scenario, "seed": int(rng.integers(2**31)), "paper_speed_cm_min": speed,
        "baseline_bpm": int(5 * rng.integers(24, 31)), "variability_bpm": float(rng.integers(9, 16)),
        "accelerations": False, "contractions_per_10_min": float(rng.integers(3, 6)),
        "gestation_weeks": int(rng.integers(37, 42)),
    }
    updates: dict[str, dict[str, Any]] = {
        "reassuring": {"accelerations": True},
        "early_decelerations": {"early_decelerations": True, "accelerations": bool(rng.random() < 0.5)},
        "minimal_variability": {"variability_bpm": float(rng.integers(3, 5))},
        "recurrent_variable": {"variable_decelerations": "recurrent"},
        "recurrent_late_moderate": {"late_decelerations": "recurrent"},
        "tachycardia": {"baseline_bpm": int(5 * rng.integers(34, 37)), "accelerations": bool(rng.random() < 0.5)},
        "prolonged_deceleration": {"prolonged_deceleration": True, "accelerations": bool(rng.random() < 0.5)},
        "absent_late": {"variability_bpm": 0.0, "late_decelerations": "recurrent"},
        "absent_variable": {"variability_bpm": 0.0, "variable_decelerations": "recurrent"},
        "absent_bradycardia": {"variability_bpm": 0.0, "baseline_bpm": int(5 * rng.integers(18, 21))},
        "sinusoidal": {"variability_bpm": 0.0, "sinusoidal": True},
    }
    return CtgParams(**{**base, **updates[scenario]})


@dataclass
class CtgTrace:
    """The drawn signals (4 Hz): fetal heart rate (bpm), uterine pressure (mmHg), and the truth behind them:
    contraction peaks and each deceleration's kind, onset, nadir and end (seconds)."""

    fhr: np.ndarray
    toco: np.ndarray
    contraction_peaks_s: list[float]
    decelerations: list[dict[str, Any]]
    accelerations_s: list[float]

    @property
    def times_s(self) -> np.ndarray:
        return np.arange(len(self.fhr)) / FS_HZ


def _smooth_noise(rng: np.random.Generator, n: int, cycles_per_min: tuple[float, float]) -> np.ndarray:
    """Band-limited fluctuation: a sum of random sinusoids between the given cycle rates, unit peak-to-trough per
    minute (median)."""
    t = np.arange(n) / FS_HZ
    x = np.zeros(n)
    for _ in range(24):  # many incommensurate cycles with slowly wandering amplitude: irregular, not sinusoidal
        f = rng.uniform(*cycles_per_min) / 60.0
        envelope = 1 + 0.6 * np.sin(2 * np.pi * rng.uniform(0.2, 1.0) / 60 * t + rng.uniform(0, 2 * np.pi))
        x += rng.uniform(0.3, 1.0) * envelope * np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
    x += 0.15 * np.convolve(rng.normal(0, 1, n), np.ones(3) / 3, mode="same")
    per_minute = [np.ptp(x[i:i + int(60 * FS_HZ)]) for i in range(0, n - int(60 * FS_HZ), int(60 * FS_HZ))]
    return x / float(np.median(per_minute))


def _bell(t: np.ndarray, start: float, peak: float, end: float) -> np.ndarray:
    out = np.zeros_like(t)
    rise = (t >= start) & (t <= peak)
    fall = (t > peak) & (t <= end)
    out[rise] = 0.5 - 0.5 * np.cos(np.pi * (t[rise] - start) / (peak - start))
    out[fall] = 0.5 + 0.5 * np.cos(np.pi * (t[fall] - peak) / (end - peak))
    return out


def build(params: CtgParams) -> CtgTrace:
    """The FHR and toco signals of ``params`` (deterministic from ``params.seed``)."""
    rng = np.random.default_rng(params.seed)
    duration_s = params.duration_min * 60.0
    n = int(duration_s * FS_HZ)
    t = np.arange(n) / FS_HZ

    # contractions: evenly spread at the given frequency, with jitter
    period = 600.0 / params.contractions_per_10_min
    first = rng.uniform(0.25, 0.75) * period
    peaks = []
    now = first
    while now < duration_s - 50:
        peaks.append(now)
        now += period * rng.uniform(0.88, 1.12)
    tone = rng.uniform(10, 16)
    toco = np.full(n, tone)
    spans = []
    for peak in peaks:
        half = rng.uniform(35, 45)
        toco += rng.uniform(40, 70) * _bell(t, peak - half, peak, peak + half)
        spans.append((peak - half, peak, peak + half))
    toco += np.convolve(rng.normal(0, 0.6, n), np.ones(5) / 5, mode="same")

    fhr = np.full(n, float(params.baseline_bpm))
    if params.sinusoidal:
        cycles = rng.uniform(3.2, 4.5) / 60.0
        fhr += rng.uniform(6, 9) * np.sin(2 * np.pi * cycles * t + rng.uniform(0, 2 * np.pi))
    amplitude = params.variability_bpm if params.variability_bpm > 0 else 0.6
    fhr += amplitude * _smooth_noise(rng, n, (2.0, 15.0)) * (0.0 if params.sinusoidal else 1.0)
    if params.sinusoidal:
        fhr += 0.3 * _smooth_noise(rng, n, (8.0, 15.0))

    decelerations: list[dict[str, Any]] = []

    def with_contractions(pattern: str) -> list[int]:
        if pattern == "recurrent":
            k = max(int(np.ceil(0.7 * len(peaks))), len(peaks) - 1)
        elif pattern == "intermittent":
            k = max(1, len(peaks) // 3)
        else:
            return []
        return sorted(int(i) for i in rng.choice(len(peaks), size=min(k, len(peaks)), replace=False))

    def dip(kind: str, onset: float, nadir: float, end: float, depth: float) -> None:
        nonlocal fhr
        fhr = fhr - depth * _bell(t, onset, nadir, end)
        decelerations.append({"kind": kind, "onset_s": onset, "nadir_s": nadir, "end_s": end, "depth_bpm": depth})

    if params.early_decelerations:
        for i in range(len(peaks)):
            start, peak, end = spans[i]
            dip("early", start - 3, peak, end + 3, rng.uniform(18, 28))
    for i in with_contractions(params.late_decelerations):
        start, peak, end = spans[i]
        lag = rng.uniform(18, 30)
        dip("late", start + lag, peak + lag, end + lag + rng.uniform(5, 15), rng.uniform(20, 32))
    for i in with_contractions(params.variable_decelerations):
        start, peak, end = spans[i]
        onset = peak - rng.uniform(15, 25)
        nadir = onset + rng.uniform(8, 18)
        dip("variable", onset, nadir, nadir + rng.uniform(20, 45), rng.uniform(35, 60))
    if params.prolonged_deceleration:
        onset = duration_s * rng.uniform(0.45, 0.6)
        length = rng.uniform(150, 220)
        drop = rng.uniform(35, 50)
        shape = np.clip((t - onset) / 40, 0, 1) * np.clip((onset + length - t) / 50, 0, 1)
        fhr = fhr - drop * shape
        decelerations.append({"kind": "prolonged", "onset_s": onset, "nadir_s": onset + 40,
                              "end_s": onset + length, "depth_bpm": drop})
    accelerations = []
    if params.accelerations:
        quiet = [s for s in np.arange(60, duration_s - 60, 30)
                 if all(abs(s - p) > 80 for p in peaks)]
        for centre in sorted(rng.choice(quiet, size=min(len(quiet), max(2, params.duration_min // 8)),
                                        replace=False)):
            half = rng.uniform(12, 20)
            fhr = fhr + rng.uniform(18, 26) * _bell(t, centre - half, centre, centre + half)
            accelerations.append(float(centre))
    return CtgTrace(fhr, toco, peaks, decelerations, accelerations)


# -- paper ---------------------------------------------------------------------------------------------------------
FHR_RANGE = (50, 210)
TOCO_RANGE = (0, 100)


LEFT_MM, TOP_MM, GAP_MM, TOCO_MM = 14.0, 16.0, 8.0, 40.0


def _scale(speed: int) -> tuple[float, float]:
    """(mm per second, bpm per mm) of the paper at ``speed`` cm/min."""
    return speed * 10.0 / 60.0, 2.0 if speed == 1 else 3.0


@lru_cache(maxsize=4)
def _blank(speed: int, minutes: int) -> Canvas:
    """The empty CTG page at ``speed`` for ``minutes`` (grids, the 110-160 band, scales), drawn once and copied."""
    _, bpm_per_mm = _scale(speed)
    width = minutes * speed * 10.0
    fhr_h = (FHR_RANGE[1] - FHR_RANGE[0]) / bpm_per_mm
    canvas = Canvas(LEFT_MM + width + 6.0, TOP_MM + fhr_h + GAP_MM + TOCO_MM + 6.0, px_per_mm=4.0)
    canvas.text(LEFT_MM + width, 8.5, f"{speed} cm/min   FHR {10 * bpm_per_mm:g} bpm/cm   UA 25 mmHg/cm", 3.0,
                anchor="ra")
    band_top, band_bottom = _y_fhr(160, bpm_per_mm), _y_fhr(110, bpm_per_mm)
    canvas.rect(LEFT_MM, band_top, width, band_bottom - band_top, fill=GREEN_BAND)
    minute_mm = speed * 10.0
    minor_x = minute_mm / (6 if speed == 3 else 2)
    canvas.grid(LEFT_MM, TOP_MM, width, fhr_h, minor_x, minute_mm, y_minor=10 / bpm_per_mm,
                y_major=(30 if speed == 3 else 20) / bpm_per_mm)
    for bpm in range(FHR_RANGE[0] + 10, FHR_RANGE[1], 20 if speed == 1 else 30):
        for m in range(0, minutes, 5 if speed == 1 else 2):
            canvas.text(LEFT_MM + m * minute_mm + 1.0, _y_fhr(bpm, bpm_per_mm), str(bpm), 2.2, (150, 70, 70), "lm")
    toco_top = TOP_MM + fhr_h + GAP_MM
    canvas.grid(LEFT_MM, toco_top, width, TOCO_MM, minor_x, minute_mm, y_minor=4.0, y_major=8.0)
    for mmhg in (20, 40, 60, 80):
        canvas.text(LEFT_MM - 1.0, toco_top + TOCO_MM - mmhg * TOCO_MM / 100, str(mmhg), 2.2, (150, 70, 70), "rm")
    canvas.text(LEFT_MM - 1.0, TOP_MM + 2.0, "FHR", 2.6, anchor="ra")
    canvas.text(LEFT_MM - 1.0, toco_top + 2.0, "UA", 2.6, anchor="ra")
    for m in range(0, minutes + 1, 5 if speed == 1 else 2):
        canvas.text(LEFT_MM + m * minute_mm, toco_top - GAP_MM / 2, f"{m} min", 2.4, (90, 90, 90), "mm")
    return canvas


def _y_fhr(bpm: np.ndarray | float, bpm_per_mm: float) -> Any:
    return TOP_MM + (FHR_RANGE[1] - np.clip(bpm, *FHR_RANGE)) / bpm_per_mm


def render(trace: CtgTrace, params: CtgParams, title: str, subtitle: str) -> bytes:
    """The CTG on paper (PNG): FHR channel above, toco below, minute lines bold, the 110-160 band shaded."""
    speed = params.paper_speed_cm_min
    mm_per_s, bpm_per_mm = _scale(speed)
    canvas = _blank(speed, params.duration_min).copy()
    canvas.text(LEFT_MM, 2.5, title, 3.6)
    canvas.text(LEFT_MM, 8.5, subtitle, 3.0)
    fhr_h = (FHR_RANGE[1] - FHR_RANGE[0]) / bpm_per_mm
    toco_top = TOP_MM + fhr_h + GAP_MM
    xs = LEFT_MM + trace.times_s * mm_per_s
    canvas.trace(xs, np.asarray(_y_fhr(trace.fhr, bpm_per_mm)), BLACK, 0.3)
    canvas.trace(xs, toco_top + TOCO_MM - np.clip(trace.toco, *TOCO_RANGE) * TOCO_MM / 100, BLACK, 0.3)
    return canvas.png()
