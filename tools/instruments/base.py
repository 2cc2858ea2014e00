"""What every scoring instrument shares: the result model, the ``@instrument`` decorator, and banding helpers."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict

from clinical_gym.tools.arguments import Arguments
from clinical_gym.tools.spec import ToolKind, tool

F = TypeVar("F", bound=Callable[..., Any])


class InstrumentResult(BaseModel):
    """A scored instrument: the total, its risk category, what that means, and the points each item contributed."""

    model_config = ConfigDict(frozen=True)

    instrument: str
    score: int | float
    category: str
    interpretation: str
    points: dict[str, int | float]


class Risk(NamedTuple):
    """A score band: scores up to ``upto`` (inclusive, after any lower band) fall in ``category``."""

    upto: float
    category: str
    interpretation: str


def instrument(function: F) -> F:
    """Make a scoring function a THINK tool whose arguments (types and ranges) are checked on every call.

    Out-of-range or ill-typed arguments raise ``tools.ArgumentError`` (a ValueError) naming the argument and the
    values it accepts, whether the function is called directly or through a toolkit.
    """
    arguments = Arguments.of(function, tool=function.__name__)
    signature = inspect.signature(function)

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        return function(**arguments.validate_python(signature.bind(*args, **kwargs).arguments))

    return tool(kind=ToolKind.THINK)(checked)  # type: ignore[return-value]


def points_from(value: float, bands: Sequence[tuple[float, int]], otherwise: int) -> int:
    """The points of the first ``(lower_bound, points)`` band that ``value`` reaches (bands from high to low)."""
    for lower, points in bands:
        if value >= lower:
            return points
    return otherwise


def classify(score: float, risks: Sequence[Risk]) -> Risk:
    """The band a score falls in (``risks`` ordered by ``upto``; the last band takes every higher score)."""
    for risk in risks:
        if score <= risk.upto:
            return risk
    return risks[-1]


def scored(instrument_name: str, points: dict[str, int | float], risks: Sequence[Risk]) -> InstrumentResult:
    """The result of an instrument whose score is the sum of its items' points, banded by ``risks``."""
    score = sum(points.values())
    risk = classify(score, risks)
    return InstrumentResult(instrument=instrument_name, score=score, category=risk.category,
                            interpretation=risk.interpretation, points=points)
