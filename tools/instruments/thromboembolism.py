"""Venous thromboembolism instruments: Wells scores for deep-vein thrombosis and pulmonary embolism, and the PERC
rule."""

from __future__ import annotations

from clinical_gym.tools.instruments.base import InstrumentResult, Risk, classify, instrument
from clinical_gym.tools.instruments.measures import Age, HeartRate, OxygenSaturation

WELLS_DVT_PRETEST = (Risk(0, "low", ""), Risk(2, "moderate", ""), Risk(9, "high", ""))
WELLS_PE_PRETEST = (Risk(1.5, "low", ""), Risk(6, "moderate", ""), Risk(12.5, "high", ""))


@instrument
def wells_dvt(active_cancer: bool, paralysis_paresis_or_leg_cast: bool, bedridden_or_major_surgery: bool,
              deep_vein_tenderness: bool, entire_leg_swollen: bool, calf_swelling_3cm: bool,
              pitting_edema_symptomatic_leg: bool, collateral_superficial_veins: bool, previous_dvt: bool,
              alternative_diagnosis_as_likely: bool) -> InstrumentResult:
    """Wells score for deep-vein thrombosis (-2 to 9), 2003 version with previous DVT: pretest probability of
    lower-limb DVT.

    Args:
        active_cancer: Active cancer (treatment ongoing, within the previous 6 months, or palliative); 1 point.
        paralysis_paresis_or_leg_cast: Paralysis, paresis or recent plaster immobilisation of a leg; 1 point.
        bedridden_or_major_surgery: Recently bedridden for 3 days or more, or major surgery within the previous
            12 weeks needing general or regional anaesthesia; 1 point.
        deep_vein_tenderness: Localised tenderness along the distribution of the deep venous system; 1 point.
        entire_leg_swollen: Entire leg swollen; 1 point.
        calf_swelling_3cm: Calf swelling at least 3 cm larger than the other side (measured 10 cm below the tibial
            tuberosity); 1 point.
        pitting_edema_symptomatic_leg: Pitting oedema confined to the symptomatic leg; 1 point.
        collateral_superficial_veins: Collateral superficial (non-varicose) veins; 1 point.
        previous_dvt: Previously documented DVT; 1 point.
        alternative_diagnosis_as_likely: An alternative diagnosis at least as likely as DVT; minus 2 points.

    References:
        Wells PS, Anderson DR, Bormanis J, et al. Value of assessment of pretest probability of deep-vein thrombosis
        in clinical management. Lancet. 1997;350(9094):1795-1798.
        Wells PS, Anderson DR, Rodger M, et al. Evaluation of D-dimer in the diagnosis of suspected deep-vein
        thrombosis. N Engl J Med. 2003;349(13):1227-1235.
    """
    points = {
        "active cancer": int(active_cancer),
        "paralysis, paresis or leg cast": int(paralysis_paresis_or_leg_cast),
        "bedridden >= 3 days or major surgery": int(bedridden_or_major_surgery),
        "deep vein tenderness": int(deep_vein_tenderness),
        "entire leg swollen": int(entire_leg_swollen),
        "calf swelling >= 3 cm": int(calf_swelling_3cm),
        "pitting oedema": int(pitting_edema_symptomatic_leg),
        "collateral superficial veins": int(collateral_superficial_veins),
        "previous DVT": int(previous_dvt),
        "alternative diagnosis as likely": -2 * int(alternative_diagnosis_as_likely),
    }
    score = sum(points.values())
    pretest = classify(score, WELLS_DVT_PRETEST).category
    if score >= 2:
        category, action = "DVT likely", "proceed to compression ultrasonography (a D-dimer alone cannot exclude DVT)."
    else:
        category, action = "DVT unlikely", "a negative D-dimer excludes DVT without imaging; if positive, ultrasound."
    return InstrumentResult(instrument="Wells DVT", score=score, category=category, points=points,
                            interpretation=f"Score {'2 or more' if score >= 2 else 'below 2'} ({pretest} pretest "
                                           f"probability on the three-level scale): {action}")


@instrument
def wells_pe(clinical_signs_of_dvt: bool, pe_most_likely_diagnosis: bool, heart_rate: HeartRate,
             immobilization_or_recent_surgery: bool, previous_dvt_or_pe: bool, hemoptysis: bool,
             malignancy: bool) -> InstrumentResult:
    """Wells score for pulmonary embolism (0-12.5): pretest probability of PE.

    Args:
        clinical_signs_of_dvt: Clinical signs and symptoms of DVT (at least leg swelling and pain on palpation of the
            deep veins); 3 points.
        pe_most_likely_diagnosis: PE is the most likely diagnosis (an alternative diagnosis is less likely); 3 points.
        heart_rate: Heart rate in beats/min; 1.5 points when above 100.
        immobilization_or_recent_surgery: Immobilisation for 3 or more days or surgery in the previous 4 weeks;
            1.5 points.
        previous_dvt_or_pe: Previously diagnosed DVT or PE; 1.5 points.
        hemoptysis: Haemoptysis; 1 point.
        malignancy: Malignancy (on treatment, treated in the last 6 months, or palliative); 1 point.

    References:
        Wells PS, Anderson DR, Rodger M, et al. Derivation of a simple clinical model to categorize patients
        probability of pulmonary embolism: increasing the models utility with the SimpliRED D-dimer. Thromb Haemost.
        2000;83(3):416-420.
    """
    points = {
        "signs of DVT": 3 * int(clinical_signs_of_dvt),
        "PE most likely diagnosis": 3 * int(pe_most_likely_diagnosis),
        "heart rate > 100": 1.5 * int(heart_rate > 100),
        "immobilisation or surgery": 1.5 * int(immobilization_or_recent_surgery),
        "previous DVT/PE": 1.5 * int(previous_dvt_or_pe),
        "haemoptysis": int(hemoptysis),
        "malignancy": int(malignancy),
    }
    score = sum(points.values())
    pretest = classify(score, WELLS_PE_PRETEST).category
    if score > 4:
        category, action = "PE likely", "proceed to CT pulmonary angiography (a D-dimer cannot exclude PE)."
    else:
        category, action = "PE unlikely", "a negative D-dimer excludes PE without imaging; if positive, CT pulmonary " \
                                          "angiography."
    return InstrumentResult(instrument="Wells PE", score=score, category=category, points=points,
                            interpretation=f"Score {'above 4' if score > 4 else '4 or less'} ({pretest} pretest "
                                           f"probability on the three-level scale: below 2 low, 2-6 moderate, above 6 "
                                           f"high): {action}")


@instrument
def perc_rule(age: Age, heart_rate: HeartRate, spo2_percent: OxygenSaturation, unilateral_leg_swelling: bool,
              hemoptysis: bool, recent_surgery_or_trauma: bool, prior_dvt_or_pe: bool,
              hormone_use: bool) -> InstrumentResult:
    """PERC rule (0-8 criteria): Pulmonary Embolism Rule-out Criteria, for patients already judged at low pretest
    probability of PE.

    Args:
        age: Age in years; positive when 50 or more.
        heart_rate: Heart rate in beats/min; positive when 100 or more.
        spo2_percent: Oxygen saturation on room air in percent; positive when below 95.
        unilateral_leg_swelling: Unilateral leg swelling; positive.
        hemoptysis: Haemoptysis; positive.
        recent_surgery_or_trauma: Surgery or trauma within the past 4 weeks that needed general anaesthesia or
            hospital treatment; positive.
        prior_dvt_or_pe: Previous DVT or PE; positive.
        hormone_use: Oral contraceptive, hormone replacement or other oestrogen use; positive.

    References:
        Kline JA, Mitchell AM, Kabrhel C, Richman PB, Courtney DM. Clinical criteria to prevent unnecessary
        diagnostic testing in emergency department patients with suspected pulmonary embolism. J Thromb Haemost.
        2004;2(8):1247-1255.
    """
    points = {
        "age >= 50": int(age >= 50),
        "heart rate >= 100": int(heart_rate >= 100),
        "SpO2 < 95% on room air": int(spo2_percent < 95),
        "unilateral leg swelling": int(unilateral_leg_swelling),
        "haemoptysis": int(hemoptysis),
        "recent surgery or trauma": int(recent_surgery_or_trauma),
        "prior DVT or PE": int(prior_dvt_or_pe),
        "hormone use": int(hormone_use),
    }
    score = sum(points.values())
    if score == 0:
        category, meaning = "PERC negative", ("No criterion present: when the clinical pretest probability is low "
                                              "(below 15%), PE is ruled out without D-dimer testing or imaging.")
    else:
        category, meaning = "PERC positive", ("At least one criterion present: PERC cannot rule out PE; test with a "
                                              "D-dimer or imaging according to the pretest probability.")
    return InstrumentResult(instrument="PERC", score=score, category=category, interpretation=meaning, points=points)
