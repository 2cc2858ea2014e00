"""Obstetrics-v1: antenatal, intrapartum and postpartum care through tools (Healthcare AI GYM)."""
