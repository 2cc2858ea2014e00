"""What a study shows: its image (PNG, rendered once per process and cached), the measurements its machine
prints, and the description a reader would dictate (what ``image_mode="describe"`` shows in place of the image).
Neither the measurements nor the description name the diagnosis."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np

from clinical_gym.content_parts import png_data_url
from clinical_gym.imaging import audiogram, ctg, ecg_paper, ecg_rhythms, spirometry
from clinical_gym.domains.visual_diagnosis.data_model import Patient, Study

ST_REPORTED_MM = 0.5  # ST deviations a reader mentions


def header(study: Study, patient: Patient) -> tuple[str, str]:
    return (f"{patient.patient_id}   {patient.age} y {patient.sex}   {study.acquired}",
            f"Study {study.study_id} - {study.title} - {study.setting}")


@lru_cache(maxsize=512)
def _png(study_json: str, patient_json: str) -> bytes:
    study, patient = Study.model_validate_json(study_json), Patient.model_validate_json(patient_json)
    title, subtitle = header(study, patient)
    if study.kind in ("ecg_12_lead", "rhythm_strip"):
        assert study.ecg is not None
        recording = ecg_rhythms.build(study.ecg)
        if study.kind == "rhythm_strip":
            return ecg_paper.rhythm_strip(recording, study.lead or "II", title, subtitle)
        if study.layout == "alternate":
            return ecg_paper.twelve_lead_6x2(recording, title, subtitle)
        return ecg_paper.twelve_lead(recording, title, subtitle)
    if study.kind == "ctg":
        assert study.ctg is not None
        return ctg.render(ctg.build(study.ctg), study.ctg, title, subtitle)
    if study.kind == "spirometry":
        assert study.spirometry is not None
        return spirometry.render(study.spirometry, title, subtitle, loop_right=study.layout == "alternate")
    assert study.audiogram is not None
    return audiogram.render(study.audiogram, title, subtitle, combined=study.layout == "alternate")


def png(study: Study, patient: Patient) -> bytes:
    """The study's image as PNG bytes (rendered once per process)."""
    return _png(study.model_dump_json(), patient.model_dump_json())


@lru_cache(maxsize=512)
def _url(study_json: str, patient_json: str) -> str:
    return png_data_url(_png(study_json, patient_json))


def data_url(study: Study, patient: Patient) -> str:
    """The study's image as a ``data:image/png;base64,...`` URL."""
    return _url(study.model_dump_json(), patient.model_dump_json())


def strip_of(study: Study, lead: str) -> Study:
    """A 10-second rhythm strip of ``lead`` cut from an ECG study."""
    return study.model_copy(update={"kind": "rhythm_strip", "lead": lead, "study_id": f"{study.study_id}-{lead}"})


# -- measurements ------------------------------------------------------------------------------------------------
def measurements(study: Study) -> dict[str, Any]:
    """What the machine prints for the study (intervals, CTG analysis, spirometry results, audiometric thresholds);
    computed once per process (a copy is returned)."""
    return json.loads(_measurements(study.model_dump_json()))


@lru_cache(maxsize=1024)
def _measurements(study_json: str) -> str:
    return json.dumps(_measure(Study.model_validate_json(study_json)))


def _measure(study: Study) -> dict[str, Any]:
    if study.ecg is not None:
        return ecg_rhythms.measurements(study.ecg)
    if study.ctg is not None:
        trace = ctg.build(study.ctg)
        return {"baseline_bpm": study.ctg.baseline_bpm,
                "variability_amplitude_bpm": round(study.ctg.variability_bpm),
                "accelerations": len(trace.accelerations_s), "decelerations": len(trace.decelerations),
                "deepest_deceleration_bpm": round(max((d["depth_bpm"] for d in trace.decelerations), default=0)),
                "contractions_per_10_min": round(len(trace.contraction_peaks_s) * 10 / study.ctg.duration_min, 1),
                "paper_speed_cm_per_min": study.ctg.paper_speed_cm_min, "duration_min": study.ctg.duration_min}
    if study.spirometry is not None:
        return spirometry.results(study.spirometry)
    assert study.audiogram is not None
    found = audiogram.summary(study.audiogram)
    return {k: v for k, v in found.items() if k != "who_grade_better_ear"}


# -- what a reader dictates ---------------------------------------------------------------------------------------
def describe(study: Study) -> str:
    """The reader's description of the image (findings, no diagnosis); computed once per process."""
    return _describe(study.model_dump_json())


@lru_cache(maxsize=1024)
def _describe(study_json: str) -> str:
    study = Study.model_validate_json(study_json)
    if study.ecg is not None:
        return describe_ecg(study.ecg, study.lead if study.kind == "rhythm_strip" else None)
    if study.ctg is not None:
        return describe_ctg(study.ctg)
    if study.spirometry is not None:
        return describe_spirometry(study.spirometry)
    assert study.audiogram is not None
    return describe_audiogram(study.audiogram)


def _leads(names: list[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def describe_ecg(p: ecg_rhythms.EcgParams, strip_lead: str | None = None) -> str:
    m = ecg_rhythms.measurements(p)
    rate, key = m["ventricular_rate_bpm"], p.rhythm
    rhythm = {
        "atrial_fibrillation": f"Irregularly irregular rhythm at an average of {rate}/min; no distinct P waves, a "
                               "fine undulating baseline.",
        "atrial_flutter": f"Regular ventricular rhythm at {rate}/min; sawtooth atrial waves at about "
                          f"{p.atrial_rate}/min, negative in II, III and aVF and positive in V1, "
                          f"{p.conduction_ratio} atrial waves to each QRS.",
        "complete_heart_block": f"Regular P waves at {p.atrial_rate}/min and regular QRS complexes at {rate}/min "
                                "with no fixed relation between them: the PR interval varies and P waves fall "
                                "inside QRS complexes and T waves.",
        "ventricular_tachycardia": f"Regular wide-complex rhythm at {rate}/min; P waves, where visible, march "
                                   f"through at about {p.atrial_rate}/min independent of the QRS complexes.",
    }.get(key, f"Regular rhythm at {rate}/min; an upright P wave in I and II before every QRS with a constant PR "
               f"of {p.pr_ms} ms.")
    parts = [rhythm]
    if key == "hyperkalaemia":
        parts.append("P waves are small and flat.")
    qrs = {"left_bundle_branch_block": "broad, notched R waves in I, aVL, V5 and V6 without q waves; QS complexes "
                                       "in V1-V3",
           "right_bundle_branch_block": "rsR' in V1 with the second deflection broad; wide slurred S waves in I "
                                        "and V6",
           "wolff_parkinson_white": "a slurred, slowly rising initial upstroke (delta wave) running straight on "
                                    "from the P wave",
           "ventricular_tachycardia": "broad complexes of the same shape beat to beat, negative in I and II",
           }.get(key, "")
    parts.append(f"QRS {p.qrs_ms} ms" + (f" with {qrs}" if qrs else "") + f"; frontal axis {m['qrs_axis_deg']} "
                 f"degrees; QT {p.qt_ms} ms, QTc {m['qtc_bazett_ms']} ms.")
    st = ecg_rhythms.st_at_j_mv(p)
    if key in ("inferior_stemi", "anterior_stemi"):
        up = [(lead, v) for lead, v in st.items() if 10 * v >= ST_REPORTED_MM]
        down = [(lead, v) for lead, v in st.items() if 10 * v <= -ST_REPORTED_MM]
        parts.append("ST elevation at the J point: " + ", ".join(f"{lead} {10 * v:.1f} mm" for lead, v in up)
                     + "; ST depression: " + (", ".join(f"{lead} {-10 * v:.1f} mm" for lead, v in down) or "none")
                     + "; tall broad T waves in the leads with ST elevation.")
    elif key == "left_bundle_branch_block":
        parts.append("ST segments and T waves point opposite to the main QRS deflection in each lead.")
    elif key in ("right_bundle_branch_block", "wolff_parkinson_white"):
        parts.append("T waves inverted in the leads where the QRS is abnormal; no primary ST change.")
    elif key == "hyperkalaemia":
        parts.append("Tall, narrow-based, symmetric peaked T waves, as tall as the R wave in V2-V4; ST segments "
                     "isoelectric.")
    elif key == "long_qt":
        parts.append("The T wave ends beyond the midpoint of the RR interval; ST segments isoelectric.")
    else:
        parts.append("ST segments isoelectric; T waves upright where the QRS is upright.")
    text = " ".join(parts)
    return f"Lead {strip_lead} rhythm strip, 10 s: {text}" if strip_lead else f"12-lead ECG: {text}"


def describe_ctg(p: ctg.CtgParams) -> str:
    trace = ctg.build(p)
    contractions = len(trace.contraction_peaks_s)
    parts = [f"CTG, {p.duration_min} minutes at {p.paper_speed_cm_min} cm/min, {p.gestation_weeks} weeks. "
             f"Baseline {p.baseline_bpm} bpm."]
    if p.sinusoidal:
        parts.append("A smooth, regular, sine-wave undulation of the baseline at 3-5 cycles per minute, about "
                     "10-15 bpm from peak to trough, throughout; no other variability.")
    elif p.variability_bpm <= 0:
        parts.append("Variability absent (the amplitude range is undetectable).")
    else:
        parts.append(f"Baseline variability about {p.variability_bpm:g} bpm from peak to trough.")
    parts.append(f"{len(trace.accelerations_s)} accelerations of 15 bpm or more lasting 15 s or more."
                 if trace.accelerations_s else "No accelerations.")
    kinds: dict[str, list[dict[str, Any]]] = {}
    for d in trace.decelerations:
        kinds.setdefault(d["kind"], []).append(d)
    for kind, decels in kinds.items():
        depth = round(float(np.mean([d["depth_bpm"] for d in decels])))
        if kind == "prolonged":
            d = decels[0]
            parts.append(f"One deceleration of about {depth} bpm lasting {round((d['end_s'] - d['onset_s']) / 60, 1)}"
                         " minutes before recovering to baseline.")
            continue
        onset = round(float(np.mean([d["nadir_s"] - d["onset_s"] for d in decels])))
        lag = round(float(np.mean([_lag_to_peak(d, trace) for d in decels])))
        timing = ("its nadir at the peak of the contraction, mirroring it" if abs(lag) <= 8 else
                  f"its nadir about {lag} s after the contraction peak, recovering after the contraction ends"
                  if lag > 0 else f"its nadir {abs(lag)} s before the contraction peak")
        parts.append(f"Decelerations with {len(decels)} of {contractions} contractions: "
                     f"{'abrupt' if onset < 30 else 'gradual'} ({onset} s from onset to nadir), about {depth} bpm "
                     f"deep, {timing}.")
    if not trace.decelerations:
        parts.append("No decelerations.")
    parts.append(f"Contractions: {round(contractions * 10 / p.duration_min, 1)} per 10 minutes.")
    return " ".join(parts)


def _lag_to_peak(deceleration: dict[str, Any], trace: ctg.CtgTrace) -> float:
    nadir = deceleration["nadir_s"]
    nearest = min(trace.contraction_peaks_s, key=lambda peak: abs(peak - nadir))
    return nadir - nearest


def describe_spirometry(p: spirometry.SpirometryParams) -> str:
    r = spirometry.results(p)
    shape = {"normal": "The expiratory limb rises sharply to its peak and falls in a straight line; the inspiratory "
                       "limb is a smooth U.",
             "obstructive": "The expiratory limb peaks early and then falls in a concave, scooped-out curve; the "
                            "volume-time curve rises slowly and has not plateaued at 6 s.",
             "restrictive": "The loop is small, with a normally shaped, steep expiratory limb; the volume-time curve "
                            "plateaus early at a low volume.",
             "upper_airway": "Both the expiratory and the inspiratory limbs are cut off into flat plateaus at about "
                             f"{min(p.pef_l_s, p.plateau_l_s or p.pef_l_s):.1f} L/s, giving a box-shaped loop."}
    return (f"Spirometry ({p.sex}, {p.age} y, {p.height_cm} cm): FEV1 {r['fev1_l']} L ({r['fev1_pct_predicted']} "
            f"percent of predicted), FVC {r['fvc_l']} L ({r['fvc_pct_predicted']} percent of predicted), FEV1/FVC "
            f"{r['fev1_fvc_ratio']}, "
            f"PEF {r['pef_l_min']} L/min (FEV1/PEF {r['empey_index']} mL/L/min). {shape[p.pattern]}")


def describe_audiogram(p: audiogram.AudiogramParams) -> str:
    def row(values: dict[int, int]) -> str:
        return ", ".join(f"{f / 1000:g} kHz {v}" for f, v in values.items())

    return (f"Pure-tone audiogram (dB HL). Right air: {row(p.right_air)}. Left air: {row(p.left_air)}. "
            f"Right bone (unmasked): {row(p.right_bone)}. Left bone (unmasked): {row(p.left_bone)}.")
