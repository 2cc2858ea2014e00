"""The case formats by name, format detection from a row, and reading a file or row list in any of them."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clinical_gym.cases.formats import diaggym, medqa, mtmeddialog, osce
from clinical_gym.cases.formats.huggingface import is_case_row, is_saved_dataset, read_saved_dataset, row_to_case
from clinical_gym.cases.formats.imported import CaseFormat, Origin
from clinical_gym.cases.formats.rows import first_row, read_rows
from clinical_gym.cases.schema import Case

FORMATS: dict[str, CaseFormat] = {f.name: f for f in (osce.FORMAT, mtmeddialog.FORMAT, diaggym.FORMAT, medqa.FORMAT)}
NATIVE = "native"  # clinical-gym's own Case JSON
HF = "hf"  # rows written by to_hf_dataset (JSON-string columns), or a folder written by Dataset.save_to_disk
FORMAT_NAMES: tuple[str, ...] = (NATIVE, *FORMATS, HF)
_NATIVE_KEYS = frozenset({"id", "demographics", "history", "diagnosis"})


def check_format_name(name: str | None) -> None:
    """Raise ValueError for a ``format=`` value that names no format."""
    if name is not None and name not in FORMAT_NAMES:
        raise ValueError(f"unknown case format {name!r}; choose one of {', '.join(FORMAT_NAMES)}")


def detect_format(row: Any) -> str:
    """The format a row is in: a public format's name, 'hf', or 'native' (also when nothing matches, so that the
    case schema's own errors are reported)."""
    if isinstance(row, dict):
        if is_case_row(row):
            return HF
        if not _NATIVE_KEYS <= set(row):
            for fmt in FORMATS.values():
                if fmt.matches(row):
                    return fmt.name
    return NATIVE


def _reason(error: ValueError) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        return f"{loc}: {first['msg']}{more}" if loc else f"{first['msg']}{more}"
    return str(error)


def row_case(row: Any, fmt: str, origin: Origin) -> Case:
    """The case in one row of format ``fmt``; raises ValueError for a bad row."""
    if not isinstance(row, dict):
        raise ValueError(f"expected a JSON object, got {type(row).__name__}")
    if fmt == NATIVE:
        return Case.model_validate(row)
    if fmt == HF:
        return row_to_case(row)
    return FORMATS[fmt].to_case(row, origin)


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
def _converted(path: Path, fmt: str, mtime_ns: int, size: int) -> tuple[tuple[Case, ...], tuple[str, ...]]:
    """A converted file, kept while it is unchanged (each environment of a vector re-reads its case file)."""
    rows, problems = read_rows(path)
    cases, bad = convert_rows(rows, str(path), fmt)
    return tuple(cases), tuple(sorted(problems + bad, key=lambda p: int(p[len(str(path)) + 1:].split(":", 1)[0])))


def read_public_file(path: Path, fmt: str | None = None) -> tuple[list[Case], list[str]] | None:
    """Cases and 'file:line: reason' problems from a file in a public format (or a saved dataset folder); None when
    the file holds clinical-gym's own Case JSON (``fmt='native'``, or detected from its first row)."""
    check_format_name(fmt)
    if fmt == NATIVE:
        return None
    if path.is_dir():
        if is_saved_dataset(path) or fmt == HF:
            return read_saved_dataset(path)
        raise ValueError(f"{path} is a folder, not a case file or a saved dataset")
    fmt = fmt or detect_format(first_row(path))
    if fmt == NATIVE:
        return None
    stat = path.stat()
    cases, problems = _converted(path, fmt, stat.st_mtime_ns, stat.st_size)
    return list(cases), list(problems)
