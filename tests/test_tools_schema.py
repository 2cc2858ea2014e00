"""Tool schemas: Google docstrings, JSON Schema for each supported type hint, and definition-time errors."""

from __future__ import annotations

import enum
from typing import Annotated, Literal, Optional

import pytest
from annotated_types import Ge, Interval, Len, Lt
from pydantic import BaseModel, Field

from clinical_gym.tools import ToolDefinitionError, ToolKind, Toolkit, tool
from clinical_gym.tools.docstrings import parse_docstring
from clinical_gym.tools.schema import UnsupportedTypeError, describe_schema, json_schema


class Route(str, enum.Enum):
    ORAL = "oral"
    IV = "iv"


class Dose(BaseModel):
    amount_mg: float
    route: Route = Route.ORAL


class Prescription(BaseModel):
    drug: str
    dose: Dose


def test_docstring_description_is_first_paragraph_and_args_are_read():
    doc = parse_docstring('''Look up a patient
    by record number.

    More detail that is not the description.

    Args:
        mrn: Medical record number,
            for example "MRN-001".
        fields (list[str]): Fields to return.

    Returns:
        The patient.
    ''')
    assert doc.description == "Look up a patient by record number."
    assert doc.args == {"mrn": 'Medical record number, for example "MRN-001".', "fields": "Fields to return."}


def test_docstring_without_args_section():
    assert parse_docstring("Just a summary.").args == {}
    assert parse_docstring(None).description == ""


@pytest.mark.parametrize("hint, schema", [
    (str, {"type": "string"}),
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (bool, {"type": "boolean"}),
    (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
    (Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
    (Route, {"type": "string", "enum": ["oral", "iv"]}),
    (list[int], {"type": "array", "items": {"type": "integer"}}),
    (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
    (Optional[int], {"type": ["integer", "null"]}),
    (int | str, {"type": ["integer", "string"]}),
    (Optional[Literal["x"]], {"anyOf": [{"type": "string", "enum": ["x"]}, {"type": "null"}]}),
    (Annotated[int, Interval(ge=0, le=10)], {"type": "integer", "minimum": 0, "maximum": 10}),
    (Annotated[float, Ge(1), Lt(2)], {"type": "number", "minimum": 1, "exclusiveMaximum": 2}),
    (Annotated[list[str], Len(2, 3)], {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3}),
    (Annotated[str, Field(min_length=1)], {"type": "string", "minLength": 1}),
    (Annotated[int, Ge(0)] | None, {"type": ["integer", "null"], "minimum": 0}),
])
def test_json_schema_for_type_hints(hint, schema):
    assert json_schema(hint) == schema


def test_pydantic_models_are_inlined_without_refs_or_titles():
    schema = json_schema(Prescription)
    assert "$defs" not in str(schema) and "$ref" not in str(schema) and "title" not in schema
    dose = schema["properties"]["dose"]
    assert dose["properties"]["route"]["enum"] == ["oral", "iv"]
    assert dose["required"] == ["amount_mg"]


@pytest.mark.parametrize("hint", [set[int], dict[int, str], complex, Literal[b"x"]])
def test_unsupported_hints_are_rejected(hint):
    with pytest.raises(UnsupportedTypeError):
        json_schema(hint)


@pytest.mark.parametrize("schema, words", [
    ({"type": "integer", "minimum": 0, "maximum": 120}, "integer from 0 to 120"),
    ({"type": "number", "exclusiveMinimum": 0}, "number > 0"),
    ({"type": "string", "enum": ["a", "b"]}, 'one of "a", "b"'),
    ({"type": ["integer", "null"]}, "integer or null"),
    ({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 3}, "minItems": 9, "maxItems": 9},
     "list of exactly 9 items, each integer from 0 to 3"),
])
def test_describe_schema(schema, words):
    assert describe_schema(schema) == words


def _toolkit_with(function):
    return type("Kit", (Toolkit,), {"go": tool(kind=ToolKind.READ)(function)})


def test_tool_without_docstring_fails_at_class_definition():
    def go(self, x: int) -> int:
        return x
    with pytest.raises(ToolDefinitionError, match="docstring"):
        _toolkit_with(go)


def test_undocumented_parameter_fails_at_class_definition():
    def go(self, x: int, y: int) -> int:
        """Add.

        Args:
            x: First.
        """
        return x + y
    with pytest.raises(ToolDefinitionError, match="'y' has no description"):
        _toolkit_with(go)


def test_docstring_naming_a_missing_parameter_fails():
    def go(self, x: int) -> int:
        """Echo.

        Args:
            x: Value.
            z: Stale entry.
        """
        return x
    with pytest.raises(ToolDefinitionError, match="name no parameter: z"):
        _toolkit_with(go)


def test_missing_type_hint_and_var_args_fail():
    def untyped(self, x):
        """Echo.

        Args:
            x: Value.
        """
    def star(self, *values: int):
        """Echo.

        Args:
            values: Values.
        """
    with pytest.raises(ToolDefinitionError, match="no type hint"):
        _toolkit_with(untyped)
    with pytest.raises(ToolDefinitionError, match="named parameter"):
        _toolkit_with(star)
