"""DrugInteraction-v1: check a patient's medicines for interactions, CYP450 effects, renal dosing and allergy
cross-reactivity through tools, act on what is found (prescribe, change a dose, stop a medicine, record an alert),
and submit.

Entry points (tau2-bench layout): ``get_environment(db=None, **kwargs)`` and ``get_tasks(split=None)``.
"""

from __future__ import annotations

from typing import Any

from clinical_gym.cases.schema import normalize
from clinical_gym.rewards.episode import (
    Act,
    CallRecord,
    ClinicalActions,
    PatientFacts,
    Prescription,
    ReviewCategory,
)
from clinical_gym.tool_env.env import ToolDomainEnv
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.bundled import BundledData
from clinical_gym.domains.dosing import prescription
from clinical_gym.domains.drug_interaction.data_model import DOSES_PER_DAY, DrugInteractionDB, Regimen
from clinical_gym.domains.drug_interaction.tools import DrugInteractionTools
from clinical_gym.domains.lookups import with_patient_id
from clinical_gym.domains.records import allergy_facts
from clinical_gym.domains.shared_toolkits import BundledDomain
from clinical_gym.drugs import reference
from clinical_gym.tools import Toolkit

BUNDLED = BundledData("clinical_gym.domains.drug_interaction", DrugInteractionDB)
bundled_db = BUNDLED.bundled_db
get_tasks = BUNDLED.get_tasks
PAIR_TOOLS = frozenset({"check_interaction", "predict_cyp450_interaction", "record_interaction_alert"})
# Normalised test name -> canonical lab key of clinical_gym.rewards.episode (others: the name with underscores).
LAB_KEYS = {"white cell count": "wbc"}

REVIEWS: dict[str, frozenset[ReviewCategory]] = {
    "get_patient_profile": frozenset({"demographics", "history"}),
    "get_medication_list": frozenset({"medications"}), "check_all_interactions": frozenset({"medications"}),
    "get_allergies": frozenset({"allergies"}), "check_allergy_cross_reactivity": frozenset({"allergies"}),
    "recommend_alternative": frozenset({"allergies", "medications"}),
    "get_renal_function": frozenset({"labs"}), "get_lab_results": frozenset({"labs"}),
}


class DrugInteractionEnv(BundledDomain, ToolDomainEnv):
    """DrugInteraction-v1: a clinician (or pharmacist) agent checks a patient's medicines through tools (medication
    list, allergies, renal function and other results; the drug reference, pairwise and whole-list interaction
    checks, allergy cross-reactivity, screened alternatives; Cockcroft-Gault clearance, renal dose bands and CYP450
    predictions), acts (prescribe, change a dose, stop or withhold a medicine, record an interaction alert) with the
    shared scoring instruments and knowledge search, then submits a drug, a regimen or an option letter.

    Spaces, starting state, rewards, episode end, information and the common arguments are those of
    ``ToolDomainEnv``. For the safety rules a dose change counts as a prescription when it raises the daily dose;
    interaction alerts count as documentation. Domain argument: ``knowledge`` ("bundled", a
    ``knowledge_base.PassageSearch``, or None; see ``clinical_gym.domains.shared_toolkits``).
    ``gym.make("DrugInteraction-v1", knowledge=None, split="train")``.
    """

    bundled = BUNDLED
    review_categories = REVIEWS
    can_document = False
    task_generator = "clinical_gym.domains.drug_interaction.generator:DrugInteractionGenerator"

    def domain_toolkit(self, db: DrugInteractionDB) -> Toolkit:  # type: ignore[override]
        return DrugInteractionTools(db)


    def canonical_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        drugs = reference()
        canonical = with_patient_id(arguments)
        for key in ("drug", "drug_a", "drug_b"):
            drug = drugs.find(canonical[key]) if isinstance(canonical.get(key), str) else None
            if drug is not None:
                canonical[key] = drug.name
        if name in PAIR_TOOLS and canonical.get("drug_b", "") < canonical.get("drug_a", ""):
            canonical["drug_a"], canonical["drug_b"] = canonical["drug_b"], canonical["drug_a"]
        if name == "recommend_alternative" and isinstance(canonical.get("indication"), str):
            canonical["indication"] = drugs.canonical_indication(canonical["indication"])
        return canonical

    def patient_facts(self, db: DrugInteractionDB, task: Task) -> PatientFacts | None:  # type: ignore[override]
        patient = db.patients.get(task.patient_id) if task.patient_id else None
        if patient is None:
            return None
        active, _ = db.active_medications(patient.patient_id)
        raised = {c.drug for c in db.dose_changes if c.patient_id == patient.patient_id and c.raises_daily_dose}
        latest = {}
        for result in sorted(patient.labs, key=lambda r: r.time):
            if result.value is not None:
                name = normalize(result.test)
                latest[LAB_KEYS.get(name, name.replace(" ", "_"))] = result
        return PatientFacts(
            patient_id=patient.patient_id, age=patient.age, sex=patient.sex, pregnant=patient.pregnant,
            gestation_weeks=patient.gestation_weeks, weight_kg=patient.weight_kg,
            allergies=allergy_facts(patient.allergies),
            # medicines started or raised this encounter are reported as prescriptions (clinical_actions)
            medications=[m.drug for m in active if m.status != "started this encounter" and m.drug not in raised],
            conditions=patient.conditions,
            labs={k: r.value for k, r in latest.items()}, lab_flags={k: r.flag for k, r in latest.items()})

    def clinical_actions(self, calls: list[CallRecord]) -> ClinicalActions:
        pid = self.task.patient_id
        # one record per successful change_dose call of this episode, in call order
        changes = iter(self.db.dose_changes[len(self.base_db.dose_changes):])
        prescriptions, notes = [], []
        for call in calls:
            if not call.ok:
                continue
            args = call.arguments
            change = next(changes) if call.name == "change_dose" else None
            if args.get("patient_id") != pid:
                continue
            if call.name == "prescribe":
                prescriptions.append(_prescription(Regimen(dose=args["dose"], unit=args["unit"],
                                                           frequency=args["frequency"], route=args["route"]),
                                                   args["drug"], call.index, args.get("indication") or ""))
            elif change is not None and change.raises_daily_dose:
                prescriptions.append(_prescription(change.new, change.drug, call.index))
            elif call.name == "record_interaction_alert":
                notes.append(Act(text=f"{args['drug_a']} with {args['drug_b']}: {args['severity']} interaction. "
                                      f"{args['action']}", call_index=call.index))
        return ClinicalActions(prescriptions=prescriptions, notes=notes)


def _prescription(regimen: Regimen, drug: str, call_index: int, indication: str = "") -> Prescription:
    return prescription(drug, regimen.dose, regimen.unit, regimen.frequency, regimen.route, call_index,
                        DOSES_PER_DAY, indication=indication)


def get_environment(db: DrugInteractionDB | None = None, **kwargs: Any) -> DrugInteractionEnv:
    """A DrugInteraction environment over ``db`` (default: the bundled database); ``kwargs`` go to the env."""
    return DrugInteractionEnv(db=db, **kwargs)
