"""The SQLite memory store itself: imported on first open, so loading the plugin stays light."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from agentkit_core import MemoryEntry
from agentkit_core.plugin import ENTRY_COLUMNS as COLUMNS
from agentkit_core.plugin import EntryRows
from agentkit_core.plugin import MemoryHit
from agentkit_core.plugin import MemoryListing
from agentkit_core.plugin import query_terms
from agentkit_core.plugin import stored_entry
from agentkit_core.stores import SqliteFile

TABLE = "agentkit_memory_entries"
FTS = "agentkit_memory_fts"
KEYS = "agentkit_memory_fts_keys"
_ID = f"(SELECT id FROM {KEYS} WHERE scope = new.scope AND title = new.title)"
_OLD_ID = f"(SELECT id FROM {KEYS} WHERE scope = old.scope AND title = old.title)"
_SCHEMA = (
    f"""
    CREATE TABLE IF NOT EXISTS {TABLE} (
        scope      TEXT    NOT NULL,
        title      TEXT    NOT NULL,
        body       TEXT    NOT NULL,
        version    INTEGER NOT NULL,
        updated_at TEXT    NOT NULL,
        session    TEXT    NOT NULL DEFAULT '',
        PRIMARY KEY (scope, title)
    ) WITHOUT ROWID
    """,
    # The full-text index of the live entries (FTS5, Porter stems), kept by triggers so every
    # writer, an older version of this store too, keeps it whole. An entry's row in the index
    # is found by its key's id (KEYS), so a write touches its own row, never scans the index.
    f"CREATE TABLE IF NOT EXISTS {KEYS} (id INTEGER PRIMARY KEY, scope TEXT NOT NULL, "
    "title TEXT NOT NULL, UNIQUE (scope, title))",
    f"""
    CREATE VIRTUAL TABLE IF NOT EXISTS {FTS} USING fts5(
        scope UNINDEXED, title, body, tokenize = 'porter unicode61'
    )
    """,
    f"""
    CREATE TRIGGER IF NOT EXISTS {FTS}_insert AFTER INSERT ON {TABLE} WHEN new.body <> ''
    BEGIN
        INSERT OR IGNORE INTO {KEYS} (scope, title) VALUES (new.scope, new.title);
        INSERT INTO {FTS} (rowid, scope, title, body) VALUES ({_ID}, new.scope, new.title,
            new.body);
    END
    """,
    f"""
    CREATE TRIGGER IF NOT EXISTS {FTS}_update AFTER UPDATE ON {TABLE} BEGIN
        DELETE FROM {FTS} WHERE rowid = {_OLD_ID};
        INSERT OR IGNORE INTO {KEYS} (scope, title) VALUES (new.scope, new.title);
        INSERT INTO {FTS} (rowid, scope, title, body)
            SELECT {_ID}, new.scope, new.title, new.body WHERE new.body <> '';
    END
    """,
    f"""
    CREATE TRIGGER IF NOT EXISTS {FTS}_delete AFTER DELETE ON {TABLE} BEGIN
        DELETE FROM {FTS} WHERE rowid = {_OLD_ID};
    END
    """,
    # A database made before the index: its entries are indexed once, on open.
    f"""
    INSERT OR IGNORE INTO {KEYS} (scope, title)
        SELECT scope, title FROM {TABLE} WHERE body <> '' AND NOT EXISTS (SELECT 1 FROM {FTS})
    """,
    f"""
    INSERT INTO {FTS} (rowid, scope, title, body)
        SELECT k.id, e.scope, e.title, e.body FROM {TABLE} AS e JOIN {KEYS} AS k
        ON k.scope = e.scope AND k.title = e.title
        WHERE e.body <> '' AND NOT EXISTS (SELECT 1 FROM {FTS})
    """,
)
_SELECT = f"SELECT {COLUMNS} FROM {TABLE}"
_INSERT = f"INSERT INTO {TABLE} ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
#: A forgotten key keeps its row, with an empty body, at the next version (see MemoryStore).
_LIVE = "body <> ''"
_FORGET = (
    f"UPDATE {TABLE} SET body = '', version = CASE WHEN typeof(version) = 'integer' "
    f"AND version > 0 THEN version + 1 ELSE 1 END WHERE scope = ? AND title = ? AND {_LIVE}"
)
_UPDATE = (
    f"UPDATE {TABLE} SET body = ?, version = ?, updated_at = ?, session = ? "
    "WHERE scope = ? AND title = ? AND version = ?"
)


class SqliteMemoryStore:
    """A :class:`~agentkit_core.plugin.MemoryStore` over one SQLite file (a :class:`SqliteFile`).

    Open it with ``open_memory_store("sqlite:///memory.db")``. Writes are one statement each,
    run inline when the database is free, as are reads of one key; a scope's listing is read
    on the file's worker thread.
    """

    def __init__(self, db: SqliteFile, url: str) -> None:
        self.db = db
        self.url = url
        self._rows = EntryRows(url)

    @classmethod
    async def open(cls, url: str) -> SqliteMemoryStore:
        """Open (creating when missing) the database a ``sqlite:///`` URL names, and its table."""
        return cls(await SqliteFile.open_url(url, schema=_SCHEMA, what="memory"), url)

    async def scopes(self) -> list[str]:
        """The scopes holding entries."""
        query = f"SELECT DISTINCT scope FROM {TABLE} WHERE {_LIVE} ORDER BY scope"
        rows = await self.db.read(lambda conn: conn.execute(query).fetchall())
        return [str(r[0]) for r in rows]

    async def entries(self, scope: str) -> MemoryListing:
        """The scope's rows by title; a row that does not read goes in ``corrupt``."""
        query = f"{_SELECT} WHERE scope = ? AND {_LIVE} ORDER BY title"
        rows = await self.db.read(lambda conn: conn.execute(query, (scope,)).fetchall())
        return self._rows.listing(scope, rows)

    async def get(self, scope: str, title: str) -> MemoryEntry | None:
        """The entry's row, or None."""
        query = f"{_SELECT} WHERE scope = ? AND title = ? AND {_LIVE}"
        row = await self.db.read(
            lambda conn: conn.execute(query, (scope, title)).fetchone(), point=True
        )
        return None if row is None else stored_entry(row, self.url)

    async def forgotten(self, scope: str, title: str) -> int:
        """The version of the key's forgotten row (empty body), or 0."""
        query = f"SELECT version FROM {TABLE} WHERE scope = ? AND title = ? AND body = ''"
        row = await self.db.read(
            lambda conn: conn.execute(query, (scope, title)).fetchone(), point=True
        )
        return row[0] if row is not None and isinstance(row[0], int) else 0

    async def put(self, entry: MemoryEntry, expected: int) -> bool:
        """INSERT a new entry (``expected`` 0) or UPDATE the row still at ``expected``."""
        e = entry
        if expected == 0:
            row: tuple[Any, ...] = (e.scope, e.title, e.body, e.version, e.updated_at, e.session)
            return await self.db.write(lambda conn: _insert(conn, row))
        row = (e.body, e.version, e.updated_at, e.session, e.scope, e.title, expected)
        return await self.db.write(lambda conn: conn.execute(_UPDATE, row).rowcount == 1)

    async def delete(self, scope: str, title: str, expected: int | None) -> bool:
        """Empty the row's body and raise its version (at ``expected``, unless None)."""
        query = _FORGET
        args: tuple[Any, ...] = (scope, title)
        if expected is not None:
            query, args = f"{query} AND version = ?", (*args, expected)
        return await self.db.write(lambda conn: conn.execute(query, args).rowcount == 1)

    async def query(
        self, text: str, k: int, scopes: Sequence[str] | None = None
    ) -> list[MemoryHit]:
        """FTS5 over titles and bodies, ranked by BM25: each word of ``text`` quoted, OR-ed."""
        terms = query_terms(text)
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        where = ""
        if scopes is not None:
            where = f" AND f.scope IN ({', '.join('?' * len(scopes))})"
        cols = ", ".join(f"e.{c.strip()}" for c in COLUMNS.split(","))
        query = (
            f"SELECT {cols}, bm25({FTS}) AS rank FROM {FTS} AS f JOIN {TABLE} AS e "
            f"ON e.scope = f.scope AND e.title = f.title WHERE {FTS} MATCH ?{where} "
            f"AND e.{_LIVE} ORDER BY rank, e.scope, e.title LIMIT ?"
        )
        args = (match, *(scopes or ()), k)
        rows = await self.db.read(lambda conn: conn.execute(query, args).fetchall())
        return [MemoryHit(stored_entry(r[:-1], self.url), -float(r[-1]), self.url) for r in rows]

    async def aclose(self) -> None:
        """Close the connections and stop the worker thread; closing twice is harmless."""
        await self.db.aclose()

    def __repr__(self) -> str:
        return f"<SqliteMemoryStore {self.url}>"


def _insert(conn: sqlite3.Connection, row: tuple[Any, ...]) -> bool:
    try:
        conn.execute(_INSERT, row)
    except sqlite3.IntegrityError:  # the key is taken: the entry exists
        return False
    return True
