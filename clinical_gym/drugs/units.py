"""Dose and renal arithmetic shared by the drug reference and the tool domains: administrations a day by frequency,
milligrams per mass unit, Cockcroft-Gault creatinine clearance and the CKD-EPI 2021 eGFR."""

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


UMOL_PER_MG_DL_CREATININE = 88.4


def ckd_epi_egfr(age: float, creatinine_umol_l: float, sex: str) -> float:
    """eGFR in mL/min/1.73 m² by the race-free CKD-EPI 2021 creatinine equation (Inker LA et al., N Engl J Med
    2021;385:1737-49; creatinine in µmol/L), one decimal: 142 x min(Scr/k, 1)^a x max(Scr/k, 1)^-1.200 x
    0.9938^age (x 1.012 for women), Scr in mg/dL, k 0.7 (women) or 0.9 (men), a -0.241 (women) or -0.302 (men)."""
    female = sex == "female"
    kappa, alpha = (0.7, -0.241) if female else (0.9, -0.302)
    ratio = creatinine_umol_l / UMOL_PER_MG_DL_CREATININE / kappa
    egfr = 142 * min(ratio, 1.0) ** alpha * max(ratio, 1.0) ** -1.2 * 0.9938 ** age * (1.012 if female else 1.0)
    return round(egfr, 1)
