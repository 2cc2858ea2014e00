"""Each generated image checked against its textbook criteria, measured the way a reader measures it: ECG intervals,
rate, axis and ST deviation from the signal (``ecg_reading``), CTG features from the traces (``ctg_reading``),
spirometry and audiometry from the numbers the chart shows. Every function returns the problems found (empty: the
image meets its criteria). The generator runs these on every task it makes, and the tests on every kind."""

from __future__ import annotations

import numpy as np

from clinical_gym.imaging import audiogram, ctg, ecg_reading, ecg_rhythms, spirometry
from clinical_gym.imaging.ecg_signal import FS

# Secondary ST-T change (conduction, ventricular beats, hyperkalaemia) or flutter waves at the J point: the STEMI
# cut-points do not apply (4th UDMI: in the absence of LBBB, LVH and other confounders).
PRIMARY_ST_EXEMPT = frozenset({"left_bundle_branch_block", "right_bundle_branch_block", "wolff_parkinson_white",
                               "ventricular_tachycardia", "complete_heart_block", "hyperkalaemia", "atrial_flutter"})


def _ms(samples: int) -> float:
    return samples * 1000.0 / FS


def ecg_problems(params: ecg_rhythms.EcgParams, sex: str, age: float) -> list[str]:
    """The rhythm's criteria (``ecg_rhythms.RHYTHMS``), checked on the measured signal."""
    rec = ecg_rhythms.build(params)
    beats = ecg_reading.detect_beats(rec)
    if len(beats) < 3:
        return [f"only {len(beats)} complete QRS complexes detected"]
    key, problems = params.rhythm, []

    def need(ok: bool, text: str) -> None:
        if not ok:
            problems.append(text)

    rr = ecg_reading.rr_intervals_ms(beats)
    rate = ecg_reading.heart_rate(beats)
    reported = ecg_rhythms.measurements(params)
    cv = float(np.std(rr) / np.mean(rr))
    qrs = float(np.median([b.qrs_ms for b in beats]))
    need(abs(rate - reported["ventricular_rate_bpm"]) <= 4,
         f"measured rate {rate:.0f} differs from the reported {reported['ventricular_rate_bpm']}")
    if key != "ventricular_tachycardia":
        need(abs(qrs - params.qrs_ms) <= 12, f"measured QRS {qrs:.0f} ms differs from {params.qrs_ms} ms")
    st = ecg_reading.st_at_j(rec, beats)
    stemi_pairs = ecg_rhythms.meets_stemi_criteria(st, sex, age)
    pr = ecg_reading.pr_ms(rec, beats)
    p_amplitude = ecg_reading.p_wave_amplitude(rec, beats, window_ms=max(250, (params.pr_ms or 0) + 40))
    sinus = params.pr_ms is not None and key not in ("wolff_parkinson_white",)
    if sinus:
        need(cv < 0.06, f"sinus rhythm irregular (RR CV {cv:.2f})")
        need(pr is not None and abs(pr - params.pr_ms) <= 20, f"measured PR {pr} ms differs from {params.pr_ms} ms")
        need(p_amplitude >= (0.04 if key == "hyperkalaemia" else 0.1), f"P waves too small ({p_amplitude:.2f} mV)")
    if key not in PRIMARY_ST_EXEMPT and key not in ("inferior_stemi", "anterior_stemi"):
        need(not stemi_pairs, f"ST elevation meets STEMI criteria in {stemi_pairs}")
    if key == "normal_sinus_rhythm":
        need(60 <= rate <= 100 and 120 <= params.pr_ms <= 200 and qrs < 115 and params.qtc_ms < 450
             and -30 <= reported["qrs_axis_deg"] <= 90, "outside normal sinus rhythm limits")
    elif key == "sinus_tachycardia":
        need(rate > 100, f"rate {rate:.0f} not above 100")
    elif key == "sinus_bradycardia":
        need(rate < 50, f"rate {rate:.0f} not below 50")
    elif key == "first_degree_av_block":
        need(pr is not None and pr > 200 and params.pr_ms > 200, f"PR {pr} not above 200 ms")
    elif key == "long_qt":
        qt = ecg_reading.qt_ms(rec, beats)
        qtc = qt / np.sqrt(np.mean(rr) / 1000)
        need(qtc >= 480 and params.qtc_ms >= 500, f"QTc {qtc:.0f} ms (measured), {params.qtc_ms} (reported)")
    elif key == "atrial_fibrillation":
        need(cv > 0.1, f"RR not irregularly irregular (CV {cv:.2f})")
        need(p_amplitude < 0.1, f"a consistent P wave precedes the QRS ({p_amplitude:.2f} mV)")
    elif key == "atrial_flutter":
        need(cv < 0.03, f"ventricular response not regular (CV {cv:.2f})")
        f_rate = ecg_reading.dominant_rate(rec.leads["III"], 200, 400)
        need(250 <= f_rate <= 350, f"flutter waves at {f_rate:.0f}/min")
    elif key in ("complete_heart_block", "ventricular_tachycardia"):
        p_rate = 60000 / float(np.mean(np.diff(rec.p_onsets)))
        preceding = [b.qrs_onset - max((p for p in rec.p_onsets if p < b.qrs_onset), default=-1e9)
                     for b in rec.beats]
        spread = float(np.std([x for x in preceding if x < 2000]))
        need(spread > 40, f"PR intervals do not vary (sd {spread:.0f} ms): no AV dissociation")
        if key == "complete_heart_block":
            need(p_rate > rate and rate < 60 and cv < 0.05, f"atrial {p_rate:.0f} vs ventricular {rate:.0f}/min")
        else:
            need(rate > 100 and qrs >= 120 and cv < 0.05, f"not a regular wide-complex tachycardia ({rate:.0f}/min, "
                 f"QRS {qrs:.0f} ms)")
    elif key == "left_bundle_branch_block":
        need(qrs >= 120, f"QRS {qrs:.0f} ms")
        for lead in ("I", "V6"):
            need(not _initial_q(rec, beats, lead), f"q wave in {lead}")
        need(_r_peak_time(rec, beats, "V6") > 60, "R peak time in V6 not above 60 ms")
        need(_t_sign(rec, beats, "V6") < 0 < _t_sign(rec, beats, "V1"), "ST-T not discordant in V1/V6")
    elif key == "right_bundle_branch_block":
        need(qrs >= 120, f"QRS {qrs:.0f} ms")
        need(_terminal(rec, beats, "V1") > 0.15 and _minimum(rec, beats, "V1") < -0.1, "no rsR' in V1")
        need(_terminal(rec, beats, "I") < 0 and _terminal(rec, beats, "V6") < 0, "no terminal S in I and V6")
        need(_r_peak_time(rec, beats, "V1") > 50, "R peak time in V1 not above 50 ms")
    elif key == "inferior_stemi":
        need(any(a in ("II", "III", "aVF") for a, _ in stemi_pairs), f"no inferior STEMI criteria: {stemi_pairs}")
        need(st["aVL"] <= -0.05, f"no reciprocal ST depression in aVL ({st['aVL']:.2f} mV)")
    elif key == "anterior_stemi":
        need(any(a in ("V1", "V2", "V3") for a, _ in stemi_pairs), f"no anterior STEMI criteria: {stemi_pairs}")
        need(min(st["III"], st["aVF"]) <= -0.05, "no reciprocal ST depression in III/aVF")
    elif key == "hyperkalaemia":
        height, width = _tallest_t(rec, beats, ("V2", "V3", "V4"))
        need(height >= 0.7 and width <= 130, f"T waves not peaked ({height:.2f} mV, {width:.0f} ms wide at half "
             "height)")
        need(p_amplitude < 0.1, "P waves not flattened")
    elif key == "wolff_parkinson_white":
        need(pr is not None and pr < 120 and params.pr_ms < 120, f"PR {pr} not short")
        need(qrs >= 115 and params.qrs_ms >= 120, f"QRS {qrs:.0f} ms")
        need(_slow_upstroke(rec, beats, ("II", "V5", "V6")), "no delta wave (fast initial upstroke in II, V5, V6)")
    return problems


def _window(rec: ecg_reading.Recording, beat: ecg_reading.Beat, lead: str) -> np.ndarray:
    x = rec.leads[lead][beat.onset:beat.offset]
    return x - ecg_reading.baseline(rec.leads[lead], beat)


def _median(values: list[float]) -> float:
    return float(np.median(values))


def _initial_q(rec, beats, lead: str) -> bool:  # type: ignore[no-untyped-def]
    """A negative initial deflection of 0.05 mV or more within the first 30 ms."""
    n = int(30 * FS / 1000)
    return _median([float(_window(rec, b, lead)[:n].min()) for b in beats]) < -0.05


def _r_peak_time(rec, beats, lead: str) -> float:  # type: ignore[no-untyped-def]
    """QRS onset to the last R peak (the second peak of a notched R: the last local maximum above 60% of the
    tallest)."""
    times = []
    for b in beats:
        w = _window(rec, b, lead)
        tall = 0.6 * float(w.max())
        peaks = [i for i in range(1, len(w) - 1) if w[i] >= tall and w[i] >= w[i - 1] and w[i] >= w[i + 1]]
        times.append(_ms(peaks[-1] if peaks else int(np.argmax(w))))
    return _median(times)


def _terminal(rec, beats, lead: str) -> float:  # type: ignore[no-untyped-def]
    """The mean of the last 30 ms of the QRS (mV)."""
    n = int(30 * FS / 1000)
    values = []
    for b in beats:
        w = _window(rec, b, lead)
        values.append(float(w[-n:].mean()) if float(np.abs(w[-n:]).max()) > 0 else 0.0)
    return _median(values)


def _minimum(rec, beats, lead: str) -> float:  # type: ignore[no-untyped-def]
    return _median([float(_window(rec, b, lead).min()) for b in beats])


def _t_sign(rec, beats, lead: str) -> float:  # type: ignore[no-untyped-def]
    """The mean of the 200 ms after the QRS (mV): the ST segment and T wave's direction."""
    n = int(200 * FS / 1000)
    return _median([float((rec.leads[lead][b.offset:b.offset + n]
                           - ecg_reading.baseline(rec.leads[lead], b)).mean()) for b in beats])


def _tallest_t(rec, beats, leads: tuple[str, ...]) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Height (mV) and width at half height (ms) of the tallest T wave among ``leads``."""
    best = (0.0, 1e9)
    for lead in leads:
        heights, widths = [], []
        for b, nxt in zip(beats, beats[1:]):
            x = rec.leads[lead][b.offset:nxt.onset] - ecg_reading.baseline(rec.leads[lead], b)
            peak = int(np.argmax(x))
            if x[peak] <= 0:
                continue
            above = np.flatnonzero(x >= x[peak] / 2)
            heights.append(float(x[peak]))
            widths.append(_ms(int(above[-1] - above[0])))
        if not heights:
            continue
        if _median(heights) > best[0]:
            best = (_median(heights), _median(widths))
    return best


def _slow_upstroke(rec, beats, leads: tuple[str, ...]) -> bool:  # type: ignore[no-untyped-def]
    """In one of ``leads``, the first 30 ms of the QRS rise at under half the complex's steepest slope (a delta
    wave)."""
    n = int(30 * FS / 1000)

    def ratio(lead: str) -> float:
        values = []
        for b in beats:
            slope = np.abs(np.diff(_window(rec, b, lead)))
            values.append(float(slope[:n].max() / slope.max()))
        return _median(values)

    return min(ratio(lead) for lead in leads) < 0.5


def ctg_problems(params: ctg.CtgParams) -> list[str]:
    """The tracing's NICHD features read off the traces agree with those it was drawn with."""
    return [] if ctg.readable(params) else [f"the {params.scenario} tracing reads as other features"]


def spirometry_problems(params: spirometry.SpirometryParams) -> list[str]:
    values = spirometry.results(params)
    found = spirometry.classify(values, params.plateau_l_s is not None)
    return [] if found == params.pattern else [f"the numbers meet {found}, not {params.pattern}: {values}"]


def audiogram_problems(params: audiogram.AudiogramParams) -> list[str]:
    s = audiogram.summary(params)
    right, left = params.right_air, params.left_air
    gaps = s["max_air_bone_gap_db"]
    problems = []
    if params.pattern == "normal" and max(*right.values(), *left.values()) > 20:
        problems.append("a threshold worse than 20 dB HL")
    if params.pattern == "presbycusis" and not all(
            ear[4000] >= 35 and ear[8000] >= 45 and ear[500] <= 35 for ear in (right, left)):
        problems.append("not a bilateral sloping high-frequency loss")
    if params.pattern == "noise_induced" and not all(
            ear[4000] - max(ear[1000], ear[2000]) >= 15 and ear[4000] - ear[8000] >= 10 for ear in (right, left)):
        problems.append("no bilateral 4 kHz notch with recovery at 8 kHz")
    if params.pattern == "conductive":
        ear = params.affected_ear or "right"
        bone = params.right_bone if ear == "right" else params.left_bone
        if gaps[ear] < audiogram.AIR_BONE_GAP_DB or max(bone.values()) > 20:
            problems.append("no air-bone gap over normal bone conduction")
    if params.pattern == "asymmetric_sensorineural" and (not s["asymmetric_frequency_pairs"]
                                                         or max(gaps.values()) > 10):
        problems.append("no sensorineural asymmetry at two adjacent frequencies")
    if params.pattern in ("normal", "presbycusis", "noise_induced") and s["asymmetric_frequency_pairs"]:
        problems.append(f"asymmetric at {s['asymmetric_frequency_pairs']}")
    return problems
