"""Words that mean the same thing to a patient: a light stemmer, the lay wordings of each symptom, events a record may
describe in other words, body sites, and the organ a "<organ> problems" question is about.

The rule-based patient uses it to find a recorded fact asked about in other words before it says no ("Have you been
incontinent?" finds "I wet myself during it"; "Did you bite your tongue?" finds "I bit the side of my tongue"), and
the fidelity benchmark uses it to ask about every recorded symptom and event in several lay wordings.

* ``stem`` reduces a word to a stem shared by its inflections and derived forms ("vomited" / "vomiting" -> "vomit",
  "incontinent" / "incontinence" -> "incontin", "threw" / "thrown" -> "throw").
* ``LAY_TERMS``: for every symptom of ``clinical_gym.cases.topics.SYMPTOMS``, wordings a doctor may use instead of
  its question name, each with the question form it fits (``lay_questions``); every one is recognised as that
  symptom by the topic patterns (a test checks it).
* ``EVENT_TERMS``: events and signs a record describes in many words ("incontinence": "wet myself", "lost control
  of my bladder", ...), matched by ``concepts`` on stemmed word sequences, with the questions that ask about each.
* ``names_site``: whether a statement says where (a body part or a side: "all over", "on the left").
* ``ORGANS``: the organ words of a past-history question ("any bowel problems?"), the symptoms that question also
  asks about, and the words a relevant fact would use.
"""

from __future__ import annotations

import re
from functools import lru_cache

# -- stems ------------------------------------------------------------------------------------------------------------

_IRREGULAR = {
    "threw": "throw", "thrown": "throw", "bit": "bite", "bitten": "bite", "ate": "eat", "eaten": "eat", "fell": "fall",
    "fallen": "fall", "felt": "feel", "lost": "lose", "woke": "wake", "woken": "wake", "went": "go", "gone": "go",
    "took": "take", "taken": "take", "came": "come", "gave": "give", "given": "give", "swam": "swim", "swum": "swim",
    "stung": "sting", "hit": "hit", "hurt": "hurt", "wet": "wet", "slept": "sleep", "drank": "drink", "drunk": "drink",
    "began": "begin", "begun": "begin", "broke": "break", "broken": "break", "knew": "know", "known": "know",
    "ran": "run", "saw": "see", "seen": "see", "bled": "bleed", "fed": "feed", "spat": "spit", "peed": "pee",
    "children": "child", "feet": "foot", "teeth": "tooth", "women": "woman", "men": "man",
    "faeces": "feces", "diarrhoea": "diarrhea", "haemorrhage": "hemorrhage", "oesophagus": "esophagus",
    "vomitting": "vomit", "wetting": "wet", "wetted": "wet", "afterwards": "afterward",
}
# Suffixes removed, longest first; a stem keeps at least three letters.
_SUFFIXES = ("ations", "ation", "ences", "ence", "ances", "ance", "ently", "iness", "ness", "ingly", "ings", "ing", "edly",
             "ies", "ied", "ent", "ant", "ful", "ous", "ive", "ed", "es", "ly", "al", "s")
_TO_Y = frozenset({"ies", "ied", "iness"})
_DOUBLE = re.compile(r"([bdfgklmnprt])\1$")
STEM_MIN = 3


def _strippable(word: str, suffix: str) -> bool:
    if suffix == "s":
        return not word.endswith(("ss", "us", "is"))
    if suffix == "ed":
        return not word.endswith("eed")  # "bleed", "need"
    return True


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A word's stem: irregular forms mapped, one common suffix removed, a doubled final consonant and a final 'e'
    dropped ("wetting" -> "wet", "bite" / "biting" -> "bit", "remembered" -> "remember")."""
    w = word.lower().replace("’", "'").strip("'")
    w = _IRREGULAR.get(w, w)
    for _ in range(2):  # "tiredness" -> "tired" -> "tir"
        suffix = next((x for x in _SUFFIXES if w.endswith(x) and len(w) - len(x) >= STEM_MIN and _strippable(w, x)), None)
        if suffix is None:
            break
        w = w[: -len(suffix)] + ("y" if suffix in _TO_Y else "")
    if _DOUBLE.search(w) and len(w) > STEM_MIN:
        w = w[:-1]
    if w.endswith("e") and len(w) > STEM_MIN:
        w = w[:-1]
    return _IRREGULAR.get(w, w)


# Words that carry no content in a question or a statement: stop words, pronouns and fillers ("Did you wet yourself
# during one?" / "I wet myself").
STOPWORDS = frozenset(
    "a an the and or but if of to in on at for with about from by as is are was were be been being do does did doing "
    "have has had having you your yours yourself yourselves i me my mine myself we our us it its itself this that these "
    "those any anything some something there here what when where which who whom how why can could would should will "
    "shall may might must please tell describe ever currently recently now still also just so then than very really "
    "he him his himself she her hers herself they them their themselves one ones during get got getting lot lots much "
    "many any way well okay ok yes no not don't didn't doesn't haven't hasn't isn't wasn't aren't weren't".split()
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SELF = frozenset({"myself", "yourself", "himself", "herself", "themselves", "ourselves", "yourselves", "itself"})
_POSSESSIVE = frozenset({"my", "your", "his", "her", "their", "our", "its"})


def words(text: str) -> list[str]:
    """Lower-case words of a text (apostrophes kept inside words: "didn't")."""
    return _WORD.findall(text.lower().replace("’", "'"))


def content_stems(text: str) -> tuple[str, ...]:
    """The stems of a text's content words, in order (stop words, pronouns and fillers left out)."""
    return tuple(stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1)


# -- events and signs a record describes in many words ------------------------------------------------------------------

# Phrases are matched on stemmed word sequences; "self" stands for myself/yourself/..., "poss" for my/your/his/...
EVENT_TERMS: dict[str, tuple[str, ...]] = {
    "incontinence": ("incontinent", "incontinence", "wet self", "wetting self", "wet the bed", "lose control of poss bladder",
                     "lost control of poss bladder", "lose control of poss bowels", "pee self", "peed self", "soil self",
                     "soiled self", "pass urine during"),
    "tongue_bite": ("bite poss tongue", "bit poss tongue", "bitten poss tongue", "tongue biting", "tongue bite", "bit the side of poss tongue",
                    "bitten tongue", "tongue was bitten", "tongue bitten"),
    "unconscious": ("unconscious", "unresponsive", "lose consciousness", "lost consciousness", "loss of consciousness", "pass out",
                    "passed out", "black out", "blacked out", "knocked out", "out cold", "come round", "came round", "came to"),
    "memory_gap": ("remember", "recall", "recollection", "no memory of", "mind went blank"),
    "fall": ("a fall", "fall over", "fell over", "fall down", "fell down", "fell off", "fell from", "fell to", "fell and",
             "have fallen", "had fallen", "tripped over", "tripped and", "slipped over", "slipped and", "slipped on"),
    "head_injury": ("hit poss head", "bang poss head", "banged poss head", "bump poss head", "bumped poss head", "head injury",
                    "injured poss head", "knock to the head", "blow to the head"),
    "injury": ("injury", "injured", "hurt self", "trauma", "accident", "twisted", "sprained"),
    "animal_contact": ("animal", "animals", "dog", "dogs", "cat", "cats", "kitten", "puppy", "pet", "pets", "farm", "livestock",
                       "cattle", "sheep", "goat", "bird", "birds", "parrot", "poultry", "chickens"),
    "bite_or_sting": ("tick", "ticks", "tick bite", "insect bite", "bitten by", "stung by", "mosquito", "mosquitoes"),
    "water_exposure": ("swim", "swimming", "swam", "lake", "river", "pond", "hot tub", "flood", "flooding", "fresh water"),
    "unusual_food": ("undercooked", "raw meat", "raw fish", "raw eggs", "raw milk", "takeaway", "barbecue", "buffet", "reheated",
                     "leftover", "unpasteurised", "unpasteurized", "seafood", "shellfish", "oysters", "street food", "ate out",
                     "eating out", "restaurant meal", "meal at a restaurant"),
    "needles": ("inject", "injecting", "needle", "needles", "tattoo", "tattoos", "piercing"),
}
# Events a fact tells by its symptom tags whatever its words: syncope is a transient loss of consciousness (ESC 2018
# syncope guideline, definitions), so a recorded faint ("I fainted in the queue", "went blank and slumped") answers
# "Were you unconscious?" and "Did you lose consciousness?" as it answers "Did you pass out?".
EVENT_SYMPTOMS: dict[str, frozenset[str]] = {"unconscious": frozenset({"syncope"})}
EVENT_QUESTIONS: dict[str, tuple[str, ...]] = {
    "incontinence": ("Have you been incontinent?", "Did you wet yourself?", "Did you lose control of your bladder?"),
    "tongue_bite": ("Did you bite your tongue?", "Was your tongue bitten?"),
    "unconscious": ("Did you lose consciousness?", "Were you unconscious at any point?"),
    "memory_gap": ("Do you remember the episode?", "Can you recall it afterwards?"),
    "fall": ("Did you fall?", "Have you had a fall?"),
    "head_injury": ("Did you hit your head?", "Have you had a head injury?"),
    "injury": ("Have you injured yourself?", "Have you had an accident or injury?"),
    "animal_contact": ("Have you been around any animals?", "Do you have any pets?"),
    "bite_or_sting": ("Have you been bitten or stung by anything?", "Any tick or insect bites?"),
    "water_exposure": ("Have you been swimming recently?", "Have you been in a lake or river?"),
    "unusual_food": ("Have you eaten anything unusual, raw or undercooked?", "Did you eat any takeaway or restaurant food?"),
    "needles": ("Have you ever injected anything?", "Do you have any tattoos or piercings?"),
}
assert set(EVENT_QUESTIONS) == set(EVENT_TERMS)


def _token(word: str) -> str:
    if word in _SELF:
        return "self"
    if word in _POSSESSIVE:
        return "poss"
    return stem(word)


_SCAN = re.compile(r"(?i)\b(?:cat|pet)(?:[- ]ct)?\s+scans?\b|\bpet[- ]ct\b")  # a CAT or PET scan is no animal


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_token(w) for w in words(_SCAN.sub(" scan ", text)))


@lru_cache(maxsize=1)
def _phrase_index() -> dict[str, list[tuple[tuple[str, ...], str]]]:
    index: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for concept, phrases in EVENT_TERMS.items():
        for phrase in phrases:
            tokens = _tokens(phrase)
            index.setdefault(tokens[0], []).append((tokens, concept))
    return index


@lru_cache(maxsize=65536)
def concepts(text: str) -> frozenset[str]:
    """The events of ``EVENT_TERMS`` a text names, in any of their wordings and inflections."""
    tokens = _tokens(text)
    index = _phrase_index()
    found = set()
    for i, token in enumerate(tokens):
        for phrase, concept in index.get(token, ()):
            if tokens[i:i + len(phrase)] == phrase:
                found.add(concept)
    return frozenset(found)


def fact_events(text: str, symptoms: tuple[str, ...] = ()) -> frozenset[str]:
    """The events a fact tells: those its words name (``concepts``) and those its symptom tags are
    (``EVENT_SYMPTOMS``)."""
    return concepts(text) | {event for event, tags in EVENT_SYMPTOMS.items() if tags.intersection(symptoms)}


def index_tokens(text: str) -> list[str]:
    """What retrieval compares: the content stems of a text and one token per event it names."""
    return [*content_stems(text), *(f"<{c}>" for c in sorted(concepts(text)))]


# -- lay wordings of each symptom ---------------------------------------------------------------------------------------

# (form, phrase): "any" -> "Have you had any {phrase}?", "been" -> "Have you been {phrase}?", "do" -> "Do you {phrase}?",
# "did" -> "Did you {phrase}?", "it" -> "Does it {phrase}?".
QUESTION_FORMS: dict[str, str] = {"any": "Have you had any {}?", "been": "Have you been {}?", "do": "Do you {}?",
                                  "did": "Did you {}?", "it": "Does it {}?"}
LAY_TERMS: dict[str, tuple[tuple[str, str], ...]] = {
    "fever": (("any", "high temperature"), ("been", "feverish"), ("been", "burning up")),
    "chills": (("any", "shivers"), ("been", "shivery"), ("any", "rigors")),
    "night_sweats": (("do", "sweat at night"), ("any", "drenching sweats"), ("any", "sweating at night")),
    "sweating": (("been", "sweaty"), ("been", "clammy"), ("do", "sweat a lot")),
    "fatigue": (("been", "exhausted"), ("been", "worn out"), ("any", "lack of energy")),
    "weight_loss": (("been", "losing weight"), ("did", "lose weight"), ("do", "find your clothes are loose")),
    "weight_gain": (("did", "put on weight"), ("been", "gaining weight"), ("do", "find your clothes are tight")),
    "appetite_loss": (("been", "off your food"), ("any", "loss of appetite"), ("did", "go off your food")),
    "headache": (("any", "pain in your head"), ("any", "sore head"), ("any", "migraines")),
    "dizziness": (("been", "lightheaded"), ("any", "spinning sensation"), ("been", "woozy")),
    "syncope": (("did", "pass out"), ("did", "black out"), ("did", "collapse")),
    "confusion": (("been", "muddled"), ("been", "disorientated"), ("any", "foggy thinking")),
    "seizure": (("any", "fits"), ("any", "convulsions"), ("did", "have a fit")),
    "focal_weakness": (("any", "weakness down one side"), ("do", "drop things"), ("any", "weak arm or leg")),
    "numbness": (("any", "pins and needles"), ("any", "tingling"), ("any", "loss of feeling")),
    "vision_changes": (("any", "blurred vision"), ("any", "double vision"), ("any", "trouble seeing")),
    "eye_pain": (("any", "sore eyes"), ("any", "red eyes"), ("any", "pain in your eyes")),
    "photophobia": (("any", "sensitivity to light"), ("do", "find light bothers you"), ("do", "avoid bright lights")),
    "hearing_loss": (("any", "ringing in your ears"), ("been", "going deaf"), ("any", "trouble with your hearing")),
    "ear_pain": (("any", "pain in your ear"), ("any", "earache"), ("any", "ear discharge")),
    "sore_throat": (("any", "scratchy throat"), ("been", "finding it painful to swallow"), ("any", "throat pain")),
    "nasal_congestion": (("any", "blocked nose"), ("any", "stuffy nose"), ("been", "sneezing")),
    "cough": (("been", "coughing"), ("any", "hacking cough"), ("do", "cough a lot")),
    "sputum": (("been", "bringing anything up"), ("been", "coughing up mucus"), ("any", "mucus")),
    "hemoptysis": (("any", "blood in your phlegm"), ("any", "bloody sputum"), ("did", "cough blood")),
    "shortness_of_breath": (("been", "breathless"), ("been", "out of breath"), ("any", "trouble breathing")),
    "wheezing": (("been", "wheezy"), ("any", "whistling breath"), ("any", "wheeze")),
    "chest_pain": (("any", "pain in your chest"), ("any", "tightness in your chest"), ("any", "chest discomfort")),
    "palpitations": (("do", "feel your heart racing"), ("any", "pounding heart"), ("any", "skipped beats")),
    "leg_swelling": (("any", "swollen legs"), ("any", "puffy ankles"), ("any", "swelling in your feet")),
    "orthopnea": (("do", "get breathless lying flat"), ("any", "trouble breathing when you lie flat"), ("do", "need extra pillows to breathe")),
    "calf_pain": (("any", "pain in your calf"), ("any", "calf tenderness"), ("any", "sore calf")),
    "abdominal_pain": (("any", "tummy ache"), ("any", "belly pain"), ("any", "stomach cramps")),
    "nausea": (("been", "feeling sick"), ("been", "queasy"), ("been", "nauseous")),
    "vomiting": (("been", "throwing up"), ("did", "throw up"), ("been", "sick")),
    "hematemesis": (("any", "blood in your vomit"), ("did", "throw up blood"), ("any", "coffee-ground vomit")),
    "diarrhea": (("any", "loose stools"), ("any", "watery stools"), ("any", "runny poo")),
    "constipation": (("been", "constipated"), ("any", "hard stools"), ("any", "straining")),
    "bowel_changes": (("any", "change in your bowel habit"), ("any", "problems with your stools"), ("any", "trouble with your bowels")),
    "blood_in_stool": (("any", "rectal bleeding"), ("any", "bleeding from your bottom"), ("any", "black tarry stools")),
    "heartburn": (("any", "indigestion"), ("any", "acid reflux"), ("any", "sour taste in your mouth")),
    "dysphagia": (("any", "trouble swallowing"), ("do", "feel food gets stuck"), ("do", "find it hard to swallow")),
    "bloating": (("been", "bloated"), ("been", "gassy"), ("any", "distension")),
    "jaundice": (("any", "yellowing of your skin"), ("do", "notice your eyes look yellow"), ("been", "jaundiced")),
    "dark_urine": (("any", "dark pee"), ("any", "tea-coloured urine"), ("any", "cola-coloured urine")),
    "pale_stool": (("any", "clay-coloured stools"), ("any", "light-coloured stools"), ("any", "pale poo")),
    "dysuria": (("any", "burning when you pee"), ("it", "sting when you pee"), ("it", "hurt to pee")),
    "urinary_frequency": (("been", "peeing more often"), ("do", "go to the toilet more often"), ("been", "passing urine often")),
    "urinary_urgency": (("do", "have to rush to the toilet"), ("do", "find you can't hold it"), ("any", "sudden urges to pee")),
    "hematuria": (("any", "blood in your pee"), ("any", "red urine"), ("any", "pink urine")),
    "flank_pain": (("any", "pain in your side"), ("any", "kidney pain"), ("any", "loin pain")),
    "urinary_retention": (("any", "trouble emptying your bladder"), ("any", "dribbling"), ("been", "unable to pee")),
    "urinary_symptoms": (("any", "trouble with your waterworks"), ("any", "problems with your bladder"), ("any", "urinary problems")),
    "vaginal_discharge": (("any", "discharge down below"), ("any", "unusual vaginal discharge"), ("any", "discharge from your vagina")),
    "vaginal_bleeding": (("any", "spotting"), ("any", "bleeding between periods"), ("any", "abnormal bleeding")),
    "penile_discharge": (("any", "discharge from your penis"), ("any", "drip from your penis"), ("any", "discharge from the penis")),
    "pelvic_pain": (("any", "pain low in your pelvis"), ("any", "lower belly pain"), ("any", "pain during sex")),
    "testicular_pain": (("any", "pain in your testicles"), ("any", "sore balls"), ("any", "scrotal pain")),
    "rash": (("any", "spots"), ("any", "hives"), ("any", "red patches on your skin")),
    "itching": (("been", "itchy"), ("any", "itchiness"), ("any", "pruritus")),
    "skin_lesion": (("any", "lumps"), ("any", "sores"), ("any", "blisters")),
    "bruising": (("do", "bruise easily"), ("any", "nosebleeds"), ("any", "bleeding gums")),
    "joint_pain": (("any", "painful joints"), ("any", "aching joints"), ("any", "sore joints")),
    "joint_swelling": (("any", "swollen joints"), ("any", "stiffness"), ("any", "puffy joints")),
    "back_pain": (("any", "backache"), ("any", "pain in your lower back"), ("any", "sore back")),
    "neck_stiffness": (("any", "neck stiffness"), ("do", "find it hard to bend your neck"), ("any", "pain bending your neck")),
    "muscle_pain": (("any", "body aches"), ("been", "aching all over"), ("any", "sore muscles")),
    "polyuria": (("been", "passing a lot of urine"), ("do", "get up at night to pee"), ("been", "passing more urine")),
    "polydipsia": (("been", "very thirsty"), ("any", "dry mouth"), ("been", "drinking lots of water")),
    "heat_intolerance": (("do", "find the heat bothers you"), ("do", "feel too hot"), ("do", "find you can't stand the heat")),
    "cold_intolerance": (("do", "feel the cold more"), ("been", "always cold"), ("been", "bothered by the cold")),
    "tremor": (("any", "shaky hands"), ("been", "trembling"), ("any", "shakes")),
    "anxiety": (("been", "anxious"), ("been", "on edge"), ("any", "panic attacks")),
    "low_mood": (("been", "feeling down"), ("been", "depressed"), ("been", "low in spirits")),
    "suicidal_thoughts": (("any", "thoughts of ending your life"), ("any", "thoughts of harming yourself"), ("do", "feel better off dead")),
    "sleep_problems": (("any", "insomnia"), ("any", "trouble getting to sleep"), ("been", "waking in the night")),
    "memory_problems": (("been", "forgetful"), ("do", "struggle to remember things"), ("any", "trouble with your memory")),
    "speech_difficulty": (("any", "slurred speech"), ("any", "trouble getting your words out"), ("any", "difficulty speaking")),
    "facial_droop": (("any", "drooping of your face"), ("did", "notice your face droop"), ("any", "lopsided smile")),
    "swollen_glands": (("any", "swollen lymph nodes"), ("any", "lumps in your neck"), ("any", "swollen nodes")),
    "neck_swelling": (("any", "swelling in your neck"), ("any", "goitre"), ("any", "lump in your throat")),
    "hair_loss": (("been", "losing your hair"), ("any", "thinning hair"), ("any", "hair falling out")),
    "dry_skin": (("any", "flaky skin"), ("been", "finding your skin dry"), ("any", "rough dry skin")),
    "hoarseness": (("been", "hoarse"), ("any", "change in your voice"), ("did", "lose your voice")),
    "toothache": (("any", "pain in your teeth"), ("any", "jaw pain"), ("any", "dental pain")),
    "facial_pain": (("any", "pain in your face"), ("any", "sinus pain"), ("any", "pressure behind your eyes")),
    "limb_pain": (("any", "arm pain"), ("any", "pain in your leg"), ("any", "aching legs")),
    "cold_extremities": (("any", "cold hands"), ("do", "find your fingers go white"), ("any", "cold feet")),
    "breast_symptoms": (("any", "breast lumps"), ("any", "nipple discharge"), ("any", "breast pain")),
    "limp": (("been", "limping"), ("did", "have trouble putting weight on your leg"), ("any", "trouble walking")),
}


def lay_questions(symptom: str) -> list[str]:
    """Yes/no questions about a symptom in its lay wordings ("Have you been breathless?", "Did you pass out?")."""
    return [QUESTION_FORMS[form].format(phrase) for form, phrase in LAY_TERMS[symptom]]


# -- where: body sites ---------------------------------------------------------------------------------------------------

_SITE = re.compile(
    r"(?i)\b(?:head|forehead|temples?|face|cheeks?|jaw|eyes?|ears?|nose|mouth|tongue|teeth|tooth|gums?|throat|neck|shoulders?|"
    r"arms?|elbows?|wrists?|hands?|fingers?|thumbs?|chest|breast(?:bone)?|sternum|ribs?|back|spine|side|flanks?|loins?|abdomen|"
    r"belly|stomach|tummy|navel|belly ?button|umbilic\w*|groin|pelvis|hips?|buttocks?|bottom|legs?|thighs?|knees?|calf|calves|"
    r"shins?|ankles?|feet|foot|heels?|toes?|testicles?|scrotum|penis|vagina|rectum|anus|joints?|muscles?|skin|all over|everywhere|"
    r"left|right|upper|lower|middle|centre|center|quadrant|epigastri\w*|periumbilical|substernal|retrosternal|behind my \w+|"
    r"(?:head|back|tooth|ear|belly|stomach|tummy)[- ]?aches?|sides|one[- ]sided|low down|high up|down below)\b"
)


# Where a pain is, as its own name says (the patient's answer to "where is it?" when no fact says more).
PAIN_SITES: dict[str, str] = {
    "headache": "in my head", "eye_pain": "in my eye", "ear_pain": "in my ear", "sore_throat": "in my throat",
    "chest_pain": "in my chest", "calf_pain": "in my calf", "abdominal_pain": "in my stomach", "flank_pain": "in my side, by my back",
    "pelvic_pain": "low down in my pelvis", "testicular_pain": "in my testicles", "joint_pain": "in my joints",
    "back_pain": "in my back", "muscle_pain": "in my muscles", "toothache": "in my teeth", "facial_pain": "in my face",
    "limb_pain": "in my arm or leg", "neck_stiffness": "in my neck", "dysuria": "down below when I pass urine",
}


def names_site(text: str) -> bool:
    """Whether a statement says where something is (a body part, a side, "all over")."""
    return bool(_SITE.search(text))


# -- organs of a past-history question ------------------------------------------------------------------------------------

class Organ:
    """One organ a "<organ> problems" question may name: how the patient names it, the symptoms the question also
    asks about, and stems a relevant fact would hold."""

    __slots__ = ("noun", "symptoms", "stems")

    def __init__(self, noun: str, symptoms: tuple[str, ...], related: str) -> None:
        self.noun, self.symptoms = noun, symptoms
        self.stems = frozenset(stem(w) for w in related.split())


ORGANS: dict[str, Organ] = {
    "heart": Organ("heart", (), "heart cardiac angina attack infarction murmur pacemaker valve arrhythmia fibrillation stent bypass "
                                "failure cardiomyopathy palpitations"),
    "lung": Organ("lungs", ("cough", "shortness_of_breath"), "lung lungs asthma copd emphysema bronchitis pneumonia tuberculosis inhaler "
                                                              "fibrosis"),
    "chest": Organ("chest", ("chest_pain", "cough"), "chest lung asthma copd bronchitis pneumonia inhaler"),
    "breathing": Organ("breathing", ("shortness_of_breath", "wheezing"), "breathing breath asthma copd inhaler lung wheeze"),
    "kidney": Organ("kidneys", ("flank_pain",), "kidney kidneys renal dialysis stones nephritis"),
    "liver": Organ("liver", ("jaundice",), "liver hepatitis cirrhosis fatty jaundice"),
    "thyroid": Organ("thyroid", (), "thyroid thyroxine levothyroxine goitre goiter overactive underactive"),
    "stomach": Organ("stomach", ("abdominal_pain", "heartburn"), "stomach ulcer gastritis reflux indigestion heartburn"),
    "bowel": Organ("bowels", ("bowel_changes",), "bowel bowels colon colitis crohn diverticular haemorrhoids hemorrhoids stool stools "
                                                  "constipation diarrhoea diarrhea polyps"),
    "bladder": Organ("bladder", ("urinary_symptoms",), "bladder urine urinary cystitis incontinence waterworks"),
    "waterworks": Organ("waterworks", ("urinary_symptoms",), "bladder urine urinary cystitis incontinence waterworks prostate"),
    "prostate": Organ("prostate", ("urinary_retention",), "prostate"),
    "skin": Organ("skin", ("rash",), "skin eczema psoriasis dermatitis acne rash"),
    "joint": Organ("joints", ("joint_pain",), "joint joints arthritis gout"),
    "back": Organ("back", ("back_pain",), "back spine disc sciatica"),
    "blood pressure": Organ("blood pressure", (), "pressure hypertension"),
    "sugar": Organ("blood sugar", (), "sugar diabetes diabetic insulin glucose"),
    "mental health": Organ("mental health", ("low_mood", "anxiety"), "mental depression depressed anxiety psychiatric bipolar"),
    "psychiatric": Organ("mental health", ("low_mood", "anxiety"), "mental depression depressed anxiety psychiatric bipolar"),
    "blood": Organ("blood", (), "blood anaemia anemia clot clots clotting bleeding transfusion"),
    "nerve": Organ("nerves", ("numbness",), "nerve nerves neuropathy sciatica"),
}
_ORGAN_QUESTION = re.compile(r"(?i)\b(" + "|".join(sorted(map(re.escape, ORGANS), key=len, reverse=True)) +
                             r")\s+(?:problems?|troubles?|conditions?|diseases?|issues?)\b")


def organs_asked(question: str) -> tuple[str, ...]:
    """The organs a question asks "<organ> problems" about ("Any bowel problems?" -> ("bowel",))."""
    return tuple(dict.fromkeys(m.group(1).lower() for m in _ORGAN_QUESTION.finditer(question.replace("’", "'"))))


def about_organ(text: str, organ: str) -> bool:
    """Whether a statement is about an organ (shares a stem with its related words)."""
    return bool(set(content_stems(text)) & ORGANS[organ].stems)
