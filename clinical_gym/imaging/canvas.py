"""A drawing surface in millimetres, the unit of every chart paper (ECG and CTG grids, chart axes), drawn with Pillow
on a palette image at ``px_per_mm`` pixels per millimetre and saved as a PNG (small and fast to encode)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

Colour = tuple[int, int, int]
BLACK: Colour = (20, 20, 20)
WHITE: Colour = (255, 255, 255)
GRID_MINOR: Colour = (250, 200, 200)
GRID_MAJOR: Colour = (235, 140, 140)
PX_PER_MM = 5.0


@lru_cache(maxsize=64)
def _font(size_px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size_px)


class Canvas:
    """``width_mm`` x ``height_mm`` of white paper at ``px_per_mm`` output pixels per millimetre. Coordinates are
    millimetres from the top-left corner."""

    def __init__(self, width_mm: float, height_mm: float, px_per_mm: float = PX_PER_MM,
                 background: Colour = WHITE) -> None:
        self.width_mm, self.height_mm = width_mm, height_mm
        self.px_per_mm = px_per_mm
        self.scale = px_per_mm
        # A palette image: every colour drawn gets a palette entry, so the PNG needs no quantizing (drawing and
        # encoding a 12-lead page takes milliseconds); lines and text are not anti-aliased.
        self.image = Image.new("P", (round(width_mm * self.scale), round(height_mm * self.scale)), 0)
        self.image.putpalette(list(background))
        self.draw = ImageDraw.Draw(self.image)

    def copy(self) -> Canvas:
        """An independent canvas with this one's drawing (e.g. a blank gridded page drawn once and reused)."""
        twin = object.__new__(Canvas)
        twin.__dict__.update(self.__dict__)
        twin.image = self.image.copy()
        twin.draw = ImageDraw.Draw(twin.image)
        return twin

    def px(self, mm: float) -> float:
        return mm * self.scale

    def width(self, mm: float) -> int:
        """A line width in drawing pixels, at least one."""
        return max(1, round(mm * self.scale))

    def grid(self, x: float, y: float, w: float, h: float, minor: float, major: float, *,
             minor_colour: Colour = GRID_MINOR, major_colour: Colour = GRID_MAJOR, y_minor: float | None = None,
             y_major: float | None = None) -> None:
        """Chart-paper grid over the box (lines every ``minor`` mm, bold every ``major`` mm; ``y_minor`` /
        ``y_major`` set the horizontal lines apart)."""
        y_minor, y_major = y_minor or minor, y_major or major
        for step, colour, width in ((minor, minor_colour, 0.1), (major, major_colour, 0.2)):
            for gx in np.arange(x, x + w + 1e-6, step):
                self.line([(gx, y), (gx, y + h)], colour, width)
        for step, colour, width in ((y_minor, minor_colour, 0.1), (y_major, major_colour, 0.2)):
            for gy in np.arange(y, y + h + 1e-6, step):
                self.line([(x, gy), (x + w, gy)], colour, width)

    def line(self, points: Sequence[tuple[float, float]], colour: Colour = BLACK, width_mm: float = 0.3) -> None:
        self.draw.line([(self.px(a), self.px(b)) for a, b in points], fill=colour, width=self.width(width_mm),
                       joint="curve")

    def trace(self, xs_mm: np.ndarray, ys_mm: np.ndarray, colour: Colour = BLACK, width_mm: float = 0.3) -> None:
        """A polyline through arrays of x and y (mm); NaN values break it."""
        xs, ys = np.asarray(xs_mm) * self.scale, np.asarray(ys_mm) * self.scale
        breaks = np.isnan(xs) | np.isnan(ys)
        start = 0
        for stop in [*np.flatnonzero(breaks), len(xs)]:
            if stop - start >= 2:
                self.draw.line(list(zip(xs[start:stop].tolist(), ys[start:stop].tolist())), fill=colour,
                               width=self.width(width_mm), joint="curve")
            start = stop + 1

    def rect(self, x: float, y: float, w: float, h: float, *, fill: Colour | None = None,
             outline: Colour | None = None, width_mm: float = 0.2) -> None:
        self.draw.rectangle([self.px(x), self.px(y), self.px(x + w), self.px(y + h)], fill=fill, outline=outline,
                            width=self.width(width_mm) if outline else 0)

    def text(self, x: float, y: float, text: str, size_mm: float = 3.0, colour: Colour = BLACK,
             anchor: str = "la") -> None:
        """Text at (x, y); ``anchor`` as Pillow's (``"la"`` left-ascender, ``"mm"`` centred, ``"rm"`` right-middle)."""
        self.draw.text((self.px(x), self.px(y)), text, fill=colour, font=_font(max(6, round(size_mm * self.scale))),
                       anchor=anchor)

    def marker(self, x: float, y: float, symbol: str, size_mm: float, colour: Colour, width_mm: float = 0.35) -> None:
        """An audiogram-style symbol centred at (x, y): ``"o"``, ``"x"``, ``"<"``, ``">"``, ``"["``, ``"]"``."""
        r = size_mm / 2
        if symbol == "o":
            self.draw.ellipse([self.px(x - r), self.px(y - r), self.px(x + r), self.px(y + r)], outline=colour,
                              width=self.width(width_mm))
        elif symbol == "x":
            self.line([(x - r, y - r), (x + r, y + r)], colour, width_mm)
            self.line([(x - r, y + r), (x + r, y - r)], colour, width_mm)
        elif symbol in "<>":
            tip, back = (x - r, x + r * 0.2) if symbol == "<" else (x + r, x - r * 0.2)
            self.line([(back, y - r), (tip, y), (back, y + r)], colour, width_mm)
        elif symbol in "[]":
            edge, arm = (x - r * 0.3, x + r * 0.5) if symbol == "[" else (x + r * 0.3, x - r * 0.5)
            self.line([(arm, y - r), (edge, y - r), (edge, y + r), (arm, y + r)], colour, width_mm)
        else:
            raise ValueError(f"unknown marker {symbol!r}")

    def png(self) -> bytes:
        """The page as a palette PNG."""
        buffer = io.BytesIO()
        self.image.save(buffer, format="PNG", optimize=False)
        return buffer.getvalue()


def png_image(png: bytes) -> Image.Image:
    """A PNG's bytes as an RGB Pillow image."""
    return Image.open(io.BytesIO(png)).convert("RGB")


def ticks(low: float, high: float, step: float) -> Iterable[float]:
    """``low``, ``low + step``, ... up to ``high`` inclusive."""
    return np.arange(low, high + step / 2, step)


class Axes:
    """A chart box on a canvas: data coordinates (``xlim``, ``ylim``; ``log_x`` for a log-frequency axis,
    ``invert_y`` for an axis that grows downwards, as an audiogram's) mapped onto the box at (x, y) mm."""

    def __init__(self, canvas: Canvas, x: float, y: float, w: float, h: float, xlim: tuple[float, float],
                 ylim: tuple[float, float], *, log_x: bool = False, invert_y: bool = False) -> None:
        self.canvas, self.x, self.y, self.w, self.h = canvas, x, y, w, h
        self.xlim, self.ylim, self.log_x, self.invert_y = xlim, ylim, log_x, invert_y

    def px(self, value: np.ndarray | float) -> np.ndarray | float:
        lo, hi = (np.log10(self.xlim[0]), np.log10(self.xlim[1])) if self.log_x else self.xlim
        v = np.log10(value) if self.log_x else value
        return self.x + (np.asarray(v) - lo) / (hi - lo) * self.w

    def py(self, value: np.ndarray | float) -> np.ndarray | float:
        lo, hi = self.ylim
        frac = (np.asarray(value) - lo) / (hi - lo)
        return self.y + (frac if self.invert_y else 1 - frac) * self.h

    def frame(self, xticks: Iterable[float], yticks: Iterable[float], *, xlabel: str, ylabel: str,
              xtick_text: Callable[[float], str] = lambda v: f"{v:g}", ytick_text: Callable[[float], str] =
              lambda v: f"{v:g}", grid: Colour = (215, 215, 215)) -> None:
        """Box, grid lines at the ticks, tick labels and axis titles."""
        c = self.canvas
        for v in xticks:
            c.line([(float(self.px(v)), self.y), (float(self.px(v)), self.y + self.h)], grid, 0.15)
            c.text(float(self.px(v)), self.y + self.h + 1.2, xtick_text(v), 2.6, anchor="ma")
        for v in yticks:
            c.line([(self.x, float(self.py(v))), (self.x + self.w, float(self.py(v)))], grid, 0.15)
            c.text(self.x - 1.2, float(self.py(v)), ytick_text(v), 2.6, anchor="rm")
        c.rect(self.x, self.y, self.w, self.h, outline=BLACK, width_mm=0.25)
        c.text(self.x + self.w / 2, self.y + self.h + 5.5, xlabel, 2.9, anchor="ma")
        c.text(self.x - 1.0, self.y - 2.0, ylabel, 2.9, anchor="ls")

    def plot(self, xs: np.ndarray, ys: np.ndarray, colour: Colour = BLACK, width_mm: float = 0.35,
             dashed: bool = False) -> None:
        px, py = np.asarray(self.px(xs), float), np.asarray(self.py(ys), float)
        if not dashed:
            self.canvas.trace(px, py, colour, width_mm)
            return
        for start in range(0, len(px) - 1, 8):
            self.canvas.trace(px[start:start + 5], py[start:start + 5], colour, width_mm)
