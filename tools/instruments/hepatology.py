"""Liver disease instruments: MELD-Na (OPTN 2016 formula) and the Child-Pugh classification."""

from __future__ import annotations

import math
from typing import Literal

from clinical_gym.tools.instruments.base import InstrumentResult, Risk, classify, instrument, scored
from clinical_gym.tools.instruments.measures import INR, AlbuminGDl, BilirubinMgDl, CreatinineMgDl, SodiumMmolL

# 90-day mortality by MELD band among patients with cirrhosis on the transplant waiting list (Wiesner 2003).
MELD_RISKS = (
    Risk(9, "MELD 9 or less", "90-day mortality about 1.9% (MELD bands, transplant waiting list)."),
    Risk(19, "MELD 10-19", "90-day mortality about 6.0% (MELD bands, transplant waiting list)."),
    Risk(29, "MELD 20-29", "90-day mortality about 19.6% (MELD bands, transplant waiting list)."),
    Risk(39, "MELD 30-39", "90-day mortality about 52.6% (MELD bands, transplant waiting list)."),
    Risk(40, "MELD 40", "90-day mortality about 71.3% (MELD bands, transplant waiting list)."),
)

CHILD_PUGH_CLASSES = (
    Risk(6, "Child-Pugh class A", "Score 5-6: well-compensated liver disease."),
    Risk(9, "Child-Pugh class B", "Score 7-9: significant functional compromise."),
    Risk(15, "Child-Pugh class C", "Score 10-15: decompensated liver disease."),
)


def _round_half_up(value: float, digits: int = 0) -> float:
    scale = 10 ** digits
    return math.floor(value * scale + 0.5) / scale


@instrument
def meld_na(creatinine_mg_dl: CreatinineMgDl, bilirubin_mg_dl: BilirubinMgDl, inr: INR, sodium_mmol_l: SodiumMmolL,
            dialysis_twice_in_past_week: bool = False) -> InstrumentResult:
    """MELD-Na (6-40): Model for End-Stage Liver Disease with serum sodium (the OPTN formula used for US liver
    allocation from 2016 until MELD 3.0 in 2023); predicts 90-day mortality in cirrhosis.

    Args:
        creatinine_mg_dl: Serum creatinine in mg/dL (µmol/L divided by 88.4); values below 1.0 count as 1.0 and values
            above 4.0 as 4.0.
        bilirubin_mg_dl: Serum total bilirubin in mg/dL (µmol/L divided by 17.1); values below 1.0 count as 1.0.
        inr: International normalised ratio; values below 1.0 count as 1.0.
        sodium_mmol_l: Serum sodium in mmol/L; bounded to 125-137.
        dialysis_twice_in_past_week: Dialysed at least twice, or given 24 hours or more of continuous renal
            replacement therapy, in the past week; creatinine then counts as 4.0.

    References:
        Kamath PS, Wiesner RH, Malinchoc M, et al. A model to predict survival in patients with end-stage liver
        disease. Hepatology. 2001;33(2):464-470.
        Kim WR, Biggins SW, Kremers WK, et al. Hyponatremia and mortality among patients on the liver-transplant
        waiting list. N Engl J Med. 2008;359(10):1018-1026.
        Organ Procurement and Transplantation Network. Policy 9: Allocation of Livers and Liver-Intestines,
        9.1.D MELD Score (MELD-Na, effective January 2016).
        Wiesner R, Edwards E, Freeman R, et al. Model for end-stage liver disease (MELD) and allocation of donor
        livers. Gastroenterology. 2003;124(1):91-96 (mortality by MELD band).
    """
    creatinine = 4.0 if dialysis_twice_in_past_week else min(max(creatinine_mg_dl, 1.0), 4.0)
    bilirubin, ratio = max(bilirubin_mg_dl, 1.0), max(inr, 1.0)
    sodium = min(max(sodium_mmol_l, 125.0), 137.0)
    raw = 0.957 * math.log(creatinine) + 0.378 * math.log(bilirubin) + 1.120 * math.log(ratio) + 0.643
    meld = _round_half_up(raw, 1) * 10
    sodium_points = 0.0
    if meld > 11:
        sodium_points = 1.32 * (137 - sodium) - 0.033 * meld * (137 - sodium)
    score = int(min(_round_half_up(meld + sodium_points), 40))
    band = classify(score, MELD_RISKS)
    return InstrumentResult(instrument="MELD-Na", score=score, category=band.category,
                            interpretation=band.interpretation,
                            points={"MELD(i)": round(meld, 1), "sodium adjustment": round(sodium_points, 3)})


@instrument
def child_pugh(bilirubin_mg_dl: BilirubinMgDl, albumin_g_dl: AlbuminGDl, inr: INR,
               ascites: Literal["none", "mild", "moderate_to_severe"],
               encephalopathy: Literal["none", "grade_1_2", "grade_3_4"]) -> InstrumentResult:
    """Child-Pugh score (5-15) and class A/B/C: severity of chronic liver disease (cirrhosis).

    Args:
        bilirubin_mg_dl: Serum total bilirubin in mg/dL (µmol/L divided by 17.1): below 2 scores 1, 2-3 scores 2,
            above 3 scores 3.
        albumin_g_dl: Serum albumin in g/dL (g/L divided by 10): above 3.5 scores 1, 2.8-3.5 scores 2, below 2.8
            scores 3.
        inr: International normalised ratio (the modern substitute for prothrombin time prolongation): below 1.7
            scores 1, 1.7-2.3 scores 2, above 2.3 scores 3.
        ascites: Ascites: none (1), mild (2), or moderate to severe (3).
        encephalopathy: Hepatic encephalopathy: none (1), grade 1-2 (2), or grade 3-4 (3).

    References:
        Child CG, Turcotte JG. Surgery and portal hypertension. In: Child CG, ed. The Liver and Portal Hypertension.
        Philadelphia: Saunders; 1964:50-64.
        Pugh RNH, Murray-Lyon IM, Dawson JL, Pietroni MC, Williams R. Transection of the oesophagus for bleeding
        oesophageal varices. Br J Surg. 1973;60(8):646-649.
    """
    grades = {"none": 1, "mild": 2, "moderate_to_severe": 3, "grade_1_2": 2, "grade_3_4": 3}
    points = {
        "bilirubin": 1 if bilirubin_mg_dl < 2 else 2 if bilirubin_mg_dl <= 3 else 3,
        "albumin": 1 if albumin_g_dl > 3.5 else 2 if albumin_g_dl >= 2.8 else 3,
        "INR": 1 if inr < 1.7 else 2 if inr <= 2.3 else 3,
        "ascites": grades[ascites],
        "encephalopathy": grades[encephalopathy],
    }
    return scored("Child-Pugh", points, CHILD_PUGH_CLASSES)
