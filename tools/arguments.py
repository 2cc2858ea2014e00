"""A tool's arguments: parameters read from its signature and docstring, their JSON Schema, and their validation.

Validation goes through a pydantic model built from the signature (strict: no string-to-number or number-to-bool
coercion; integers are accepted for floats). Failures raise ``ArgumentError`` whose message names each bad argument,
what it accepts and what it got.
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from clinical_gym.tools.docstrings import parse_docstring
from clinical_gym.tools.schema import JSONSchema, describe_schema, json_schema, json_value

_NO_DEFAULT = inspect.Parameter.empty
_MAX_SHOWN = 60
_STRICT_JSON = json.JSONEncoder(allow_nan=False)  # json.dumps(..., allow_nan=False) without a new encoder per call
_SCALARS = frozenset({str, int, float, bool, type(None)})
# (validation model, (names, value types, values)) -> validated keyword arguments, for calls whose arguments and
# validated values are all immutable scalars (validation is a pure function of them); cleared when full
_VALIDATED: dict[tuple[type[BaseModel], tuple[tuple[str, ...], tuple[type, ...], tuple[Any, ...]]],
                 dict[str, Any]] = {}
_MAX_VALIDATED = 4096


class ToolDefinitionError(TypeError):
    """A tool function whose signature or docstring cannot be turned into a schema."""


class ArgumentError(ValueError):
    """Arguments that do not fit a tool's parameters; the message says which, what is accepted and what was given."""


@dataclass(frozen=True)
class Parameter:
    """One tool parameter: its name, type hint, default (``inspect.Parameter.empty`` when required), description."""

    name: str
    hint: Any
    default: Any
    description: str

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT


@dataclass(frozen=True)
class Arguments:
    """The parameters of one tool with their JSON Schema (``schema``) and validation model."""

    tool: str
    description: str
    parameters: tuple[Parameter, ...]
    schema: JSONSchema
    model: type[BaseModel]

    @classmethod
    def of(cls, function: Callable[..., Any], *, tool: str, skip_self: bool = False) -> Arguments:
        """Read ``function``'s parameters; ``skip_self`` drops the first one (an unbound method's ``self``).

        Raises ``ToolDefinitionError`` for parameters without a type hint or a docstring ``Args:`` entry,
        ``*args``/``**kwargs``, positional-only parameters, ``Args:`` entries naming no parameter, or no docstring.
        Results are cached per function, so a tool shared by several toolkits is read once.
        """
        return _read(inspect.unwrap(function), tool, skip_self)

    def validate_json(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validate arguments decoded from JSON (enum members given by value); returns keyword arguments."""
        if not isinstance(arguments, dict):
            raise ArgumentError(f"arguments must be a JSON object, got {_json_type(arguments)}")
        key = _scalar_items(arguments)
        if key is not None:  # agents repeat calls (the same patient id): scalar arguments validate the same way
            known = _VALIDATED.get((self.model, key))
            if known is not None:
                return dict(known)
        try:
            text = _STRICT_JSON.encode(arguments)
        except (TypeError, ValueError) as exc:
            raise ArgumentError(f"arguments must be JSON values ({exc})") from exc
        values = self._validate(lambda: self.model.model_validate_json(text, strict=True))
        if key is not None and all(type(v) in _SCALARS or isinstance(v, enum.Enum) for v in values.values()):
            if len(_VALIDATED) >= _MAX_VALIDATED:
                _VALIDATED.clear()
            _VALIDATED[(self.model, key)] = dict(values)
        return values

    def validate_python(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validate keyword arguments of a direct Python call; returns them as the function should receive them."""
        return self._validate(lambda: self.model.model_validate(arguments, strict=True))

    def _validate(self, run: Callable[[], BaseModel]) -> dict[str, Any]:
        try:
            model = run()
        except ValidationError as exc:
            raise ArgumentError("; ".join(self._explain(exc))) from None
        return {p.name: getattr(model, _field(i)) for i, p in enumerate(self.parameters)}

    def _explain(self, error: ValidationError) -> list[str]:
        messages: list[str] = []
        for item in error.errors(include_url=False):
            message = self._explain_one(item)
            if message not in messages:
                messages.append(message)
        return messages

    def _explain_one(self, item: Any) -> str:
        loc = item["loc"]
        properties = self.schema["properties"]
        if item["type"] == "extra_forbidden":
            accepted = ", ".join(properties) or "no arguments"
            return f"unexpected argument {loc[-1]!r} ({self.tool} takes: {accepted})"
        if not loc or loc[0] not in properties:
            return item["msg"]
        path, schema = str(loc[0]), properties[loc[0]]
        for step in loc[1:]:
            inner = _step_into(schema, step)
            if inner is None:
                break
            path += f"[{step}]" if isinstance(step, int) else f".{step}"
            schema = inner
        if item["type"] == "missing":
            return f"missing required argument {path!r} ({describe_schema(schema)})"
        return f"argument {path!r}: expected {describe_schema(schema)}, got {_shown(item['input'])}"


@functools.cache
def _read(function: Callable[..., Any], tool: str, skip_self: bool) -> Arguments:
    doc = parse_docstring(function.__doc__)
    if not doc.description:
        raise ToolDefinitionError(f"tool {tool!r} needs a docstring whose first paragraph describes it")
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except NameError as exc:
        raise ToolDefinitionError(f"tool {tool!r}: cannot resolve a type hint ({exc})") from exc
    signature = list(inspect.signature(function).parameters.values())
    parameters = tuple(_parameter(tool, p, hints, doc.args) for p in signature[1 if skip_self else 0:])
    stray = set(doc.args) - {p.name for p in parameters}
    if stray:
        raise ToolDefinitionError(f"tool {tool!r}: docstring Args name no parameter: {', '.join(sorted(stray))}")
    return Arguments(tool=tool, description=doc.description, parameters=parameters,
                     schema=_parameters_schema(tool, parameters), model=_model(tool, parameters))


def _parameter(tool: str, p: inspect.Parameter, hints: dict[str, Any], docs: dict[str, str]) -> Parameter:
    if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
        raise ToolDefinitionError(f"tool {tool!r}: parameter {p.name!r} must be a named parameter, "
                                  f"not {p.kind.description}")
    if p.name not in hints:
        raise ToolDefinitionError(f"tool {tool!r}: parameter {p.name!r} has no type hint")
    if not docs.get(p.name):
        raise ToolDefinitionError(f"tool {tool!r}: parameter {p.name!r} has no description in the docstring's Args")
    return Parameter(name=p.name, hint=hints[p.name], default=p.default, description=docs[p.name])


def _parameters_schema(tool: str, parameters: tuple[Parameter, ...]) -> JSONSchema:
    properties: dict[str, JSONSchema] = {}
    for p in parameters:
        try:
            schema = {**json_schema(p.hint), "description": p.description}
            if not p.required:
                schema["default"] = json_value(p.default)
        except TypeError as exc:
            raise ToolDefinitionError(f"tool {tool!r}: parameter {p.name!r}: {exc}") from exc
        properties[p.name] = schema
    return {"type": "object", "properties": properties, "required": [p.name for p in parameters if p.required],
            "additionalProperties": False}


def _field(index: int) -> str:
    """Model field names are positional so that parameter names never clash with BaseModel attributes."""
    return f"arg{index}"


def _model(tool: str, parameters: tuple[Parameter, ...]) -> type[BaseModel]:
    fields = {_field(i): (p.hint, Field(alias=p.name) if p.required else Field(p.default, alias=p.name))
              for i, p in enumerate(parameters)}
    config = ConfigDict(extra="forbid", allow_inf_nan=False)
    return create_model(f"{tool}_arguments", __config__=config, **fields)


def _scalar_items(arguments: dict[str, Any]) -> tuple[tuple[str, ...], tuple[type, ...], tuple[Any, ...]] | None:
    """The arguments as a hashable key (names, value types, values: 1, 1.0 and True differ), or None unless every
    value is a str, int, float, bool or None."""
    values = tuple(arguments.values())
    kinds = tuple(map(type, values))
    return (tuple(arguments), kinds, values) if _SCALARS.issuperset(kinds) else None


def _step_into(schema: JSONSchema, step: Any) -> JSONSchema | None:
    if isinstance(step, int) and "items" in schema:
        return schema["items"]
    if isinstance(step, str) and step in schema.get("properties", {}):
        return schema["properties"][step]
    if isinstance(step, str) and isinstance(schema.get("additionalProperties"), dict):
        return schema["additionalProperties"]
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > _MAX_SHOWN:
        text = text[:_MAX_SHOWN - 3] + "..."
    return f"{_json_type(value)} {text}"
