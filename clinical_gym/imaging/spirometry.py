"""Spirometry reports: a flow-volume loop beside the volume-time curve, with the predicted loop dashed and the
results table, for four patterns a reader tells apart by the loop's shape.

Predicted FEV1 and FVC: Hankinson JL, Odencrantz JR, Fedan KB, NHANES III reference equations for Caucasian adults
(Am J Respir Crit Care Med 1999;159:179-87): b0 + b1 age + b2 age^2 + b3 height(cm)^2. Interpretation: GOLD 2024
(airflow obstruction: FEV1/FVC < 0.70; severity by FEV1 % predicted: >= 80 mild, 50-79 moderate, 30-49 severe, < 30
very severe) and the ATS/ERS interpretive strategies (a restrictive pattern: FVC reduced (< 80% predicted) with a
normal or high FEV1/FVC, to be confirmed with lung volumes); a fixed upper-airway obstruction flattens both the
expiratory and the inspiratory limb into plateaus (Empey index FEV1 mL / PEF L/min above 10).

FEV1 is read off the drawn curve (the volume breathed out in the first second, integrating time along the loop), so
the numbers in the table are those of the picture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.imaging.canvas import BLACK, Axes, Canvas

Sex = Literal["male", "female"]
# (b0, b1 age, b2 age^2, b3 height^2) per sex, Caucasian adults (Hankinson 1999)
FEV1_COEFFS = {"male": (0.5536, -0.01303, -0.000172, 0.00014098), "female": (0.4333, -0.00361, -0.000194, 0.00011496)}
FVC_COEFFS = {"male": (-0.1933, 0.00064, -0.000269, 0.00018642), "female": (-0.3560, 0.01870, -0.000382, 0.00014815)}
OBSTRUCTION_RATIO = 0.70
RESTRICTION_FVC_PCT = 80
BLUE = (30, 70, 170)


@dataclass(frozen=True)
class SpirometryPattern:
    key: str
    name: str
    criteria: str


PATTERNS: dict[str, SpirometryPattern] = {p.key: p for p in (
    SpirometryPattern("normal", "Normal spirometry",
                      "FEV1/FVC >= 0.70 and FEV1 and FVC >= 80% predicted; the expiratory limb falls in a straight "
                      "line from an early sharp peak."),
    SpirometryPattern("obstructive", "Obstructive pattern",
                      "FEV1/FVC < 0.70 with a scooped (concave) expiratory limb (GOLD 2024)."),
    SpirometryPattern("restrictive", "Restrictive pattern",
                      "FVC < 80% predicted with FEV1/FVC >= 0.70: a small loop of normal shape (confirm with lung "
                      "volumes; ATS/ERS)."),
    SpirometryPattern("upper_airway", "Fixed upper airway obstruction",
                      "Flat plateaus of both the expiratory and the inspiratory limb; Empey index (FEV1 mL / PEF "
                      "L/min) above 10."),
)}


def predicted(coeffs: tuple[float, float, float, float], age: float, height_cm: float) -> float:
    b0, b1, b2, b3 = coeffs
    return b0 + b1 * age + b2 * age ** 2 + b3 * height_cm ** 2


class SpirometryParams(BaseModel):
    """A spirometry test: who, the pattern, and the loop's shape parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str
    sex: Sex
    age: int = Field(ge=20, le=85)
    height_cm: int = Field(ge=140, le=200)
    fvc_l: float
    pef_l_s: float  # the peak flow the loop's shape is drawn with (before any plateau)
    concavity: float  # exponent of the expiratory limb's fall (1 straight, > 1 scooped, < 1 convex)
    plateau_l_s: float | None = None  # upper-airway obstruction: the flow ceiling of both limbs

    @property
    def fvc_pred(self) -> float:
        return predicted(FVC_COEFFS[self.sex], self.age, self.height_cm)

    @property
    def fev1_pred(self) -> float:
        return predicted(FEV1_COEFFS[self.sex], self.age, self.height_cm)


def expiratory_flow(params: SpirometryParams, volume: np.ndarray) -> np.ndarray:
    """Flow (L/s) at each expired volume (L): a quick rise to PEF at 8% of FVC, then the fall."""
    fvc, pef = params.fvc_l, params.pef_l_s
    peak_v = 0.08 * fvc
    rise = pef * np.sin(np.pi / 2 * np.clip(volume / peak_v, 0, 1))
    fall = pef * np.clip(1 - (volume - peak_v) / (fvc - peak_v), 0, 1) ** params.concavity
    flow = np.where(volume < peak_v, rise, fall)
    if params.plateau_l_s is not None:
        flow = np.minimum(flow, params.plateau_l_s)
    return flow


def inspiratory_flow(params: SpirometryParams, volume: np.ndarray) -> np.ndarray:
    """Inspiratory flow (negative, L/s): a U-shaped limb, flattened by a fixed upper-airway obstruction."""
    peak = 0.9 * params.pef_l_s if params.pattern != "obstructive" else 0.6 * params.pef_l_s
    flow = -peak * np.sin(np.pi * np.clip(volume / params.fvc_l, 0, 1)) ** 0.6
    if params.plateau_l_s is not None:
        flow = np.maximum(flow, -params.plateau_l_s)
    return flow


def volume_time(params: SpirometryParams, seconds: float = 6.0) -> tuple[np.ndarray, np.ndarray]:
    """Time (s) and expired volume (L) along the expiratory limb (dt = dV / flow), to ``seconds``; time zero is the
    back-extrapolated start (where the tangent at peak flow crosses zero volume), as spirometers set it."""
    volume = np.linspace(1e-4, params.fvc_l * 0.999, 4000)
    flow = np.maximum(expiratory_flow(params, volume), 0.02)
    time = np.concatenate([[0.0], np.cumsum(np.diff(volume) / ((flow[1:] + flow[:-1]) / 2))])
    peak = int(np.argmax(flow))
    time = time - (time[peak] - volume[peak] / flow[peak])
    keep = (time >= 0) & (time <= seconds)
    return np.concatenate([[0.0], time[keep]]), np.concatenate([[0.0], volume[keep]])


def results(params: SpirometryParams) -> dict[str, Any]:
    """The report's numbers: FEV1 (read off the curve at 1 s), FVC, FEV1/FVC, PEF, % predicted, Empey index."""
    t, v = volume_time(params, 20.0)
    fev1 = float(np.interp(1.0, t, v))
    fvc = params.fvc_l
    pef = min(params.pef_l_s, params.plateau_l_s or params.pef_l_s)
    return {
        "fev1_l": round(fev1, 2), "fev1_pct_predicted": round(100 * fev1 / params.fev1_pred),
        "fvc_l": round(fvc, 2), "fvc_pct_predicted": round(100 * fvc / params.fvc_pred),
        "fev1_fvc_ratio": round(fev1 / fvc, 2), "pef_l_min": round(pef * 60),
        "empey_index": round(1000 * fev1 / (pef * 60), 1),
        "predicted_fev1_l": round(params.fev1_pred, 2), "predicted_fvc_l": round(params.fvc_pred, 2),
    }


def classify(values: dict[str, Any], plateaus: bool) -> str:
    """The pattern the numbers (and flat limbs, which only the loop shows) meet, by the module's criteria."""
    if plateaus and values["empey_index"] > 10:
        return "upper_airway"
    if values["fev1_fvc_ratio"] < OBSTRUCTION_RATIO:
        return "obstructive"
    if values["fvc_pct_predicted"] < RESTRICTION_FVC_PCT:
        return "restrictive"
    return "normal"


def gold_grade(fev1_pct: float) -> str:
    """GOLD severity of airflow obstruction from FEV1 % predicted."""
    return ("GOLD 1 (mild)" if fev1_pct >= 80 else "GOLD 2 (moderate)" if fev1_pct >= 50 else
            "GOLD 3 (severe)" if fev1_pct >= 30 else "GOLD 4 (very severe)")


def sample_params(pattern: str, rng: np.random.Generator, sex: Sex, age: int) -> SpirometryParams:
    """A test of ``pattern``, redrawn until its numbers meet the pattern with a margin from every cut-point."""
    if pattern not in PATTERNS:
        raise ValueError(f"unknown spirometry pattern {pattern!r}; known: {', '.join(PATTERNS)}")
    height = int(rng.integers(165, 191) if sex == "male" else rng.integers(152, 177))
    fvc_pred = predicted(FVC_COEFFS[sex], age, height)
    for _ in range(200):
        plateau = None
        if pattern == "normal":
            fvc, concavity, pef = fvc_pred * rng.uniform(0.92, 1.1), rng.uniform(1.15, 1.4), rng.uniform(7, 9)
        elif pattern == "obstructive":
            fvc, concavity, pef = fvc_pred * rng.uniform(0.82, 1.0), rng.uniform(2.4, 3.6), rng.uniform(3.5, 6.5)
        elif pattern == "restrictive":
            fvc, concavity, pef = fvc_pred * rng.uniform(0.5, 0.68), rng.uniform(0.95, 1.2), rng.uniform(4.5, 6.5)
        else:
            fvc, concavity, pef = fvc_pred * rng.uniform(0.85, 1.0), rng.uniform(0.9, 1.1), rng.uniform(7.5, 9.5)
            plateau = rng.uniform(2.3, 3.0)
        params = SpirometryParams(pattern=pattern, sex=sex, age=age, height_cm=height, fvc_l=round(float(fvc), 2),
                                  pef_l_s=round(float(pef), 2),
                                  concavity=round(float(concavity), 2),
                                  plateau_l_s=None if plateau is None else round(float(plateau), 2))
        values = results(params)
        if classify(values, plateau is not None) == pattern and _clear(values, pattern):
            return params
    raise RuntimeError(f"could not draw a clear {pattern} spirometry")  # pragma: no cover - ranges make it rare


def _clear(values: dict[str, Any], pattern: str) -> bool:
    ratio, fvc_pct, fev1_pct = values["fev1_fvc_ratio"], values["fvc_pct_predicted"], values["fev1_pct_predicted"]
    if pattern == "normal":
        return ratio >= 0.75 and fvc_pct >= 88 and fev1_pct >= 85
    if pattern == "obstructive":
        return ratio <= 0.62 and fvc_pct >= 80
    if pattern == "restrictive":
        return ratio >= 0.78 and fvc_pct <= 72
    return values["empey_index"] > 11


def render(params: SpirometryParams, title: str, subtitle: str, loop_right: bool = False) -> bytes:
    """The report page (PNG): flow-volume loop (measured solid, predicted dashed), volume-time curve, table; the
    loop on the left, or on the right with ``loop_right``."""
    canvas = Canvas(250.0, 150.0, px_per_mm=4.0)
    canvas.text(10, 4, title, 3.6)
    canvas.text(10, 10, subtitle, 3.0)
    values = results(params)
    normal = params.model_copy(update={"fvc_l": params.fvc_pred, "pef_l_s": 8.0 * params.fvc_pred / 4.6 + 1.0,
                                       "concavity": 1.25, "plateau_l_s": None, "pattern": "normal"})
    top_flow = max(12.0, float(np.ceil(max(params.pef_l_s, normal.pef_l_s) + 1)))
    vmax = float(np.ceil(max(params.fvc_l, params.fvc_pred) + 0.5))
    loop_x, side_x = (140.0, 20.0) if loop_right else (22.0, 145.0)
    loop = Axes(canvas, loop_x, 20, 100, 105, (0, vmax), (-top_flow * 0.8, top_flow))
    loop.frame(np.arange(0, vmax + 0.1, 1), np.arange(-int(top_flow * 0.8) // 2 * 2, top_flow + 0.1, 2),
               xlabel="Volume (L)", ylabel="Flow (L/s)")
    loop.canvas.line([(loop.x, float(loop.py(0))), (loop.x + loop.w, float(loop.py(0)))], BLACK, 0.2)
    for p, colour, dashed in ((normal, (120, 120, 120), True), (params, BLUE, False)):
        v = np.linspace(0, p.fvc_l, 400)
        loop.plot(v, expiratory_flow(p, v), colour, 0.45, dashed)
        loop.plot(v, inspiratory_flow(p, v), colour, 0.45, dashed)
    vt = Axes(canvas, side_x, 20, 95, 60, (0, 6), (0, vmax))
    vt.frame(range(0, 7), np.arange(0, vmax + 0.1, 1), xlabel="Time (s)", ylabel="Volume (L)")
    t, v = volume_time(params)
    vt.plot(t, v, BLUE, 0.45)
    tp, vp = volume_time(normal)
    vt.plot(tp, vp, (120, 120, 120), 0.4, dashed=True)
    rows = [("", "Measured", "Predicted", "% pred"),
            ("FEV1 (L)", f"{values['fev1_l']:.2f}", f"{values['predicted_fev1_l']:.2f}",
             f"{values['fev1_pct_predicted']}"),
            ("FVC (L)", f"{values['fvc_l']:.2f}", f"{values['predicted_fvc_l']:.2f}", f"{values['fvc_pct_predicted']}"),
            ("FEV1/FVC", f"{values['fev1_fvc_ratio']:.2f}", "", ""),
            ("PEF (L/min)", f"{values['pef_l_min']}", "", "")]
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            canvas.text(side_x + 5 + c * 24, 96 + r * 7, cell, 3.0, anchor="la")
    canvas.text(side_x + 5, 134, "solid: measured   dashed: predicted (NHANES III)", 2.6, (90, 90, 90))
    return canvas.png()
