"""The clinical rules the generated ClinicalPathway journeys decide by, one function per decision, each with the
guideline it follows. The generator (``domains/pathways/generator.py`` and ``journeys.py``) computes a journey's
expected actions with them, and its validator computes them again from the generated record, so a task whose
actions disagree with its own record fails validation.

* Acute chest pain: ``chest_pain_outcome`` (ESC 2020 NSTE-ACS guideline, 0 h/1 h algorithm for high-sensitivity
  troponin T, Elecsys: rule-out below 5 ng/L with pain for more than 3 hours, rule-in at 52 ng/L or more; ST
  elevation is a STEMI, ESC 2023 ACS guideline).
* Acute stroke: ``thrombolysis_barriers`` and ``alteplase_dose`` (AHA/ASA 2019 acute ischaemic stroke guideline:
  alteplase 0.9 mg/kg, at most 90 mg; barred beyond 4.5 hours of last known well, above 185/110 mmHg, with platelets
  below 100 x10^9/L, INR above 1.7, glucose below 50 mg/dL (2.7 mmol/L, as the pathway's stroke protocol gives it), a
  current anticoagulant, or haemorrhage);
  ``ich_lowers_pressure`` (NICE NG128 1.5.2: rapid lowering for intracerebral haemorrhage with systolic 150 to 220
  mmHg).
* Post-operative deterioration: ``news2_response`` (RCP NEWS2 2017: 7 or more emergency response, 5-6 or a single
  parameter scoring 3 urgent response); ``red_cell_units`` (ATLS 10th edition class III-IV haemorrhage, then NICE
  NG24 1.2.1 restrictive threshold of 70 g/L with a single unit, 1.2.3); ``naloxone_indicated`` (opioid-induced
  respiratory depression: respiratory rate below 10/min as the pathway's protocol says, or responding only to pain);
  ``aki_stage`` (KDIGO 2012, as NICE NG148 uses it).
* Febrile child under 5: ``traffic_light`` (NICE NG143 table 1, the traffic-light system),
  ``lumbar_puncture_needed`` (NICE NG143 1.5: under 1 month, or 1-3 months with white cells below 5 or above 15
  x10^9/L) and ``weight_based_dose`` (BNF for Children doses per kg, capped at the adult maximum).
"""

from __future__ import annotations

from typing import Literal

ChestPainOutcome = Literal["stemi", "nstemi", "rule_out", "observe"]
NewsResponse = Literal["emergency", "urgent", "ward"]
Light = Literal["red", "amber", "green"]

# ESC 2020 NSTE-ACS, 0 h/1 h algorithm, hs-cTnT (Elecsys): thresholds in ng/L, the rule-out needs pain for > 3 h.
TROPONIN_RULE_OUT_BELOW = 5
TROPONIN_RULE_IN_AT = 52
RULE_OUT_AFTER_HOURS = 3
# AHA/ASA 2019 acute ischaemic stroke: intravenous alteplase.
THROMBOLYSIS_WINDOW_MINUTES = 270  # 4.5 hours from last known well
THROMBOLYSIS_MAX_BP = (185, 110)
THROMBOLYSIS_MIN_PLATELETS = 100  # x10^9/L
THROMBOLYSIS_MAX_INR = 1.7
THROMBOLYSIS_MIN_GLUCOSE = 2.7  # mmol/L (50 mg/dL; the stroke protocol's 2.7): a mimic to correct first
ALTEPLASE_MG_PER_KG = 0.9
ALTEPLASE_MAX_MG = 90
# NICE NG128 1.5.2 (2022): intracerebral haemorrhage, systolic 150-220 mmHg: lower to 130-140 within an hour.
ICH_LOWER_FROM, ICH_LOWER_TO = 150, 220
# NICE NG24 1.2.1: restrictive red cell threshold, 70 g/L (7.0 g/dL as the catalogue reports haemoglobin).
RED_CELL_THRESHOLD_G_DL = 7.0
# ATLS 10th edition: class III-IV haemorrhage (pulse above 120/min, systolic pressure falling below 90 mmHg).
MAJOR_BLEED_PULSE_ABOVE, MAJOR_BLEED_SYSTOLIC_BELOW = 120, 90
NALOXONE_RESPIRATORY_RATE_BELOW = 10
# NICE NG143 1.5: white cell count outside 5-15 x10^9/L in an infant of 1-3 months needs a lumbar puncture.
INFANT_WBC_LOW, INFANT_WBC_HIGH = 5.0, 15.0


def chest_pain_outcome(st_elevation: bool, troponin: float, hours_since_onset: float) -> ChestPainOutcome:
    """Where acute chest pain goes: ST elevation on the ECG is a STEMI (ESC 2023); otherwise the 0 h
    high-sensitivity troponin T of the ESC 2020 0 h/1 h algorithm: 52 ng/L or more rules in a non-ST-elevation
    infarction, below 5 ng/L with pain that began more than 3 hours ago rules out, anything else is observed with a
    1 h sample."""
    if st_elevation:
        return "stemi"
    if troponin >= TROPONIN_RULE_IN_AT:
        return "nstemi"
    if troponin < TROPONIN_RULE_OUT_BELOW and hours_since_onset > RULE_OUT_AFTER_HOURS:
        return "rule_out"
    return "observe"


def thrombolysis_barriers(minutes_since_well: int, systolic: int, diastolic: int, *, haemorrhage: bool = False,
                          platelets: float | None = None, inr: float | None = None, glucose: float | None = None,
                          anticoagulated: bool = False) -> list[str]:
    """What rules out intravenous alteplase for a suspected ischaemic stroke (AHA/ASA 2019); empty when it is
    given. Each limit is inclusive on the side that allows treatment: 270 minutes, 185/110 mmHg, platelets 100,
    INR 1.7, glucose 2.7 mmol/L all still allow it."""
    found = []
    if haemorrhage:
        found.append("haemorrhage on CT")
    if minutes_since_well > THROMBOLYSIS_WINDOW_MINUTES:
        found.append(f"last known well {minutes_since_well} minutes ago, beyond 4.5 hours")
    if systolic > THROMBOLYSIS_MAX_BP[0] or diastolic > THROMBOLYSIS_MAX_BP[1]:
        found.append(f"blood pressure {systolic}/{diastolic} above 185/110")
    if platelets is not None and platelets < THROMBOLYSIS_MIN_PLATELETS:
        found.append(f"platelets {platelets:g} below 100")
    if inr is not None and inr > THROMBOLYSIS_MAX_INR:
        found.append(f"INR {inr:g} above 1.7")
    if glucose is not None and glucose < THROMBOLYSIS_MIN_GLUCOSE:
        found.append(f"glucose {glucose:g} below 2.7 mmol/L")
    if anticoagulated:
        found.append("taking an anticoagulant")
    return found


def alteplase_dose(weight_kg: float) -> float:
    """Alteplase for ischaemic stroke: 0.9 mg/kg, at most 90 mg (AHA/ASA 2019; 10% as the bolus)."""
    return round(min(ALTEPLASE_MG_PER_KG * weight_kg, ALTEPLASE_MAX_MG), 1)


def ich_lowers_pressure(systolic: int) -> bool:
    """Whether an intracerebral haemorrhage gets rapid blood-pressure lowering (NICE NG128 1.5.2: systolic 150 to
    220 mmHg, both included; above 220 it is a senior decision, which generated tasks do not draw)."""
    return ICH_LOWER_FROM <= systolic <= ICH_LOWER_TO


def news2_response(score: int, single_three: bool) -> NewsResponse:
    """The clinical response NEWS2 triggers (RCP 2017): 7 or more, an emergency response (the emergency team);
    5 or 6, or any one parameter scoring 3, an urgent response (urgent review by a ward clinician); otherwise
    assessment and monitoring on the ward."""
    if score >= 7:
        return "emergency"
    if score >= 5 or single_three:
        return "urgent"
    return "ward"


def red_cell_units(haemoglobin_g_dl: float, heart_rate: int, systolic: int) -> int:
    """Red cells for post-operative bleeding. A class III-IV haemorrhage (ATLS 10th edition: pulse above 120/min or
    systolic below 90 mmHg) is a major haemorrhage, where NICE NG24's thresholds do not apply: two units at once
    (NG24 1.7). Otherwise the restrictive threshold (NG24 1.2.1: below 70 g/L) with a single unit, then reassess
    (1.2.3); at 70 g/L or above none yet, the bleeding point is dealt with in theatre. Pulse 120 and systolic 90
    are not class III; 7.0 g/dL is not below the threshold."""
    if heart_rate > MAJOR_BLEED_PULSE_ABOVE or systolic < MAJOR_BLEED_SYSTOLIC_BELOW:
        return 2
    return 1 if haemoglobin_g_dl < RED_CELL_THRESHOLD_G_DL else 0


def naloxone_indicated(respiratory_rate: int, consciousness: str) -> bool:
    """Opioid-induced respiratory depression that needs naloxone (BNF: 100-200 micrograms intravenously for
    post-operative respiratory depression, repeated every 2 minutes): a respiratory rate below 10/min (the pathway's
    post-operative protocol) or a patient who responds only to pain or not at all."""
    return respiratory_rate < NALOXONE_RESPIRATORY_RATE_BELOW or consciousness in ("pain", "unresponsive")


def aki_stage(creatinine: float, baseline: float) -> int:
    """The KDIGO 2012 stage of acute kidney injury from serum creatinine (NICE NG148 uses these criteria): 3 at
    three times the baseline or 354 umol/L or more, 2 at twice, 1 at 1.5 times or a rise of 26.5 umol/L or more
    (within 48 hours), 0 below."""
    ratio = creatinine / baseline
    if ratio >= 3 or creatinine >= 354:
        return 3
    if ratio >= 2:
        return 2
    if ratio >= 1.5 or creatinine - baseline >= 26.5:
        return 1
    return 0


def traffic_light(age_days: int, temperature: float, heart_rate: int, respiratory_rate: int, spo2: int,
                  capillary_refill_s: float, *, non_blanching_rash: bool = False,
                  fever_days: int = 1) -> tuple[Light, list[str]]:
    """The NICE NG143 traffic-light risk of serious illness in a febrile child under 5, with the features that set
    it, from the measured signs (the table's behavioural and skin signs other than a non-blanching rash are not
    generated). Red: age under 3 months with a temperature of 38 °C or more, respiratory rate above 60, a
    non-blanching rash. Amber: age 3-6 months with 39 °C or more; heart rate above 160 (under 12 months), 150 (12-24
    months) or 140 (2-5 years); respiratory rate above 50 (6-12 months) or 40 (over 12 months); SpO2 95% or less;
    capillary refill 3 seconds or more; fever for 5 days or more."""
    months = age_days / 30.4375
    red, amber = [], []
    if months < 3 and temperature >= 38.0:
        red.append(f"temperature {temperature:g} °C under 3 months")
    if respiratory_rate > 60:
        red.append(f"respiratory rate {respiratory_rate} above 60")
    if non_blanching_rash:
        red.append("non-blanching rash")
    if 3 <= months < 6 and temperature >= 39.0:
        amber.append(f"temperature {temperature:g} °C at 3-6 months")
    limit = 160 if months < 12 else 150 if months < 24 else 140
    if heart_rate > limit:
        amber.append(f"heart rate {heart_rate} above {limit}")
    if (6 <= months < 12 and respiratory_rate > 50) or (months >= 12 and respiratory_rate > 40):
        amber.append(f"respiratory rate {respiratory_rate} above {50 if months < 12 else 40}")
    if spo2 <= 95:
        amber.append(f"SpO2 {spo2}%")
    if capillary_refill_s >= 3:
        amber.append(f"capillary refill {capillary_refill_s:g} seconds")
    if fever_days >= 5:
        amber.append(f"fever for {fever_days} days")
    if red:
        return "red", red + amber
    return ("amber", amber) if amber else ("green", [])


def weight_based_dose(weight_kg: float, mg_per_kg: float, maximum_mg: float | None = None) -> int:
    """A child's dose in whole mg: weight x dose per kg, capped at the adult maximum when there is one (BNF for
    Children: paracetamol 15 mg/kg; ceftriaxone 80 mg/kg, at most 4 g, for meningococcal disease and febrile
    infants from 1 month; cefotaxime 50 mg/kg under 1 month; amoxicillin 50 mg/kg for listeria cover)."""
    dose = weight_kg * mg_per_kg
    return round(min(dose, maximum_mg) if maximum_mg is not None else dose)


def lumbar_puncture_needed(age_days: int, white_cells: float) -> bool:
    """A lumbar puncture in a febrile infant (NICE NG143 1.5): every infant under 1 month, and infants of 1-3 months
    with a white cell count below 5 or above 15 x10^9/L (5 and 15 themselves do not need one)."""
    if age_days < 30:
        return True
    return age_days < 92 and not INFANT_WBC_LOW <= white_cells <= INFANT_WBC_HIGH
