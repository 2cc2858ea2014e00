"""JSON Schema for Python type hints (as tool parameters), and plain-words descriptions of those schemas.

Supported hints: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Literal[...]``, ``Enum`` subclasses,
``list[X]``, ``dict[str, X]``, ``X | None`` / ``Optional[X]`` and other unions, pydantic models, and
``Annotated[X, ...]`` carrying ``annotated_types`` constraints (``Ge``, ``Le``, ``Gt``, ``Lt``, ``Interval``,
``MinLen``, ``MaxLen``, ``Len``) or ``pydantic.Field(...)`` constraints.
"""

from __future__ import annotations

import enum
import json
import types
import typing
from typing import Any, Literal, Union

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo

JSONSchema = dict[str, Any]

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
_BOUNDS = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum"}
_TYPE_WORDS = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
               "null": "null", "array": "list", "object": "object"}


class UnsupportedTypeError(TypeError):
    """A type hint that has no JSON Schema translation here."""


def json_schema(hint: Any) -> JSONSchema:
    """The JSON Schema (draft 2020-12) of values of type ``hint``."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        base, *metadata = typing.get_args(hint)
        return _constrained(json_schema(base), metadata)
    if hint in _PRIMITIVES:
        return {"type": _PRIMITIVES[hint]}
    if origin is Literal:
        return _enum_schema(list(typing.get_args(hint)))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_schema([member.value for member in hint])
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return _model_schema(hint)
    if origin in (Union, types.UnionType):
        return _union_schema(typing.get_args(hint))
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return {"type": "array", "items": json_schema(item)} if item is not Any else {"type": "array"}
    if origin is dict:
        key, value = typing.get_args(hint) or (str, Any)
        if key is not str:
            raise UnsupportedTypeError(f"dict keys must be str for JSON, got {key!r}")
        return {"type": "object"} if value is Any else {"type": "object", "additionalProperties": json_schema(value)}
    raise UnsupportedTypeError(f"no JSON Schema for type hint {hint!r}")


def _enum_schema(values: list[Any]) -> JSONSchema:
    kinds = {_PRIMITIVES.get(type(v)) for v in values}
    if None in kinds:
        raise UnsupportedTypeError(f"enum values must be JSON scalars, got {values!r}")
    schema: JSONSchema = {"enum": values}
    if len(kinds) == 1:
        schema = {"type": kinds.pop(), **schema}
    return schema


def _union_schema(members: tuple[Any, ...]) -> JSONSchema:
    schemas = [json_schema(m) for m in members]
    simple = [s for s in schemas if set(s) == {"type"}]
    if len(simple) == len(schemas):
        return {"type": [s["type"] for s in schemas]}
    others = [s for s in schemas if s != {"type": "null"}]
    if len(others) == 1 < len(schemas) and isinstance(others[0].get("type"), str) and "enum" not in others[0]:
        return {**others[0], "type": [others[0]["type"], "null"]}
    return {"anyOf": schemas}


def _constrained(schema: JSONSchema, metadata: list[Any]) -> JSONSchema:
    schema = dict(schema)
    for item in metadata:
        if isinstance(item, FieldInfo):
            schema = _constrained(schema, list(item.metadata))
        elif isinstance(item, at.GroupedMetadata):
            schema = _constrained(schema, list(item))
        elif isinstance(item, (at.Ge, at.Gt, at.Le, at.Lt)):
            key = type(item).__name__.lower()
            schema[_BOUNDS[key]] = getattr(item, key)
        elif isinstance(item, (at.MinLen, at.MaxLen)):
            prefix = "Items" if schema.get("type") == "array" else "Length"
            bound = "min" if isinstance(item, at.MinLen) else "max"
            schema[f"{bound}{prefix}"] = getattr(item, f"{bound}_length")
    return schema


def _model_schema(model: type[BaseModel]) -> JSONSchema:
    """The model's pydantic schema with every ``$ref`` replaced by its definition and titles dropped."""
    raw = model.model_json_schema()
    definitions = raw.pop("$defs", {})

    def inline(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name in seen:
                raise UnsupportedTypeError(f"recursive model {name} cannot be inlined into a tool schema")
            return inline(definitions[name], seen + (name,))
        return {key: inline(value, seen) for key, value in node.items() if key != "title"}

    return inline(raw, (model.__name__,))


def json_value(value: Any) -> Any:
    """``value`` as a JSON value for a schema's ``default``; TypeError if it has no JSON form."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return json.loads(json.dumps(value))


def describe_schema(schema: JSONSchema) -> str:
    """A short phrase for what a schema accepts, e.g. "integer from 0 to 120" or "one of 'alert', 'voice'"."""
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(describe_schema(s) for s in schema["anyOf"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(describe_schema({**schema, "type": k}) for k in kind)
    if kind == "array":
        count = _count(schema.get("minItems"), schema.get("maxItems"))
        items = describe_schema(schema["items"]) if "items" in schema else "any value"
        return f"list of {count}items, each {items}"
    words = _TYPE_WORDS.get(kind, "value")
    if kind in ("integer", "number"):
        words += _range_words(schema)
    return words


def _count(low: int | None, high: int | None) -> str:
    if low is not None and low == high:
        return f"exactly {low} "
    parts = ([f"at least {low}"] if low is not None else []) + ([f"at most {high}"] if high is not None else [])
    return " and ".join(parts) + " " if parts else ""


def _range_words(schema: JSONSchema) -> str:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if "minimum" in schema and "maximum" in schema:
        return f" from {low} to {high}"
    parts = []
    if low is not None:
        parts.append(f"{'>=' if 'minimum' in schema else '>'} {low}")
    if high is not None:
        parts.append(f"{'<=' if 'maximum' in schema else '<'} {high}")
    return " " + " and ".join(parts) if parts else ""
