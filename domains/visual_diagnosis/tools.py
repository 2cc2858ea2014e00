"""The VisualDiagnosis tools: the study and the patient (READ: the clinical context, the study again, the
machine's measurements, the prior study, a single-lead rhythm strip cut from an ECG, reference criteria, the test
list); calculators (THINK: QTc, rate, frontal axis, 4th UDMI STEMI criteria, the NICHD CTG category, spirometry
and hearing assessment); actions (WRITE: record the interpretation, escalate care, order a test).

Tools that show an image append the study to ``shown``; the environment attaches those images to the step's
observation (image mode) or the tools put the reader's description in their result (``image_mode="describe"``).
Refusals are ``KeyError`` / ``ValueError`` messages for the agent.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from annotated_types import Interval, MinLen

from clinical_gym.cases.schema import normalize
from clinical_gym.domains.lookups import PatientLookup, did_you_mean
from clinical_gym.domains.obstetrics.calculations import DecelerationPattern, fetal_heart_category
from clinical_gym.domains.records import Order, result_view
from clinical_gym.domains.visual_diagnosis import studies
from clinical_gym.domains.visual_diagnosis.conditions import CONDITIONS
from clinical_gym.domains.visual_diagnosis.data_model import (
    Escalation,
    Interpretation,
    Pathway,
    Patient,
    Study,
    VisualDiagnosisDB,
)
from clinical_gym.imaging import audiogram, ecg_rhythms, spirometry
from clinical_gym.imaging.ecg_signal import LEADS
from clinical_gym.tools import ToolKind, Toolkit, tool

Text = Annotated[str, MinLen(1)]
Id = Annotated[str, MinLen(1)]
Lead = Literal["I", "II", "III", "aVR", "aVL", "aVF", "V1", "V2", "V3", "V4", "V5", "V6"]
ImageMode = Literal["image", "describe"]
TESTS = ("serum potassium", "serum magnesium", "troponin", "full blood count", "renal function",
         "thyroid function", "MRI internal auditory meatus", "lung volumes", "chest x-ray")
TOPICS = tuple(sorted({c.key for c in CONDITIONS}))
Topic = Literal[TOPICS]  # type: ignore[valid-type]
PATHWAY_RESPONSES = {
    "cath lab activation (primary PCI)": "interventional cardiology team activated; cath lab ready in 20 minutes",
    "resuscitation team": "resuscitation team attending now with the defibrillator",
    "emergency cardiology review (pacing)": "cardiology registrar attending now; transcutaneous pacing set up",
    "emergency hyperkalaemia treatment": "intravenous calcium gluconate, insulin-glucose and cardiac monitoring "
                                         "started by the acute team",
    "obstetric emergency team": "senior obstetrician, anaesthetist and midwife in charge coming to the bedside",
    "urgent specialist referral": "urgent referral sent; the specialist clinic will see the patient within 2 weeks",
}
HEARING_FREQUENCIES = audiogram.FREQUENCIES


class VisualDiagnosisTools(PatientLookup[Patient], Toolkit):
    """The domain's tools over one database (an episode's copy); ``image_mode`` decides how images are shown."""

    patient_id_example = "VD000001"

    def __init__(self, db: VisualDiagnosisDB, image_mode: ImageMode = "image") -> None:
        self.db = db
        self.image_mode = image_mode
        self.shown: list[Study] = []

    # -- helpers -------------------------------------------------------------------------------------------------
    def _study(self, study_id: str) -> Study:
        study = self.db.studies.get(study_id.strip())
        if study is None:
            raise KeyError(f"study {study_id!r} not found; study ids look like 'ECG-0-12'. "
                           "get_clinical_context lists a patient's studies.")
        return study

    def _show(self, study: Study) -> dict[str, Any]:
        """The study as a tool result: the image is attached (image mode) or described (describe mode)."""
        patient = self.db.patients[study.patient_id]
        seen = {"study_id": study.study_id, "patient_id": patient.patient_id, "kind": study.title,
                "acquired": study.acquired, "setting": study.setting, **_recording(study)}
        if self.image_mode == "describe":
            seen["description"] = studies.describe(study)
        else:
            self.shown.append(study)
            seen["image"] = "attached below"
        return seen

    def find_test(self, name: str) -> str:
        index = {normalize(t): t for t in TESTS}
        found = index.get(normalize(name))
        if found is None:
            raise ValueError(f"unknown test {name!r}.{did_you_mean(name, index, index.__getitem__)} "
                             "Use list_tests to see what can be ordered.")
        return found

    # -- READ ------------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def get_clinical_context(self, patient_id: Id) -> dict[str, Any]:
        """Why the study was done and the patient's record: age, sex, presentation, history, medicines, allergies,
        vital signs, available results and the patient's studies (oldest first).

        Args:
            patient_id: The patient's id, e.g. "VD000001".
        """
        p = self._patient(patient_id)
        context: dict[str, Any] = {
            "patient_id": p.patient_id, "age": p.age, "sex": p.sex, "presentation": p.presentation,
            "history": p.history or "none recorded",
            "medications": [m.model_dump() for m in p.medications] or "none",
            "allergies": [a.model_dump() for a in p.allergies] or "no known drug allergies",
            "vital_signs": p.vitals.model_dump() if p.vitals else "not recorded",
            "results": [result_view(r) for r in p.results] or "none yet",
            "studies": [{"study_id": s, "kind": self.db.studies[s].title, "acquired": self.db.studies[s].acquired}
                        for s in p.studies]}
        if p.pregnant:
            context["pregnancy"] = f"{p.gestation_weeks} weeks"
        return context

    @tool(kind=ToolKind.READ)
    def get_study(self, study_id: Id) -> dict[str, Any]:
        """Show a study again: how it was recorded (paper speed, gain) and its image.

        Args:
            study_id: The study's id, e.g. "ECG-0-12".
        """
        return self._show(self._study(study_id))

    @tool(kind=ToolKind.READ)
    def get_measurements(self, study_id: Id) -> dict[str, Any]:
        """The measurements the machine prints with a study (no interpretation): ECG rate, PR, QRS, QT, QTc and
        axis; CTG baseline, variability amplitude, counts of accelerations, decelerations and contractions;
        spirometry FEV1, FVC, ratio, PEF and % predicted; audiometric thresholds by frequency.

        Args:
            study_id: The study's id, e.g. "ECG-0-12".
        """
        study = self._study(study_id)
        return {"study_id": study.study_id, "kind": study.title, **studies.measurements(study)}

    @tool(kind=ToolKind.READ)
    def get_prior_study(self, patient_id: Id) -> dict[str, Any] | str:
        """The patient's most recent earlier study of the same kind as the current one (image and measurements),
        for comparison.

        Args:
            patient_id: The patient's id, e.g. "VD000001".
        """
        p = self._patient(patient_id)
        priors = [self.db.studies[s] for s in p.studies if self.db.studies[s].prior_of is not None]
        if not priors:
            return f"No earlier study on record for {p.patient_id}."
        prior = priors[-1]
        return {**self._show(prior), "measurements": studies.measurements(prior)}

    @tool(kind=ToolKind.READ)
    def get_rhythm_strip(self, study_id: Id, lead: Lead) -> dict[str, Any]:
        """A 10-second strip of one lead of an ECG, drawn large (25 mm/s, 10 mm/mV), to study the rhythm.

        Args:
            study_id: The ECG's id, e.g. "ECG-0-12".
            lead: The lead, e.g. "II" or "V1".
        """
        study = self._study(study_id)
        if study.ecg is None:
            raise ValueError(f"study {study.study_id} is a {study.title}, not an ECG")
        return self._show(studies.strip_of(study, lead))

    @tool(kind=ToolKind.READ)
    def get_reference_criteria(self, topic: Topic) -> dict[str, str]:
        """The textbook criteria of a finding and their source, e.g. topic "ecg:left_bundle_branch_block",
        "ctg:absent_late", "spirometry:obstructive", "audiogram:conductive".

        Args:
            topic: The finding, e.g. "ecg:inferior_stemi".
        """
        condition = next(c for c in CONDITIONS if c.key == topic)
        return {"finding": condition.answer, "criteria": condition.criteria, "source": condition.source}

    @tool(kind=ToolKind.READ)
    def list_tests(self) -> list[str]:
        """The tests that can be ordered with order_test."""
        return list(TESTS)

    # -- THINK -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.THINK)
    def calculate_qtc(self, qt_ms: Annotated[int, Interval(ge=150, le=900)],
                      heart_rate_bpm: Annotated[int, Interval(ge=20, le=300)]) -> dict[str, Any]:
        """QTc by Bazett (QT / sqrt(RR)) and Fridericia (QT / cbrt(RR)), and whether it is prolonged (>= 450 ms in
        men, >= 460 ms in women; >= 500 ms high risk; AHA/ACCF/HRS 2009).

        Args:
            qt_ms: The measured QT interval in ms, e.g. 440.
            heart_rate_bpm: The heart rate, e.g. 72.
        """
        rr = 60.0 / heart_rate_bpm
        bazett, fridericia = round(qt_ms / math.sqrt(rr)), round(qt_ms / rr ** (1 / 3))
        verdict = ("high risk (500 ms or more)" if bazett >= 500 else "prolonged in men and women" if bazett >= 460
                   else "prolonged in men (450 ms or more)" if bazett >= 450 else "not prolonged")
        return {"rr_ms": round(rr * 1000), "qtc_bazett_ms": bazett, "qtc_fridericia_ms": fridericia,
                "bazett_verdict": verdict}

    @tool(kind=ToolKind.THINK)
    def calculate_heart_rate(self, rr_interval_ms: Annotated[float, Interval(ge=150, le=3000)] | None = None,
                             large_squares: Annotated[float, Interval(ge=0.5, le=15)] | None = None
                             ) -> dict[str, Any]:
        """Heart rate from an RR interval (60000 / RR ms) or from the large squares between R waves at 25 mm/s
        (300 / squares).

        Args:
            rr_interval_ms: The RR interval in ms, e.g. 800.
            large_squares: Large (5 mm) squares between consecutive R waves, e.g. 4.
        """
        if (rr_interval_ms is None) == (large_squares is None):
            raise ValueError("give rr_interval_ms or large_squares (one of them)")
        rate = 60000.0 / rr_interval_ms if rr_interval_ms is not None else 300.0 / float(large_squares or 1)
        return {"heart_rate_bpm": round(rate)}

    @tool(kind=ToolKind.THINK)
    def calculate_frontal_axis(self, lead_i_net_mm: Annotated[float, Interval(ge=-40, le=40)],
                               lead_avf_net_mm: Annotated[float, Interval(ge=-40, le=40)]) -> dict[str, Any]:
        """The frontal QRS axis from the net QRS deflection (R minus S, mm) in leads I and aVF, and its category
        (normal -30 to +90, left axis deviation, right axis deviation, extreme axis).

        Args:
            lead_i_net_mm: Net QRS deflection in lead I, e.g. 8.
            lead_avf_net_mm: Net QRS deflection in aVF, e.g. 5.
        """
        if lead_i_net_mm == 0 and lead_avf_net_mm == 0:
            raise ValueError("both deflections are 0: the axis is indeterminate")
        axis = round(math.degrees(math.atan2(lead_avf_net_mm * 2 / math.sqrt(3), lead_i_net_mm)))
        category = ("normal" if -30 <= axis <= 90 else "left axis deviation" if -90 <= axis < -30 else
                    "right axis deviation" if 90 < axis <= 180 else "extreme axis (north-west)")
        return {"axis_deg": axis, "category": category}

    @tool(kind=ToolKind.THINK)
    def check_stemi_criteria(self, st_elevation_mm: dict[str, Annotated[float, Interval(ge=-10, le=15)]],
                             sex: Literal["female", "male"], age: Annotated[int, Interval(ge=16, le=110)]
                             ) -> dict[str, Any]:
        """Whether ST elevation at the J point meets the Fourth Universal Definition of MI: two contiguous leads
        with >= 1 mm, or in V2-V3 >= 2 mm (men >= 40), >= 2.5 mm (men < 40), >= 1.5 mm (women).

        Args:
            st_elevation_mm: ST deviation at the J point by lead in mm (negative for depression), e.g.
                {"II": 2, "III": 3, "aVF": 2.5, "aVL": -1.5}.
            sex: "female" or "male".
            age: Age in years, e.g. 62.
        """
        unknown = sorted(set(st_elevation_mm) - set(LEADS))
        if unknown:
            raise ValueError(f"unknown lead(s) {unknown}; leads are {', '.join(LEADS)}")
        st = {lead: float(st_elevation_mm.get(lead, 0.0)) / 10 for lead in LEADS}
        pairs = ecg_rhythms.meets_stemi_criteria(st, sex, age)
        depressed = [lead for lead, v in st.items() if v <= -0.05]
        return {"criteria_met": bool(pairs), "contiguous_leads_meeting_cut_points": [f"{a}/{b}" for a, b in pairs],
                "st_depression_leads": depressed}

    @tool(kind=ToolKind.THINK)
    def classify_ctg(self, baseline_bpm: Annotated[int, Interval(ge=40, le=240)],
                     variability_amplitude_bpm: Annotated[float, Interval(ge=0, le=60)], accelerations: bool,
                     late_decelerations: DecelerationPattern, variable_decelerations: DecelerationPattern,
                     early_decelerations: bool = False, prolonged_deceleration: bool = False,
                     sinusoidal_pattern: bool = False,
                     contractions_per_10_min: Annotated[float, Interval(ge=0, le=15)] | None = None
                     ) -> dict[str, Any]:
        """The NICHD category (I normal, II indeterminate, III abnormal) of the features you read off a CTG, with
        what the category calls for (the Obstetrics domain's classifier).

        Args:
            baseline_bpm: Baseline fetal heart rate over 10 minutes, e.g. 140.
            variability_amplitude_bpm: Peak-to-trough amplitude of the variability (0 when undetectable), e.g. 10.
            accelerations: Whether accelerations are present, e.g. true.
            late_decelerations: "none", "intermittent" or "recurrent" (with half or more of contractions).
            variable_decelerations: "none", "intermittent" or "recurrent".
            early_decelerations: Whether early decelerations are present, e.g. false.
            prolonged_deceleration: Whether a deceleration lasts 2-10 minutes, e.g. false.
            sinusoidal_pattern: Whether the pattern is sinusoidal, e.g. false.
            contractions_per_10_min: Contractions per 10 minutes, e.g. 4.
        """
        return fetal_heart_category(baseline_bpm, variability_amplitude_bpm, accelerations, early_decelerations,
                                    late_decelerations, variable_decelerations, prolonged_deceleration,
                                    sinusoidal_pattern, contractions_per_10_min)

    @tool(kind=ToolKind.THINK)
    def interpret_spirometry(self, fev1_l: Annotated[float, Interval(gt=0, le=8)],
                             fvc_l: Annotated[float, Interval(gt=0, le=9)],
                             fev1_pct_predicted: Annotated[float, Interval(gt=0, le=200)],
                             fvc_pct_predicted: Annotated[float, Interval(gt=0, le=200)],
                             pef_l_min: Annotated[float, Interval(gt=0, le=1000)] | None = None) -> dict[str, Any]:
        """FEV1/FVC and what the numbers meet: airflow obstruction (FEV1/FVC < 0.70, GOLD grade by FEV1 %
        predicted), a restrictive pattern (FVC < 80% predicted with FEV1/FVC >= 0.70), the Empey index (FEV1 mL /
        PEF L/min; above 10 suggests upper-airway obstruction). The loop's shape decides between them.

        Args:
            fev1_l: FEV1 in litres, e.g. 2.4.
            fvc_l: FVC in litres, e.g. 3.9.
            fev1_pct_predicted: FEV1 as % of predicted, e.g. 72.
            fvc_pct_predicted: FVC as % of predicted, e.g. 95.
            pef_l_min: Peak expiratory flow in L/min, e.g. 420.
        """
        if fev1_l > fvc_l:
            raise ValueError("FEV1 cannot exceed FVC")
        ratio = round(fev1_l / fvc_l, 2)
        found: dict[str, Any] = {"fev1_fvc_ratio": ratio, "airflow_obstruction": ratio < spirometry.OBSTRUCTION_RATIO}
        if ratio < spirometry.OBSTRUCTION_RATIO:
            found["gold_grade"] = spirometry.gold_grade(fev1_pct_predicted)
        found["restrictive_pattern"] = (ratio >= spirometry.OBSTRUCTION_RATIO
                                        and fvc_pct_predicted < spirometry.RESTRICTION_FVC_PCT)
        if pef_l_min is not None:
            empey = round(1000 * fev1_l / pef_l_min, 1)
            found["empey_index"] = empey
            found["empey_suggests_upper_airway_obstruction"] = empey > 10
        return found

    @tool(kind=ToolKind.THINK)
    def assess_hearing(self, right_air_db: Annotated[list[Annotated[int, Interval(ge=-10, le=120)]],
                                                     MinLen(8)],
                       left_air_db: Annotated[list[Annotated[int, Interval(ge=-10, le=120)]], MinLen(8)],
                       right_bone_db: list[Annotated[int, Interval(ge=-10, le=120)]] | None = None,
                       left_bone_db: list[Annotated[int, Interval(ge=-10, le=120)]] | None = None
                       ) -> dict[str, Any]:
        """Four-frequency averages (0.5, 1, 2, 4 kHz), the WHO 2021 grade of the better ear, interaural asymmetry
        (>= 15 dB at two adjacent frequencies: MRI per NICE NG98) and air-bone gaps.

        Args:
            right_air_db: Right air-conduction thresholds at 250, 500, 1000, 2000, 3000, 4000, 6000, 8000 Hz,
                e.g. [10, 10, 15, 20, 30, 40, 35, 20].
            left_air_db: Left air-conduction thresholds at the same frequencies.
            right_bone_db: Right bone-conduction thresholds at 500, 1000, 2000, 3000, 4000 Hz (optional).
            left_bone_db: Left bone-conduction thresholds at the same frequencies (optional).
        """
        if len(right_air_db) != 8 or len(left_air_db) != 8:
            raise ValueError("give 8 air-conduction thresholds per ear (250 Hz to 8 kHz)")
        bone_f = audiogram.BONE_FREQUENCIES
        for bone in (right_bone_db, left_bone_db):
            if bone is not None and len(bone) != len(bone_f):
                raise ValueError("give 5 bone-conduction thresholds per ear (500 Hz to 4 kHz)")
        right = dict(zip(HEARING_FREQUENCIES, right_air_db))
        left = dict(zip(HEARING_FREQUENCIES, left_air_db))
        params = audiogram.AudiogramParams(
            pattern="normal", right_air=right, left_air=left,
            right_bone=dict(zip(bone_f, right_bone_db or [right[f] for f in bone_f])),
            left_bone=dict(zip(bone_f, left_bone_db or [left[f] for f in bone_f])))
        found = audiogram.summary(params)
        return {k: found[k] for k in ("pta_right_db", "pta_left_db", "who_grade_better_ear", "max_air_bone_gap_db",
                                      "asymmetric_frequency_pairs")}

    # -- WRITE -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def record_interpretation(self, study_id: Id, findings: Text, conclusion: Text) -> str:
        """File your report of a study: the findings and your conclusion (the diagnosis).

        Args:
            study_id: The study's id, e.g. "ECG-0-12".
            findings: What you see, e.g. "Sinus rhythm 78/min, PR 160 ms, QRS 90 ms, ST elevation II, III, aVF".
            conclusion: The diagnosis, e.g. "Inferior ST-elevation myocardial infarction".
        """
        study = self._study(study_id)
        self.db.interpretations.append(Interpretation(study_id=study.study_id, patient_id=study.patient_id,
                                                      findings=findings, conclusion=conclusion, time=self.db.clock))
        return f"Report filed for study {study.study_id}."

    @tool(kind=ToolKind.WRITE)
    def escalate_care(self, patient_id: Id, pathway: Pathway, reason: Text) -> str:
        """Escalate now: activate the cath lab for primary PCI, call the resuscitation team, call cardiology for
        emergency pacing, start emergency hyperkalaemia treatment, call the obstetric emergency team; or send an
        urgent (non-emergency) specialist referral.

        Args:
            patient_id: The patient's id, e.g. "VD000001".
            pathway: "cath lab activation (primary PCI)", "resuscitation team", "emergency cardiology review
                (pacing)", "emergency hyperkalaemia treatment", "obstetric emergency team" or "urgent specialist
                referral".
            reason: Why, in a sentence.
        """
        p = self._patient(patient_id)
        self.db.escalations.append(Escalation(patient_id=p.patient_id, pathway=pathway, reason=reason,
                                              time=self.db.clock))
        return f"Escalated for {p.patient_id}: {PATHWAY_RESPONSES[pathway]}."

    @tool(kind=ToolKind.WRITE)
    def order_test(self, patient_id: Id, test: Text) -> dict[str, Any]:
        """Order a test (see list_tests); laboratory results come back at once, imaging is booked.

        Args:
            patient_id: The patient's id, e.g. "VD000001".
            test: The test, e.g. "serum potassium".
        """
        p = self._patient(patient_id)
        name = self.find_test(test)
        order_id = f"ORD{len(self.db.orders) + 1:03d}"
        self.db.orders.append(Order(order_id=order_id, patient_id=p.patient_id, test=name, time=self.db.clock))
        result = next((r for r in p.pending_results if normalize(r.test) == normalize(name)), None)
        if result is None:
            return {"order_id": order_id, "test": name, "status": "requested"}
        return {"order_id": order_id, "status": "resulted", **result_view(result)}


def _recording(study: Study) -> dict[str, Any]:
    if study.ecg is not None:
        return {"paper_speed_mm_per_s": 25, "gain_mm_per_mv": 10}
    if study.ctg is not None:
        return {"paper_speed_cm_per_min": study.ctg.paper_speed_cm_min, "duration_min": study.ctg.duration_min}
    return {}
