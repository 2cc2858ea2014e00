"""Reference intervals for children, for the analytes whose normal values differ from the adult ones the exam
catalogue holds: synthesised results of a patient under 18 are drawn from, and reported with, these.

Source: the ACCP Pediatric Self-Assessment Program (PedSAP) table "Reference values for common laboratory tests",
compiled from The Harriet Lane Handbook (21st ed., 2018) and the Pediatric and Neonatal Dosage Handbook (21st ed.,
2014). Serum creatinine from one month to one year follows Boer DP et al., "Reference values for serum creatinine
in children younger than 1 year of age", Pediatr Nephrol 2010;25:2107-13 (enzymatic assay: mean 22 umol/L, 0.25 mg/dL,
in the second month, 20 umol/L to the seventh month, then rising a little); the band drawn around those means
is ours. Where the table's age groups are named loosely, a "newborn" is under 28 days, a "child" from 28 days (calcium)
or 1 year (creatinine) to 13 years, and the first month takes the 1-12 month alkaline phosphatase band. Units are the
catalogue's (``data/exams.json``). An age band is [low, high) in days; a band for one sex applies to that sex only;
ages no band covers keep the catalogue's range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Sex = Literal["male", "female"]
ADULT_DAYS = 18 * 365  # from 18 years the catalogue's (adult) ranges apply
DAYS_PER_YEAR, DAYS_PER_MONTH = 365.25, 30.44


def _years(n: float) -> int:
    return round(n * DAYS_PER_YEAR)


def _months(n: float) -> int:
    return round(n * DAYS_PER_MONTH)


@dataclass(frozen=True)
class Band:
    """A reference interval for ages [from_days, to_days), optionally for one sex."""

    from_days: int
    to_days: int
    low: float
    high: float
    sex: Sex | None = None

    def covers(self, age_days: int, sex: Sex) -> bool:
        return self.from_days <= age_days < self.to_days and self.sex in (None, sex)


# Catalogue component name -> its paediatric bands (PedSAP / Harriet Lane unless noted).
PAEDIATRIC_BANDS: dict[str, tuple[Band, ...]] = {
    "Creatinine": (Band(0, 28, 0.3, 1.0), Band(28, _years(1), 0.1, 0.4),  # newborn (PedSAP); infant (Boer 2010)
                   Band(_years(1), _years(13), 0.3, 0.7), Band(_years(13), ADULT_DAYS, 0.5, 1.0)),  # child, adolescent
    "Hemoglobin": (Band(0, 31, 15.0, 24.0), Band(31, _years(2), 10.5, 14.0), Band(_years(2), _years(10), 11.5, 14.5),
                   Band(_years(10), ADULT_DAYS, 12.5, 16.1, "male"), Band(_years(10), ADULT_DAYS, 12.0, 15.0, "female")),
    "Hematocrit": (Band(0, 31, 44.0, 70.0), Band(31, _years(2), 32.0, 42.0), Band(_years(2), _years(10), 33.0, 43.0),
                   Band(_years(10), ADULT_DAYS, 36.0, 47.0, "male"), Band(_years(10), ADULT_DAYS, 35.0, 45.0, "female")),
    "MCV": (Band(0, 31, 99, 115), Band(31, _years(2), 72, 88), Band(_years(2), _years(10), 76, 90), Band(_years(10), ADULT_DAYS, 78, 95)),
    "MCH": (Band(0, 31, 33.0, 39.0), Band(31, _years(2), 24.0, 30.0), Band(_years(2), _years(10), 25.0, 31.0),
            Band(_years(10), ADULT_DAYS, 26.0, 32.0)),
    "Red blood cells": (Band(0, 31, 4.0, 5.5),),
    "White blood cells": (Band(0, 31, 9.1, 34.0), Band(31, _years(2), 6.0, 17.0), Band(_years(2), _years(10), 4.0, 15.5),
                          Band(_years(10), ADULT_DAYS, 4.0, 13.5)),
    "Platelets": (Band(0, 8, 84, 478), Band(8, ADULT_DAYS, 150, 450)),
    "Potassium": (Band(0, 28, 3.7, 7.2), Band(28, _months(3), 4.0, 6.2), Band(_months(3), _years(1), 3.4, 5.6)),
    "Glucose": (Band(0, 1, 40, 60), Band(1, 28, 50, 90), Band(28, ADULT_DAYS, 60, 100)),  # newborn day 1, after; child
    "Blood urea nitrogen": (Band(0, ADULT_DAYS, 2, 20),),
    "Calcium": (Band(4, 8, 6.7, 10.9), Band(28, _years(13), 8.8, 10.8)),  # 4-7 days; child
    "Phosphate": (Band(0, 6, 4.5, 9.0), Band(_years(1), _years(4), 3.8, 6.5), Band(_years(4), _years(12), 3.2, 5.8),
                  Band(_years(12), _years(16), 2.9, 5.4), Band(_years(16), ADULT_DAYS, 2.4, 4.7)),
    "Albumin": (Band(0, 8, 2.5, 3.9), Band(8, _years(1), 1.9, 4.9), Band(_years(1), _years(4), 3.4, 5.2),
                Band(_years(4), ADULT_DAYS, 3.5, 5.6)),
    "Alkaline phosphatase": (Band(0, _years(1), 150, 420), Band(_years(1), _years(10), 100, 420), Band(_years(10), _years(12), 140, 560),
                             Band(_years(12), _years(14), 100, 495, "male"), Band(_years(12), _years(14), 100, 420, "female"),
                             Band(_years(14), _years(16), 100, 525, "male"), Band(_years(14), _years(16), 70, 320, "female"),
                             Band(_years(16), ADULT_DAYS, 65, 260, "male"), Band(_years(16), ADULT_DAYS, 50, 320, "female")),
    "AST": (Band(0, 8, 30, 150, "male"), Band(0, 8, 24, 150, "female"), Band(8, _years(1), 9, 80), Band(_years(1), _years(3), 20, 60),
            Band(_years(3), _years(10), 15, 50), Band(_years(10), _years(16), 10, 40), Band(_years(16), ADULT_DAYS, 15, 45, "male"),
            Band(_years(16), ADULT_DAYS, 5, 30, "female")),
    "ALT": (Band(0, 8, 6, 40), Band(8, 31, 10, 40, "male"), Band(8, 31, 8, 32, "female"), Band(31, _years(1), 12, 45),
            Band(_years(1), ADULT_DAYS, 5, 55)),
    "GGT": (Band(0, _months(2), 12, 147), Band(_months(2), _months(4), 8, 90), Band(_months(4), ADULT_DAYS, 5, 32)),
    "LDH": (Band(28, _years(1), 170, 580), Band(_years(1), _years(10), 110, 500), Band(_years(10), ADULT_DAYS, 100, 330)),
    "Uric acid": (Band(0, _years(15), 1.0, 7.0),),
}


def paediatric_reference(component: str, sex: Sex, age_days: int | None) -> tuple[float, float] | None:
    """The reference interval of a component for a child of this age (days) and sex, or None (adult, or no band)."""
    if age_days is None or age_days >= ADULT_DAYS:
        return None
    band = next((b for b in PAEDIATRIC_BANDS.get(component, ()) if b.covers(age_days, sex)), None)
    return (band.low, band.high) if band else None
