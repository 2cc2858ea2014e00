"""Every tool of every toolkit defined in tools/: a valid JSON Schema (draft 2020-12) that matches its signature."""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil
import types
import typing
from typing import Any, Literal, Union

import annotated_types as at
import pytest
from pydantic import BaseModel

import clinical_gym.tools as tools
from clinical_gym.tools import Toolkit, ToolSpec

SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
BOUNDS = {at.Ge: ("ge", "minimum"), at.Gt: ("gt", "exclusiveMinimum"), at.Le: ("le", "maximum"),
          at.Lt: ("lt", "exclusiveMaximum")}


def _toolkits() -> list[type[Toolkit]]:
    for module in pkgutil.walk_packages(tools.__path__, "clinical_gym.tools."):
        importlib.import_module(module.name)
    found, pending = [], list(Toolkit.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("clinical_gym.tools."):
            found.append(cls)
    return sorted(found, key=lambda c: c.__qualname__)


TOOLKITS = _toolkits()
SPECS = [(kit.__name__, spec) for kit in TOOLKITS for spec in kit.tool_specs()]


def test_the_tools_package_defines_toolkits():
    assert "InstrumentsToolkit" in {kit.__name__ for kit in TOOLKITS}
    assert len(SPECS) >= 22


def _types(schema: dict[str, Any]) -> set[str]:
    if "anyOf" in schema:
        return set().union(*(_types(s) for s in schema["anyOf"]))
    kind = schema.get("type")
    if kind is None and "enum" in schema:
        return {SCALARS[type(v)] for v in schema["enum"]}
    return set(kind) if isinstance(kind, list) else {kind}


def _check_hint(schema: dict[str, Any], hint: Any, where: str) -> None:
    """Assert that ``schema`` describes ``hint``, independently of how clinical_gym.tools.schema builds it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        for item in args[1:]:
            for constraint in (item if isinstance(item, at.GroupedMetadata) else [item]):
                if type(constraint) in BOUNDS:
                    attribute, key = BOUNDS[type(constraint)]
                    assert schema[key] == getattr(constraint, attribute), where
                elif isinstance(constraint, at.MinLen):
                    assert schema["minItems" if "array" in _types(schema) else "minLength"] == constraint.min_length
                elif isinstance(constraint, at.MaxLen):
                    assert schema["maxItems" if "array" in _types(schema) else "maxLength"] == constraint.max_length
        _check_hint(schema, args[0], where)
    elif origin in (Union, types.UnionType):
        expected = set()
        for member in args:
            expected |= {"object"} if _is_model(member) else _hint_types(member)
        assert _types(schema) == expected, where
    elif origin is Literal:
        assert schema["enum"] == list(args), where
    elif isinstance(hint, type) and issubclass(hint, enum.Enum):
        assert schema["enum"] == [m.value for m in hint], where
    elif _is_model(hint):
        assert _types(schema) == {"object"} and set(schema["properties"]) == set(hint.model_fields), where
    elif origin is list:
        assert _types(schema) == {"array"}, where
        _check_hint(schema["items"], args[0], where + "[]")
    elif origin is dict:
        assert _types(schema) == {"object"}, where
    else:
        assert _types(schema) == {SCALARS[hint]}, where


def _is_model(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, BaseModel)


def _hint_types(hint: Any) -> set[str]:
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _hint_types(typing.get_args(hint)[0])
    if origin is Literal:
        return {SCALARS[type(v)] for v in typing.get_args(hint)}
    if origin is list:
        return {"array"}
    return {SCALARS[hint]}


IDS = [f"{kit}.{spec.name}" for kit, spec in SPECS]


@pytest.mark.parametrize("toolkit, spec", SPECS, ids=IDS)
def test_schema_is_valid_json_schema(toolkit: str, spec: ToolSpec):
    jsonschema = pytest.importorskip("jsonschema", reason="the jsonschema package checks JSON Schema validity")
    parameters = spec.openai_schema()["function"]["parameters"]
    jsonschema.Draft202012Validator.check_schema(parameters)
    for prop in parameters["properties"].values():
        if "default" in prop:
            jsonschema.Draft202012Validator(prop).validate(prop["default"])


@pytest.mark.parametrize("toolkit, spec", SPECS, ids=IDS)
def test_schema_matches_the_signature(toolkit: str, spec: ToolSpec):
    schema = spec.openai_schema()
    assert schema["type"] == "function" and set(schema["function"]) == {"name", "description", "parameters"}
    assert schema["function"]["description"].strip()
    parameters = schema["function"]["parameters"]
    assert parameters["type"] == "object" and parameters["additionalProperties"] is False

    function = inspect.unwrap(spec.function)
    signature = list(inspect.signature(function).parameters.values())
    if signature and signature[0].name in ("self", "cls"):
        signature = signature[1:]
    hints = typing.get_type_hints(function, include_extras=True)
    assert list(parameters["properties"]) == [p.name for p in signature]
    assert parameters["required"] == [p.name for p in signature if p.default is inspect.Parameter.empty]
    for p in signature:
        prop = parameters["properties"][p.name]
        assert prop["description"].strip(), f"{spec.name}.{p.name} has no description"
        _check_hint(prop, hints[p.name], f"{spec.name}.{p.name}")
        if p.default is not inspect.Parameter.empty:
            default = p.default.value if isinstance(p.default, enum.Enum) else p.default
            assert prop["default"] == default
