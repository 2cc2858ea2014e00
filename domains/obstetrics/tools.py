"""The Obstetrics tools: the obstetric record (READ: demographics and presentation, obstetric history, medications
and allergies, vital signs, prenatal labs, ultrasound reports, fetal heart-rate tracings, the labour and birth
record, notes, the test catalogue, the protocol and drug safety in pregnancy and lactation); obstetric calculations
(THINK: gestational age and due date, the fetal heart-rate category, hypertensive disorders, haemorrhage stage);
and clinical actions (WRITE: tests, prescriptions, stopping a medication, bedside interventions, escalation, the
obstetric haemorrhage protocol, the delivery plan, notes).

Tools refuse with ``KeyError`` / ``ValueError`` messages meant for the agent (unknown patient, test, drug or
intervention; impossible values). Every WRITE tool appends to the database it was built with: the environment gives
each episode its own copy. The Bishop score and the Apgar score are the shared instruments ``bishop_score`` and
``apgar`` (``clinical_gym.tools.instruments.obstetrics``).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from annotated_types import Interval, MinLen

from clinical_gym.cases.schema import normalize
from clinical_gym.drugs import LactationSafety, reference
from clinical_gym.domains.lookups import PatientLookup, did_you_mean, formulary_drug
from clinical_gym.domains.obstetrics import calculations
from clinical_gym.domains.obstetrics.calculations import BirthMode, DecelerationPattern, DipstickProtein
from clinical_gym.domains.obstetrics.data_model import (
    Catalogue,
    DeliveryMode,
    DeliveryPlan,
    DeliveryUrgency,
    Discontinuation,
    DoseUnit,
    Escalation,
    EscalationLevel,
    Frequency,
    HaemorrhageActivation,
    InterventionRecord,
    LabResult,
    ObstetricsDB,
    Order,
    OrderedResult,
    Patient,
    PregnancyStage,
    Prescription,
    ProtocolTopic,
    Route,
    TestCategory,
    WrittenNote,
)
from clinical_gym.domains.records import result_view
from clinical_gym.tools import ToolKind, Toolkit, tool

PatientId = Annotated[str, MinLen(1)]
Text = Annotated[str, MinLen(1)]
BloodPressure = Annotated[int, Interval(ge=30, le=300)]
HeartRate = Annotated[int, Interval(ge=20, le=250)]

PROTOCOL_INTERVENTIONS = {"fetal_heart_rate": "fetal", "postpartum_haemorrhage": "haemorrhage",
                          "hypertension": "hypertension", "induction": "labour"}
STAGE_FIELDS = {"first trimester": "first_trimester", "second trimester": "second_trimester",
                "third trimester": "third_trimester", "breastfeeding": "breastfeeding"}
ESCALATION_RESPONSES = {
    "obstetric emergency team": "senior obstetrician, obstetric anaesthetist and midwife in charge coming to the "
                                "bedside now",
    "senior obstetrician review": "senior obstetrician will review within 30 minutes",
    "obstetric anaesthetist": "obstetric anaesthetist coming to the bedside",
    "neonatal team": "neonatal team alerted and attending",
    "intensive care": "intensive care team coming to assess for transfer",
    "maternal-fetal medicine referral": "referral sent to the maternal-fetal medicine clinic",
}


def clock_date(clock: str) -> date:
    """The date part of the database clock ("2025-06-10 09:00")."""
    return calculations.parse_date(clock, "clock")


def gestation_today(patient: Patient, today: date) -> int | None:
    """The patient's gestational age in days on ``today``: from the agreed due date, else from the best dating of
    her LMP and first ultrasound; None after the birth or when the record cannot date the pregnancy."""
    if patient.status == "postpartum":
        return None
    if patient.agreed_edd is not None:
        edd = calculations.parse_date(patient.agreed_edd, "agreed_edd")
        return calculations.PREGNANCY_DAYS - (edd - today).days
    scan = next((u for u in patient.ultrasounds if u.crl_mm is not None or u.biometry_weeks is not None), None)
    try:
        dated = calculations.gestational_age(
            today, lmp=calculations.parse_date(patient.lmp, "lmp") if patient.lmp else None,
            cycle_length_days=patient.cycle_length_days, lmp_certain=patient.lmp_certain,
            scan_date=calculations.parse_date(scan.date, "scan date") if scan else None,
            crl_mm=scan.crl_mm if scan else None, scan_weeks=scan.biometry_weeks if scan and scan.crl_mm is None
            else None, scan_days=scan.biometry_days if scan and scan.crl_mm is None else None)
    except ValueError:
        return None
    return int(dated["gestational_age_days"])


class ObstetricsTools(PatientLookup[Patient], Toolkit):
    """The domain's tools over one database (an episode's copy)."""

    patient_id_example = "OB001"
    find_drug = staticmethod(formulary_drug)

    def __init__(self, db: ObstetricsDB) -> None:
        self.db = db

    # -- helpers ---------------------------------------------------------------------------------------------------
    def _lookup(self, catalogue: Catalogue, name: str, what: str, listing: str) -> str:
        index = self.db.name_index(catalogue)
        canonical = index.get(normalize(name))
        if canonical is None:
            raise ValueError(f"unknown {what} {name!r}.{did_you_mean(name, index, index.__getitem__)} {listing}")
        return canonical

    def find_test(self, name: str) -> str:
        """The catalogue test ``name`` (or another name for it) refers to; ValueError with close names otherwise."""
        return self._lookup("tests", name, "test", "Use list_available_tests to see the catalogue.")

    def find_intervention(self, name: str) -> str:
        """The catalogue intervention ``name`` refers to; ValueError with close names otherwise."""
        return self._lookup("interventions", name, "intervention",
                            "get_obstetric_protocol lists the interventions of each topic.")

    def _today(self) -> date:
        return clock_date(self.db.clock)

    # -- READ: the record ------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def get_patient_info(self, patient_id: PatientId) -> dict[str, Any]:
        """Demographics and the current presentation: age, weight, whether antenatal, in labour or after the birth,
        gravidity and parity, the agreed due date and today's gestation, the presenting complaint and its history.

        Args:
            patient_id: The patient's id, e.g. "OB001".
        """
        p = self._patient(patient_id)
        info: dict[str, Any] = {"patient_id": p.patient_id, "name": p.name, "age": p.age, "weight_kg": p.weight_kg,
                                "status": p.status, "gravida": p.gravida, "para": p.parity}
        if p.status != "postpartum":
            info["agreed_due_date"] = p.agreed_edd or "not yet agreed: the pregnancy has not been dated"
            if p.agreed_edd is not None:
                days = gestation_today(p, self._today())
                info["gestation_today"] = calculations.weeks_days(days) if days is not None else "unknown"
        else:
            assert p.birth is not None
            info["birth"] = f"{p.birth.mode} birth at {p.birth.gestation_at_birth} ({p.birth.time})"
            info["breastfeeding"] = p.breastfeeding
        info.update(presenting_complaint=p.presenting_complaint, history=p.history_of_presentation)
        return info

    @tool(kind=ToolKind.READ)
    def get_obstetric_history(self, patient_id: PatientId) -> dict[str, Any]:
        """The obstetric and medical history: menstrual dating (last menstrual period, cycle length, how sure she
        is), previous pregnancies, medical conditions, family and social history.

        Args:
            patient_id: The patient's id, e.g. "OB001".
        """
        p = self._patient(patient_id)
        return {"gravida": p.gravida, "para": p.parity,
                "last_menstrual_period": p.lmp or "unknown", "cycle_length_days": p.cycle_length_days,
                "lmp_certain": p.lmp_certain, "previous_pregnancies": p.previous_pregnancies or ["none"],
                "conditions": [c.model_dump() for c in p.conditions] or ["none"],
                "family_history": p.family_history or ["none"], "social_history": p.social_history}

    @tool(kind=ToolKind.READ)
    def get_medications_and_allergies(self, patient_id: PatientId) -> dict[str, Any]:
        """Documented allergies (reaction and severity), current medications, and what was prescribed or stopped
        during this encounter.

        Args:
            patient_id: The patient's id, e.g. "OB001".
        """
        p = self._patient(patient_id)
        return {"allergies": [a.model_dump() for a in p.allergies] or "no known drug allergies",
                "current_medications": [m.model_dump() for m in p.medications],
                "prescribed_this_encounter": [rx.model_dump(exclude={"patient_id"}) for rx in self.db.prescriptions
                                              if rx.patient_id == p.patient_id],
                "stopped_this_encounter": [d.medication for d in self.db.discontinuations
                                           if d.patient_id == p.patient_id]}

    @tool(kind=ToolKind.READ)
    def get_vital_signs(self, patient_id: PatientId) -> list[dict[str, Any]]:
        """The patient's recorded maternal vital signs, oldest first: temperature (°C), heart rate, blood pressure,
        respiratory rate, SpO2 (%) and level of consciousness.

        Args:
            patient_id: The patient's id, e.g. "OB001".
        """
        return [v.model_dump() for v in self._patient(patient_id).vitals]

    @tool(kind=ToolKind.READ)
    def get_prenatal_labs(self, patient_id: PatientId, test: str | None = None) -> list[dict[str, Any]]:
        """Laboratory and bedside results (blood group, blood count, renal and liver tests, urine protein, glucose
        tolerance, infection screens, ...) with units, reference ranges and flags; tests ordered this encounter
        appear once resulted.

        Args:
            patient_id: The patient's id, e.g. "OB001".
            test: Only results of this test, e.g. "Platelets" (all results when omitted).
        """
        p = self._patient(patient_id)
        results = self.db.patient_results(p.patient_id)
        if test is not None:
            wanted = self.find_test(test)
            results = [r for r in results if r.test == wanted]
            if not results:
                return [{"test": wanted, "result": "no result available; order the test to get one"}]
        return [result_view(r) for r in results]

    @tool(kind=ToolKind.READ)
    def get_ultrasound_reports(self, patient_id: PatientId) -> list[dict[str, Any]] | str:
        """The patient's ultrasound reports, oldest first: date, kind (dating, anatomy, growth, bedside),
        crown-rump length or biometry gestation, estimated fetal weight and findings.

        Args:
            patient_id: The patient's id, e.g. "OB001".
        """
        p = self._patient(patient_id)
        if not p.ultrasounds:
            return "No ultrasound reports on record."
        return [u.model_dump(exclude_none=True) for u in p.ultrasounds]

    @tool(kind=ToolKind.READ)
    def get_fetal_heart_tracing(self, patient_id: PatientId) -> list[dict[str, Any]] | str:
        """Summaries of the fetal heart-rate (CTG) tracings, oldest first: baseline rate, variability amplitude,
        accelerations, early, late, variable and prolonged decelerations, sinusoidal pattern, contraction frequency
        and the midwife's description.

        Args:
            patient_id: The patient's id, e.g. "OB001".
        """
        p = self._patient(patient_id)
        if not p.fetal_heart_tracings:
            return "No fetal heart-rate tracing on record" + (" (the baby is born)." if p.status == "postpartum"
                                                              else ".")
        return [t.model_dump(exclude_none=True) for t in p.fetal_heart_tracings]

    @tool(kind=ToolKind.READ)
    def get_labour_record(self, patient_id: PatientId) -> dict[str, Any]:
        """The labour and birth record: cervical examinations (dilatation, effacement, station, consistency,
        position, membranes, presentation), the birth (time, mode, placenta, perineum, uterotonics and red cells
        given) and cumulative blood-loss measurements.

        Args:
            patient_id: The patient's id, e.g. "OB001".
        """
        p = self._patient(patient_id)
        return {"cervical_examinations": [c.model_dump() for c in p.cervical_exams] or "none recorded",
                "birth": p.birth.model_dump() if p.birth else "not yet delivered",
                "blood_loss": [b.model_dump() for b in p.blood_loss] or "none recorded"}

    @tool(kind=ToolKind.READ)
    def get_clinical_notes(self, patient_id: PatientId) -> list[dict[str, Any]]:
        """The patient's clinical notes (midwifery, nursing and medical), oldest first, then notes written during
        this encounter.

        Args:
            patient_id: The patient's id, e.g. "OB001".
        """
        p = self._patient(patient_id)
        written = [{"time": self.db.clock, "author": "you", "text": n.text} for n in self.db.notes
                   if n.patient_id == p.patient_id]
        return [n.model_dump() for n in p.notes] + written

    @tool(kind=ToolKind.READ)
    def list_available_tests(self, category: TestCategory | None = None) -> dict[str, list[str]]:
        """The tests that can be ordered, by category.

        Args:
            category: Only this category: "laboratory", "imaging", "bedside" or "microbiology" (all when omitted).
        """
        listed: dict[str, list[str]] = {}
        for definition in self.db.tests.values():
            if category is None or definition.category == category:
                listed.setdefault(definition.category, []).append(definition.name)
        return listed

    @tool(kind=ToolKind.READ)
    def get_obstetric_protocol(self, topic: ProtocolTopic) -> dict[str, Any]:
        """The unit's protocol on a topic, with the bedside interventions it uses: pregnancy dating, fetal heart-rate
        interpretation, hypertensive disorders, postpartum haemorrhage, induction of labour, or medicines in
        pregnancy and breastfeeding.

        Args:
            topic: "dating", "fetal_heart_rate", "hypertension", "postpartum_haemorrhage", "induction" or
                "medications".
        """
        view: dict[str, Any] = {"topic": topic, "protocol": self.db.protocol[topic]}
        category = PROTOCOL_INTERVENTIONS.get(topic)
        if category is not None:
            view["interventions"] = {name: i.description for name, i in self.db.interventions_catalogue.items()
                                     if i.category in (category, "general")}
        return view

    @tool(kind=ToolKind.READ)
    def check_pregnancy_drug_safety(self, drug: Text, stage: PregnancyStage) -> dict[str, Any]:
        """Whether a drug is safe in a trimester of pregnancy or while breastfeeding, why, and safer alternatives.

        Args:
            drug: Generic drug name, e.g. "lisinopril".
            stage: "first trimester", "second trimester", "third trimester" or "breastfeeding".
        """
        d = self.find_drug(drug)
        entry = d.breastfeeding if stage == "breastfeeding" else d.pregnancy
        if entry is None:
            return {"drug": d.name, "stage": stage, "verdict": "no entry",
                    "note": "Not in the drug reference's pregnancy and lactation advice; check a specialist source "
                            "before use."}
        if isinstance(entry, LactationSafety):
            return {"drug": d.name, "stage": stage, "verdict": entry.verdict, "note": entry.note}
        view: dict[str, Any] = {"drug": d.name, "stage": stage, "verdict": getattr(entry, STAGE_FIELDS[stage]),
                                "note": entry.note}
        if view["verdict"] != "compatible" and entry.alternatives:
            view["alternatives"] = entry.alternatives
        return view

    # -- THINK: obstetric calculations ---------------------------------------------------------------------------------
    @tool(kind=ToolKind.THINK)
    def calculate_gestational_age(self, lmp_date: str | None = None,
                                  cycle_length_days: Annotated[int, Interval(ge=20, le=45)] = 28,
                                  lmp_certain: bool = True, scan_date: str | None = None,
                                  crl_mm: Annotated[float, Interval(ge=0, le=200)] | None = None,
                                  scan_gestation_weeks: Annotated[int, Interval(ge=0, le=45)] | None = None,
                                  scan_gestation_days: Annotated[int, Interval(ge=0, le=6)] | None = None,
                                  on_date: str | None = None) -> dict[str, Any]:
        """Gestational age and due date (EDD): by the last menstrual period (Naegele's rule, adjusted for cycle
        length), by ultrasound (crown-rump length up to 13+6 weeks, else the biometry gestation), and which to use
        (ACOG: the scan re-dates the pregnancy when the two differ by more than 5 days up to 8+6 weeks, 7 days to
        15+6, 10 days to 21+6, 14 days to 27+6, 21 days later; an uncertain LMP is dated by ultrasound).

        Args:
            lmp_date: First day of the last menstrual period, e.g. "2025-01-14".
            cycle_length_days: Usual cycle length in days, e.g. 28.
            lmp_certain: Whether the patient is sure of the LMP date, e.g. true.
            scan_date: Date of the dating ultrasound, e.g. "2025-03-25".
            crl_mm: Crown-rump length at that scan in mm, e.g. 45.
            scan_gestation_weeks: Or the scan's biometry gestation: weeks, e.g. 20.
            scan_gestation_days: And days, e.g. 3.
            on_date: The date to give the gestational age for, e.g. "2025-06-10" (default: today).
        """
        today = calculations.parse_date(on_date, "on_date") if on_date is not None else self._today()
        return calculations.gestational_age(
            today, lmp=calculations.parse_date(lmp_date, "lmp_date") if lmp_date is not None else None,
            cycle_length_days=cycle_length_days, lmp_certain=lmp_certain,
            scan_date=calculations.parse_date(scan_date, "scan_date") if scan_date is not None else None,
            crl_mm=crl_mm, scan_weeks=scan_gestation_weeks, scan_days=scan_gestation_days)

    @tool(kind=ToolKind.THINK)
    def classify_fetal_heart_tracing(self, baseline_bpm: Annotated[int, Interval(ge=40, le=240)],
                                     variability_amplitude_bpm: Annotated[float, Interval(ge=0, le=60)],
                                     accelerations: bool, late_decelerations: DecelerationPattern,
                                     variable_decelerations: DecelerationPattern, early_decelerations: bool = False,
                                     prolonged_deceleration: bool = False, sinusoidal_pattern: bool = False,
                                     contractions_per_10_min: Annotated[float, Interval(ge=0, le=15)] | None = None
                                     ) -> dict[str, Any]:
        """The NICHD three-tier category of a fetal heart-rate tracing (I normal, II indeterminate, III abnormal),
        the features behind it, uterine tachysystole, and what the category calls for.

        Args:
            baseline_bpm: Baseline fetal heart rate in beats/min over 10 minutes, e.g. 140.
            variability_amplitude_bpm: Amplitude of baseline variability in beats/min (0 when undetectable), e.g. 10.
            accelerations: Whether accelerations are present (spontaneous or after scalp stimulation), e.g. true.
            late_decelerations: "none", "intermittent" or "recurrent" (with half or more of contractions).
            variable_decelerations: "none", "intermittent" or "recurrent".
            early_decelerations: Whether early decelerations are present, e.g. false.
            prolonged_deceleration: Whether there is a deceleration lasting 2 to 10 minutes, e.g. false.
            sinusoidal_pattern: Whether the tracing is sinusoidal, e.g. false.
            contractions_per_10_min: Contractions per 10 minutes averaged over 30 minutes, e.g. 4.
        """
        return calculations.fetal_heart_category(
            baseline_bpm, variability_amplitude_bpm, accelerations, early_decelerations, late_decelerations,
            variable_decelerations, prolonged_deceleration, sinusoidal_pattern, contractions_per_10_min)

    @tool(kind=ToolKind.THINK)
    def assess_preeclampsia_criteria(
            self, gestation_weeks: Annotated[float, Interval(ge=4, le=44)], systolic_bp: BloodPressure,
            diastolic_bp: BloodPressure, repeat_systolic_bp: BloodPressure | None = None,
            repeat_diastolic_bp: BloodPressure | None = None,
            hours_between_readings: Annotated[float, Interval(ge=0, le=168)] | None = None,
            postpartum: bool = False, chronic_hypertension: bool = False,
            protein_creatinine_ratio: Annotated[float, Interval(ge=0, le=30)] | None = None,
            urine_protein_24h_mg: Annotated[float, Interval(ge=0, le=30000)] | None = None,
            dipstick_protein: DipstickProtein | None = None,
            platelets: Annotated[float, Interval(ge=0, le=2000)] | None = None,
            creatinine_umol_l: Annotated[float, Interval(ge=0, le=3000)] | None = None,
            ast: Annotated[float, Interval(ge=0, le=20000)] | None = None,
            alt: Annotated[float, Interval(ge=0, le=20000)] | None = None,
            ldh: Annotated[float, Interval(ge=0, le=50000)] | None = None, severe_headache: bool = False,
            visual_disturbance: bool = False, epigastric_or_ruq_pain: bool = False, pulmonary_oedema: bool = False,
            seizure: bool = False) -> dict[str, Any]:
        """Classify a hypertensive disorder of pregnancy by ACOG criteria (chronic or gestational hypertension,
        pre-eclampsia with or without severe features, superimposed pre-eclampsia, HELLP syndrome, eclampsia) and
        what it calls for (urgent antihypertensive, magnesium sulfate, timing of delivery).

        Args:
            gestation_weeks: Gestation in weeks (at birth, if postpartum), e.g. 34.5.
            systolic_bp: First systolic reading in mmHg, e.g. 162.
            diastolic_bp: First diastolic reading in mmHg, e.g. 104.
            repeat_systolic_bp: Repeat systolic reading in mmHg, e.g. 158.
            repeat_diastolic_bp: Repeat diastolic reading in mmHg, e.g. 112.
            hours_between_readings: Hours between the two readings, e.g. 0.25 (15 minutes).
            postpartum: Whether the patient has given birth, e.g. false.
            chronic_hypertension: Hypertension before pregnancy or before 20 weeks, e.g. false.
            protein_creatinine_ratio: Urine protein/creatinine ratio in mg/mg, e.g. 0.45.
            urine_protein_24h_mg: 24-hour urine protein in mg, e.g. 420.
            dipstick_protein: Urine dipstick protein: "negative", "trace", "1+", "2+", "3+" or "4+".
            platelets: Platelet count in 10^9/L, e.g. 88.
            creatinine_umol_l: Serum creatinine in µmol/L, e.g. 104.
            ast: AST in U/L, e.g. 92.
            alt: ALT in U/L, e.g. 110.
            ldh: LDH in U/L, e.g. 720.
            severe_headache: New severe headache not relieved by analgesia, e.g. true.
            visual_disturbance: Visual disturbance (flashing lights, blurring, scotomata), e.g. false.
            epigastric_or_ruq_pain: Severe persistent epigastric or right upper quadrant pain, e.g. false.
            pulmonary_oedema: Pulmonary oedema, e.g. false.
            seizure: A new generalised seizure, e.g. false.
        """
        return calculations.hypertensive_disorder(
            gestation_weeks, systolic_bp, diastolic_bp, repeat_systolic_bp, repeat_diastolic_bp,
            hours_between_readings, postpartum, chronic_hypertension, protein_creatinine_ratio, urine_protein_24h_mg,
            dipstick_protein, platelets, creatinine_umol_l, ast, alt, ldh, severe_headache, visual_disturbance,
            epigastric_or_ruq_pain, pulmonary_oedema, seizure)

    @tool(kind=ToolKind.THINK)
    def stage_postpartum_haemorrhage(
            self, cumulative_blood_loss_ml: Annotated[float, Interval(ge=0, le=20000)], birth_mode: BirthMode,
            heart_rate: HeartRate, systolic_bp: BloodPressure, diastolic_bp: BloodPressure | None = None,
            spo2: Annotated[int, Interval(ge=50, le=100)] | None = None,
            uterotonics_given: Annotated[int, Interval(ge=0, le=10)] = 0,
            red_cell_units_transfused: Annotated[int, Interval(ge=0, le=100)] = 0,
            suspected_coagulopathy: bool = False) -> dict[str, Any]:
        """Stage a postpartum haemorrhage (0-3) from the cumulative blood loss, vital signs and shock index (heart
        rate / systolic pressure), uterotonics and red cells given, and suspected coagulopathy, with the actions
        the stage calls for.

        Args:
            cumulative_blood_loss_ml: Cumulative measured blood loss since birth in mL, e.g. 1200.
            birth_mode: "vaginal" (including assisted) or "caesarean".
            heart_rate: Maternal heart rate in beats/min, e.g. 118.
            systolic_bp: Systolic blood pressure in mmHg, e.g. 96.
            diastolic_bp: Diastolic blood pressure in mmHg, e.g. 58.
            spo2: Oxygen saturation in percent, e.g. 97.
            uterotonics_given: How many different uterotonic drugs were given so far, e.g. 1.
            red_cell_units_transfused: Units of red cells transfused so far, e.g. 0.
            suspected_coagulopathy: Whether coagulopathy (DIC) is suspected, e.g. false.
        """
        return calculations.haemorrhage_stage(cumulative_blood_loss_ml, birth_mode, heart_rate, systolic_bp,
                                              diastolic_bp, spo2, uterotonics_given, red_cell_units_transfused,
                                              suspected_coagulopathy)

    # -- WRITE -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def order_test(self, patient_id: PatientId, test: Text) -> dict[str, Any]:
        """Order a test or panel (laboratory, imaging, bedside, microbiology); results come back at once and are
        added to the patient's results.

        Args:
            patient_id: The patient's id, e.g. "OB001".
            test: The test or panel name from the catalogue, e.g. "Pre-eclampsia bloods", "Urine protein:creatinine
                ratio" or "Group and crossmatch".
        """
        p = self._patient(patient_id)
        name = self.find_test(test)
        definition = self.db.tests[name]
        order = Order(order_id=f"ORD-{len(self.db.orders) + 1:03d}", patient_id=p.patient_id, test=name,
                      time=self.db.clock)
        self.db.orders.append(order)
        parts = [self.db.tests[c] for c in definition.components] or [definition]
        results = [p.pending_results.get(part.name) or LabResult(
            test=part.name, time=self.db.clock, value=part.normal_value, unit=part.unit, ref_low=part.ref_low,
            ref_high=part.ref_high, text=part.normal_text) for part in parts]
        self.db.results.extend(OrderedResult(order_id=order.order_id, patient_id=p.patient_id, result=r)
                               for r in results)
        return {"order_id": order.order_id, "results": [result_view(r) for r in results]}

    @tool(kind=ToolKind.WRITE)
    def prescribe_medication(self, patient_id: PatientId, drug: Text, dose: Annotated[float, Interval(gt=0)],
                             unit: DoseUnit, frequency: Frequency, route: Route,
                             indication: str = "") -> dict[str, Any]:
        """Prescribe a medication; it is recorded as written. Check allergies, current medications and safety in
        pregnancy or breastfeeding first.

        Args:
            patient_id: The patient's id, e.g. "OB001".
            drug: Generic drug name, e.g. "labetalol".
            dose: The amount per dose (per hour for an infusion), e.g. 20.
            unit: The unit of the dose: "mg", "mcg", "g", "units" or "mL".
            frequency: How often: "once" (a single or loading dose), "daily", "bid", "tid", "qid", "q4h", "q6h",
                "q8h", "q12h", "hourly infusion" (dose per hour) or "weekly".
            route: "oral", "intravenous", "intramuscular", "subcutaneous", "sublingual", "rectal", "vaginal" or
                "topical".
            indication: What it is for, e.g. "severe-range blood pressure".
        """
        p, d = self._patient(patient_id), self.find_drug(drug)
        rx = Prescription(prescription_id=f"RX-{len(self.db.prescriptions) + 1:03d}", patient_id=p.patient_id,
                          drug=d.name, dose=dose, unit=unit, frequency=frequency, route=route, indication=indication)
        self.db.prescriptions.append(rx)
        return {"prescription_id": rx.prescription_id, "status": "prescribed",
                "prescription": rx.model_dump(exclude={"patient_id"})}

    @tool(kind=ToolKind.WRITE)
    def discontinue_medication(self, patient_id: PatientId, medication: Text, reason: Text) -> str:
        """Stop one of the patient's current medications or infusions (e.g. an oxytocin infusion, a drug unsafe in
        pregnancy).

        Args:
            patient_id: The patient's id, e.g. "OB001".
            medication: The medication as named in the record, e.g. "oxytocin".
            reason: Why, e.g. "tachysystole with a Category II tracing".
        """
        p = self._patient(patient_id)
        current = [m.name for m in p.medications] + [rx.drug for rx in self.db.prescriptions
                                                     if rx.patient_id == p.patient_id]
        drugs = reference()
        wanted, drug = normalize(medication), drugs.find(medication)
        name = next((c for c in current if normalize(c) == wanted
                     or (drug is not None and (found := drugs.find(c)) is not None and found.name == drug.name)), None)
        if name is None:
            raise ValueError(f"{medication!r} is not one of the patient's current medications: "
                             f"{', '.join(current) or 'none'}")
        self.db.discontinuations.append(Discontinuation(patient_id=p.patient_id, medication=name, reason=reason))
        return f"{name} stopped for {p.patient_id}."

    @tool(kind=ToolKind.WRITE)
    def perform_obstetric_intervention(self, patient_id: PatientId, intervention: Text,
                                       indication: str = "") -> dict[str, Any]:
        """Carry out a bedside obstetric intervention (not a drug): intrauterine resuscitation (repositioning,
        fluid bolus, amnioinfusion), haemorrhage measures (fundal massage, bladder catheter, balloon tamponade,
        transfusion), seizure precautions and magnesium monitoring, labour procedures (amniotomy, cervical
        ripening balloon, McRoberts manoeuvre).

        Args:
            patient_id: The patient's id, e.g. "OB001".
            intervention: The intervention, e.g. "maternal repositioning" or "fundal massage";
                get_obstetric_protocol lists them by topic.
            indication: Why, e.g. "recurrent late decelerations".
        """
        p = self._patient(patient_id)
        name = self.find_intervention(intervention)
        self.db.interventions.append(InterventionRecord(patient_id=p.patient_id, intervention=name,
                                                        indication=indication, time=self.db.clock))
        return {"intervention": name, "status": "done",
                "description": self.db.interventions_catalogue[name].description}

    @tool(kind=ToolKind.WRITE)
    def escalate_care(self, patient_id: PatientId, level: EscalationLevel, reason: Text) -> str:
        """Escalate care now: call the obstetric emergency team (senior obstetrician, anaesthetist and midwife in
        charge to the bedside), ask for a senior obstetrician review, call the obstetric anaesthetist, the neonatal
        team or intensive care; or refer to maternal-fetal medicine (not urgent).

        Args:
            patient_id: The patient's id, e.g. "OB001".
            level: "obstetric emergency team", "senior obstetrician review", "obstetric anaesthetist",
                "neonatal team", "intensive care" or "maternal-fetal medicine referral".
            reason: Why, in a sentence.
        """
        p = self._patient(patient_id)
        self.db.escalations.append(Escalation(patient_id=p.patient_id, level=level, reason=reason,
                                              time=self.db.clock))
        return f"Escalated for {p.patient_id}: {ESCALATION_RESPONSES[level]}."

    @tool(kind=ToolKind.WRITE)
    def activate_haemorrhage_protocol(self, patient_id: PatientId, stage: Annotated[int, Interval(ge=1, le=3)],
                                      reason: Text) -> dict[str, Any]:
        """Activate the obstetric haemorrhage protocol at a stage (1-3): calls the haemorrhage team, the blood bank
        and, at stage 3, the massive transfusion protocol. A later activation raises the stage.

        Args:
            patient_id: The patient's id, e.g. "OB001".
            stage: The haemorrhage stage, 1 to 3, e.g. 2.
            reason: The blood loss and vital signs that set it, e.g. "1200 mL after a vaginal birth, HR 118".
        """
        p = self._patient(patient_id)
        self.db.haemorrhage_activations.append(HaemorrhageActivation(patient_id=p.patient_id, stage=stage,
                                                                     reason=reason, time=self.db.clock))
        info = calculations.STAGE_ACTIONS[stage]
        return {"patient_id": p.patient_id, "activated": info.summary, "team_actions": list(info.actions)}

    @tool(kind=ToolKind.WRITE)
    def plan_delivery(self, patient_id: PatientId, mode: DeliveryMode, urgency: DeliveryUrgency,
                      reason: Text) -> str:
        """Record the plan for delivery: expectant management, induction or augmentation of labour, assisted
        vaginal birth or caesarean birth, and how soon ("immediate" for a category 1 emergency).

        Args:
            patient_id: The patient's id, e.g. "OB001".
            mode: "expectant management", "induction of labour", "augmentation of labour", "assisted vaginal birth"
                or "caesarean birth".
            urgency: "immediate", "within 24 hours" or "scheduled".
            reason: Why, e.g. "pre-eclampsia with severe features at 35 weeks".
        """
        p = self._patient(patient_id)
        if p.status == "postpartum":
            raise ValueError(f"{p.patient_id} has already given birth")
        self.db.delivery_plans.append(DeliveryPlan(patient_id=p.patient_id, mode=mode, urgency=urgency,
                                                   reason=reason, time=self.db.clock))
        return f"Delivery plan for {p.patient_id}: {mode} ({urgency})."

    @tool(kind=ToolKind.WRITE)
    def write_clinical_note(self, patient_id: PatientId, note: Text) -> str:
        """Write a note in the patient's record (assessment, plan, counselling).

        Args:
            patient_id: The patient's id, e.g. "OB001".
            note: The note text.
        """
        p = self._patient(patient_id)
        self.db.notes.append(WrittenNote(patient_id=p.patient_id, text=note))
        return f"Note added to the record of {p.patient_id}."
