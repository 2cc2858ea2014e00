"""Rendering case data as the text an environment shows: exam findings, vitals, MIMIC-style lab lines."""

from __future__ import annotations

from clinical_gym.cases.schema import LabValue, TestResult, Vitals


def _num(x: float) -> str:
    return f"{x:g}"


def format_lab_value(v: LabValue) -> str:
    """One MIMIC-style lab line: ``Neutrophils: Value: 83.6; Numeric Value: 83.6; Units: %; Reference Range: 34.0 - 71.0; Flag: abnormal``."""
    if v.value is None:
        parts = [f"Value: {v.text}"]
    else:
        parts = [f"Value: {_num(v.value)}", f"Numeric Value: {_num(v.value)}"]
    if v.unit:
        parts.append(f"Units: {v.unit}")
    if v.ref_low is not None or v.ref_high is not None:
        low = _num(v.ref_low) if v.ref_low is not None else ""
        high = _num(v.ref_high) if v.ref_high is not None else ""
        parts.append(f"Reference Range: {low} - {high}".strip())
    if v.flag != "normal":
        parts.append(f"Flag: {'abnormal' if v.flag in ('low', 'high') else v.flag}")
    return f"{v.name}: " + "; ".join(parts)


def format_test_result(test: TestResult) -> str:
    """A test's result: one line per lab component, then any free-text report."""
    lines = [format_lab_value(v) for v in test.values]
    if test.text:
        lines.append(test.text)
    return "\n".join(lines)


def format_vitals(v: Vitals) -> str:
    return (f"Temperature {v.temperature_c:.1f}°C, heart rate {v.heart_rate}/min, respiratory rate {v.respiratory_rate}/min, "
            f"blood pressure {v.systolic_bp}/{v.diastolic_bp} mmHg, SpO2 {v.spo2}% on room air.")
