"""The presentations the Triage generator draws arriving patients from: for each, who presents, how they describe
it, the ranges their vital signs fall in, the primary survey, red flags, the care they are expected to need, bedside
results, and what the triage nurse must start. The ESI level is never read from here: the generator computes it
from the generated record with ``clinical_gym.domains.triage.esi`` and keeps a patient only when it is the level the
presentation is meant to show (``level``), so a range written wrongly fails generation instead of mislabelling a task.

``pool`` says which split a presentation belongs to: "test" presentations (two or three per level) never appear in
the train split. Clinical content written for this project, following the ESI v4 handbook's examples, the
Resuscitation Council UK algorithms (anaphylaxis, bradycardia, hypoglycaemia) and NICE NG51 (sepsis).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Pool = Literal["train", "test"]
Span = tuple[float, float]


@dataclass(frozen=True)
class Observations:
    """Ranges of the triage observations (None: cannot be measured); ``consciousness`` is drawn from its options."""

    temperature_c: Span | None = (36.4, 37.4)
    heart_rate: Span | None = (64, 96)
    systolic_bp: Span | None = (112, 148)
    diastolic_bp: Span | None = (64, 88)
    respiratory_rate: Span | None = (12, 18)
    spo2: Span | None = (96, 100)
    pain_score: Span | None = (0, 3)
    consciousness: tuple[str, ...] = ("alert",)
    on_oxygen: bool = False


@dataclass(frozen=True)
class Survey:
    """The primary survey's texts ({hr}, {rr}, {spo2}, {sbp} are filled from the observations) and GCS."""

    airway: str = "Clear; talking in full sentences."
    breathing: str = "Normal effort; RR {rr}."
    circulation: str = "Warm and well perfused; pulse {hr}."
    disability: str = "Alert; GCS 15."
    exposure: str = "Nothing of note."
    gcs: tuple[int, int, int] = (4, 5, 6)


@dataclass(frozen=True)
class Bedside:
    """A bedside result the patient has: a numeric ``value`` range (``decimals``) or one of ``texts``."""

    value: Span | None = None
    decimals: int = 1
    texts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Presentation:
    key: str
    level: int
    pool: Pool
    summary: str  # the picture in the triage note and rationale (no vital-sign adjectives)
    ages: tuple[int, int]
    complaints: tuple[str, ...]  # lower-case lay phrases: "chest pain for 40 minutes"
    histories: tuple[str, ...]  # the history at the desk; {onset} and other ``fills`` fields
    observations: Observations = Observations()
    survey: Survey = Survey()
    sex: Literal["female", "male"] | None = None
    age_days: tuple[int, int] | None = None  # infants: age in days instead of years
    arrival: tuple[str, ...] = ("walk-in",)
    fills: dict[str, tuple[str, ...]] = field(default_factory=dict)
    red_flags: tuple[tuple[str, str], ...] = ()  # (finding, concern)
    care: tuple[str, ...] = ()  # always anticipated
    care_choices: tuple[tuple[str, ...], ...] = ()  # one item of each tuple is anticipated too
    extras: tuple[str, ...] = ()  # care that is not an ESI resource; each is added half the time
    bedside: dict[str, Bedside] = field(default_factory=dict)
    tests: tuple[str, ...] = ()  # bedside tests the nurse performs
    interventions: tuple[tuple[str, str], ...] = ()  # (catalogue intervention, indication)
    code: tuple[str, str] | None = None  # (code, criteria met)
    conditions: tuple[str, ...] = ()  # past history every patient of this presentation has
    medications: tuple[tuple[str, str], ...] = ()  # (drug, dose) every patient takes ({fills} allowed)
    reference: str | None = None  # get_esi_reference topic the nurse consults
    suicide_risk: bool = False


CARDIAC_ARREST_SURVEY = Survey(
    airway="Snoring respirations; opens with a head tilt and chin lift.",
    breathing="Occasional gasping breaths only (about {rr}/min); no chest rise between them.",
    circulation="No carotid pulse. Monitor pads show ventricular fibrillation.",
    disability="Unresponsive to voice and pain; pupils 4 mm, sluggish.", exposure="Grey and clammy; no injuries.",
    gcs=(1, 1, 1))

PRESENTATIONS: tuple[Presentation, ...] = (
    # -- ESI 1 ---------------------------------------------------------------------------------------------------------
    Presentation(
        "vf_arrest", 1, "train", "collapse with no pulse and ventricular fibrillation on the monitor", (45, 86),
        ("a collapse in the waiting room", "a sudden collapse while booking in"),
        ("Booked in {onset} ago with central chest tightness and was waiting to be seen. {witness} saw {obj} slump off "
         "the chair; {subj} has not moved or spoken since.",
         "Came in {onset} ago feeling unwell with chest discomfort. {witness} watched {obj} go grey and fall to the "
         "floor; no response since."),
        Observations(temperature_c=None, heart_rate=None, systolic_bp=None, diastolic_bp=None,
                     respiratory_rate=(2, 6), spo2=None, pain_score=None, consciousness=("unresponsive",)),
        CARDIAC_ARREST_SURVEY, arrival=("already in department",),
        fills={"onset": ("20 minutes", "half an hour", "15 minutes"),
               "witness": ("Other patients", "A porter", "The receptionist")},
        red_flags=(("Unresponsive with gasping breaths and no pulse", "cardiac arrest"),),
        care=("12-lead ECG", "troponin", "urea and electrolytes", "chest X-ray", "critical care review",
              "cardiology review"),
        interventions=(("defibrillation", "ventricular fibrillation on the monitor"),
                       ("bag-valve-mask ventilation", "not breathing normally")),
        code=("cardiac arrest", "unresponsive, gasping, no pulse")),
    Presentation(
        "opioid_toxicity", 1, "train", "opioid toxicity with slow breathing and pinpoint pupils", (18, 62),
        ("found unrousable by friends", "very sleepy and hard to wake after taking something"),
        ("Found {onset} ago slumped in a stairwell after using {drug}; snoring and hard to rouse.",
         "Friends say {subj} took {drug} at a party {onset} ago and then could not be woken."),
        Observations(temperature_c=(35.6, 36.6), heart_rate=(50, 68), systolic_bp=(96, 122), diastolic_bp=(58, 76),
                     respiratory_rate=(3, 7), spo2=(78, 88), pain_score=None, consciousness=("pain",)),
        Survey(airway="Snoring; improves with a jaw thrust.", breathing="Shallow breaths, RR {rr}; SpO2 {spo2}% on air.",
               circulation="Pulse {hr}, warm peripheries.", disability="Responds only to pain; pupils pinpoint.",
               exposure="Needle marks in both antecubital fossae.", gcs=(1, 2, 4)),
        arrival=("ambulance",),
        fills={"onset": ("30 minutes", "an hour", "20 minutes"),
               "drug": ("heroin", "methadone", "oxycodone tablets")},
        red_flags=(("Pinpoint pupils with a respiratory rate below 8", "opioid toxicity with respiratory failure"),),
        care=("blood gas", "urea and electrolytes", "serum paracetamol level", "critical care review"),
        interventions=(("bag-valve-mask ventilation", "respiratory rate below 8 with hypoxia"),
                       ("intravenous naloxone", "suspected opioid toxicity"))),
    Presentation(
        "hypoglycaemia", 1, "train", "drowsiness in a patient treated with insulin, with a very low capillary glucose",
        (25, 82), ("drowsy and confused at home", "not making sense and very sleepy"),
        ("{witness} found {obj} sweaty and hard to rouse {onset} ago; {subj} injects insulin and skipped lunch.",
         "Took {poss} usual insulin this morning but ate little; over {onset} became clammy, slurred and drowsy."),
        Observations(temperature_c=(35.8, 36.8), heart_rate=(84, 112), systolic_bp=(112, 152), diastolic_bp=(64, 90),
                     respiratory_rate=(14, 20), spo2=(95, 99), pain_score=None, consciousness=("voice",)),
        Survey(airway="Clear.", breathing="RR {rr}; clear chest.", circulation="Sweaty and clammy; pulse {hr}.",
               disability="Opens eyes to voice, confused speech; pupils equal.", exposure="No injuries seen.",
               gcs=(3, 4, 6)),
        arrival=("ambulance", "brought by family"),
        fills={"onset": ("an hour", "40 minutes", "two hours"), "witness": ("A neighbour", "Family", "A carer")},
        red_flags=(("Drowsy and sweaty while taking insulin", "hypoglycaemia until proven otherwise"),),
        care=("urea and electrolytes", "full blood count"),
        bedside={"capillary blood glucose": Bedside((1.2, 2.8))}, tests=("capillary blood glucose",),
        interventions=(("intravenous glucose", "capillary glucose below 3 mmol/L with reduced consciousness"),),
        conditions=("type 1 diabetes",), medications=(("insulin", "basal-bolus regimen"),)),
    Presentation(
        "anaphylaxis", 1, "train", "anaphylaxis with stridor, wheeze and urticaria", (18, 70),
        ("swollen lips and difficulty breathing", "a swollen tongue and a tight chest"),
        ("{trigger} {onset} ago; within minutes {poss} lips swelled, hives spread and {subj} now feels faint and "
         "tight-chested.",
         "Minutes after {trigger_lower} {onset} ago {subj} developed hives, a hoarse voice and trouble breathing."),
        Observations(temperature_c=(36.4, 37.2), heart_rate=(118, 142), systolic_bp=(70, 86), diastolic_bp=(38, 54),
                     respiratory_rate=(26, 34), spo2=(90, 95), pain_score=(2, 5)),
        Survey(airway="Swollen lips and tongue; hoarse voice; inspiratory stridor.",
               breathing="Working hard; widespread wheeze; RR {rr}.",
               circulation="Pale and cool; capillary refill 4 seconds; weak pulse {hr}.",
               disability="Alert and frightened; GCS 15.", exposure="Raised urticarial weals over the trunk."),
        arrival=("walk-in", "ambulance"),
        fills={"onset": ("20 minutes", "15 minutes", "half an hour"),
               "trigger": ("Ate a curry containing peanuts", "Was stung by a wasp", "Ate prawns at a restaurant"),
               "trigger_lower": ("eating a curry containing peanuts", "a wasp sting", "eating prawns")},
        red_flags=(("Stridor and tongue swelling within minutes of an allergen", "airway compromise"),
                   ("Low blood pressure with wheeze and urticaria", "circulatory compromise")),
        care=("nebulised bronchodilators", "intravenous fluids", "full blood count", "critical care review"),
        interventions=(("intramuscular adrenaline", "anaphylaxis with stridor and hypotension"),)),
    Presentation(
        "haemorrhagic_shock", 1, "train", "major bleeding after injury with signs of shock", (18, 60),
        ("a deep wound that will not stop bleeding", "heavy bleeding after an injury"),
        ("{mechanism} {onset} ago; the wound has bled heavily through several dressings.",
         "{mechanism} {onset} ago. Bystanders pressed on the wound but blood keeps coming."),
        Observations(temperature_c=(35.8, 36.6), heart_rate=(124, 150), systolic_bp=(70, 86), diastolic_bp=(38, 52),
                     respiratory_rate=(24, 32), spo2=(93, 98), pain_score=(7, 10),
                     consciousness=("alert", "new confusion")),
        Survey(airway="Clear; talking.", breathing="RR {rr}; clear chest.",
               circulation="Pale, cold, capillary refill 5 seconds; thready pulse {hr}; pulsatile bleeding from the wound.",
               disability="Anxious; GCS 14-15.", exposure="{wound}.", gcs=(4, 4, 6)),
        arrival=("ambulance",),
        fills={"onset": ("30 minutes", "20 minutes", "45 minutes"),
               "mechanism": ("Stabbed in the thigh", "Leg caught in farm machinery", "Cut the forearm on a glass door"),
               "wound": ("Deep wound with brisk bleeding", "Large laceration with pulsatile bleeding",
                         "Gaping wound soaked through its dressing")},
        red_flags=(("Uncontrolled bleeding with a low blood pressure", "haemorrhagic shock"),),
        care=("group and crossmatch", "full blood count", "coagulation screen", "trauma X-rays", "critical care review"),
        interventions=(("haemorrhage control", "uncontrolled external bleeding"),
                       ("blood transfusion", "haemorrhagic shock")),
        code=("trauma", "systolic pressure below 90 mmHg after a penetrating injury")),
    Presentation(
        "pulmonary_oedema", 1, "train", "acute breathlessness with crackles and frothy sputum", (62, 92),
        ("sudden severe breathlessness", "can't catch a breath since the early hours"),
        ("Woke {onset} ago fighting for breath; now coughing up pink frothy sputum and cannot lie flat.",
         "Breathlessness came on over {onset} and is getting worse; too breathless to finish a sentence."),
        Observations(temperature_c=(36.2, 37.2), heart_rate=(104, 128), systolic_bp=(156, 200), diastolic_bp=(86, 110),
                     respiratory_rate=(30, 40), spo2=(80, 88), pain_score=(0, 3)),
        Survey(airway="Clear; speaking single words.", breathing="Sitting bolt upright; RR {rr}; crackles to the mid zones.",
               circulation="Sweaty; pulse {hr}.", disability="Alert and frightened; GCS 15.",
               exposure="Pitting ankle oedema."),
        arrival=("ambulance",), fills={"onset": ("two hours", "an hour", "three hours")},
        red_flags=(("Speaking single words with SpO2 below 90%", "respiratory failure"),),
        care=("12-lead ECG", "chest X-ray", "troponin", "urea and electrolytes", "blood gas", "cardiology review"),
        interventions=(("non-invasive ventilation", "respiratory failure with pulmonary oedema"),
                       ("supplemental oxygen", "SpO2 below 90%")),
        conditions=("heart failure",), medications=(("furosemide", "40 mg daily"),)),
    Presentation(
        "septic_shock", 1, "train", "fever with a low blood pressure and new confusion", (55, 90),
        ("fever and confusion", "burning up and not making sense"),
        ("Unwell for {onset} with {source}; today drowsy and muddled, which is new.",
         "{source_cap} for {onset}; this morning {subj} became confused and clammy."),
        Observations(temperature_c=(38.5, 40.0), heart_rate=(116, 140), systolic_bp=(72, 86), diastolic_bp=(38, 52),
                     respiratory_rate=(24, 30), spo2=(91, 96), pain_score=(1, 4), consciousness=("new confusion",)),
        Survey(airway="Clear.", breathing="RR {rr}.", circulation="Mottled knees; capillary refill 4 seconds; pulse {hr}.",
               disability="Confused to time and place; GCS 14.", exposure="{exposure}", gcs=(4, 4, 6)),
        arrival=("ambulance", "brought by family"),
        fills={"onset": ("two days", "three days", "a day"),
               "source": ("burning urine", "a productive cough", "a red, hot leg"),
               "source_cap": ("Burning urine", "A productive cough", "A red, hot leg"),
               "exposure": ("Nothing else of note.", "Warm to the touch.", "Flushed and hot.")},
        red_flags=(("Suspected infection with systolic pressure below 90 mmHg and new confusion", "septic shock"),),
        care=("blood cultures", "full blood count", "urea and electrolytes", "blood gas", "intravenous antibiotics",
              "critical care review"),
        bedside={"venous lactate": Bedside((4.1, 7.5))}, tests=("venous lactate",),
        interventions=(("intravenous fluid resuscitation", "septic shock"),),
        code=("sepsis", "suspected infection with hypotension and new confusion")),
    Presentation(
        "tension_pneumothorax", 1, "test", "chest injury with absent breath sounds, hypoxia and shock", (18, 60),
        ("chest pain and breathlessness after a crash", "can't breathe after a fall onto the chest"),
        ("{mechanism} {onset} ago; now very short of breath with pain on the {side} side of the chest.",
         "{mechanism} {onset} ago and has become steadily more breathless since."),
        Observations(temperature_c=(35.9, 36.8), heart_rate=(120, 146), systolic_bp=(74, 88), diastolic_bp=(40, 56),
                     respiratory_rate=(30, 40), spo2=(80, 88), pain_score=(7, 9)),
        Survey(airway="Clear; trachea deviated away from the {side} side.",
               breathing="RR {rr}; absent breath sounds on the {side}; hyper-resonant.",
               circulation="Distended neck veins; pulse {hr}.", disability="Alert but distressed; GCS 15.",
               exposure="Bruising over the {side} chest wall."),
        arrival=("ambulance",),
        fills={"onset": ("40 minutes", "half an hour", "an hour"), "side": ("right", "left"),
               "mechanism": ("Motorcycle collision at speed", "Fell from a ladder onto a wall", "Car crash")},
        red_flags=(("Absent breath sounds with a deviated trachea and shock", "tension pneumothorax"),),
        care=("chest X-ray", "trauma X-rays", "blood gas", "full blood count", "critical care review"),
        interventions=(("needle decompression", "suspected tension pneumothorax"),),
        code=("trauma", "chest injury with systolic pressure below 90 mmHg")),
    Presentation(
        "bradycardia_shock", 1, "test", "a very slow pulse with a low blood pressure and confusion", (65, 92),
        ("dizzy spells and a fall", "feeling faint all day"),
        ("Two near-faints today and {onset} of feeling washed out; family say {subj} is muddled.",
         "Felt faint on standing for {onset}; collapsed briefly at home this morning."),
        Observations(temperature_c=(36.0, 36.9), heart_rate=(28, 38), systolic_bp=(68, 86), diastolic_bp=(38, 50),
                     respiratory_rate=(16, 20), spo2=(94, 98), pain_score=(0, 2), consciousness=("new confusion",)),
        Survey(airway="Clear.", breathing="RR {rr}.", circulation="Cool hands; slow regular pulse {hr}.",
               disability="Confused to time; GCS 14.", exposure="Nothing of note.", gcs=(4, 4, 6)),
        arrival=("ambulance", "brought by family"), fills={"onset": ("two days", "a day", "since the morning")},
        red_flags=(("Heart rate below 40 with hypotension and confusion", "bradycardia with poor perfusion"),),
        care=("12-lead ECG", "urea and electrolytes", "troponin", "cardiology review"),
        interventions=(("intravenous atropine", "bradycardia with poor perfusion"),),
        conditions=("hypertension",), medications=(("bisoprolol", "5 mg daily"),)),
    # -- ESI 2 ---------------------------------------------------------------------------------------------------------
    Presentation(
        "stroke_window", 2, "train", "sudden one-sided weakness and speech disturbance within the treatment window",
        (55, 90), ("sudden weakness of one arm and muddled speech", "a droopy face and a weak arm"),
        ("At {lkw} {subj} was well; minutes later {witness} saw {obj} drop a cup, unable to lift the {side} arm, "
         "with jumbled words.", "Last seen well at {lkw}. Sudden {side} arm and leg weakness and slurred speech since."),
        Observations(temperature_c=(36.3, 37.2), heart_rate=(66, 96), systolic_bp=(150, 190), diastolic_bp=(80, 100),
                     respiratory_rate=(14, 18), spo2=(95, 99), pain_score=(0, 2)),
        Survey(disability="Alert; {side} facial droop and arm weakness; word-finding difficulty.", gcs=(4, 4, 6)),
        arrival=("ambulance", "brought by family"),
        fills={"lkw": ("13:10", "13:35", "12:50", "13:55"), "side": ("right", "left"),
               "witness": ("a partner", "a friend", "a neighbour")},
        red_flags=(("Sudden one-sided weakness and speech disturbance within hours", "possible acute stroke within "
                    "the treatment window"),),
        care=("CT brain with angiography", "full blood count", "coagulation screen", "12-lead ECG",
              "stroke team review"),
        bedside={"capillary blood glucose": Bedside((4.8, 8.4))}, tests=("capillary blood glucose",),
        code=("stroke", "sudden focal deficit within the treatment window; glucose normal")),
    Presentation(
        "stemi", 2, "train", "ongoing central chest pain with ST elevation on the triage ECG", (42, 86),
        ("chest pain for {onset}", "crushing chest pain"),
        ("Crushing central chest pain came on {onset} ago while {activity}, spreading to the left arm, with sweating.",
         "Tight central chest pain for {onset}, started while {activity}; still there, with nausea."),
        Observations(temperature_c=(36.2, 37.1), heart_rate=(70, 98), systolic_bp=(120, 168), diastolic_bp=(70, 96),
                     respiratory_rate=(16, 20), spo2=(95, 99), pain_score=(6, 9)),
        Survey(circulation="Pale and sweaty; pulse {hr}."),
        arrival=("walk-in", "ambulance"),
        fills={"onset": ("40 minutes", "an hour", "30 minutes"),
               "activity": ("mowing the lawn", "climbing stairs", "watching television")},
        red_flags=(("Ongoing central chest pain with sweating", "possible acute coronary syndrome"),),
        care=("12-lead ECG", "troponin", "full blood count", "chest X-ray", "cardiology review"),
        bedside={"12-lead ECG": Bedside(texts=(
            "Sinus rhythm. ST elevation of 3 mm in II, III and aVF with reciprocal depression in I and aVL.",
            "Sinus rhythm. ST elevation of 4 mm in V1 to V4.",
            "Sinus rhythm. ST elevation in I, aVL, V5 and V6 with reciprocal depression in III."))},
        tests=("12-lead ECG",), interventions=(("aspirin 300 mg", "ST-elevation myocardial infarction"),),
        code=("STEMI", "ST elevation on the triage ECG")),
    Presentation(
        "sepsis_confusion", 2, "train", "fever with new confusion and a suspected source of infection", (65, 92),
        ("fever and new confusion", "not herself and feverish"),
        ("Family noticed new muddling over {onset}, with {source}.",
         "Usually sharp; for {onset} confused and feverish, with {source}."),
        Observations(temperature_c=(38.1, 39.4), heart_rate=(88, 99), systolic_bp=(96, 118), diastolic_bp=(56, 72),
                     respiratory_rate=(20, 24), spo2=(94, 98), pain_score=(1, 4), consciousness=("new confusion",)),
        Survey(disability="Confused to time and place; GCS 14.", gcs=(4, 4, 6)),
        arrival=("brought by family", "ambulance"),
        fills={"onset": ("a day", "two days"), "source": ("smelly urine", "a new cough", "burning on passing urine")},
        red_flags=(("Fever with new confusion in an older adult", "possible sepsis"),),
        care=("blood cultures", "full blood count", "urea and electrolytes", "intravenous antibiotics",
              "intravenous fluids"),
        bedside={"venous lactate": Bedside((2.1, 3.6))}, tests=("venous lactate",),
        code=("sepsis", "suspected infection with new confusion and lactate above 2 mmol/L")),
    Presentation(
        "suicide_plan", 2, "train", "thoughts of suicide with a plan", (16, 70),
        ("low mood and thoughts of ending their life", "wants help because of thoughts of suicide"),
        ("Has felt hopeless for {onset}; says {subj} has {plan} and has thought about doing it tonight.",
         "Came in alone after {onset} of low mood; has {plan} and no reason to stop."),
        Observations(pain_score=(0, 2)),
        arrival=("walk-in", "brought by family"),
        fills={"onset": ("weeks", "two months", "a month"),
               "plan": ("stockpiled tablets at home", "written goodbye letters", "looked up ways to end life")},
        red_flags=(("Suicidal thoughts with a plan and access to means", "high suicide risk"),),
        care=("psychiatric assessment", "history and examination"),
        interventions=(("one-to-one observation", "high suicide risk"),), suicide_risk=True),
    Presentation(
        "ectopic", 2, "train", "lower abdominal pain with a positive pregnancy test", (18, 42),
        ("lower tummy pain and a missed period", "sharp pain low in the belly"),
        ("Period {late} late; {onset} ago sharp {side}-sided lower abdominal pain began, with a little spotting and "
         "shoulder-tip pain.", "Sudden {side} lower abdominal pain {onset} ago; period {late} late; some spotting."),
        Observations(temperature_c=(36.4, 37.3), heart_rate=(86, 99), systolic_bp=(100, 118), diastolic_bp=(58, 72),
                     respiratory_rate=(14, 19), spo2=(97, 100), pain_score=(6, 9)),
        Survey(exposure="Tender low on the {side} of the abdomen."),
        sex="female", arrival=("walk-in", "brought by family"),
        fills={"late": ("two weeks", "ten days", "three weeks"), "onset": ("three hours", "two hours", "an hour"),
               "side": ("right", "left")},
        red_flags=(("Abdominal pain with a missed period and shoulder-tip pain", "possible ruptured ectopic pregnancy"),),
        care=("serum beta-hCG", "full blood count", "group and crossmatch", "pelvic ultrasound", "gynaecology review"),
        bedside={"urine pregnancy test": Bedside(texts=("Positive.",))}, tests=("urine pregnancy test",)),
    Presentation(
        "febrile_neonate", 2, "train", "a fever in a baby under four weeks old", (0, 0),
        ("a hot baby", "a temperature in a newborn"),
        ("{carer} measured {temp_told} °C {onset} ago; feeding a little less today but otherwise {poss} usual self.",
         "Felt hot to {carer_lower} {onset} ago; {temp_told} °C at home. Born at term with no problems."),
        Observations(temperature_c=(38.0, 39.0), heart_rate=(140, 172), systolic_bp=None, diastolic_bp=None,
                     respiratory_rate=(36, 50), spo2=(96, 100), pain_score=None),
        Survey(breathing="RR {rr}; no recession.", circulation="Pink; capillary refill under 2 seconds.",
               disability="Alert, moving all limbs, good cry; fontanelle soft."),
        age_days=(6, 28), arrival=("carried by parent",),
        fills={"carer": ("The parents", "Mum", "Dad"), "carer_lower": ("the parents", "mum", "dad"),
               "temp_told": ("38.2", "38.4", "38.1"), "onset": ("an hour", "two hours", "30 minutes")},
        red_flags=(("Fever in a baby under 28 days old", "serious bacterial infection in a neonate"),),
        care=("full blood count", "blood cultures", "urine culture", "intravenous antibiotics"),
        reference="paediatric_fever"),
    Presentation(
        "renal_colic", 2, "train", "severe loin-to-groin pain", (24, 62),
        ("severe pain in the side", "pain in the back going to the groin"),
        ("Sudden {side} loin pain {onset} ago coming in waves into the groin; cannot keep still; vomited once.",
         "Writhing with {side} flank pain since {onset} ago, spreading to the groin."),
        Observations(temperature_c=(36.4, 37.3), heart_rate=(76, 99), systolic_bp=(124, 158), diastolic_bp=(72, 94),
                     respiratory_rate=(14, 19), spo2=(97, 100), pain_score=(8, 10)),
        fills={"side": ("right", "left"), "onset": ("two hours", "three hours", "an hour")},
        care=("urine dipstick", "urea and electrolytes", "full blood count", "CT abdomen and pelvis",
              "intravenous analgesia"),
        bedside={"urine dipstick": Bedside(texts=("Blood +++; no leucocytes or nitrites.",
                                                   "Blood ++; no leucocytes or nitrites."))},
        tests=("urine dipstick",)),
    Presentation(
        "af_rapid", 2, "train", "palpitations with a fast irregular pulse", (52, 86),
        ("palpitations", "a racing heart"),
        ("Heart racing and fluttering for {onset}; a little breathless on stairs; no chest pain.",
         "Noticed a fast, irregular heartbeat {onset} ago; feels tired, no chest pain or fainting."),
        Observations(temperature_c=(36.3, 37.2), heart_rate=(128, 164), systolic_bp=(104, 142), diastolic_bp=(64, 88),
                     respiratory_rate=(16, 20), spo2=(94, 98), pain_score=(0, 2)),
        Survey(circulation="Irregularly irregular pulse {hr}; warm peripheries."),
        fills={"onset": ("six hours", "since this morning", "a day")},
        care=("12-lead ECG", "urea and electrolytes", "full blood count", "intravenous rate control"),
        bedside={"12-lead ECG": Bedside(texts=("Atrial fibrillation with a fast ventricular rate; no ST elevation.",
                                                "Irregularly irregular narrow-complex rhythm; no ST changes."))},
        tests=("12-lead ECG",)),
    Presentation(
        "severe_asthma", 2, "train", "an asthma attack with wheeze and a low peak flow", (16, 48),
        ("an asthma attack", "wheezing and tight chest"),
        ("Known asthma; wheezy for {onset} despite {poss} blue inhaler every few minutes; struggling to finish "
         "sentences.", "Asthma flare over {onset} after a cold; reliever not helping."),
        Observations(temperature_c=(36.5, 37.6), heart_rate=(108, 124), systolic_bp=(112, 136), diastolic_bp=(66, 84),
                     respiratory_rate=(25, 30), spo2=(90, 93), pain_score=(1, 3)),
        Survey(breathing="RR {rr}; widespread wheeze; cannot complete sentences.", disability="Alert; anxious."),
        fills={"onset": ("a day", "since last night", "two days")},
        red_flags=(("Cannot complete sentences; peak flow under half of best", "acute severe asthma"),),
        care=("nebulised bronchodilators", "blood gas", "chest X-ray"),
        bedside={"peak expiratory flow": Bedside(texts=("38% of predicted.", "42% of predicted.", "45% of predicted."))},
        tests=("peak expiratory flow",),
        interventions=(("nebulised salbutamol", "acute severe asthma"), ("supplemental oxygen", "SpO2 below 94%")),
        conditions=("asthma",), medications=(("salbutamol", "100 micrograms as needed"),)),
    Presentation(
        "thunderclap_headache", 2, "test", "a sudden, worst-ever headache", (28, 66),
        ("the worst headache of their life", "a sudden severe headache"),
        ("Headache hit like a blow to the back of the head {onset} ago while {activity}; worst ever; vomited twice.",
         "Sudden explosive headache {onset} ago, at its worst within a minute; neck feels stiff."),
        Observations(temperature_c=(36.4, 37.3), heart_rate=(70, 96), systolic_bp=(136, 172), diastolic_bp=(80, 98),
                     respiratory_rate=(14, 18), spo2=(96, 100), pain_score=(8, 10)),
        fills={"onset": ("two hours", "an hour", "three hours"), "activity": ("at the gym", "lifting a box", "at work")},
        red_flags=(("Thunderclap headache reaching its peak within a minute", "possible subarachnoid haemorrhage"),),
        care=("CT head", "full blood count", "coagulation screen", "intravenous analgesia")),
    Presentation(
        "diabetic_ketoacidosis", 2, "test", "vomiting, deep breathing and a very high glucose with ketones", (16, 40),
        ("vomiting and tummy pain", "being sick and very thirsty"),
        ("Type 1 diabetes; vomiting since {onset}, very thirsty, passing lots of urine; missed insulin doses.",
         "Known type 1 diabetic, unwell for {onset} with vomiting and abdominal pain."),
        Observations(temperature_c=(36.4, 37.4), heart_rate=(104, 124), systolic_bp=(104, 126), diastolic_bp=(62, 78),
                     respiratory_rate=(24, 30), spo2=(97, 100), pain_score=(3, 6)),
        Survey(breathing="Deep sighing breaths; RR {rr}; ketotic breath."),
        fills={"onset": ("yesterday", "last night", "two days")},
        red_flags=(("Very high glucose with ketones and vomiting", "possible diabetic ketoacidosis"),),
        care=("blood gas", "urea and electrolytes", "intravenous fluids", "intravenous insulin infusion"),
        bedside={"capillary blood glucose": Bedside((22.0, 33.0)), "blood ketones": Bedside((3.5, 6.5))},
        tests=("capillary blood glucose", "blood ketones"),
        conditions=("type 1 diabetes",), medications=(("insulin", "basal-bolus regimen"),)),
    Presentation(
        "testicular_pain", 2, "test", "sudden severe testicular pain", (12, 25),
        ("sudden pain in the testicle", "severe pain in the scrotum"),
        ("Woke {onset} ago with sudden severe {side} testicular pain and vomited.",
         "Sudden {side} scrotal pain {onset} ago during sport, with nausea."),
        Observations(temperature_c=(36.4, 37.3), heart_rate=(76, 99), systolic_bp=(114, 138), diastolic_bp=(64, 84),
                     respiratory_rate=(14, 19), spo2=(97, 100), pain_score=(7, 9)),
        sex="male", fills={"onset": ("two hours", "three hours", "an hour"), "side": ("right", "left")},
        red_flags=(("Sudden testicular pain under six hours old", "possible testicular torsion"),),
        care=("scrotal ultrasound", "urology review", "intravenous analgesia")),
    # -- ESI 3 ---------------------------------------------------------------------------------------------------------
    Presentation(
        "right_iliac_fossa_pain", 3, "train", "abdominal pain settling in the right iliac fossa", (16, 46),
        ("tummy pain", "pain low on the right of the belly"),
        ("Pain began around the belly button {onset} ago and has moved to the lower right; off food, nauseated.",
         "Central abdominal pain since {onset} ago, now sharper low on the right; walking makes it worse."),
        Observations(temperature_c=(37.2, 38.2), heart_rate=(76, 99), systolic_bp=(112, 138), diastolic_bp=(64, 84),
                     respiratory_rate=(14, 19), spo2=(97, 100), pain_score=(4, 6)),
        Survey(exposure="Tender in the right iliac fossa."),
        fills={"onset": ("last night", "a day", "twelve hours")},
        red_flags=(("Pain migrating to the right iliac fossa with anorexia", "possible appendicitis"),),
        care=("full blood count", "C-reactive protein", "general surgical review"),
        care_choices=(("abdominal ultrasound", "CT abdomen and pelvis"),), extras=("urine dipstick",)),
    Presentation(
        "pyelonephritis", 3, "train", "loin pain and fever with urinary symptoms", (18, 62),
        ("pain in the back and a temperature", "burning urine and a sore back"),
        ("Burning urine for {onset}; since yesterday {side} loin pain, shivers and nausea.",
         "{side_cap} back pain with fever and frequency for {onset}."),
        Observations(temperature_c=(38.0, 38.8), heart_rate=(80, 99), systolic_bp=(112, 138), diastolic_bp=(64, 84),
                     respiratory_rate=(14, 19), spo2=(96, 100), pain_score=(3, 6)),
        sex="female", fills={"onset": ("three days", "two days", "four days"), "side": ("right", "left"),
                             "side_cap": ("Right", "Left")},
        care=("urine culture", "full blood count", "urea and electrolytes", "intravenous antibiotics"),
        extras=("urine dipstick", "urine pregnancy test"),
        bedside={"urine dipstick": Bedside(texts=("Leucocytes +++, nitrites positive, blood +.",
                                                   "Leucocytes ++, nitrites positive."))},
        tests=("urine dipstick",)),
    Presentation(
        "hip_after_fall", 3, "train", "a fall with hip pain and inability to bear weight", (70, 96),
        ("a fall and a painful hip", "can't stand after a fall"),
        ("Tripped at home {onset} ago and landed on the {side} hip; cannot bear weight; no head injury, did not "
         "black out.", "Slipped {onset} ago; {side} hip pain since and unable to walk."),
        Observations(temperature_c=(36.0, 37.0), heart_rate=(66, 96), systolic_bp=(118, 160), diastolic_bp=(64, 90),
                     respiratory_rate=(14, 19), spo2=(95, 99), pain_score=(4, 6)),
        Survey(exposure="{side_cap} leg shortened and externally rotated."),
        arrival=("ambulance",),
        fills={"onset": ("three hours", "an hour", "this morning"), "side": ("right", "left"),
               "side_cap": ("Right", "Left")},
        red_flags=(("Shortened, externally rotated leg after a fall", "possible hip fracture"),),
        care=("hip and pelvis X-ray", "full blood count", "urea and electrolytes", "orthopaedic review"),
        extras=("oral analgesia",)),
    Presentation(
        "gastroenteritis_dehydration", 3, "train", "vomiting and diarrhoea with poor fluid intake", (18, 64),
        ("vomiting and diarrhoea", "can't keep fluids down"),
        ("Vomiting and watery diarrhoea for {onset}; cannot keep water down; dizzy on standing.",
         "Sickness and diarrhoea since {onset}; others at home had the same."),
        Observations(temperature_c=(36.8, 37.9), heart_rate=(82, 99), systolic_bp=(104, 130), diastolic_bp=(60, 80),
                     respiratory_rate=(14, 19), spo2=(97, 100), pain_score=(2, 5)),
        Survey(circulation="Dry mucous membranes; capillary refill 2 seconds; pulse {hr}."),
        fills={"onset": ("two days", "a day", "three days")},
        care=("urea and electrolytes", "intravenous fluids", "intravenous antiemetic")),
    Presentation(
        "forearm_fracture_child", 3, "train", "a deformed forearm after a fall needing reduction", (8, 15),
        ("a painful, bent arm after a fall", "hurt arm falling off a bike"),
        ("Fell {mechanism} {onset} ago onto an outstretched hand; the {side} forearm looks bent.",
         "Landed on the {side} arm {mechanism} {onset} ago; obvious deformity."),
        Observations(temperature_c=(36.4, 37.2), heart_rate=(80, 99), systolic_bp=(100, 120), diastolic_bp=(58, 74),
                     respiratory_rate=(16, 20), spo2=(97, 100), pain_score=(4, 6)),
        Survey(exposure="Angulated {side} forearm; fingers pink with normal sensation."),
        arrival=("carried by parent", "brought by family"),
        fills={"mechanism": ("from a trampoline", "off a bike", "from a climbing frame"),
               "onset": ("an hour", "two hours", "45 minutes"), "side": ("right", "left")},
        care=("forearm X-ray", "fracture reduction under procedural sedation"), extras=("oral analgesia",),
        interventions=(("limb splint", "angulated forearm"),)),
    Presentation(
        "calf_swelling", 3, "test", "a swollen, painful calf", (25, 76),
        ("a swollen leg", "a painful swollen calf"),
        ("{side_cap} calf swollen and aching for {onset}; {risk}.",
         "Noticed the {side} calf getting tight and sore over {onset}; {risk}."),
        Observations(temperature_c=(36.4, 37.3), heart_rate=(70, 96), systolic_bp=(114, 142), diastolic_bp=(66, 88),
                     respiratory_rate=(14, 18), spo2=(96, 100), pain_score=(3, 5)),
        fills={"side": ("right", "left"), "side_cap": ("Right", "Left"), "onset": ("three days", "two days", "a week"),
               "risk": ("flew back from Australia last week", "had a knee operation a fortnight ago",
                        "has been laid up with a sprained ankle")},
        red_flags=(("Unilateral calf swelling after immobility", "possible deep vein thrombosis"),),
        care=("D-dimer", "leg vein ultrasound")),
    Presentation(
        "cellulitis", 3, "test", "spreading redness of the lower leg", (30, 82),
        ("a red, hot leg", "a painful red patch on the shin"),
        ("Redness spreading up the {side} shin for {onset} from a small cut; warm and sore.",
         "{side_cap} lower leg red, hot and swollen for {onset}; feels a bit feverish."),
        Observations(temperature_c=(37.4, 38.4), heart_rate=(76, 99), systolic_bp=(118, 150), diastolic_bp=(68, 90),
                     respiratory_rate=(14, 19), spo2=(96, 100), pain_score=(3, 6)),
        fills={"side": ("right", "left"), "side_cap": ("Right", "Left"), "onset": ("three days", "two days")},
        care=("full blood count", "C-reactive protein", "intravenous antibiotics")),
    # -- ESI 4 ---------------------------------------------------------------------------------------------------------
    Presentation(
        "ankle_injury", 4, "train", "an inversion injury of the ankle", (16, 60),
        ("a twisted ankle", "a painful ankle after going over on it"),
        ("Went over on the {side} ankle {activity} {onset} ago; could not take four steps afterwards.",
         "Inverted the {side} ankle {activity} {onset} ago; swollen and tender over the bone."),
        Observations(heart_rate=(64, 96), pain_score=(3, 6)),
        Survey(exposure="Swelling and bony tenderness at the {side} lateral malleolus."),
        fills={"side": ("right", "left"), "activity": ("playing football", "stepping off a kerb", "running for a bus"),
               "onset": ("two hours", "an hour", "this morning")},
        care=("ankle X-ray",), extras=("crutches", "ankle support", "oral analgesia")),
    Presentation(
        "laceration", 4, "train", "a laceration with bleeding controlled by pressure", (16, 70),
        ("a cut that bled a lot", "a deep cut"),
        ("Cut the {site} on {object} {onset} ago; it bled through a towel but has stopped with pressure.",
         "Arrived with a blood-soaked tea towel round the {site}: cut on {object} {onset} ago, now oozing only."),
        Observations(heart_rate=(80, 99), pain_score=(2, 5)),
        Survey(circulation="Warm; pulse {hr}; bleeding controlled with a dressing.",
               exposure="4 cm clean laceration of the {site}; fingers move normally."),
        fills={"site": ("palm", "forearm", "thumb"), "object": ("a kitchen knife", "broken glass", "a tin lid"),
               "onset": ("an hour", "40 minutes", "two hours")},
        care=("laceration repair",), extras=("tetanus immunisation", "simple wound check")),
    Presentation(
        "cystitis", 4, "train", "urinary burning and frequency without fever", (18, 50),
        ("burning when passing urine", "stinging urine"),
        ("{onset} of burning and frequency; no fever, no loin pain, no discharge.",
         "Stinging urine and going often for {onset_lower}; otherwise well."),
        sex="female", fills={"onset": ("Two days", "Three days"), "onset_lower": ("two days", "three days")},
        care=("urine culture",), extras=("urine dipstick", "urine pregnancy test", "oral antibiotics")),
    Presentation(
        "wrist_injury_child", 4, "train", "a painful wrist after a fall without deformity", (5, 12),
        ("a sore wrist after a fall", "hurt wrist in the playground"),
        ("Fell in the playground {onset} ago onto the {side} hand; wrist sore and swollen but straight.",
         "Tumbled {activity} {onset} ago; tender {side} wrist, no deformity."),
        Observations(heart_rate=(80, 110), respiratory_rate=(16, 22), systolic_bp=(96, 118), diastolic_bp=(56, 72),
                     pain_score=(2, 5)),
        Survey(exposure="Tender distal {side} radius; no deformity; fingers pink."),
        arrival=("carried by parent", "brought by family"),
        fills={"onset": ("an hour", "two hours"), "side": ("right", "left"),
               "activity": ("off a scooter", "at football")},
        care=("forearm X-ray",), extras=("oral analgesia",)),
    Presentation(
        "eye_foreign_body", 4, "test", "a metal fragment in the eye while grinding", (20, 60),
        ("something in the eye", "a gritty, watering eye"),
        ("Grinding metal without goggles {onset} ago; since then the {side} eye is gritty and watering.",
         "Felt something fly into the {side} eye while using a grinder {onset} ago."),
        Observations(pain_score=(2, 4)),
        fills={"onset": ("two hours", "this morning", "an hour"), "side": ("right", "left")},
        care=("corneal foreign body removal",), extras=("slit-lamp examination",)),
    Presentation(
        "chest_wall_pain", 4, "test", "sharp chest-wall pain after lifting that is reproduced by pressing",
        (20, 38), ("chest pain", "a sharp pain in the chest"),
        ("Moved furniture yesterday; since then a sharp pain in the {side} chest, worse on twisting and pressing; "
         "no breathlessness.", "Sharp {side} chest pain since lifting boxes {onset} ago; sore to touch."),
        Observations(heart_rate=(70, 96), pain_score=(3, 5)),
        Survey(exposure="Pain reproduced by pressing over the {side} costal cartilages."),
        fills={"side": ("right", "left"), "onset": ("a day", "two days")},
        care=("12-lead ECG",), extras=("oral analgesia",),
        bedside={"12-lead ECG": Bedside(texts=("Sinus rhythm, normal axis, no ST-segment or T-wave change.",))},
        tests=("12-lead ECG",)),
    # -- ESI 5 ---------------------------------------------------------------------------------------------------------
    Presentation(
        "sore_throat", 5, "train", "a sore throat without airway or swallowing problems", (16, 52),
        ("a sore throat", "a painful throat"),
        ("Sore throat for {onset}; swallowing fluids fine; no drooling or voice change.",
         "Scratchy, painful throat for {onset}; eating and drinking normally."),
        Observations(temperature_c=(36.6, 37.8), pain_score=(2, 4)),
        fills={"onset": ("three days", "two days", "four days")},
        care=("history and examination",), extras=("oral analgesia",)),
    Presentation(
        "repeat_prescription", 5, "train", "a request for a repeat prescription while well", (40, 82),
        ("run out of regular tablets", "needs more of a regular medicine"),
        ("{poss_cap} {drug} ran out {onset} ago and the surgery cannot see {obj} until next week; feels well.",
         "Needs a supply of {drug}; ran out {onset} ago; no symptoms."),
        Observations(pain_score=(0, 1)),
        fills={"onset": ("three days", "two days", "yesterday"), "drug": ("ramipril", "amlodipine")},
        care=("history and examination", "repeat prescription"),
        conditions=("hypertension",), medications=(("{drug}", "5 mg daily"),)),
    Presentation(
        "suture_removal", 5, "train", "sutures due for removal from a healed wound", (16, 70),
        ("stitches to come out", "a wound check and stitches out"),
        ("Stitches put in a {site} cut {onset} ago; the practice nurse is on leave; wound feels fine.",
         "Here to have {site} sutures removed, placed {onset} ago; no redness or discharge."),
        Observations(pain_score=(0, 1)),
        fills={"site": ("forearm", "shin", "scalp"), "onset": ("ten days", "a week", "twelve days")},
        care=("suture removal", "simple wound check")),
    Presentation(
        "local_sting", 5, "train", "a local reaction to a sting with no systemic features", (16, 66),
        ("a swollen sting", "an itchy swollen bite"),
        ("Stung on the {site} {onset} ago; red, itchy swelling around it; no breathing trouble or faintness.",
         "Bitten on the {site} in the garden {onset} ago; local swelling only."),
        Observations(pain_score=(1, 3)),
        fills={"site": ("forearm", "hand", "ankle"), "onset": ("this morning", "three hours", "last night")},
        care=("history and examination",), extras=("oral antihistamine",)),
    Presentation(
        "conjunctivitis", 5, "test", "sticky red eyes with normal vision", (16, 60),
        ("sticky red eyes", "an itchy, crusted eye"),
        ("Both eyes red and crusted in the mornings for {onset}; vision normal, no pain.",
         "Gritty, sticky {side} eye for {onset}; seeing normally."),
        Observations(pain_score=(0, 2)),
        fills={"onset": ("three days", "two days"), "side": ("right", "left")},
        care=("history and examination",), extras=("topical antibiotic",)),
    Presentation(
        "minor_burn", 5, "test", "a small superficial burn", (16, 70),
        ("a small burn", "burnt fingers"),
        ("Splashed with {agent} on the {site} {onset} ago; red and sore, no blisters; cooled under the tap.",
         "Small burn on the {site} from {agent} {onset} ago; skin red, intact."),
        Observations(pain_score=(2, 4)),
        fills={"agent": ("hot tea", "an oven tray", "boiling water"), "site": ("back of the hand", "forearm"),
               "onset": ("two hours", "an hour")},
        care=("simple wound check",), extras=("oral analgesia",)),
)

# Past medical history an adult may have (condition, medication, dose), drawn besides the presentation's own.
COMORBIDITIES: tuple[tuple[str, str, str], ...] = (
    ("hypertension", "ramipril", "5 mg daily"), ("hypertension", "amlodipine", "5 mg daily"),
    ("type 2 diabetes", "metformin", "1 g twice daily"), ("hypercholesterolaemia", "atorvastatin", "20 mg nightly"),
    ("hypothyroidism", "levothyroxine", "75 micrograms daily"), ("depression", "sertraline", "50 mg daily"),
    ("gastro-oesophageal reflux", "omeprazole", "20 mg daily"), ("atrial fibrillation", "apixaban", "5 mg twice daily"),
    ("asthma", "salbutamol", "100 micrograms as needed"), ("heart failure", "bisoprolol", "2.5 mg daily"),
)
ALLERGIES: tuple[tuple[str, str, str], ...] = (
    ("penicillin", "rash", "moderate"), ("amoxicillin", "hives", "moderate"), ("codeine", "vomiting", "mild"),
    ("co-trimoxazole", "rash", "mild"), ("ibuprofen", "wheeze", "severe"), ("morphine", "itching", "mild"),
    ("cefalexin", "rash", "moderate"),
)
