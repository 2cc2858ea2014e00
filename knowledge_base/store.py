"""The passage store: an SQLite database with an FTS5 index, written once and then read from many threads.

Layout (built with sqlite-utils): table ``passages`` (doc_id, source, title, content, category, dataset_name),
an external-content FTS5 table ``passages_fts`` over title and content with ``tokenize='porter unicode61'``,
and ``kb_meta`` (schema version, build id, when and from what it was built). Searches rank by FTS5's
``bm25()`` (k1 = 1.2, b = 0.75) and return ``snippet()`` text. The file is in WAL mode; every thread reads
through its own connection.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from clinical_gym.knowledge_base.errors import KnowledgeBaseError, rebuild_hint
from clinical_gym.knowledge_base.passage import Passage, SearchHit
from clinical_gym.knowledge_base.text import ELLIPSIS, HIGHLIGHT, SNIPPET_WORDS, fts_match_expression, query_terms

SCHEMA_VERSION = "1"
FIELDS = ("doc_id", "source", "title", "content", "category", "dataset_name")
TIE_MARGIN = 10  # extra candidates fetched so that equal scores are ordered by rowid in every backend
WRITE_BATCH = 2_000

_FTS_SEARCH = """
SELECT passages_fts.rowid, bm25(passages_fts),
       snippet(passages_fts, 1, :open, :close, :ellipsis, :words),
       p.doc_id, p.title, p.source, p.category, p.dataset_name
FROM passages_fts CROSS JOIN passages AS p ON p.rowid = passages_fts.rowid
WHERE passages_fts MATCH :match {category_filter}
ORDER BY passages_fts.rank LIMIT :limit
"""
# CROSS JOIN keeps the full-text scan outermost: otherwise SQLite may run one MATCH per passage of the category
_CATEGORY_FILTER = "AND p.category = :category"


def build_store(passages: Iterable[Passage], path: str | Path, *, built_from: str = "",
                on_progress: Callable[[int], None] | None = None) -> int:
    """Write ``passages`` (unique doc_ids) to a new database at ``path``, replacing any old one; returns the count.

    The database is written beside ``path`` and moved into place at the end, so readers never see half a build.
    ``on_progress`` is called with the number of passages written since its last call.
    """
    import sqlite_utils  # imports pandas when installed: only here, not when searching

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.building-{os.getpid()}")
    _remove_database(tmp)
    db = sqlite_utils.Database(tmp)
    try:
        count = _write(db, passages, built_from, on_progress)
    except BaseException:
        db.close()
        _remove_database(tmp)
        raise
    db.close()
    _remove_database(path)
    os.replace(tmp, path)
    return count


def _write(db, passages: Iterable[Passage], built_from: str, on_progress: Callable[[int], None] | None) -> int:
    """Fill an empty sqlite-utils database: passages, their FTS5 index, the category index and kb_meta."""
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    table = db.table("passages")
    table.create({f: str for f in FIELDS}, pk="doc_id", not_null=set(FIELDS))
    count = 0
    insert = f"INSERT INTO passages ({', '.join(FIELDS)}) VALUES ({', '.join('?' * len(FIELDS))})"
    for batch in _batches(passages, WRITE_BATCH):
        with db.conn:  # plain executemany: about twice as fast as sqlite-utils' insert_all for these rows
            db.conn.executemany(insert, [tuple(getattr(p, f) for f in FIELDS) for p in batch])
        count += len(batch)
        if on_progress:
            on_progress(len(batch))
    table.enable_fts(["title", "content"], tokenize="porter unicode61")
    table.create_index(["category"])
    meta = {"schema_version": SCHEMA_VERSION, "build_id": uuid.uuid4().hex, "passages": str(count),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "built_from": built_from}
    db.table("kb_meta").insert_all(({"key": k, "value": v} for k, v in meta.items()), pk="key")
    db.execute("PRAGMA journal_mode = WAL")
    return count


def _batches(items: Iterable[Passage], size: int) -> Iterator[list[Passage]]:
    batch: list[Passage] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _remove_database(path: Path) -> None:
    """Delete a database file with its WAL and shared-memory files (a stale WAL would corrupt a new file)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


class PassageStore:
    """A built passage database opened for reading; safe to share between threads.

    Raises ``KnowledgeBaseError`` (naming the rebuild command) when the file is missing, is not a passage
    database, or turns out to be corrupted while reading.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_file():
            raise KnowledgeBaseError(f"no knowledge base at {self.path}; {rebuild_hint(self.path)}")
        self._local = threading.local()
        self._categories: dict[str, int] | None = None
        self.meta = self._read_meta()
        if self.meta.get("schema_version") != SCHEMA_VERSION:
            raise KnowledgeBaseError(f"knowledge base {self.path} has schema version {self.meta.get('schema_version')!r}, "
                                     f"this version reads {SCHEMA_VERSION!r}; {rebuild_hint(self.path)}")

    @property
    def build_id(self) -> str:
        return self.meta["build_id"]

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            self._local.conn = conn
        return conn

    def _query(self, sql: str, params: Sequence[object] | dict[str, object] = ()) -> list[tuple]:
        try:
            return self._connection().execute(sql, params).fetchall()
        except sqlite3.DatabaseError as e:
            raise KnowledgeBaseError(f"knowledge base {self.path} is unreadable ({e}); {rebuild_hint(self.path)}") from e

    def _read_meta(self) -> dict[str, str]:
        tables = {name for (name,) in self._query("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = {"passages", "passages_fts", "kb_meta"} - tables
        if missing:
            raise KnowledgeBaseError(f"{self.path} is not a knowledge base (no {', '.join(sorted(missing))} table); "
                                     f"{rebuild_hint(self.path)}")
        return dict(self._query("SELECT key, value FROM kb_meta"))

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def __len__(self) -> int:
        return self._query("SELECT count(*) FROM passages")[0][0]

    def categories(self) -> dict[str, int]:
        """Passage count per category, largest first."""
        if self._categories is None:
            sql = "SELECT category, count(*) AS n FROM passages GROUP BY category ORDER BY n DESC, category"
            self._categories = dict(self._query(sql))
        return dict(self._categories)

    def get(self, doc_id: str) -> Passage | None:
        """The passage with this doc_id, or None."""
        rows = self._query(f"SELECT {', '.join(FIELDS)} FROM passages WHERE doc_id = ?", (doc_id,))
        return Passage(**dict(zip(FIELDS, rows[0]))) if rows else None

    def by_rowid(self, rowids: Sequence[int]) -> dict[int, Passage]:
        """Passages by SQLite rowid (what the in-memory index stores)."""
        marks = ", ".join("?" * len(rowids))
        rows = self._query(f"SELECT rowid, {', '.join(FIELDS)} FROM passages WHERE rowid IN ({marks})", list(rowids))
        return {r[0]: Passage.model_construct(**dict(zip(FIELDS, r[1:]))) for r in rows}  # validated when written

    def scan(self, batch: int = 20_000) -> Iterator[tuple[int, str, str, str]]:
        """Every passage as (rowid, title, content, category), in rowid order."""
        last = -1
        while True:
            rows = self._query("SELECT rowid, title, content, category FROM passages WHERE rowid > ? ORDER BY rowid LIMIT ?",
                               (last, batch))
            if not rows:
                return
            yield from rows
            last = rows[-1][0]

    def search(self, query: str, k: int = 5, category: str | None = None) -> list[SearchHit]:
        """The ``k`` passages ranked highest by FTS5 bm25() for any text ``query`` (made safe first)."""
        terms = query_terms(query)
        if not terms or k < 1:
            return []
        sql = _FTS_SEARCH.format(category_filter=_CATEGORY_FILTER if category is not None else "")
        params = {"match": fts_match_expression(terms), "limit": k + TIE_MARGIN, "category": category,
                  "open": HIGHLIGHT[0], "close": HIGHLIGHT[1], "ellipsis": ELLIPSIS, "words": SNIPPET_WORDS}
        rows = sorted(self._query(sql, params), key=lambda r: (r[1], r[0]))[:k]
        return [SearchHit(doc_id=r[3], title=r[4], snippet=r[2], score=-r[1], source=r[5], category=r[6], dataset_name=r[7])
                for r in rows]
