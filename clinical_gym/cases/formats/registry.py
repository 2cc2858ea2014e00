"""The case formats by name, format detection from a row, and reading a file or row list in any of them."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clinical_gym.cases.formats import diaggym, medqa, mtmeddialog, nejm, osce
from clinical_gym.cases.formats.huggingface import is_case_row, is_saved_dataset, read_saved_dataset, row_to_case
from clinical_gym.cases.formats.imported import CaseFormat, Origin
from clinical_gym.cases.formats.rows import first_row, member_lines, read_rows
from clinical_gym.cases.schema import Case

FORMATS: dict[str, CaseFormat] = {f.name: f for f in (osce.FORMAT, osce.MIMIC_FORMAT, nejm.FORMAT, mtmeddialog.FORMAT, diaggym.FORMAT,
                                                       medqa.FORMAT)}
# Detection tries the formats in this order: MIMIC-IV rows are OSCE-shaped, so they are recognised first.
_DETECTION_ORDER = ("mimiciv", "osce", "nejm", "mtmeddialog", "diaggym", "medqa")
NATIVE = "native"  # clinical-gym's own Case JSON
HF = "hf"  # rows written by to_hf_dataset (JSON-string columns), or a folder written by Dataset.save_to_disk
FORMAT_NAMES: tuple[str, ...] = (NATIVE, *FORMATS, HF)
_NATIVE_KEYS = frozenset({"id", "demographics", "history", "diagnosis"})
assert set(_DETECTION_ORDER) == set(FORMATS)


def check_format_name(name: str | None) -> None:
    """Raise ValueError for a ``format=`` value that names no format."""
    if name is not None and name not in FORMAT_NAMES:
        raise ValueError(f"unknown case format {name!r}; choose one of {', '.join(FORMAT_NAMES)}")


def detect_format(row: Any) -> str | None:
    """The format a row is in: a public format's name, 'hf', 'native' (a row with the Case schema's own keys), or
    None when it is in none of them (``why_unrecognised`` says why)."""
    if not isinstance(row, dict):
        return None
    if is_case_row(row):
        return HF
    if _NATIVE_KEYS <= set(row):
        return NATIVE
    return next((name for name in _DETECTION_ORDER if FORMATS[name].matches(row)), None)


def _reason(error: ValueError) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        return f"{loc}: {first['msg']}{more}" if loc else f"{first['msg']}{more}"
    return str(error)


def why_unrecognised(row: Any) -> str:
    """Why a row is in no known format: each format tried, with the first thing its reader missed."""
    if not isinstance(row, dict):
        return f"expected a JSON object, got {type(row).__name__}"
    tried = []
    for name in (NATIVE, *FORMATS):
        try:
            Case.model_validate(row) if name == NATIVE else FORMATS[name].row_model.model_validate(row)
            reason = "fields present but not in this format's shape"
        except (ValidationError, ValueError) as e:
            reason = _reason(e)
        tried.append(f"{name} ({reason})")
    return "not in a known case format; tried " + "; ".join(tried)


def row_case(row: Any, fmt: str | None, origin: Origin) -> Case:
    """The case in one row of format ``fmt`` (None: a row in no known format); raises ValueError for a bad row."""
    if not isinstance(row, dict):
        raise ValueError(f"expected a JSON object, got {type(row).__name__}")
    if fmt is None:
        raise ValueError(why_unrecognised(row))
    if fmt == NATIVE:
        return Case.model_validate(row)
    if fmt == HF:
        return row_to_case(row)
    return FORMATS[fmt].to_case(row, origin)


def _keyed_records(row: Any) -> bool:
    """A JSON object keyed by case id whose values are records in a known format (DiagBench's files)."""
    if not isinstance(row, dict) or not row or detect_format(row) is not None:
        return False
    return all(isinstance(v, dict) for v in row.values()) and detect_format(next(iter(row.values()))) not in (None, HF)


def convert_rows(rows: list[tuple[int, Any]], name: str, fmt: str | None = None) -> tuple[list[Case], list[str]]:
    """Cases from (line, row) pairs in format ``fmt`` (detected from the first JSON object when None); bad rows (and
    rows repeating an earlier case id) are skipped and reported as '<name>:<line>: reason'."""
    check_format_name(fmt)
    if fmt is None:
        fmt = detect_format(next((row for _, row in rows if isinstance(row, dict)), None))
    label = Path(name).name
    cases, problems, first_line = [], [], {}
    for line, row in rows:
        try:
            case = row_case(row, fmt, Origin(label, line))
        except ValueError as e:
            problems.append(f"{name}:{line}: {_reason(e)}")
            continue
        if case.id in first_line:
            problems.append(f"{name}:{line}: duplicate case id {case.id!r} (first on line {first_line[case.id]})")
            continue
        first_line[case.id] = line
        cases.append(case)
    return cases, problems


@lru_cache(maxsize=8)
def _converted(path: Path, fmt: str | None, mtime_ns: int, size: int) -> tuple[tuple[Case, ...], tuple[str, ...]]:
    """A converted file, kept while it is unchanged (each environment of a vector re-reads its case file)."""
    rows, problems = read_rows(path)
    if len(rows) == 1 and _keyed_records(rows[0][1]):  # {"<case id>": {record}, ...}: one row per member, keyed by id
        records = rows[0][1]
        lines = member_lines(path, list(records))
        rows = [(lines[key], {"id": key, **value}) for key, value in records.items()]
    cases, bad = convert_rows(rows, str(path), fmt)
    return tuple(cases), tuple(sorted(problems + bad, key=lambda p: int(p[len(str(path)) + 1:].split(":", 1)[0])))


def read_public_file(path: Path, fmt: str | None = None) -> tuple[list[Case], list[str]] | None:
    """Cases and 'file:line: reason' problems from a file in a public format (or a saved dataset folder); None when
    the file holds clinical-gym's own Case JSON (``fmt='native'``, or detected from its first row). A file in no
    known format gives a problem per row that names each format tried and why it did not fit."""
    check_format_name(fmt)
    if fmt == NATIVE:
        return None
    if path.is_dir():
        if is_saved_dataset(path) or fmt == HF:
            return read_saved_dataset(path)
        raise ValueError(f"{path} is a folder, not a case file or a saved dataset")
    if fmt is None:
        row = first_row(path)
        fmt = detect_format(row)
        if fmt is None and _keyed_records(row):
            fmt = detect_format(next(iter(row.values())))
        if fmt == NATIVE:
            return None
    stat = path.stat()
    cases, problems = _converted(path, fmt, stat.st_mtime_ns, stat.st_size)
    return list(cases), list(problems)
