"""``clinical_gym.tools.trusted``: records built from already-typed values equal the validated ones in every way a
user sees (fields, order, dump, JSON, fields set, frozen), and models it cannot build are refused."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from clinical_gym.rewards.episode import CallRecord
from clinical_gym.rewards.five_d import FiveDResult, ProcessScore
from clinical_gym.rewards.coherence import CoherenceResult
from clinical_gym.tools import CallForm, ToolKind
from clinical_gym.tools.trusted import trusted


def _same(a: BaseModel, b: BaseModel) -> None:
    assert type(a) is type(b)
    assert a == b and repr(a) == repr(b)
    assert list(a.__dict__) == list(b.__dict__)
    assert a.model_dump() == b.model_dump() and a.model_dump_json() == b.model_dump_json()
    assert a.model_fields_set == b.model_fields_set


def test_every_field_given_or_defaults_filled_as_validation_does():
    full = dict(index=2, turn=1, name="get_patient_info", arguments={"patient_id": "P001"}, kind=ToolKind.READ,
                ok=True, error_kind=None, form=CallForm.JSON, content="{}", reviews=frozenset({"demographics"}))
    _same(trusted(CallRecord, **full), CallRecord(**full))
    shuffled = dict(reversed(full.items()))  # given out of field order: the instance's dict is in field order
    _same(trusted(CallRecord, **shuffled), CallRecord(**full))
    some = dict(index=0, turn=1, name="think", ok=False, form=CallForm.INVALID)
    built, validated = trusted(CallRecord, **some), CallRecord(**some)
    _same(built, validated)
    assert built.arguments == {} and built.arguments is not trusted(CallRecord, **some).arguments  # fresh default
    with pytest.raises(ValidationError):
        built.ok = True  # still frozen


def test_given_fields_are_the_fields_set_of_a_record_spelled_out_in_full():
    # every field in field order (the fast path) standing for a call that gave only some: the fields set is theirs
    some = dict(index=0, turn=1, name="think", ok=False, form=CallForm.INVALID)
    full = dict(index=0, turn=1, name="think", arguments={}, kind=None, ok=False, error_kind=None,
                form=CallForm.INVALID, content="", reviews=frozenset())
    built = trusted(CallRecord, frozenset(some), **full)
    _same(built, CallRecord(**some))
    assert built.model_dump(exclude_unset=True) == CallRecord(**some).model_dump(exclude_unset=True)


def test_a_nested_result_matches_its_validated_twin():
    process = ProcessScore(score=0.5, coverage=0.5, diversity=1.0, thoroughness=0.0, matched_actions=["a"],
                           missed_actions=[])
    values = dict(total=0.4, components={"accuracy": 0.25, "process": 0.15}, scores={"accuracy": 1.0,
                  "assertions": None}, result="correct", process=process,
                  coherence=CoherenceResult(score=1.0, checks={"clear_conclusion": True}), assertions=[],
                  violations=[])
    _same(trusted(FiveDResult, **values), FiveDResult(**values))
    _same(trusted(FiveDResult, **values, rubric=[]), FiveDResult(**values, rubric=[]))


def test_defaults_are_made_as_validation_makes_them():
    class Record(BaseModel):
        size: int
        items: list[int] = Field(default_factory=list)
        double: int = Field(default_factory=lambda data: data["size"] * 2)  # a factory of the values so far
        marks: list[int] = [1]

    for size in (1, 3):
        _same(trusted(Record, size=size), Record(size=size))
    first, second = trusted(Record, size=1), trusted(Record, size=1)
    assert first.items is not second.items and first.marks is not second.marks  # each its own


def test_unknown_or_missing_fields_and_unsuitable_models_are_refused():
    with pytest.raises(TypeError, match="no field"):
        trusted(CallRecord, index=0, turn=1, name="x", ok=True, form=CallForm.JSON, colour="red")
    with pytest.raises(TypeError, match="missing required field 'ok'"):
        trusted(CallRecord, index=0, turn=1, name="x", form=CallForm.JSON)

    class Checked(BaseModel):
        value: int

        @field_validator("value")
        @classmethod
        def positive(cls, v: int) -> int:
            return abs(v)

    class Private(BaseModel):
        _cache: dict = PrivateAttr(default_factory=dict)

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")

    for model in (Checked, Private, Open):
        with pytest.raises(TypeError, match="build it by validation"):
            trusted(model, value=1) if model is Checked else trusted(model)


def test_plain_dump_is_model_dump_for_plain_records_and_model_dump_otherwise():
    from typing import Literal

    from clinical_gym.rewards.safety import Violation
    from clinical_gym.tools.trusted import plain_dump

    process = ProcessScore(score=0.5, coverage=1.0, diversity=0.25, thoroughness=0.0, matched_actions=["a"],
                           missed_actions=["b", "c"])
    violation = Violation(name="x", severity=4, principle="justice", description="d", evidence=["e"])
    for record in (process, process.model_copy(update={"rubric": 0.75}), violation):
        for exclude_none in (False, True):
            dumped, expected = plain_dump(record, exclude_none=exclude_none), record.model_dump(exclude_none=exclude_none)
            assert dumped == expected and list(dumped) == list(expected)
            assert [type(v) for v in dumped.values()] == [type(v) for v in expected.values()]
            assert all(dumped[k] is not getattr(record, k) for k in dumped if isinstance(dumped[k], list))  # copies

    class Nested(BaseModel):
        inner: ProcessScore
        level: Literal["a", "b"] = "a"

    nested = Nested(inner=process)
    assert plain_dump(nested) == nested.model_dump() and isinstance(plain_dump(nested)["inner"], dict)
