"""Follow-up rules for incidental findings, as the radiologist's calculators apply them.

* ``fleischner_recommendation``: incidental pulmonary nodules on CT in adults aged 35 or over (Fleischner Society
  2017; not for lung-cancer screening, known cancer or immunosuppression). Size is the mean of the long and short
  axes, rounded to the nearest millimetre.
* ``adrenal_assessment``: incidental adrenal nodules (ACR 2017 white paper; ESE/ENSAT guideline): lipid-rich
  adenoma at 10 HU or less unenhanced, adenoma by washout (absolute 60% or more, relative 40% or more), size 4 cm or
  more without benign features.
* ``interval_growth``: change in a diameter between two studies (rate per year, volume doubling time assuming a
  sphere).
"""

from __future__ import annotations

import math
from typing import Any, Literal

NoduleType = Literal["solid", "ground_glass", "part_solid"]
Risk = Literal["low", "high"]
DAYS_PER_MONTH = 365.25 / 12

FLEISCHNER_SOLID: dict[tuple[bool, str, str], str] = {
    # (multiple, size band, risk) -> recommendation
    (False, "<6 mm", "low"): "No routine follow-up.",
    (False, "<6 mm", "high"): "Optional CT at 12 months.",
    (False, "6-8 mm", "low"): "CT at 6-12 months, then consider CT at 18-24 months.",
    (False, "6-8 mm", "high"): "CT at 6-12 months, then CT at 18-24 months.",
    (False, ">8 mm", "low"): "Consider CT at 3 months, PET/CT, or tissue sampling.",
    (False, ">8 mm", "high"): "Consider CT at 3 months, PET/CT, or tissue sampling.",
    (True, "<6 mm", "low"): "No routine follow-up.",
    (True, "<6 mm", "high"): "Optional CT at 12 months.",
    (True, "6-8 mm", "low"): "CT at 3-6 months, then consider CT at 18-24 months.",
    (True, "6-8 mm", "high"): "CT at 3-6 months, then CT at 18-24 months.",
    (True, ">8 mm", "low"): "CT at 3-6 months, then consider CT at 18-24 months.",
    (True, ">8 mm", "high"): "CT at 3-6 months, then consider CT at 18-24 months.",
}
FLEISCHNER_SUBSOLID: dict[tuple[bool, str, str], str] = {
    # (multiple, nodule type, size band) -> recommendation
    (False, "ground_glass", "<6 mm"): "No routine follow-up.",
    (False, "ground_glass", ">=6 mm"): "CT at 6-12 months to confirm persistence, then CT every 2 years until 5 years.",
    (False, "part_solid", "<6 mm"): "No routine follow-up.",
    (False, "part_solid", ">=6 mm"): ("CT at 3-6 months to confirm persistence. If unchanged and the solid component "
                                      "remains <6 mm, annual CT for 5 years."),
    (True, "ground_glass", "<6 mm"): "CT at 3-6 months. If stable, consider CT at 2 and 4 years.",
    (True, "ground_glass", ">=6 mm"): "CT at 3-6 months. Subsequent management based on the most suspicious nodule(s).",
    (True, "part_solid", "<6 mm"): "CT at 3-6 months. If stable, consider CT at 2 and 4 years.",
    (True, "part_solid", ">=6 mm"): "CT at 3-6 months. Subsequent management based on the most suspicious nodule(s).",
}
FLEISCHNER_SCOPE = ("Applies to incidental nodules in adults aged 35 or over; not to lung-cancer screening, patients "
                    "with a known cancer or immunosuppression.")


def round_half_up(value: float) -> int:
    """``value`` rounded to the nearest integer, halves upwards (7.5 -> 8)."""
    return math.floor(value + 0.5)


def fleischner_recommendation(nodule_type: NoduleType, long_axis_mm: float, short_axis_mm: float, multiple: bool,
                              risk: Risk, solid_component_mm: float = 0.0) -> dict[str, Any]:
    """The Fleischner 2017 recommendation for one incidental nodule (the most suspicious one when ``multiple``)."""
    if short_axis_mm > long_axis_mm:
        raise ValueError("short_axis_mm must not exceed long_axis_mm")
    if nodule_type == "part_solid" and not 0 < solid_component_mm <= long_axis_mm:
        raise ValueError("a part-solid nodule needs solid_component_mm between 0 and long_axis_mm")
    mean = round_half_up((long_axis_mm + short_axis_mm) / 2)
    out: dict[str, Any] = {"mean_diameter_mm": mean, "nodule_type": nodule_type, "multiple": multiple}
    if nodule_type == "solid":
        band = "<6 mm" if mean < 6 else ("6-8 mm" if mean <= 8 else ">8 mm")
        out.update(size_category=band, risk=risk, recommendation=FLEISCHNER_SOLID[(multiple, band, risk)])
    else:
        band = "<6 mm" if mean < 6 else ">=6 mm"
        out.update(size_category=band, recommendation=FLEISCHNER_SUBSOLID[(multiple, nodule_type, band)])
        if nodule_type == "part_solid":
            solid = round_half_up(solid_component_mm)
            out["solid_component_mm"] = solid
            if solid >= 6:
                out["note"] = ("A persistent part-solid nodule with a solid component of 6 mm or more is highly "
                               "suspicious.")
    out["scope"] = FLEISCHNER_SCOPE
    return out


def adrenal_assessment(size_mm: float, unenhanced_hu: float | None = None, enhanced_hu: float | None = None,
                       delayed_hu: float | None = None) -> dict[str, Any]:
    """Classify an incidental adrenal nodule from its size and attenuation (washout from a 60-75 s enhanced and a
    15-minute delayed phase)."""
    out: dict[str, Any] = {"size_mm": size_mm}
    absolute = relative = None
    if enhanced_hu is not None and delayed_hu is not None:
        if enhanced_hu > 0:
            relative = round((enhanced_hu - delayed_hu) / enhanced_hu * 100, 1)
            out["relative_washout_percent"] = relative
        if unenhanced_hu is not None and enhanced_hu > unenhanced_hu:
            absolute = round((enhanced_hu - delayed_hu) / (enhanced_hu - unenhanced_hu) * 100, 1)
            out["absolute_washout_percent"] = absolute
    if unenhanced_hu is not None and unenhanced_hu <= 10:
        out.update(classification="lipid-rich adenoma",
                   imaging="Benign: attenuation of 10 HU or less on unenhanced CT. No further imaging.")
    elif (absolute is not None and absolute >= 60) or (relative is not None and relative >= 40):
        out.update(classification="adenoma (washout)",
                   imaging="Benign: absolute washout 60% or more or relative washout 40% or more. No further imaging.")
    elif size_mm >= 40:
        out.update(classification="indeterminate, 4 cm or larger",
                   imaging="Refer to the adrenal multidisciplinary team: resection is usually considered (PET/CT or "
                           "biopsy first when there is a history of malignancy).")
    else:
        out.update(classification="indeterminate",
                   imaging="Characterise with adrenal-protocol (washout) CT or chemical-shift MRI; if still "
                           "indeterminate, consider PET/CT, biopsy or resection, or CT at 12 months.")
    out["biochemistry"] = ("Every incidental adrenal nodule needs a hormonal assessment: 1 mg overnight dexamethasone "
                           "suppression test; plasma or urine metanephrines unless the nodule is lipid-rich "
                           "(10 HU or less); aldosterone/renin ratio if the patient is hypertensive or hypokalaemic.")
    return out


def interval_growth(current_mm: float, prior_mm: float, interval_months: float) -> dict[str, Any]:
    """How much a diameter changed between two studies ``interval_months`` apart."""
    if prior_mm <= 0 or current_mm <= 0 or interval_months <= 0:
        raise ValueError("diameters and the interval must be greater than 0")
    change = current_mm - prior_mm
    out: dict[str, Any] = {"change_mm": round(change, 1),
                           "change_percent": round(change / prior_mm * 100, 1),
                           "rate_mm_per_year": round(change / interval_months * 12, 1)}
    if change > 0:
        days = interval_months * DAYS_PER_MONTH
        out["volume_doubling_time_days"] = round(days * math.log(2) / (3 * math.log(current_mm / prior_mm)))
    out["note"] = "Volume doubling time assumes a sphere: V grows with the cube of the diameter."
    return out
