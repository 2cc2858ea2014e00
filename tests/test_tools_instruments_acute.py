"""Acute care instruments against worked examples scored by hand from the published criteria: CURB-65,
Centor/McIsaac, qSOFA, SOFA, NEWS2, APACHE II, GCS, ABCD2."""

from __future__ import annotations

import pytest

from clinical_gym.tools.instruments import (
    abcd2,
    apache_ii,
    centor_mcisaac,
    curb_65,
    glasgow_coma_scale,
    news2,
    qsofa,
    sofa,
)


def test_curb_65_all_five_criteria():
    # confusion, urea 8 > 7 mmol/L, RR 32 >= 30, BP 85/50, age 70 >= 65
    r = curb_65(confusion=True, urea_mmol_l=8, respiratory_rate=32, systolic_bp=85, diastolic_bp=50, age=70)
    assert (r.score, r.category) == (5, "high risk")
    assert "22%" in r.interpretation


@pytest.mark.parametrize("kwargs, score, category", [
    # urea exactly 7 does not score (> 7); RR 30 scores; DBP 60 scores (<= 60); age 64 does not
    (dict(confusion=False, urea_mmol_l=7.0, respiratory_rate=30, systolic_bp=110, diastolic_bp=60, age=64), 2,
     "intermediate risk"),
    (dict(confusion=False, urea_mmol_l=5.2, respiratory_rate=18, systolic_bp=90, diastolic_bp=61, age=65), 1,
     "low risk"),
    (dict(confusion=False, urea_mmol_l=5.2, respiratory_rate=18, systolic_bp=89, diastolic_bp=70, age=40), 1,
     "low risk"),
    (dict(confusion=True, urea_mmol_l=7.1, respiratory_rate=29, systolic_bp=120, diastolic_bp=80, age=80), 3,
     "high risk"),
])
def test_curb_65_thresholds(kwargs, score, category):
    r = curb_65(**kwargs)
    assert (r.score, r.category) == (score, category)


@pytest.mark.parametrize("kwargs, score, category", [
    # child: +1 age, fever, no cough, nodes, exudate -> 5
    (dict(age=10, temperature_c=38.5, cough_absent=True, tender_anterior_cervical_nodes=True,
          tonsillar_swelling_or_exudate=True), 5, "high risk"),
    # 50-year-old: -1 age, 37.5 no point, cough present, nodes +1 -> 0
    (dict(age=50, temperature_c=37.5, cough_absent=False, tender_anterior_cervical_nodes=True,
          tonsillar_swelling_or_exudate=False), 0, "low risk"),
    # 38.0 is not above 38: 0 + 1 + 1 + 1 + 0 = 3
    (dict(age=30, temperature_c=38.0, cough_absent=True, tender_anterior_cervical_nodes=True,
          tonsillar_swelling_or_exudate=True), 3, "intermediate risk"),
    (dict(age=45, temperature_c=36.8, cough_absent=False, tender_anterior_cervical_nodes=False,
          tonsillar_swelling_or_exudate=False), -1, "low risk"),
    (dict(age=14, temperature_c=38.1, cough_absent=False, tender_anterior_cervical_nodes=False,
          tonsillar_swelling_or_exudate=False), 2, "intermediate risk"),
])
def test_centor_mcisaac(kwargs, score, category):
    r = centor_mcisaac(**kwargs)
    assert (r.score, r.category) == (score, category)


def test_centor_mcisaac_rejects_children_under_3():
    with pytest.raises(ValueError, match="argument 'age': expected integer from 3 to 120, got number 2"):
        centor_mcisaac(age=2, temperature_c=38.5, cough_absent=True, tender_anterior_cervical_nodes=True,
                       tonsillar_swelling_or_exudate=True)


def test_qsofa():
    assert qsofa(respiratory_rate=22, systolic_bp=100, altered_mentation=False).score == 2
    assert qsofa(respiratory_rate=22, systolic_bp=100, altered_mentation=False).category == "positive"
    low = qsofa(respiratory_rate=21, systolic_bp=101, altered_mentation=True)
    assert (low.score, low.category) == (1, "negative")


def _sofa(**overrides):
    normal = dict(pao2_fio2_mmhg=450, respiratory_support=False, platelets_k_per_ul=250, bilirubin_mg_dl=0.8,
                  mean_arterial_pressure=85, gcs=15, creatinine_mg_dl=0.9)
    return sofa(**{**normal, **overrides})


def test_sofa_worked_example():
    # P/F 180 ventilated 3, platelets 90 -> 2, bilirubin 2.5 -> 2, norepinephrine 0.08 -> 3, GCS 11 -> 2,
    # creatinine 2.5 -> 2 but urine 400 mL/day -> 3: total 15
    r = _sofa(pao2_fio2_mmhg=180, respiratory_support=True, platelets_k_per_ul=90, bilirubin_mg_dl=2.5,
              mean_arterial_pressure=65, norepinephrine_ug_kg_min=0.08, gcs=11, creatinine_mg_dl=2.5,
              urine_output_ml_per_day=400)
    assert r.points == {"respiration": 3, "coagulation": 2, "liver": 2, "cardiovascular": 3,
                        "central nervous system": 2, "renal": 3}
    assert (r.score, r.category) == (15, "organ dysfunction")
    assert (_sofa().score, _sofa().category) == (0, "no organ dysfunction by the Sepsis-3 threshold")


@pytest.mark.parametrize("overrides, organ, points", [
    (dict(pao2_fio2_mmhg=399), "respiration", 1),
    (dict(pao2_fio2_mmhg=180), "respiration", 2),  # below 200 without respiratory support stays at 2
    (dict(pao2_fio2_mmhg=99, respiratory_support=True), "respiration", 4),
    (dict(platelets_k_per_ul=149), "coagulation", 1),
    (dict(platelets_k_per_ul=49), "coagulation", 3),
    (dict(platelets_k_per_ul=19), "coagulation", 4),
    (dict(bilirubin_mg_dl=1.2), "liver", 1),
    (dict(bilirubin_mg_dl=6.0), "liver", 3),
    (dict(bilirubin_mg_dl=12.0), "liver", 4),
    (dict(mean_arterial_pressure=69), "cardiovascular", 1),
    (dict(dopamine_ug_kg_min=5), "cardiovascular", 2),
    (dict(dobutamine_ug_kg_min=2.5), "cardiovascular", 2),
    (dict(dopamine_ug_kg_min=5.1), "cardiovascular", 3),
    (dict(epinephrine_ug_kg_min=0.1), "cardiovascular", 3),
    (dict(epinephrine_ug_kg_min=0.11), "cardiovascular", 4),
    (dict(dopamine_ug_kg_min=15.5), "cardiovascular", 4),
    (dict(gcs=14), "central nervous system", 1),
    (dict(gcs=9), "central nervous system", 3),
    (dict(gcs=5), "central nervous system", 4),
    (dict(creatinine_mg_dl=1.2), "renal", 1),
    (dict(creatinine_mg_dl=3.5), "renal", 3),
    (dict(creatinine_mg_dl=5.0), "renal", 4),
    (dict(urine_output_ml_per_day=199), "renal", 4),
    (dict(urine_output_ml_per_day=500), "renal", 0),
])
def test_sofa_organ_bands(overrides, organ, points):
    assert _sofa(**overrides).points[organ] == points


def _news2(**overrides):
    normal = dict(respiratory_rate=16, spo2_percent=97, on_supplemental_oxygen=False, systolic_bp=120, pulse=70,
                  consciousness="alert", temperature_c=37.0)
    return news2(**{**normal, **overrides})


def test_news2_worked_examples():
    # RR 24 -> 2, SpO2 95 -> 1, oxygen -> 2, SBP 105 -> 1, pulse 115 -> 2, alert 0, 38.4 -> 1: total 9
    high = _news2(respiratory_rate=24, spo2_percent=95, on_supplemental_oxygen=True, systolic_bp=105, pulse=115,
                  temperature_c=38.4)
    assert (high.score, high.category) == (9, "high clinical risk")
    assert "emergency response" in high.interpretation
    # RR 22 -> 2, SpO2 94 -> 1, pulse 95 -> 1, 38.2 -> 1: total 5
    medium = _news2(respiratory_rate=22, spo2_percent=94, pulse=95, temperature_c=38.2)
    assert (medium.score, medium.category) == (5, "medium clinical risk")
    assert (_news2().score, _news2().category) == (0, "low clinical risk")
    single = _news2(consciousness="new_confusion")
    assert (single.score, single.category) == (3, "low-medium clinical risk")
    assert _news2(pulse=95, temperature_c=38.5).category == "low clinical risk"  # 2 points, no single 3


@pytest.mark.parametrize("overrides, item, points", [
    (dict(respiratory_rate=8), "respiratory rate", 3),
    (dict(respiratory_rate=9), "respiratory rate", 1),
    (dict(respiratory_rate=21), "respiratory rate", 2),
    (dict(respiratory_rate=25), "respiratory rate", 3),
    (dict(spo2_percent=91), "SpO2", 3),
    (dict(spo2_percent=93), "SpO2", 2),
    (dict(systolic_bp=90), "systolic BP", 3),
    (dict(systolic_bp=101), "systolic BP", 1),
    (dict(systolic_bp=219), "systolic BP", 0),
    (dict(systolic_bp=220), "systolic BP", 3),
    (dict(pulse=40), "pulse", 3),
    (dict(pulse=41), "pulse", 1),
    (dict(pulse=131), "pulse", 3),
    (dict(temperature_c=35.0), "temperature", 3),
    (dict(temperature_c=35.1), "temperature", 1),
    (dict(temperature_c=39.0), "temperature", 1),
    (dict(temperature_c=39.1), "temperature", 2),
    # scale 2 (hypercapnic respiratory failure, target 88-92%)
    (dict(spo2_scale=2, spo2_percent=90, on_supplemental_oxygen=True), "SpO2", 0),
    (dict(spo2_scale=2, spo2_percent=95, on_supplemental_oxygen=False), "SpO2", 0),
    (dict(spo2_scale=2, spo2_percent=93, on_supplemental_oxygen=True), "SpO2", 1),
    (dict(spo2_scale=2, spo2_percent=96, on_supplemental_oxygen=True), "SpO2", 2),
    (dict(spo2_scale=2, spo2_percent=97, on_supplemental_oxygen=True), "SpO2", 3),
    (dict(spo2_scale=2, spo2_percent=86), "SpO2", 1),
    (dict(spo2_scale=2, spo2_percent=84), "SpO2", 2),
    (dict(spo2_scale=2, spo2_percent=83), "SpO2", 3),
])
def test_news2_bands(overrides, item, points):
    assert _news2(**overrides).points[item] == points


def _apache(**overrides):
    # Worked example: 39.2 °C -> 3, MAP 65 -> 2, HR 125 -> 2, RR 30 -> 1, FiO2 0.4 with PaO2 58 -> 3, pH 7.28 -> 2,
    # Na 132 -> 0, K 3.2 -> 1, creatinine 2.1 -> 3, Hct 32 -> 0, WBC 18 -> 1, GCS 13 -> 2: APS 20; age 67 -> 5.
    patient = dict(temperature_c=39.2, mean_arterial_pressure=65, heart_rate=125, respiratory_rate=30, fio2=0.4,
                   pao2_mmhg=58, arterial_ph=7.28, sodium_mmol_l=132, potassium_mmol_l=3.2, creatinine_mg_dl=2.1,
                   hematocrit_percent=32, wbc_k_per_ul=18, gcs=13, age=67)
    return apache_ii(**{**patient, **overrides})


def test_apache_ii_worked_example():
    r = _apache()
    assert r.points == {"temperature": 3, "mean arterial pressure": 2, "heart rate": 2, "respiratory rate": 1,
                        "oxygenation": 3, "arterial pH": 2, "sodium": 0, "potassium": 1, "creatinine": 3,
                        "haematocrit": 0, "white cell count": 1, "Glasgow Coma Scale": 2, "age": 5,
                        "chronic health": 0}
    assert (r.score, r.category) == (25, "high severity")


def test_apache_ii_high_fio2_bicarbonate_renal_failure_and_chronic_health():
    # 36.5 -> 0, MAP 100 -> 0, HR 100 -> 0, RR 20 -> 0, FiO2 0.6 with A-aDO2 360 -> 3, HCO3 19 -> 2, Na 150 -> 1,
    # K 5.6 -> 1, creatinine 1.6 -> 2 doubled for acute renal failure -> 4, Hct 47 -> 1, WBC 2.5 -> 2, GCS 15 -> 0:
    # APS 14; age 45 -> 2; severe chronic disease after elective surgery -> 2: total 18
    patient = dict(temperature_c=36.5, mean_arterial_pressure=100, heart_rate=100, respiratory_rate=20, fio2=0.6,
                   aa_gradient_mmhg=360, serum_bicarbonate_mmol_l=19, sodium_mmol_l=150, potassium_mmol_l=5.6,
                   creatinine_mg_dl=1.6, acute_renal_failure=True, hematocrit_percent=47, wbc_k_per_ul=2.5, gcs=15,
                   age=45, severe_chronic_disease=True, admission="elective_postoperative")
    r = apache_ii(**patient)
    assert (r.points["oxygenation"], r.points["serum bicarbonate"], r.points["creatinine"]) == (3, 2, 4)
    assert (r.score, r.category) == (18, "moderate severity")
    assert apache_ii(**{**patient, "admission": "emergency_postoperative"}).score == 21
    assert apache_ii(**{**patient, "admission": "nonoperative"}).score == 21


@pytest.mark.parametrize("overrides, item, points", [
    (dict(temperature_c=41.0), "temperature", 4),
    (dict(temperature_c=38.5), "temperature", 1),
    (dict(temperature_c=38.4), "temperature", 0),
    (dict(temperature_c=35.9), "temperature", 1),
    (dict(temperature_c=29.9), "temperature", 4),
    (dict(mean_arterial_pressure=49), "mean arterial pressure", 4),
    (dict(mean_arterial_pressure=160), "mean arterial pressure", 4),
    (dict(heart_rate=39), "heart rate", 4),
    (dict(heart_rate=40), "heart rate", 3),
    (dict(respiratory_rate=5), "respiratory rate", 4),
    (dict(respiratory_rate=11), "respiratory rate", 1),
    (dict(pao2_mmhg=71), "oxygenation", 0),
    (dict(pao2_mmhg=61), "oxygenation", 1),
    (dict(pao2_mmhg=54), "oxygenation", 4),
    (dict(arterial_ph=7.7), "arterial pH", 4),
    (dict(arterial_ph=7.33), "arterial pH", 0),
    (dict(arterial_ph=7.14), "arterial pH", 4),
    (dict(sodium_mmol_l=110), "sodium", 4),
    (dict(sodium_mmol_l=155), "sodium", 2),
    (dict(potassium_mmol_l=2.4), "potassium", 4),
    (dict(potassium_mmol_l=6.0), "potassium", 3),
    (dict(creatinine_mg_dl=0.5), "creatinine", 2),
    (dict(creatinine_mg_dl=3.5), "creatinine", 4),
    (dict(hematocrit_percent=19), "haematocrit", 4),
    (dict(wbc_k_per_ul=0.9), "white cell count", 4),
    (dict(gcs=3), "Glasgow Coma Scale", 12),
    (dict(age=44), "age", 0),
    (dict(age=75), "age", 6),
])
def test_apache_ii_bands(overrides, item, points):
    assert _apache(**overrides).points[item] == points


def test_apache_ii_requires_the_oxygenation_and_acid_base_inputs_it_needs():
    with pytest.raises(ValueError, match="aa_gradient_mmhg is required when fio2 is 0.5 or more"):
        _apache(fio2=0.5)
    with pytest.raises(ValueError, match="pao2_mmhg is required"):
        _apache(pao2_mmhg=None)
    with pytest.raises(ValueError, match="give arterial_ph, or serum_bicarbonate_mmol_l"):
        _apache(arterial_ph=None)
    with pytest.raises(ValueError, match="argument 'fio2': expected number from 0.21 to 1.0, got number 21"):
        _apache(fio2=21)


@pytest.mark.parametrize("eye, verbal, motor, score, category", [
    (4, 5, 6, 15, "mild"), (3, 4, 6, 13, "mild"), (3, 4, 5, 12, "moderate"), (2, 3, 4, 9, "moderate"),
    (2, 2, 4, 8, "severe"), (1, 1, 1, 3, "severe"),
])
def test_glasgow_coma_scale(eye, verbal, motor, score, category):
    r = glasgow_coma_scale(eye=eye, verbal=verbal, motor=motor)
    assert (r.score, r.category) == (score, category)


def test_glasgow_coma_scale_rejects_impossible_components():
    with pytest.raises(ValueError, match="argument 'verbal': expected integer from 1 to 5, got number 6"):
        glasgow_coma_scale(eye=4, verbal=6, motor=6)
    with pytest.raises(ValueError, match="argument 'motor': expected integer from 1 to 6, got number 0"):
        glasgow_coma_scale(eye=4, verbal=5, motor=0)


@pytest.mark.parametrize("kwargs, score, category", [
    # age 72 +1, BP 150/85 +1, unilateral weakness +2, 45 min +1, diabetes +1 -> 6
    (dict(age=72, systolic_bp=150, diastolic_bp=85, clinical_features="unilateral_weakness", duration_minutes=45,
          diabetes=True), 6, "high risk"),
    (dict(age=55, systolic_bp=130, diastolic_bp=80, clinical_features="speech_disturbance_without_weakness",
          duration_minutes=5, diabetes=False), 1, "low risk"),
    # DBP 90 alone scores; 60 minutes scores 2; age 60 scores
    (dict(age=60, systolic_bp=130, diastolic_bp=90, clinical_features="other", duration_minutes=60,
          diabetes=False), 4, "moderate risk"),
])
def test_abcd2(kwargs, score, category):
    r = abcd2(**kwargs)
    assert (r.score, r.category) == (score, category)
