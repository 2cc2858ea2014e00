"""``DomainDB``: the base of every tool domain's database (pydantic), with JSON load/dump and a content hash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

D = TypeVar("D", bound="DomainDB")


class DomainDB(BaseModel):
    """A domain's whole state: what READ tools show and WRITE tools change.

    Subclasses declare the collections as fields. ``get_hash()`` is a digest of the content (key order does not
    matter), so a test or a grader can compare the state after WRITE actions; ``episode_copy()`` is the independent
    copy an environment gives one episode, so that WRITE tools never touch the loaded database.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    @classmethod
    def load(cls: type[D], path: str | Path) -> D:
        """Read a database from a JSON file."""
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))

    def dump(self, path: str | Path) -> None:
        """Write the database as indented JSON."""
        Path(path).write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")

    def get_hash(self) -> str:
        """SHA-256 of the canonical JSON of the content."""
        return hashlib.sha256(canonical_json(self.model_dump(mode="json")).encode()).hexdigest()

    def episode_copy(self: D) -> D:
        """A deep, independent copy for one episode. A domain with a large database may override it with a
        copy-on-write scheme, as long as nothing an episode does can change the original."""
        return self.model_copy(deep=True)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal content gives equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
