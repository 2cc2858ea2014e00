"""The Emergency Severity Index as this domain applies it to a patient's record: the resource count
(``expected_resources``) and the danger-zone check (``danger_zone``) that the tools show, and the four decision
points in order (``esi_decision``), which the task generator uses to compute a generated patient's level.

Source: Gilboy N, Tanabe P, Travers D, Rosenau AM. Emergency Severity Index (ESI): A Triage Tool for Emergency
Department Care, Version 4. Implementation Handbook 2020 Edition (Emergency Nurses Association / AHRQ).

* A, immediate life-saving intervention (``life_saving_need``): no palpable pulse; unresponsive or responding only
  to pain (AVPU P or U); a respiratory rate below 8/min; SpO2 below 90%; systolic hypotension for the age (PALS
  limits: below 60 mmHg in the first 28 days, 70 mmHg to one year, 70 + 2 x age in years to ten, 90 mmHg from ten,
  which is also the adult limit of the ESI handbook's "hypotension with signs of hypoperfusion"); a capillary glucose
  below 3.0 mmol/L with altered consciousness.
* B, should not wait (``should_not_wait``): a high-risk situation (a red flag whose concern is one of
  ``HIGH_RISK_CONCERNS``, the handbook's time-critical conditions); new confusion or lethargy (AVPU "new confusion"
  or "voice"); severe pain, 7/10 or more; fever (38.0 °C or more) from birth to 28 days of age.
* C, resources: distinct resource categories of the anticipated care (a complex procedure counts two); none: ESI 5,
  one: ESI 4.
* D, two or more resources: danger-zone vital signs for the age (heart or respiratory rate above the band's limit,
  SpO2 below 92%) make it ESI 2 (the handbook's "consider ESI 2", applied), otherwise ESI 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from clinical_gym.cases.schema import normalize

if TYPE_CHECKING:
    from clinical_gym.domains.triage.data_model import Patient, TriageDB

DecisionPoint = Literal["A", "B", "C", "D"]
GLUCOSE_TEST = "capillary blood glucose"
HYPOGLYCAEMIA_BELOW = 3.0  # mmol/L
FEVER_AT = 38.0  # °C
SEVERE_PAIN_AT = 7  # /10
NEONATE_DAYS = 28

# Concerns (a red flag's ``concern``) that make the situation high risk at decision point B.
HIGH_RISK_CONCERNS: frozenset[str] = frozenset(normalize(c) for c in (
    "cardiac arrest", "airway compromise", "circulatory compromise", "opioid toxicity with respiratory failure",
    "hypoglycaemia until proven otherwise", "haemorrhagic shock", "major trauma mechanism", "respiratory failure",
    "serious illness", "shock", "bradycardia with poor perfusion", "tension pneumothorax", "major trauma",
    "possible acute stroke within the treatment window", "possible acute coronary syndrome", "possible sepsis",
    "possible ruptured ectopic pregnancy", "possible testicular torsion", "high suicide risk",
    "serious bacterial infection in a neonate", "acute severe asthma", "intracranial haemorrhage",
    "intracranial injury", "possible subarachnoid haemorrhage", "possible diabetic ketoacidosis",
    "possible leaking aneurysm", "possible severe pre-eclampsia", "oesophageal burn within hours",
    "high-energy mechanism of injury", "possible posterior circulation stroke", "delayed liver injury",
    "suicide risk", "neutropenic sepsis", "anaphylaxis", "septic shock", "possible aortic dissection",
    "possible meningococcal disease", "possible ST-elevation myocardial infarction"))

LEVEL_OF: dict[DecisionPoint, str] = {
    "A": "A: needs an immediate life-saving intervention",
    "B": "B: should not wait (high risk, new confusion or severe pain)",
    "C": "C: the number of resources decides",
    "D": "D: two or more resources, and the vital signs decide",
}


@dataclass(frozen=True)
class EsiDecision:
    """A patient's ESI level, the decision point that set it and why."""

    level: int
    point: DecisionPoint
    reason: str
    resources: int


def expected_resources(db: TriageDB, patient: Patient) -> dict[str, Any]:
    """The anticipated care items by resource category and the ESI resource count (``count_expected_resources``)."""
    items = [{"item": item, "category": db.care_items[item],
              "resource": db.resource_categories[db.care_items[item]].counts > 0}
             for item in patient.anticipated_care]
    categories = {i["category"] for i in items if i["resource"]}
    count = sum(db.resource_categories[c].counts for c in categories)
    return {"expected_care": items, "resource_categories": sorted(categories), "resource_count": count}


def danger_zone(db: TriageDB, age_years: float, heart_rate: int, respiratory_rate: int, spo2: int) -> dict[str, Any]:
    """Vital signs against the danger-zone limits of the age band (``check_danger_zone_vitals``)."""
    band = db.danger_zone_band(age_years)
    exceeded = []
    if heart_rate > band.heart_rate_above:
        exceeded.append(f"heart rate {heart_rate} > {band.heart_rate_above}")
    if respiratory_rate > band.respiratory_rate_above:
        exceeded.append(f"respiratory rate {respiratory_rate} > {band.respiratory_rate_above}")
    if spo2 < db.danger_zone_spo2_below:
        exceeded.append(f"SpO2 {spo2}% < {db.danger_zone_spo2_below}%")
    return {"age_band": band.label, "limits": {"heart_rate_above": band.heart_rate_above,
                                                "respiratory_rate_above": band.respiratory_rate_above,
                                                "spo2_below": db.danger_zone_spo2_below},
            "exceeded": exceeded, "in_danger_zone": bool(exceeded)}


def hypotension_limit(patient: Patient) -> int:
    """The systolic pressure (mmHg) below which the patient is hypotensive for the age (PALS; 90 from ten years)."""
    if patient.age_days is not None and patient.age_days <= NEONATE_DAYS:
        return 60
    if patient.age < 1:
        return 70
    if patient.age_years < 10:
        return 70 + 2 * patient.age_years
    return 90


def life_saving_need(patient: Patient) -> str | None:
    """Why the patient needs an immediate life-saving intervention (decision point A), or None."""
    v = patient.vitals[-1]
    if v.heart_rate is None and v.consciousness == "unresponsive":
        return "unresponsive with no palpable pulse"
    if v.consciousness in ("pain", "unresponsive"):
        return f"responds {'only to pain' if v.consciousness == 'pain' else 'to nothing'}: the airway is at risk"
    if v.respiratory_rate is not None and v.respiratory_rate < 8:
        return f"respiratory rate {v.respiratory_rate}/min: ventilation is inadequate"
    if v.spo2 is not None and v.spo2 < 90:
        return f"SpO2 {v.spo2}%: severe hypoxia"
    limit = hypotension_limit(patient)
    if v.systolic_bp is not None and v.systolic_bp < limit:
        return f"systolic pressure {v.systolic_bp} mmHg, below {limit} for the age: shock"
    glucose = patient.bedside_results.get(GLUCOSE_TEST)
    if v.consciousness != "alert" and glucose is not None and glucose.value is not None \
            and glucose.value < HYPOGLYCAEMIA_BELOW:
        return f"capillary glucose {glucose.value:g} mmol/L with altered consciousness"
    return None


def should_not_wait(patient: Patient) -> str | None:
    """Why the patient should not wait (decision point B), or None."""
    v = patient.vitals[-1]
    concerns = [f.concern for f in patient.red_flags if normalize(f.concern) in HIGH_RISK_CONCERNS]
    if concerns:
        return f"high-risk situation: {concerns[0]}"
    if v.consciousness in ("new confusion", "voice"):
        return "new confusion" if v.consciousness == "new confusion" else "lethargic, responding only to voice"
    if v.pain_score is not None and v.pain_score >= SEVERE_PAIN_AT:
        return f"severe pain, {v.pain_score}/10"
    if patient.age_days is not None and patient.age_days <= NEONATE_DAYS and v.temperature_c is not None \
            and v.temperature_c >= FEVER_AT:
        return f"fever of {v.temperature_c:g} °C at {patient.age_days} days old"
    return None


def esi_decision(db: TriageDB, patient: Patient) -> EsiDecision:
    """The patient's ESI level by the four decision points, from the record (latest vital signs)."""
    resources = expected_resources(db, patient)["resource_count"]
    reason = life_saving_need(patient)
    if reason is not None:
        return EsiDecision(1, "A", reason, resources)
    reason = should_not_wait(patient)
    if reason is not None:
        return EsiDecision(2, "B", reason, resources)
    if resources < 2:
        return EsiDecision(5 - resources, "C", f"{'no' if resources == 0 else 'one'} resource"
                                               f"{'s' if resources == 0 else ''} needed", resources)
    v = patient.vitals[-1]
    check = danger_zone(db, patient.age, v.heart_rate or 0, v.respiratory_rate or 0,
                        100 if v.spo2 is None else v.spo2)
    if check["in_danger_zone"]:
        return EsiDecision(2, "D", f"{resources} resources with danger-zone vital signs "
                                   f"({'; '.join(check['exceeded'])})", resources)
    return EsiDecision(3, "D", f"{resources} resources and vital signs outside the danger zone", resources)
