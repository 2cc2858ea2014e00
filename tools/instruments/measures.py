"""Measurement types shared by the instruments: each fixes a unit (named in the tool argument's description) and a
plausible range, so that out-of-range inputs are rejected with the range in the message and shown in the schema."""

from __future__ import annotations

from typing import Annotated

from annotated_types import Interval

Age = Annotated[int, Interval(ge=0, le=120)]
"""Years."""
HeartRate = Annotated[int, Interval(ge=0, le=300)]
"""Beats per minute."""
RespiratoryRate = Annotated[int, Interval(ge=0, le=80)]
"""Breaths per minute."""
SystolicBP = Annotated[int, Interval(ge=0, le=300)]
"""mmHg."""
DiastolicBP = Annotated[int, Interval(ge=0, le=200)]
"""mmHg."""
MeanArterialPressure = Annotated[float, Interval(ge=0, le=250)]
"""mmHg."""
TemperatureC = Annotated[float, Interval(ge=20, le=45)]
"""Degrees Celsius."""
OxygenSaturation = Annotated[int, Interval(ge=0, le=100)]
"""Percent (SpO2 or SaO2)."""
GlasgowComaScore = Annotated[int, Interval(ge=3, le=15)]
"""Total Glasgow Coma Scale, 3 to 15."""
UreaMmolL = Annotated[float, Interval(ge=0, le=150)]
"""Serum urea, mmol/L."""
CreatinineMgDl = Annotated[float, Interval(gt=0, le=30)]
"""Serum creatinine, mg/dL."""
BilirubinMgDl = Annotated[float, Interval(gt=0, le=80)]
"""Serum total bilirubin, mg/dL."""
AlbuminGDl = Annotated[float, Interval(gt=0, le=10)]
"""Serum albumin, g/dL."""
INR = Annotated[float, Interval(gt=0, le=20)]
"""International normalised ratio."""
SodiumMmolL = Annotated[float, Interval(ge=90, le=200)]
"""Serum sodium, mmol/L."""
PotassiumMmolL = Annotated[float, Interval(ge=1, le=12)]
"""Serum potassium, mmol/L."""
Platelets = Annotated[float, Interval(ge=0, le=3000)]
"""Platelet count, x10^3/µL (= x10^9/L)."""
WhiteCells = Annotated[float, Interval(ge=0, le=500)]
"""White cell count, x10^3/µL (= x10^9/L)."""
Percent = Annotated[float, Interval(ge=0, le=100)]
"""Percent."""
VasopressorDose = Annotated[float, Interval(ge=0, le=100)]
"""µg/kg/min."""
Count = Annotated[int, Interval(ge=0, le=1000)]
"""A count of events."""

