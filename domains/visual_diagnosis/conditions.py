"""What each VisualDiagnosis task can show: the finding (an ECG rhythm, a CTG pattern, a spirometry or hearing
pattern), the answer a reader gives, the confusable alternatives offered beside it, the emergency pathway when the
finding needs one, and the critical-finding kind the safety taxonomy names when it is missed."""

from __future__ import annotations

from dataclasses import dataclass

from clinical_gym.imaging import audiogram, ctg, ecg_rhythms, spirometry

CTG_OPTIONS = {
    "Category I": "Category I (normal): continue routine review",
    "Category II": "Category II (indeterminate): evaluate, correct reversible causes and keep monitoring",
    "Category III": "Category III (abnormal): intrauterine resuscitation and expedited delivery",
}
CTG_TERMS = ("category iii", "category 3", "obstetric emergency", "expedite delivery", "expedited delivery",
             "immediate delivery", "emergency caesarean")
STEMI_TERMS = ("stemi", "st elevation myocardial infarction", "st elevation mi", "cath lab", "primary pci",
               "reperfusion")
ECG_EXTRA = {
    "pericarditis": "Acute pericarditis",
    "early_repolarisation": "Benign early repolarisation",
    "mobitz_ii": "Second-degree AV block (Mobitz II)",
    "svt_aberrancy": "Supraventricular tachycardia with aberrant conduction",
    "lvh": "Left ventricular hypertrophy with strain",
    "sinus_arrhythmia": "Sinus arrhythmia",
    "mat": "Multifocal atrial tachycardia",
}
ECG_CONFUSABLE: dict[str, tuple[str, ...]] = {
    "normal_sinus_rhythm": ("sinus_bradycardia", "sinus_tachycardia", "first_degree_av_block", "sinus_arrhythmia",
                            "early_repolarisation"),
    "sinus_tachycardia": ("normal_sinus_rhythm", "atrial_flutter", "atrial_fibrillation", "svt_aberrancy", "mat"),
    "sinus_bradycardia": ("normal_sinus_rhythm", "complete_heart_block", "first_degree_av_block", "mobitz_ii"),
    "atrial_fibrillation": ("atrial_flutter", "mat", "sinus_arrhythmia", "normal_sinus_rhythm"),
    "atrial_flutter": ("atrial_fibrillation", "sinus_tachycardia", "svt_aberrancy", "mat"),
    "first_degree_av_block": ("normal_sinus_rhythm", "mobitz_ii", "complete_heart_block", "sinus_bradycardia"),
    "complete_heart_block": ("first_degree_av_block", "mobitz_ii", "sinus_bradycardia", "ventricular_tachycardia"),
    "left_bundle_branch_block": ("right_bundle_branch_block", "ventricular_tachycardia", "wolff_parkinson_white",
                                 "lvh"),
    "right_bundle_branch_block": ("left_bundle_branch_block", "wolff_parkinson_white", "normal_sinus_rhythm",
                                  "early_repolarisation"),
    "inferior_stemi": ("anterior_stemi", "pericarditis", "early_repolarisation", "normal_sinus_rhythm"),
    "anterior_stemi": ("inferior_stemi", "pericarditis", "hyperkalaemia", "early_repolarisation"),
    "hyperkalaemia": ("anterior_stemi", "long_qt", "early_repolarisation", "left_bundle_branch_block"),
    "long_qt": ("normal_sinus_rhythm", "hyperkalaemia", "sinus_bradycardia", "first_degree_av_block"),
    "ventricular_tachycardia": ("svt_aberrancy", "left_bundle_branch_block", "atrial_flutter", "sinus_tachycardia"),
    "wolff_parkinson_white": ("left_bundle_branch_block", "right_bundle_branch_block", "normal_sinus_rhythm",
                              "first_degree_av_block"),
}
SPIROMETRY_EXTRA = ("Mixed obstructive and restrictive pattern",)
HEARING_EXTRA = ("Sudden sensorineural hearing loss", "Mixed hearing loss")


@dataclass(frozen=True)
class Condition:
    """One thing a task can show. ``kind`` is the study kind; ``finding`` the key in its imaging module;
    ``pathway`` the escalation it needs (an emergency when ``emergency``); ``critical`` the safety kind of a miss
    with the ``terms`` that recognise it."""

    key: str
    kind: str
    finding: str
    answer: str
    alternatives: tuple[str, ...]
    criteria: str
    source: str
    pathway: str | None = None
    emergency: bool = False
    critical: str | None = None
    terms: tuple[str, ...] = ()


def _ecg(key: str) -> Condition:
    spec = ecg_rhythms.RHYTHMS[key]
    names = {**{k: r.name for k, r in ecg_rhythms.RHYTHMS.items()}, **ECG_EXTRA}
    pathway = {"stemi": "cath lab activation (primary PCI)", "hyperkalaemia": "emergency hyperkalaemia treatment"}
    arrhythmia = {"complete_heart_block": "emergency cardiology review (pacing)",
                  "ventricular_tachycardia": "resuscitation team"}
    terms = STEMI_TERMS if spec.critical == "stemi" else spec.terms
    return Condition(f"ecg:{key}", "ecg_12_lead", key, spec.name, tuple(names[a] for a in ECG_CONFUSABLE[key]),
                     spec.criteria, spec.source, pathway.get(spec.critical or "") or arrhythmia.get(key),
                     spec.emergency, spec.critical, terms)


def _ctg(key: str) -> Condition:
    scenario = ctg.SCENARIOS[key]
    answer = CTG_OPTIONS[scenario.category]
    emergency = scenario.category == "Category III"
    return Condition(f"ctg:{key}", "ctg", key, answer, tuple(v for k, v in CTG_OPTIONS.items() if v != answer),
                     f"{scenario.category}: {scenario.description}.",
                     "NICHD three-tier system (Macones et al. 2008; ACOG Practice Bulletin 106)",
                     "obstetric emergency team" if emergency else None, emergency,
                     "category_iii_tracing" if emergency else None, CTG_TERMS if emergency else ())


def _spirometry(key: str) -> Condition:
    pattern = spirometry.PATTERNS[key]
    others = tuple(p.name for k, p in spirometry.PATTERNS.items() if k != key) + SPIROMETRY_EXTRA
    return Condition(f"spirometry:{key}", "spirometry", key, pattern.name, others, pattern.criteria,
                     "GOLD 2024; ATS/ERS interpretive strategies; NHANES III predicted values",
                     "urgent specialist referral" if key == "upper_airway" else None)


def _hearing(key: str) -> Condition:
    pattern = audiogram.PATTERNS[key]
    others = tuple(p.name for k, p in audiogram.PATTERNS.items() if k != key) + HEARING_EXTRA
    return Condition(f"audiogram:{key}", "audiogram", key, pattern.name, others, pattern.criteria,
                     "WHO World Report on Hearing 2021; NICE NG98; ASHA audiometric symbols")


CONDITIONS: tuple[Condition, ...] = (
    *(_ecg(k) for k in ecg_rhythms.RHYTHMS), *(_ctg(k) for k in ctg.SCENARIOS),
    *(_spirometry(k) for k in spirometry.PATTERNS), *(_hearing(k) for k in audiogram.PATTERNS))
BY_KEY = {c.key: c for c in CONDITIONS}
