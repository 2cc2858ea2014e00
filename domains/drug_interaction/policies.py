"""DrugInteraction scripted policies beyond the generic ones in ``clinical_gym.tool_env.policies``:
``InteractionIgnoringPolicy`` works the task like the expert but also prescribes a drug that has a contraindicated
interaction with a medicine the patient is still taking."""

from __future__ import annotations

from clinical_gym.tool_env.policies import ExpertToolPolicy, call_text
from clinical_gym.tool_env.tasks import Task
from clinical_gym.domains.drug_interaction.data_model import DrugInteractionDB, DrugMonograph
from clinical_gym.drugs import reference


def contraindicated_partner(db: DrugInteractionDB, task: Task) -> tuple[DrugMonograph, str] | None:
    """A reference drug, and the medicine it is contraindicated with, among the task patient's medicines that the
    reference solution leaves in place (it neither stops nor withholds them); None when there is none."""
    if task.patient_id not in db.patients:
        return None
    drugs = reference()
    stopped = {drugs.resolve(a.arguments["drug"]).name for a in task.expected_actions
               if a.name == "discontinue_medication"}
    taking = [m.drug for m in db.patients[task.patient_id].medications if m.drug not in stopped]
    for medicine in taking:
        for drug in drugs.drugs.values():
            usable = drug.prescribable and drug.name not in taking
            rule = drugs.interaction(drug, drugs.drugs[medicine]) if usable else None
            if rule is not None and rule.severity == "contraindicated":
                return drug, medicine
    return None


class InteractionIgnoringPolicy(ExpertToolPolicy):
    """The expert's actions, then a prescription (at its usual dose) of a drug contraindicated with one of the
    patient's medicines, then the gold answer. ValueError when the patient takes nothing with such a partner."""

    def __init__(self, task: Task, db: DrugInteractionDB) -> None:
        found = contraindicated_partner(db, task)
        if found is None:
            raise ValueError(f"task {task.id}: no contraindicated partner for the patient's remaining medicines")
        self.drug, self.interacts_with = found[0], found[1]
        dose = self.drug.usual_dose
        prescription = call_text("prescribe", {
            "patient_id": task.patient_id, "drug": self.drug.name, "dose": dose.dose, "unit": dose.unit,
            "frequency": dose.frequency, "route": dose.route, "indication": self.drug.indications[0]})
        super().__init__(task, extra=[prescription])
