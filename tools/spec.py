"""Marking functions as tools (``@tool``), tool kinds, and the spec of one tool (name, kind, OpenAI schema)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from clinical_gym.tools.arguments import Arguments

F = TypeVar("F", bound=Callable[..., Any])
_MARK = "__tool_mark__"


class ToolKind(str, enum.Enum):
    """What a tool does: reads state, writes state, helps the agent think (calculators), or submits (ends the
    episode)."""

    READ = "read"
    WRITE = "write"
    THINK = "think"
    SUBMIT = "submit"


@dataclass(frozen=True)
class ToolMark:
    """What ``@tool`` records on a function: its kind and, when it differs from the function's name, its tool name."""

    kind: ToolKind
    name: str | None = None


def tool(*, kind: ToolKind, name: str | None = None) -> Callable[[F], F]:
    """Mark a function or method as a tool of ``kind``; the function itself is returned unchanged.

    Its schema comes from the signature, the type hints and the Google-style docstring (first paragraph: the
    description; ``Args:``: one description per parameter).
    """
    mark = ToolMark(ToolKind(kind), name)

    def apply(function: F) -> F:
        setattr(function, _MARK, mark)
        return function

    return apply


def tool_mark(attribute: Any) -> ToolMark | None:
    """The ``@tool`` mark of a class attribute (a function, staticmethod or classmethod, marked inside or out)."""
    for candidate in (attribute, getattr(attribute, "__func__", None)):
        mark = getattr(candidate, _MARK, None)
        if isinstance(mark, ToolMark):
            return mark
    return None


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, kind, arguments (description, schema, validation) and the function it was built from."""

    name: str
    kind: ToolKind
    arguments: Arguments
    function: Callable[..., Any]

    @classmethod
    def of(cls, function: Callable[..., Any], *, name: str, kind: ToolKind, skip_self: bool = False) -> ToolSpec:
        """The spec of ``function`` (``skip_self`` for an unbound method)."""
        return cls(name=name, kind=kind, arguments=Arguments.of(function, tool=name, skip_self=skip_self),
                   function=function)

    @property
    def description(self) -> str:
        return self.arguments.description

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments object."""
        return self.arguments.schema

    def openai_schema(self) -> dict[str, Any]:
        """``{"type": "function", "function": {"name", "description", "parameters"}}``."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}
