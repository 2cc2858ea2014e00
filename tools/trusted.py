"""Building pydantic records from values the library has just computed, without validating them again.

Measured with pydantic 2.14 (one core): validation is not what a flat record costs. ``ParsedCall``, ``ToolResult``
and ``CallRecord`` validate in 1.4 to 2.9 us, and built here they take 0.2 to 0.5 us less in a tight loop
(``model_construct`` is slower, 3.4 to 4.7 us); in a tool step, where each runs once between other code, the
difference is larger, so all three are built here on the hot path. What validation adds is copying containers
field by field: ``EpisodeRecord`` (its ``tool_kinds`` dict of every tool, the call list) takes 6.5 us and
``FiveDResult`` (component and score dicts, the verdict lists) 10 us to validate; built here from values already of
their types, 2 to 3 us each.

``trusted(cls, **values)`` makes the instance validation would: the same field values in the same order
(``model_dump``, ``==``, ``repr`` agree), defaults filled in as pydantic fills them (mutable defaults copied), the
given fields as ``model_fields_set``. Only for models without validators, private attributes or extra fields
(checked once per class); the caller passes values of the declared types and copies a container it does not own
(validation of ``dict[str, Any]`` would have copied it).

``plain_dump(model)`` is the other way: ``model.model_dump()`` of a record whose fields hold plain values (text,
numbers, booleans, None, or lists of them), read from its fields without pydantic's serializer (~1 us and cold code
in a final step: the process score and each violation in a tool episode's outcome); other records go to
``model_dump``.
"""

from __future__ import annotations

import types
import typing
from operator import itemgetter
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_NEW = object.__new__
_SET = object.__setattr__
Layout = tuple[frozenset[str], tuple[str, ...], itemgetter, tuple[tuple[str, bool, Any], ...]]
_LAYOUTS: dict[type[BaseModel], Layout] = {}


def _layout(cls: type[BaseModel]) -> Layout:
    """The field names of ``cls`` as a set and in order, a getter of their values in order, and per field: name,
    whether its default must be made afresh, and the default (when made afresh, a function of the values so far
    that makes it; ``...`` when required)."""
    decorators = cls.__pydantic_decorators__
    if (decorators.validators or decorators.field_validators or decorators.model_validators
            or decorators.root_validators or cls.__private_attributes__ or cls.model_config.get("extra") == "allow"):
        raise TypeError(f"{cls.__name__} has validators, private attributes or extra fields: build it by validation")
    fields = []
    for name, info in cls.model_fields.items():
        if info.is_required():
            fields.append((name, False, ...))
        elif info.default_factory is not None or not isinstance(info.default, (str, int, float, bool, type(None),
                                                                               frozenset, tuple)):
            fields.append((name, True, _maker(info)))
        else:
            fields.append((name, False, info.default))
    order = tuple(cls.model_fields)
    layout = (frozenset(order), order, itemgetter(*order) if len(order) > 1 else lambda v: (v[order[0]],),
              tuple(fields))
    _LAYOUTS[cls] = layout
    return layout


def _maker(info: Any) -> Any:
    """A function of the values so far that makes the field's default as validation does. Whether a factory takes
    those values is read here once: ``FieldInfo.get_default`` inspects the factory's signature on every call
    (~60 us)."""
    factory = info.default_factory
    if factory is None:  # a mutable default: copied, as pydantic does
        return lambda state: info.get_default(call_default_factory=True)
    if info.default_factory_takes_validated_data:
        return factory
    return lambda state: factory()


def trusted(cls: type[M], given: frozenset[str] | None = None, /, **values: Any) -> M:
    """An instance of ``cls`` holding ``values`` (already of the field types) as validation would build it.

    ``given``: the fields the call stands for when ``values`` also spells out defaults (every field in field order
    is the fast path): the instance's ``model_fields_set``, as validating only those fields would make it; the
    values of the others must be their defaults."""
    names, order, getter, fields = _LAYOUTS.get(cls) or _layout(cls)
    if tuple(values) == order:  # every field given in field order (the hot paths): the keyword dict, new for this
        state = values          # call, is the instance's dict (~1.3 us less than rebuilding it in order)
    elif len(values) == len(order):  # every field given: their values in field order
        try:
            state = dict(zip(order, getter(values)))
        except KeyError:
            raise TypeError(f"{cls.__name__} has no field(s) {sorted(set(values) - names)}") from None
    else:
        state = _with_defaults(cls, names, fields, values)
    model = _NEW(cls)
    _SET(model, "__dict__", state)
    _SET(model, "__pydantic_fields_set__", set(values if given is None else given))
    _SET(model, "__pydantic_extra__", None)
    _SET(model, "__pydantic_private__", None)
    return model


def _with_defaults(cls: type[BaseModel], names: frozenset[str], fields: tuple[tuple[str, bool, Any], ...],
                   values: dict[str, Any]) -> dict[str, Any]:
    if not names.issuperset(values):
        raise TypeError(f"{cls.__name__} has no field(s) {sorted(set(values) - names)}")
    state: dict[str, Any] = {}
    for name, fresh, default in fields:
        if name in values:
            state[name] = values[name]
        elif fresh:
            state[name] = default(state)
        elif default is ...:
            raise TypeError(f"{cls.__name__}: missing required field {name!r}")
        else:
            state[name] = default
    return state


_PLAIN_VALUES = (str, int, float, bool, type(None))
_PLAIN_MODELS: dict[type[BaseModel], bool] = {}


def plain_dump(model: BaseModel, *, exclude_none: bool = False) -> dict[str, Any]:
    """``model.model_dump(exclude_none=exclude_none)``: for a record of plain fields (``_plain_fields``) its fields
    in order, lists copied, as pydantic's serializer gives them; any other record through ``model_dump``."""
    cls = type(model)
    plain = _PLAIN_MODELS.get(cls)
    if plain is None:
        plain = _PLAIN_MODELS[cls] = _plain_fields(cls)
    if not plain:
        return model.model_dump(exclude_none=exclude_none)
    return {name: (list(value) if type(value) is list else value) for name, value in model.__dict__.items()
            if not (exclude_none and value is None)}


def _plain_fields(cls: type[BaseModel]) -> bool:
    """Whether ``cls`` dumps its fields as they are: every field text, a number, a boolean, None, a literal of
    those or a list of them; no serializers, computed fields or extra fields."""
    decorators = cls.__pydantic_decorators__
    if (decorators.field_serializers or decorators.model_serializers or decorators.computed_fields
            or cls.model_config.get("extra") == "allow"):
        return False
    return all(_plain_type(info.annotation, lists=True) for info in cls.model_fields.values())


def _plain_type(annotation: Any, *, lists: bool) -> bool:
    origin = typing.get_origin(annotation)
    if origin is None:
        return annotation in _PLAIN_VALUES
    if origin is typing.Literal:
        return all(type(value) in _PLAIN_VALUES for value in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return all(_plain_type(arg, lists=lists) for arg in typing.get_args(annotation))
    if origin is list and lists:
        return all(_plain_type(arg, lists=False) for arg in typing.get_args(annotation))
    return False
