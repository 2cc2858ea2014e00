"""Toolkits: collecting ``@tool`` methods, composing toolkits, and dispatching calls to results (never exceptions)."""

from __future__ import annotations

import enum
import json
from typing import Annotated, Literal, Optional

import pytest
from annotated_types import Interval
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from clinical_gym.tools import (
    ArgumentError,
    CallForm,
    ToolDefinitionError,
    ToolKind,
    Toolkit,
    ToolNameClashError,
    ToolResult,
    parse_tool_call,
    tool,
)


class Priority(str, enum.Enum):
    ROUTINE = "routine"
    STAT = "stat"


class Order(BaseModel):
    test: str
    priority: Priority = Priority.ROUTINE


class Ward(Toolkit):
    """A tiny EHR: patients and orders, state kept per instance."""

    def __init__(self) -> None:
        self.orders: list[Order] = []

    @tool(kind=ToolKind.READ)
    def get_patient(self, mrn: str) -> dict:
        """Look up a patient by medical record number.

        Args:
            mrn: Medical record number, e.g. "MRN-001".
        """
        if mrn != "MRN-001":
            raise KeyError(f"patient {mrn} not found")
        return {"mrn": mrn, "name": "Ana Souza", "temperature": "38.2°C"}

    @tool(kind=ToolKind.WRITE)
    def place_order(self, order: Order, count: Annotated[int, Interval(ge=1, le=3)] = 1,
                    note: Optional[str] = None) -> Order:
        """Place a laboratory order.

        Args:
            order: The order to place.
            count: How many samples, 1-3.
            note: Free-text note for the laboratory.
        """
        self.orders.append(order)
        return order

    @tool(kind=ToolKind.THINK)
    def divide(self, a: float, b: float) -> float:
        """Divide two numbers.

        Args:
            a: Numerator.
            b: Denominator.
        """
        return a / b

    @tool(kind=ToolKind.SUBMIT)
    def submit_diagnosis(self, diagnosis: str, confidence: Literal["low", "high"] = "high") -> str:
        """Submit the final diagnosis; ends the episode.

        Args:
            diagnosis: The diagnosis.
            confidence: How confident you are.
        """
        return f"submitted {diagnosis} ({confidence})"

    @tool(kind=ToolKind.READ)
    def _secret(self) -> str:
        """Never a tool."""
        return "hidden"

    def helper(self) -> str:
        return "not a tool"


class Pharmacy(Toolkit):
    @tool(kind=ToolKind.READ, name="lookup_drug")
    def find(self, name: str) -> str:
        """Find a drug.

        Args:
            name: Drug name.
        """
        return name.upper()

    @tool(kind=ToolKind.THINK)
    @staticmethod
    def mg_per_kg(dose_mg: float, weight_kg: float) -> float:
        """Dose per kilogram.

        Args:
            dose_mg: Dose in mg.
            weight_kg: Weight in kg.
        """
        return round(dose_mg / weight_kg, 2)

    @staticmethod
    @tool(kind=ToolKind.THINK)
    def bmi(weight_kg: float, height_m: float) -> float:
        """Body mass index.

        Args:
            weight_kg: Weight in kg.
            height_m: Height in m.
        """
        return round(weight_kg / height_m**2, 1)

    @classmethod
    @tool(kind=ToolKind.READ)
    def formulary(cls) -> str:
        """The formulary name."""
        return cls.__name__


def call(toolkit: Toolkit, tool_name: str, /, **arguments) -> ToolResult:
    return toolkit.call(json.dumps({"name": tool_name, "arguments": arguments}))


def test_decorated_public_methods_are_the_tools_in_definition_order():
    assert Ward().names == ["get_patient", "place_order", "divide", "submit_diagnosis"]
    assert [s.kind for s in Ward.tool_specs()] == [ToolKind.READ, ToolKind.WRITE, ToolKind.THINK, ToolKind.SUBMIT]
    assert Pharmacy().names == ["lookup_drug", "mg_per_kg", "bmi", "formulary"]


def test_openai_schema_shape():
    schema = Ward().spec("place_order").openai_schema()
    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == "place_order" and function["description"] == "Place a laboratory order."
    parameters = function["parameters"]
    assert parameters["required"] == ["order"] and parameters["additionalProperties"] is False
    assert parameters["properties"]["count"] == {"type": "integer", "minimum": 1, "maximum": 3,
                                                 "description": "How many samples, 1-3.", "default": 1}
    assert parameters["properties"]["order"]["properties"]["priority"]["enum"] == ["routine", "stat"]
    assert len(Ward().openai_schemas()) == 4


def test_successful_calls_render_compact_json_and_keep_unicode():
    ward = Ward()
    result = call(ward, "get_patient", mrn="MRN-001")
    assert result.ok and result.kind is ToolKind.READ and result.form is CallForm.JSON
    assert result.content == '{"mrn":"MRN-001","name":"Ana Souza","temperature":"38.2°C"}'
    placed = call(ward, "place_order", order={"test": "CBC", "priority": "stat"})
    assert placed.content == '{"test":"CBC","priority":"stat"}'
    assert ward.orders == [Order(test="CBC", priority=Priority.STAT)]


def test_submit_ends_the_episode_only_when_it_succeeds():
    ward = Ward()
    assert call(ward, "submit_diagnosis", diagnosis="pneumonia").ends_episode
    assert not call(ward, "submit_diagnosis", diagnosis="pneumonia", confidence="maybe").ends_episode
    assert not call(ward, "get_patient", mrn="MRN-001").ends_episode


def test_unknown_tool_suggests_close_names():
    result = call(Ward(), "get_pateint", mrn="MRN-001")
    assert not result.ok and result.error_kind == "unknown_tool"
    assert "unknown tool 'get_pateint'. Did you mean 'get_patient'?" in result.content
    assert "Available tools: get_patient, place_order, divide, submit_diagnosis" in result.content
    assert "_secret" not in result.content
    assert call(Ward(), "_secret").error_kind == "unknown_tool"
    assert call(Ward(), "helper").error_kind == "unknown_tool"


@pytest.mark.parametrize("arguments, messages", [
    ({}, ["missing required argument 'mrn' (string)"]),
    ({"mrn": 7}, ["argument 'mrn': expected string, got number 7"]),
    ({"mrn": "MRN-001", "bed": 4}, ["unexpected argument 'bed' (get_patient takes: mrn)"]),
])
def test_invalid_arguments_name_the_argument_the_expected_type_and_what_was_given(arguments, messages):
    result = call(Ward(), "get_patient", **arguments)
    assert not result.ok and result.error_kind == "invalid_arguments" and result.kind is ToolKind.READ
    for message in messages:
        assert message in result.error


def test_argument_validation_is_strict_and_reports_every_problem():
    result = call(Ward(), "place_order", order={"priority": "urgent"}, count="2")
    assert "missing required argument 'order.test' (string)" in result.error
    assert "argument 'order.priority': expected one of \"routine\", \"stat\", got string \"urgent\"" in result.error
    assert "argument 'count': expected integer from 1 to 3, got string \"2\"" in result.error
    assert "expected integer from 1 to 3, got number 4" in call(Ward(), "place_order", order={"test": "CBC"},
                                                                 count=4).error
    assert "got boolean true" in call(Ward(), "divide", a=True, b=2).error
    assert call(Ward(), "divide", a=3, b=2).content == "1.5"  # integers are accepted for floats


def test_tool_errors_come_back_as_results():
    result = call(Ward(), "get_patient", mrn="MRN-999")
    assert (result.ok, result.error_kind, result.content) == (False, "tool_error", "Error: patient MRN-999 not found")


def test_a_crashing_tool_is_reported_apart_from_agent_mistakes(caplog):
    result = call(Ward(), "divide", a=1, b=0)
    assert not result.ok and result.error_kind == "tool_crash"
    assert "divide failed unexpectedly (ZeroDivisionError" in result.error
    assert "tool divide crashed" in caplog.text


def test_an_unserialisable_result_is_a_tool_crash():
    class Leaky(Toolkit):
        @tool(kind=ToolKind.READ)
        def handle(self) -> object:
            """Return something that is not data."""
            return object()

    result = call(Leaky(), "handle")
    assert (result.ok, result.error_kind) == (False, "tool_crash")


def test_a_circular_result_is_a_tool_crash_naming_the_cycle():
    # render's one-shot encoder keeps no markers: a cycle fails as too deep and goes to pydantic's JSON view, which
    # refuses it as circular, as the encoder's own circular check did
    class Loop(Toolkit):
        @tool(kind=ToolKind.READ)
        def cycle(self) -> dict:
            """Return a dict holding itself."""
            value: dict = {"a": 1}
            value["self"] = value
            return value

    result = call(Loop(), "cycle")
    assert (result.ok, result.error_kind) == (False, "tool_crash") and "Circular reference" in result.error


def test_results_are_the_records_validation_builds():
    # results are built without re-validation: the same fields, fields set, dump and a copy of the call's arguments
    ward = Ward()
    parsed = parse_tool_call('{"name": "get_patient", "arguments": {"mrn": "MRN-001"}}')
    failed_call = parse_tool_call('{"name": "get_patient", "arguments": {"mrn": "MRN-999"}}')
    for result, given in ((ward.call(parsed), dict(ok=True, content=ward.call(parsed).content, name="get_patient",
                                                   arguments={"mrn": "MRN-001"}, kind=ToolKind.READ,
                                                   form=CallForm.JSON)),
                          (ward.call(failed_call), dict(ok=False, content="Error: patient MRN-999 not found",
                                                        name="get_patient", arguments={"mrn": "MRN-999"},
                                                        kind=ToolKind.READ, error="patient MRN-999 not found",
                                                        error_kind="tool_error", form=CallForm.JSON))):
        validated = ToolResult(**given)
        assert result == validated and list(result.__dict__) == list(validated.__dict__)
        assert result.model_fields_set == validated.model_fields_set
        assert result.model_dump_json() == validated.model_dump_json()
        assert result.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    result = ward.call(parsed)
    assert result.arguments == parsed.arguments and result.arguments is not parsed.arguments


def test_unparseable_calls_come_back_as_results():
    result = Ward().call('{"name": "get_patient", "arguments": {"mrn": "MRN-001"')
    assert (result.ok, result.error_kind, result.form) == (False, "invalid_call", CallForm.INVALID)
    assert result.content.startswith("Error: invalid JSON at line 1, column")


def test_call_accepts_parsed_calls_and_every_form():
    ward = Ward()
    assert ward.call(parse_tool_call('get_patient(mrn="MRN-001")')).form is CallForm.PYTHON_CALL
    assert ward.call('```json\n{"name": "get_patient", "arguments": {"mrn": "MRN-001"}}\n```').ok
    message = {"tool_calls": [{"type": "function", "function": {"name": "get_patient",
                                                                "arguments": '{"mrn": "MRN-001"}'}}]}
    assert ward.call(message).form is CallForm.TOOL_CALLS


def test_merge_and_plus_compose_toolkits_bound_to_their_own_state():
    ward, pharmacy = Ward(), Pharmacy()
    both = ward + pharmacy
    assert both.names == Toolkit.merge(ward, pharmacy).names == ward.names + pharmacy.names
    assert call(both, "lookup_drug", name="amoxicillin").content == "AMOXICILLIN"
    assert call(both, "mg_per_kg", dose_mg=500, weight_kg=20).content == "25.0"
    assert call(both, "bmi", weight_kg=80, height_m=2).content == "20.0"
    assert call(both, "formulary").content == "Pharmacy"
    call(both, "place_order", order={"test": "CRP"})
    assert [o.test for o in ward.orders] == ["CRP"]
    assert len(both) == 8 and "divide" in both and "find" not in both


def test_name_clashes_are_errors():
    with pytest.raises(ToolNameClashError, match="'get_patient' is defined by both Ward and Ward"):
        Ward() + Ward()

    with pytest.raises(ToolNameClashError, match="used by both 'first' and 'second'"):
        class Twice(Toolkit):
            @tool(kind=ToolKind.READ, name="same")
            def first(self) -> str:
                """First."""
                return "1"

            @tool(kind=ToolKind.READ, name="same")
            def second(self) -> str:
                """Second."""
                return "2"


def test_a_tool_may_not_hide_the_toolkit_api():
    with pytest.raises(ToolDefinitionError, match="would hide Toolkit.call"):
        class Shadow(Toolkit):
            @tool(kind=ToolKind.READ)
            def call(self) -> str:
                """Call someone."""
                return "ring"


def test_subclasses_inherit_and_override_tools():
    class Ward2(Ward):
        @tool(kind=ToolKind.READ)
        def get_patient(self, mrn: str) -> dict:
            """Look up a patient (v2).

            Args:
                mrn: Record number.
            """
            return {"mrn": mrn, "version": 2}

        def divide(self, a: float, b: float) -> float:  # overridden without @tool: no longer a tool
            return 0.0

    ward = Ward2()
    assert ward.names == ["place_order", "submit_diagnosis", "get_patient"]
    assert call(ward, "get_patient", mrn="X").content == '{"mrn":"X","version":2}'


def test_direct_validation_raises_argument_error_for_python_callers():
    spec = Ward().spec("place_order")
    with pytest.raises(ArgumentError, match="argument 'count': expected integer from 1 to 3, got number 9"):
        spec.arguments.validate_python({"order": Order(test="CBC"), "count": 9})
    assert spec.arguments.validate_python({"order": Order(test="CBC")}) == {"order": Order(test="CBC"), "count": 1,
                                                                          "note": None}


def test_parameters_named_like_pydantic_attributes_are_fine():
    class Odd(Toolkit):
        @tool(kind=ToolKind.READ)
        def fetch(self, json: str, model_config: int = 0, copy: bool = False) -> str:
            """Fetch.

            Args:
                json: A field called json.
                model_config: A field called model_config.
                copy: A field called copy.
            """
            return f"{json}-{model_config}-{copy}"

    assert call(Odd(), "fetch", json="a", model_config=2, copy=True).content == "a-2-True"


class Labels(Toolkit):
    @tool(kind=ToolKind.WRITE)
    def label(self, text: str, tags: list[str] = []) -> list[str]:  # noqa: B006 - the mutable default is the point
        """Add a label to a list of tags.

        Args:
            text: The label.
            tags: Tags it joins.
        """
        tags.append(text)
        return tags


def test_repeated_scalar_calls_validate_like_the_first():
    # scalar arguments are validated once and remembered: 1 and True are equal dict keys, so a remembered
    # divide(a=1) must not let a=True (a boolean, refused for a float) through, nor share a mutable default
    ward = Ward()
    for _ in range(3):
        assert call(ward, "divide", a=1, b=2).content == "0.5"
        refused = call(ward, "divide", a=True, b=2)
        assert refused.error_kind == "invalid_arguments" and "a" in refused.content
        assert call(ward, "divide", a=1.0, b=2).content == "0.5"
    labels = Labels()
    assert [call(labels, "label", text="x").content for _ in range(3)] == ['["x"]'] * 3


class _Colour(str, enum.Enum):
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 3


class _Plain(enum.Enum):
    A = "a"


class _Row(BaseModel):
    name: str
    level: _Level = _Level.HIGH


_JSON_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.sampled_from([_Colour.RED, _Level.HIGH,
                                                                                         _Plain.A]),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5) | st.integers() | st.sampled_from([_Colour.RED]), inner, max_size=4)
    | st.builds(lambda n: _Row(name=n), st.text(max_size=5)) | st.frozensets(st.integers(), max_size=3),
    max_leaves=12)


@given(_JSON_LIKE)
def test_rendering_plain_values_directly_gives_the_text_of_pydantics_json_view(value):
    # render encodes plain JSON values as they are and everything else through to_jsonable_python: the text must
    # be what encoding the pydantic JSON view of any value gives
    from pydantic_core import to_jsonable_python

    from clinical_gym.tools.toolkit import render

    if isinstance(value, str) or value is None:
        assert render(value) == ("OK" if value is None else value)  # text as it is, nothing as OK
        return
    expected = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode(to_jsonable_python(value))
    assert render(value) == expected
