"""Liver and gastrointestinal instruments against worked examples computed by hand from the published formulas and
criteria: MELD-Na (OPTN 2016), Child-Pugh, Alvarado, Glasgow-Blatchford."""

from __future__ import annotations

import pytest

from clinical_gym.tools.instruments import alvarado, child_pugh, glasgow_blatchford, meld_na


@pytest.mark.parametrize("kwargs, meld_i, score, category", [
    # 0.957 ln 1.5 + 0.378 ln 3 + 1.120 ln 1.8 + 0.643 = 2.1046 -> 2.1 -> MELD(i) 21;
    # 21 + 1.32 (137 - 130) - 0.033 x 21 x (137 - 130) = 25.389 -> 25
    (dict(creatinine_mg_dl=1.5, bilirubin_mg_dl=3.0, inr=1.8, sodium_mmol_l=130), 21, 25, "MELD 20-29"),
    # creatinine 3.2: 3.6353 -> 36; sodium 122 bounded to 125: 36 + 15.84 - 14.256 = 37.584 -> 38
    (dict(creatinine_mg_dl=3.2, bilirubin_mg_dl=8.5, inr=2.6, sodium_mmol_l=122), 36, 38, "MELD 30-39"),
    # dialysed twice in the past week: creatinine counts as 4.0: 3.8488 -> 38; 38 + 15.84 - 15.048 = 38.792 -> 39
    (dict(creatinine_mg_dl=3.2, bilirubin_mg_dl=8.5, inr=2.6, sodium_mmol_l=122, dialysis_twice_in_past_week=True),
     38, 39, "MELD 30-39"),
    # creatinine above 4.0 counts as 4.0; 5.0579 -> 51; 51 + 15.84 - 20.196 = 46.644, capped at 40
    (dict(creatinine_mg_dl=6.0, bilirubin_mg_dl=30.0, inr=5.0, sodium_mmol_l=125), 51, 40, "MELD 40"),
    # MELD(i) 11 or less gets no sodium adjustment: 0.9030 -> 0.9 -> 9
    (dict(creatinine_mg_dl=1.0, bilirubin_mg_dl=1.5, inr=1.1, sodium_mmol_l=128), 9, 9, "MELD 9 or less"),
    # values below 1.0 count as 1.0 and sodium above 137 as 137: 0.643 -> 0.6 -> 6
    (dict(creatinine_mg_dl=0.6, bilirubin_mg_dl=0.4, inr=0.9, sodium_mmol_l=142), 6, 6, "MELD 9 or less"),
])
def test_meld_na_optn_formula_and_bounds(kwargs, meld_i, score, category):
    r = meld_na(**kwargs)
    assert r.points["MELD(i)"] == meld_i
    assert (r.score, r.category) == (score, category)


def test_meld_na_sodium_only_counts_above_meld_11():
    low = dict(creatinine_mg_dl=1.0, bilirubin_mg_dl=1.5, inr=1.1)
    assert meld_na(**low, sodium_mmol_l=125).score == meld_na(**low, sodium_mmol_l=137).score == 9
    assert meld_na(creatinine_mg_dl=1.5, bilirubin_mg_dl=3.0, inr=1.8, sodium_mmol_l=137).score == 21


def test_meld_na_rejects_non_positive_labs():
    with pytest.raises(ValueError, match="argument 'inr': expected number > 0 and <= 20, got number 0"):
        meld_na(creatinine_mg_dl=1.0, bilirubin_mg_dl=1.0, inr=0, sodium_mmol_l=135)


def _child_pugh(**overrides):
    base = dict(bilirubin_mg_dl=1.0, albumin_g_dl=4.0, inr=1.0, ascites="none", encephalopathy="none")
    return child_pugh(**{**base, **overrides})


@pytest.mark.parametrize("overrides, score, category", [
    (dict(), 5, "Child-Pugh class A"),
    (dict(inr=1.7), 6, "Child-Pugh class A"),
    # bilirubin 2.5 -> 2, albumin 3.0 -> 2, INR 1.5 -> 1, mild ascites 2, no encephalopathy 1
    (dict(bilirubin_mg_dl=2.5, albumin_g_dl=3.0, inr=1.5, ascites="mild"), 8, "Child-Pugh class B"),
    (dict(bilirubin_mg_dl=3.5, albumin_g_dl=2.5, inr=2.5, ascites="moderate_to_severe", encephalopathy="grade_3_4"),
     15, "Child-Pugh class C"),
    (dict(bilirubin_mg_dl=3.1, albumin_g_dl=2.7, inr=2.4, encephalopathy="grade_1_2"), 12, "Child-Pugh class C"),
])
def test_child_pugh(overrides, score, category):
    r = _child_pugh(**overrides)
    assert (r.score, r.category) == (score, category)


@pytest.mark.parametrize("item, value, points", [
    ("bilirubin_mg_dl", 1.9, 1), ("bilirubin_mg_dl", 2.0, 2), ("bilirubin_mg_dl", 3.0, 2), ("bilirubin_mg_dl", 3.1, 3),
    ("albumin_g_dl", 3.6, 1), ("albumin_g_dl", 3.5, 2), ("albumin_g_dl", 2.8, 2), ("albumin_g_dl", 2.7, 3),
    ("inr", 1.69, 1), ("inr", 1.7, 2), ("inr", 2.3, 2), ("inr", 2.31, 3),
])
def test_child_pugh_band_edges(item, value, points):
    label = {"bilirubin_mg_dl": "bilirubin", "albumin_g_dl": "albumin", "inr": "INR"}[item]
    assert _child_pugh(**{item: value}).points[label] == points


def _alvarado(**overrides):
    base = dict(migration_to_rlq=False, anorexia=False, nausea_or_vomiting=False, rlq_tenderness=False,
                rebound_tenderness=False, temperature_c=36.8, wbc_k_per_ul=7.0, neutrophil_percent=60)
    return alvarado(**{**base, **overrides})


@pytest.mark.parametrize("overrides, score, category", [
    (dict(migration_to_rlq=True, anorexia=True, nausea_or_vomiting=True, rlq_tenderness=True, rebound_tenderness=True,
          temperature_c=37.5, wbc_k_per_ul=12.0, neutrophil_percent=80), 10, "appendicitis very probable"),
    # migration 1 + RLQ tenderness 2 + leukocytosis 2
    (dict(migration_to_rlq=True, rlq_tenderness=True, wbc_k_per_ul=10.5), 5, "appendicitis possible"),
    # 37.3 °C scores; WBC exactly 10 and neutrophils exactly 75% do not
    (dict(temperature_c=37.3, wbc_k_per_ul=10.0, neutrophil_percent=75, rlq_tenderness=True), 3,
     "appendicitis unlikely"),
    (dict(rlq_tenderness=True, wbc_k_per_ul=14, anorexia=True, nausea_or_vomiting=True, neutrophil_percent=76), 7,
     "appendicitis probable"),
])
def test_alvarado(overrides, score, category):
    r = _alvarado(**overrides)
    assert (r.score, r.category) == (score, category)


def _blatchford(**overrides):
    base = dict(urea_mmol_l=5.0, hemoglobin_g_l=140, sex="male", systolic_bp=120, pulse=80, melena=False,
                syncope=False, hepatic_disease=False, cardiac_failure=False)
    return glasgow_blatchford(**{**base, **overrides})


def test_glasgow_blatchford_worked_example():
    # urea 9.0 -> 3, Hb 115 g/L man -> 3, SBP 95 -> 2, pulse 105 -> 1, melaena 1
    r = _blatchford(urea_mmol_l=9.0, hemoglobin_g_l=115, systolic_bp=95, pulse=105, melena=True)
    assert (r.score, r.category) == (10, "not low risk")
    assert (_blatchford().score, _blatchford().category) == (0, "very low risk")


@pytest.mark.parametrize("overrides, item, points", [
    (dict(urea_mmol_l=6.4), "blood urea", 0), (dict(urea_mmol_l=6.5), "blood urea", 2),
    (dict(urea_mmol_l=8.0), "blood urea", 3), (dict(urea_mmol_l=10.0), "blood urea", 4),
    (dict(urea_mmol_l=25.0), "blood urea", 6),
    (dict(hemoglobin_g_l=129), "haemoglobin", 1), (dict(hemoglobin_g_l=100), "haemoglobin", 3),
    (dict(hemoglobin_g_l=99), "haemoglobin", 6),
    (dict(sex="female", hemoglobin_g_l=125), "haemoglobin", 0),
    (dict(sex="female", hemoglobin_g_l=115), "haemoglobin", 1),
    (dict(sex="female", hemoglobin_g_l=95), "haemoglobin", 6),
    (dict(systolic_bp=109), "systolic BP", 1), (dict(systolic_bp=90), "systolic BP", 2),
    (dict(systolic_bp=89), "systolic BP", 3),
    (dict(syncope=True), "syncope", 2), (dict(hepatic_disease=True), "hepatic disease", 2),
    (dict(cardiac_failure=True), "cardiac failure", 2), (dict(pulse=100), "pulse >= 100", 1),
])
def test_glasgow_blatchford_bands(overrides, item, points):
    assert _blatchford(**overrides).points[item] == points


def test_glasgow_blatchford_score_one_is_still_very_low_risk():
    r = _blatchford(sex="female", hemoglobin_g_l=115)
    assert (r.score, r.category) == (1, "very low risk")
    assert _blatchford(pulse=100, melena=True).category == "not low risk"
