"""Dose arithmetic shared by the drug reference and the tool domains: administrations a day by frequency and
milligrams per mass unit."""

from __future__ import annotations

DOSES_PER_DAY: dict[str, float] = {"once": 1, "daily": 1, "nightly": 1, "bid": 2, "tid": 3, "qid": 4,
                                   "five times daily": 5, "q4h": 6, "q6h": 4, "q8h": 3, "q12h": 2, "q24h": 1,
                                   "q48h": 0.5, "weekly": 1 / 7}
MG_PER_UNIT: dict[str, float] = {"mg": 1.0, "mcg": 0.001, "g": 1000.0}
