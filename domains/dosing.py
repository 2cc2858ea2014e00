"""Dose arithmetic the tool domains share: administrations a day by frequency, milligrams per mass unit, and a
prescription as the safety rules read it (``clinical_gym.rewards.episode.Prescription``).

Each domain's ``Frequency`` (the values its tools accept) stays its own; ``DOSES_PER_DAY`` covers the common
frequencies, and a domain with others extends it (e.g. ``{**DOSES_PER_DAY, "prn": None}``).
"""

from __future__ import annotations

from collections.abc import Mapping

from clinical_gym.rewards.episode import Prescription

DOSES_PER_DAY: dict[str, float] = {"once": 1, "daily": 1, "nightly": 1, "bid": 2, "tid": 3, "qid": 4,
                                   "five times daily": 5, "q4h": 6, "q6h": 4, "q8h": 3, "q12h": 2, "q24h": 1,
                                   "q48h": 0.5, "weekly": 1 / 7}
MG_PER_UNIT: dict[str, float] = {"mg": 1.0, "mcg": 0.001, "g": 1000.0}


def prescription(drug: str, dose: float, unit: str, frequency: str, route: str, call_index: int,
                 doses_per_day: Mapping[str, float | None] = DOSES_PER_DAY) -> Prescription:
    """A prescribed regimen for the safety rules: the dose in mg (None for a unit that is not a mass) and the
    administrations a day by ``doses_per_day``."""
    factor = MG_PER_UNIT.get(unit)
    return Prescription(drug=drug, dose_mg=None if factor is None else float(dose) * factor,
                        doses_per_day=doses_per_day[frequency], frequency=frequency, route=route,
                        call_index=call_index)
