"""The DrugInteraction tools: the patient's record (READ), the drug reference and safety checks (READ), dose and
CYP450 calculators (THINK), and prescribing, dose changes, discontinuation and interaction alerts (WRITE).

Tools refuse with ``KeyError`` / ``ValueError`` messages meant for the agent (unknown patient or drug, a drug the
patient is not taking). Every WRITE tool adds one record to the database it was built with: the environment gives
each episode its own copy.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from annotated_types import Interval, MinLen

from clinical_gym.cases.schema import normalize
from clinical_gym.rewards.episode import contains_term
from clinical_gym.domains.drug_interaction.data_model import (
    SEVERITY_RANK,
    ActiveMedication,
    Discontinuation,
    DoseChange,
    DoseUnit,
    DrugInteractionDB,
    DrugMonograph,
    Frequency,
    InteractionAlert,
    LabResult,
    Patient,
    Prescription,
    Regimen,
    Route,
    Severity,
)
from clinical_gym.drugs import DrugReference, Interaction, reference
from clinical_gym.drugs.units import creatinine_clearance
from clinical_gym.domains.lookups import PatientLookup
from clinical_gym.domains.records import result_view
from clinical_gym.tools import ToolKind, Toolkit, tool

PatientId = Annotated[str, MinLen(1)]
DrugName = Annotated[str, MinLen(1)]
Text = Annotated[str, MinLen(1)]
Dose = Annotated[float, Interval(gt=0, le=1_000_000)]
RENAL_TESTS = ("creatinine", "egfr")
EGFR_STAGES = ((90, "G1 (90 or more)"), (60, "G2 (60-89)"), (45, "G3a (45-59)"), (30, "G3b (30-44)"),
               (15, "G4 (15-29)"), (0, "G5 (below 15)"))
MEASURE_TEXT = {"eGFR": "eGFR (mL/min/1.73 m²)", "CrCl": "Cockcroft-Gault creatinine clearance (mL/min)"}


def rule_view(rule: Interaction, a: str, b: str) -> dict[str, Any]:
    return {"drugs": [a, b], "severity": rule.severity, "mechanism": rule.mechanism, "management": rule.management}


def pregnancy_text(d: DrugMonograph) -> str:
    """The drug's pregnancy advice in a line: one verdict, or one per trimester where they differ, and the note."""
    safety = d.pregnancy
    if safety is None:
        return "no entry in the reference"
    verdicts = safety.verdicts
    text = verdicts[0] if len(set(verdicts)) == 1 else (
        f"first trimester {verdicts[0]}, second {verdicts[1]}, third {verdicts[2]}")
    return text + (f": {safety.note}" if safety.note else "")


def latest(patient: Patient, test: str) -> LabResult | None:
    """The patient's most recent numeric result of ``test`` (normalised name), or None."""
    found = [r for r in patient.labs if normalize(r.test) == test and r.value is not None]
    return max(found, key=lambda r: r.time, default=None)


def renal_value(patient: Patient, drug: DrugMonograph) -> float | None:
    """The patient's renal function in the measure the drug is dosed by (latest eGFR, or Cockcroft-Gault creatinine
    clearance from the latest creatinine), or None when it is not recorded."""
    if drug.renal_measure == "eGFR":
        egfr = latest(patient, "egfr")
        return None if egfr is None else egfr.value
    creatinine = latest(patient, "creatinine")
    if creatinine is None or not creatinine.value:
        return None
    return creatinine_clearance(patient.age, patient.weight_kg, creatinine.value, patient.sex)


class DrugInteractionTools(PatientLookup[Patient], Toolkit):
    """The domain's tools over one database (an episode's copy)."""

    patient_id_example = "P001"

    def __init__(self, db: DrugInteractionDB, drugs: DrugReference | None = None) -> None:
        self.db = db
        self.reference: DrugReference = drugs or reference()

    # -- helpers ---------------------------------------------------------------------------------------------------
    def _active(self, patient: Patient) -> dict[str, ActiveMedication]:
        return {m.drug: m for m in self.db.active_medications(patient.patient_id)[0]}

    def _taking(self, patient: Patient, drug: str) -> ActiveMedication:
        active = self._active(patient)
        if drug not in active:
            raise ValueError(f"{patient.patient_id} is not taking {drug}; current medicines: "
                             f"{', '.join(active) or 'none'}")
        return active[drug]

    def _pair(self, drug_a: str, drug_b: str) -> tuple[DrugMonograph, DrugMonograph]:
        a, b = self.reference.resolve(drug_a), self.reference.resolve(drug_b)
        if a.name == b.name:
            raise ValueError(f"both names refer to {a.name}; give two different drugs")
        return a, b

    def _screen(self, patient: Patient, drug: DrugMonograph, others: list[str]) -> tuple[list[str], list[str]]:
        """Problems (issues) and points needing care (cautions) with giving ``drug`` to ``patient`` alongside the
        medicines ``others``."""
        issues: list[str] = []
        cautions: list[str] = []
        for allergy in patient.allergies:
            match = self.reference.allergy_match(allergy.substance, drug)
            verdict = match.verdict(allergy.severity) if match is not None else None
            if match is not None and verdict != "no special precautions":
                (issues if verdict == "avoid" else cautions).append(
                    f"allergy to {allergy.substance} ({allergy.severity}): {match.relation}")
        if drug.name in others:
            cautions.append("already taking it")
        for name in others:
            rule = self.reference.interaction(drug, self.reference.drugs[name])
            if rule is not None:
                target = issues if SEVERITY_RANK[rule.severity] >= SEVERITY_RANK["major"] else cautions
                target.append(f"{rule.severity} interaction with {name}: {rule.mechanism}")
        value = renal_value(patient, drug)
        band = None if value is None else self.reference.renal_band(drug, value)
        if band is not None and (band.avoid or band.high is not None):
            (issues if band.avoid else cautions).append(
                f"renal function ({drug.renal_measure} {value:g}): {band.advice}")
        verdict = self.reference.pregnancy_verdict(drug, patient.gestation_weeks) if patient.pregnant else None
        if verdict is not None and verdict != "compatible" and drug.pregnancy is not None:
            (issues if verdict in ("avoid", "contraindicated") else cautions).append(
                f"pregnancy: {verdict}. {drug.pregnancy.note}".strip())
        if patient.hepatic_impairment != "none" and drug.hepatic != "no adjustment":
            avoid = drug.hepatic == "avoid" or (drug.hepatic == "avoid in severe impairment"
                                                and patient.hepatic_impairment == "severe")
            (issues if avoid else cautions).append(f"hepatic impairment: {drug.hepatic}. {drug.hepatic_note}".strip())
        issues += [f"avoid in {c}" for c in drug.avoid_in_conditions
                   if any(contains_term(condition, c) for condition in patient.conditions)]
        return issues, cautions

    # -- READ: the patient -------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def get_patient_profile(self, patient_id: PatientId) -> dict[str, Any]:
        """Demographics and history of a patient: age, sex, weight, height, pregnancy and breastfeeding, hepatic
        impairment, medical conditions and social history.

        Args:
            patient_id: The patient's id, e.g. "P001".
        """
        p = self._patient(patient_id)
        profile: dict[str, Any] = {"patient_id": p.patient_id, "name": p.name, "age": p.age, "sex": p.sex,
                                   "weight_kg": p.weight_kg, "height_cm": p.height_cm}
        if p.sex == "female":
            profile["pregnant"] = "unknown" if p.pregnant is None else p.pregnant
            if p.gestation_weeks is not None:
                profile["gestation_weeks"] = p.gestation_weeks
            profile["breastfeeding"] = p.breastfeeding
        profile.update(hepatic_impairment=p.hepatic_impairment, conditions=p.conditions,
                       social_history=p.social_history)
        return profile

    @tool(kind=ToolKind.READ)
    def get_medication_list(self, patient_id: PatientId) -> dict[str, Any]:
        """The patient's current medicines with dose, frequency, route and indication, including changes made during
        this encounter, and the medicines stopped or withheld during it.

        Args:
            patient_id: The patient's id, e.g. "P001".
        """
        p = self._patient(patient_id)
        active, stopped = self.db.active_medications(p.patient_id)
        return {"current": [{"drug": m.drug, **m.regimen.model_dump(), "indication": m.indication,
                             "status": m.status} for m in active],
                "stopped_this_encounter": [{"drug": d.drug, "reason": d.reason,
                                            "status": "withheld" if d.temporary else "stopped"} for d in stopped]}

    @tool(kind=ToolKind.READ)
    def get_allergies(self, patient_id: PatientId) -> dict[str, Any]:
        """Documented drug allergies of a patient, with the reaction and its severity.

        Args:
            patient_id: The patient's id, e.g. "P001".
        """
        p = self._patient(patient_id)
        if not p.allergies:
            return {"allergies": [], "summary": "No known drug allergies."}
        return {"allergies": [a.model_dump() for a in p.allergies]}

    @tool(kind=ToolKind.READ)
    def get_renal_function(self, patient_id: PatientId) -> dict[str, Any]:
        """Serum creatinine (µmol/L) and eGFR (mL/min/1.73 m²) results, oldest first, the CKD stage of the latest
        eGFR, and the age, sex and weight needed for a Cockcroft-Gault creatinine clearance.

        Args:
            patient_id: The patient's id, e.g. "P001".
        """
        p = self._patient(patient_id)
        renal = {"age": p.age, "sex": p.sex, "weight_kg": p.weight_kg,
                 "creatinine": [result_view(r) for r in p.labs if normalize(r.test) == "creatinine"],
                 "egfr": [result_view(r) for r in p.labs if normalize(r.test) == "egfr"]}
        egfr = latest(p, "egfr")
        if egfr is not None and egfr.value is not None:
            renal["egfr_stage"] = next(stage for floor, stage in EGFR_STAGES if egfr.value >= floor)
        renal["note"] = ("Creatinine clearance is not reported; drugs dosed by it need calculate_creatinine_clearance "
                         "with actual body weight.")
        return renal

    @tool(kind=ToolKind.READ)
    def get_lab_results(self, patient_id: PatientId, test: str | None = None) -> list[dict[str, Any]]:
        """The patient's results other than renal function (e.g. potassium, INR, QTc, drug levels, cultures) with
        units, reference ranges and flags.

        Args:
            patient_id: The patient's id, e.g. "P001".
            test: Only results of this test, e.g. "INR" (all when omitted).
        """
        p = self._patient(patient_id)
        results = [r for r in p.labs if normalize(r.test) not in RENAL_TESTS]
        if test is not None:
            wanted = [r for r in results if normalize(r.test) == normalize(test)]
            if not wanted:
                names = ", ".join(sorted({r.test for r in results})) or "none"
                renal = " (renal function: use get_renal_function)" if normalize(test) in RENAL_TESTS else ""
                raise ValueError(f"no {test!r} result for {p.patient_id}; available: {names}{renal}")
            results = wanted
        return [result_view(r) for r in results]

    # -- READ: the drug reference and safety checks ------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def lookup_drug(self, drug: DrugName) -> dict[str, Any]:
        """The drug reference entry: class, indications, usual adult dose, maximum daily dose, dosing by renal
        function, hepatic and pregnancy advice, CYP450 / P-glycoprotein roles, allergy group and cautions.

        Args:
            drug: Generic drug name, e.g. "clarithromycin".
        """
        d = self.reference.resolve(drug)
        m = d.metabolism
        usual = d.usual_dose.text if d.usual_dose is not None else "not given in the reference"
        return {
            "drug": d.name, "other_names": d.aliases, "class": d.drug_class, "indications": d.indications,
            "usual_adult_dose": usual + (f" ({d.usual_dose_note})" if d.usual_dose_note else ""),
            "max_daily_dose_mg": d.max_daily_mg,
            **({"dose_limits_by_indication": [f"{lim.indication}: {lim.note or f'up to {lim.max_mg:g} mg'}"
                                              for lim in d.dose_limits]} if d.dose_limits else {}),
            "renal_dosing": {"measure": MEASURE_TEXT[d.renal_measure],
                             "bands": [{"range": b.range_text, "advice": b.advice, "avoid": b.avoid}
                                       for b in d.renal_bands] or "no adjustment needed"},
            "hepatic": d.hepatic + (f": {d.hepatic_note}" if d.hepatic_note else ""),
            "pregnancy": pregnancy_text(d),
            "allergy_group": d.allergy_group, "avoid_in": d.avoid_in_conditions,
            "metabolism": {"substrate_of": m.substrate_of, "prodrug_activated_by": m.activated_by,
                           "inhibits": [f"{r.enzyme} ({r.strength})" for r in m.inhibits],
                           "induces": [f"{r.enzyme} ({r.strength})" for r in m.induces], "note": m.note},
            "cautions": d.cautions,
        }

    @tool(kind=ToolKind.READ)
    def check_interaction(self, drug_a: DrugName, drug_b: DrugName) -> dict[str, Any]:
        """Look up the interaction between two drugs: severity (contraindicated, major, moderate, minor), mechanism
        and management.

        Args:
            drug_a: Generic drug name, e.g. "simvastatin".
            drug_b: Another generic drug name, e.g. "clarithromycin".
        """
        a, b = self._pair(drug_a, drug_b)
        rule = self.reference.interaction(a, b)
        if rule is None:
            return {"drugs": [a.name, b.name], "severity": "none listed",
                    "note": "No interaction is listed for this pair."}
        return rule_view(rule, a.name, b.name)

    @tool(kind=ToolKind.READ)
    def check_all_interactions(self, patient_id: PatientId, drug: str | None = None) -> dict[str, Any]:
        """Check every pair of the patient's current medicines (and a drug you are considering, if given) for
        interactions, most severe first.

        Args:
            patient_id: The patient's id, e.g. "P001".
            drug: A drug you are considering adding, e.g. "clarithromycin" (optional).
        """
        p = self._patient(patient_id)
        names = list(self._active(p))
        if drug is not None:
            candidate = self.reference.resolve(drug).name
            names += [] if candidate in names else [candidate]
        found = []
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                rule = self.reference.interaction(self.reference.drugs[a], self.reference.drugs[b])
                if rule is not None:
                    found.append(rule_view(rule, a, b))
        found.sort(key=lambda f: -SEVERITY_RANK[f["severity"]])
        counts = {s: sum(1 for f in found if f["severity"] == s) for s in reversed(SEVERITY_RANK)}
        summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        return {"checked": names, "interactions": found, "summary": summary or "no listed interactions"}

    @tool(kind=ToolKind.READ)
    def check_allergy_cross_reactivity(self, patient_id: PatientId, drug: DrugName) -> dict[str, Any]:
        """Check a drug against the patient's documented allergies: the same drug, the same allergy group, or a
        cross-reactive group, with the risk and what to do.

        Args:
            patient_id: The patient's id, e.g. "P001".
            drug: Generic drug name, e.g. "cefalexin".
        """
        p, d = self._patient(patient_id), self.reference.resolve(drug)
        findings = []
        for allergy in p.allergies:
            match = self.reference.allergy_match(allergy.substance, d)
            if match is not None:
                findings.append({"allergen": allergy.substance, "reaction": allergy.reaction,
                                 "severity": allergy.severity, "relation": match.relation, "risk": match.risk,
                                 "verdict": match.verdict(allergy.severity), "advice": match.advice})
        order = ("avoid", "use with caution", "no special precautions")
        verdict = min((f["verdict"] for f in findings), key=order.index, default="no documented allergy conflict")
        return {"drug": d.name, "allergy_group": d.allergy_group, "findings": findings, "verdict": verdict}

    @tool(kind=ToolKind.READ)
    def recommend_alternative(self, patient_id: PatientId, drug: DrugName, indication: Text) -> dict[str, Any]:
        """Other drugs for an indication, each screened against the patient (allergies, interactions with the
        current medicines other than the one replaced, renal function, pregnancy, hepatic impairment, conditions),
        suitable ones first.

        Args:
            patient_id: The patient's id, e.g. "P001".
            drug: The drug to replace, e.g. "ramipril".
            indication: What it is for, in the reference's words, e.g. "hypertension".
        """
        p, d = self._patient(patient_id), self.reference.resolve(drug)
        wanted = self.reference.canonical_indication(indication)
        others = [name for name in self._active(p) if name != d.name]
        ranked = []
        for candidate in self.reference.drugs.values():
            if candidate.name == d.name or wanted not in candidate.indications or candidate.usual_dose is None:
                continue
            issues, cautions = self._screen(p, candidate, others)
            ranked.append({"drug": candidate.name, "class": candidate.drug_class,
                           "usual_dose": candidate.usual_dose.text, "suitable": not issues, "issues": issues,
                           "cautions": cautions})
        ranked.sort(key=lambda r: (bool(r["issues"]), len(r["cautions"]), r["drug"]))
        return {"instead_of": d.name, "indication": wanted, "alternatives": ranked}

    # -- THINK: calculators ------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.THINK)
    def calculate_creatinine_clearance(self, age: Annotated[float, Interval(ge=18, le=120)],
                                       weight_kg: Annotated[float, Interval(gt=0, le=400)],
                                       serum_creatinine_umol_l: Annotated[float, Interval(gt=0, le=3000)],
                                       sex: Literal["female", "male"]) -> dict[str, Any]:
        """Cockcroft-Gault creatinine clearance (mL/min) from age, actual body weight, serum creatinine and sex.

        Args:
            age: Age in years, e.g. 78.
            weight_kg: Actual body weight in kg, e.g. 52.
            serum_creatinine_umol_l: Serum creatinine in µmol/L, e.g. 160.
            sex: "female" or "male".
        """
        value = creatinine_clearance(age, weight_kg, serum_creatinine_umol_l, sex)
        return {"creatinine_clearance_ml_min": value,
                "formula": f"(140 - age) x weight x {'1.23 (male)' if sex == 'male' else '1.04 (female)'} / "
                           f"creatinine (µmol/L)"}

    @tool(kind=ToolKind.THINK)
    def adjust_dose_for_renal_function(self, drug: DrugName,
                                       renal_function_ml_min: Annotated[float, Interval(ge=0, le=300)]
                                       ) -> dict[str, Any]:
        """The dosing of a drug at a level of renal function, in the measure the drug is dosed by (eGFR, or
        Cockcroft-Gault creatinine clearance for drugs such as DOACs; lookup_drug says which).

        Args:
            drug: Generic drug name, e.g. "gabapentin".
            renal_function_ml_min: The patient's value in that measure, e.g. 21.
        """
        d = self.reference.resolve(drug)
        band = self.reference.renal_band(d, renal_function_ml_min)
        if band is None:
            return {"drug": d.name, "advice": "No renal dose adjustment is needed.",
                    "usual_adult_dose": d.usual_dose.text if d.usual_dose else "not given in the reference"}
        return {"drug": d.name, "measure": MEASURE_TEXT[d.renal_measure], "value": renal_function_ml_min,
                "band": band.range_text, "advice": band.advice, "avoid": band.avoid,
                "regimen": band.regimen.text if band.regimen else None, "max_daily_dose_mg": band.max_daily_mg}

    @tool(kind=ToolKind.THINK)
    def predict_cyp450_interaction(self, drug_a: DrugName, drug_b: DrugName) -> dict[str, Any]:
        """Predict the pharmacokinetic effect of combining two drugs from their CYP450 and P-glycoprotein roles
        (substrate, inhibitor or inducer, prodrug activation).

        Args:
            drug_a: Generic drug name, e.g. "fluoxetine".
            drug_b: Another generic drug name, e.g. "codeine".
        """
        a, b = self._pair(drug_a, drug_b)
        effects = self.reference.metabolic_effects(a, b)

        def profile(d: DrugMonograph) -> dict[str, Any]:
            m = d.metabolism
            return {"substrate_of": m.substrate_of, "prodrug_activated_by": m.activated_by,
                    "inhibits": [f"{r.enzyme} ({r.strength})" for r in m.inhibits],
                    "induces": [f"{r.enzyme} ({r.strength})" for r in m.induces]}

        return {"drugs": [a.name, b.name], "profiles": {a.name: profile(a), b.name: profile(b)},
                "predicted_effects": effects or ["No CYP450 or P-glycoprotein interaction is predicted."],
                "note": "Covers metabolism and transport only; check_interaction gives listed interactions, their "
                        "severity and management."}

    # -- WRITE -------------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def prescribe(self, patient_id: PatientId, drug: DrugName, dose: Dose, unit: DoseUnit, frequency: Frequency,
                  route: Route, indication: str = "") -> dict[str, Any]:
        """Prescribe a new medicine. It is recorded as written: check allergies, interactions and dosing first.

        Args:
            patient_id: The patient's id, e.g. "P001".
            drug: Generic drug name, e.g. "doxycycline".
            dose: The amount per dose, e.g. 100.
            unit: "mg", "mcg", "g", "units", "mL" or "mmol".
            frequency: "once" (a single dose), "daily", "bid", "tid", "qid", "five times daily", "q4h", "q6h",
                "q8h", "q12h", "q24h", "q48h", "weekly" or "prn" (as needed).
            route: "oral", "intravenous", "intramuscular", "subcutaneous", "inhaled", "sublingual", "topical",
                "rectal", "vaginal" or "transdermal".
            indication: What it is for, e.g. "community-acquired pneumonia".
        """
        p, d = self._patient(patient_id), self.reference.resolve(drug)
        rx = Prescription(seq=self.db.next_seq(), patient_id=p.patient_id,
                          prescription_id=f"RX-{len(self.db.prescriptions) + 1:03d}", drug=d.name, dose=dose,
                          unit=unit, frequency=frequency, route=route, indication=indication)
        self.db.prescriptions.append(rx)
        return {"prescription_id": rx.prescription_id, "status": "prescribed",
                "prescription": rx.model_dump(exclude={"seq", "patient_id"})}

    @tool(kind=ToolKind.WRITE)
    def change_dose(self, patient_id: PatientId, drug: DrugName, dose: Dose, unit: DoseUnit, frequency: Frequency,
                    reason: Text) -> dict[str, Any]:
        """Change the dose or frequency of a medicine the patient is taking (the route stays the same).

        Args:
            patient_id: The patient's id, e.g. "P001".
            drug: Generic name of the current medicine, e.g. "gabapentin".
            dose: The new amount per dose, e.g. 300.
            unit: "mg", "mcg", "g", "units", "mL" or "mmol".
            frequency: The new frequency: "once", "daily", "bid", "tid", "qid", "five times daily", "q4h", "q6h",
                "q8h", "q12h", "q24h", "q48h", "weekly" or "prn".
            reason: Why, e.g. "creatinine clearance 21 mL/min".
        """
        p, d = self._patient(patient_id), self.reference.resolve(drug)
        current = self._taking(p, d.name)
        new = Regimen(dose=dose, unit=unit, frequency=frequency, route=current.regimen.route)
        if new == current.regimen:
            raise ValueError(f"{d.name} is already {new.text}")
        self.db.dose_changes.append(DoseChange(seq=self.db.next_seq(), patient_id=p.patient_id, drug=d.name,
                                               previous=current.regimen, new=new, reason=reason))
        return {"drug": d.name, "previous": current.regimen.text, "new": new.text, "status": "dose changed"}

    @tool(kind=ToolKind.WRITE)
    def discontinue_medication(self, patient_id: PatientId, drug: DrugName, reason: Text,
                               temporary: bool = False) -> str:
        """Stop a medicine the patient is taking, or withhold it for now (temporary).

        Args:
            patient_id: The patient's id, e.g. "P001".
            drug: Generic name of the current medicine, e.g. "omeprazole".
            reason: Why, e.g. "reduces the activation of clopidogrel".
            temporary: True to withhold it for a while (e.g. during an antibiotic course) rather than stop it.
        """
        p, d = self._patient(patient_id), self.reference.resolve(drug)
        self._taking(p, d.name)
        self.db.discontinuations.append(Discontinuation(seq=self.db.next_seq(), patient_id=p.patient_id, drug=d.name,
                                                        reason=reason, temporary=temporary))
        return f"{d.name} {'withheld' if temporary else 'stopped'} for {p.patient_id}."

    @tool(kind=ToolKind.WRITE)
    def record_interaction_alert(self, patient_id: PatientId, drug_a: DrugName, drug_b: DrugName,
                                 severity: Severity, action: Text) -> dict[str, Any]:
        """Document an interaction in the patient's record: the pair, its severity and what was done about it.

        Args:
            patient_id: The patient's id, e.g. "P001".
            drug_a: Generic drug name, e.g. "simvastatin".
            drug_b: The other generic drug name, e.g. "clarithromycin".
            severity: "contraindicated", "major", "moderate" or "minor".
            action: What was done, e.g. "clarithromycin not started; doxycycline prescribed instead".
        """
        p = self._patient(patient_id)
        a, b = self._pair(drug_a, drug_b)
        alert = InteractionAlert(seq=self.db.next_seq(), patient_id=p.patient_id,
                                 alert_id=f"ALERT-{len(self.db.alerts) + 1:03d}", drug_a=a.name, drug_b=b.name,
                                 severity=severity, action=action)
        self.db.alerts.append(alert)
        return {"alert_id": alert.alert_id, "status": "recorded"}
