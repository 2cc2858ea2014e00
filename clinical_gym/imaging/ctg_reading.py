"""A reader's measurements of a CTG taken from the traces alone, by the NICHD definitions
(``clinical_gym.imaging.ctg``): contractions from the toco channel, the baseline (mean FHR over the stable
segments, rounded to 5 bpm), variability (median peak-to-trough per minute), accelerations, decelerations with their
shape (abrupt or gradual), timing against the contractions (early, late) and duration (prolonged), and a sinusoidal
rhythm. ``features`` gives the arguments of the Obstetrics classifier, so a trace can be categorised from the
signal its picture is drawn from alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clinical_gym.imaging.ctg import FS_HZ, CtgTrace

ABSENT_BELOW_BPM = 2.0  # a peak-to-trough range this small is "undetectable"


def _smooth(x: np.ndarray, seconds: float) -> np.ndarray:
    n = max(1, int(seconds * FS_HZ))
    padded = np.pad(x, n, mode="edge")
    return np.convolve(padded, np.ones(n) / n, mode="same")[n:-n]


def contraction_peaks(trace: CtgTrace) -> list[float]:
    """Times (s) of toco peaks at least 20 mmHg above the resting tone and 60 s apart."""
    toco = _smooth(trace.toco, 4)
    tone = float(np.percentile(toco, 20))
    peaks: list[int] = []
    for i in np.flatnonzero((toco[1:-1] >= toco[:-2]) & (toco[1:-1] > toco[2:]) & (toco[1:-1] > tone + 20)) + 1:
        if peaks and (i - peaks[-1]) / FS_HZ < 60:
            if toco[i] > toco[peaks[-1]]:
                peaks[-1] = int(i)
            continue
        peaks.append(int(i))
    return [p / FS_HZ for p in peaks]


def baseline(trace: CtgTrace) -> int:
    """Mean FHR over the segments free of periodic changes (where the 15 s smoothed FHR stays within 8 bpm of the
    current estimate, iterated from the median), rounded to 5 bpm."""
    smooth = _smooth(trace.fhr, 15)
    centre = float(np.median(trace.fhr))
    for _ in range(4):
        stable = trace.fhr[np.abs(smooth - centre) <= 8]
        centre = float(np.mean(stable)) if stable.size else centre
    return int(5 * round(centre / 5))


def variability(trace: CtgTrace, base: float, changes: list[tuple[float, float]] = ()) -> float:
    """Median peak-to-trough FHR range per minute, over each minute's samples clear of periodic changes
    (``changes``: (start, end) s of the accelerations and decelerations, widened by 5 s) and within 15 bpm of the
    baseline; a minute counts when 30 s or more of it is clear."""
    n = int(60 * FS_HZ)
    t = trace.times_s
    clear = np.abs(trace.fhr - base) <= 15
    for start, end in changes:
        clear &= ~((t >= start - 5) & (t <= end + 5))
    ranges = []
    for i in range(0, len(trace.fhr) - n + 1, n):
        keep = clear[i:i + n]
        if keep.sum() >= n // 2:
            ranges.append(float(np.ptp(trace.fhr[i:i + n][keep])))
    return float(np.median(ranges)) if ranges else 0.0


@dataclass(frozen=True)
class Deceleration:
    onset_s: float
    nadir_s: float
    end_s: float
    depth_bpm: float
    kind: str  # early, late, variable, prolonged


def decelerations(trace: CtgTrace, base: float, peaks: list[float]) -> list[Deceleration]:
    """Falls of the (15 s smoothed) FHR 10 bpm or more below the baseline for 15 s or more, classified by duration
    (>= 2 min prolonged), the time from onset to nadir (< 30 s abrupt: variable; measured as twice the time from the
    half-depth point to the nadir, which noise at the shoulders does not move) and, for gradual ones, the nadir's
    lag behind the nearest contraction peak (within 12 s early, later late)."""
    fhr = _smooth(trace.fhr, 15)
    t = trace.times_s
    found = []
    for i, j in runs(fhr < base - 10, 15):
        nadir = i + int(np.argmin(fhr[i:j]))
        start = i
        while start > 0 and fhr[start] < base - 2:
            start -= 1
        end = min(j, len(fhr) - 1)
        while end < len(fhr) - 1 and fhr[end] < base - 2:
            end += 1
        half = nadir
        while half > start and fhr[half] < base - (base - fhr[nadir]) / 2:
            half -= 1
        onset_to_nadir = 2 * (t[nadir] - t[half])
        lag = t[nadir] - min(peaks, key=lambda p: abs(p - t[nadir])) if peaks else 0.0
        if t[end] - t[start] >= 120:
            kind = "prolonged"
        elif onset_to_nadir < 30:
            kind = "variable"
        else:
            kind = "early" if abs(lag) <= 12 else "late"
        found.append(Deceleration(float(t[start]), float(t[nadir]), float(t[end]), float(base - fhr[nadir]), kind))
    return found


def runs(mask: np.ndarray, min_seconds: float) -> list[tuple[int, int]]:
    """[start, stop) sample ranges where ``mask`` holds for at least ``min_seconds``."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2]) if (b - a) / FS_HZ >= min_seconds]


def accelerations(trace: CtgTrace, base: float) -> list[tuple[float, float]]:
    """Rises of the FHR 15 bpm or more above the baseline lasting 15 s or more (time above baseline + 5): (start,
    end) in seconds."""
    fhr = _smooth(trace.fhr, 3)
    return [(i / FS_HZ, j / FS_HZ) for i, j in runs(fhr > base + 5, 15) if float(np.max(fhr[i:j])) >= base + 15]


def sinusoidal(trace: CtgTrace) -> bool:
    """A smooth regular undulation: a single spectral peak at 3-5 cycles/min holding most of the detrended FHR's
    power (within 0.6 cycles/min of it), 10 bpm or more from peak to trough."""
    x = trace.fhr - _smooth(trace.fhr, 120)
    power = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / FS_HZ) * 60  # cycles per minute
    peak = float(freqs[1:][np.argmax(power[1:])])
    near = np.abs(freqs - peak) <= 0.6
    return bool(2.5 <= peak <= 5.5 and power[near].sum() / power[1:].sum() > 0.5
                and np.percentile(x, 95) - np.percentile(x, 5) >= 10)


def pattern(found: list[Deceleration], kind: str, contractions: int) -> str:
    """"recurrent" when decelerations of ``kind`` come with half or more of the contractions, else "intermittent"
    or "none"."""
    n = sum(d.kind == kind for d in found)
    if n == 0:
        return "none"
    return "recurrent" if contractions and n / contractions >= 0.5 else "intermittent"


def features(trace: CtgTrace, duration_min: float) -> dict[str, Any]:
    """The Obstetrics classifier's arguments (``fetal_heart_category``) as read from the traces."""
    base = baseline(trace)
    peaks = contraction_peaks(trace)
    sine = sinusoidal(trace)
    found = decelerations(trace, base, peaks)
    rises = accelerations(trace, base)
    amplitude = 0.0 if sine else variability(trace, base, [*rises, *((d.onset_s, d.end_s) for d in found)])
    return {
        "baseline_bpm": base,
        "variability_amplitude_bpm": 0.0 if amplitude < ABSENT_BELOW_BPM else round(amplitude, 1),
        "accelerations": bool(rises),
        "early_decelerations": any(d.kind == "early" for d in found),
        "late_decelerations": pattern(found, "late", len(peaks)),
        "variable_decelerations": pattern(found, "variable", len(peaks)),
        "prolonged_deceleration": any(d.kind == "prolonged" for d in found),
        "sinusoidal_pattern": sine,
        "contractions_per_10_min": round(len(peaks) * 10 / duration_min, 1),
    }
