"""Neurology instruments: the Glasgow Coma Scale and the ABCD2 score for stroke risk after a TIA."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Interval

from clinical_gym.tools.instruments.base import InstrumentResult, Risk, instrument, scored
from clinical_gym.tools.instruments.measures import Age, DiastolicBP, SystolicBP

GCS_RISKS = (
    Risk(8, "severe", "GCS 3-8: severe impairment of consciousness (coma range); airway protection is at risk: "
                      "consider securing the airway; in head injury, severe brain injury."),
    Risk(12, "moderate", "GCS 9-12: moderate impairment of consciousness; in head injury, moderate brain injury."),
    Risk(15, "mild", "GCS 13-15: mild or no impairment of consciousness; in head injury, mild brain injury."),
)

ABCD2_RISKS = (
    Risk(3, "low risk", "2-day stroke risk about 1.0% in the validation cohorts."),
    Risk(5, "moderate risk", "2-day stroke risk about 4.1% in the validation cohorts."),
    Risk(7, "high risk", "2-day stroke risk about 8.1% in the validation cohorts."),
)


@instrument
def glasgow_coma_scale(eye: Annotated[int, Interval(ge=1, le=4)], verbal: Annotated[int, Interval(ge=1, le=5)],
                       motor: Annotated[int, Interval(ge=1, le=6)]) -> InstrumentResult:
    """Glasgow Coma Scale (3-15): level of consciousness from eye, verbal and motor responses.

    Args:
        eye: Eye opening: 4 spontaneous, 3 to sound (speech), 2 to pain (pressure), 1 none.
        verbal: Best verbal response: 5 oriented, 4 confused, 3 inappropriate words, 2 incomprehensible sounds,
            1 none.
        motor: Best motor response: 6 obeys commands, 5 localises pain, 4 normal flexion (withdrawal), 3 abnormal
            flexion, 2 extension, 1 none.

    References:
        Teasdale G, Jennett B. Assessment of coma and impaired consciousness. A practical scale. Lancet.
        1974;2(7872):81-84.
        Teasdale G, Jennett B. Assessment and prognosis of coma after head injury. Acta Neurochir (Wien).
        1976;34(1-4):45-55 (the 6-level motor response and the 3-15 total).
    """
    return scored("Glasgow Coma Scale", {"eye": eye, "verbal": verbal, "motor": motor}, GCS_RISKS)


@instrument
def abcd2(age: Age, systolic_bp: SystolicBP, diastolic_bp: DiastolicBP,
          clinical_features: Literal["unilateral_weakness", "speech_disturbance_without_weakness", "other"],
          duration_minutes: Annotated[int, Interval(ge=0, le=10080)], diabetes: bool) -> InstrumentResult:
    """ABCD2 score (0-7): early stroke risk after a transient ischaemic attack.

    Args:
        age: Age in years; 1 point when 60 or more.
        systolic_bp: Systolic blood pressure at first assessment in mmHg; 1 point (with diastolic) when 140 or more.
        diastolic_bp: Diastolic blood pressure at first assessment in mmHg; 1 point (with systolic) when 90 or more.
        clinical_features: Clinical features of the TIA: unilateral weakness (2 points), speech disturbance without
            weakness (1 point), or other (0).
        duration_minutes: Duration of symptoms in minutes; 2 points for 60 or more, 1 point for 10-59.
        diabetes: Diabetes mellitus; 1 point.

    References:
        Johnston SC, Rothwell PM, Nguyen-Huynh MN, et al. Validation and refinement of scores to predict very early
        stroke risk after transient ischaemic attack. Lancet. 2007;369(9558):283-292.
    """
    points = {
        "age >= 60": int(age >= 60),
        "blood pressure >= 140/90": int(systolic_bp >= 140 or diastolic_bp >= 90),
        "clinical features": {"unilateral_weakness": 2, "speech_disturbance_without_weakness": 1}.get(
            clinical_features, 0),
        "duration": 2 if duration_minutes >= 60 else 1 if duration_minutes >= 10 else 0,
        "diabetes": int(diabetes),
    }
    return scored("ABCD2", points, ABCD2_RISKS)
