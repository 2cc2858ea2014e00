"""Rows of a JSON or JSONL file with the line each starts on, and a cheap peek at the first one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in _SPACE:
        i += 1
    return i


def _json_rows(path: Path, text: str) -> tuple[list[tuple[int, Any]], list[str]]:
    """Items of a JSON array (or the one top-level value) with their start lines; stops at the first syntax error."""
    i = _skip_space(text, 0)
    if not text.startswith("[", i):
        try:
            return [(text.count("\n", 0, i) + 1, json.loads(text))], []
        except json.JSONDecodeError as e:
            return [], [f"{path}:{e.lineno}: invalid JSON ({e.msg})"]
    rows: list[tuple[int, Any]] = []
    line, last = 1, 0
    i = _skip_space(text, i + 1)
    while i < len(text) and text[i] != "]":
        line += text.count("\n", last, i)
        last = i
        try:
            row, end = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError as e:
            return rows, [f"{path}:{e.lineno}: invalid JSON ({e.msg}); rows after it were not read"]
        rows.append((line, row))
        i = _skip_space(text, end)
        if i < len(text) and text[i] == ",":
            i = _skip_space(text, i + 1)
    return rows, []


def read_rows(path: Path) -> tuple[list[tuple[int, Any]], list[str]]:
    """(line, parsed row) pairs of a JSONL file (one row a line) or a JSON file (an array of rows, or one row),
    and 'file:line: reason' problems for what could not be parsed."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".jsonl":
        return _json_rows(path, text)
    rows, problems = [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append((lineno, json.loads(line)))
            except json.JSONDecodeError as e:
                problems.append(f"{path}:{lineno}: invalid JSON ({e.msg})")
    return rows, problems


def first_row(path: Path) -> dict | None:
    """The first row of a JSON/JSONL file that parses as a JSON object, without parsing the rest; None if none."""
    with path.open(encoding="utf-8") as f:
        if path.suffix == ".jsonl":
            for line in f:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(row, dict):
                    return row
            return None
        text = f.read()
    i = _skip_space(text, 0)
    i = _skip_space(text, i + 1) if text.startswith("[", i) else i
    try:
        row, _ = _DECODER.raw_decode(text, i)
    except json.JSONDecodeError:
        return None
    return row if isinstance(row, dict) else None


def member_lines(path: Path, keys: list[str]) -> dict[str, int]:
    """The line on which each top-level member of a JSON object file starts (searched in order; 1 when not found)."""
    text = path.read_text(encoding="utf-8")
    lines, at = {}, 0
    for key in keys:
        found = text.find(json.dumps(key, ensure_ascii=False), at)
        if found < 0:
            found = text.find(json.dumps(key), at)
        lines[key] = text.count("\n", 0, found) + 1 if found >= 0 else 1
        at = max(at, found)
    return lines
