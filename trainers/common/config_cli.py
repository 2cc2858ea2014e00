"""Command-line flags and YAML files for config dataclasses: one ``--flag`` per field, help from the field's
metadata; precedence defaults < ``--config FILE.yaml`` < flags. Bad values raise ``ValueError`` with one line."""

from __future__ import annotations

import argparse
import json
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
CONFIG_FLAG = "config"


def add_config_arguments(parser: argparse.ArgumentParser, cls: type) -> None:
    """Add a flag per field of dataclass ``cls`` (``lora_r`` -> ``--lora-r``; booleans get ``--no-...``), and
    ``--config FILE.yaml``. Flags that are not given stay out of the parsed namespace."""
    hints = typing.get_type_hints(cls)
    parser.add_argument(f"--{CONFIG_FLAG}", metavar="FILE.yaml", default=argparse.SUPPRESS,
                        help="YAML mapping of settings (field names); flags given here override it")
    for f in fields(cls):
        kind = hints[f.name]
        text = f"{f.metadata.get('help', '')} (default: {_default_text(f)})"
        flag = "--" + f.name.replace("_", "-")
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=text)
        else:
            choices = f.metadata.get("choices")
            parser.add_argument(flag, type=_parser_for(kind), default=argparse.SUPPRESS, help=text, choices=choices,
                                metavar="{" + ",".join(choices) + "}" if choices else _metavar(kind))


def config_from_args(cls: Callable[..., T], args: argparse.Namespace) -> T:
    """Build ``cls`` from defaults, the ``--config`` YAML file (if given), then the flags given."""
    return cls(**config_values(cls, args))


def config_values(cls: type, args: argparse.Namespace, base: Mapping[str, Any] | None = None,
                  source: str = "recipe") -> dict[str, Any]:
    """The settings given for ``cls``: ``base`` (e.g. a paper recipe's, checked like a file), then the ``--config``
    YAML file, then the flags given; ``env_kwargs`` are merged key by key in that order."""
    names = {f.name for f in fields(cls)}
    layers = [settings_from_mapping(base, cls, source)] if base else []
    if getattr(args, CONFIG_FLAG, None):
        layers.append(load_yaml(getattr(args, CONFIG_FLAG), cls))
    layers.append({k: v for k, v in vars(args).items() if k in names})
    values: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            both = key == "env_kwargs" and isinstance(values.get(key), Mapping) and isinstance(value, Mapping)
            values[key] = {**values[key], **value} if both else value
    return values


def module_main(cls: type, main: Callable[[Any], Any], argv: Sequence[str] | None, *, prog: str,
                description: str) -> int:
    """A trainer's ``python -m trainers.<algo>.train``: flags from ``cls``; settings checked before any model loads
    (a problem is one line on stderr and exit status 2), then ``main(cfg)``."""
    from clinical_gym.trainers.common import runtime

    parser = argparse.ArgumentParser(prog=prog, description=description)
    add_config_arguments(parser, cls)
    try:
        cfg = config_from_args(cls, parser.parse_args(argv))
        runtime.check_run(cfg)
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    main(cfg)
    return 0


def load_yaml(path: str | Path, cls: type) -> dict[str, Any]:
    """The settings in a YAML file, checked against the fields of ``cls`` and converted to their types."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"cannot read config file {path}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise ValueError(f"config file {path} is not valid YAML: {str(e).splitlines()[0]}") from None
    if data is None:
        return {}
    return settings_from_mapping(data, cls, f"config file {path}")


def settings_from_mapping(data: Any, cls: type, source: str) -> dict[str, Any]:
    """``data`` checked against the fields of ``cls`` and converted to their types (``source`` names it in errors)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{source} must hold a mapping of settings, not {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    data = {str(k).replace("-", "_"): v for k, v in data.items()}
    unknown = sorted(set(data) - set(hints))
    if unknown:
        raise ValueError(f"unknown setting(s) in {source}: {', '.join(unknown)}")
    return {name: _coerce(name, value, hints[name]) for name, value in data.items()}


def _coerce(name: str, value: Any, kind: Any) -> Any:
    """``value`` as ``kind``: strings are parsed like flags, ints widen to floats, other mismatches are errors."""
    if isinstance(value, str) and kind is not str:
        try:
            return _parser_for(kind)(value)
        except (ValueError, argparse.ArgumentTypeError) as e:
            raise ValueError(f"{name}: {e}") from None
    base, optional = _unwrap_optional(kind)
    if value is None and optional:
        return None
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    expected = dict if typing.get_origin(base) is dict else base
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise ValueError(f"{name} must be {_metavar(kind)}, got {value!r}")
    return value


def _unwrap_optional(kind: Any) -> tuple[Any, bool]:
    """``(X, True)`` for ``X | None``, else ``(kind, False)``."""
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        return args[0], len(args) < len(typing.get_args(kind))
    return kind, False


def _parser_for(kind: Any) -> Callable[[str], Any]:
    """A function turning flag text into a value of ``kind`` (``none`` for optional fields, JSON for mappings)."""
    base, optional = _unwrap_optional(kind)
    if typing.get_origin(base) is dict:
        parse = _json_object
    elif base is bool:
        parse = _boolean
    elif base in (int, float, str):
        parse = base
    else:
        raise TypeError(f"no command-line parser for {kind!r}")
    if not optional:
        return parse

    def parse_optional(text: str) -> Any:
        return None if text.lower() in ("none", "null") else parse(text)

    parse_optional.__name__ = parse.__name__
    return parse_optional


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "yes", "on", "1"):
        return True
    if lowered in ("false", "no", "off", "0"):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a JSON object: {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"not a JSON object: {text!r}")
    return value


def _metavar(kind: Any) -> str:
    base, optional = _unwrap_optional(kind)
    name = "JSON" if typing.get_origin(base) is dict else base.__name__.upper()
    return f"{name}|none" if optional else name


def _default_text(f: Field) -> str:
    if f.default is not MISSING:
        return repr(f.default)
    return repr(f.default_factory()) if f.default_factory is not MISSING else "required"
