"""The Psychiatry tools: the patient's presentation, history, medications and allergies, investigations, prior
scores, observations, the mental state examination, Columbia-style suicide screening, risk to others, the PHQ-9 and
GAD-7 applied to the patient's recorded responses, substance-use screening, psychotropic side-effect profiles and a
prescribing safety check (READ); Hunter serotonin-toxicity criteria, lithium level interpretation and the clozapine
blood-count traffic light (THINK); investigations, prescriptions, withheld medications, safety plans, observation
levels, dispositions, referrals, diagnoses and notes (WRITE).

Tools refuse with ``KeyError`` / ``ValueError`` messages meant for the agent (unknown patient, test or drug). Every
WRITE tool appends to the database it was built with: the environment gives each episode its own copy.
"""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import Interval, MinLen

from clinical_gym.cases.schema import normalize
from clinical_gym.drugs import SEVERITY_RANK, Drug, reference
from clinical_gym.domains.lookups import PatientLookup, did_you_mean, formulary_drug
from clinical_gym.domains.psychiatry.data_model import (
    DiagnosisRecord,
    Disposition,
    DispositionRecord,
    DoseUnit,
    Frequency,
    Instrument,
    InvestigationOrder,
    LabResult,
    ObservationLevel,
    ObservationRecord,
    Patient,
    PrescriptionRecord,
    PsychiatryDB,
    ReferralRecord,
    Route,
    SafetyPlan,
    Service,
    TestDefinition,
    WithheldMedication,
    WrittenNote,
)
from clinical_gym.domains.records import result_view
from clinical_gym.tools import ToolKind, Toolkit, tool
from clinical_gym.tools.instruments.base import InstrumentResult
from clinical_gym.tools.instruments.psychiatry import audit_c, gad_7, phq_9

PatientId = Annotated[str, MinLen(1)]
Text = Annotated[str, MinLen(1)]
Items = Annotated[list[str], MinLen(1)]

HOSPITAL_SETTINGS = frozenset({"emergency department", "psychiatric ward", "general hospital ward"})
PHQ9_ITEMS = ("little interest or pleasure", "feeling down or hopeless", "sleep problems", "tired or little energy",
              "appetite change", "feeling a failure", "trouble concentrating", "slowed or restless",
              "thoughts of being better off dead or of self-harm")
GAD7_ITEMS = ("nervous, anxious or on edge", "unable to stop worrying", "worrying too much", "trouble relaxing",
              "so restless it is hard to sit still", "easily annoyed or irritable",
              "afraid something awful might happen")
CAGE_ITEMS = ("felt you should cut down", "annoyed by criticism of your drinking", "felt guilty about drinking",
              "eye-opener drink in the morning")
SCREEN_QUESTIONS = (
    ("wish_to_be_dead", "Have you wished you were dead or wished you could go to sleep and not wake up?"),
    ("active_thoughts", "Have you actually had any thoughts about killing yourself?"),
    ("method", "Have you thought about how you might do this?"),
    ("intent", "Have you had these thoughts and had some intention of acting on them?"),
    ("plan", "Have you started to work out or worked out the details of how to kill yourself, and do you intend to "
             "carry out this plan?"),
    ("behaviour_past_3_months", "Have you done anything, started to do anything, or prepared to do anything to end "
                                "your life (in the past 3 months)?"),
    ("behaviour_lifetime", "Have you ever done anything, started to do anything, or prepared to do anything to end "
                           "your life?"),
)
SCREEN_RESPONSES = {
    "high": "High risk: do not leave the patient alone; remove access to means; arrange same-day psychiatric "
            "assessment of the need for admission or intensive home treatment, using the Mental Health Act if "
            "admission is needed and refused; set an observation level if in hospital.",
    "moderate": "Moderate risk: same-day mental health review; collaborative safety plan with means restriction; "
                "consider intensive home treatment by the crisis team; involve family or friends with consent.",
    "low": "Low risk: collaborative safety plan, follow-up and crisis contacts; rescreen at every contact.",
    "none": "No suicidal ideation or behaviour reported: rescreen if circumstances change.",
}
DAST_BANDS = ((0, "no problems reported"), (2, "low level: monitor and reassess"),
              (5, "moderate level: further investigation and brief intervention"),
              (8, "substantial level: intensive assessment and specialist referral"),
              (10, "severe level: intensive assessment and specialist treatment"))
DISPOSITION_ACTIONS: dict[str, str] = {
    "discharge with GP follow-up": "discharged home; the GP is asked to review within a week",
    "outpatient psychiatry follow-up": "outpatient psychiatry appointment booked",
    "crisis resolution and home treatment team": "crisis team to visit at home within 24 hours",
    "informal psychiatric admission": "bed requested on the psychiatric ward; the patient agrees to admission",
    "Mental Health Act assessment": "approved mental health professional and two doctors requested to assess for "
                                    "detention",
    "medical admission": "medical team asked to admit",
    "emergency department transfer": "ambulance transfer to the emergency department requested",
}


def suicide_risk_level(patient: Patient) -> str:
    """The screening risk level of the patient's answers: high (intent, a plan, or behaviour in the past 3
    months), moderate (a method, or behaviour longer ago), low (a wish to be dead or thoughts without a method), or
    none."""
    s = patient.suicide_screen
    if s.intent or s.plan or s.behaviour_past_3_months:
        return "high"
    if s.method or s.behaviour_lifetime:
        return "moderate"
    if s.wish_to_be_dead or s.active_thoughts:
        return "low"
    return "none"


class PsychiatryTools(PatientLookup[Patient], Toolkit):
    """The domain's tools over one database (an episode's copy)."""

    patient_id_example = "MH001"
    find_drug = staticmethod(formulary_drug)

    def __init__(self, db: PsychiatryDB) -> None:
        self.db = db

    # -- helpers ---------------------------------------------------------------------------------------------------
    def find_test(self, name: str) -> TestDefinition:
        """The catalogue test ``name`` (or an alias) refers to; ValueError with close names otherwise."""
        index = self.db.test_index()
        definition = index.get(normalize(name))
        if definition is None:
            hint = did_you_mean(name, index, lambda c: index[c].name)
            raise ValueError(f"unknown investigation {name!r}.{hint} Available: {', '.join(self.db.tests)}.")
        return definition

    def results(self, patient: Patient) -> list[LabResult]:
        """The patient's results: the recorded ones, then those of investigations ordered this episode."""
        ordered = [r for o in self.db.orders if o.patient_id == patient.patient_id for r in o.results]
        return [*patient.labs, *ordered]

    def latest_value(self, patient: Patient, key: str) -> LabResult | None:
        """The latest numeric result with canonical lab key ``key`` (None if there is none)."""
        tests = self.db.tests
        found = [r for r in self.results(patient) if r.value is not None and tests[r.test].key == key]
        return found[-1] if found else None

    def _current_drugs(self, patient: Patient) -> list[str]:
        return [m.name for m in patient.medications] + [rx.drug for rx in self.db.prescriptions
                                                        if rx.patient_id == patient.patient_id]

    # -- READ: the patient -----------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def get_psychiatric_presentation(self, patient_id: PatientId) -> dict[str, Any]:
        """The patient's demographics, where they are being seen, why they were referred and the history of the
        presenting complaint.

        Args:
            patient_id: The patient's id, e.g. "MH001".
        """
        p = self._patient(patient_id)
        view: dict[str, Any] = {"patient_id": p.patient_id, "name": p.name, "age": p.age, "sex": p.sex,
                                "weight_kg": p.weight_kg}
        if p.sex == "female" and p.age <= 55:
            view["pregnant"] = "unknown" if p.pregnant is None else p.pregnant
            if p.gestation_weeks is not None:
                view["gestation_weeks"] = p.gestation_weeks
        view.update(setting=p.setting, referral=p.referral, history=p.history)
        return view

    @tool(kind=ToolKind.READ)
    def get_psychiatric_history(self, patient_id: PatientId) -> dict[str, Any]:
        """Past psychiatric history, medical history, family history, social history (living situation, work,
        relationships, forensic history) and previous clinic letters, then notes written this episode.

        Args:
            patient_id: The patient's id, e.g. "MH001".
        """
        p = self._patient(patient_id)
        written = [{"time": n.time, "author": "you", "text": n.text} for n in self.db.notes
                   if n.patient_id == p.patient_id]
        return {"psychiatric_history": p.psychiatric_history or ["none"],
                "medical_history": p.medical_history or ["none"], "family_history": p.family_history or ["none"],
                "social_history": p.social_history, "letters": [n.model_dump() for n in p.notes] + written}

    @tool(kind=ToolKind.READ)
    def get_medication_record(self, patient_id: PatientId) -> dict[str, Any]:
        """The patient's current medications and documented allergies (reaction and severity), with what was
        prescribed or withheld this episode.

        Args:
            patient_id: The patient's id, e.g. "MH001".
        """
        p = self._patient(patient_id)
        pid = p.patient_id
        return {"current": [m.model_dump(exclude_defaults=True) for m in p.medications] or ["none"],
                "allergies": [a.model_dump() for a in p.allergies] or "no known drug allergies",
                "prescribed_this_episode": [rx.model_dump(exclude={"patient_id"}) for rx in self.db.prescriptions
                                            if rx.patient_id == pid],
                "withheld_this_episode": [w.model_dump(exclude={"patient_id"}) for w in self.db.withheld
                                          if w.patient_id == pid]}

    @tool(kind=ToolKind.READ)
    def get_investigations(self, patient_id: PatientId, test: str | None = None) -> list[dict[str, Any]]:
        """The patient's results (blood tests, drug levels, urine tests, ECG, imaging) with units, reference ranges
        and flags; investigations ordered this episode appear once resulted.

        Args:
            patient_id: The patient's id, e.g. "MH001".
            test: Only results of this investigation, e.g. "Lithium level" (all results when omitted).
        """
        p = self._patient(patient_id)
        results = self.results(p)
        if test is not None:
            definition = self.find_test(test)
            wanted = {definition.name, *definition.components}
            results = [r for r in results if r.test in wanted]
            if not results:
                return [{"test": definition.name, "result": "no result available; order it to get one"}]
        return [result_view(r) for r in results]

    @tool(kind=ToolKind.READ)
    def get_prior_scores(self, patient_id: PatientId, instrument: Instrument | None = None) -> dict[str, Any]:
        """Rating scale and screening scores from earlier contacts, oldest first, with the change since the first.

        Args:
            patient_id: The patient's id, e.g. "MH001".
            instrument: Only this instrument: "PHQ-9", "GAD-7", "AUDIT-C", "CIWA-Ar", "C-SSRS screen", "MoCA",
                "YMRS" or "BMI" (all when omitted).
        """
        p = self._patient(patient_id)
        scores = [s for s in p.prior_scores if instrument is None or s.instrument == instrument]
        if not scores:
            return {"scores": [], "summary": "no earlier scores recorded"}
        trends = {}
        for name in dict.fromkeys(s.instrument for s in scores):
            series = [s.score for s in scores if s.instrument == name]
            if len(series) > 1:
                trends[name] = f"{series[0]:g} -> {series[-1]:g} ({series[-1] - series[0]:+g})"
        return {"scores": [s.model_dump(exclude_defaults=True) for s in scores], "change": trends}

    @tool(kind=ToolKind.READ)
    def get_physical_observations(self, patient_id: PatientId) -> dict[str, Any]:
        """The patient's observations, oldest first (temperature °C, heart rate, blood pressure, respiratory rate,
        SpO2 %, consciousness, weight and BMI, lying and standing blood pressure), the physical examination, and
        observed alcohol-withdrawal signs scored as CIWA-Ar items when recorded.

        Args:
            patient_id: The patient's id, e.g. "MH001".
        """
        p = self._patient(patient_id)
        view: dict[str, Any] = {"observations": [v.model_dump(exclude_defaults=True) for v in p.vitals],
                                "examination": p.physical_exam or "no abnormality recorded"}
        if p.withdrawal_signs is not None:
            view["withdrawal_signs_ciwa_items"] = p.withdrawal_signs
        return view

    @tool(kind=ToolKind.READ)
    def perform_mental_state_exam(self, patient_id: PatientId) -> dict[str, Any]:
        """Examine the patient's mental state: appearance and behaviour, speech, mood (subjective) and affect
        (objective), thought form and content, perception, cognition, and insight and judgement.

        Args:
            patient_id: The patient's id, e.g. "MH001".
        """
        return self._patient(patient_id).mental_state.model_dump()

    @tool(kind=ToolKind.READ)
    def screen_suicide_risk(self, patient_id: PatientId) -> dict[str, Any]:
        """Ask the patient the Columbia-style suicide screening questions (past month; behaviour in the past 3
        months and lifetime): the answers, the screening risk level (high, moderate, low, none) with the response
        it calls for, what the patient said, and the risk and protective factors on record.

        Args:
            patient_id: The patient's id, e.g. "MH001".
        """
        p = self._patient(patient_id)
        s = p.suicide_screen
        level = suicide_risk_level(p)
        answers = [{"question": q, "answer": "yes" if getattr(s, key) else "no"} for key, q in SCREEN_QUESTIONS]
        return {"answers": answers,
                "risk_level": level, "response": SCREEN_RESPONSES[level], "patient_said": s.details,
                "risk_factors": s.risk_factors or ["none recorded"],
                "protective_factors": s.protective_factors or ["none recorded"]}

    @tool(kind=ToolKind.READ)
    def assess_risk_to_others(self, patient_id: PatientId) -> dict[str, Any]:
        """Assess the risk the patient poses to others: command hallucinations, thoughts of harming others, access
        to weapons, history of violence, and safeguarding of children or dependants.

        Args:
            patient_id: The patient's id, e.g. "MH001".
        """
        p = self._patient(patient_id)
        r = p.risk_to_others
        concerns = [r.command_hallucinations != "none", r.thoughts_of_harming_others != "none", r.access_to_weapons,
                    r.violence_history != "none", r.safeguarding != "no dependants at risk"]
        level = "raised: plan for it now" if any(concerns[:3]) else ("some concerns: record and share" if any(concerns)
                                                                     else "no current concerns")
        return {**r.model_dump(), "assessment": level}

    @tool(kind=ToolKind.READ)
    def score_phq9_responses(self, patient_id: PatientId) -> dict[str, Any]:
        """Score the PHQ-9 the patient completed at this contact from their recorded item responses, with earlier
        PHQ-9 totals for comparison.

        Args:
            patient_id: The patient's id, e.g. "MH001".
        """
        p = self._patient(patient_id)
        if p.phq9_items is None:
            raise ValueError(f"{p.patient_id} has not completed a PHQ-9 at this contact")
        return _questionnaire(p, "PHQ-9", PHQ9_ITEMS, p.phq9_items, phq_9(list(p.phq9_items)))

    @tool(kind=ToolKind.READ)
    def score_gad7_responses(self, patient_id: PatientId) -> dict[str, Any]:
        """Score the GAD-7 the patient completed at this contact from their recorded item responses, with earlier
        GAD-7 totals for comparison.

        Args:
            patient_id: The patient's id, e.g. "MH001".
        """
        p = self._patient(patient_id)
        if p.gad7_items is None:
            raise ValueError(f"{p.patient_id} has not completed a GAD-7 at this contact")
        return _questionnaire(p, "GAD-7", GAD7_ITEMS, p.gad7_items, gad_7(list(p.gad7_items)))

    @tool(kind=ToolKind.READ)
    def screen_substance_use(self, patient_id: PatientId) -> dict[str, Any]:
        """Screen the patient's alcohol and drug use from their recorded answers: AUDIT-C (with the sex-specific
        threshold), CAGE, DAST-10, what they use and when they last used, and any history of withdrawal
        complications.

        Args:
            patient_id: The patient's id, e.g. "MH001".
        """
        p = self._patient(patient_id)
        s = p.substance_use
        view: dict[str, Any] = {"alcohol": s.alcohol, "drugs": s.drugs, "tobacco": s.tobacco}
        if s.audit_c is not None:
            result = audit_c(*s.audit_c, sex=p.sex)
            view["audit_c"] = {"score": result.score, "category": result.category,
                               "interpretation": result.interpretation}
        if s.cage is not None:
            yes = sum(s.cage)
            view["cage"] = {"yes_answers": [q for q, a in zip(CAGE_ITEMS, s.cage, strict=True) if a], "score": yes,
                            "interpretation": "2 or more: clinically significant alcohol problem likely" if yes >= 2
                            else "below the usual threshold of 2"}
        if s.dast_10 is not None:
            band = next(text for upto, text in DAST_BANDS if s.dast_10 <= upto)
            view["dast_10"] = {"score": s.dast_10, "interpretation": band}
        view.update(last_use=s.last_use or "not recorded", withdrawal_history=s.withdrawal_history)
        return view

    # -- READ: drug reference --------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def lookup_psychotropic_side_effects(self, drug: Text) -> dict[str, Any]:
        """A psychotropic's side-effect profile: class, common and serious adverse effects, monitoring, important
        interactions, toxicity, use in pregnancy, and its maximum adult daily dose and renal limit.

        Args:
            drug: Generic drug name, e.g. "lithium", "clozapine" or "sertraline".
        """
        d = self.find_drug(drug)
        profile = d.adverse_effects
        if profile is None:
            known = ", ".join(x.name for x in reference().drugs.values() if x.adverse_effects is not None)
            raise ValueError(f"no psychotropic profile for {d.name!r}; profiles: {known}")
        view: dict[str, Any] = {"drug": d.name, "drug_class": d.drug_class,
                                **profile.model_dump(exclude={"other_interactions"}, exclude_defaults=True),
                                "interactions": [*interaction_lines(d), *profile.other_interactions]}
        if d.pregnancy is not None:
            view["pregnancy"] = d.pregnancy.note or d.pregnancy.first_trimester
        return {**view, "max_daily_dose_mg": d.max_daily_mg, "avoid_if_egfr_below": d.avoid_below}

    @tool(kind=ToolKind.READ)
    def check_prescribing_safety(self, patient_id: PatientId, drug: Text) -> dict[str, Any]:
        """Check a drug for this patient before prescribing: allergy conflicts, interactions with current
        medications and this episode's prescriptions, pregnancy, renal function, QTc, age and relevant conditions.

        Args:
            patient_id: The patient's id, e.g. "MH001".
            drug: Generic drug name, e.g. "olanzapine".
        """
        p, d = self._patient(patient_id), self.find_drug(drug)
        conflicts = [{"allergen": a.substance, "reaction": a.reaction, "severity": a.severity,
                      "conflict": "same drug or group" if c == "same" else "cross-reactive group"}
                     for a in p.allergies if (c := reference().allergy_conflict(a.substance, d))]
        others = self._current_drugs(p)
        found = [{"with": i.drugs[1], "severity": i.severity, "effect": i.mechanism}
                 for i in reference().interactions_with(d, others)]
        cautions = self._cautions(p, d)
        problems = bool(conflicts or found or cautions)
        return {"drug": d.name, "checked_against": others or ["no current medications"],
                "allergy_conflicts": conflicts, "interactions": found, "cautions": cautions,
                "summary": "PROBLEMS FOUND: review before prescribing" if problems else "no problems found"}

    def _cautions(self, p: Patient, d: Drug) -> list[str]:
        cautions = []
        if d.pregnancy_contraindicated:
            if p.pregnant:
                cautions.append("contraindicated in pregnancy")
            elif p.sex == "female" and p.age <= 50 and p.pregnant is None:
                cautions.append("teratogenic: pregnancy status unknown; test for pregnancy before prescribing")
        egfr = self.latest_value(p, "egfr")
        if egfr is not None and d.avoid_egfr_below is not None and egfr.value < d.avoid_egfr_below:  # type: ignore[operator]
            cautions.append(f"avoid: eGFR {egfr.value:g} is below {d.avoid_egfr_below:g}")
        qtc = self.latest_value(p, "qtc")
        if qtc is not None and d.has("qt_prolonging") and qtc.value >= 450:  # type: ignore[operator]
            cautions.append(f"QT-prolonging drug with QTc {qtc.value:g} ms"
                            + (" (500 ms or more: avoid)" if qtc.value >= 500 else ""))  # type: ignore[operator]
        if p.age >= 65 and d.has("benzodiazepine", "z_drug", "anticholinergic"):
            cautions.append(f"age {p.age}: falls, confusion and sedation risk")
        conditions = [*p.psychiatric_history, *p.medical_history]
        rules = ((("antipsychotic",), ("dementia",), "antipsychotic in dementia: stroke and mortality risk"),
                 (("seizure_threshold",), ("epilepsy",), "lowers the seizure threshold in epilepsy"),
                 (("dopamine_antagonist",), ("parkinson",), "dopamine antagonist in Parkinson's disease"))
        for tags, terms, text in rules:
            if d.has(*tags) and any(t in normalize(c) for c in conditions for t in terms):
                cautions.append(text)
        return cautions

    # -- THINK -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.THINK)
    def apply_hunter_criteria(self, serotonergic_drug: bool, spontaneous_clonus: bool, inducible_clonus: bool,
                              ocular_clonus: bool, agitation: bool, diaphoresis: bool, tremor: bool,
                              hyperreflexia: bool, hypertonia: bool,
                              temperature_c: Annotated[float, Interval(ge=30, le=45)]) -> dict[str, Any]:
        """Apply the Hunter serotonin toxicity criteria: with a serotonergic drug taken, any one of spontaneous
        clonus; inducible clonus with agitation or diaphoresis; ocular clonus with agitation or diaphoresis; tremor
        with hyperreflexia; or hypertonia with temperature above 38 °C and ocular or inducible clonus.

        Args:
            serotonergic_drug: A serotonergic drug has been taken, e.g. true.
            spontaneous_clonus: Spontaneous clonus, e.g. false.
            inducible_clonus: Inducible (e.g. ankle) clonus, e.g. true.
            ocular_clonus: Ocular clonus, e.g. false.
            agitation: Agitation, e.g. true.
            diaphoresis: Diaphoresis (sweating), e.g. true.
            tremor: Tremor, e.g. true.
            hyperreflexia: Hyperreflexia, e.g. true.
            hypertonia: Hypertonia (rigidity), e.g. false.
            temperature_c: Temperature in °C, e.g. 38.4.
        """
        rules = {
            "spontaneous clonus": spontaneous_clonus,
            "inducible clonus with agitation or diaphoresis": inducible_clonus and (agitation or diaphoresis),
            "ocular clonus with agitation or diaphoresis": ocular_clonus and (agitation or diaphoresis),
            "tremor with hyperreflexia": tremor and hyperreflexia,
            "hypertonia, temperature above 38 °C and ocular or inducible clonus":
                hypertonia and temperature_c > 38 and (ocular_clonus or inducible_clonus),
        }
        met = [name for name, ok in rules.items() if ok] if serotonergic_drug else []
        if not serotonergic_drug:
            meaning = "Criteria not applicable: they require exposure to a serotonergic drug."
        elif met:
            meaning = ("Hunter criteria met: serotonin toxicity. Withhold every serotonergic drug, give supportive "
                       "care, and treat severe toxicity (hypertonia, temperature above 38.5 °C) as a medical "
                       "emergency.")
        else:
            meaning = "Hunter criteria not met: look for another cause (e.g. rigidity and fever without clonus)."
        return {"criteria_met": bool(met), "rules_satisfied": met, "interpretation": meaning}

    @tool(kind=ToolKind.THINK)
    def interpret_lithium_level(self, level_mmol_per_l: Annotated[float, Interval(ge=0, le=10)],
                                hours_since_last_dose: Annotated[float, Interval(ge=0, le=96)]) -> dict[str, Any]:
        """Interpret a serum lithium level against the usual target (0.4-1.0 mmol/L on a 12-hour post-dose sample)
        and the toxicity thresholds.

        Args:
            level_mmol_per_l: The serum lithium level in mmol/L, e.g. 0.7.
            hours_since_last_dose: Hours between the last dose and the sample, e.g. 12.
        """
        level = level_mmol_per_l
        if level < 0.4:
            band, meaning = "below range", "Below the usual therapeutic range: check adherence before any dose change."
        elif level <= 1.0:
            band, meaning = "therapeutic", ("Within the usual range (maintenance commonly 0.6-0.8 mmol/L; up to "
                                            "1.0 mmol/L for acute mania or relapse prevention when needed).")
        elif level <= 1.5:
            band, meaning = "above range", ("Above the usual range: side effects likely; look for toxicity, "
                                            "find the cause and reduce the dose.")
        elif level <= 2.5:
            band, meaning = "toxic", ("Toxic: withhold lithium, find and stop the cause, and arrange urgent medical "
                                      "assessment with fluids, renal function and repeat levels.")
        else:
            band, meaning = "severely toxic", ("Severe toxicity: a medical emergency; withhold lithium and discuss "
                                               "haemodialysis.")
        view: dict[str, Any] = {"level_mmol_per_l": level, "band": band, "interpretation": meaning}
        if not 10 <= hours_since_last_dose <= 14:
            view["timing"] = ("Not a 12-hour post-dose sample: levels drawn soon after a dose overstate the trough. "
                              "Repeat a correctly timed level (12 hours after the last dose) before adjusting the "
                              "dose, unless there are signs of toxicity.")
        view["note"] = "Toxicity can occur within the range, especially in older adults: judge with clinical features."
        return view

    @tool(kind=ToolKind.THINK)
    def classify_clozapine_blood_count(self, wbc: Annotated[float, Interval(ge=0, le=100)],
                                       neutrophils: Annotated[float, Interval(ge=0, le=100)],
                                       benign_ethnic_neutropenia: bool = False) -> dict[str, Any]:
        """Classify a blood count on clozapine by the monitoring traffic light (green, amber, red) and say what to
        do. Standard thresholds: green WBC >= 3.5 and neutrophils >= 2.0 (x10^9/L); red WBC < 3.0 or neutrophils
        < 1.5; amber in between (each 0.5 lower with benign ethnic neutropenia).

        Args:
            wbc: White cell count in x10^9/L, e.g. 4.2.
            neutrophils: Neutrophil count in x10^9/L, e.g. 2.1.
            benign_ethnic_neutropenia: Whether the patient has documented benign ethnic neutropenia, e.g. false.
        """
        shift = 0.5 if benign_ethnic_neutropenia else 0.0
        if wbc < 3.0 - shift or neutrophils < 1.5 - shift:
            colour, action = "red", ("Stop clozapine immediately; full blood count daily until recovery; look for "
                                     "infection (fever or sore throat means same-day medical review); seek "
                                     "haematology advice; no rechallenge without specialist agreement.")
        elif wbc < 3.5 - shift or neutrophils < 2.0 - shift:
            colour, action = "amber", ("Continue clozapine; repeat the full blood count twice weekly until back in "
                                       "the green range; ask about infection.")
        else:
            colour, action = "green", "Continue clozapine with routine monitoring."
        return {"result": colour, "wbc": wbc, "neutrophils": neutrophils, "action": action}

    # -- WRITE -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def order_investigation(self, patient_id: PatientId, test: Text) -> dict[str, Any]:
        """Order an investigation or panel (blood tests, drug levels, urine tests, ECG, imaging); results come back
        at once.

        Args:
            patient_id: The patient's id, e.g. "MH001".
            test: The investigation, e.g. "Lithium level", "Full blood count", "ECG" or "Urine drug screen".
        """
        p, definition = self._patient(patient_id), self.find_test(test)
        parts = [self.db.tests[c] for c in definition.components] or [definition]
        for part in parts:
            if part.sex is not None and part.sex != p.sex:
                raise ValueError(f"{part.name} does not apply to a {p.sex} patient")
        results = [p.pending_results.get(part.name) or LabResult(
            test=part.name, time=self.db.clock, value=part.normal_value, unit=part.unit, ref_low=part.ref_low,
            ref_high=part.ref_high, text=part.normal_text) for part in parts]
        order = InvestigationOrder(order_id=f"ORD-{len(self.db.orders) + 1:03d}", patient_id=p.patient_id,
                                   test=definition.name, results=results, time=self.db.clock)
        self.db.orders.append(order)
        return {"order_id": order.order_id, "results": [result_view(r) for r in results]}

    @tool(kind=ToolKind.WRITE)
    def write_prescription(self, patient_id: PatientId, drug: Text, dose: Annotated[float, Interval(gt=0)],
                           unit: DoseUnit, frequency: Frequency, route: Route, indication: str = "") -> dict[str, Any]:
        """Prescribe a medication; it is recorded as written, so check allergies, interactions and the dose first.

        Args:
            patient_id: The patient's id, e.g. "MH001".
            drug: Generic drug name, e.g. "sertraline".
            dose: The amount per dose, e.g. 50.
            unit: "mg", "mcg" or "g".
            frequency: "once" (a single dose), "daily", "nightly", "bid", "tid", "qid" or "weekly".
            route: "oral", "intramuscular", "intravenous", "sublingual", "buccal" or "transdermal".
            indication: What it is for, e.g. "moderate depressive symptoms".
        """
        p, d = self._patient(patient_id), self.find_drug(drug)
        rx = PrescriptionRecord(prescription_id=f"RX-{len(self.db.prescriptions) + 1:03d}", patient_id=p.patient_id,
                                drug=d.name, dose=dose, unit=unit, frequency=frequency, route=route,
                                indication=indication, time=self.db.clock)
        self.db.prescriptions.append(rx)
        return {"prescription_id": rx.prescription_id, "status": "prescribed",
                "prescription": rx.model_dump(exclude={"patient_id", "time"})}

    @tool(kind=ToolKind.WRITE)
    def withhold_medication(self, patient_id: PatientId, drug: Text, reason: Text) -> str:
        """Withhold (suspend) one of the patient's current medications from now on, e.g. for toxicity or a
        dangerous blood result.

        Args:
            patient_id: The patient's id, e.g. "MH001".
            drug: The medication, e.g. "lithium".
            reason: Why, e.g. "lithium level 2.3 mmol/L with coarse tremor and confusion".
        """
        p = self._patient(patient_id)
        wanted = _drug_key(drug)
        current = {_drug_key(name): name for name in self._current_drugs(p)}
        if wanted not in current:
            raise ValueError(f"{drug!r} is not a current medication of {p.patient_id}; current: "
                             f"{', '.join(current.values()) or 'none'}")
        name = _drug_key(current[wanted]) if reference().find(current[wanted]) else current[wanted]
        self.db.withheld.append(WithheldMedication(patient_id=p.patient_id, drug=name, reason=reason,
                                                   time=self.db.clock))
        return f"{name} withheld for {p.patient_id} from {self.db.clock}."

    @tool(kind=ToolKind.WRITE)
    def create_safety_plan(self, patient_id: PatientId, warning_signs: Items, coping_strategies: Items,
                           support_contacts: Items, professional_contacts: Items, means_restriction: Text) -> str:
        """Write a collaborative suicide safety plan with the patient: their warning signs, what they can do to
        cope, people to contact, professional and crisis contacts, and how access to means is reduced.

        Args:
            patient_id: The patient's id, e.g. "MH001".
            warning_signs: Thoughts, feelings or situations that signal a crisis, e.g. ["arguments at home"].
            coping_strategies: Things the patient can do alone, e.g. ["walk the dog", "call a friend"].
            support_contacts: People the patient can contact, e.g. ["sister (Anna)"].
            professional_contacts: Services to call, e.g. ["crisis line", "GP", "emergency department"].
            means_restriction: How access to means is reduced, e.g. "partner to keep medicines locked away".
        """
        p = self._patient(patient_id)
        self.db.safety_plans.append(SafetyPlan(
            patient_id=p.patient_id, warning_signs=warning_signs, coping_strategies=coping_strategies,
            support_contacts=support_contacts, professional_contacts=professional_contacts,
            means_restriction=means_restriction, time=self.db.clock))
        return f"Safety plan recorded for {p.patient_id}; a copy is given to the patient."

    @tool(kind=ToolKind.WRITE)
    def set_observation_level(self, patient_id: PatientId, level: ObservationLevel, reason: Text) -> str:
        """Set the nursing observation level of a patient in hospital: "general" (whereabouts known), "intermittent"
        (checks every 15-30 minutes), "within eyesight" or "arm's length" (enhanced, continuous observation).

        Args:
            patient_id: The patient's id, e.g. "MH001".
            level: "general", "intermittent", "within eyesight" or "arm's length".
            reason: Why, e.g. "acting on command hallucinations to jump from a height".
        """
        p = self._patient(patient_id)
        if p.setting not in HOSPITAL_SETTINGS:
            raise ValueError(f"{p.patient_id} is seen in the {p.setting}: observation levels apply in hospital")
        self.db.observation_levels.append(ObservationRecord(patient_id=p.patient_id, level=level, reason=reason,
                                                            time=self.db.clock))
        return f"Observation level for {p.patient_id} set to {level}."

    @tool(kind=ToolKind.WRITE)
    def arrange_disposition(self, patient_id: PatientId, disposition: Disposition, reason: Text) -> str:
        """Decide where the patient goes from this assessment; a later disposition replaces an earlier one.

        Args:
            patient_id: The patient's id, e.g. "MH001".
            disposition: "discharge with GP follow-up", "outpatient psychiatry follow-up", "crisis resolution and
                home treatment team", "informal psychiatric admission", "Mental Health Act assessment", "medical
                admission" or "emergency department transfer".
            reason: Why, in a sentence.
        """
        p = self._patient(patient_id)
        self.db.dispositions.append(DispositionRecord(patient_id=p.patient_id, disposition=disposition,
                                                      reason=reason, time=self.db.clock))
        return f"{disposition} for {p.patient_id}: {DISPOSITION_ACTIONS[disposition]}."

    @tool(kind=ToolKind.WRITE)
    def make_referral(self, patient_id: PatientId, service: Service, reason: Text) -> str:
        """Refer the patient to a service for ongoing care (in addition to the disposition).

        Args:
            patient_id: The patient's id, e.g. "MH001".
            service: "psychological therapies", "community mental health team", "early intervention in psychosis",
                "addiction services", "perinatal mental health", "eating disorder service", "memory clinic",
                "dialectical behaviour therapy programme" or "GP for physical health review".
            reason: Why, in a sentence.
        """
        p = self._patient(patient_id)
        self.db.referrals.append(ReferralRecord(patient_id=p.patient_id, service=service, reason=reason,
                                                time=self.db.clock))
        return f"Referral to {service} sent for {p.patient_id}."

    @tool(kind=ToolKind.WRITE)
    def record_psychiatric_diagnosis(self, patient_id: PatientId, diagnosis: Text, icd10: str = "") -> str:
        """Record a working diagnosis in the patient's record.

        Args:
            patient_id: The patient's id, e.g. "MH001".
            diagnosis: The diagnosis, e.g. "Moderate depressive episode".
            icd10: Its ICD-10 code if known, e.g. "F32.1".
        """
        p = self._patient(patient_id)
        self.db.diagnoses.append(DiagnosisRecord(patient_id=p.patient_id, diagnosis=diagnosis, icd10=icd10))
        return f"Diagnosis recorded for {p.patient_id}."

    @tool(kind=ToolKind.WRITE)
    def write_psychiatric_note(self, patient_id: PatientId, note: Text) -> str:
        """Write the assessment note: risk formulation, mental state, plan, prescriptions and follow-up.

        Args:
            patient_id: The patient's id, e.g. "MH001".
            note: The note text.
        """
        p = self._patient(patient_id)
        self.db.notes.append(WrittenNote(patient_id=p.patient_id, text=note, time=self.db.clock))
        return f"Note added to the record of {p.patient_id}."


def _questionnaire(p: Patient, instrument: str, labels: tuple[str, ...], items: list[int],
                   result: InstrumentResult) -> dict[str, Any]:
    """A scored questionnaire: the responses by item, the instrument's result, and earlier totals with the change."""
    view: dict[str, Any] = {"completed": p.questionnaire_date, "responses": dict(zip(labels, items, strict=True)),
                            **result.model_dump(exclude={"points"})}
    earlier = [s for s in p.prior_scores if s.instrument == instrument]
    if earlier:
        view["earlier"] = [{"date": s.date, "score": s.score} for s in earlier]
        view["change_since_last"] = result.score - earlier[-1].score
    return view


def interaction_lines(drug: Drug) -> list[str]:
    """The drug's interaction rules in words, most severe first: the other side (a class or a drug), the severity
    and the mechanism."""
    drugs = reference()
    lines = []
    for rule in sorted(drugs.rules_for(drug), key=lambda r: -SEVERITY_RANK[r.severity]):
        other = rule.between[1] if rule.between[0] in drug.tags else rule.between[0]
        label = drugs.classes[other].name if other in drugs.classes else other
        lines.append(f"{label}: {rule.severity}. {rule.mechanism}")
    return lines


def _drug_key(name: str) -> str:
    drug = reference().find(name)
    return drug.name if drug is not None else normalize(name)
