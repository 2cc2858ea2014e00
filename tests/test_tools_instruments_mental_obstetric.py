"""Questionnaire, obstetric and newborn instruments against worked examples scored by hand from the published
criteria: PHQ-9, GAD-7, AUDIT-C, CIWA-Ar, Bishop, Apgar."""

from __future__ import annotations

import pytest

from clinical_gym.tools.instruments import apgar, audit_c, bishop_score, ciwa_ar, gad_7, phq_9


@pytest.mark.parametrize("items, score, category", [
    ([0, 0, 0, 0, 0, 0, 0, 0, 0], 0, "none-minimal depression"),
    ([1, 1, 1, 1, 0, 0, 0, 0, 0], 4, "none-minimal depression"),
    ([1, 1, 1, 1, 1, 1, 1, 1, 0], 8, "mild depression"),
    ([2, 2, 2, 2, 2, 0, 0, 0, 0], 10, "moderate depression"),
    ([2, 2, 2, 2, 2, 2, 2, 1, 0], 15, "moderately severe depression"),
    ([3, 3, 3, 3, 2, 2, 2, 2, 1], 21, "severe depression"),
    ([3] * 9, 27, "severe depression"),
])
def test_phq_9(items, score, category):
    r = phq_9(item_scores=items)
    assert (r.score, r.category) == (score, category)


def test_phq_9_item_9_always_flags_suicide_risk():
    assert "assess suicide risk" in phq_9(item_scores=[0, 0, 0, 0, 0, 0, 0, 0, 1]).interpretation
    assert "assess suicide risk" not in phq_9(item_scores=[3, 3, 3, 3, 3, 3, 3, 3, 0]).interpretation


@pytest.mark.parametrize("items, message", [
    ([1, 1, 1, 1, 1, 1, 1, 1], "argument 'item_scores': expected list of exactly 9 items, each integer from 0 to 3"),
    ([1, 1, 1, 1, 1, 1, 1, 1, 4], "argument 'item_scores[8]': expected integer from 0 to 3, got number 4"),
])
def test_phq_9_needs_nine_answers_from_0_to_3(items, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        phq_9(item_scores=items)


@pytest.mark.parametrize("items, score, category", [
    ([0] * 7, 0, "minimal anxiety"),
    ([1, 1, 1, 1, 1, 0, 0], 5, "mild anxiety"),
    ([2, 2, 2, 2, 1, 1, 0], 10, "moderate anxiety"),
    ([2, 2, 2, 2, 2, 2, 2], 14, "moderate anxiety"),
    ([3, 3, 3, 2, 2, 1, 1], 15, "severe anxiety"),
    ([3] * 7, 21, "severe anxiety"),
])
def test_gad_7(items, score, category):
    r = gad_7(item_scores=items)
    assert (r.score, r.category) == (score, category)


@pytest.mark.parametrize("items, sex, score, category", [
    ((1, 1, 1), "female", 3, "positive screen"),
    ((1, 1, 1), "male", 3, "negative screen"),
    ((2, 1, 1), "male", 4, "positive screen"),
    ((1, 1, 0), "female", 2, "negative screen"),
    ((4, 4, 4), "male", 12, "positive screen"),
])
def test_audit_c_sex_specific_thresholds(items, sex, score, category):
    r = audit_c(drinking_frequency=items[0], typical_quantity=items[1], heavy_drinking_frequency=items[2], sex=sex)
    assert (r.score, r.category) == (score, category)


CIWA_ITEMS = ("nausea_vomiting", "tremor", "paroxysmal_sweats", "anxiety", "agitation", "tactile_disturbances",
              "auditory_disturbances", "visual_disturbances", "headache", "orientation")


@pytest.mark.parametrize("values, score, category", [
    ((0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0, "minimal to mild withdrawal"),
    ((2, 2, 1, 2, 1, 0, 0, 0, 1, 0), 9, "minimal to mild withdrawal"),
    ((2, 3, 2, 1, 1, 0, 0, 0, 1, 0), 10, "moderate withdrawal"),
    ((2, 3, 2, 3, 2, 1, 0, 0, 2, 0), 15, "moderate withdrawal"),
    ((2, 3, 2, 3, 2, 1, 0, 0, 2, 1), 16, "severe withdrawal"),
    ((7, 7, 7, 7, 7, 7, 7, 7, 7, 4), 67, "severe withdrawal"),
])
def test_ciwa_ar(values, score, category):
    r = ciwa_ar(**dict(zip(CIWA_ITEMS, values, strict=True)))
    assert (r.score, r.category) == (score, category)


def test_ciwa_ar_orientation_goes_to_4_only():
    with pytest.raises(ValueError, match="argument 'orientation': expected integer from 0 to 4, got number 5"):
        ciwa_ar(**dict(zip(CIWA_ITEMS, (0, 0, 0, 0, 0, 0, 0, 0, 0, 5), strict=True)))


@pytest.mark.parametrize("kwargs, score, category", [
    # 3 cm -> 2, 60% -> 2, station -1 -> 2, soft 2, mid 1
    (dict(dilation_cm=3, effacement_percent=60, station=-1, consistency="soft", position="mid"), 9,
     "favourable cervix"),
    (dict(dilation_cm=0, effacement_percent=30, station=-3, consistency="firm", position="posterior"), 0,
     "unfavourable cervix"),
    (dict(dilation_cm=1, effacement_percent=50, station=-2, consistency="medium", position="mid"), 5,
     "unfavourable cervix"),
    (dict(dilation_cm=2, effacement_percent=70, station=0, consistency="medium", position="mid"), 7, "intermediate"),
    (dict(dilation_cm=5, effacement_percent=80, station=2, consistency="soft", position="anterior"), 13,
     "favourable cervix"),
])
def test_bishop_score(kwargs, score, category):
    r = bishop_score(**kwargs)
    assert (r.score, r.category) == (score, category)


@pytest.mark.parametrize("item, value, points", [
    ("dilation_cm", 0.5, 0), ("dilation_cm", 4, 2), ("effacement_percent", 40, 1), ("effacement_percent", 79, 2),
    ("station", 1, 3), ("station", -2, 1),
])
def test_bishop_bands(item, value, points):
    base = dict(dilation_cm=0, effacement_percent=0, station=-3, consistency="firm", position="posterior")
    label = {"dilation_cm": "dilation", "effacement_percent": "effacement", "station": "station"}[item]
    assert bishop_score(**{**base, item: value}).points[label] == points


@pytest.mark.parametrize("kwargs, score, category", [
    (dict(heart_rate=140, respiratory_effort="good_crying", muscle_tone="active_motion",
          reflex_irritability="cry_or_active_withdrawal", color="acrocyanosis"), 9, "reassuring"),
    (dict(heart_rate=80, respiratory_effort="weak_or_irregular", muscle_tone="some_flexion",
          reflex_irritability="grimace", color="blue_or_pale"), 4, "moderately abnormal"),
    (dict(heart_rate=0, respiratory_effort="absent", muscle_tone="limp", reflex_irritability="no_response",
          color="blue_or_pale"), 0, "low"),
    (dict(heart_rate=100, respiratory_effort="absent", muscle_tone="limp", reflex_irritability="grimace",
          color="blue_or_pale"), 3, "low"),
])
def test_apgar(kwargs, score, category):
    r = apgar(**kwargs)
    assert (r.score, r.category) == (score, category)
