"""APACHE II: the Acute Physiology and Chronic Health Evaluation II severity score for intensive care admissions."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Interval

from clinical_gym.tools.instruments.base import InstrumentResult, Risk, instrument, points_from, scored
from clinical_gym.tools.instruments.measures import (
    Age,
    CreatinineMgDl,
    GlasgowComaScore,
    HeartRate,
    MeanArterialPressure,
    Percent,
    PotassiumMmolL,
    RespiratoryRate,
    SodiumMmolL,
    TemperatureC,
    WhiteCells,
)

FiO2 = Annotated[float, Interval(ge=0.21, le=1.0)]
BloodGasMmHg = Annotated[float, Interval(ge=0, le=800)]
ArterialPH = Annotated[float, Interval(ge=6.5, le=8.0)]
Bicarbonate = Annotated[float, Interval(ge=0, le=80)]

# (lower bound, points) from the highest band down; the last argument of points_from scores anything lower.
TEMPERATURE = ((41, 4), (39, 3), (38.5, 1), (36, 0), (34, 1), (32, 2), (30, 3))
MEAN_ARTERIAL_PRESSURE = ((160, 4), (130, 3), (110, 2), (70, 0), (50, 2))
HEART_RATE = ((180, 4), (140, 3), (110, 2), (70, 0), (55, 2), (40, 3))
RESPIRATORY_RATE = ((50, 4), (35, 3), (25, 1), (12, 0), (10, 1), (6, 2))
AA_GRADIENT = ((500, 4), (350, 3), (200, 2))
ARTERIAL_PH = ((7.7, 4), (7.6, 3), (7.5, 1), (7.33, 0), (7.25, 2), (7.15, 3))
BICARBONATE = ((52, 4), (41, 3), (32, 1), (22, 0), (18, 2), (15, 3))
SODIUM = ((180, 4), (160, 3), (155, 2), (150, 1), (130, 0), (120, 2), (111, 3))
POTASSIUM = ((7, 4), (6, 3), (5.5, 1), (3.5, 0), (3, 1), (2.5, 2))
CREATININE = ((3.5, 4), (2, 3), (1.5, 2), (0.6, 0))
HEMATOCRIT = ((60, 4), (50, 2), (46, 1), (30, 0), (20, 2))
WHITE_CELLS = ((40, 4), (20, 2), (15, 1), (3, 0), (1, 2))
AGE = ((75, 6), (65, 5), (55, 3), (45, 2))

# Hospital death rates by score band for nonoperative admissions in the derivation cohort (Knaus 1985);
# postoperative patients had lower mortality at the same score.
APACHE_II_RISKS = (
    Risk(9, "low severity", "Scores 0-9: hospital mortality under 10% for nonoperative admissions in the derivation "
                            "cohort (about 4% at 0-4); lower after surgery."),
    Risk(19, "moderate severity", "Scores 10-19: hospital mortality about 15-25% for nonoperative admissions in the "
                                  "derivation cohort; lower after surgery."),
    Risk(29, "high severity", "Scores 20-29: hospital mortality about 40-55% for nonoperative admissions in the "
                              "derivation cohort."),
    Risk(71, "very high severity", "Scores of 30 or more: hospital mortality about 75% or higher in the derivation "
                                   "cohort (over 80% above 34)."),
)


@instrument
def apache_ii(temperature_c: TemperatureC, mean_arterial_pressure: MeanArterialPressure, heart_rate: HeartRate,
              respiratory_rate: RespiratoryRate, fio2: FiO2, sodium_mmol_l: SodiumMmolL,
              potassium_mmol_l: PotassiumMmolL, creatinine_mg_dl: CreatinineMgDl, hematocrit_percent: Percent,
              wbc_k_per_ul: WhiteCells, gcs: GlasgowComaScore, age: Age, pao2_mmhg: BloodGasMmHg | None = None,
              aa_gradient_mmhg: BloodGasMmHg | None = None, arterial_ph: ArterialPH | None = None,
              serum_bicarbonate_mmol_l: Bicarbonate | None = None, acute_renal_failure: bool = False,
              severe_chronic_disease: bool = False,
              admission: Literal["nonoperative", "emergency_postoperative", "elective_postoperative"] = "nonoperative",
              ) -> InstrumentResult:
    """APACHE II (0-71): severity of illness from the worst physiology in the first 24 hours in intensive care,
    age, and chronic health.

    Args:
        temperature_c: Core (rectal) temperature in °C.
        mean_arterial_pressure: Mean arterial pressure in mmHg.
        heart_rate: Heart rate in beats/min.
        respiratory_rate: Respiratory rate in breaths/min (ventilated or not).
        fio2: Fraction of inspired oxygen, 0.21-1.0. At 0.5 or more oxygenation is scored from aa_gradient_mmhg,
            below 0.5 from pao2_mmhg.
        sodium_mmol_l: Serum sodium in mmol/L.
        potassium_mmol_l: Serum potassium in mmol/L.
        creatinine_mg_dl: Serum creatinine in mg/dL (µmol/L divided by 88.4).
        hematocrit_percent: Haematocrit in percent.
        wbc_k_per_ul: White cell count in x10^3/µL (= x10^9/L).
        gcs: Glasgow Coma Scale total, 3-15; scores 15 minus the GCS.
        age: Age in years.
        pao2_mmhg: Arterial PaO2 in mmHg; required when fio2 is below 0.5.
        aa_gradient_mmhg: Alveolar-arterial oxygen gradient (A-aDO2) in mmHg; required when fio2 is 0.5 or more.
        arterial_ph: Arterial pH; give this, or serum_bicarbonate_mmol_l when no blood gas is available.
        serum_bicarbonate_mmol_l: Venous serum bicarbonate in mmol/L; used only when arterial_ph is not given.
        acute_renal_failure: Acute renal failure; doubles the creatinine points.
        severe_chronic_disease: History of severe organ insufficiency or immunocompromise before this admission:
            biopsy-proven cirrhosis with portal hypertension or prior hepatic failure, NYHA class IV heart failure,
            severe chronic respiratory disease (severe exercise restriction, chronic hypoxia or hypercapnia,
            secondary polycythaemia, severe pulmonary hypertension or ventilator dependence), chronic dialysis, or
            immunosuppression.
        admission: Admission type, which sets the chronic health points when severe_chronic_disease is true:
            nonoperative or emergency_postoperative 5 points, elective_postoperative 2 points.

    References:
        Knaus WA, Draper EA, Wagner DP, Zimmerman JE. APACHE II: a severity of disease classification system.
        Crit Care Med. 1985;13(10):818-829.
    """
    if fio2 >= 0.5:
        if aa_gradient_mmhg is None:
            raise ValueError("aa_gradient_mmhg is required when fio2 is 0.5 or more")
        oxygenation = points_from(aa_gradient_mmhg, AA_GRADIENT, 0)
    else:
        if pao2_mmhg is None:
            raise ValueError("pao2_mmhg is required when fio2 is below 0.5")
        oxygenation = 0 if pao2_mmhg > 70 else 1 if pao2_mmhg >= 61 else 3 if pao2_mmhg >= 55 else 4
    if arterial_ph is not None:
        acid_base = ("arterial pH", points_from(arterial_ph, ARTERIAL_PH, 4))
    elif serum_bicarbonate_mmol_l is not None:
        acid_base = ("serum bicarbonate", points_from(serum_bicarbonate_mmol_l, BICARBONATE, 4))
    else:
        raise ValueError("give arterial_ph, or serum_bicarbonate_mmol_l when no arterial blood gas is available")
    creatinine = points_from(creatinine_mg_dl, CREATININE, 2)
    points = {
        "temperature": points_from(temperature_c, TEMPERATURE, 4),
        "mean arterial pressure": points_from(mean_arterial_pressure, MEAN_ARTERIAL_PRESSURE, 4),
        "heart rate": points_from(heart_rate, HEART_RATE, 4),
        "respiratory rate": points_from(respiratory_rate, RESPIRATORY_RATE, 4),
        "oxygenation": oxygenation,
        acid_base[0]: acid_base[1],
        "sodium": points_from(sodium_mmol_l, SODIUM, 4),
        "potassium": points_from(potassium_mmol_l, POTASSIUM, 4),
        "creatinine": creatinine * 2 if acute_renal_failure else creatinine,
        "haematocrit": points_from(hematocrit_percent, HEMATOCRIT, 4),
        "white cell count": points_from(wbc_k_per_ul, WHITE_CELLS, 4),
        "Glasgow Coma Scale": 15 - gcs,
        "age": points_from(age, AGE, 0),
        "chronic health": (2 if admission == "elective_postoperative" else 5) if severe_chronic_disease else 0,
    }
    return scored("APACHE II", points, APACHE_II_RISKS)
