"""Dose and renal arithmetic shared by the drug reference and the tool domains: administrations a day by frequency,
milligrams per mass unit, and Cockcroft-Gault creatinine clearance."""

from __future__ import annotations

DOSES_PER_DAY: dict[str, float] = {"once": 1, "daily": 1, "nightly": 1, "bid": 2, "tid": 3, "qid": 4,
                                   "five times daily": 5, "q4h": 6, "q6h": 4, "q8h": 3, "q12h": 2, "q24h": 1,
                                   "q48h": 0.5, "weekly": 1 / 7}
MG_PER_UNIT: dict[str, float] = {"mg": 1.0, "mcg": 0.001, "g": 1000.0}

CG_FACTOR = {"male": 1.23, "female": 1.04}


def creatinine_clearance(age: float, weight_kg: float, creatinine_umol_l: float, sex: str) -> float:
    """Cockcroft-Gault creatinine clearance in mL/min (actual body weight, creatinine in µmol/L), one decimal:
    (140 - age) x weight x 1.23 (male) or 1.04 (female) / creatinine."""
    return round((140 - age) * weight_kg * CG_FACTOR[sex] / creatinine_umol_l, 1)
