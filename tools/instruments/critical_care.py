"""Acute illness and organ dysfunction: qSOFA, SOFA and NEWS2 (APACHE II is in ``apache``)."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Interval

from clinical_gym.tools.instruments.base import InstrumentResult, Risk, instrument, points_from, scored
from clinical_gym.tools.instruments.measures import (
    BilirubinMgDl,
    CreatinineMgDl,
    GlasgowComaScore,
    HeartRate,
    MeanArterialPressure,
    OxygenSaturation,
    Platelets,
    RespiratoryRate,
    SystolicBP,
    TemperatureC,
    VasopressorDose,
)

PaO2FiO2 = Annotated[float, Interval(ge=0, le=700)]
UrineOutput = Annotated[float, Interval(ge=0, le=20000)]

QSOFA_RISKS = (
    Risk(1, "negative", "Fewer than 2 criteria; this does not exclude sepsis: keep reassessing if infection is "
                        "suspected."),
    Risk(3, "positive", "2 or more criteria in a patient with suspected infection: higher risk of death or prolonged "
                        "intensive care stay; assess for organ dysfunction (SOFA), start sepsis management and "
                        "escalate care."),
)

SOFA_RISKS = (
    Risk(1, "no organ dysfunction by the Sepsis-3 threshold",
         "Fewer than 2 points. Sepsis-3 defines organ dysfunction as an acute rise of 2 or more points from baseline "
         "(baseline taken as 0 without known pre-existing organ dysfunction)."),
    Risk(24, "organ dysfunction",
         "2 or more points above baseline indicates organ dysfunction; with suspected infection this meets Sepsis-3 "
         "sepsis (about 10% in-hospital mortality in general hospital populations). Mortality rises with the score "
         "and with its increase over the first days of intensive care."),
)

NEWS2_RESPONSES = {
    "low": "Aggregate 0-4: minimum 12-hourly observations at 0 and 4-6 hourly at 1-4; a registered nurse assesses "
           "and decides whether monitoring or escalation should change.",
    "low-medium": "A score of 3 in a single parameter: minimum hourly observations and an urgent ward-based response "
                  "(the nurse informs the medical team for urgent assessment).",
    "medium": "Aggregate 5-6, the key threshold for urgent response: minimum hourly observations and urgent review by "
              "a clinician competent in assessing acute illness.",
    "high": "Aggregate 7 or more: emergency response with continuous monitoring and immediate assessment by a team "
            "with critical care competencies, usually with transfer to a higher level of care.",
}


@instrument
def qsofa(respiratory_rate: RespiratoryRate, systolic_bp: SystolicBP, altered_mentation: bool) -> InstrumentResult:
    """qSOFA (0-3): bedside screen for adults with suspected infection at risk of poor outcomes (Sepsis-3).

    Args:
        respiratory_rate: Respiratory rate in breaths/min; 1 point when 22 or more.
        systolic_bp: Systolic blood pressure in mmHg; 1 point when 100 or less.
        altered_mentation: Altered mental status (Glasgow Coma Scale below 15); 1 point.

    References:
        Seymour CW, Liu VX, Iwashyna TJ, et al. Assessment of clinical criteria for sepsis: for the Third
        International Consensus Definitions for Sepsis and Septic Shock (Sepsis-3). JAMA. 2016;315(8):762-774.
    """
    points = {
        "respiratory rate >= 22/min": int(respiratory_rate >= 22),
        "systolic BP <= 100 mmHg": int(systolic_bp <= 100),
        "altered mentation": int(altered_mentation),
    }
    return scored("qSOFA", points, QSOFA_RISKS)


@instrument
def sofa(pao2_fio2_mmhg: PaO2FiO2, respiratory_support: bool, platelets_k_per_ul: Platelets,
         bilirubin_mg_dl: BilirubinMgDl, mean_arterial_pressure: MeanArterialPressure, gcs: GlasgowComaScore,
         creatinine_mg_dl: CreatinineMgDl, dopamine_ug_kg_min: VasopressorDose = 0.0,
         dobutamine_ug_kg_min: VasopressorDose = 0.0, epinephrine_ug_kg_min: VasopressorDose = 0.0,
         norepinephrine_ug_kg_min: VasopressorDose = 0.0,
         urine_output_ml_per_day: UrineOutput | None = None) -> InstrumentResult:
    """SOFA (0-24): Sequential Organ Failure Assessment, 0-4 points for each of six organ systems (worst values
    over the past 24 hours).

    Args:
        pao2_fio2_mmhg: PaO2/FiO2 ratio in mmHg (e.g. PaO2 80 mmHg on FiO2 0.4 gives 200).
        respiratory_support: On mechanical ventilation or other respiratory support; 3-4 respiratory points need it.
        platelets_k_per_ul: Platelet count in x10^3/µL (= x10^9/L).
        bilirubin_mg_dl: Serum bilirubin in mg/dL (µmol/L divided by 17.1).
        mean_arterial_pressure: Mean arterial pressure in mmHg.
        gcs: Glasgow Coma Scale total, 3-15 (assessed off sedation where possible).
        creatinine_mg_dl: Serum creatinine in mg/dL (µmol/L divided by 88.4).
        dopamine_ug_kg_min: Dopamine dose in µg/kg/min given for at least 1 hour (0 if none).
        dobutamine_ug_kg_min: Dobutamine dose in µg/kg/min given for at least 1 hour (0 if none; any dose scores 2).
        epinephrine_ug_kg_min: Epinephrine (adrenaline) dose in µg/kg/min given for at least 1 hour (0 if none).
        norepinephrine_ug_kg_min: Norepinephrine (noradrenaline) dose in µg/kg/min given for at least 1 hour
            (0 if none).
        urine_output_ml_per_day: Urine output in mL/day, if measured; below 500 scores 3 and below 200 scores 4.

    References:
        Vincent JL, Moreno R, Takala J, et al. The SOFA (Sepsis-related Organ Failure Assessment) score to describe
        organ dysfunction/failure. Intensive Care Med. 1996;22(7):707-710.
        Singer M, Deutschman CS, Seymour CW, et al. The Third International Consensus Definitions for Sepsis and
        Septic Shock (Sepsis-3). JAMA. 2016;315(8):801-810.
    """
    if pao2_fio2_mmhg < 100 and respiratory_support:
        respiration = 4
    elif pao2_fio2_mmhg < 200 and respiratory_support:
        respiration = 3
    else:
        respiration = 2 if pao2_fio2_mmhg < 300 else 1 if pao2_fio2_mmhg < 400 else 0
    if dopamine_ug_kg_min > 15 or epinephrine_ug_kg_min > 0.1 or norepinephrine_ug_kg_min > 0.1:
        cardiovascular = 4
    elif dopamine_ug_kg_min > 5 or epinephrine_ug_kg_min > 0 or norepinephrine_ug_kg_min > 0:
        cardiovascular = 3
    elif dopamine_ug_kg_min > 0 or dobutamine_ug_kg_min > 0:
        cardiovascular = 2
    else:
        cardiovascular = int(mean_arterial_pressure < 70)
    renal = points_from(creatinine_mg_dl, ((5.0, 4), (3.5, 3), (2.0, 2), (1.2, 1)), 0)
    if urine_output_ml_per_day is not None:
        renal = max(renal, 4 if urine_output_ml_per_day < 200 else 3 if urine_output_ml_per_day < 500 else 0)
    points = {
        "respiration": respiration,
        "coagulation": 4 if platelets_k_per_ul < 20 else 3 if platelets_k_per_ul < 50 else
                       2 if platelets_k_per_ul < 100 else 1 if platelets_k_per_ul < 150 else 0,
        "liver": points_from(bilirubin_mg_dl, ((12.0, 4), (6.0, 3), (2.0, 2), (1.2, 1)), 0),
        "cardiovascular": cardiovascular,
        "central nervous system": 0 if gcs == 15 else 1 if gcs >= 13 else 2 if gcs >= 10 else 3 if gcs >= 6 else 4,
        "renal": renal,
    }
    return scored("SOFA", points, SOFA_RISKS)


@instrument
def news2(respiratory_rate: RespiratoryRate, spo2_percent: OxygenSaturation, on_supplemental_oxygen: bool,
          systolic_bp: SystolicBP, pulse: HeartRate,
          consciousness: Literal["alert", "new_confusion", "voice", "pain", "unresponsive"],
          temperature_c: TemperatureC, spo2_scale: Literal[1, 2] = 1) -> InstrumentResult:
    """NEWS2 (0-20): National Early Warning Score 2 for adults, with the clinical response it triggers.

    Args:
        respiratory_rate: Respiratory rate in breaths/min.
        spo2_percent: Oxygen saturation (SpO2) in percent.
        on_supplemental_oxygen: Breathing supplemental oxygen (any device) rather than room air; 2 points.
        systolic_bp: Systolic blood pressure in mmHg.
        pulse: Pulse rate in beats/min.
        consciousness: ACVPU level: alert, new confusion, responds to voice, responds to pain, or unresponsive
            (anything but alert scores 3).
        temperature_c: Temperature in °C.
        spo2_scale: SpO2 scale: 1 for most patients; 2 only for patients with hypercapnic respiratory failure whose
            prescribed target saturation is 88-92%, as decided by a clinician.

    References:
        Royal College of Physicians. National Early Warning Score (NEWS) 2: Standardising the assessment of
        acute-illness severity in the NHS. Updated report of a working party. London: RCP, 2017.
    """
    points = {
        "respiratory rate": 3 if respiratory_rate <= 8 else 1 if respiratory_rate <= 11 else
                            0 if respiratory_rate <= 20 else 2 if respiratory_rate <= 24 else 3,
        "SpO2": _news2_spo2(spo2_percent, on_supplemental_oxygen, spo2_scale),
        "air or oxygen": 2 if on_supplemental_oxygen else 0,
        "systolic BP": 3 if systolic_bp <= 90 else 2 if systolic_bp <= 100 else 1 if systolic_bp <= 110 else
                       0 if systolic_bp <= 219 else 3,
        "pulse": 3 if pulse <= 40 else 1 if pulse <= 50 else 0 if pulse <= 90 else 1 if pulse <= 110 else
                 2 if pulse <= 130 else 3,
        "consciousness": 0 if consciousness == "alert" else 3,
        "temperature": 3 if temperature_c <= 35.0 else 1 if temperature_c <= 36.0 else 0 if temperature_c <= 38.0 else
                       1 if temperature_c <= 39.0 else 2,
    }
    total = sum(points.values())
    if total >= 7:
        level = "high"
    elif total >= 5:
        level = "medium"
    else:
        level = "low-medium" if 3 in points.values() else "low"
    return InstrumentResult(instrument="NEWS2", score=total, category=f"{level} clinical risk",
                            interpretation=NEWS2_RESPONSES[level], points=points)


def _news2_spo2(spo2: int, on_oxygen: bool, scale: int) -> int:
    """SpO2 points on scale 1, or on scale 2 (where high saturations on oxygen score as a hazard)."""
    if scale == 1:
        return 3 if spo2 <= 91 else 2 if spo2 <= 93 else 1 if spo2 <= 95 else 0
    if spo2 <= 87:
        return 3 if spo2 <= 83 else 2 if spo2 <= 85 else 1
    if spo2 <= 92 or not on_oxygen:
        return 0
    return 1 if spo2 <= 94 else 2 if spo2 <= 96 else 3
