"""Cardiovascular and thromboembolism instruments against worked examples scored by hand from the published
criteria: HEART, TIMI UA/NSTEMI, CHA2DS2-VASc, HAS-BLED, Wells DVT, Wells PE, PERC."""

from __future__ import annotations

import pytest

from clinical_gym.tools.instruments import cha2ds2_vasc, has_bled, heart_score, perc_rule, timi_ua_nstemi, wells_dvt, wells_pe


@pytest.mark.parametrize("kwargs, score, category", [
    # highly suspicious 2, nonspecific repolarisation 1, age 66 -> 2, two risk factors -> 1, troponin at the limit 0
    (dict(history="highly_suspicious", ecg="nonspecific_repolarization", age=66, risk_factor_count=2,
          atherosclerotic_disease=False, troponin_ratio=1.0), 6, "moderate risk"),
    (dict(history="slightly_suspicious", ecg="normal", age=40, risk_factor_count=0, atherosclerotic_disease=False,
          troponin_ratio=0.5), 0, "low risk"),
    # known atherosclerosis scores 2 whatever the count; troponin 4x the limit scores 2
    (dict(history="highly_suspicious", ecg="significant_st_deviation", age=70, risk_factor_count=0,
          atherosclerotic_disease=True, troponin_ratio=4.0), 10, "high risk"),
    # age 45 -> 1, three risk factors -> 2, troponin 3x -> 1
    (dict(history="slightly_suspicious", ecg="normal", age=45, risk_factor_count=3, atherosclerotic_disease=False,
          troponin_ratio=3.0), 4, "moderate risk"),
    (dict(history="moderately_suspicious", ecg="normal", age=44, risk_factor_count=1, atherosclerotic_disease=False,
          troponin_ratio=1.01), 3, "low risk"),
])
def test_heart_score(kwargs, score, category):
    r = heart_score(**kwargs)
    assert (r.score, r.category) == (score, category)


def test_timi_all_seven_criteria():
    r = timi_ua_nstemi(age=70, cad_risk_factor_count=3, known_cad=True, aspirin_past_7_days=True,
                       angina_episodes_past_24h=2, st_deviation_mm=0.5, positive_cardiac_marker=True)
    assert (r.score, r.category) == (7, "high risk")
    assert "40.9%" in r.interpretation


@pytest.mark.parametrize("kwargs, score, category, rate", [
    (dict(age=50, cad_risk_factor_count=2, known_cad=False, aspirin_past_7_days=True, angina_episodes_past_24h=1,
          st_deviation_mm=0.4, positive_cardiac_marker=False), 1, "low risk", "4.7%"),
    (dict(age=65, cad_risk_factor_count=1, known_cad=False, aspirin_past_7_days=False, angina_episodes_past_24h=3,
          st_deviation_mm=1.0, positive_cardiac_marker=False), 3, "intermediate risk", "13.2%"),
    (dict(age=64, cad_risk_factor_count=4, known_cad=True, aspirin_past_7_days=True, angina_episodes_past_24h=0,
          st_deviation_mm=0.0, positive_cardiac_marker=True), 4, "intermediate risk", "19.9%"),
    (dict(age=80, cad_risk_factor_count=3, known_cad=True, aspirin_past_7_days=True, angina_episodes_past_24h=0,
          st_deviation_mm=0.0, positive_cardiac_marker=True), 5, "high risk", "26.2%"),
])
def test_timi_scores_and_event_rates(kwargs, score, category, rate):
    r = timi_ua_nstemi(**kwargs)
    assert (r.score, r.category) == (score, category)
    assert rate in r.interpretation


def _cha2ds2_vasc(**overrides):
    base = dict(age=50, sex="male", congestive_heart_failure=False, hypertension=False, diabetes=False,
                stroke_tia_or_thromboembolism=False, vascular_disease=False)
    return cha2ds2_vasc(**{**base, **overrides})


def test_cha2ds2_vasc_woman_76_with_hypertension_and_diabetes():
    # age >= 75 -> 2, female 1, hypertension 1, diabetes 1
    r = _cha2ds2_vasc(age=76, sex="female", hypertension=True, diabetes=True)
    assert (r.score, r.category) == (5, "high risk")


@pytest.mark.parametrize("overrides, score, category", [
    (dict(), 0, "low risk"),
    (dict(sex="female"), 1, "low risk"),  # female sex alone is a modifier, not a risk factor
    (dict(age=65), 1, "intermediate risk"),
    (dict(age=65, sex="female"), 2, "intermediate risk"),
    (dict(age=74, hypertension=True), 2, "high risk"),
    (dict(sex="female", vascular_disease=True, congestive_heart_failure=True), 3, "high risk"),
    (dict(stroke_tia_or_thromboembolism=True), 2, "high risk"),
    (dict(age=80, sex="female", congestive_heart_failure=True, hypertension=True, diabetes=True,
          stroke_tia_or_thromboembolism=True, vascular_disease=True), 9, "high risk"),
])
def test_cha2ds2_vasc_sex_specific_categories(overrides, score, category):
    r = _cha2ds2_vasc(**overrides)
    assert (r.score, r.category) == (score, category)


def _has_bled(**overrides):
    base = dict(uncontrolled_hypertension=False, abnormal_renal_function=False, abnormal_liver_function=False,
                prior_stroke=False, bleeding_history_or_predisposition=False, labile_inr=False, age=60,
                antiplatelet_or_nsaid_use=False, alcohol_excess=False)
    return has_bled(**{**base, **overrides})


def test_has_bled():
    r = _has_bled(uncontrolled_hypertension=True, age=70, antiplatelet_or_nsaid_use=True)
    assert (r.score, r.category) == (3, "high risk")
    assert "3.74 per 100 patient-years" in r.interpretation
    assert _has_bled(age=65).score == 0  # elderly means above 65
    assert (_has_bled(age=66, alcohol_excess=True).score, _has_bled(age=66).category) == (2, "low to moderate risk")
    everything = _has_bled(**{k: True for k in ("uncontrolled_hypertension", "abnormal_renal_function",
                                                "abnormal_liver_function", "prior_stroke",
                                                "bleeding_history_or_predisposition", "labile_inr",
                                                "antiplatelet_or_nsaid_use", "alcohol_excess")}, age=80)
    assert everything.score == 9 and "Few patients" in everything.interpretation


def _wells_dvt(**present):
    items = ("active_cancer", "paralysis_paresis_or_leg_cast", "bedridden_or_major_surgery", "deep_vein_tenderness",
             "entire_leg_swollen", "calf_swelling_3cm", "pitting_edema_symptomatic_leg",
             "collateral_superficial_veins", "previous_dvt", "alternative_diagnosis_as_likely")
    return wells_dvt(**{item: present.get(item, False) for item in items})


def test_wells_dvt():
    likely = _wells_dvt(active_cancer=True, entire_leg_swollen=True, calf_swelling_3cm=True,
                        pitting_edema_symptomatic_leg=True)
    assert (likely.score, likely.category) == (4, "DVT likely")
    assert "high pretest probability" in likely.interpretation
    unlikely = _wells_dvt(deep_vein_tenderness=True, alternative_diagnosis_as_likely=True)
    assert (unlikely.score, unlikely.category) == (-1, "DVT unlikely")
    assert "low pretest probability" in unlikely.interpretation
    threshold = _wells_dvt(previous_dvt=True, bedridden_or_major_surgery=True)
    assert (threshold.score, threshold.category) == (2, "DVT likely")
    assert "moderate pretest probability" in threshold.interpretation
    assert _wells_dvt(previous_dvt=True).category == "DVT unlikely"


def _wells_pe(**overrides):
    base = dict(clinical_signs_of_dvt=False, pe_most_likely_diagnosis=False, heart_rate=80,
                immobilization_or_recent_surgery=False, previous_dvt_or_pe=False, hemoptysis=False, malignancy=False)
    return wells_pe(**{**base, **overrides})


@pytest.mark.parametrize("overrides, score, category, pretest", [
    (dict(clinical_signs_of_dvt=True, heart_rate=110, hemoptysis=True), 5.5, "PE likely", "moderate"),
    (dict(), 0, "PE unlikely", "low"),
    (dict(heart_rate=100, malignancy=True), 1, "PE unlikely", "low"),  # 100 is not above 100
    (dict(heart_rate=101, immobilization_or_recent_surgery=True, previous_dvt_or_pe=True), 4.5, "PE likely",
     "moderate"),
    (dict(pe_most_likely_diagnosis=True, malignancy=True), 4, "PE unlikely", "moderate"),
    (dict(clinical_signs_of_dvt=True, pe_most_likely_diagnosis=True, previous_dvt_or_pe=True), 7.5, "PE likely",
     "high"),
])
def test_wells_pe(overrides, score, category, pretest):
    r = _wells_pe(**overrides)
    assert (r.score, r.category) == (score, category)
    assert f"({pretest} pretest probability" in r.interpretation


def _perc(**overrides):
    base = dict(age=35, heart_rate=88, spo2_percent=98, unilateral_leg_swelling=False, hemoptysis=False,
                recent_surgery_or_trauma=False, prior_dvt_or_pe=False, hormone_use=False)
    return perc_rule(**{**base, **overrides})


@pytest.mark.parametrize("overrides, score, category", [
    (dict(), 0, "PERC negative"),
    (dict(spo2_percent=95, age=49, heart_rate=99), 0, "PERC negative"),
    (dict(age=50), 1, "PERC positive"),
    (dict(heart_rate=100), 1, "PERC positive"),
    (dict(spo2_percent=94), 1, "PERC positive"),
    (dict(hormone_use=True, hemoptysis=True), 2, "PERC positive"),
])
def test_perc_rule(overrides, score, category):
    r = _perc(**overrides)
    assert (r.score, r.category) == (score, category)
