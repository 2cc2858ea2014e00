"""Dose arithmetic the tool domains share: administrations a day by frequency and milligrams per mass unit (from
``clinical_gym.drugs.units``, which the drug reference uses too), and a prescription as the safety rules read it
(``clinical_gym.rewards.episode.Prescription``).

Each domain's ``Frequency`` (the values its tools accept) stays its own; ``DOSES_PER_DAY`` covers the common
frequencies, and a domain with others extends it (e.g. ``{**DOSES_PER_DAY, "prn": None}``).
"""

from __future__ import annotations

from collections.abc import Mapping

from clinical_gym.drugs.units import DOSES_PER_DAY, MG_PER_UNIT
from clinical_gym.rewards.episode import Prescription

__all__ = ["DOSES_PER_DAY", "MG_PER_UNIT", "prescription"]


def prescription(drug: str, dose: float, unit: str, frequency: str, route: str, call_index: int,
                 doses_per_day: Mapping[str, float | None] = DOSES_PER_DAY, indication: str = "") -> Prescription:
    """A prescribed regimen for the safety rules: the dose in mg (None for a unit that is not a mass), the
    administrations a day by ``doses_per_day``, and what it is for (dose limits by indication, obstetric uses)."""
    factor = MG_PER_UNIT.get(unit)
    return Prescription(drug=drug, dose_mg=None if factor is None else float(dose) * factor,
                        doses_per_day=doses_per_day[frequency], frequency=frequency, route=route,
                        indication=indication, call_index=call_index)
