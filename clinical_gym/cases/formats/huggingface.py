"""Hugging Face ``datasets``: cases to a Dataset (one row per case) and back, and saved dataset folders.

Columns follow the ``Case`` fields: text fields are string columns, tuples of texts are list-of-string columns,
and every structured field (demographics, history, vitals, physical exam, tests, diagnosis, persona) is a JSON
string column, so any dataset tool can read it and the round trip is exact. ``cases_from_hf`` also reads datasets
in the public formats of ``clinical_gym.cases.formats`` (a MedQA-style dataset from the Hub, for example).
``datasets`` is imported only when these functions run.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from clinical_gym.cases.schema import Case

if TYPE_CHECKING:
    import datasets

_TEXT_LIST = tuple[str, ...]


def _column_kind(name: str) -> str:
    annotation = Case.model_fields[name].annotation
    if annotation is str:
        return "text"
    if annotation == _TEXT_LIST:
        return "texts"
    return "json"


COLUMNS: dict[str, str] = {name: _column_kind(name) for name in Case.model_fields}


def _datasets():
    """The ``datasets`` module, or an ImportError that says how to install it."""
    try:
        import datasets
    except ImportError:
        raise ImportError("Hugging Face datasets support needs the 'datasets' package: pip install 'clinical-gym[train]'") from None
    return datasets


def _features() -> "datasets.Features":
    ds = _datasets()  # Sequence of a Value is a list column in every datasets version the [train] extra allows
    return ds.Features({name: ds.Sequence(ds.Value("string")) if kind == "texts" else ds.Value("string") for name, kind in COLUMNS.items()})


def case_to_row(case: Case) -> dict[str, Any]:
    """One dataset row for a case."""
    data = case.model_dump(mode="json")
    return {name: json.dumps(data[name], ensure_ascii=False) if kind == "json" else data[name] for name, kind in COLUMNS.items()}


def is_case_row(row: dict[str, Any]) -> bool:
    """Whether a row has this module's columns (rather than a public format's fields)."""
    return {"id", "history", "diagnosis", "demographics"} <= set(row) and isinstance(row.get("history"), str)


def row_to_case(row: dict[str, Any]) -> Case:
    """The case in one row written by ``to_hf_dataset``; raises ValueError for a bad row."""
    data = {}
    for name, value in row.items():
        if name not in COLUMNS or value is None:
            continue
        data[name] = json.loads(value) if COLUMNS[name] == "json" else value
    return Case.model_validate(data)


def to_hf_dataset(cases: Iterable[Case]) -> "datasets.Dataset":
    """A ``datasets.Dataset`` with one row per case (see the module docstring for the columns)."""
    return _datasets().Dataset.from_list([case_to_row(c) for c in cases], features=_features())


def read_hf_rows(rows: Iterable[dict[str, Any]], name: str = "dataset") -> tuple[list[Case], list[str]]:
    """Cases from dataset rows (this module's columns, or a public format detected from the first row); bad rows
    are skipped and reported as '<name>:<row>: reason' (rows count from 1)."""
    from clinical_gym.cases.formats.registry import convert_rows  # the registry imports this module

    return convert_rows(list(enumerate(rows, 1)), name)


def cases_from_hf(dataset: "datasets.Dataset | Iterable[dict[str, Any]]") -> list[Case]:
    """The cases of a dataset; bad rows are skipped with a warning naming each one."""
    if hasattr(dataset, "keys") and not hasattr(dataset, "features"):
        raise TypeError(f"pass one split of the DatasetDict, e.g. dataset[{next(iter(dataset.keys()), 'train')!r}]")
    name = getattr(getattr(dataset, "info", None), "dataset_name", None) or "dataset"
    cases, problems = read_hf_rows(dataset, name)
    if problems:
        warnings.warn(f"skipped {len(problems)} bad dataset rows: " + "; ".join(problems[:5]), stacklevel=2)
    return cases


def is_saved_dataset(path: Path) -> bool:
    """Whether ``path`` is a folder written by ``Dataset.save_to_disk``."""
    return path.is_dir() and (path / "dataset_info.json").exists() and (path / "state.json").exists()


def read_saved_dataset(path: Path) -> tuple[list[Case], list[str]]:
    """Cases from a folder written by ``Dataset.save_to_disk`` (e.g. by ``clinical-gym cases export --format hf``)."""
    if not is_saved_dataset(path):
        raise ValueError(f"{path} is not a dataset folder written by Dataset.save_to_disk (no dataset_info.json and state.json)")
    return read_hf_rows(_datasets().load_from_disk(str(path)), str(path))

