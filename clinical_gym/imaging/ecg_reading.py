"""A reader's measurements taken from the signal alone (no use of how it was made), as global intervals over all
twelve leads (the AHA/ACCF/HRS 2009 recommendation): QRS complexes from the spatial velocity, rate from the RR
intervals, PR from the P-wave onset, QRS onset and offset, QT to the end of the T wave, the frontal axis from the net
QRS area in I and aVF, and ST deviation at the J point against the PR-segment baseline. The tests check each
generated rhythm against its textbook criteria with these."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clinical_gym.imaging.ecg_signal import FS, LEADS, Recording

MS = 1000.0 / FS


def _smooth(x: np.ndarray, ms: float) -> np.ndarray:
    n = max(1, int(round(ms / MS)))
    return np.convolve(x, np.ones(n) / n, mode="same")


def spatial_velocity(rec: Recording, high_pass_ms: float | None = None) -> np.ndarray:
    """The summed absolute slope of all twelve leads (mV per sample), lightly smoothed; with ``high_pass_ms``,
    of the leads less their moving average over that span (slow waves such as T waves drop out)."""
    def prepared(x: np.ndarray) -> np.ndarray:
        x = _smooth(x, 6.0)
        return x - _smooth(x, high_pass_ms) if high_pass_ms else x

    slopes = sum(np.abs(np.gradient(prepared(rec.leads[lead]))) for lead in LEADS)
    return _smooth(slopes, 10.0)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Beat:
    """One detected QRS complex (sample indices): ``peak`` of the spatial velocity, ``onset`` and ``offset``."""

    peak: int
    onset: int
    offset: int

    @property
    def qrs_ms(self) -> float:
        return (self.offset - self.onset) * MS


def detect_beats(rec: Recording, refractory_ms: float = 250.0) -> list[Beat]:
    """QRS complexes: peaks of the spatial velocity above 35% of its maximum, at least ``refractory_ms`` apart, with
    onset and offset where the velocity falls to 7% of the beat's peak above the noise floor."""
    v = spatial_velocity(rec)
    sharp = spatial_velocity(rec, high_pass_ms=60.0)  # finds the complexes; T waves barely register
    floor = float(np.percentile(v, 20))
    sharp_floor = float(np.percentile(sharp, 20))
    threshold = sharp_floor + 0.35 * (float(np.percentile(sharp, 99.5)) - sharp_floor)
    gap = int(refractory_ms / MS)
    peaks: list[int] = []
    for i in np.flatnonzero((sharp[1:-1] > threshold) & (sharp[1:-1] >= sharp[:-2]) & (sharp[1:-1] >= sharp[2:])) + 1:
        if peaks and i - peaks[-1] < gap:
            if sharp[i] > sharp[peaks[-1]]:
                peaks[-1] = int(i)
            continue
        peaks.append(int(i))
    beats = []
    quiet = int(16 / MS)  # the velocity must stay below the level this long to end (or start) a complex
    for p in peaks:
        level = floor + 0.07 * (v[p] - floor)
        onset = p
        while onset > quiet and not np.all(v[onset - quiet:onset + 1] < level):
            onset -= 1
        offset = p
        while offset < len(v) - quiet - 1 and not np.all(v[offset:offset + quiet + 1] < level):
            offset += 1
        if quiet < onset and offset < len(v) - quiet - 1:  # complete complexes only
            beats.append(Beat(p, onset, offset))
    return _merge_split_complexes(beats)


def _merge_split_complexes(beats: list[Beat]) -> list[Beat]:
    """A notched wide QRS can dip below the threshold mid-complex: complexes that touch are one."""
    merged: list[Beat] = []
    for b in beats:
        if merged and b.onset - merged[-1].offset < int(20 / MS):
            last = merged[-1]
            merged[-1] = Beat(last.peak, last.onset, b.offset)
        else:
            merged.append(b)
    return merged


def rr_intervals_ms(beats: list[Beat]) -> np.ndarray:
    return np.diff([b.onset for b in beats]) * MS


def heart_rate(beats: list[Beat]) -> float:
    """Ventricular rate (/min) from the mean RR interval."""
    return 60000.0 / float(np.mean(rr_intervals_ms(beats)))


def baseline(lead: np.ndarray, beat: Beat) -> float:
    """The PR-segment level just before the QRS (20-10 ms before its onset)."""
    a, b = beat.onset - int(20 / MS), beat.onset - int(8 / MS)
    return float(np.median(lead[max(a, 0):max(b, 1)]))


def st_at_j(rec: Recording, beats: list[Beat]) -> dict[str, float]:
    """Median ST deviation at the J point (QRS offset) per lead, mV, against the PR-segment baseline."""
    return {lead: float(np.median([rec.leads[lead][b.offset] - baseline(rec.leads[lead], b) for b in beats]))
            for lead in LEADS}


def qrs_axis(rec: Recording, beats: list[Beat]) -> float:
    """Frontal QRS axis (degrees): net QRS area in I and aVF (aVF rescaled by 2/sqrt(3), its projection factor)."""
    def area(lead: str) -> float:
        return float(np.median([np.sum(rec.leads[lead][b.onset:b.offset] - baseline(rec.leads[lead], b))
                                for b in beats]))

    return float(np.degrees(np.arctan2(area("aVF") * 2 / np.sqrt(3), area("I"))))


def qt_ms(rec: Recording, beats: list[Beat], leads: tuple[str, ...] = ("II", "V2", "V3", "V4", "V5")) -> float:
    """Median QT: QRS onset to the end of the T wave, where the T wave (largest in the given leads) returns to 2% of
    its peak deviation from baseline, looked for before the next QRS."""
    values = []
    for b, nxt in zip(beats, beats[1:]):
        ends = []
        for lead in leads:
            x = _smooth(rec.leads[lead], 8.0) - baseline(rec.leads[lead], b)
            lo, hi = b.offset + int(40 / MS), nxt.onset - int(10 / MS)
            if hi - lo < 10:
                continue
            seg = np.abs(x[lo:hi])
            peak = int(np.argmax(seg))
            if seg[peak] < 0.05:
                continue
            after = np.flatnonzero(seg[peak:] < 0.02 * seg[peak] + 0.01)
            if after.size:
                ends.append((seg[peak], lo + peak + int(after[0])))
        if ends:
            values.append((max(ends)[1] - b.onset) * MS)
    return float(np.median(values))


def pr_ms(rec: Recording, beats: list[Beat], lead: str = "II") -> float | None:
    """Median PR: from the onset of the P wave (the deflection above 0.05 mV nearest before the QRS, within 420 ms,
    traced back to where it starts) to the QRS onset; None when no P wave precedes most complexes."""
    values = []
    for b in beats:
        x = np.abs(_smooth(rec.leads[lead], 12.0) - baseline(rec.leads[lead], b))
        i, stop = b.onset - int(25 / MS), b.onset - int(420 / MS)
        if stop < 0:
            continue
        while i > stop and x[i] < 0.05:
            i -= 1
        if i <= stop:
            continue
        while i > stop and x[i - 1] >= x[i]:  # up to the P wave's peak
            i -= 1
        peak = x[i]
        while i > stop and x[i] > 0.06 * peak + 0.006:
            i -= 1
        values.append((b.onset - i) * MS)
    return float(np.median(values)) if len(values) >= max(2, len(beats) // 2) else None


def p_wave_amplitude(rec: Recording, beats: list[Beat], lead: str = "II", window_ms: float = 250.0) -> float:
    """Peak of the averaged ``window_ms`` before each QRS onset (mV, against the local baseline): a sinus P wave
    shows, fibrillatory waves average out."""
    windows = [rec.leads[lead][b.onset - int(window_ms / MS):b.onset - int(20 / MS)] - baseline(rec.leads[lead], b)
               for b in beats if b.onset - int(window_ms / MS) >= 0]
    return float(np.max(np.abs(np.mean(windows, axis=0))))


def dominant_rate(signal: np.ndarray, low_per_min: float, high_per_min: float) -> float:
    """The frequency (per minute) of the strongest spectral peak between the two rates (e.g. flutter waves)."""
    x = signal - np.mean(signal)
    power = np.abs(np.fft.rfft(x * np.hanning(len(x)))) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / FS) * 60
    band = (freqs >= low_per_min) & (freqs <= high_per_min)
    return float(freqs[band][np.argmax(power[band])])
