"""The RadiologyReport tools: the study (details, clinical indication, structured findings), the patient's imaging
history and prior reports, the care team, report templates by modality and follow-up guidance (READ); calculators
for incidental pulmonary nodules, adrenal nodules and interval growth (THINK); report drafts, result
communication with read-back, follow-up registration and the signed final report (WRITE).

Study tools take both identifiers, ``patient_id`` and ``accession``, and refuse when the accession belongs to
another patient. Tools refuse with ``KeyError`` / ``ValueError`` messages meant for the agent. Every WRITE tool
appends to the database it was built with: the environment gives each episode its own copy.
"""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import Interval, MinLen

from clinical_gym.cases.schema import normalize
from clinical_gym.domains.lookups import PatientLookup
from clinical_gym.domains.radiology_report.data_model import (
    Communication,
    Contact,
    FollowUp,
    GuidanceTopic,
    Method,
    Patient,
    RadiologyReportDB,
    ReportDraft,
    SignedReport,
    Study,
    TemplateKey,
    Urgency,
)
from clinical_gym.domains.radiology_report.follow_up_rules import (
    NoduleType,
    Risk,
    adrenal_assessment,
    fleischner_recommendation,
    interval_growth,
)
from clinical_gym.domains.radiology_report.report_sections import missing_sections, parse_sections
from clinical_gym.tools import ToolKind, Toolkit, tool

PatientId = Annotated[str, MinLen(1)]
Accession = Annotated[str, MinLen(1)]
Text = Annotated[str, MinLen(1)]
Millimetres = Annotated[float, Interval(gt=0, le=500)]
Attenuation = Annotated[float, Interval(ge=-1000, le=3000)]
VERBAL: frozenset[str] = frozenset({"telephone", "in person"})


def canonical_accession(accession: str) -> str:
    """An accession as the database keys it ("rad24001 " -> "RAD24001")."""
    return accession.strip().upper()


class RadiologyReportTools(PatientLookup[Patient], Toolkit):
    """The domain's tools over one database (an episode's copy)."""

    patient_id_example = "R001"

    def __init__(self, db: RadiologyReportDB) -> None:
        self.db = db

    # -- helpers ---------------------------------------------------------------------------------------------------
    def _study(self, patient_id: str, accession: str) -> tuple[Patient, Study]:
        patient = self._patient(patient_id)
        study = self.db.studies.get(canonical_accession(accession))
        if study is None:
            raise KeyError(f"accession {accession!r} not found; accessions look like 'RAD24001' "
                           f"(get_imaging_history lists a patient's studies)")
        if study.patient_id != patient.patient_id:
            raise ValueError(f"accession {study.accession} does not belong to patient {patient.patient_id}: check "
                             f"both identifiers before going on")
        return patient, study

    def _current_study(self, patient_id: str, accession: str) -> tuple[Patient, Study]:
        """The study, which must not be a prior reported before today's worklist."""
        patient, study = self._study(patient_id, accession)
        if study.final_report:
            raise ValueError(f"{study.accession} ({study.exam}, {study.performed_at}) was reported on "
                             f"{study.reported_at}; it is a prior study, not one awaiting a report")
        return patient, study

    def _open_study(self, patient_id: str, accession: str) -> tuple[Patient, Study]:
        """The study, which must still be awaiting its report (not signed in this task)."""
        patient, study = self._current_study(patient_id, accession)
        signed = self.db.signed_report(study.accession)
        if signed is not None:
            raise ValueError(f"the final report of {study.accession} was signed at {signed.signed_at} "
                             f"({signed.report_id}); it cannot be changed in this task")
        return patient, study

    def _contact(self, patient: Patient, recipient: str) -> Contact:
        """The care-team member ``recipient`` names: by surname, or by role (all the role's words, or words that fit
        one role only)."""
        wanted = set(normalize(recipient).split())
        by_name = [c for c in patient.care_team if normalize(c.name).split()[-1] in wanted]
        by_role = [c for c in patient.care_team if (role := set(normalize(c.role).split())) <= wanted
                   or (wanted and wanted <= role)]
        found = by_name or by_role
        if len(found) == 1:
            return found[0]
        listed = "; ".join(f"{c.name} ({c.role})" for c in patient.care_team)
        if found:
            raise ValueError(f"{recipient!r} fits more than one of {patient.patient_id}'s care team ({listed}); name "
                             f"the clinician")
        raise KeyError(f"{recipient!r} is not on {patient.patient_id}'s care team ({listed}); results go to a "
                       f"clinician responsible for the patient")

    def _read_report(self, study: Study, text: str) -> tuple[dict[str, str], list[str]]:
        """The report's sections and the required sections of the study's template it lacks."""
        sections = parse_sections(text)
        return sections, missing_sections(sections, self.db.templates[study.template].required_sections)

    # -- READ: the study ---------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def get_study_details(self, patient_id: PatientId, accession: Accession) -> dict[str, Any]:
        """The study's details: the patient (name, age, sex, location), the exam, when it was done, its status, the
        technique and protocol, limitations, the referring clinician, and the report template it uses.

        Args:
            patient_id: The patient's id, e.g. "R001".
            accession: The study's accession number, e.g. "RAD24001".
        """
        patient, study = self._study(patient_id, accession)
        view: dict[str, Any] = {
            "accession": study.accession,
            "patient": {"patient_id": patient.patient_id, "name": patient.name, "age": patient.age,
                        "sex": patient.sex, "location": patient.location},
            "exam": study.exam, "performed_at": study.performed_at, "status": study.status,
            "technique": study.technique, "limitations": study.limitations or "none recorded",
            "referrer": study.referrer, "template": study.template}
        signed = self.db.signed_report(study.accession)
        if signed is not None:
            view["status"] = f"final (signed at {signed.signed_at}, {signed.report_id})"
        return view

    @tool(kind=ToolKind.READ)
    def get_clinical_indication(self, patient_id: PatientId, accession: Accession) -> dict[str, Any]:
        """Why the study was requested: the referrer's clinical details and question, the patient's relevant
        history and results, and pregnancy status where it applies.

        Args:
            patient_id: The patient's id, e.g. "R001".
            accession: The study's accession number, e.g. "RAD24001".
        """
        patient, study = self._study(patient_id, accession)
        view: dict[str, Any] = {"accession": study.accession, "clinical_details": study.clinical_details,
                                "clinical_question": study.clinical_question or "not stated",
                                "relevant_history": patient.history or ["none recorded"],
                                "relevant_results": study.relevant_results or ["none"]}
        if patient.sex == "female" and 12 <= patient.age <= 55:
            view["pregnant"] = "unknown" if patient.pregnant is None else patient.pregnant
        return view

    @tool(kind=ToolKind.READ)
    def get_structured_findings(self, patient_id: PatientId, accession: Accession) -> dict[str, Any]:
        """The structured findings of a study awaiting its report: for each finding its location, description, size,
        characteristics and comparison with prior imaging; then the pertinent negatives. Findings are observations;
        the interpretation (the impression) is yours.

        Args:
            patient_id: The patient's id, e.g. "R001".
            accession: The study's accession number, e.g. "RAD24001".
        """
        _, study = self._study(patient_id, accession)
        if study.final_report:
            raise ValueError(f"{study.accession} is a reported prior study; read it with get_prior_report")
        return {"accession": study.accession, "exam": study.exam,
                "findings": [f.model_dump(exclude_defaults=True) for f in study.findings],
                "pertinent_negatives": study.pertinent_negatives or ["none listed"]}

    @tool(kind=ToolKind.READ)
    def get_imaging_history(self, patient_id: PatientId) -> dict[str, Any]:
        """The patient's imaging studies, newest first: accession, exam, date and status (final, or awaiting a
        report).

        Args:
            patient_id: The patient's id, e.g. "R001".
        """
        patient = self._patient(patient_id)
        studies = [{"accession": s.accession, "exam": s.exam, "performed_at": s.performed_at,
                    "status": "final" if s.final_report or self.db.signed_report(s.accession) else s.status}
                   for s in self.db.studies_of(patient.patient_id)]
        priors = sum(1 for s in studies if s["status"] == "final")
        return {"patient_id": patient.patient_id, "studies": studies,
                "summary": f"{priors} reported prior stud{'y' if priors == 1 else 'ies'}" if priors
                else "no prior imaging on record"}

    @tool(kind=ToolKind.READ)
    def get_prior_report(self, patient_id: PatientId, accession: Accession) -> dict[str, Any]:
        """The final report of one of the patient's reported prior studies.

        Args:
            patient_id: The patient's id, e.g. "R001".
            accession: The prior study's accession number, e.g. "RAD23890".
        """
        _, study = self._study(patient_id, accession)
        if not study.final_report:
            raise ValueError(f"{study.accession} has no final report yet (it is awaiting a report)")
        return {"accession": study.accession, "exam": study.exam, "performed_at": study.performed_at,
                "reported_at": study.reported_at, "report": study.final_report}

    @tool(kind=ToolKind.READ)
    def get_care_team_contacts(self, patient_id: PatientId) -> list[dict[str, str]]:
        """The clinicians responsible for the patient, with role and how to reach them: who to tell about a result.

        Args:
            patient_id: The patient's id, e.g. "R001".
        """
        return [c.model_dump() for c in self._patient(patient_id).care_team]

    # -- READ: reference --------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def get_report_template(self, template: TemplateKey) -> dict[str, Any]:
        """The structured report template of a modality: the exams it covers, its sections in order (required or
        optional, with what goes in each) and notes.

        Args:
            template: "chest_radiograph", "radiograph", "ct_head", "ct_chest", "ct_abdomen_pelvis", "ct_spine",
                "mri_brain", "mri_spine", "ultrasound" or "mammography" (get_study_details names a study's one).
        """
        found = self.db.templates[template]
        return {"template": template, **found.model_dump(), "required_sections": found.required_sections}

    @tool(kind=ToolKind.READ)
    def get_follow_up_guidance(self, topic: GuidanceTopic) -> dict[str, Any]:
        """Department guidance: the critical-results communication policy, or follow-up rules for incidental
        findings (Fleischner pulmonary nodules, adrenal incidentalomas, Bosniak renal cysts, BI-RADS assessment,
        abdominal aortic aneurysm surveillance).

        Args:
            topic: "critical_results", "fleischner_solid_nodule", "fleischner_subsolid_nodule",
                "adrenal_incidentaloma", "bosniak_renal_cyst", "bi_rads" or "abdominal_aortic_aneurysm".
        """
        return {"topic": topic, **self.db.guidance[topic].model_dump()}

    # -- THINK -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.THINK)
    def calculate_nodule_follow_up(self, nodule_type: NoduleType, long_axis_mm: Millimetres,
                                   short_axis_mm: Millimetres, multiple: bool, patient_risk: Risk,
                                   solid_component_mm: Annotated[float, Interval(ge=0, le=500)] = 0.0
                                   ) -> dict[str, Any]:
        """Fleischner Society 2017 follow-up for an incidental pulmonary nodule on CT (adults aged 35 or over; not
        for screening, known cancer or immunosuppression): the mean diameter, its size category and the
        recommendation. With several nodules, give the most suspicious one.

        Args:
            nodule_type: "solid", "ground_glass" or "part_solid".
            long_axis_mm: Longest axis in mm, e.g. 8.
            short_axis_mm: Perpendicular short axis in mm, e.g. 6.
            multiple: Whether there is more than one nodule.
            patient_risk: "low" (e.g. never or light smoker, no other risk factors) or "high" (e.g. heavy smoking,
                asbestos exposure, family history of lung cancer, emphysema, fibrosis, upper lobe spiculated nodule).
            solid_component_mm: For a part-solid nodule, the size of its solid component in mm, e.g. 4.
        """
        return fleischner_recommendation(nodule_type, long_axis_mm, short_axis_mm, multiple, patient_risk,
                                         solid_component_mm)

    @tool(kind=ToolKind.THINK)
    def classify_adrenal_incidentaloma(self, size_mm: Millimetres, unenhanced_hu: Attenuation | None = None,
                                       enhanced_hu: Attenuation | None = None,
                                       delayed_hu: Attenuation | None = None) -> dict[str, Any]:
        """Classify an incidental adrenal nodule: lipid-rich adenoma (10 HU or less unenhanced), adenoma by washout
        (absolute 60% or more, relative 40% or more), or indeterminate (4 cm or larger: adrenal MDT); with the
        imaging and biochemical work-up it needs.

        Args:
            size_mm: Largest diameter in mm, e.g. 24.
            unenhanced_hu: Mean attenuation on unenhanced CT in HU, e.g. 6.
            enhanced_hu: Mean attenuation in the portal venous phase (60-75 s) in HU, e.g. 90.
            delayed_hu: Mean attenuation at 15 minutes in HU, e.g. 40.
        """
        return adrenal_assessment(size_mm, unenhanced_hu, enhanced_hu, delayed_hu)

    @tool(kind=ToolKind.THINK)
    def calculate_interval_growth(self, current_mm: Millimetres, prior_mm: Millimetres,
                                  interval_months: Annotated[float, Interval(gt=0, le=240)]) -> dict[str, Any]:
        """How much a lesion or vessel diameter changed since a prior study: change in mm and percent, rate per
        year, and the volume doubling time (assuming a sphere).

        Args:
            current_mm: Diameter now in mm, e.g. 58.
            prior_mm: Diameter on the prior study in mm, e.g. 52.
            interval_months: Months between the studies, e.g. 6.
        """
        return interval_growth(current_mm, prior_mm, interval_months)

    # -- WRITE -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def save_report_draft(self, patient_id: PatientId, accession: Accession, report_text: Text) -> dict[str, Any]:
        """Save a draft of the report (not sent to anyone) and check it against the study's template: the sections
        found and the required ones missing.

        Args:
            patient_id: The patient's id, e.g. "R001".
            accession: The study's accession number, e.g. "RAD24001".
            report_text: The report, one section per heading: "INDICATION: ...\\nTECHNIQUE: ...\\nCOMPARISON: ...\\n
                FINDINGS: ...\\nIMPRESSION: ...".
        """
        patient, study = self._open_study(patient_id, accession)
        sections, missing = self._read_report(study, report_text)
        draft_id = f"DRAFT-{len(self.db.drafts) + 1:03d}"
        self.db.drafts.append(ReportDraft(draft_id=draft_id, patient_id=patient.patient_id, accession=study.accession,
                                          text=report_text, sections=sections, time=self.db.clock))
        return {"draft_id": draft_id, "template": study.template, "sections_found": list(sections),
                "missing_required_sections": missing}

    @tool(kind=ToolKind.WRITE)
    def communicate_critical_finding(self, patient_id: PatientId, accession: Accession, finding: Text,
                                     recipient: Text, urgency: Urgency, read_back: bool,
                                     method: Method = "telephone") -> dict[str, Any]:
        """Tell a clinician responsible for the patient about a result that needs action, and record who was told,
        when, how, and whether they read the result back. Critical results are told directly (telephone or in
        person) with read-back.

        Args:
            patient_id: The patient's id, e.g. "R001".
            accession: The study's accession number, e.g. "RAD24001".
            finding: What was communicated, e.g. "large right pneumothorax with mediastinal shift".
            recipient: The clinician told, by name or role from get_care_team_contacts, e.g. "Dr Amara Okafor".
            urgency: "critical" (act now), "urgent" (act within hours) or "non-urgent".
            read_back: Whether the recipient repeated the result back and it was confirmed correct.
            method: "telephone", "in person" or "secure message".
        """
        patient, study = self._current_study(patient_id, accession)
        person = self._contact(patient, recipient)
        if read_back and method not in VERBAL:
            raise ValueError("read-back needs a verbal communication: use method 'telephone' or 'in person'")
        record = Communication(
            communication_id=f"COM-{len(self.db.communications) + 1:03d}", patient_id=patient.patient_id,
            accession=study.accession, finding=finding, recipient=person.name, recipient_role=person.role,
            urgency=urgency, method=method, read_back=read_back, time=self.db.clock)
        self.db.communications.append(record)
        view = record.model_dump(exclude={"patient_id"})
        if not read_back:
            view["warning"] = ("read-back not confirmed: the communication of a critical or urgent result is "
                               "incomplete until the recipient reads it back")
        return view

    @tool(kind=ToolKind.WRITE)
    def register_incidental_follow_up(self, patient_id: PatientId, accession: Accession, finding: Text,
                                      recommendation: Text,
                                      interval_months: Annotated[int, Interval(ge=0, le=60)]) -> dict[str, Any]:
        """Register a follow-up recommendation (imaging follow-up or referral) in the incidental-findings tracking
        system, so that it is not lost.

        Args:
            patient_id: The patient's id, e.g. "R001".
            accession: The study's accession number, e.g. "RAD24001".
            finding: The finding followed up, e.g. "7 mm solid nodule, right middle lobe".
            recommendation: What is recommended, e.g. "CT chest at 6-12 months".
            interval_months: When the first follow-up is due, in months (0: now, e.g. a referral), e.g. 6.
        """
        patient, study = self._current_study(patient_id, accession)
        follow_up_id = f"FU-{len(self.db.follow_ups) + 1:03d}"
        self.db.follow_ups.append(FollowUp(follow_up_id=follow_up_id, patient_id=patient.patient_id,
                                           accession=study.accession, finding=finding,
                                           recommendation=recommendation, interval_months=interval_months,
                                           time=self.db.clock))
        return {"follow_up_id": follow_up_id, "accession": study.accession, "recommendation": recommendation,
                "interval_months": interval_months}

    @tool(kind=ToolKind.WRITE)
    def sign_final_report(self, patient_id: PatientId, accession: Accession, report_text: Text) -> dict[str, Any]:
        """Sign the final report: it is sent to the referrer at once and cannot be changed afterwards. Communicate
        any critical result before signing.

        Args:
            patient_id: The patient's id, e.g. "R001".
            accession: The study's accession number, e.g. "RAD24001".
            report_text: The report, one section per heading: "INDICATION: ...\\nTECHNIQUE: ...\\nCOMPARISON: ...\\n
                FINDINGS: ...\\nIMPRESSION: ...".
        """
        patient, study = self._open_study(patient_id, accession)
        sections, missing = self._read_report(study, report_text)
        report_id = f"REP-{len(self.db.final_reports) + 1:03d}"
        self.db.final_reports.append(SignedReport(
            report_id=report_id, patient_id=patient.patient_id, accession=study.accession, text=report_text,
            sections=sections, missing_sections=missing, signed_at=self.db.clock))
        out: dict[str, Any] = {"report_id": report_id, "accession": study.accession, "signed_at": self.db.clock,
                               "sent_to": study.referrer, "template": study.template, "sections_found": list(sections),
                               "missing_required_sections": missing}
        if missing:
            out["warning"] = "signed without required sections: " + ", ".join(missing)
        return out
