"""Obstetric calculations as pure functions: gestational age and due date (Naegele's rule, crown-rump length, and
the ACOG rule for when an ultrasound re-dates a pregnancy), the NICHD three-tier fetal heart-rate category,
hypertensive disorders of pregnancy (ACOG criteria for pre-eclampsia, severe features, HELLP), and postpartum
haemorrhage staging (cumulative blood loss, vital signs and shock index).

Each function checks its inputs and raises ``ValueError`` with a message for the agent; the tools in
``clinical_gym.domains.obstetrics.tools`` mount them. References: ACOG Committee Opinion 700 (Methods for estimating the due
date, 2017); Robinson HP, Fleming JE, Br J Obstet Gynaecol 1975;82:702-10 (CRL formula); Macones GA et al., NICHD
workshop report, Obstet Gynecol 2008;112:661-6 and ACOG Practice Bulletin 106 (fetal heart-rate categories); ACOG
Practice Bulletin 222 (Gestational hypertension and preeclampsia, 2020) and Committee Opinion 767 (acute severe
hypertension); ACOG Practice Bulletin 183 and the California Maternal Quality Care Collaborative obstetric
haemorrhage toolkit (postpartum haemorrhage definition and stages).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal

PREGNANCY_DAYS = 280
STANDARD_CYCLE_DAYS = 28
CRL_RANGE_MM = (3.0, 84.0)
# ACOG CO 700: (gestational age by LMP at the scan, below this many days) -> re-date when the scan differs by more.
REDATING_THRESHOLDS: tuple[tuple[int, int, str], ...] = (
    (63, 5, "up to 8 6/7 weeks"),
    (98, 7, "9 0/7 to 13 6/7 weeks"),
    (112, 7, "14 0/7 to 15 6/7 weeks"),
    (154, 10, "16 0/7 to 21 6/7 weeks"),
    (196, 14, "22 0/7 to 27 6/7 weeks"),
    (10**6, 21, "28 0/7 weeks or more"),
)

Variability = Literal["absent", "minimal", "moderate", "marked"]
DecelerationPattern = Literal["none", "intermittent", "recurrent"]
DipstickProtein = Literal["negative", "trace", "1+", "2+", "3+", "4+"]
BirthMode = Literal["vaginal", "caesarean"]

# Hypertensive disorders (ACOG PB 222), units as in the obstetric record.
MILD_SYSTOLIC, MILD_DIASTOLIC = 140, 90
SEVERE_SYSTOLIC, SEVERE_DIASTOLIC = 160, 110
CONFIRM_MILD_HOURS = 4.0
PCR_PROTEINURIA = 0.3  # mg protein per mg creatinine
URINE_24H_PROTEINURIA_MG = 300
PLATELETS_SEVERE = 100  # x10^9/L, below
CREATININE_SEVERE_UMOL = 97  # above (1.1 mg/dL)
TRANSAMINASE_ULN = 35  # U/L; severe at twice this
LDH_HELLP = 600  # U/L, at or above

# Postpartum haemorrhage (CMQCC-style stages).
STAGE1_LOSS_ML = {"vaginal": 500, "caesarean": 1000}
STAGE2_VAGINAL_LOSS_ML = 1000
STAGE3_LOSS_ML = 1500
ACOG_PPH_ML = 1000
TRIGGER_HEART_RATE, TRIGGER_SYSTOLIC, TRIGGER_DIASTOLIC, TRIGGER_SPO2, TRIGGER_SHOCK_INDEX = 110, 85, 45, 95, 0.9
UNSTABLE_SYSTOLIC, UNSTABLE_SHOCK_INDEX = 80, 1.4


# -- dates -----------------------------------------------------------------------------------------------------------
def parse_date(text: str, what: str) -> date:
    """A ``YYYY-MM-DD`` date (a time after the date, as in "2025-06-10 09:00", is ignored)."""
    try:
        return date.fromisoformat(str(text).strip()[:10])
    except ValueError:
        raise ValueError(f"{what} must be a date written YYYY-MM-DD, got {text!r}") from None


def weeks_days(days: int) -> str:
    """A gestation in days as obstetricians write it, e.g. 78 -> "11+1 weeks"."""
    return f"{days // 7}+{days % 7} weeks"


def crl_gestation_days(crl_mm: float) -> int:
    """Gestational age in whole days from the crown-rump length (Robinson and Fleming: 8.052 * sqrt(CRL) + 23.73)."""
    low, high = CRL_RANGE_MM
    if not low <= crl_mm <= high:
        raise ValueError(f"crown-rump length must be {low:g}-{high:g} mm (up to 13+6 weeks); got {crl_mm:g} mm. "
                         "Date later pregnancies with the biometry gestation instead.")
    return round(8.052 * math.sqrt(crl_mm) + 23.73)


def redating_threshold(gestation_by_lmp_days: int) -> tuple[int, str]:
    """The discrepancy (days) beyond which an ultrasound at this gestation by LMP re-dates the pregnancy."""
    for below, threshold, band in REDATING_THRESHOLDS:
        if gestation_by_lmp_days < below:
            return threshold, band
    raise AssertionError("unreachable")


def gestational_age(today: date, lmp: date | None = None, cycle_length_days: int = STANDARD_CYCLE_DAYS,
                    lmp_certain: bool = True, scan_date: date | None = None, crl_mm: float | None = None,
                    scan_weeks: int | None = None, scan_days: int | None = None) -> dict[str, Any]:
    """Due date by LMP (Naegele's rule: LMP + 280 days, plus cycle length - 28 days), by ultrasound (CRL or
    biometry gestation at the scan), which one to use (ACOG CO 700: the scan re-dates when it differs from LMP dating
    by more than the threshold for the gestation at the scan; an unknown or uncertain LMP is dated by ultrasound),
    and the gestational age on ``today``."""
    if not 20 <= cycle_length_days <= 45:
        raise ValueError(f"cycle_length_days must be 20-45, got {cycle_length_days}")
    scan_given = crl_mm is not None or scan_weeks is not None or scan_days is not None
    if scan_given and scan_date is None:
        raise ValueError("give scan_date with the scan's crown-rump length or gestation")
    if scan_date is not None and not scan_given:
        raise ValueError("give the scan's crl_mm, or scan_gestation_weeks (and days)")
    if crl_mm is not None and (scan_weeks is not None or scan_days is not None):
        raise ValueError("give either crl_mm or the scan gestation in weeks and days, not both")
    if lmp is None and scan_date is None:
        raise ValueError("give lmp_date, or a scan (scan_date with crl_mm or the scan gestation)")
    result: dict[str, Any] = {"date": today.isoformat()}

    edd_lmp = None
    if lmp is not None:
        if lmp > today:
            raise ValueError("lmp_date is after the date of the calculation")
        adjust = cycle_length_days - STANDARD_CYCLE_DAYS
        edd_lmp = lmp + timedelta(days=PREGNANCY_DAYS + adjust)
        result["by_lmp"] = {"edd": edd_lmp.isoformat(), "rule": "Naegele: LMP + 280 days"
                            + (f" {'+' if adjust > 0 else '-'} {abs(adjust)} days for a {cycle_length_days}-day cycle"
                               if adjust else ""), "lmp_certain": lmp_certain}

    edd_scan = None
    if scan_date is not None:
        if scan_date > today:
            raise ValueError("scan_date is after the date of the calculation")
        if crl_mm is not None:
            scan_ga, method = crl_gestation_days(crl_mm), f"crown-rump length {crl_mm:g} mm"
        else:
            weeks, days = scan_weeks or 0, scan_days or 0
            if not 4 <= weeks <= 42 or not 0 <= days <= 6:
                raise ValueError("scan_gestation_weeks must be 4-42 and scan_gestation_days 0-6")
            scan_ga, method = weeks * 7 + days, "fetal biometry"
        edd_scan = scan_date + timedelta(days=PREGNANCY_DAYS - scan_ga)
        result["by_ultrasound"] = {"edd": edd_scan.isoformat(), "gestation_at_scan": weeks_days(scan_ga),
                                   "method": method}

    if edd_lmp is not None and edd_scan is not None and scan_date is not None:
        lmp_ga_at_scan = PREGNANCY_DAYS - (edd_lmp - scan_date).days
        if lmp_ga_at_scan < 0:
            raise ValueError("the scan is dated before the LMP")
        discrepancy = abs((edd_scan - edd_lmp).days)
        threshold, band = redating_threshold(lmp_ga_at_scan)
        redate = discrepancy > threshold or not lmp_certain
        result["comparison"] = {"gestation_by_lmp_at_scan": weeks_days(lmp_ga_at_scan), "band": band,
                                "discrepancy_days": discrepancy, "redate_if_more_than_days": threshold}
        if not lmp_certain:
            basis, reason = "ultrasound", "the LMP is uncertain, so the ultrasound dates the pregnancy"
        elif redate:
            basis, reason = "ultrasound", (f"the scan differs from LMP dating by {discrepancy} days, more than "
                                           f"{threshold} days at {band}: re-date by ultrasound")
        else:
            basis, reason = "lmp", (f"the scan differs from LMP dating by {discrepancy} days, within {threshold} "
                                    f"days at {band}: keep the LMP due date")
        edd = edd_scan if basis == "ultrasound" else edd_lmp
    elif edd_scan is not None:
        basis, reason, edd = "ultrasound", "no LMP: the ultrasound dates the pregnancy", edd_scan
    else:
        assert edd_lmp is not None
        basis, edd = "lmp", edd_lmp
        reason = ("LMP dating without an ultrasound before 22 weeks: suboptimally dated; confirm with an ultrasound"
                  if lmp_certain else "the LMP is uncertain and there is no ultrasound: arrange a dating scan")

    ga = PREGNANCY_DAYS - (edd - today).days
    result.update(dating_basis=basis, reason=reason, edd=edd.isoformat(), gestational_age=weeks_days(ga),
                  gestational_age_days=ga, trimester=trimester(ga))
    return result


def trimester(gestation_days: int) -> str:
    """First (to 13+6 weeks), second (14+0 to 27+6) or third (28+0 on) trimester."""
    return "first" if gestation_days < 98 else "second" if gestation_days < 196 else "third"


# -- fetal heart rate ------------------------------------------------------------------------------------------------
def variability_category(amplitude_bpm: float) -> Variability:
    """Baseline variability from the amplitude of its fluctuations: undetectable (0) absent, up to 5 bpm minimal,
    6-25 bpm moderate, above 25 bpm marked."""
    if amplitude_bpm <= 0:
        return "absent"
    if amplitude_bpm <= 5:
        return "minimal"
    return "moderate" if amplitude_bpm <= 25 else "marked"


def fetal_heart_category(baseline_bpm: int, variability_amplitude_bpm: float, accelerations: bool,
                         early_decelerations: bool, late_decelerations: DecelerationPattern,
                         variable_decelerations: DecelerationPattern, prolonged_deceleration: bool,
                         sinusoidal_pattern: bool, contractions_per_10_min: float | None = None) -> dict[str, Any]:
    """The NICHD three-tier category of a fetal heart-rate tracing.

    Category III: absent variability with recurrent late decelerations, recurrent variable decelerations or
    bradycardia; or a sinusoidal pattern. Category I: baseline 110-160 bpm, moderate variability, no late, variable
    or prolonged decelerations (early decelerations and accelerations may or may not be present). Category II:
    every other tracing. Tachysystole: more than 5 contractions in 10 minutes (averaged over 30 minutes)."""
    variability = variability_category(variability_amplitude_bpm)
    baseline = "bradycardia" if baseline_bpm < 110 else "tachycardia" if baseline_bpm > 160 else "normal"
    findings = [f"baseline {baseline_bpm} bpm ({baseline})", f"{variability} variability",
                f"accelerations {'present' if accelerations else 'absent'}"]
    if early_decelerations:
        findings.append("early decelerations")
    if late_decelerations != "none":
        findings.append(f"{late_decelerations} late decelerations")
    if variable_decelerations != "none":
        findings.append(f"{variable_decelerations} variable decelerations")
    if prolonged_deceleration:
        findings.append("prolonged deceleration (2-10 minutes)")
    if sinusoidal_pattern:
        findings.append("sinusoidal pattern")

    category3 = []
    if sinusoidal_pattern:
        category3.append("sinusoidal pattern")
    if variability == "absent":
        if late_decelerations == "recurrent":
            category3.append("absent variability with recurrent late decelerations")
        if variable_decelerations == "recurrent":
            category3.append("absent variability with recurrent variable decelerations")
        if baseline == "bradycardia":
            category3.append("absent variability with bradycardia")
    not_category1 = [f for f, bad in (
        (f"baseline {baseline}", baseline != "normal"), (f"{variability} variability", variability != "moderate"),
        ("late decelerations", late_decelerations != "none"),
        ("variable decelerations", variable_decelerations != "none"),
        ("prolonged deceleration", prolonged_deceleration), ("sinusoidal pattern", sinusoidal_pattern)) if bad]
    if category3:
        category, reasons = "Category III", category3
        management = ("Abnormal: predictive of abnormal fetal acid-base status. Start intrauterine resuscitation at "
                      "once (stop oxytocin, left lateral position, treat maternal hypotension with an intravenous "
                      "fluid bolus, treat tachysystole) and call the obstetric emergency team; if the tracing does "
                      "not resolve promptly, expedite delivery (immediate caesarean birth, or assisted vaginal birth "
                      "when fully dilated with the head low enough).")
    elif not_category1:
        category, reasons = "Category II", not_category1
        management = ("Indeterminate: evaluate and keep continuous monitoring; look for and correct causes "
                      "(repositioning, fluid bolus, stop or reduce oxytocin for tachysystole, amnioinfusion for "
                      "recurrent variable decelerations) and re-evaluate. Moderate variability or accelerations "
                      "make fetal acidaemia unlikely; a tracing that worsens needs senior review.")
    else:
        category, reasons = "Category I", ["baseline 110-160 bpm, moderate variability, no late, variable or "
                                           "prolonged decelerations"]
        management = "Normal: routine intermittent review of the tracing in labour; no action needed."
    result: dict[str, Any] = {"category": category, "findings": findings, "reasons": reasons,
                              "management": management}
    if contractions_per_10_min is not None:
        if contractions_per_10_min < 0:
            raise ValueError("contractions_per_10_min cannot be negative")
        tachysystole = contractions_per_10_min > 5
        result["uterine_activity"] = ("tachysystole: more than 5 contractions in 10 minutes; stop or reduce oxytocin"
                                      if tachysystole else "normal: 5 or fewer contractions in 10 minutes")
        result["tachysystole"] = tachysystole
    return result


# -- hypertensive disorders ------------------------------------------------------------------------------------------
def _proteinuria(pcr: float | None, urine_24h_mg: float | None, dipstick: DipstickProtein | None) -> bool | None:
    if pcr is not None or urine_24h_mg is not None:
        return (pcr is not None and pcr >= PCR_PROTEINURIA) or (urine_24h_mg is not None
                                                                and urine_24h_mg >= URINE_24H_PROTEINURIA_MG)
    if dipstick is not None:
        return dipstick in ("2+", "3+", "4+")
    return None


def hypertensive_disorder(gestation_weeks: float, systolic_bp: int, diastolic_bp: int,
                          repeat_systolic_bp: int | None = None, repeat_diastolic_bp: int | None = None,
                          hours_between_readings: float | None = None, postpartum: bool = False,
                          chronic_hypertension: bool = False, protein_creatinine_ratio: float | None = None,
                          urine_protein_24h_mg: float | None = None, dipstick_protein: DipstickProtein | None = None,
                          platelets: float | None = None, creatinine_umol_l: float | None = None,
                          ast: float | None = None, alt: float | None = None, ldh: float | None = None,
                          severe_headache: bool = False, visual_disturbance: bool = False,
                          epigastric_or_ruq_pain: bool = False, pulmonary_oedema: bool = False,
                          seizure: bool = False) -> dict[str, Any]:
    """The hypertensive disorder of pregnancy the findings meet (ACOG PB 222) and what it calls for.

    Hypertension: systolic >= 140 or diastolic >= 90 mmHg on two readings at least 4 hours apart, or in the
    severe range (>= 160 / >= 110) on two readings any time apart. Proteinuria: protein/creatinine ratio >= 0.3,
    24-hour protein >= 300 mg, or (only when neither is available) dipstick 2+ or more. Severe features: severe-range
    blood pressure, platelets < 100 x10^9/L, creatinine > 97 umol/L, transaminases at least twice the upper limit
    of normal (70 U/L), pulmonary oedema, new severe headache, visual disturbance, severe epigastric or right upper
    quadrant pain. HELLP: LDH >= 600 U/L with transaminases >= 70 U/L and platelets < 100. Eclampsia: a new seizure.
    """
    pairs = [(systolic_bp, diastolic_bp)]
    if (repeat_systolic_bp is None) != (repeat_diastolic_bp is None):
        raise ValueError("give both repeat_systolic_bp and repeat_diastolic_bp, or neither")
    if repeat_systolic_bp is not None and repeat_diastolic_bp is not None:
        pairs.append((repeat_systolic_bp, repeat_diastolic_bp))
    for s, d in pairs:
        if d >= s:
            raise ValueError(f"diastolic pressure {d} must be below systolic pressure {s}")
    if hours_between_readings is not None and hours_between_readings < 0:
        raise ValueError("hours_between_readings cannot be negative")
    both = len(pairs) == 2
    severe_range = both and all(s >= SEVERE_SYSTOLIC or d >= SEVERE_DIASTOLIC for s, d in pairs)
    elevated = [s >= MILD_SYSTOLIC or d >= MILD_DIASTOLIC for s, d in pairs]
    confirmed = severe_range or (both and all(elevated) and (hours_between_readings or 0) >= CONFIRM_MILD_HOURS)
    any_severe_reading = any(s >= SEVERE_SYSTOLIC or d >= SEVERE_DIASTOLIC for s, d in pairs)

    proteinuria = _proteinuria(protein_creatinine_ratio, urine_protein_24h_mg, dipstick_protein)
    transaminase_limit = 2 * TRANSAMINASE_ULN
    high_transaminases = any(v is not None and v >= transaminase_limit for v in (ast, alt))
    severe = []
    if severe_range:
        severe.append("severe-range blood pressure (>= 160/110 mmHg, confirmed)")
    if platelets is not None and platelets < PLATELETS_SEVERE:
        severe.append(f"thrombocytopenia (platelets {platelets:g} < {PLATELETS_SEVERE} x10^9/L)")
    if creatinine_umol_l is not None and creatinine_umol_l > CREATININE_SEVERE_UMOL:
        severe.append(f"renal insufficiency (creatinine {creatinine_umol_l:g} > {CREATININE_SEVERE_UMOL} umol/L)")
    if high_transaminases:
        severe.append(f"impaired liver function (transaminases >= {transaminase_limit} U/L, twice normal)")
    for flag, text in ((pulmonary_oedema, "pulmonary oedema"), (severe_headache, "new severe headache"),
                       (visual_disturbance, "visual disturbance"),
                       (epigastric_or_ruq_pain, "severe epigastric or right upper quadrant pain")):
        if flag:
            severe.append(text)
    hellp = (ldh is not None and ldh >= LDH_HELLP and high_transaminases and platelets is not None
             and platelets < PLATELETS_SEVERE)
    after_20 = postpartum or gestation_weeks >= 20
    organ_features = [f for f in severe if not f.startswith("severe-range")]

    if seizure and (confirmed or any(elevated) or severe or proteinuria):
        disorder = "eclampsia"
    elif hellp and (confirmed or any(elevated) or proteinuria):
        disorder = "HELLP syndrome"
    elif chronic_hypertension or (confirmed and not after_20):
        if after_20 and (proteinuria or organ_features):
            disorder = "chronic hypertension with superimposed pre-eclampsia"
        elif severe_range:
            disorder = "chronic hypertension with severe-range blood pressure"
        else:
            disorder = "chronic hypertension"
    elif not confirmed:
        disorder = ("blood pressure elevated but not yet confirmed: repeat the reading (within 15 minutes if in the "
                    "severe range, otherwise after 4 hours)" if any(elevated) else "normal blood pressure")
    elif proteinuria or organ_features:
        disorder = "pre-eclampsia"
    elif severe_range:
        disorder = "severe gestational hypertension (managed as pre-eclampsia with severe features)"
    else:
        disorder = "gestational hypertension" + (
            " (proteinuria not yet tested: send a urine protein/creatinine ratio)" if proteinuria is None else "")
    if disorder in ("pre-eclampsia", "chronic hypertension with superimposed pre-eclampsia"):
        disorder += " with severe features" if severe else " without severe features"
    with_severe = disorder in ("eclampsia", "HELLP syndrome") or "with severe features" in disorder

    management = []
    if any_severe_reading:
        management.append("Severe-range blood pressure: treat within 30-60 minutes with intravenous labetalol, "
                          "intravenous hydralazine or oral immediate-release nifedipine (not labetalol in asthma); "
                          "target 140-150/90-100 mmHg.")
    if with_severe:
        management.append("Magnesium sulfate for seizure prophylaxis (4-6 g intravenously over 20 minutes, then "
                          "1-2 g per hour, continued 24 hours after birth); check reflexes, respiratory rate and "
                          "urine output.")
    if postpartum:
        pass
    elif disorder in ("eclampsia", "HELLP syndrome"):
        management.append("Deliver once the mother is stabilised, whatever the gestation (with HELLP before 34 "
                          "weeks, corticosteroids if delivery can safely wait 24-48 hours).")
    elif with_severe:
        management.append("Deliver after maternal stabilisation at 34 weeks or more; before 34 weeks give "
                          "antenatal corticosteroids and consider expectant care in a tertiary unit only while "
                          "mother and fetus are stable.")
    elif disorder.startswith(("pre-eclampsia without", "gestational hypertension",
                              "chronic hypertension with superimposed pre-eclampsia without")):
        management.append("Without severe features: twice-weekly maternal and fetal surveillance; deliver at "
                          "37 0/7 weeks, or at once if severe features develop.")
    if disorder.startswith("chronic hypertension") and "superimposed" not in disorder:
        management.append("Chronic hypertension: treat to below 140/90 mmHg with labetalol or extended-release "
                          "nifedipine (stop ACE inhibitors and angiotensin-receptor blockers); low-dose aspirin from "
                          "12 weeks; watch for superimposed pre-eclampsia.")
    return {"classification": disorder, "hypertension_confirmed": confirmed,
            "severe_range_blood_pressure": any_severe_reading, "proteinuria": proteinuria,
            "severe_features": severe, "hellp": hellp, "management": management}


# -- postpartum haemorrhage ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HaemorrhageStage:
    """A postpartum haemorrhage stage and what it calls for."""

    stage: int
    summary: str
    actions: tuple[str, ...]


STAGE_ACTIONS: dict[int, HaemorrhageStage] = {
    0: HaemorrhageStage(0, "no haemorrhage: routine care", (
        "Active management of the third stage (oxytocin after birth), quantitative blood loss measurement, vital "
        "signs every 15 minutes.",)),
    1: HaemorrhageStage(1, "stage 1: blood loss above the threshold or abnormal vital signs", (
        "Activate the obstetric haemorrhage protocol and call for help (midwife in charge, obstetrician, "
        "anaesthetist).",
        "Two large-bore intravenous cannulae, group and crossmatch 2 units, full blood count and coagulation "
        "screen including fibrinogen.",
        "Fundal massage, empty the bladder, check the placenta and look for trauma (tone, trauma, tissue, "
        "thrombin).",
        "Uterotonics: increase oxytocin; then methylergonovine 0.2 mg IM (not with hypertension), carboprost "
        "250 mcg IM (not with asthma) or misoprostol 800 mcg.",
        "Tranexamic acid 1 g IV over 10 minutes within 3 hours of birth.",
        "Vital signs and blood loss every 5 minutes.")),
    2: HaemorrhageStage(2, "stage 2: continued bleeding up to 1500 mL", (
        "Continue every stage 1 action.",
        "Call the obstetric emergency team (senior obstetrician and anaesthetist to the bedside) and the blood "
        "bank.",
        "Transfuse 2 units of red cells by clinical signs, without waiting for results.",
        "A second uterotonic and tranexamic acid if not yet given.",
        "Move to theatre for examination under anaesthesia; intrauterine balloon tamponade for atony.")),
    3: HaemorrhageStage(3, "stage 3: over 1500 mL, over 2 units transfused, unstable vital signs or suspected "
                           "coagulopathy", (
        "Continue every stage 1 and 2 action.",
        "Activate the massive transfusion protocol (red cells, plasma and platelets in fixed ratio; fibrinogen "
        "replacement).",
        "Obstetric emergency team and intensive care; move to theatre for definitive surgical control "
        "(compression sutures, arterial ligation or embolisation, hysterectomy).",
        "Keep the patient warm; correct acidosis and calcium.")),
}


def haemorrhage_stage(cumulative_blood_loss_ml: float, birth_mode: BirthMode, heart_rate: int, systolic_bp: int,
                      diastolic_bp: int | None = None, spo2: int | None = None, uterotonics_given: int = 0,
                      red_cell_units_transfused: int = 0, suspected_coagulopathy: bool = False) -> dict[str, Any]:
    """The postpartum haemorrhage stage (0-3) from the cumulative blood loss, the vital signs and shock index
    (heart rate / systolic pressure), the uterotonics and red cells given and suspected coagulopathy.

    Stage 1: loss above 500 mL after a vaginal birth or 1000 mL after a caesarean, or a vital-sign trigger (heart
    rate >= 110, systolic <= 85, diastolic <= 45 mmHg, SpO2 < 95%, shock index >= 0.9). Stage 2: continued bleeding,
    above 1000 mL after a vaginal birth or above the stage 1 threshold after two or more uterotonics, up to 1500 mL.
    Stage 3: above 1500 mL, more than 2 units of red cells, unstable vital signs (systolic < 80 mmHg or shock index
    >= 1.4) or suspected coagulopathy."""
    if cumulative_blood_loss_ml < 0:
        raise ValueError("cumulative_blood_loss_ml cannot be negative")
    if systolic_bp <= 0:
        raise ValueError("systolic_bp must be positive")
    if diastolic_bp is not None and diastolic_bp >= systolic_bp:
        raise ValueError(f"diastolic pressure {diastolic_bp} must be below systolic pressure {systolic_bp}")
    shock_index = round(heart_rate / systolic_bp, 2)
    triggers = [text for text, hit in (
        (f"heart rate {heart_rate} >= {TRIGGER_HEART_RATE}", heart_rate >= TRIGGER_HEART_RATE),
        (f"systolic {systolic_bp} <= {TRIGGER_SYSTOLIC} mmHg", systolic_bp <= TRIGGER_SYSTOLIC),
        (f"diastolic {diastolic_bp} <= {TRIGGER_DIASTOLIC} mmHg",
         diastolic_bp is not None and diastolic_bp <= TRIGGER_DIASTOLIC),
        (f"SpO2 {spo2}% < {TRIGGER_SPO2}%", spo2 is not None and spo2 < TRIGGER_SPO2),
        (f"shock index {shock_index:.2f} >= {TRIGGER_SHOCK_INDEX}", shock_index >= TRIGGER_SHOCK_INDEX)) if hit]
    unstable = systolic_bp < UNSTABLE_SYSTOLIC or shock_index >= UNSTABLE_SHOCK_INDEX
    above_stage1 = cumulative_blood_loss_ml > STAGE1_LOSS_ML[birth_mode]

    reasons = []
    if cumulative_blood_loss_ml > STAGE3_LOSS_ML:
        reasons.append(f"blood loss {cumulative_blood_loss_ml:g} mL > {STAGE3_LOSS_ML} mL")
    if red_cell_units_transfused > 2:
        reasons.append(f"{red_cell_units_transfused} units of red cells transfused")
    if unstable:
        reasons.append(f"unstable vital signs (systolic {systolic_bp} mmHg, shock index {shock_index:.2f})")
    if suspected_coagulopathy:
        reasons.append("suspected coagulopathy")
    if reasons:
        stage = 3
    elif birth_mode == "vaginal" and cumulative_blood_loss_ml > STAGE2_VAGINAL_LOSS_ML:
        stage, reasons = 2, [f"blood loss {cumulative_blood_loss_ml:g} mL > {STAGE2_VAGINAL_LOSS_ML} mL after a "
                             "vaginal birth"]
    elif above_stage1 and uterotonics_given >= 2:
        stage, reasons = 2, [f"bleeding continues after {uterotonics_given} uterotonics"]
    elif above_stage1 or triggers:
        stage = 1
        reasons = ([f"blood loss {cumulative_blood_loss_ml:g} mL > {STAGE1_LOSS_ML[birth_mode]} mL after a "
                    f"{birth_mode} birth"] if above_stage1 else []) + triggers
    else:
        stage = 0
    info = STAGE_ACTIONS[stage]
    return {"stage": stage, "summary": info.summary, "reasons": reasons, "shock_index": shock_index,
            "vital_sign_triggers": triggers,
            "meets_acog_pph_definition": cumulative_blood_loss_ml >= ACOG_PPH_ML or (stage > 0 and bool(triggers)),
            "activate_haemorrhage_protocol": stage >= 1, "actions": list(info.actions)}
