"""Toolkits: classes whose ``@tool`` methods are the tools, their composition, and dispatch of agent calls.

A subclass's tools are its public attributes marked with ``@tool`` (methods, staticmethods or classmethods; names
starting with ``_`` are never tools), in definition order, inherited ones first. Specs are built when the class is
defined, so a tool whose signature or docstring cannot be turned into a schema fails at import.

``toolkit.call(...)`` never raises for a bad call: parse errors, unknown tools, invalid arguments and errors raised
by the tool all come back as a ``ToolResult`` with ``ok=False`` and a message for the agent. ``ValueError`` and
``KeyError`` are the expected way for a tool to refuse (``error_kind="tool_error"``); any other exception is a bug
in the tool (``error_kind="tool_crash"``, logged) so that graders can count it apart from agent mistakes.
"""

from __future__ import annotations

import difflib
import functools
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_jsonable_python

from clinical_gym.tools.arguments import ArgumentError, ToolDefinitionError
from clinical_gym.tools.calls import CallForm, ParsedCall, parse_tool_call
from clinical_gym.tools.spec import ToolKind, ToolSpec, tool_mark
from clinical_gym.tools.trusted import trusted

logger = logging.getLogger(__name__)

ErrorKind = Literal["invalid_call", "unknown_tool", "invalid_arguments", "tool_error", "tool_crash"]
_MAX_LISTED = 40
_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # one encoder, not one per call


def _one_shot_encoder() -> Callable[[Any, int], Any] | None:
    """The C encoder that ``_COMPACT_JSON.encode`` makes on every call (with a markers dict and a float-text
    closure: ~1.2 of its 3.2 us for a tool's usual dict), made once; None where the C encoder is missing or reads
    its arguments otherwise. Without markers a circular value is not caught as such but fails as too deep
    (RecursionError), which ``render`` answers like the circular-reference error: through pydantic's JSON view."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    try:
        encoder = make(None, _COMPACT_JSON.default, json.encoder.encode_basestring, None, ":", ",", False, False,
                       True)
        probe = {"a": [1, 2.5, None, True, "é\n", float("nan")], "b": {}}
        return encoder if "".join(encoder(probe, 0)) == _COMPACT_JSON.encode(probe) else None
    except Exception:  # noqa: BLE001 - another Python's C encoder: encode as JSONEncoder does
        return None


_ENCODE = _one_shot_encoder()


class ToolNameClashError(ValueError):
    """Two toolkits (or two attributes of one) define a tool with the same name."""


class ToolResult(BaseModel):
    """The outcome of one call: ``content`` is what the agent sees (the result as text, or ``Error: ...``)."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    content: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    kind: ToolKind | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    form: CallForm = CallForm.INVALID

    @property
    def ends_episode(self) -> bool:
        """True for a successful SUBMIT call."""
        return self.ok and self.kind is ToolKind.SUBMIT


class BoundTool(NamedTuple):
    """A tool ready to run: its spec, the callable (bound to its toolkit), and the toolkit class that owns it.
    (A named tuple: every episode binds its toolkit's tools afresh, and a tuple is made in half the time of a frozen
    dataclass.)"""

    spec: ToolSpec
    function: Callable[..., Any]
    owner: str


class Toolkit:
    """A set of tools. Subclass it and mark methods with ``@tool(kind=...)``; combine toolkits with ``a + b``."""

    _tool_attributes: ClassVar[Mapping[str, tuple[str, ToolSpec]]] = MappingProxyType({})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, tuple[str, ToolSpec]] = {}  # tool name -> (attribute, spec)
        for klass in reversed(cls.__mro__):
            for attribute, value in vars(klass).items():
                if attribute.startswith("_"):
                    continue
                found = {name: entry for name, entry in found.items() if entry[0] != attribute}  # overridden
                mark = tool_mark(value)
                if mark is None:
                    continue
                name = mark.name or attribute
                if name in found:
                    raise ToolNameClashError(f"{cls.__name__}: tool name {name!r} is used by both "
                                             f"{found[name][0]!r} and {attribute!r}")
                if attribute in vars(Toolkit):
                    raise ToolDefinitionError(f"{cls.__name__}: tool {attribute!r} would hide Toolkit.{attribute}")
                function = getattr(value, "__func__", value)  # staticmethod/classmethod: the plain function
                found[name] = (attribute, ToolSpec.of(function, name=name, kind=mark.kind,
                                                      skip_self=not isinstance(value, staticmethod)))
        cls._tool_attributes = MappingProxyType(found)

    @classmethod
    def tool_specs(cls) -> list[ToolSpec]:
        """The specs of this class's tools (no instance needed)."""
        return [spec for _, spec in cls._tool_attributes.values()]

    @property
    def tools(self) -> Mapping[str, BoundTool]:
        """This toolkit's tools by name."""
        bound = self.__dict__.get("_bound_tools")
        if bound is None:
            owner = type(self).__name__
            bound = MappingProxyType({name: BoundTool(spec, getattr(self, attribute), owner)
                                      for name, (attribute, spec) in self._tool_attributes.items()})
            self.__dict__["_bound_tools"] = bound
        return bound

    @property
    def names(self) -> list[str]:
        return list(self.tools)

    def spec(self, name: str) -> ToolSpec:
        """The spec of tool ``name`` (KeyError if there is none)."""
        return self.tools[name].spec

    def openai_schemas(self) -> list[dict[str, Any]]:
        """Every tool's OpenAI function schema, for ``info["tools"]`` or a chat API's ``tools=``."""
        return [bound.spec.openai_schema() for bound in self.tools.values()]

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __len__(self) -> int:
        return len(self.tools)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self.tools)})"

    def __add__(self, other: Toolkit) -> Toolkit:
        if not isinstance(other, Toolkit):
            return NotImplemented
        return Toolkit.merge(self, other)

    @staticmethod
    def merge(*toolkits: Toolkit) -> Toolkit:
        """One toolkit holding the tools of all ``toolkits``; a tool name defined twice raises ToolNameClashError."""
        merged: dict[str, BoundTool] = {}
        for toolkit in toolkits:
            for name, bound in toolkit.tools.items():
                if name in merged:
                    raise ToolNameClashError(f"tool {name!r} is defined by both {merged[name].owner} and {bound.owner}")
                merged[name] = bound
        combined = Toolkit()
        combined.__dict__["_bound_tools"] = MappingProxyType(merged)
        return combined

    def with_bound(self, others: Mapping[str, BoundTool]) -> Toolkit:
        """One toolkit holding this toolkit's tools, then ``others`` (names must not clash: not checked here, see
        ``merge``), whose tools of this class are bound to this instance when first looked up: a tool environment
        makes one per reset, and most of a domain's 25 tools are never called in an episode (binding them all took
        8 us a reset)."""
        combined = Toolkit()
        own = self.__dict__.get("_bound_tools")
        if own is not None or type(self).tools is not Toolkit.tools:  # already bound (a merge), or its own view
            combined.__dict__["_bound_tools"] = MappingProxyType({**self.tools, **others})
        else:
            combined.__dict__["_bound_tools"] = _BindOnLookup(self, others)
        return combined

    def call(self, call: ParsedCall | str | Mapping[str, Any] | list[Any]) -> ToolResult:
        """Run one call (a ``ParsedCall``, or raw agent output to parse first) and report what happened."""
        if type(call) is not ParsedCall and not isinstance(call, ParsedCall):  # (the ABC check only for others)
            call = parse_tool_call(call)
        if call.error is not None:  # (not call.ok: the property's frame, every call)
            return _failure(call, "invalid_call", call.error or "invalid call")
        bound = self.tools.get(call.name)
        if bound is None:
            return _failure(call, "unknown_tool", self._unknown(call.name))
        spec = bound.spec
        try:
            values = spec.arguments.validate_json(call.arguments)
        except ArgumentError as exc:
            return _failure(call, "invalid_arguments", f"invalid arguments for {spec.name}: {exc}", spec.kind)
        try:
            output = bound.function(**values)
        except (ValueError, KeyError) as exc:
            return _failure(call, "tool_error", _exception_text(exc), spec.kind)
        except Exception as exc:  # noqa: BLE001 - a tool bug must not end the rollout; it is reported and logged
            return _crash(call, spec, exc)
        try:
            content = render(output)
        except Exception as exc:  # noqa: BLE001 - an unserialisable result is a tool bug too
            return _crash(call, spec, exc)
        # built without re-validation (clinical_gym.tools.trusted): every value is of its field's type, the
        # arguments a copy as validation makes (2.4 -> 1.9 us a call)
        return trusted(ToolResult, _SUCCESS_GIVEN, ok=True, content=content, name=spec.name,
                       arguments=dict(call.arguments), kind=spec.kind, error=None, error_kind=None, form=call.form)

    def _unknown(self, name: str) -> str:
        names = tuple(self.tools)
        # the close-match search grows with the number of tools: repeated short names come from a cache
        return _unknown_cached(names, name) if len(name) <= 100 else _unknown_message(names, name)


class _BindOnLookup(Mapping[str, BoundTool]):
    """A read-only map of a toolkit's tools followed by ``others`` (already bound), in that order; each of the
    toolkit's tools is bound to it the first time it is looked up."""

    __slots__ = ("_toolkit", "_attributes", "_owner", "_others", "_bound")

    def __init__(self, toolkit: Toolkit, others: Mapping[str, BoundTool]) -> None:
        self._toolkit = toolkit
        self._attributes = type(toolkit)._tool_attributes
        self._owner = type(toolkit).__name__
        self._others = others
        self._bound: dict[str, BoundTool] = {}

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        bound = self._bound.get(name)
        if bound is None:
            entry = self._attributes.get(name)
            if entry is None:
                return self._others.get(name, default)
            bound = self._bound[name] = BoundTool(entry[1], getattr(self._toolkit, entry[0]), self._owner)
        return bound

    def __getitem__(self, name: str) -> BoundTool:
        bound = self.get(name, _MISSING)
        if bound is _MISSING:
            raise KeyError(name)
        return bound  # type: ignore[no-any-return]

    def __contains__(self, name: object) -> bool:
        return name in self._attributes or name in self._others

    def __iter__(self) -> Iterator[str]:
        yield from self._attributes
        yield from (name for name in self._others if name not in self._attributes)

    def __len__(self) -> int:
        return len(self._attributes) + sum(1 for name in self._others if name not in self._attributes)

    def __repr__(self) -> str:
        return f"{{{', '.join(map(repr, self))}}}"


_MISSING = object()


def _unknown_message(names: tuple[str, ...], name: str) -> str:
    """What the agent is told about an unknown tool name: close matches, then the tools there are."""
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    close += [n for n in names if n.lower() == name.lower() and n not in close]
    message = f"unknown tool {name!r}."
    if close:
        message += " Did you mean " + " or ".join(repr(n) for n in close) + "?"
    listed = ", ".join(names[:_MAX_LISTED]) + (", ..." if len(names) > _MAX_LISTED else "")
    return message + (f" Available tools: {listed}" if names else " This toolkit has no tools.")


_unknown_cached = functools.lru_cache(maxsize=4096)(_unknown_message)


def render(output: Any) -> str:
    """A tool's return value as the text the agent sees: strings as they are, anything else as compact JSON."""
    if isinstance(output, str):
        return output
    if output is None:
        return "OK"
    try:  # plain JSON values (a tool's usual dict of text and numbers) encode as they are, the same text
        return "".join(_ENCODE(output, 0)) if _ENCODE is not None else _COMPACT_JSON.encode(output)
    except (TypeError, ValueError, RecursionError):
        # models, enums of other types, dates, sets, non-text keys ...: pydantic's JSON view first (2 us a result
        # when applied to everything)
        return _COMPACT_JSON.encode(to_jsonable_python(output))


def _exception_text(exc: Exception) -> str:
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc) or type(exc).__name__


def _crash(call: ParsedCall, spec: ToolSpec, exc: Exception) -> ToolResult:
    logger.exception("tool %s crashed", spec.name)
    return _failure(call, "tool_crash", f"tool {spec.name} failed unexpectedly ({type(exc).__name__}: {exc})",
                    spec.kind)


def _failure(call: ParsedCall, kind: ErrorKind, message: str, tool_kind: ToolKind | None = None) -> ToolResult:
    return trusted(ToolResult, ok=False, content=f"Error: {message}", name=call.name, arguments=dict(call.arguments),
                   kind=tool_kind, error=message, error_kind=kind, form=call.form)


_SUCCESS_GIVEN = frozenset({"ok", "content", "name", "arguments", "kind", "form"})
