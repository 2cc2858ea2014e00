"""Turning rows a user brings (a JSONL file or a saved Hugging Face dataset) into passages, with a skip report.

A row is an object with ``content`` (or ``contents`` / ``text``) and optionally ``doc_id`` (or ``id`` / ``_id``),
``title``, ``source``, ``category`` and ``dataset_name``; other keys are ignored. Missing doc_ids become
``<dataset_name>:<row number>``. Rows that cannot become a passage are skipped and counted by reason.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from clinical_gym.knowledge_base.passage import Passage
from clinical_gym.knowledge_base.store import build_store

ALIASES = {"doc_id": ("doc_id", "id", "_id"), "content": ("content", "contents", "text"), "title": ("title",),
           "source": ("source",), "category": ("category",), "dataset_name": ("dataset_name",)}


class SkipRow(Exception):
    """A row that cannot become a passage; the message is the reason."""


@dataclass
class BuildReport:
    """What a build wrote and what it skipped (count and first location per reason)."""

    out: Path
    written: int = 0
    seconds: float = 0.0
    skipped: Counter[str] = field(default_factory=Counter)
    first_seen: dict[str, str] = field(default_factory=dict)

    def skip(self, where: str, reason: str) -> None:
        self.skipped[reason] += 1
        self.first_seen.setdefault(reason, where)

    def summary(self) -> str:
        rate = self.written / self.seconds if self.seconds else 0.0
        lines = [f"wrote {self.written:,} passages to {self.out} in {self.seconds:.1f} s ({rate:,.0f} passages/s)"]
        total = sum(self.skipped.values())
        lines.append(f"skipped {total:,} rows" + (":" if total else ""))
        lines += [f"  {n:,} {reason} (first at {self.first_seen[reason]})" for reason, n in self.skipped.most_common()]
        return "\n".join(lines)


@dataclass(frozen=True)
class RowDefaults:
    """Field values for rows that do not carry them (by default taken from the source's file name)."""

    source: str
    dataset_name: str
    category: str = "general"


def row_to_passage(row: object, number: int, defaults: RowDefaults) -> Passage:
    """One row as a passage, or ``SkipRow`` with the reason."""
    if not isinstance(row, dict):
        raise SkipRow("not a JSON object")
    values: dict[str, str] = {}
    for name, keys in ALIASES.items():
        value = next((row[k] for k in keys if row.get(k) is not None), None)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise SkipRow(f"{name} is not text")
        values[name] = str(value)
    if not values.get("content", "").strip():
        raise SkipRow("missing or empty content")
    values.setdefault("source", defaults.source)
    values.setdefault("dataset_name", defaults.dataset_name)
    values.setdefault("category", defaults.category)
    values.setdefault("doc_id", f"{values['dataset_name']}:{number}")
    try:
        return Passage(**values)
    except ValidationError as e:
        err = e.errors()[0]
        raise SkipRow(f"invalid {'.'.join(str(x) for x in err['loc'])} ({err['msg']})") from None


def unique_passages(rows: Iterable[tuple[str, object]], defaults: RowDefaults, report: BuildReport) -> Iterator[Passage]:
    """The passages of ``(where, row)`` pairs; bad rows and repeated doc_ids are skipped into ``report``."""
    seen: set[str] = set()
    for number, (where, row) in enumerate(rows, 1):
        try:
            if isinstance(row, SkipRow):
                raise row
            passage = row if isinstance(row, Passage) else row_to_passage(row, number, defaults)
            if passage.doc_id in seen:
                raise SkipRow("duplicate doc_id")
        except SkipRow as e:
            report.skip(where, str(e))
            continue
        seen.add(passage.doc_id)
        yield passage


def read_jsonl(path: Path) -> Iterator[tuple[str, object]]:
    """``(where, row)`` for each non-blank line; a line that is not JSON comes as a ``SkipRow``."""
    with path.open(encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield f"line {lineno}", json.loads(line)
                except json.JSONDecodeError:
                    yield f"line {lineno}", SkipRow("invalid JSON")


def read_hf_dataset(path: Path) -> Iterator[tuple[str, object]]:
    """Rows of a dataset saved with ``save_to_disk`` (every split of a DatasetDict), read offline.

    The dataset is opened at once (a bad folder fails here, before any row is read).
    """
    import datasets

    try:
        loaded = datasets.load_from_disk(str(path))
    except FileNotFoundError as e:
        raise ValueError(f"{path} is not a dataset saved with save_to_disk ({e})") from None
    splits = list(loaded.items()) if isinstance(loaded, datasets.DatasetDict) else [("", loaded)]
    return ((f"{split} row {i}" if split else f"row {i}", row) for split, ds in splits for i, row in enumerate(ds))


def read_rows(source: str | Path) -> Iterator[tuple[str, object]]:
    """Rows of a ``.jsonl`` file or a saved Hugging Face dataset directory (``ValueError`` at once if neither)."""
    path = Path(source).expanduser()
    if path.is_dir():
        return read_hf_dataset(path)
    if path.is_file() and path.suffix == ".jsonl":
        return read_jsonl(path)
    raise ValueError(f"{source}: expected a .jsonl file or a directory saved with datasets' save_to_disk")


def build_from_rows(rows: Iterable[tuple[str, object]], out: str | Path, defaults: RowDefaults, *, built_from: str,
                    on_progress: Callable[[int], None] | None = None) -> BuildReport:
    """Build a store at ``out`` from ``(where, row)`` pairs (rows may already be passages); returns the report."""
    report = BuildReport(out=Path(out))
    start = time.perf_counter()
    report.written = build_store(unique_passages(rows, defaults, report), out, built_from=built_from,
                                 on_progress=on_progress)
    report.seconds = time.perf_counter() - start
    return report


def build_from_source(source: str | Path, out: str | Path, *, on_progress: Callable[[int], None] | None = None) -> BuildReport:
    """Build a store at ``out`` from a JSONL file or a saved Hugging Face dataset."""
    rows = read_rows(source)
    name = Path(source).name.removesuffix(".jsonl")
    return build_from_rows(rows, out, RowDefaults(source=Path(source).name, dataset_name=name), built_from=str(source),
                           on_progress=on_progress)
