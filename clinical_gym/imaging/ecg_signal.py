"""Twelve-lead ECG signals from a heart-vector model: every wave (P, the parts of the QRS, ST injury current, T,
atrial flutter and fibrillation waves) is a cardiac dipole whose direction in the body's axes (x left, y inferior,
z anterior) is projected onto each lead. Limb leads are exact projections, so Einthoven's and Goldberger's
relations hold (II = I + III, aVR = -(I + II)/2, ...), as on a recording machine that measures I and II; reciprocal
ST change comes out of the geometry (an inferior injury vector is negative in aVL).

Waves have compact support (raised-cosine rise and fall), so each beat's fiducial points are exact: P onset, QRS
onset and offset (the J point), T end. A ``BeatPlan`` says when each wave happens; ``synthesise`` turns plans and a
``Morphology`` into lead signals in millivolts at ``FS`` samples per second.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

FS = 500  # samples per second
LEADS = ("I", "II", "III", "aVR", "aVL", "aVF", "V1", "V2", "V3", "V4", "V5", "V6")
# Lead vectors in the body's axes (x left, y inferior, z anterior). Limb leads: Einthoven's triangle and
# Goldberger's augmented leads; chest leads: the horizontal-plane angles of V1-V6 around the heart.
_I = np.array([1.0, 0.0, 0.0])
_II = np.array([0.5, np.sqrt(3) / 2, 0.0])
_III = _II - _I
LEAD_VECTORS: dict[str, np.ndarray] = {
    "I": _I, "II": _II, "III": _III, "aVR": -(_I + _II) / 2, "aVL": (_I - _III) / 2, "aVF": (_II + _III) / 2,
    **{name: np.array([np.cos(np.radians(a)), 0.1, np.sin(np.radians(a))])
       for name, a in (("V1", 120), ("V2", 95), ("V3", 75), ("V4", 55), ("V5", 30), ("V6", 8))},
}
CHEST = frozenset({"V1", "V2", "V3", "V4", "V5", "V6"})
# Chest electrodes sit close to the heart: their deflections are larger than the limb leads' (by wave kind).
CHEST_GAIN = {"p": 1.0, "qrs": 2.0, "repol": 1.6, "atrial": 1.3}
PROXIMITY = {"V1": 0.85, "V2": 1.1, "V3": 1.15, "V4": 1.1, "V5": 0.95, "V6": 0.8}  # V2-V4 lie closest


def unit(v: tuple[float, float, float] | np.ndarray) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    return a / np.linalg.norm(a)


def frontal(angle_deg: float, z: float = 0.0) -> np.ndarray:
    """A unit vector at ``angle_deg`` in the frontal plane (0 = lead I, +90 = aVF), tilted by ``z`` anteriorly."""
    a = np.radians(angle_deg)
    return unit((np.cos(a), np.sin(a), z))


@dataclass(frozen=True)
class Wave:
    """A dipole ``vector`` (mV) switched on with a raised-cosine rise from ``start`` to ``peak`` and fall to ``end``
    (ms from the wave's reference point); ``kind`` picks the chest-lead gain."""

    kind: str
    vector: np.ndarray
    start: float
    peak: float
    end: float


def bump(t: np.ndarray, start: float, peak: float, end: float) -> np.ndarray:
    """0 outside [start, end], 1 at ``peak``, raised-cosine rise and fall (continuous slope)."""
    out = np.zeros_like(t)
    rise = (t >= start) & (t < peak)
    fall = (t >= peak) & (t <= end)
    if peak > start:
        out[rise] = 0.5 - 0.5 * np.cos(np.pi * (t[rise] - start) / (peak - start))
    if end > peak:
        out[fall] = 0.5 + 0.5 * np.cos(np.pi * (t[fall] - peak) / (end - peak))
    out[t == peak] = 1.0
    return out


@dataclass(frozen=True)
class Morphology:
    """The waves of one kind of beat: ``p`` relative to P onset, ``qrs`` relative to QRS onset, ``repol`` (ST injury
    and T) relative to QRS onset, scaled in time to the beat's QT by ``synthesise``."""

    p: tuple[Wave, ...]
    qrs: tuple[Wave, ...]
    t: Wave
    injury: np.ndarray | None = None  # ST injury vector (mV at the J point), None: no ST deviation
    j_ramp_ms: float = 20.0  # how long before the J point the injury current reaches full size


@dataclass(frozen=True)
class BeatPlan:
    """One ventricular beat at ``qrs_onset`` (ms) with QRS duration ``qrs_ms`` and QT ``qt_ms``, its ``morphology``,
    and the P wave that conducted it (``p_onset`` ms, None: no P before it)."""

    qrs_onset: float
    qrs_ms: float
    qt_ms: float
    morphology: Morphology
    p_onset: float | None = None


@dataclass
class Recording:
    """Lead signals (mV, ``FS`` Hz) and the truth behind them: beats, the P waves that fired (conducted or not),
    and each lead's ST deviation at the J point as drawn (mV, from the injury current)."""

    leads: dict[str, np.ndarray]
    beats: list[BeatPlan]
    p_onsets: list[float]
    duration_s: float
    st_at_j: dict[str, float] = field(default_factory=dict)

    @property
    def times_ms(self) -> np.ndarray:
        return np.arange(len(self.leads["I"])) * 1000.0 / FS


def gain(lead: str, kind: str) -> float:
    """How much larger a wave of ``kind`` is in ``lead`` than its projection (1 for the limb leads)."""
    return CHEST_GAIN[kind] * PROXIMITY[lead] if lead in CHEST else 1.0


def project(vector: np.ndarray, lead: str, kind: str) -> float:
    return float(gain(lead, kind) * LEAD_VECTORS[lead] @ vector)


def synthesise(beats: list[BeatPlan], p_waves: list[tuple[float, tuple[Wave, ...]]], duration_s: float,
               rng: np.random.Generator, atrial: np.ndarray | None = None, noise_mv: float = 0.008,
               wander_mv: float = 0.03) -> Recording:
    """Lead signals for ``beats`` plus ``p_waves`` (P onset, waves) that fire whether or not they conduct, an
    optional ``atrial`` activity signal (3 x samples: flutter or fibrillation waves), measurement noise and slow
    baseline wander. Noise is added to I, II and the chest leads; III, aVR, aVL and aVF are computed from I and II,
    as an electrocardiograph does."""
    n = int(round(duration_s * FS))
    t = np.arange(n) * 1000.0 / FS
    by_kind = {kind: np.zeros((3, n)) for kind in CHEST_GAIN}

    def add(kind: str, vector: np.ndarray, shape: np.ndarray) -> None:
        by_kind[kind] += vector[:, None] * shape[None, :]

    for onset, waves in p_waves:
        for w in waves:
            add("p", w.vector, bump(t, onset + w.start, onset + w.peak, onset + w.end))
    for beat in beats:
        m, q0 = beat.morphology, beat.qrs_onset
        scale = beat.qrs_ms / max(w.end for w in m.qrs)  # waves may be written for another QRS length
        for w in m.qrs:
            add("qrs", w.vector, bump(t, q0 + w.start * scale, q0 + w.peak * scale, q0 + w.end * scale))
        j, t_end = q0 + beat.qrs_ms, q0 + beat.qt_ms
        t_start = j + m.t.start * (beat.qt_ms - beat.qrs_ms)
        t_peak = j + m.t.peak * (beat.qt_ms - beat.qrs_ms)
        add("repol", m.t.vector, bump(t, t_start, t_peak, t_end))
        if m.injury is not None:
            ramp = np.clip((t - (j - m.j_ramp_ms)) / m.j_ramp_ms, 0.0, 1.0)
            ramp = 0.5 - 0.5 * np.cos(np.pi * ramp)
            plateau = np.where(t <= t_peak, ramp, bump(t, t_peak - 1e-6, t_peak, t_end))
            plateau[t < j - m.j_ramp_ms] = 0.0
            add("repol", m.injury, plateau)
    if atrial is not None:
        by_kind["atrial"] += atrial[:, :n]

    def clean(lead: str) -> np.ndarray:
        return sum(gain(lead, k) * (LEAD_VECTORS[lead] @ by_kind[k]) for k in by_kind)  # type: ignore[return-value]

    def disturbance() -> np.ndarray:
        phase, freq = rng.uniform(0, 2 * np.pi), rng.uniform(0.12, 0.3)
        return wander_mv * np.sin(2 * np.pi * freq * t / 1000 + phase) + rng.normal(0, noise_mv, n)

    lead_i, lead_ii = clean("I") + disturbance(), clean("II") + disturbance()
    leads = {"I": lead_i, "II": lead_ii, "III": lead_ii - lead_i, "aVR": -(lead_i + lead_ii) / 2,
             "aVL": lead_i - lead_ii / 2, "aVF": lead_ii - lead_i / 2}
    for name in ("V1", "V2", "V3", "V4", "V5", "V6"):
        leads[name] = clean(name) + disturbance()
    injury = next((b.morphology.injury for b in beats if b.morphology.injury is not None), None)
    st = {lead: (project(injury, lead, "repol") if injury is not None else 0.0) for lead in LEADS}
    return Recording(leads={k: leads[k] for k in LEADS}, beats=beats, p_onsets=[o for o, _ in p_waves],
                     duration_s=duration_s, st_at_j=st)


# -- the waves of the common beat kinds ----------------------------------------------------------------------------
def sinus_p(duration_ms: float, amplitude_mv: float = 0.24, axis_deg: float = 55.0) -> tuple[Wave, ...]:
    """A sinus P wave: right atrium (anterior) then left atrium (posterior), so V1 is biphasic."""
    d = duration_ms
    return (Wave("p", amplitude_mv * 0.6 * frontal(axis_deg + 10, 0.6), 0.0, 0.38 * d, 0.78 * d),
            Wave("p", amplitude_mv * 0.6 * frontal(axis_deg - 10, -0.5), 0.22 * d, 0.62 * d, d))


def normal_qrs(axis_deg: float, qrs_ms: float, amplitude_mv: float = 1.3, z: float = -0.38) -> tuple[Wave, ...]:
    """Septal (rightward, anterior) q, the main left-ventricular R, terminal (superior, posterior) s; the main
    vector is chosen so that the net frontal QRS area points at ``axis_deg``."""
    w = qrs_ms
    septal = Wave("qrs", 0.22 * unit((-0.55, 0.35, 0.75)), 0.0, 0.16 * w, 0.36 * w)
    terminal = Wave("qrs", 0.3 * unit((-0.45, -0.6, -0.35)), 0.58 * w, 0.8 * w, w)
    main_span = (0.14 * w, 0.45 * w, 0.8 * w)
    main = _aimed(axis_deg, amplitude_mv, (septal, terminal), main_span, z=z)
    return septal, Wave("qrs", main, *main_span), terminal


def _aimed(axis_deg: float, magnitude: float, others: tuple[Wave, ...], span: tuple[float, float, float],
           z: float) -> np.ndarray:
    """The main vector whose frontal part, added to the other waves' frontal areas, points at ``axis_deg``."""
    def area(wave_span: tuple[float, float, float]) -> float:
        return (wave_span[2] - wave_span[0]) / 2  # the area of a raised-cosine bump of height 1

    other = sum((w.vector[:2] * area((w.start, w.peak, w.end)) for w in others), np.zeros(2))
    u = np.array([np.cos(np.radians(axis_deg)), np.sin(np.radians(axis_deg))])
    target = magnitude * area(span)
    along = float(u @ other)
    s = along + np.sqrt(max(along ** 2 - float(other @ other) + target ** 2, 0.0))
    planar = (s * u - other) / area(span)
    return np.array([planar[0], planar[1], z * magnitude])


def net_frontal_axis(qrs: tuple[Wave, ...]) -> float:
    """The frontal-plane direction (degrees) of the QRS waves' net area, as a reader's axis from leads I and aVF."""
    total = sum((w.vector[:2] * (w.end - w.start) / 2 for w in qrs), np.zeros(2))
    return float(np.degrees(np.arctan2(total[1], total[0])))


def t_wave(vector: np.ndarray, start: float = 0.25, peak: float = 0.72) -> Wave:
    """A T wave: ``start`` and ``peak`` as fractions of the J-point-to-T-end interval (the end is T end)."""
    return Wave("repol", vector, start, peak, 1.0)
