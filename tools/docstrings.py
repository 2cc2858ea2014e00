"""Google-style docstrings: the summary paragraph and the per-argument descriptions of the ``Args:`` section."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns?|Yields|Raises|Examples?|Notes?|References?|Sources?"
                      r"|See Also)\s*:\s*$")
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True)
class Docstring:
    """A parsed docstring: ``description`` is the first paragraph; ``args`` maps argument names to descriptions."""

    description: str
    args: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> Docstring:
    """Parse a Google-style docstring (``Args:`` entries may be ``name: text`` or ``name (type): text``)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    paragraph: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        paragraph.append(line.strip())
    return Docstring(description=" ".join(paragraph), args=_args_section(lines))


def _args_section(lines: list[str]) -> dict[str, str]:
    """The entries of the ``Args:`` section; continuation lines are joined to their entry."""
    args: dict[str, list[str]] = {}
    inside, entry_indent, current = False, None, None
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        section = _SECTION.match(stripped) if indent == 0 else None
        if section:
            inside = section.group(1) in ("Args", "Arguments", "Parameters")
            entry_indent, current = None, None
            continue
        if not inside or not stripped:
            continue
        if indent == 0:
            inside = False
            continue
        if entry_indent is None:
            entry_indent = indent
        match = _ARG_LINE.match(stripped) if indent == entry_indent else None
        if match:
            current = match.group(1).lstrip("*")
            args[current] = [match.group(2).strip()]
        elif current is not None:
            args[current].append(stripped)
    return {name: " ".join(part for part in parts if part) for name, parts in args.items()}
