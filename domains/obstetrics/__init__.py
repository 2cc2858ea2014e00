"""Obstetrics-v0: antenatal, intrapartum and postpartum care through tools (Healthcare AI GYM)."""
