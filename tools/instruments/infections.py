"""Infection instruments: CURB-65 (pneumonia severity) and the Centor score with McIsaac's age modification
(streptococcal pharyngitis)."""

from __future__ import annotations

from typing import Annotated

from annotated_types import Interval

from clinical_gym.tools.instruments.base import InstrumentResult, Risk, instrument, scored
from clinical_gym.tools.instruments.measures import Age, DiastolicBP, RespiratoryRate, SystolicBP, TemperatureC, UreaMmolL

CURB_65_RISKS = (
    Risk(1, "low risk", "30-day mortality about 1.5% in the derivation and validation cohorts; "
                        "consider treatment at home."),
    Risk(2, "intermediate risk", "30-day mortality about 9.2%; consider hospital-based care "
                                 "(a short admission or hospital-supervised outpatient treatment)."),
    Risk(5, "high risk", "30-day mortality about 22%; manage in hospital as severe pneumonia and assess for "
                         "intensive care, especially with a score of 4 or 5."),
)

MCISAAC_RISKS = (
    Risk(0, "low risk", "Risk of group A streptococcal infection about 1-2.5%; no throat swab or antibiotic needed."),
    Risk(1, "low risk", "Risk of group A streptococcal infection about 5-10%; no throat swab or antibiotic needed."),
    Risk(2, "intermediate risk", "Risk of group A streptococcal infection about 11-17%; take a throat culture or "
                                 "rapid antigen test and treat only if positive."),
    Risk(3, "intermediate risk", "Risk of group A streptococcal infection about 28-35%; take a throat culture or "
                                 "rapid antigen test and treat only if positive."),
    Risk(5, "high risk", "Risk of group A streptococcal infection about 51-53%; test, and consider empirical "
                         "antibiotic treatment."),
)


@instrument
def curb_65(confusion: bool, urea_mmol_l: UreaMmolL, respiratory_rate: RespiratoryRate, systolic_bp: SystolicBP,
            diastolic_bp: DiastolicBP, age: Age) -> InstrumentResult:
    """CURB-65 (0-5): severity of community-acquired pneumonia and 30-day mortality risk, to decide where to treat.

    Args:
        confusion: New mental confusion (disorientation in person, place or time, or an Abbreviated Mental Test
            score of 8 or less); 1 point.
        urea_mmol_l: Serum urea in mmol/L (blood urea nitrogen in mg/dL divided by 2.8); 1 point when above 7.
        respiratory_rate: Respiratory rate in breaths/min; 1 point when 30 or more.
        systolic_bp: Systolic blood pressure in mmHg; 1 point (with diastolic) when systolic is below 90.
        diastolic_bp: Diastolic blood pressure in mmHg; 1 point (with systolic) when diastolic is 60 or less.
        age: Age in years; 1 point when 65 or more.

    References:
        Lim WS, van der Eerden MM, Laing R, et al. Defining community acquired pneumonia severity on presentation to
        hospital: an international derivation and validation study. Thorax. 2003;58(5):377-382.
    """
    points = {
        "confusion": int(confusion),
        "urea > 7 mmol/L": int(urea_mmol_l > 7),
        "respiratory rate >= 30/min": int(respiratory_rate >= 30),
        "SBP < 90 or DBP <= 60 mmHg": int(systolic_bp < 90 or diastolic_bp <= 60),
        "age >= 65": int(age >= 65),
    }
    return scored("CURB-65", points, CURB_65_RISKS)


@instrument
def centor_mcisaac(age: Annotated[int, Interval(ge=3, le=120)], temperature_c: TemperatureC, cough_absent: bool,
                   tender_anterior_cervical_nodes: bool, tonsillar_swelling_or_exudate: bool) -> InstrumentResult:
    """Centor score with McIsaac's age modification (-1 to 5): likelihood of group A streptococcal pharyngitis.

    Args:
        age: Age in years (the score was derived for ages 3 and over); 1 point for 3-14, 0 for 15-44, -1 for 45 or
            more.
        temperature_c: Highest temperature in °C (measured or reliably reported); 1 point when above 38.0.
        cough_absent: No cough; 1 point.
        tender_anterior_cervical_nodes: Swollen, tender anterior cervical lymph nodes; 1 point.
        tonsillar_swelling_or_exudate: Tonsillar swelling or exudate; 1 point.

    References:
        Centor RM, Witherspoon JM, Dalton HP, Brody CE, Link K. The diagnosis of strep throat in adults in the
        emergency room. Med Decis Making. 1981;1(3):239-246.
        McIsaac WJ, White D, Tannenbaum D, Low DE. A clinical score to reduce unnecessary antibiotic use in patients
        with sore throat. CMAJ. 1998;158(1):75-83.
    """
    points = {
        "temperature > 38 °C": int(temperature_c > 38.0),
        "absence of cough": int(cough_absent),
        "tender anterior cervical nodes": int(tender_anterior_cervical_nodes),
        "tonsillar swelling or exudate": int(tonsillar_swelling_or_exudate),
        "age": 1 if age <= 14 else 0 if age <= 44 else -1,
    }
    return scored("Centor (McIsaac)", points, MCISAAC_RISKS)
