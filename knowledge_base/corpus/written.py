"""The passages written for this project (conditions, drugs, interactions, guidelines): ``knowledge_base/data/*.jsonl``.

Each line holds doc_id, title, category and content; source and dataset_name are the same for all of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources

from clinical_gym.knowledge_base.passage import Passage

SOURCE = "clinical-gym written passages (original text for this project, Apache-2.0)"
DATASET_NAME = "clinical_gym_written"


def written_passages() -> Iterator[Passage]:
    """Every written passage, file by file (a malformed line is a packaging bug, so it raises)."""
    root = resources.files("knowledge_base") / "data"
    for file in sorted((f for f in root.iterdir() if f.name.endswith(".jsonl")), key=lambda f: f.name):
        for lineno, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    yield Passage(**json.loads(line), source=SOURCE, dataset_name=DATASET_NAME)
                except ValueError as e:
                    raise ValueError(f"{file.name}:{lineno}: {e}") from None
