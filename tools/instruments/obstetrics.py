"""Obstetric and newborn instruments: the Bishop score (cervical readiness for induction) and the Apgar score."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Interval

from clinical_gym.tools.instruments.base import InstrumentResult, Risk, instrument, points_from, scored
from clinical_gym.tools.instruments.measures import HeartRate, Percent

BISHOP_RISKS = (
    Risk(6, "unfavourable cervix", "Bishop 6 or less: unfavourable cervix; cervical ripening is usually recommended "
                                   "before induction of labour."),
    Risk(8, "intermediate", "Bishop 7-8: neither clearly favourable nor unfavourable."),
    Risk(13, "favourable cervix", "Bishop above 8: favourable cervix; the chance of vaginal delivery after induction "
                                  "is similar to that after spontaneous labour."),
)

APGAR_RISKS = (
    Risk(3, "low", "Apgar 0-3: low score; the newborn usually needs resuscitation (decisions to resuscitate should "
                   "not wait for the 1-minute score)."),
    Risk(6, "moderately abnormal", "Apgar 4-6: moderately abnormal; the newborn may need assistance (e.g. stimulation, "
                                   "airway support); reassess and continue scoring every 5 minutes while below 7."),
    Risk(10, "reassuring", "Apgar 7-10: reassuring."),
)


@instrument
def bishop_score(dilation_cm: Annotated[float, Interval(ge=0, le=10)], effacement_percent: Percent,
                 station: Annotated[int, Interval(ge=-3, le=3)], consistency: Literal["firm", "medium", "soft"],
                 position: Literal["posterior", "mid", "anterior"]) -> InstrumentResult:
    """Bishop score (0-13): how favourable the cervix is for induction of labour.

    Args:
        dilation_cm: Cervical dilatation in cm: closed scores 0, 1-2 scores 1, 3-4 scores 2, 5 or more scores 3.
        effacement_percent: Cervical effacement in percent: 0-30 scores 0, 40-50 scores 1, 60-70 scores 2, 80 or more
            scores 3.
        station: Station of the presenting part, -3 to +3 cm relative to the ischial spines: -3 scores 0, -2 scores 1,
            -1 or 0 scores 2, +1 or lower scores 3.
        consistency: Cervical consistency: firm (0), medium (1), soft (2).
        position: Cervical position: posterior (0), mid (1), anterior (2).

    References:
        Bishop EH. Pelvic scoring for elective induction. Obstet Gynecol. 1964;24:266-268.
        American College of Obstetricians and Gynecologists. Practice Bulletin No. 107: Induction of labor. Obstet
        Gynecol. 2009;114(2 Pt 1):386-397 (interpretation thresholds).
    """
    points = {
        "dilation": points_from(dilation_cm, ((5, 3), (3, 2), (1, 1)), 0),
        "effacement": points_from(effacement_percent, ((80, 3), (60, 2), (40, 1)), 0),
        "station": points_from(station, ((1, 3), (-1, 2), (-2, 1)), 0),
        "consistency": {"firm": 0, "medium": 1, "soft": 2}[consistency],
        "position": {"posterior": 0, "mid": 1, "anterior": 2}[position],
    }
    return scored("Bishop", points, BISHOP_RISKS)


@instrument
def apgar(heart_rate: HeartRate, respiratory_effort: Literal["absent", "weak_or_irregular", "good_crying"],
          muscle_tone: Literal["limp", "some_flexion", "active_motion"],
          reflex_irritability: Literal["no_response", "grimace", "cry_or_active_withdrawal"],
          color: Literal["blue_or_pale", "acrocyanosis", "completely_pink"]) -> InstrumentResult:
    """Apgar score (0-10): a newborn's condition at 1 and 5 minutes after birth (and every 5 minutes while below 7).

    Args:
        heart_rate: Heart rate in beats/min (0 if absent): absent scores 0, below 100 scores 1, 100 or more scores 2.
        respiratory_effort: Respiratory effort: absent (0), weak, slow or irregular (1), good, crying (2).
        muscle_tone: Muscle tone: limp (0), some flexion of the extremities (1), active motion (2).
        reflex_irritability: Reflex irritability (response to stimulation or a suction catheter): no response (0),
            grimace (1), cry, cough, sneeze or active withdrawal (2).
        color: Colour: blue or pale all over (0), body pink with blue extremities (acrocyanosis, 1), completely
            pink (2).

    References:
        Apgar V. A proposal for a new method of evaluation of the newborn infant. Curr Res Anesth Analg.
        1953;32(4):260-267.
        American Academy of Pediatrics Committee on Fetus and Newborn; American College of Obstetricians and
        Gynecologists Committee on Obstetric Practice. The Apgar score. Pediatrics. 2015;136(4):819-822
        (interpretation bands).
    """
    levels = {"absent": 0, "weak_or_irregular": 1, "good_crying": 2, "limp": 0, "some_flexion": 1,
              "active_motion": 2, "no_response": 0, "grimace": 1, "cry_or_active_withdrawal": 2, "blue_or_pale": 0,
              "acrocyanosis": 1, "completely_pink": 2}
    points = {
        "heart rate": 0 if heart_rate == 0 else 1 if heart_rate < 100 else 2,
        "respiratory effort": levels[respiratory_effort],
        "muscle tone": levels[muscle_tone],
        "reflex irritability": levels[reflex_irritability],
        "colour": levels[color],
    }
    return scored("Apgar", points, APGAR_RISKS)
