"""The closing lines of every ``benchmarks/perf_*.py``: one line per goal with the measured figure, the goal and
PASS or SHORT, so a run's verdict can be read (and grepped) at a glance::

    GOAL episode speed vs peer: 12.3x (goal >= 10x) PASS
"""

from __future__ import annotations

import math


def goal_line(name: str, figure: float, goal: float, *, at_least: bool = True, unit: str = "", digits: int = 2) -> str:
    """``GOAL <name>: <figure><unit> (goal >= or <= <goal><unit>) PASS|SHORT``; a NaN figure (not measured) is
    SHORT."""
    met = not math.isnan(figure) and (figure >= goal if at_least else figure <= goal)
    sign = ">=" if at_least else "<="
    return f"GOAL {name}: {figure:.{digits}f}{unit} (goal {sign} {goal:g}{unit}) {'PASS' if met else 'SHORT'}"


def print_goal(name: str, figure: float, goal: float, **kwargs: object) -> bool:
    """Print ``goal_line`` and return whether the goal is met."""
    line = goal_line(name, figure, goal, **kwargs)  # type: ignore[arg-type]
    print(line, flush=True)
    return line.endswith("PASS")
