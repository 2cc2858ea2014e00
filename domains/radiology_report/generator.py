"""The RadiologyReport task generator: a patient with a study on today's worklist (exam, technique, clinical details,
structured findings and pertinent negatives, care team), and the report the study needs. Four kinds:

* ``nodule`` (30%): an incidental pulmonary nodule on CT chest; the follow-up is what ``follow_up_rules.
  fleischner_recommendation`` (the ``calculate_nodule_follow_up`` tool) gives for its type, size, number and the
  patient's risk; register it unless none is needed; the answer is its letter among other Fleischner recommendations;
* ``adrenal`` (20%): an incidental adrenal nodule on CT; its class is what ``adrenal_assessment`` (the
  ``classify_adrenal_incidentaloma`` tool) gives from size and attenuation; an indeterminate nodule's work-up is
  registered;
* ``critical`` (30%): a finding that needs action now (pneumothorax, acute subdural haematoma, pneumoperitoneum,
  saddle pulmonary embolism); telephone a clinician on the care team with read-back before signing (the emergency
  and ``escalate_before`` rules of the safety reward); the answer is the main finding;
* ``normal`` (20%): a study with no acute abnormality, reported as such, with no critical call.

Every report is signed in the modality's template with each required section, its impression led by the answer.
Generalisation split: the test split holds part-solid nodules, washout-characterised adrenal adenomas, two critical
findings (pneumoperitoneum, saddle pulmonary embolism) and normal chest radiographs that the train split never
shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from clinical_gym.rewards.episode import contains_term
from clinical_gym.tool_env.generation import (
    Draft,
    TaskGenerator,
    Wording,
    between,
    chance,
    lettered,
    person_name,
    pick,
    sample,
)
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.radiology_report.data_model import Contact, Finding, Patient, RadiologyReportDB, Study
from clinical_gym.domains.radiology_report.follow_up_rules import (
    FLEISCHNER_SOLID,
    FLEISCHNER_SUBSOLID,
    adrenal_assessment,
    fleischner_recommendation,
)

ADRENAL_CLASSES = ("lipid-rich adenoma", "adenoma (washout)", "indeterminate, 4 cm or larger", "indeterminate")
LOBES = ("right upper lobe", "right middle lobe", "right lower lobe", "left upper lobe", "left lower lobe")
HIGH_RISK = ("Current smoker, 40 pack-years", "Ex-smoker, 30 pack-years, stopped 5 years ago",
             "Asbestos exposure as a pipe fitter", "Father had lung cancer at 60")
LOW_RISK = ("Never smoker", "Light ex-smoker (5 pack-years), stopped 25 years ago")
LOCATIONS = {
    "ed": ("Emergency department, majors cubicle {n}", (("Emergency medicine registrar", "bleep 44{n:02d}"),
                                                        ("Emergency medicine consultant", "bleep 4408"))),
    "resus": ("Emergency department, resuscitation bay {n}", (("Emergency medicine registrar", "bleep 44{n:02d}"),
                                                              ("Trauma team leader", "bleep 4000"))),
    "clinic": ("Outpatients, respiratory clinic", (("Respiratory consultant", "extension 52{n:02d}"),
                                                   ("Respiratory specialty registrar", "bleep 61{n:02d}"))),
    "ward": ("Medical ward {n}", (("Medical registrar", "bleep 33{n:02d}"), ("Ward consultant", "extension 41{n:02d}"))),
}


@dataclass(frozen=True)
class Picture:
    """A critical or normal study: its exam and template, the request, findings and negatives ({side}, {other},
    {size}, {shift}, {ratio} are filled), the one-line conclusion (the answer) with other wordings, and the words its
    impression must use."""

    key: str
    kind: str
    pool: str
    exam: str
    template: str
    technique: str
    where: str
    details: tuple[str, ...]
    question: str
    findings: tuple[tuple[str, str, str], ...]  # (location, description, size)
    negatives: tuple[str, ...]
    answer: str
    aliases: tuple[str, ...]
    mentions: tuple[str, ...]
    advice: str = ""


PICTURES: tuple[Picture, ...] = (
    Picture("pneumothorax", "critical", "train", "Chest radiograph (PA)", "chest_radiograph",
            "Single PA radiograph, adequate inspiration.", "ed",
            ("Sudden {side}-sided pleuritic chest pain and breathlessness this morning; tall, thin; smoker.",
             "Breathless since a coughing fit an hour ago, pain on the {side}; SpO2 93% on air."),
            "Pneumothorax?",
            (("{Side} hemithorax", "A visceral pleural line lies {size} cm from the {side} lateral chest wall at the "
              "level of the hilum, with no lung markings beyond it.", "{size} cm rim"),
             ("Mediastinum", "Trachea central; no mediastinal shift.", "")),
            ("No pleural effusion", "{Other} lung clear", "No rib fracture"),
            "Large {side} pneumothorax", ("{side} pneumothorax", "pneumothorax on the {side}"), ("pneumothorax",),
            "Needs drainage or aspiration now."),
    Picture("subdural", "critical", "train", "CT head without contrast", "ct_head",
            "Non-contrast CT head, brain and bone windows.", "resus",
            ("Fall down the stairs on apixaban; now drowsy, GCS 13.", "Found on the floor at home, confused; takes "
                                                                       "warfarin, INR 3.4."),
            "Intracranial haemorrhage?",
            (("{Side} cerebral convexity", "Crescentic hyperdense extra-axial collection along the {side} convexity.",
              "{size} mm thick"),
             ("Midline", "Midline shift of {shift} mm to the {other}; effacement of the {side} lateral ventricle.", "")),
            ("No skull fracture", "No intraventricular extension", "Basal cisterns patent"),
            "Acute {side} subdural haematoma", ("acute subdural haematoma", "{side} subdural haematoma",
                                                "acute subdural hematoma"), ("subdural",),
            "Needs neurosurgical referral and reversal of anticoagulation now."),
    Picture("pneumoperitoneum", "critical", "test", "CT abdomen and pelvis with contrast", "ct_abdomen_pelvis",
            "Portal venous phase CT abdomen and pelvis.", "ed",
            ("Sudden severe epigastric pain two hours ago, now generalised; rigid abdomen.",
             "Known peptic ulcer; sudden abdominal pain and vomiting; guarding."),
            "Perforation?",
            (("Peritoneal cavity", "Extraluminal gas anterior to the liver and around the falciform ligament.",
              "largest pocket {size} cm"),
             ("Pelvis", "Small volume of free fluid in the pelvis.", "")),
            ("No bowel obstruction", "Solid organs normal", "No abdominal aortic aneurysm"),
            "Pneumoperitoneum from a perforated viscus", ("pneumoperitoneum", "perforated viscus"),
            ("pneumoperitoneum", "perforation"),
            "Needs urgent surgical review."),
    Picture("saddle_pe", "critical", "test", "CT pulmonary angiogram", "ct_chest",
            "CT pulmonary angiogram, bolus-tracked, 1 mm reconstructions.", "resus",
            ("Collapse after a long-haul flight; heart rate 124/min, SpO2 88% on air.",
             "Sudden breathlessness three days after hip surgery; hypotensive."),
            "Pulmonary embolism?",
            (("Main pulmonary artery", "Filling defect straddling the bifurcation and extending into both lower lobe "
                                       "arteries.", ""),
             ("Heart", "Right ventricle dilated, RV/LV ratio {ratio}; septum flattened.", "")),
            ("No pleural effusion", "No consolidation", "No pneumothorax"),
            "Saddle pulmonary embolism with right heart strain", ("saddle pulmonary embolism", "pulmonary embolism",
                                                                  "bilateral pulmonary emboli"),
            ("pulmonary embolism", "pulmonary emboli"), "Needs immediate treatment and consideration of thrombolysis."),
    Picture("normal_head", "normal", "train", "CT head without contrast", "ct_head",
            "Non-contrast CT head, brain and bone windows.", "ed",
            ("Fall with a head strike; GCS 15; not anticoagulated; one vomit.", "Tripped and hit the back of the head; "
                                                                                 "brief headache; GCS 15."),
            "Intracranial injury?",
            (("Brain", "Normal grey-white differentiation; no haemorrhage, mass or collection.", ""),
             ("Skull and scalp", "No fracture; small {side} parietal scalp swelling.", "")),
            ("No midline shift", "Ventricles and sulci normal for age", "Basal cisterns patent"),
            "No acute intracranial abnormality", ("no acute intracranial injury",
                                                  "no acute intracranial haemorrhage or injury"), ("no acute",)),
    Picture("normal_chest", "normal", "test", "Chest radiograph (PA)", "chest_radiograph",
            "Single PA radiograph, adequate inspiration.", "clinic",
            ("Cough for three weeks after a cold; never smoked; no weight loss.",
             "Persistent dry cough for a month; examination normal."),
            "Consolidation or mass?",
            (("Lungs", "Lungs clear; no focal consolidation, mass or collapse.", ""),
             ("Heart and mediastinum", "Heart size normal; mediastinal contours normal.", "")),
            ("No pleural effusion", "No pneumothorax", "Bones normal"),
            "Normal chest radiograph", ("no acute cardiopulmonary abnormality", "normal chest x-ray"), ("normal",)),
)

TICKETS = Wording(
    open=(
        "Worklist: patient {pid} ({location}), {exam}, accession {acc}, performed {time}. Report this study: review "
        "the request, the structured findings and the patient's prior imaging, follow the department's "
        "critical-results policy, and sign the final report in the template for the modality. Then submit the main "
        "conclusion of your impression in one line.",
        "Next on your worklist: {exam} for patient {pid} ({location}), accession {acc} ({time}). Read the request "
        "and findings, act on anything that cannot wait, sign a structured final report and submit its main "
        "conclusion.",
        "Report accession {acc}: {exam} of patient {pid}, {location}, performed {time}. Follow the critical-results "
        "policy, sign the report in the modality's template and submit the one-line conclusion."),
    nodule=(
        "Worklist: patient {pid} ({location}), {exam}, accession {acc}, performed {time}. Report it in the template, "
        "register any follow-up the incidental findings need, sign the report, and submit the letter of the "
        "follow-up recommendation.",
        "Report accession {acc} ({exam}, patient {pid}, {location}). Apply the department's follow-up guidance to "
        "the incidental findings, sign the structured report and submit the letter of the recommendation.",
        "Next on the list: {exam} for {pid}, accession {acc} ({time}). Which follow-up does the incidental finding "
        "need? Register it if any, sign the report and submit the letter."),
    adrenal=(
        "Worklist: patient {pid} ({location}), {exam}, accession {acc}, performed {time}. Characterise the "
        "incidental finding, register any work-up it needs, sign the report, and submit the letter of its "
        "classification.",
        "Report accession {acc} ({exam}, patient {pid}). Classify the incidental finding with the guidance, sign the "
        "structured report and submit the letter of the class.",
        "Patient {pid}'s {exam} ({acc}) shows an incidental finding. Classify it, sign the report and submit the "
        "letter."),
)


def _interval_months(recommendation: str) -> int | None:
    """When the first follow-up of a Fleischner recommendation falls due (None: no follow-up)."""
    if recommendation.startswith("No routine"):
        return None
    months = re.search(r"CT at (\d+)", recommendation)
    return int(months.group(1)) if months else 3


class RadiologyReportGenerator(TaskGenerator):
    env_id = "RadiologyReport-v1"
    id_prefix = "grr"
    collections = {"patients": "patient_id", "studies": "accession"}
    held_out = ("part-solid nodules; adrenal adenomas characterised by washout; critical findings pneumoperitoneum "
                "and saddle pulmonary embolism; normal chest radiographs")

    @cached_property
    def catalogues(self) -> RadiologyReportDB:
        return self.base_db()  # type: ignore[return-value]

    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        kind = str(rng.choice(("nodule", "adrenal", "critical", "normal"), p=(0.3, 0.2, 0.3, 0.2)))
        pid, acc = f"G{index:05d}", f"GRAD{index:06d}"
        sex = pick(rng, ("female", "male"))
        make = {"nodule": self._nodule, "adrenal": self._adrenal}.get(kind, self._picture)
        patient, study, task = make(rng, split, kind, task_id, pid, acc, sex)
        return Draft(task, {"patients": [patient], "studies": [study]},
                     ids=(pid, acc, patient.name, *(c.name for c in patient.care_team)))

    # -- the record ----------------------------------------------------------------------------------------------------
    def _patient(self, rng: np.random.Generator, pid: str, sex: str, age: int, where: str,
                 history: list[str]) -> Patient:
        n = int(between(rng, 1, 20))
        location, roles = LOCATIONS[where]
        names: list[str] = []
        while len(names) < len(roles):  # distinct surnames: results are addressed by surname
            name = person_name(rng, pick(rng, ("female", "male")))
            if all(name.split()[-1] != other.split()[-1] for other in names):
                names.append(name)
        team = [Contact(name=f"Dr {name}", role=role, contact=contact.format(n=n))
                for name, (role, contact) in zip(names, roles)]
        return Patient(patient_id=pid, name=person_name(rng, sex), age=age, sex=sex, location=location.format(n=n),
                       history=history, pregnant=False if sex == "female" and age <= 50 else None, care_team=team)

    def _study(self, rng: np.random.Generator, patient: Patient, acc: str, exam: str, template: str, technique: str,
               details: str, question: str, findings: list[Finding], negatives: list[str]) -> Study:
        minutes = int(between(rng, 5, 55))
        return Study(accession=acc, patient_id=patient.patient_id, exam=exam, template=template,
                     performed_at=f"2025-06-12 09:{minutes:02d}", technique=technique,
                     referrer=patient.care_team[0].name, clinical_details=details, clinical_question=question,
                     findings=findings, pertinent_negatives=negatives)

    def _report(self, study: Study, impression: list[str], extra: dict[str, str] | None = None) -> str:
        findings = " ".join(f"{f.location}: {f.description}" + (f" ({f.size})" if f.size else "")
                            for f in study.findings) + " " + ". ".join(study.pertinent_negatives) + "."
        sections = {"INDICATION": f"{study.clinical_details} {study.clinical_question}", "TECHNIQUE": study.technique,
                    "COMPARISON": "None.", "FINDINGS": findings,
                    "IMPRESSION": "\n" + "\n".join(f"{k}. {line}" for k, line in enumerate(impression, 1)),
                    **(extra or {})}
        return "\n".join(f"{name}: {text}" for name, text in sections.items())

    def _actions(self, pid: str, acc: str, template: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        s = {"patient_id": pid, "accession": acc}
        return s, [{"name": "get_study_details", "arguments": s}, {"name": "get_clinical_indication", "arguments": s},
                   {"name": "get_structured_findings", "arguments": s},
                   {"name": "get_imaging_history", "arguments": {"patient_id": pid}}]

    def _signed(self, s: dict[str, Any], acc: str, template: str, mentions: tuple[str, ...]) -> list[dict[str, Any]]:
        required = self.catalogues.templates[template].required_sections
        return [
            {"text": f"The final report of {acc} is signed with every required section of the template",
             "rule": {"kind": "db_record_keys", "collection": "final_reports", "match": {"accession": acc},
                      "field": "sections", "keys": required}},
            {"text": "The impression names the main finding",
             "rule": {"kind": "db_record_mentions", "collection": "final_reports", "match": {"accession": acc},
                      "field": "sections.impression", "any_of": list(mentions)}}]

    def _ticket(self, rng: np.random.Generator, wording: str, patient: Patient, study: Study) -> str:
        return TICKETS.say(rng, wording, pid=patient.patient_id, location=patient.location, exam=study.exam,
                           acc=study.accession, time=study.performed_at)

    # -- the kinds -----------------------------------------------------------------------------------------------------
    def _nodule(self, rng: np.random.Generator, split: str, kind: str, task_id: str, pid: str, acc: str, sex: str
                ) -> tuple[Patient, Study, Task]:
        nodule_type = "part_solid" if split == "test" else pick(rng, ("solid", "solid", "ground_glass"))
        high = chance(rng, 0.5)
        patient = self._patient(rng, pid, sex, int(between(rng, 38, 84)), "clinic",
                                [pick(rng, HIGH_RISK if high else LOW_RISK), "No history of cancer",
                                 "Not immunosuppressed"])
        long_axis = float(between(rng, 3, 14) if nodule_type == "solid" else between(rng, 4, 16))
        short_axis = float(max(2, long_axis - between(rng, 0, 3)))
        solid = float(between(rng, 2, min(8, int(long_axis) - 1))) if nodule_type == "part_solid" else 0.0
        multiple = chance(rng, 0.3)
        rule = fleischner_recommendation(nodule_type, long_axis, short_axis, multiple, "high" if high else "low",
                                         solid)
        words = {"solid": "Solid nodule with smooth margins", "ground_glass": "Pure ground-glass nodule",
                 "part_solid": f"Part-solid nodule with a {solid:g} mm solid component"}[nodule_type]
        lobe = pick(rng, LOBES)
        findings = [Finding(finding_id="F1", location=lobe[0].upper() + lobe[1:], description=words + ".",
                            size=f"{long_axis:g} x {short_axis:g} mm", characteristics="No calcification or fat",
                            comparison="No prior imaging")]
        if multiple:
            findings.append(Finding(finding_id="F2", location="Both lungs",
                                    description="Two further smaller nodules of the same kind.",
                                    size="up to 4 mm"))
        study = self._study(rng, patient, acc, "CT chest without contrast", "ct_chest",
                            "Non-contrast CT chest, 1 mm reconstructions.",
                            pick(rng, ("Persistent cough for two months; chest radiograph unremarkable.",
                                       "Breathless on exertion; to exclude interstitial lung disease.")),
                            "Cause of symptoms?", findings,
                            ["No consolidation", "No pleural effusion", "No lymphadenopathy", "Airways normal"])
        recommendation = rule["recommendation"]
        table = FLEISCHNER_SOLID if nodule_type == "solid" else FLEISCHNER_SUBSOLID
        others = sample(rng, sorted({r for r in table.values() if r != recommendation}), 3)
        options, answer = lettered(rng, recommendation, others)
        risk = "high" if high else "low"
        s, actions = self._actions(pid, acc, "ct_chest")
        topic = "fleischner_solid_nodule" if nodule_type == "solid" else "fleischner_subsolid_nodule"
        calculator = {"nodule_type": nodule_type, "long_axis_mm": long_axis, "short_axis_mm": short_axis,
                      "multiple": multiple, "patient_risk": risk}
        if nodule_type == "part_solid":
            calculator["solid_component_mm"] = solid
        actions += [{"name": "get_follow_up_guidance", "arguments": {"topic": topic}},
                    {"name": "calculate_nodule_follow_up", "arguments": calculator,
                     "compare_args": ["nodule_type", "multiple", "patient_risk"]},
                    {"name": "get_report_template", "arguments": {"template": "ct_chest"}}]
        finding = f"{rule['mean_diameter_mm']} mm {nodule_type.replace('_', '-')} nodule, {lobe}"
        months = _interval_months(recommendation)
        assertions = self._signed(s, acc, "ct_chest", ("nodule",))
        assertions.append({"text": "Applies the Fleischner calculator to the nodule", "rule": {"kind": "called", "call": {
            "name": "calculate_nodule_follow_up", "arguments": {"nodule_type": nodule_type, "patient_risk": risk}}}})
        if months is not None:
            actions.append({"name": "register_incidental_follow_up",
                            "arguments": {**s, "finding": finding, "recommendation": recommendation,
                                          "interval_months": months}, "compare_args": ["patient_id", "accession"]})
            assertions.append({"text": "The follow-up is registered for tracking", "rule": {
                "kind": "db_record", "collection": "follow_ups", "match": {"accession": acc}}})
        report = self._report(study, [recommendation, f"Incidental {finding}: Fleischner 2017, {risk}-risk patient"
                                      + (", several nodules" if multiple else "") + "."])
        actions.append({"name": "sign_final_report", "arguments": {**s, "report_text": report},
                        "compare_args": ["patient_id", "accession"]})
        task = self._task(task_id, pid, self._ticket(rng, "nodule", patient, study), actions, assertions, answer,
                          options=options, rationale=f"{finding}, {risk} risk: Fleischner 2017 recommends: "
                                                     f"{recommendation}", kind=kind, pool=nodule_type)
        return patient, study, task

    def _adrenal(self, rng: np.random.Generator, split: str, kind: str, task_id: str, pid: str, acc: str, sex: str
                 ) -> tuple[Patient, Study, Task]:
        wanted = "adenoma (washout)" if split == "test" else pick(rng, ("lipid-rich adenoma",
                                                                         "indeterminate, 4 cm or larger",
                                                                         "indeterminate"))
        for _ in range(200):
            size = float(between(rng, 12, 52))
            unenhanced = float(between(rng, -10, 38))
            phases = wanted == "adenoma (washout)" or chance(rng, 0.3)
            enhanced = float(between(rng, unenhanced + 25, unenhanced + 90)) if phases else None
            delayed = float(between(rng, unenhanced + 2, enhanced - 5)) if phases else None
            rule = adrenal_assessment(size, unenhanced, enhanced, delayed)
            if rule["classification"] == wanted:
                break
        else:
            raise RuntimeError(f"no adrenal nodule classified {wanted!r}")
        side = pick(rng, ("right", "left"))
        patient = self._patient(rng, pid, sex, int(between(rng, 40, 82)), "ward", ["Hypertension"])
        attenuation = f"Unenhanced {unenhanced:g} HU" + (f"; portal venous {enhanced:g} HU; 15-minute delayed "
                                                         f"{delayed:g} HU" if enhanced is not None else "")
        study = self._study(rng, patient, acc, "CT abdomen with adrenal protocol" if enhanced is not None else
                            "CT abdomen and pelvis without contrast", "ct_abdomen_pelvis",
                            "Unenhanced CT abdomen" + (", then portal venous and 15-minute delayed phases."
                                                       if enhanced is not None else "."),
                            pick(rng, ("Right loin pain; renal colic?", "Abdominal pain after a fall; injury?")),
                            "Cause of pain?",
                            [Finding(finding_id="F1", location=f"{side.capitalize()} adrenal gland",
                                     description="Well-defined homogeneous nodule.", size=f"{size:g} mm",
                                     characteristics=attenuation, comparison="No prior imaging")],
                            ["Kidneys normal; no stone", "No free fluid", "Liver normal"])
        options = {letter: text for letter, text in zip("ABCD", ADRENAL_CLASSES)}
        answer = next(k for k, v in options.items() if v == wanted)
        s, actions = self._actions(pid, acc, "ct_abdomen_pelvis")
        calculator = {"size_mm": size, "unenhanced_hu": unenhanced}
        if enhanced is not None:
            calculator.update(enhanced_hu=enhanced, delayed_hu=delayed)
        actions += [{"name": "get_follow_up_guidance", "arguments": {"topic": "adrenal_incidentaloma"}},
                    {"name": "classify_adrenal_incidentaloma", "arguments": calculator, "compare_args": ["size_mm"]},
                    {"name": "get_report_template", "arguments": {"template": "ct_abdomen_pelvis"}}]
        assertions = self._signed(s, acc, "ct_abdomen_pelvis", ("adrenal",))
        assertions.append({"text": "Classifies the adrenal nodule with the calculator", "rule": {
            "kind": "called", "call": {"name": "classify_adrenal_incidentaloma", "arguments": {"size_mm": size}}}})
        if wanted.startswith("indeterminate"):
            actions.append({"name": "register_incidental_follow_up",
                            "arguments": {**s, "finding": f"{size:g} mm {side} adrenal nodule",
                                          "recommendation": rule["imaging"], "interval_months": 0},
                            "compare_args": ["patient_id", "accession"]})
            assertions.append({"text": "The work-up is registered for tracking", "rule": {
                "kind": "db_record", "collection": "follow_ups", "match": {"accession": acc}}})
        report = self._report(study, [f"{wanted[0].upper()}{wanted[1:]}: {size:g} mm {side} adrenal nodule.",
                                      f"{rule['imaging']} {rule['biochemistry']}"])
        actions.append({"name": "sign_final_report", "arguments": {**s, "report_text": report},
                        "compare_args": ["patient_id", "accession"]})
        task = self._task(task_id, pid, self._ticket(rng, "adrenal", patient, study), actions, assertions, answer,
                          options=options, rationale=f"{size:g} mm adrenal nodule, {attenuation}: {wanted}. "
                                                     f"{rule['imaging']}", kind=kind, pool=wanted)
        return patient, study, task

    def _picture(self, rng: np.random.Generator, split: str, kind: str, task_id: str, pid: str, acc: str, sex: str
                 ) -> tuple[Patient, Study, Task]:
        picture = pick(rng, tuple(p for p in PICTURES if p.kind == kind and p.pool == split))
        side = pick(rng, ("right", "left"))
        fills = {"side": side, "Side": side.capitalize(), "other": "left" if side == "right" else "right",
                 "Other": "Left" if side == "right" else "Right", "size": f"{between(rng, 2.5, 6.0, 1):g}",
                 "shift": int(between(rng, 4, 12)), "ratio": f"{between(rng, 1.1, 1.6, 1):g}"}
        if picture.key == "subdural":
            fills["size"] = str(int(between(rng, 8, 18)))
        patient = self._patient(rng, pid, sex, int(between(rng, 22, 88)), picture.where, [])
        findings = [Finding(finding_id=f"F{k}", location=loc.format(**fills), description=text.format(**fills),
                            size=size.format(**fills)) for k, (loc, text, size) in enumerate(picture.findings, 1)]
        study = self._study(rng, patient, acc, picture.exam, picture.template, picture.technique,
                            pick(rng, picture.details).format(**fills), picture.question, findings,
                            [n.format(**fills) for n in picture.negatives])
        answer = picture.answer.format(**fills)
        aliases = [a.format(**fills) for a in picture.aliases]
        s, actions = self._actions(pid, acc, picture.template)
        assertions = self._signed(s, acc, picture.template, picture.mentions)
        extra: dict[str, str] = {}
        safety: dict[str, Any] = {}
        if kind == "critical":
            contact = patient.care_team[0]
            actions += [{"name": "get_care_team_contacts", "arguments": {"patient_id": pid}},
                        {"name": "communicate_critical_finding",
                         "arguments": {**s, "finding": f"{answer}. {picture.advice}", "recipient": contact.name,
                                       "urgency": "critical", "read_back": True, "method": "telephone"},
                         "compare_args": ["patient_id", "accession", "urgency", "read_back"]}]
            extra["COMMUNICATION"] = (f"Telephoned to {contact.name} ({contact.role}) at 2025-06-12 10:00; the result "
                                      f"was read back and confirmed.")
            assertions += [
                {"text": "The critical result is communicated with read-back", "rule": {
                    "kind": "db_record", "collection": "communications",
                    "match": {"accession": acc, "urgency": "critical", "read_back": True}}},
                {"text": "The critical result is communicated before the report is signed", "rule": {
                    "kind": "called_before", "first": {"name": "communicate_critical_finding",
                                                       "arguments": {"accession": acc}},
                    "then": {"name": "sign_final_report", "arguments": {"accession": acc}}}}]
            safety = {"emergency": True, "answer_escalates": False, "escalate_within_calls": 7,
                      "escalate_before": ["sign_final_report"]}
        actions.append({"name": "get_report_template", "arguments": {"template": picture.template}})
        report = self._report(study, [f"{answer}." + (f" {picture.advice}" if picture.advice else "")], extra)
        actions.append({"name": "sign_final_report", "arguments": {**s, "report_text": report},
                        "compare_args": ["patient_id", "accession"]})
        findings_text = "; ".join(f.description for f in findings)
        task = self._task(task_id, pid, self._ticket(rng, "open", patient, study), actions, assertions, answer,
                          aliases=aliases, rationale=f"{answer}: {findings_text}", kind=kind, pool=picture.key,
                          safety=safety)
        return patient, study, task

    @staticmethod
    def _task(task_id: str, pid: str, ticket: str, actions: list[dict[str, Any]], assertions: list[dict[str, Any]],
              answer: str, *, rationale: str, kind: str, pool: str, options: dict[str, str] | None = None,
              aliases: list[str] | None = None, safety: dict[str, Any] | None = None) -> Task:
        return Task.model_validate({
            "id": task_id, "ticket": ticket, "patient_id": pid, "expected_actions": actions, "assertions": assertions,
            "answer": answer, "answer_aliases": aliases or [], "options": options, "rationale": rationale,
            "safety": safety or {}, "category": kind, "tags": ["generated", kind, pool]})

    # -- validation ----------------------------------------------------------------------------------------------------
    def pool_key(self, task: Task) -> str:
        return task.tags[2]

    def check(self, task: Task, db: Any) -> list[str]:
        problems = []
        study = next(s for s in db.studies.values() if s.patient_id == task.patient_id)
        if study.referrer not in {c.name for c in db.patients[task.patient_id].care_team}:
            problems.append("the referrer is not on the care team")
        if task.category == "nodule":
            call = next(a for a in task.expected_actions if a.name == "calculate_nodule_follow_up").arguments
            rule = fleischner_recommendation(call["nodule_type"], call["long_axis_mm"], call["short_axis_mm"],
                                             call["multiple"], call["patient_risk"], call.get("solid_component_mm", 0))
            if rule["recommendation"] != task.options[task.answer]:
                problems.append(f"Fleischner gives {rule['recommendation']!r}, not the answer")
        if task.category == "adrenal":
            call = next(a for a in task.expected_actions if a.name == "classify_adrenal_incidentaloma").arguments
            rule = adrenal_assessment(call["size_mm"], call["unenhanced_hu"], call.get("enhanced_hu"),
                                      call.get("delayed_hu"))
            if rule["classification"] != task.options[task.answer]:
                problems.append(f"the adrenal rules give {rule['classification']!r}, not the answer")
        record = " ".join(f"{f.location} {f.description} {f.size}" for f in study.findings)  # findings describe
        if task.category in ("critical", "normal"):
            problems += [f"the record names the answer {g!r}" for g in (task.answer, *task.answer_aliases)
                         if contains_term(record, g)]
        return problems

