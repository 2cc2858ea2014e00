"""Mental health and substance use instruments: PHQ-9 (depression), GAD-7 (anxiety), AUDIT-C (alcohol use) and
CIWA-Ar (alcohol withdrawal)."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Interval, Len

from clinical_gym.tools.instruments.base import InstrumentResult, Risk, instrument, scored

ItemScore = Annotated[int, Interval(ge=0, le=3)]
AuditItem = Annotated[int, Interval(ge=0, le=4)]
CiwaItem = Annotated[int, Interval(ge=0, le=7)]

PHQ9_RISKS = (
    Risk(4, "none-minimal depression", "PHQ-9 0-4: no or minimal depressive symptoms."),
    Risk(9, "mild depression", "PHQ-9 5-9: mild depressive symptoms; watchful waiting and repeat at follow-up."),
    Risk(14, "moderate depression", "PHQ-9 10-14: moderate depressive symptoms; 10 or more is the usual threshold "
                                    "for major depression (sensitivity and specificity 88%); consider a treatment "
                                    "plan."),
    Risk(19, "moderately severe depression", "PHQ-9 15-19: moderately severe depressive symptoms; active treatment "
                                             "with medication and/or psychotherapy."),
    Risk(27, "severe depression", "PHQ-9 20-27: severe depressive symptoms; prompt treatment and referral to mental "
                                  "health services."),
)

GAD7_RISKS = (
    Risk(4, "minimal anxiety", "GAD-7 0-4: minimal anxiety symptoms."),
    Risk(9, "mild anxiety", "GAD-7 5-9: mild anxiety symptoms; monitor."),
    Risk(14, "moderate anxiety", "GAD-7 10-14: moderate anxiety symptoms; 10 or more is the usual cut-point for "
                                 "generalised anxiety disorder and warrants further evaluation."),
    Risk(21, "severe anxiety", "GAD-7 15-21: severe anxiety symptoms; further evaluation and active treatment."),
)

CIWA_RISKS = (
    Risk(9, "minimal to mild withdrawal", "CIWA-Ar below 10: patients usually need no additional medication for "
                                          "withdrawal; keep reassessing."),
    Risk(15, "moderate withdrawal", "CIWA-Ar 10-15: moderate withdrawal with autonomic arousal; symptom-triggered "
                                    "medication (e.g. a benzodiazepine) and frequent reassessment."),
    Risk(67, "severe withdrawal", "CIWA-Ar above 15: severe withdrawal with increased risk of seizures and delirium "
                                  "tremens; treat promptly and consider a higher level of care."),
)


@instrument
def phq_9(item_scores: Annotated[list[ItemScore], Len(9, 9)]) -> InstrumentResult:
    """PHQ-9 (0-27): depression severity over the past 2 weeks, from the nine Patient Health Questionnaire items.

    Args:
        item_scores: The nine item scores in questionnaire order (0 not at all, 1 several days, 2 more than half the
            days, 3 nearly every day): anhedonia, low mood, sleep, tiredness, appetite, feeling a failure,
            concentration, psychomotor change, thoughts of being better off dead or of self-harm.

    References:
        Kroenke K, Spitzer RL, Williams JBW. The PHQ-9: validity of a brief depression severity measure. J Gen
        Intern Med. 2001;16(9):606-613.
    """
    labels = ("anhedonia", "low mood", "sleep", "tiredness", "appetite", "feeling a failure", "concentration",
              "psychomotor change", "thoughts of death or self-harm")
    result = scored("PHQ-9", dict(zip(labels, item_scores, strict=True)), PHQ9_RISKS)
    if item_scores[8] > 0:
        warning = " Item 9 is positive (thoughts of death or self-harm): assess suicide risk now, whatever the total."
        result = result.model_copy(update={"interpretation": result.interpretation + warning})
    return result


@instrument
def gad_7(item_scores: Annotated[list[ItemScore], Len(7, 7)]) -> InstrumentResult:
    """GAD-7 (0-21): anxiety severity over the past 2 weeks, from the seven Generalized Anxiety Disorder items.

    Args:
        item_scores: The seven item scores in questionnaire order (0 not at all, 1 several days, 2 more than half
            the days, 3 nearly every day): nervousness, uncontrollable worry, excessive worry, trouble relaxing,
            restlessness, irritability, fear that something awful might happen.

    References:
        Spitzer RL, Kroenke K, Williams JBW, Löwe B. A brief measure for assessing generalized anxiety disorder: the
        GAD-7. Arch Intern Med. 2006;166(10):1092-1097.
    """
    labels = ("nervousness", "uncontrollable worry", "excessive worry", "trouble relaxing", "restlessness",
              "irritability", "fear of something awful")
    return scored("GAD-7", dict(zip(labels, item_scores, strict=True)), GAD7_RISKS)


@instrument
def audit_c(drinking_frequency: AuditItem, typical_quantity: AuditItem, heavy_drinking_frequency: AuditItem,
            sex: Literal["female", "male"]) -> InstrumentResult:
    """AUDIT-C (0-12): screen for hazardous drinking or alcohol use disorder from the three AUDIT consumption
    questions.

    Args:
        drinking_frequency: How often a drink containing alcohol is had: 0 never, 1 monthly or less, 2 two to four
            times a month, 3 two to three times a week, 4 four or more times a week.
        typical_quantity: Standard drinks on a typical drinking day: 0 one or two, 1 three or four, 2 five or six,
            3 seven to nine, 4 ten or more.
        heavy_drinking_frequency: How often six or more drinks are had on one occasion: 0 never, 1 less than
            monthly, 2 monthly, 3 weekly, 4 daily or almost daily.
        sex: Sex, which sets the screening threshold (4 or more in men, 3 or more in women).

    References:
        Bush K, Kivlahan DR, McDonell MB, Fihn SD, Bradley KA. The AUDIT alcohol consumption questions (AUDIT-C): an
        effective brief screening test for problem drinking. Arch Intern Med. 1998;158(16):1789-1795.
        Bradley KA, DeBenedetti AF, Volk RJ, Williams EC, Frank D, Kivlahan DR. AUDIT-C as a brief screen for alcohol
        misuse in primary care. Alcohol Clin Exp Res. 2007;31(7):1208-1217 (sex-specific thresholds).
    """
    points = {"frequency": drinking_frequency, "typical quantity": typical_quantity,
              "six or more drinks": heavy_drinking_frequency}
    score = sum(points.values())
    threshold = 4 if sex == "male" else 3
    if score >= threshold:
        category = "positive screen"
        meaning = (f"At or above the threshold for {'men' if sex == 'male' else 'women'} ({threshold}): possible "
                   f"hazardous drinking or alcohol use disorder; assess further (full AUDIT, brief intervention). "
                   f"Higher scores indicate greater risk.")
    else:
        category = "negative screen"
        meaning = f"Below the threshold for {'men' if sex == 'male' else 'women'} ({threshold})."
    return InstrumentResult(instrument="AUDIT-C", score=score, category=category, interpretation=meaning, points=points)


@instrument
def ciwa_ar(nausea_vomiting: CiwaItem, tremor: CiwaItem, paroxysmal_sweats: CiwaItem, anxiety: CiwaItem,
            agitation: CiwaItem, tactile_disturbances: CiwaItem, auditory_disturbances: CiwaItem,
            visual_disturbances: CiwaItem, headache: CiwaItem,
            orientation: Annotated[int, Interval(ge=0, le=4)]) -> InstrumentResult:
    """CIWA-Ar (0-67): severity of alcohol withdrawal, to guide symptom-triggered treatment.

    Args:
        nausea_vomiting: Nausea and vomiting, 0 (none) to 7 (constant nausea, frequent dry heaves and vomiting).
        tremor: Tremor with arms extended and fingers spread, 0 (none) to 7 (severe, even with arms not extended).
        paroxysmal_sweats: Paroxysmal sweats, 0 (none visible) to 7 (drenching sweats).
        anxiety: Anxiety, 0 (at ease) to 7 (equivalent to acute panic states).
        agitation: Agitation, 0 (normal activity) to 7 (paces back and forth or constantly thrashes about).
        tactile_disturbances: Tactile disturbances (itching, pins and needles, burning, formication), 0 (none) to 7
            (continuous hallucinations).
        auditory_disturbances: Auditory disturbances, 0 (none) to 7 (continuous hallucinations).
        visual_disturbances: Visual disturbances, 0 (none) to 7 (continuous hallucinations).
        headache: Headache or fullness in the head, 0 (none) to 7 (extremely severe).
        orientation: Orientation and clouding of sensorium, 0 (oriented, can do serial additions) to 4 (disoriented
            for place or person).

    References:
        Sullivan JT, Sykora K, Schneiderman J, Naranjo CA, Sellers EM. Assessment of alcohol withdrawal: the revised
        Clinical Institute Withdrawal Assessment for Alcohol scale (CIWA-Ar). Br J Addict. 1989;84(11):1353-1357.
    """
    points = {"nausea/vomiting": nausea_vomiting, "tremor": tremor, "paroxysmal sweats": paroxysmal_sweats,
              "anxiety": anxiety, "agitation": agitation, "tactile disturbances": tactile_disturbances,
              "auditory disturbances": auditory_disturbances, "visual disturbances": visual_disturbances,
              "headache": headache, "orientation": orientation}
    return scored("CIWA-Ar", points, CIWA_RISKS)
