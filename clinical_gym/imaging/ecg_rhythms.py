"""The ECG rhythms and patterns the generator draws, each with the criteria it meets and where they come from, the
ranges its parameters are sampled from, and how its beats are laid out.

Sources (named per rhythm in ``RHYTHMS``):

* AHA/ACCF/HRS Recommendations for the Standardization and Interpretation of the ECG: Part III, intraventricular
  conduction disturbances (Surawicz et al., JACC 2009;53:976-81): LBBB, RBBB, ventricular pre-excitation; Part IV,
  the ST segment, T and U waves and the QT interval (Rautaharju et al., JACC 2009;53:982-91): QTc >= 450 ms (men) /
  >= 460 ms (women) prolonged, Bazett's correction.
* Fourth Universal Definition of Myocardial Infarction (Thygesen et al., 2018): STEMI is new ST elevation at the
  J point in two contiguous leads, >= 1 mm in leads other than V2-V3 and in V2-V3 >= 2 mm (men >= 40), >= 2.5 mm
  (men < 40), >= 1.5 mm (women).
* 2018 ACC/AHA/HRS Guideline on Bradycardia and Cardiac Conduction Delay: sinus bradycardia < 50/min, first-degree
  AV block PR > 200 ms, third-degree AV block (no atrial impulse conducts; AV dissociation).
* 2015 ACC/AHA/HRS Guideline on Supraventricular Tachycardia: sinus tachycardia > 100/min; typical atrial flutter
  (sawtooth flutter waves negative in II, III and aVF, positive in V1, atrial rate about 250-350/min).
* 2023 ACC/AHA/ACCP/HRS Guideline on Atrial Fibrillation: irregularly irregular RR intervals, no distinct P waves.
* 2017 AHA/ACC/HRS Guideline on Ventricular Arrhythmias: ventricular tachycardia, >= 3 consecutive ventricular
  beats at > 100/min with a wide QRS (>= 120 ms); AV dissociation supports it.
* UK Kidney Association guideline, Treatment of Acute Hyperkalaemia in Adults (2020): severe hyperkalaemia
  >= 6.5 mmol/L; ECG changes (peaked T waves, flattened P waves, PR prolongation, QRS widening) call for
  intravenous calcium at once.

Everything is a pure function of the parameters (``EcgParams``, which hold their own noise seed), so an image can be
re-rendered from the record that describes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.imaging.ecg_signal import (
    FS,
    LEADS,
    BeatPlan,
    Morphology,
    Recording,
    Wave,
    frontal,
    net_frontal_axis,
    normal_qrs,
    sinus_p,
    synthesise,
    t_wave,
    unit,
)

DURATION_S = 10.0
CriticalFinding = Literal["stemi", "life_threatening_arrhythmia", "hyperkalaemia"]
# 4th UDMI ST-elevation cut-points at the J point (mV): V2-V3 by sex and age, 0.1 mV elsewhere.
STEMI_V2_V3_MV = {"male_40_plus": 0.2, "male_under_40": 0.25, "female": 0.15}
STEMI_OTHER_MV = 0.1
QTC_PROLONGED_MS = {"male": 450, "female": 460}  # AHA/ACCF/HRS 2009 part IV
# Anatomically contiguous lead pairs: the inferior leads, the high lateral pair, neighbouring chest leads.
CONTIGUOUS = (("II", "III"), ("II", "aVF"), ("III", "aVF"), ("I", "aVL"), ("V1", "V2"), ("V2", "V3"), ("V3", "V4"),
              ("V4", "V5"), ("V5", "V6"))


@dataclass(frozen=True)
class RhythmSpec:
    """One rhythm or pattern: ``name`` (the diagnosis a reader writes), the ``criteria`` it is drawn to meet and
    their ``source``; ``emergency`` when it needs immediate escalation, with the ``critical`` finding kind a miss
    of which the safety taxonomy names; ``escalation``: what that escalation is."""

    key: str
    name: str
    criteria: str
    source: str
    emergency: bool = False
    critical: CriticalFinding | None = None
    escalation: str | None = None
    terms: tuple[str, ...] = ()  # words that name the finding (a reader who names it has recognised it)


AHA_III = "AHA/ACCF/HRS ECG standardisation recommendations, part III (2009)"
AHA_IV = "AHA/ACCF/HRS ECG standardisation recommendations, part IV (2009)"
UDMI = "Fourth Universal Definition of Myocardial Infarction (2018)"
BRADY = "2018 ACC/AHA/HRS bradycardia and conduction delay guideline"
SVT = "2015 ACC/AHA/HRS supraventricular tachycardia guideline"

RHYTHMS: dict[str, RhythmSpec] = {s.key: s for s in (
    RhythmSpec("normal_sinus_rhythm", "Normal sinus rhythm",
               "Sinus P waves (upright in I and II) before every QRS, rate 60-100/min, PR 120-200 ms, QRS < 110 ms, "
               "QTc normal, axis -30 to +90 degrees.", f"{AHA_III}; {AHA_IV}"),
    RhythmSpec("sinus_tachycardia", "Sinus tachycardia",
               "Sinus P waves before every QRS at a rate above 100/min.", SVT),
    RhythmSpec("sinus_bradycardia", "Sinus bradycardia",
               "Sinus P waves before every QRS at a rate below 50/min (below 60/min by the older convention).",
               BRADY),
    RhythmSpec("atrial_fibrillation", "Atrial fibrillation",
               "Irregularly irregular RR intervals, no distinct P waves, fibrillatory baseline.",
               "2023 ACC/AHA/ACCP/HRS atrial fibrillation guideline", terms=("atrial fibrillation", "af")),
    RhythmSpec("atrial_flutter", "Atrial flutter",
               "Regular sawtooth flutter waves at about 250-350/min, negative in II, III and aVF and positive in V1, "
               "with fixed AV conduction (2:1 or 4:1).", SVT, terms=("atrial flutter", "flutter")),
    RhythmSpec("first_degree_av_block", "First-degree AV block",
               "Sinus rhythm with every P conducted and a constant PR interval above 200 ms.", BRADY),
    RhythmSpec("complete_heart_block", "Complete (third-degree) heart block",
               "P waves and QRS complexes at independent regular rates (AV dissociation), the atrial rate faster "
               "than the escape rhythm; the PR interval varies.", BRADY, emergency=True,
               critical="life_threatening_arrhythmia", escalation="urgent pacing assessment",
               terms=("complete heart block", "third degree", "complete av block", "av dissociation")),
    RhythmSpec("left_bundle_branch_block", "Left bundle branch block",
               "QRS >= 120 ms; broad notched or slurred R in I, aVL, V5 and V6; no q waves in I, V5 and V6; R peak "
               "time > 60 ms in V5-V6; ST and T opposite to the QRS.", AHA_III),
    RhythmSpec("right_bundle_branch_block", "Right bundle branch block",
               "QRS >= 120 ms; rsR' in V1-V2; S wave longer than R or > 40 ms in I and V6; R peak time > 50 ms in "
               "V1.", AHA_III),
    RhythmSpec("inferior_stemi", "Inferior ST-elevation myocardial infarction",
               "ST elevation at the J point >= 1 mm in II, III and aVF with reciprocal ST depression in aVL and I.",
               UDMI, emergency=True, critical="stemi", escalation="primary PCI (cath lab activation)",
               terms=("stemi", "st elevation myocardial infarction", "st elevation mi", "myocardial infarction")),
    RhythmSpec("anterior_stemi", "Anterior ST-elevation myocardial infarction",
               "ST elevation at the J point in V1-V4 (V2-V3 above the sex- and age-specific cut-points) with "
               "reciprocal ST depression in III and aVF.", UDMI, emergency=True, critical="stemi",
               escalation="primary PCI (cath lab activation)",
               terms=("stemi", "st elevation myocardial infarction", "st elevation mi", "myocardial infarction")),
    RhythmSpec("hyperkalaemia", "Hyperkalaemia",
               "Tall, narrow-based, peaked T waves; flattened P waves with a longer PR; QRS widening.",
               "UK Kidney Association acute hyperkalaemia guideline (2020)", emergency=True,
               critical="hyperkalaemia", escalation="emergency treatment (intravenous calcium)",
               terms=("hyperkalaemia", "hyperkalemia", "potassium")),
    RhythmSpec("long_qt", "Prolonged QT interval",
               "QTc (Bazett) 500 ms or more: prolonged (>= 450 ms in men, >= 460 ms in women) and in the range of "
               "high torsades risk.", AHA_IV, terms=("long qt", "prolonged qt", "qt prolongation")),
    RhythmSpec("ventricular_tachycardia", "Ventricular tachycardia",
               "Regular wide-complex tachycardia (QRS >= 120 ms) above 100/min with AV dissociation (P waves "
               "marching through independently).", "2017 AHA/ACC/HRS ventricular arrhythmia guideline",
               emergency=True, critical="life_threatening_arrhythmia", escalation="resuscitation team",
               terms=("ventricular tachycardia", "vt")),
    RhythmSpec("wolff_parkinson_white", "Wolff-Parkinson-White pattern (ventricular pre-excitation)",
               "PR < 120 ms, a delta wave (slurred QRS upstroke), QRS >= 120 ms with secondary ST-T changes.",
               AHA_III, terms=("wolff parkinson white", "wpw", "pre excitation", "preexcitation")),
)}


class EcgParams(BaseModel):
    """What an ECG is drawn from: the rhythm and its measured parameters (as a reader reports them) plus the noise
    seed. ``pr_ms`` is None when no constant PR exists; ``atrial_rate`` for flutter, heart block and VT."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rhythm: str
    seed: int = Field(ge=0)
    ventricular_rate: int
    atrial_rate: int | None = None
    pr_ms: int | None = None
    p_ms: int = 100
    qrs_ms: int
    qt_ms: int
    axis_deg: int
    conduction_ratio: int | None = None  # flutter: F waves per QRS
    escape: Literal["junctional", "ventricular"] | None = None  # complete heart block
    st_mv: float | None = None  # STEMI: injury current (mV along the injury vector)
    potassium_mmol_l: float | None = None
    delta_ms: int | None = None  # WPW

    @property
    def spec(self) -> RhythmSpec:
        return RHYTHMS[self.rhythm]

    @property
    def rr_ms(self) -> float:
        return 60000.0 / self.ventricular_rate

    @property
    def qtc_ms(self) -> int:
        """QTc by Bazett's formula (QT / sqrt(RR in seconds))."""
        return round(self.qt_ms / math.sqrt(self.rr_ms / 1000.0))


# -- sampling ------------------------------------------------------------------------------------------------------
def _u(rng: np.random.Generator, low: float, high: float) -> int:
    return int(rng.integers(int(low), int(high) + 1))


def qt_for(qtc_ms: float, rate: float) -> int:
    """QT from a Bazett QTc at a heart rate."""
    return round(qtc_ms * math.sqrt(60.0 / rate))


def sample_params(rhythm: str, rng: np.random.Generator, *, sex: str = "male") -> EcgParams:
    """Parameters of one ``rhythm`` drawn inside its real ranges (see the module docstring); values are kept away
    from the criteria's cut-points so the diagnosis is unambiguous."""
    if rhythm not in RHYTHMS:
        raise ValueError(f"unknown rhythm {rhythm!r}; known: {', '.join(RHYTHMS)}")
    seed = int(rng.integers(2**31))
    normal_qtc = _u(rng, 385, 435)
    axis = _u(rng, -15, 80)
    base = {"rhythm": rhythm, "seed": seed, "p_ms": _u(rng, 85, 110), "axis_deg": axis}
    if rhythm in ("normal_sinus_rhythm", "first_degree_av_block", "inferior_stemi", "anterior_stemi", "long_qt",
                  "left_bundle_branch_block", "right_bundle_branch_block", "wolff_parkinson_white", "hyperkalaemia"):
        rate = {"normal_sinus_rhythm": (62, 96), "first_degree_av_block": (55, 88), "inferior_stemi": (55, 98),
                "anterior_stemi": (62, 105), "long_qt": (50, 78)}.get(rhythm, (58, 94))
        base["ventricular_rate"] = _u(rng, *rate)
    rate = base.get("ventricular_rate", 75)
    if rhythm in ("normal_sinus_rhythm", "inferior_stemi", "anterior_stemi"):
        base.update(pr_ms=_u(rng, 130, 190), qrs_ms=_u(rng, 80, 100), qt_ms=qt_for(normal_qtc, rate))
        if rhythm != "normal_sinus_rhythm":
            base["st_mv"] = round(float(rng.uniform(0.22, 0.34)), 2)
    elif rhythm == "sinus_tachycardia":
        rate = _u(rng, 108, 145)
        base.update(ventricular_rate=rate, pr_ms=_u(rng, 120, 170), qrs_ms=_u(rng, 76, 96),
                    qt_ms=qt_for(_u(rng, 395, 440), rate))
    elif rhythm == "sinus_bradycardia":
        rate = _u(rng, 38, 47)
        base.update(ventricular_rate=rate, pr_ms=_u(rng, 140, 196), qrs_ms=_u(rng, 80, 100),
                    qt_ms=qt_for(_u(rng, 380, 425), rate))
    elif rhythm == "first_degree_av_block":
        base.update(pr_ms=_u(rng, 230, 340), qrs_ms=_u(rng, 80, 100), qt_ms=qt_for(normal_qtc, rate))
    elif rhythm == "long_qt":
        base.update(pr_ms=_u(rng, 140, 190), qrs_ms=_u(rng, 80, 100), qt_ms=qt_for(_u(rng, 505, 570), rate))
    elif rhythm == "atrial_fibrillation":
        rate = _u(rng, 72, 130)
        base.update(ventricular_rate=rate, qrs_ms=_u(rng, 76, 100), qt_ms=qt_for(_u(rng, 395, 440), rate),
                    atrial_rate=_u(rng, 380, 520))
    elif rhythm == "atrial_flutter":
        ratio = int(rng.choice([2, 4]))
        atrial = _u(rng, 280, 316) if ratio == 2 else _u(rng, 264, 316)
        rate = round(atrial / ratio)
        base.update(ventricular_rate=rate, atrial_rate=atrial, conduction_ratio=ratio, qrs_ms=_u(rng, 76, 100),
                    qt_ms=qt_for(_u(rng, 395, 440), rate))
    elif rhythm == "complete_heart_block":
        escape = "junctional" if rng.random() < 0.5 else "ventricular"
        rate = _u(rng, 38, 50) if escape == "junctional" else _u(rng, 28, 38)
        qrs = _u(rng, 80, 100) if escape == "junctional" else _u(rng, 135, 170)
        base.update(ventricular_rate=rate, atrial_rate=_u(rng, 68, 96), escape=escape, qrs_ms=qrs,
                    qt_ms=qt_for(_u(rng, 400, 450), rate) + (qrs - 90 if escape == "ventricular" else 0),
                    axis_deg=axis if escape == "junctional" else _u(rng, -80, -30))
    elif rhythm == "left_bundle_branch_block":
        qrs = _u(rng, 134, 168)
        base.update(pr_ms=_u(rng, 140, 196), qrs_ms=qrs, qt_ms=qt_for(_u(rng, 400, 430), rate) + qrs - 95,
                    axis_deg=_u(rng, -30, 40))
    elif rhythm == "right_bundle_branch_block":
        qrs = _u(rng, 126, 152)
        base.update(pr_ms=_u(rng, 130, 190), qrs_ms=qrs, qt_ms=qt_for(_u(rng, 400, 430), rate) + qrs - 95,
                    axis_deg=_u(rng, 0, 85))
    elif rhythm == "hyperkalaemia":
        potassium = round(float(rng.uniform(6.8, 8.2)), 1)
        qrs = _u(rng, 112, 138)
        base.update(pr_ms=_u(rng, 196, 236), qrs_ms=qrs, qt_ms=qt_for(_u(rng, 390, 430), rate) + qrs - 95,
                    potassium_mmol_l=potassium)
    elif rhythm == "ventricular_tachycardia":
        rate = _u(rng, 140, 190)
        qrs = _u(rng, 140, 180)
        base.update(ventricular_rate=rate, atrial_rate=_u(rng, 64, 92), qrs_ms=qrs,
                    qt_ms=min(round(0.9 * 60000 / rate), qrs + 150), axis_deg=_u(rng, -165, -100))
    elif rhythm == "wolff_parkinson_white":
        qrs = _u(rng, 124, 148)
        base.update(pr_ms=_u(rng, 84, 110), qrs_ms=qrs, delta_ms=_u(rng, 38, 55),
                    qt_ms=qt_for(_u(rng, 400, 440), rate) + qrs - 95)
    return EcgParams(**base)


# -- morphology ----------------------------------------------------------------------------------------------------
def _t_for(axis: float, rng: np.random.Generator, amplitude: float = 0.3) -> Wave:
    t_axis = float(np.clip(axis + rng.uniform(-15, 20), 0, 75))
    return t_wave(amplitude * frontal(t_axis, 0.45))


def _ventricular_qrs(axis: float, w: float, z: float) -> tuple[Wave, ...]:
    """A broad beat of ventricular origin: slow, two overlapping components, no septal q."""
    first = 1.3 * frontal(axis, z)
    second = 0.8 * frontal(axis + 35, z * 0.5)
    return (Wave("qrs", first, 0.0, 0.38 * w, 0.72 * w), Wave("qrs", second, 0.3 * w, 0.68 * w, w))


def morphology(params: EcgParams, rng: np.random.Generator) -> Morphology:
    """The beat of the rhythm's ventricles (and its P wave) for ``params``."""
    key, w, axis = params.rhythm, float(params.qrs_ms), float(params.axis_deg)
    p = sinus_p(params.p_ms, 0.07 if key == "hyperkalaemia" else 0.24)
    if key == "left_bundle_branch_block":
        qrs = (Wave("qrs", 0.3 * unit((0.9, 0.1, -0.1)), 0.0, 0.18 * w, 0.38 * w),
               Wave("qrs", 1.0 * frontal(axis, -0.75), 0.1 * w, 0.36 * w, 0.64 * w),
               Wave("qrs", 1.05 * frontal(axis - 15, -0.6), 0.32 * w, 0.72 * w, w))
        main = unit(qrs[2].vector)
        return Morphology(p, qrs, t_wave(-0.35 * unit(main + np.array([0, 0, -0.3])), 0.0, 0.55),
                          injury=-0.1 * main, j_ramp_ms=30.0)
    if key == "right_bundle_branch_block":
        left = normal_qrs(axis, 0.68 * w, z=-0.2)
        rv = Wave("qrs", 0.55 * unit((-0.85, 0.15, 0.5)), 0.45 * w, 0.76 * w, w)
        return Morphology(p, (*left, rv), t_wave(0.3 * unit((0.65, 0.6, -0.45)), 0.15, 0.65))
    if key == "wolff_parkinson_white":
        d = float(params.delta_ms or 45)
        delta_vector = 0.6 * unit((0.55, 0.55, 0.6))
        delta = Wave("qrs", delta_vector, 0.0, d + 12, d + 40)
        rest = tuple(Wave(x.kind, x.vector, x.start + d - 8, x.peak + d - 8, x.end + d - 8)
                     for x in normal_qrs(axis, w - d + 8)[1:])
        return Morphology(p, (delta, *rest), t_wave(-0.22 * unit((0.55, 0.4, 0.65)), 0.1, 0.6))
    if key in ("ventricular_tachycardia",) or params.escape == "ventricular":
        z = 0.7 if rng.random() < 0.5 else -0.7
        qrs = _ventricular_qrs(axis, w, z)
        return Morphology(p, qrs, t_wave(-0.45 * unit(qrs[0].vector), 0.12, 0.6))
    qrs = normal_qrs(axis, w)
    if key == "hyperkalaemia":
        t_axis = float(np.clip(axis + rng.uniform(-10, 10), 10, 70))
        return Morphology(p, qrs, t_wave(float(rng.uniform(0.62, 0.8)) * frontal(t_axis, 0.6), 0.42, 0.71))
    t = _t_for(axis, rng)
    if key == "inferior_stemi":
        injury = float(params.st_mv or 0.25) * unit((-0.15, 1.0, -0.05))
        hyperacute = _t_for(axis, rng).vector + 0.3 * unit((-0.1, 1.0, 0.0))
        return Morphology(p, qrs, t_wave(hyperacute, 0.25, 0.6), injury=injury)
    if key == "anterior_stemi":
        injury = float(params.st_mv or 0.25) * unit((0.25, -0.5, 1.0))
        return Morphology(p, qrs, t_wave(0.42 * unit((0.3, -0.2, 1.0)), 0.25, 0.6), injury=injury)
    if key == "long_qt":
        return Morphology(p, qrs, t_wave(0.28 * frontal(float(np.clip(axis, 10, 70)), 0.4), 0.35, 0.68))
    return Morphology(p, qrs, t)


# -- the beats of ten seconds --------------------------------------------------------------------------------------
def _sinus_times(rate: float, rng: np.random.Generator, start: float, end: float, jitter: float = 0.02) -> list[float]:
    """Event times at ``rate`` per minute with a little respiratory variation, from ``start`` to ``end`` ms."""
    mean, phase, times, now, i = 60000.0 / rate, rng.uniform(0, 2 * np.pi), [], start, 0
    while now < end:
        times.append(now)
        now += mean * (1 + jitter * np.sin(2 * np.pi * i / 5.0 + phase) + rng.normal(0, jitter / 4))
        i += 1
    return times


def build(params: EcgParams) -> Recording:
    """Ten seconds of twelve-lead signal for ``params`` (deterministic: the noise comes from ``params.seed``)."""
    rng = np.random.default_rng(params.seed)
    m = morphology(params, rng)
    end = DURATION_S * 1000.0
    key, rr = params.rhythm, params.rr_ms
    beats: list[BeatPlan] = []
    p_waves: list[tuple[float, tuple[Wave, ...]]] = []
    atrial = None

    def beat(onset: float, qt: float | None = None, p_onset: float | None = None) -> BeatPlan:
        return BeatPlan(onset, params.qrs_ms, qt or params.qt_ms, m, p_onset)

    if params.pr_ms is not None:  # every sinus P conducts with the same PR
        first_p = float(rng.uniform(40, min(rr, 900) * 0.6))
        for p_time in _sinus_times(params.ventricular_rate, rng, first_p, end):
            p_waves.append((p_time, m.p))
            beats.append(beat(p_time + params.pr_ms, p_onset=p_time))
    elif key == "atrial_fibrillation":
        now = float(rng.uniform(100, 500))
        while now < end:
            previous = beats[-1].qrs_onset if beats else now - rr
            qt = params.qt_ms * math.sqrt(max(now - previous, 350) / rr)
            beats.append(beat(now, qt=round(qt)))
            now += rr * float(rng.uniform(0.62, 1.38))
            now = max(now, beats[-1].qrs_onset + 330)
        atrial = _fibrillation_waves(params, rng)
    elif key == "atrial_flutter":
        period = 60000.0 / (params.atrial_rate or 300)
        first = float(rng.uniform(0, period))
        atrial = _flutter_waves(period, first, rng)
        ratio, delay = params.conduction_ratio or 2, 0.55 * period + 60
        k = 0
        while first + k * period + delay < end:
            beats.append(beat(first + k * period + delay))
            k += ratio
    else:  # AV dissociation: independent atrial and ventricular rhythms
        for onset in _sinus_times(params.atrial_rate or 75, rng, float(rng.uniform(20, 600)), end, jitter=0.015):
            p_waves.append((onset, m.p if key != "ventricular_tachycardia" else sinus_p(params.p_ms, 0.08)))
        for onset in _sinus_times(params.ventricular_rate, rng, float(rng.uniform(150, min(rr, 1200) * 0.8)), end,
                                  jitter=0.004):
            beats.append(beat(onset))
    return synthesise(beats, p_waves, DURATION_S, rng, atrial)


def _fibrillation_waves(params: EcgParams, rng: np.random.Generator) -> np.ndarray:
    """Fibrillatory baseline: a few drifting oscillations at 350-550/min, largest in V1 and the inferior leads."""
    t = np.arange(int(DURATION_S * FS)) / FS
    base = (params.atrial_rate or 450) / 60.0
    signal = np.zeros_like(t)
    for _ in range(3):
        freq = base * rng.uniform(0.85, 1.15)
        drift = np.cumsum(rng.normal(0, 0.08, t.size))
        signal += rng.uniform(0.5, 1.0) * np.sin(2 * np.pi * freq * t + drift)
    signal *= 0.045 / np.std(signal) * (1 + 0.4 * np.sin(2 * np.pi * rng.uniform(0.1, 0.3) * t))
    return unit((0.25, 0.5, 0.85))[:, None] * signal[None, :]


def _flutter_waves(period_ms: float, first_ms: float, rng: np.random.Generator) -> np.ndarray:
    """Typical (counter-clockwise) flutter: a sawtooth with a slow descent and a quick return, negative in the
    inferior leads and positive in V1."""
    t = np.arange(int(DURATION_S * FS)) * 1000.0 / FS
    phase = ((t - first_ms) / period_ms) % 1.0
    saw = np.where(phase < 0.75, 1 - 2 * phase / 0.75, -1 + 2 * (phase - 0.75) / 0.25)
    saw = np.convolve(saw, np.ones(7) / 7, mode="same")  # the corners of real flutter waves are rounded
    return 0.2 * unit((0.1, 0.9, -0.45))[:, None] * saw[None, :]


# -- what a reader reports ------------------------------------------------------------------------------------------
def rate_of(recording: Recording) -> int:
    """The ventricular rate of a recording: 60000 over its mean RR interval."""
    onsets = [b.qrs_onset for b in recording.beats]
    return round(60000.0 / float(np.mean(np.diff(onsets))))


def measurements(params: EcgParams) -> dict[str, object]:
    """The interval measurements of the tracing as an electrocardiograph prints them (no interpretation): the rate
    from the recording's own RR intervals, PR, QRS, QT, QTc (Bazett, at that rate) and the frontal QRS axis."""
    rate = rate_of(build(params))
    return {
        "ventricular_rate_bpm": rate,
        "pr_interval_ms": params.pr_ms if params.pr_ms is not None else "not measurable (no constant PR)",
        "qrs_duration_ms": params.qrs_ms,
        "qt_interval_ms": params.qt_ms,
        "qtc_bazett_ms": round(params.qt_ms / math.sqrt(60.0 / rate)),
        "qrs_axis_deg": reported_axis(params),
    }


def reported_axis(params: EcgParams) -> int:
    """The frontal QRS axis a reader measures (the net QRS area in I and aVF)."""
    if params.rhythm in ("normal_sinus_rhythm", "sinus_tachycardia", "sinus_bradycardia", "first_degree_av_block",
                         "inferior_stemi", "anterior_stemi", "long_qt", "atrial_fibrillation", "atrial_flutter",
                         "hyperkalaemia") or params.escape == "junctional":
        return params.axis_deg
    m = morphology(params, np.random.default_rng(params.seed))
    return round(net_frontal_axis(m.qrs))


def st_at_j_mv(params: EcgParams) -> dict[str, float]:
    """ST deviation at the J point per lead (mV), as drawn (the injury current projected on each lead)."""
    from clinical_gym.imaging.ecg_signal import project

    m = morphology(params, np.random.default_rng(params.seed))
    return {lead: (project(m.injury, lead, "repol") if m.injury is not None else 0.0) for lead in LEADS}


def meets_stemi_criteria(st_mv: dict[str, float], sex: str, age: float) -> list[tuple[str, str]]:
    """Pairs of contiguous leads whose ST elevation at the J point meets the 4th UDMI cut-points."""
    v2_v3 = STEMI_V2_V3_MV["female" if sex == "female" else "male_40_plus" if age >= 40 else "male_under_40"]

    def elevated(lead: str) -> bool:
        return st_mv[lead] >= (v2_v3 if lead in ("V2", "V3") else STEMI_OTHER_MV) - 1e-9

    return [(a, b) for a, b in CONTIGUOUS if elevated(a) and elevated(b)]
