"""What every scoring instrument promises: it is on InstrumentsToolkit as a THINK tool, cites its source, rejects
out-of-range input naming the argument and its range, and scores any valid input within its stated range, the same
whether called directly or through the toolkit."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_gym.tools import ToolKind
from clinical_gym.tools.instruments import InstrumentResult, InstrumentsToolkit

TOOLKIT = InstrumentsToolkit()
NAMES = TOOLKIT.names
REQUIRED = ("curb_65", "qsofa", "sofa", "news2", "glasgow_coma_scale", "wells_dvt", "wells_pe", "perc_rule",
            "heart_score", "timi_ua_nstemi", "cha2ds2_vasc", "has_bled", "meld_na", "child_pugh", "apache_ii",
            "centor_mcisaac", "alvarado", "phq_9", "gad_7", "audit_c", "bishop_score", "apgar")
STATED_RANGE = re.compile(r"\((-?\d+(?:\.\d+)?)(?: to |-)(\d+(?:\.\d+)?)")


def test_all_required_instruments_are_tools():
    assert set(REQUIRED) <= set(NAMES)
    assert len(NAMES) >= 22


@pytest.mark.parametrize("name", NAMES)
def test_instrument_is_a_think_tool_citing_its_source(name):
    spec = TOOLKIT.spec(name)
    assert spec.kind is ToolKind.THINK
    references = spec.function.__doc__.split("References:")[1]
    assert re.search(r"\b(19[5-9]\d|20[0-2]\d)\b", references), f"{name}: no publication year"
    assert STATED_RANGE.search(spec.description), f"{name}: the description should state the score range"


def _out_of_range(schema: dict[str, Any]) -> tuple[Any, str] | None:
    """A value just above the maximum (or below the minimum) and the range words the error should contain."""
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    if "maximum" in schema:
        words = f"from {low} to {schema['maximum']}" if "minimum" in schema else f"<= {schema['maximum']}"
        return schema["maximum"] + 1, words
    if low is not None:
        return low - 1, f">= {low}" if "minimum" in schema else f"> {low}"
    return None


def _valid(schema: dict[str, Any]) -> Any:
    """A valid value for a parameter schema (its smallest allowed value)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = next(k for k in ([schema["type"]] if isinstance(schema["type"], str) else schema["type"]) if k != "null")
    if kind == "array":
        return [_valid(schema["items"])] * schema.get("minItems", 0)
    if kind == "boolean":
        return False
    return schema["minimum"] if "minimum" in schema else schema["exclusiveMinimum"] + 1


BOUNDED = [(name, parameter, schema) for name in NAMES
           for parameter, schema in TOOLKIT.spec(name).parameters["properties"].items()
           if _out_of_range({**schema, **schema.get("items", {})}) is not None]


@pytest.mark.parametrize("name, parameter, schema", BOUNDED, ids=[f"{n}.{p}" for n, p, _ in BOUNDED])
def test_out_of_range_arguments_are_rejected_with_their_range(name, parameter, schema):
    item_schema = schema.get("items")
    value, words = _out_of_range(item_schema or schema)
    if item_schema:
        value = [value] * schema["minItems"]
    properties = TOOLKIT.spec(name).parameters["properties"]
    arguments = {**{p: _valid(s) for p, s in properties.items()}, parameter: value}
    with pytest.raises(ValueError) as raised:
        TOOLKIT.tools[name].function(**arguments)
    message = str(raised.value)
    assert f"argument '{parameter}" in message and words in message
    result = TOOLKIT.call({"name": name, "arguments": arguments})
    assert result.error_kind == "invalid_arguments" and words in result.error


def _strategy(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema["type"]
    if isinstance(kind, list):
        (inner,) = [k for k in kind if k != "null"]
        return st.none() | _strategy({**schema, "type": inner})
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        return st.floats(low, schema.get("maximum"), exclude_min="exclusiveMinimum" in schema, allow_nan=False,
                         allow_infinity=False)
    assert kind == "array", schema
    return st.lists(_strategy(schema["items"]), min_size=schema.get("minItems", 0), max_size=schema.get("maxItems"))


def _arguments(name: str) -> st.SearchStrategy[dict[str, Any]]:
    parameters = TOOLKIT.spec(name).parameters
    required = set(parameters["required"])
    strategies = {p: _strategy(s) for p, s in parameters["properties"].items()}
    return st.fixed_dictionaries({p: s for p, s in strategies.items() if p in required},
                                 optional={p: s for p, s in strategies.items() if p not in required})


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_valid_input_scores_within_the_stated_range(name, data):
    jsonschema = pytest.importorskip("jsonschema", reason="the jsonschema package checks arguments against schemas")
    spec = TOOLKIT.spec(name)
    arguments = data.draw(_arguments(name))
    jsonschema.Draft202012Validator(spec.parameters).validate(arguments)
    result = TOOLKIT.call(json.dumps({"name": name, "arguments": arguments}))
    if not result.ok:  # only conditional requirements (APACHE II's oxygenation and acid-base inputs) may refuse
        assert result.error_kind == "tool_error" and ("required" in result.error or "give" in result.error)
        return
    direct = spec.function(**arguments)
    assert isinstance(direct, InstrumentResult)
    assert json.loads(result.content) == direct.model_dump(mode="json")
    low, high = map(float, STATED_RANGE.search(spec.description).groups())
    assert low <= direct.score <= high
    assert direct.category and direct.interpretation
    if name != "meld_na":  # MELD-Na is a formula; every other instrument adds up its items' points
        assert direct.score == sum(direct.points.values())
