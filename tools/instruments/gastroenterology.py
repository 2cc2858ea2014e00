"""Gastroenterology instruments: the Alvarado score (appendicitis) and the Glasgow-Blatchford score (upper
gastrointestinal bleeding)."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Interval

from clinical_gym.tools.instruments.base import InstrumentResult, Risk, instrument, points_from, scored
from clinical_gym.tools.instruments.measures import HeartRate, Percent, SystolicBP, TemperatureC, UreaMmolL, WhiteCells

HemoglobinGL = Annotated[float, Interval(ge=0, le=250)]

ALVARADO_RISKS = (
    Risk(4, "appendicitis unlikely", "Score 0-4: acute appendicitis unlikely."),
    Risk(6, "appendicitis possible", "Score 5-6: compatible with acute appendicitis; observe and investigate "
                                     "(imaging)."),
    Risk(8, "appendicitis probable", "Score 7-8: probable acute appendicitis; surgical review."),
    Risk(10, "appendicitis very probable", "Score 9-10: very probable acute appendicitis; surgical review."),
)

BLATCHFORD_RISKS = (
    Risk(1, "very low risk", "Score 0-1: very unlikely to need transfusion, endoscopic treatment or surgery; can be "
                             "considered for outpatient management without early endoscopy (the original low-risk "
                             "threshold was 0; ESGE 2021 uses 0-1)."),
    Risk(23, "not low risk", "Score 2 or more: admit for assessment and endoscopy; the higher the score, the more "
                             "likely an intervention (transfusion, endoscopic therapy or surgery) is needed."),
)


@instrument
def alvarado(migration_to_rlq: bool, anorexia: bool, nausea_or_vomiting: bool, rlq_tenderness: bool,
             rebound_tenderness: bool, temperature_c: TemperatureC, wbc_k_per_ul: WhiteCells,
             neutrophil_percent: Percent) -> InstrumentResult:
    """Alvarado score (0-10; MANTRELS): likelihood of acute appendicitis in abdominal pain.

    Args:
        migration_to_rlq: Pain migrating to the right lower quadrant; 1 point.
        anorexia: Anorexia (or acetone in the urine); 1 point.
        nausea_or_vomiting: Nausea or vomiting; 1 point.
        rlq_tenderness: Tenderness in the right lower quadrant; 2 points.
        rebound_tenderness: Rebound tenderness; 1 point.
        temperature_c: Temperature in °C; 1 point when 37.3 or more.
        wbc_k_per_ul: White cell count in x10^3/µL (= x10^9/L); 2 points when above 10.
        neutrophil_percent: Neutrophils as a percentage of white cells; 1 point (shift to the left) when above 75.

    References:
        Alvarado A. A practical score for the early diagnosis of acute appendicitis. Ann Emerg Med.
        1986;15(5):557-564.
    """
    points = {
        "migration of pain": int(migration_to_rlq),
        "anorexia": int(anorexia),
        "nausea/vomiting": int(nausea_or_vomiting),
        "right lower quadrant tenderness": 2 * int(rlq_tenderness),
        "rebound": int(rebound_tenderness),
        "elevated temperature": int(temperature_c >= 37.3),
        "leukocytosis": 2 * int(wbc_k_per_ul > 10),
        "shift to the left": int(neutrophil_percent > 75),
    }
    return scored("Alvarado", points, ALVARADO_RISKS)


@instrument
def glasgow_blatchford(urea_mmol_l: UreaMmolL, hemoglobin_g_l: HemoglobinGL, sex: Literal["female", "male"],
                       systolic_bp: SystolicBP, pulse: HeartRate, melena: bool, syncope: bool, hepatic_disease: bool,
                       cardiac_failure: bool) -> InstrumentResult:
    """Glasgow-Blatchford score (0-23): need for intervention in upper gastrointestinal bleeding, before endoscopy.

    Args:
        urea_mmol_l: Blood urea in mmol/L (blood urea nitrogen in mg/dL divided by 2.8): 6.5-7.9 scores 2, 8.0-9.9
            scores 3, 10.0-24.9 scores 4, 25 or more scores 6.
        hemoglobin_g_l: Haemoglobin in g/L (g/dL times 10). Men: 120-129 scores 1, 100-119 scores 3, below 100 scores
            6. Women: 100-119 scores 1, below 100 scores 6.
        sex: Sex, which sets the haemoglobin bands.
        systolic_bp: Systolic blood pressure in mmHg: 100-109 scores 1, 90-99 scores 2, below 90 scores 3.
        pulse: Pulse in beats/min; 1 point when 100 or more.
        melena: Presenting with melaena; 1 point.
        syncope: Presenting with syncope; 2 points.
        hepatic_disease: Known hepatic disease (history or clinical and laboratory evidence); 2 points.
        cardiac_failure: Known cardiac failure (history or clinical and echocardiographic evidence); 2 points.

    References:
        Blatchford O, Murray WR, Blatchford M. A risk score to predict need for treatment for
        upper-gastrointestinal haemorrhage. Lancet. 2000;356(9238):1318-1321.
        Gralnek IM, Stanley AJ, Morris AJ, et al. Endoscopic diagnosis and management of nonvariceal upper
        gastrointestinal hemorrhage (NVUGIH): European Society of Gastrointestinal Endoscopy (ESGE) Guideline -
        Update 2021. Endoscopy. 2021;53(3):300-332.
    """
    hemoglobin_bands = ((130, 0), (120, 1), (100, 3)) if sex == "male" else ((120, 0), (100, 1))
    points = {
        "blood urea": points_from(urea_mmol_l, ((25, 6), (10, 4), (8, 3), (6.5, 2)), 0),
        "haemoglobin": points_from(hemoglobin_g_l, hemoglobin_bands, 6),
        "systolic BP": points_from(systolic_bp, ((110, 0), (100, 1), (90, 2)), 3),
        "pulse >= 100": int(pulse >= 100),
        "melaena": int(melena),
        "syncope": 2 * int(syncope),
        "hepatic disease": 2 * int(hepatic_disease),
        "cardiac failure": 2 * int(cardiac_failure),
    }
    return scored("Glasgow-Blatchford", points, BLATCHFORD_RISKS)
