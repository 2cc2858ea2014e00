"""Cardiology instruments: chest pain risk (HEART, TIMI UA/NSTEMI) and atrial fibrillation stroke and bleeding risk
(CHA2DS2-VASc, HAS-BLED)."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Interval

from clinical_gym.tools.instruments.base import InstrumentResult, Risk, classify, instrument, scored
from clinical_gym.tools.instruments.measures import Age, Count

TroponinRatio = Annotated[float, Interval(ge=0, le=10000)]
STDeviation = Annotated[float, Interval(ge=0, le=20)]

HEART_RISKS = (
    Risk(3, "low risk", "Major adverse cardiac events within 6 weeks about 1.7% in the prospective validation "
                        "cohort; candidate for early discharge with outpatient follow-up."),
    Risk(6, "moderate risk", "Major adverse cardiac events within 6 weeks about 16.6%; admit for observation and "
                             "further (non-invasive) investigation."),
    Risk(10, "high risk", "Major adverse cardiac events within 6 weeks about 50.1%; early invasive strategy."),
)

# 14-day rate of death, new or recurrent MI, or severe recurrent ischaemia needing urgent revascularisation (TIMI 11B).
TIMI_EVENT_RATES = {0: "4.7%", 1: "4.7%", 2: "8.3%", 3: "13.2%", 4: "19.9%", 5: "26.2%", 6: "40.9%", 7: "40.9%"}
TIMI_RISKS = (
    Risk(2, "low risk", "Scores 0-2."),
    Risk(4, "intermediate risk", "Scores 3-4; in TACTICS-TIMI 18 patients scoring 3 or more gained most from an "
                                 "early invasive strategy."),
    Risk(7, "high risk", "Scores 5-7; in TACTICS-TIMI 18 patients scoring 3 or more gained most from an early "
                         "invasive strategy."),
)

HAS_BLED_RATES = {0: "1.13", 1: "1.02", 2: "1.88", 3: "3.74", 4: "8.70", 5: "12.50"}


@instrument
def heart_score(history: Literal["slightly_suspicious", "moderately_suspicious", "highly_suspicious"],
                ecg: Literal["normal", "nonspecific_repolarization", "significant_st_deviation"], age: Age,
                risk_factor_count: Annotated[int, Interval(ge=0, le=6)], atherosclerotic_disease: bool,
                troponin_ratio: TroponinRatio) -> InstrumentResult:
    """HEART score (0-10): risk of major adverse cardiac events in emergency department patients with chest pain.

    Args:
        history: How suspicious the history is for acute coronary syndrome: slightly (0), moderately (1) or highly
            (2) suspicious.
        ecg: ECG: normal (0); nonspecific repolarization disturbance, including bundle branch block, left
            ventricular hypertrophy, paced rhythm or digoxin effect (1); significant ST deviation not due to those (2).
        age: Age in years; 0 points below 45, 1 for 45-64, 2 for 65 or more.
        risk_factor_count: Number of risk factors present: hypertension, hypercholesterolaemia, diabetes, obesity
            (BMI above 30), smoking (current or stopped within 3 months), family history of premature cardiovascular
            disease. 1-2 factors score 1; 3 or more score 2.
        atherosclerotic_disease: Known atherosclerotic disease (prior myocardial infarction, PCI or CABG, stroke or
            TIA, peripheral arterial disease); scores 2 for risk factors regardless of the count.
        troponin_ratio: Initial troponin divided by the assay's upper reference limit (normal limit); 0 points at
            or below 1, 1 point above 1 up to 3, 2 points above 3.

    References:
        Six AJ, Backus BE, Kelder JC. Chest pain in the emergency room: value of the HEART score. Neth Heart J.
        2008;16(6):191-196.
        Backus BE, Six AJ, Kelder JC, et al. A prospective validation of the HEART score for chest pain patients at
        the emergency department. Int J Cardiol. 2013;168(3):2153-2158.
    """
    levels = {"slightly_suspicious": 0, "moderately_suspicious": 1, "highly_suspicious": 2,
              "normal": 0, "nonspecific_repolarization": 1, "significant_st_deviation": 2}
    points = {
        "history": levels[history],
        "ECG": levels[ecg],
        "age": 0 if age < 45 else 1 if age < 65 else 2,
        "risk factors": 2 if atherosclerotic_disease or risk_factor_count >= 3 else int(risk_factor_count > 0),
        "troponin": 0 if troponin_ratio <= 1 else 1 if troponin_ratio <= 3 else 2,
    }
    return scored("HEART", points, HEART_RISKS)


@instrument
def timi_ua_nstemi(age: Age, cad_risk_factor_count: Annotated[int, Interval(ge=0, le=5)], known_cad: bool,
                   aspirin_past_7_days: bool, angina_episodes_past_24h: Count, st_deviation_mm: STDeviation,
                   positive_cardiac_marker: bool) -> InstrumentResult:
    """TIMI risk score for unstable angina / non-ST-elevation MI (0-7): 14-day risk of death, myocardial infarction
    or urgent revascularisation.

    Args:
        age: Age in years; 1 point when 65 or more.
        cad_risk_factor_count: Number of coronary risk factors: family history of coronary disease, hypertension,
            hypercholesterolaemia, diabetes, current smoking; 1 point when 3 or more.
        known_cad: Known coronary artery disease (prior stenosis of 50% or more); 1 point.
        aspirin_past_7_days: Aspirin taken in the past 7 days; 1 point.
        angina_episodes_past_24h: Episodes of angina at rest or with minimal exertion in the past 24 hours; 1 point
            (severe angina) when 2 or more.
        st_deviation_mm: Largest ST-segment deviation on the presenting ECG in mm; 1 point when 0.5 or more.
        positive_cardiac_marker: Raised cardiac marker (troponin or CK-MB); 1 point.

    References:
        Antman EM, Cohen M, Bernink PJ, et al. The TIMI risk score for unstable angina/non-ST elevation MI: a method
        for prognostication and therapeutic decision making. JAMA. 2000;284(7):835-842.
        Cannon CP, Weintraub WS, Demopoulos LA, et al. Comparison of early invasive and conservative strategies in
        patients with unstable coronary syndromes treated with the glycoprotein IIb/IIIa inhibitor tirofiban
        (TACTICS-TIMI 18). N Engl J Med. 2001;344(25):1879-1887.
    """
    points = {
        "age >= 65": int(age >= 65),
        ">= 3 coronary risk factors": int(cad_risk_factor_count >= 3),
        "known coronary stenosis >= 50%": int(known_cad),
        "aspirin in past 7 days": int(aspirin_past_7_days),
        ">= 2 anginal episodes in 24 h": int(angina_episodes_past_24h >= 2),
        "ST deviation >= 0.5 mm": int(st_deviation_mm >= 0.5),
        "positive cardiac marker": int(positive_cardiac_marker),
    }
    score = sum(points.values())
    risk = classify(score, TIMI_RISKS)
    meaning = (f"{risk.interpretation} 14-day risk of death, new or recurrent myocardial infarction or severe "
               f"recurrent ischaemia needing urgent revascularisation: {TIMI_EVENT_RATES[score]} in the derivation "
               f"cohort.")
    return InstrumentResult(instrument="TIMI UA/NSTEMI", score=score, category=risk.category, interpretation=meaning,
                            points=points)


@instrument
def cha2ds2_vasc(age: Age, sex: Literal["female", "male"], congestive_heart_failure: bool, hypertension: bool,
                 diabetes: bool, stroke_tia_or_thromboembolism: bool, vascular_disease: bool) -> InstrumentResult:
    """CHA2DS2-VASc (0-9): stroke and thromboembolism risk in non-valvular atrial fibrillation, to guide
    anticoagulation.

    Args:
        age: Age in years; 1 point for 65-74, 2 points for 75 or more.
        sex: Sex; female scores 1 (a risk modifier rather than a risk factor on its own).
        congestive_heart_failure: Congestive heart failure or moderate-to-severe left ventricular systolic
            dysfunction; 1 point.
        hypertension: Hypertension (treated, or resting blood pressure above 140/90 mmHg); 1 point.
        diabetes: Diabetes mellitus; 1 point.
        stroke_tia_or_thromboembolism: Prior stroke, transient ischaemic attack or systemic thromboembolism; 2 points.
        vascular_disease: Vascular disease (prior myocardial infarction, peripheral arterial disease or aortic
            plaque); 1 point.

    References:
        Lip GYH, Nieuwlaat R, Pisters R, Lane DA, Crijns HJGM. Refining clinical risk stratification for predicting
        stroke and thromboembolism in atrial fibrillation using a novel risk factor-based approach: the Euro Heart
        Survey on atrial fibrillation. Chest. 2010;137(2):263-272.
        Hindricks G, Potpara T, Dagres N, et al. 2020 ESC Guidelines for the diagnosis and management of atrial
        fibrillation. Eur Heart J. 2021;42(5):373-498 (treatment thresholds).
    """
    points = {
        "congestive heart failure": int(congestive_heart_failure),
        "hypertension": int(hypertension),
        "age": 2 if age >= 75 else 1 if age >= 65 else 0,
        "diabetes": int(diabetes),
        "stroke/TIA/thromboembolism": 2 * int(stroke_tia_or_thromboembolism),
        "vascular disease": int(vascular_disease),
        "female sex": int(sex == "female"),
    }
    score = sum(points.values())
    risk_factors = score - points["female sex"]
    if risk_factors == 0:
        category, meaning = "low risk", "No risk factor besides sex: no antithrombotic therapy for stroke prevention."
    elif risk_factors == 1:
        category, meaning = "intermediate risk", ("One non-sex risk factor (score 1 in men, 2 in women): oral "
                                                  "anticoagulation should be considered, weighing bleeding risk "
                                                  "and patient preference.")
    else:
        category, meaning = "high risk", ("Two or more non-sex risk factors (score 2 or more in men, 3 or more in "
                                          "women): oral anticoagulation is recommended unless contraindicated.")
    return InstrumentResult(instrument="CHA2DS2-VASc", score=score, category=category, interpretation=meaning,
                            points=points)


@instrument
def has_bled(uncontrolled_hypertension: bool, abnormal_renal_function: bool, abnormal_liver_function: bool,
             prior_stroke: bool, bleeding_history_or_predisposition: bool, labile_inr: bool, age: Age,
             antiplatelet_or_nsaid_use: bool, alcohol_excess: bool) -> InstrumentResult:
    """HAS-BLED (0-9): 1-year risk of major bleeding in patients with atrial fibrillation on anticoagulation.

    Args:
        uncontrolled_hypertension: Hypertension with systolic blood pressure above 160 mmHg; 1 point.
        abnormal_renal_function: Chronic dialysis, renal transplant, or serum creatinine 200 µmol/L (2.26 mg/dL) or
            more; 1 point.
        abnormal_liver_function: Chronic hepatic disease (e.g. cirrhosis) or biochemical hepatic derangement
            (bilirubin above 2x the upper limit of normal with AST/ALT/alkaline phosphatase above 3x); 1 point.
        prior_stroke: Previous stroke; 1 point.
        bleeding_history_or_predisposition: Previous major bleeding or a predisposition to bleeding (e.g. bleeding
            diathesis, anaemia); 1 point.
        labile_inr: Labile INRs on a vitamin K antagonist (unstable or high, or time in therapeutic range below 60%);
            1 point.
        age: Age in years; 1 point (elderly) when above 65.
        antiplatelet_or_nsaid_use: Concomitant antiplatelet agents or NSAIDs; 1 point.
        alcohol_excess: Alcohol use of 8 or more units (drinks) a week; 1 point.

    References:
        Pisters R, Lane DA, Nieuwlaat R, de Vos CB, Crijns HJGM, Lip GYH. A novel user-friendly score (HAS-BLED) to
        assess 1-year risk of major bleeding in patients with atrial fibrillation: the Euro Heart Survey. Chest.
        2010;138(5):1093-1100.
    """
    points = {
        "uncontrolled hypertension": int(uncontrolled_hypertension),
        "abnormal renal function": int(abnormal_renal_function),
        "abnormal liver function": int(abnormal_liver_function),
        "stroke": int(prior_stroke),
        "bleeding": int(bleeding_history_or_predisposition),
        "labile INR": int(labile_inr),
        "elderly (> 65)": int(age > 65),
        "drugs (antiplatelet/NSAID)": int(antiplatelet_or_nsaid_use),
        "alcohol": int(alcohol_excess),
    }
    score = sum(points.values())
    rate = HAS_BLED_RATES.get(score)
    observed = (f" Major bleeds in the derivation cohort: {rate} per 100 patient-years at this score." if rate else
                " Few patients in the derivation cohort scored this high.")
    if score >= 3:
        category, meaning = "high risk", ("Score 3 or more: high bleeding risk; correct modifiable risk factors and "
                                          "review regularly. A high score alone is not a reason to withhold "
                                          "anticoagulation.")
    else:
        category, meaning = "low to moderate risk", "Score 0-2: bleeding risk is not high; address modifiable factors."
    return InstrumentResult(instrument="HAS-BLED", score=score, category=category, interpretation=meaning + observed,
                            points=points)
