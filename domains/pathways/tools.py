"""The pathway's own tools, for what no wave-1 domain covers: the pathway's status and protocols, the hand-over that
ends a phase, intravenous fluids, continuous infusions, blood products, a weight-based dose calculator, and the
disposition.

Tools refuse with ``KeyError`` / ``ValueError`` messages meant for the agent. WRITE tools append to the pathway
database they were built with (an episode's copy).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from annotated_types import Interval, MinLen

from clinical_gym.domains.lookups import PatientLookup, formulary_drug
from clinical_gym.domains.pathways.data_model import (
    BloodProduct,
    Destination,
    Disposition,
    Fluid,
    FluidOrder,
    Handoff,
    InfusionOrder,
    PathwayDB,
    PathwayPatient,
    RateUnit,
    TransfusionOrder,
)
from clinical_gym.tools import ToolKind, Toolkit, tool

if TYPE_CHECKING:
    from clinical_gym.domains.pathways.engine import PhaseTracker

PatientId = Annotated[str, MinLen(1)]
Text = Annotated[str, MinLen(1)]
ProtocolTopic = Literal["chest_pain", "diabetic_emergency", "stroke", "sepsis", "postoperative", "paediatric_fever"]
PER_KG = {"units/kg/hour": "units/hour", "mg/kg/hour": "mg/hour", "micrograms/kg/minute": "micrograms/minute"}


class PathwayTools(PatientLookup[PathwayPatient], Toolkit):
    """The pathway's tools over one database (an episode's copy). ``tracker`` is the episode's position in its
    pathway (None outside an episode); ``protocols`` the protocol texts by topic."""

    patient_id_example = "CP01"
    find_drug = staticmethod(formulary_drug)

    def __init__(self, db: PathwayDB, tracker: PhaseTracker | None, opened: list[list[str]],
                 protocols: Mapping[str, str]) -> None:
        self.db = db
        self.tracker = tracker
        self.opened = opened
        self.protocols = protocols

    # -- helpers ---------------------------------------------------------------------------------------------------
    def _tracker(self) -> PhaseTracker:
        if self.tracker is None:
            raise ValueError("no pathway episode is running")
        return self.tracker

    # -- READ --------------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def get_pathway_status(self) -> dict[str, Any]:
        """Where you are in the pathway: the current phase (number, title, goal), the tool calls it has used and its
        time limit, the tools open now, and the phases still to come with the tools each will open.
        """
        tracker = self._tracker()
        status = tracker.status(self.opened[tracker.index])
        phases = tracker.task.phases
        status["phases_done"] = [p.title for p in phases[:tracker.index]]
        status["phases_to_come"] = [{"phase": i + 1, "title": p.title, "opens": sorted(set(self.opened[i])
                                                                                    - set(self.opened[i - 1]))}
                                    for i, p in enumerate(phases) if i > tracker.index]
        return status

    @tool(kind=ToolKind.READ)
    def get_pathway_protocol(self, topic: ProtocolTopic) -> str:
        """The hospital's protocol for a clinical pathway: recognition, investigations, time-critical treatment and
        where the patient goes.

        Args:
            topic: "chest_pain", "diabetic_emergency", "stroke", "sepsis", "postoperative" or "paediatric_fever".
        """
        return self.protocols[topic]

    # -- WRITE: the phase --------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def handoff(self, summary: Text) -> str:
        """Finish the current phase and hand the patient over to the next one (the next phase's tools open). Do it
        when this phase's work is done; the last phase ends with submit_answer instead.

        Args:
            summary: The handover in a few sentences (situation, findings, what was done, what is needed next), e.g.
                "ECG shows inferior ST elevation; STEMI code activated; aspirin allergy checked; needs primary PCI".
        """
        tracker = self._tracker()
        if tracker.is_last:
            raise ValueError(f"{tracker.current.title} is the last phase; finish the pathway with submit_answer")
        self.db.handoffs.append(Handoff(phase=tracker.current.name, summary=summary, time=self.db.clock))
        return f"Handover from the {tracker.current.title} phase recorded."

    # -- WRITE: treatment ------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def start_iv_fluids(self, patient_id: PatientId, fluid: Fluid,
                        volume_ml: Annotated[float, Interval(gt=0, le=5000)],
                        duration_minutes: Annotated[float, Interval(ge=1, le=2880)],
                        potassium_mmol_per_l: Literal[0, 20, 40] = 0, indication: str = "") -> dict[str, Any]:
        """Start an intravenous fluid: a bolus or a maintenance infusion, optionally with potassium chloride added.

        Args:
            patient_id: The patient's id, e.g. "DM01".
            fluid: "0.9% sodium chloride", "Hartmann's solution", "10% glucose" or "5% glucose".
            volume_ml: The volume in mL, e.g. 1000, or 10 mL/kg for a child (e.g. 180 for 18 kg).
            duration_minutes: Over how long, in minutes, e.g. 60 (a bolus: 10 to 15).
            potassium_mmol_per_l: Potassium chloride added, in mmol per litre: 0, 20 or 40.
            indication: What it is for, e.g. "hypovolaemia with hypotension".
        """
        p = self._patient(patient_id)
        order = FluidOrder(order_id=self.db.next_id("FL", "fluids"), patient_id=p.patient_id, fluid=fluid,
                           volume_ml=volume_ml, duration_minutes=duration_minutes,
                           potassium_mmol_per_l=potassium_mmol_per_l, indication=indication, time=self.db.clock)
        self.db.fluids.append(order)
        return {"order_id": order.order_id, "status": "running",
                "rate_ml_per_hour": round(volume_ml * 60 / duration_minutes, 1),
                "ml_per_kg": round(volume_ml / p.weight_kg, 1), **order.model_dump(exclude={"order_id", "time"})}

    @tool(kind=ToolKind.WRITE)
    def start_infusion(self, patient_id: PatientId, drug: Text, rate: Annotated[float, Interval(gt=0, le=1000)],
                       rate_unit: RateUnit, indication: str = "") -> dict[str, Any]:
        """Start a continuous intravenous infusion of a drug at a set rate, e.g. a fixed-rate insulin infusion.
        Check allergies and interactions first.

        Args:
            patient_id: The patient's id, e.g. "DM01".
            drug: Generic drug name, e.g. "insulin" or "labetalol".
            rate: The rate, e.g. 0.1.
            rate_unit: "units/kg/hour", "units/hour", "mg/hour", "mg/kg/hour", "micrograms/kg/minute" or
                "mL/hour".
            indication: What it is for, e.g. "ketoacidosis".
        """
        p, d = self._patient(patient_id), self.find_drug(drug)
        order = InfusionOrder(order_id=self.db.next_id("INF", "infusions"), patient_id=p.patient_id, drug=d.name,
                              rate=rate, rate_unit=rate_unit, indication=indication, time=self.db.clock)
        self.db.infusions.append(order)
        view: dict[str, Any] = {"order_id": order.order_id, "status": "running",
                                **order.model_dump(exclude={"order_id", "time"})}
        if rate_unit in PER_KG:
            view["for_weight"] = f"{round(rate * p.weight_kg, 2):g} {PER_KG[rate_unit]} at {p.weight_kg:g} kg"
        return view

    @tool(kind=ToolKind.WRITE)
    def transfuse_blood_products(self, patient_id: PatientId, product: BloodProduct,
                                 units: Annotated[int, Interval(ge=1, le=6)], indication: Text) -> dict[str, Any]:
        """Request and start blood products from the transfusion laboratory.

        Args:
            patient_id: The patient's id, e.g. "PO03".
            product: "red cells", "platelets", "fresh frozen plasma" or "cryoprecipitate".
            units: How many units (adult doses), 1 to 6, e.g. 2.
            indication: Why, e.g. "haemorrhagic shock after surgery".
        """
        p = self._patient(patient_id)
        order = TransfusionOrder(order_id=self.db.next_id("TX", "transfusions"), patient_id=p.patient_id,
                                 product=product, units=units, indication=indication, time=self.db.clock)
        self.db.transfusions.append(order)
        return {"order_id": order.order_id, "status": "issued and running",
                **order.model_dump(exclude={"order_id", "time"})}

    @tool(kind=ToolKind.WRITE)
    def set_disposition(self, patient_id: PatientId, destination: Destination, reason: Text) -> str:
        """Decide where the patient goes next: a procedure, a critical-care or specialist unit, a ward, or home. A
        later decision replaces an earlier one.

        Args:
            patient_id: The patient's id, e.g. "CP01".
            destination: "cardiac catheterisation laboratory", "coronary care unit", "intensive care unit",
                "high dependency unit", "hyperacute stroke unit", "thrombectomy centre", "neurosurgical unit",
                "operating theatre", "paediatric intensive care unit", "paediatric ward", "medical ward",
                "surgical ward" or "discharge home".
            reason: Why, with the follow-up or safety-net advice for a discharge.
        """
        p = self._patient(patient_id)
        self.db.dispositions.append(Disposition(patient_id=p.patient_id, destination=destination, reason=reason,
                                                time=self.db.clock))
        return f"{p.patient_id}: disposition set to {destination}."

    # -- THINK -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.THINK)
    def calculate_weight_based_dose(self, weight_kg: Annotated[float, Interval(gt=0, le=300)],
                                    dose_per_kg: Annotated[float, Interval(gt=0, le=1000)],
                                    dose_unit: Literal["mg", "micrograms", "units", "mL", "mmol"],
                                    maximum_dose: Annotated[float, Interval(gt=0)] | None = None) -> dict[str, Any]:
        """A weight-based dose: weight x dose per kg, capped at a maximum when one is given.

        Args:
            weight_kg: The patient's weight in kg, e.g. 18.
            dose_per_kg: The dose per kg, e.g. 80 (ceftriaxone 80 mg/kg) or 0.9 (alteplase 0.9 mg/kg).
            dose_unit: The unit of the dose: "mg", "micrograms", "units", "mL" or "mmol".
            maximum_dose: The most that may be given, in the same unit, e.g. 90 (alteplase) or 4000 (ceftriaxone).
        """
        dose = weight_kg * dose_per_kg
        capped = maximum_dose is not None and dose > maximum_dose
        value = round(maximum_dose if capped and maximum_dose is not None else dose, 2)
        return {"dose": value, "unit": dose_unit, "capped_at_maximum": capped,
                "calculation": f"{weight_kg:g} kg x {dose_per_kg:g} {dose_unit}/kg = {round(dose, 2):g} {dose_unit}"}
