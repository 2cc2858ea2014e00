"""ECGs on standard paper: 25 mm/s, 10 mm/mV, 1 mm and 5 mm grid, a 1 mV x 200 ms calibration pulse at the start
of every row, lead labels. ``twelve_lead`` draws the 3 x 4 layout (2.5 s of each lead, simultaneous columns) with a
10 s lead II rhythm strip underneath, ``twelve_lead_6x2`` the 6 x 2 layout (limb leads then chest leads, 5 s
each); ``rhythm_strip`` draws one lead for the whole 10 s."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from clinical_gym.imaging.canvas import BLACK, Canvas
from clinical_gym.imaging.ecg_signal import FS, Recording

PAPER_SPEED_MM_S = 25.0
GAIN_MM_MV = 10.0
LAYOUT_3X4 = (("I", "aVR", "V1", "V4"), ("II", "aVL", "V2", "V5"), ("III", "aVF", "V3", "V6"))
LAYOUT_6X2 = (("I", "V1"), ("II", "V2"), ("III", "V3"), ("aVR", "V4"), ("aVL", "V5"), ("aVF", "V6"))
LEFT_MM, TRACE_MM, RIGHT_MM = 14.0, 250.0, 4.0
HEADER_MM, ROW_MM = 17.0, 33.0


def _header(canvas: Canvas, title: str, subtitle: str) -> None:
    canvas.text(LEFT_MM, 3.0, title, 3.6)
    canvas.text(LEFT_MM, 9.0, subtitle, 3.0)
    canvas.text(LEFT_MM + TRACE_MM, 9.0, f"{PAPER_SPEED_MM_S:g} mm/s   {GAIN_MM_MV:g} mm/mV   0.05-150 Hz", 3.0,
                anchor="ra")


def _calibration(canvas: Canvas, baseline_y: float) -> None:
    """The 1 mV, 200 ms square pulse before a row (10 mm tall, 5 mm wide)."""
    x = LEFT_MM - 11.0
    h = 1.0 * GAIN_MM_MV
    canvas.line([(x, baseline_y), (x + 2, baseline_y), (x + 2, baseline_y - h), (x + 7, baseline_y - h),
                 (x + 7, baseline_y), (x + 9, baseline_y)], BLACK, 0.3)


def _draw(canvas: Canvas, signal_mv: np.ndarray, start_s: float, x_mm: float, baseline_y: float,
          top: float, bottom: float) -> None:
    n = len(signal_mv)
    xs = x_mm + (np.arange(n) / FS) * PAPER_SPEED_MM_S
    ys = np.clip(baseline_y - signal_mv * GAIN_MM_MV, top, bottom)
    canvas.trace(xs, ys, BLACK, 0.4)


def _segment(recording: Recording, lead: str, start_s: float, stop_s: float) -> np.ndarray:
    return recording.leads[lead][int(round(start_s * FS)):int(round(stop_s * FS))]


@lru_cache(maxsize=8)
def _paper(height_mm: float, grid_mm: float) -> Canvas:
    """A blank page with the ECG grid (drawn once per size, then copied)."""
    canvas = Canvas(LEFT_MM + TRACE_MM + RIGHT_MM, height_mm)
    canvas.grid(LEFT_MM, HEADER_MM, TRACE_MM, grid_mm, 1.0, 5.0)
    return canvas


def page(recording: Recording, rows: Sequence[Sequence[str]], row_mm: float, title: str, subtitle: str) -> bytes:
    """A page of rows of leads (PNG): each row shares the recording's time between its leads (one lead: all of
    it), with the calibration pulse at its start and a tick where the lead changes."""
    height = HEADER_MM + len(rows) * row_mm + 3.0
    canvas = _paper(height, len(rows) * row_mm).copy()
    _header(canvas, title, subtitle)
    for r, leads in enumerate(rows):
        top = HEADER_MM + r * row_mm
        baseline = top + row_mm * 0.6
        _calibration(canvas, baseline)
        span_s = recording.duration_s / len(leads)
        for c, lead in enumerate(leads):
            x = LEFT_MM + c * span_s * PAPER_SPEED_MM_S
            _draw(canvas, _segment(recording, lead, c * span_s, (c + 1) * span_s), c * span_s, x, baseline,
                  HEADER_MM, height - 1)
            canvas.text(x + 1.0, top + 1.5, lead, 3.4)
            if c:
                canvas.line([(x, baseline - 3), (x, baseline + 3)], BLACK, 0.3)
    return canvas.png()


def twelve_lead(recording: Recording, title: str, subtitle: str, rhythm_lead: str = "II") -> bytes:
    """The 12-lead page (PNG): 3 rows x 4 columns of 2.5 s plus a 10 s rhythm strip of ``rhythm_lead``."""
    return page(recording, [*LAYOUT_3X4, (rhythm_lead,)], ROW_MM, title, subtitle)


def twelve_lead_6x2(recording: Recording, title: str, subtitle: str) -> bytes:
    """The 12-lead page in the 6 x 2 layout (PNG): limb leads for the first 5 s, chest leads for the last 5 s."""
    return page(recording, LAYOUT_6X2, 24.0, title, subtitle)


def rhythm_strip(recording: Recording, lead: str, title: str, subtitle: str) -> bytes:
    """One lead for the whole recording (PNG), with its calibration pulse."""
    return page(recording, [(lead,)], 1.6 * ROW_MM, title, subtitle)
