"""The experience repository: (state, action, reward, case id, turn, timestamp) rows in an SQLite file.

Layout: table ``experiences`` (one row per distinct state and action, keyed by a hash of both) and table
``embeddings`` (the state's vector per encoder, float32 bytes). The file is in WAL mode, so rollout workers in other
processes can write while others read. Every insert or reward improvement gets a new revision number (``rev``),
which lets an index pick up exactly what changed since it last looked.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

DEFAULT_THRESHOLD = 0.7
"""Doctor-R1's tau_reward: only turns whose reward is at least this are stored."""

_IDS_PER_QUERY = 500  # ids bound in one ``IN (...)`` (SQLite's variable limit can be as low as 999)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS experiences (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,
    action TEXT NOT NULL,
    reward REAL NOT NULL,
    case_id TEXT,
    turn INTEGER NOT NULL,
    timestamp REAL NOT NULL,
    rev INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS experiences_rev ON experiences(rev);
CREATE TABLE IF NOT EXISTS embeddings (
    experience_id INTEGER NOT NULL REFERENCES experiences(id),
    encoder TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (experience_id, encoder)
) WITHOUT ROWID;
"""
# A duplicate (same state and action) keeps one row: the one with the higher reward, which gets a new revision.
_UPSERT = """
INSERT INTO experiences (key, state, action, reward, case_id, turn, timestamp, rev)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(key) DO UPDATE SET reward = excluded.reward, case_id = excluded.case_id, turn = excluded.turn,
    timestamp = excluded.timestamp, rev = excluded.rev
WHERE excluded.reward > experiences.reward
"""


class Experience(BaseModel):
    """One remembered turn: what the agent saw (``state``), what it did (``action``) and the reward it got.
    ``id`` is set once the experience is in a store."""

    model_config = ConfigDict(frozen=True)

    state: str = Field(min_length=1)
    action: str = Field(min_length=1)
    reward: float
    case_id: str | None = None
    turn: int = Field(default=0, ge=0)
    timestamp: float = Field(default_factory=time.time)
    id: int | None = None


class Change(NamedTuple):
    """A row added or improved after some revision, as an index reads it; ``vector`` is the cached embedding for
    the encoder asked about (None when not cached) and ``state`` is filled only when asked for."""

    id: int
    rev: int
    reward: float
    case_id: str | None
    state: str | None
    vector: bytes | None


def experience_key(state: str, action: str) -> str:
    """The deduplication key: a hash of the state and action with case and whitespace folded."""
    folded = "\x1f".join(" ".join(text.split()).casefold() for text in (state, action))
    return hashlib.sha1(folded.encode("utf-8")).hexdigest()


class ExperienceStore:
    """An experience repository in the SQLite file at ``path`` (created when missing).

    ``add`` stores experiences whose reward is at least ``threshold`` (Doctor-R1: 0.7) in one transaction and merges
    duplicates. Each process (and each forked child) opens its own connection; writers wait up to
    ``busy_timeout_s`` for one another.
    """

    def __init__(self, path: str | os.PathLike[str], *, threshold: float = DEFAULT_THRESHOLD,
                 busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.threshold = float(threshold)
        self.busy_timeout_s = busy_timeout_s
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db()

    def __repr__(self) -> str:
        return f"ExperienceStore({str(self.path)!r}, threshold={self.threshold})"

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_conn": None, "_pid": -1}

    def __enter__(self) -> ExperienceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    def _db(self) -> sqlite3.Connection:
        """This process's connection (a connection is never shared with a forked child)."""
        if self._conn is None or self._pid != os.getpid():
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            with _transaction(conn):
                for statement in _SCHEMA.split(";"):
                    conn.execute(statement)
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    # -- writing --------------------------------------------------------------------------------------------
    def add(self, experiences: Iterable[Experience]) -> int:
        """Store the experiences whose reward is at least ``threshold``, in one transaction; returns how many rows
        were inserted or improved. A duplicate state and action keeps the higher reward."""
        kept = [e for e in experiences if e.reward >= self.threshold]
        if not kept:
            return 0
        conn = self._db()
        with _transaction(conn):
            base = conn.execute("SELECT COALESCE(MAX(rev), 0) FROM experiences").fetchone()[0]
            before = conn.total_changes
            conn.executemany(_UPSERT, [(experience_key(e.state, e.action), e.state, e.action, float(e.reward),
                                        e.case_id, e.turn, e.timestamp, base + i + 1) for i, e in enumerate(kept)])
            return conn.total_changes - before

    def save_embeddings(self, encoder: str, ids: Sequence[int], vectors: np.ndarray) -> None:
        """Cache ``vectors[i]`` (float32) as the ``encoder`` embedding of experience ``ids[i]``."""
        rows = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(ids) != len(rows):
            raise ValueError(f"{len(ids)} ids for {len(rows)} vectors")
        conn = self._db()
        with _transaction(conn):
            conn.executemany("INSERT OR REPLACE INTO embeddings (experience_id, encoder, vector) VALUES (?, ?, ?)",
                             [(int(i), encoder, row.tobytes()) for i, row in zip(ids, rows)])

    # -- reading --------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._db().execute("SELECT COUNT(*) FROM experiences").fetchone()[0]

    def revision(self) -> int:
        """The newest revision: it grows whenever a row is added or improved, in any process."""
        return self._db().execute("SELECT COALESCE(MAX(rev), 0) FROM experiences").fetchone()[0]

    def changes(self, since: int, *, encoder: str | None = None, with_state: bool = False) -> list[Change]:
        """Rows added or improved after revision ``since``, oldest first, with the ``encoder`` vectors when cached."""
        state = "e.state" if with_state else "NULL"
        vector = "v.vector" if encoder else "NULL"
        join = "LEFT JOIN embeddings v ON v.experience_id = e.id AND v.encoder = :encoder" if encoder else ""
        sql = (f"SELECT e.id, e.rev, e.reward, e.case_id, {state}, {vector} FROM experiences e {join} "
               "WHERE e.rev > :since ORDER BY e.rev")
        return [Change(*row) for row in self._db().execute(sql, {"since": since, "encoder": encoder})]

    def get(self, ids: Sequence[int]) -> list[Experience]:
        """The experiences with these ids, in the order given (unknown ids are left out)."""
        found: dict[int, Experience] = {}
        for start in range(0, len(ids), _IDS_PER_QUERY):
            chunk = [int(i) for i in ids[start:start + _IDS_PER_QUERY]]
            rows = self._db().execute("SELECT id, state, action, reward, case_id, turn, timestamp FROM experiences "
                                      f"WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            found.update((r[0], Experience(id=r[0], state=r[1], action=r[2], reward=r[3], case_id=r[4], turn=r[5],
                                           timestamp=r[6])) for r in rows)
        return [found[i] for i in ids if i in found]

    def states(self, ids: Sequence[int]) -> list[str]:
        """The states of these experiences, in the order given."""
        return [e.state for e in self.get(ids)]

    def cached_embeddings(self, encoder: str) -> int:
        """How many experiences have a cached ``encoder`` embedding."""
        return self._db().execute("SELECT COUNT(*) FROM embeddings WHERE encoder = ?", (encoder,)).fetchone()[0]


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error): the write lock is taken up front, so concurrent
    writers queue on the busy timeout instead of failing on a lock upgrade."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
