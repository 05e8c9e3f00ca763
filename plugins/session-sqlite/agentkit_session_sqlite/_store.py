"""The SQLite session store itself: imported on first open, so loading the plugin stays light."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from agentkit_core.plugin import SessionInfo
from agentkit_core.plugin import SessionItem
from agentkit_core.stores import SqliteFile

TABLE = "agentkit_session_items"
BLOBS = "agentkit_session_blobs"
_SCHEMA = (
    f"""
    CREATE TABLE IF NOT EXISTS {TABLE} (
        session_id TEXT    NOT NULL,
        position   INTEGER NOT NULL,
        id         TEXT    NOT NULL UNIQUE,
        parent     TEXT,
        kind       TEXT    NOT NULL,
        body       TEXT    NOT NULL,
        created_at TEXT    NOT NULL,
        PRIMARY KEY (session_id, position)
    )
    """,
    # Listing sessions reads only the headers (position 1), in the order they were created.
    f"CREATE INDEX IF NOT EXISTS {TABLE}_headers ON {TABLE} (created_at, session_id) "
    "WHERE position = 1",
    # Content-part bytes by sha256, written once however many items name them.
    SqliteFile.blob_schema(BLOBS),
)
_COLUMNS = "session_id, id, parent, kind, body, created_at"
_SELECT = f"SELECT {_COLUMNS} FROM {TABLE}"
_INSERT = f"INSERT INTO {TABLE} (position, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
# The compare-and-set: the position is read from the parent in the same statement, and the
# primary key refuses it when another item already follows that parent in the session.
_INSERT_AFTER = (
    f"INSERT INTO {TABLE} (position, {_COLUMNS}) "
    f"SELECT position + 1, ?, ?, ?, ?, ?, ? FROM {TABLE} WHERE id = ? AND session_id = ?"
)
_INFO = f"""
    SELECT h.session_id, h.id, h.parent, h.kind, h.body, h.created_at,
           l.id, l.position, l.created_at, b.session_id
    FROM {TABLE} h
    JOIN {TABLE} l ON l.session_id = h.session_id
     AND l.position = (SELECT max(position) FROM {TABLE} WHERE session_id = h.session_id)
    LEFT JOIN {TABLE} b ON b.id = h.parent
    WHERE h.position = 1
"""


def _row(item: SessionItem) -> tuple[Any, ...]:
    return (item.session_id, item.id, item.parent, item.kind, item.body_json, item.created_at)


def _info(row: tuple[Any, ...]) -> SessionInfo:
    header = SessionItem(*row[:6])
    leaf_id, count, updated_at, base_session = row[6:]
    return SessionInfo(header.session_id, header, leaf_id, count, updated_at, base_session)


class SqliteSessionStore:
    """A :class:`~agentkit_core.plugin.SessionStore` over one SQLite file (a :class:`SqliteFile`).

    Open it with ``open_session_store("sqlite:///sessions.db")``; the URL's options
    (``synchronous``, ``busy_timeout``, ``writes``) and what they guarantee are
    :class:`~agentkit_core.stores.SqliteFile`'s, see the README. Writes run inline when the
    database is free; reads run on the file's worker thread.
    """

    def __init__(self, db: SqliteFile, url: str) -> None:
        self.db = db
        self.url = url

    @classmethod
    async def open(cls, url: str) -> SqliteSessionStore:
        """Open (creating when missing) the database a ``sqlite:///`` URL names, and its table."""
        return cls(await SqliteFile.open_url(url, schema=_SCHEMA, what="session"), url)

    async def create(self, items: Sequence[SessionItem]) -> bool:
        """INSERT the items at positions 1, 2...; False when position 1 of the id is taken."""
        rows = [(position, *_row(item)) for position, item in enumerate(items, 1)]
        return await self.db.write(lambda conn: _transaction(conn, _INSERT, rows))

    async def append(self, items: Sequence[SessionItem]) -> bool:
        """INSERT each item after its parent; False when a position is taken (or no parent)."""
        rows = [(*_row(item), item.parent, item.session_id) for item in items]
        return await self.db.write(lambda conn: _transaction(conn, _INSERT_AFTER, rows))

    async def item(self, item_id: str) -> SessionItem | None:
        """The item with that id, or None."""
        row = await self.db.read(
            lambda conn: conn.execute(f"{_SELECT} WHERE id = ?", (item_id,)).fetchone()
        )
        return None if row is None else SessionItem(*row)

    async def leaf(self, session_id: str) -> SessionItem | None:
        """The session's item with the highest position, or None."""
        query = f"{_SELECT} WHERE session_id = ? ORDER BY position DESC LIMIT 1"
        row = await self.db.read(lambda conn: conn.execute(query, (session_id,)).fetchone())
        return None if row is None else SessionItem(*row)

    async def path(self, item_id: str) -> list[SessionItem]:
        """Root to ``item_id``: one range of positions per session on the way (see _path)."""
        rows = await self.db.read(lambda conn: _path(conn, item_id))
        return [SessionItem(*row) for row in rows]

    async def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Keep each blob under its sha256, written once (the blob table)."""
        await self.db.put_blobs(BLOBS, blobs)

    async def get_blobs(self, hashes: Collection[str]) -> dict[str, bytes]:
        """The blobs held of ``hashes``."""
        return await self.db.get_blobs(BLOBS, hashes)

    async def info(self, session_id: str) -> SessionInfo | None:
        """The session's summary, or None."""
        query = f"{_INFO} AND h.session_id = ?"
        row = await self.db.read(lambda conn: conn.execute(query, (session_id,)).fetchone())
        return None if row is None else _info(row)

    async def sessions(self) -> list[SessionInfo]:
        """Every session's summary, oldest first."""
        query = f"{_INFO} ORDER BY h.created_at, h.session_id"
        rows = await self.db.read(lambda conn: conn.execute(query).fetchall())
        return [_info(row) for row in rows]

    async def aclose(self) -> None:
        """Close the connections and stop the worker thread; closing twice is harmless."""
        await self.db.aclose()

    def __repr__(self) -> str:
        return f"<SqliteSessionStore {self.url}>"


def _transaction(conn: sqlite3.Connection, statement: str, rows: list[tuple[Any, ...]]) -> bool:
    """Run ``statement`` once per row, all or nothing: False when a row is refused."""
    if len(rows) == 1:  # one statement is its own transaction
        try:
            return conn.execute(statement, rows[0]).rowcount == 1
        except sqlite3.IntegrityError:
            return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        for row in rows:
            if conn.execute(statement, row).rowcount != 1:
                conn.execute("ROLLBACK")
                return False
    except sqlite3.IntegrityError:
        conn.execute("ROLLBACK")
        return False
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return True


def _path(conn: sqlite3.Connection, item_id: str) -> list[tuple[Any, ...]]:
    """The rows from the root to ``item_id``.

    Within a session an item's parent is the item one position before it, so the path is,
    for each session on the way, the range of positions 1..n (one index range scan), and from
    its header (position 1) to the base item it was forked at. A session met twice (a record
    edited into a loop) ends the walk, as does a base item that is missing.
    """
    segments: list[list[tuple[Any, ...]]] = []
    seen: set[str] = set()
    found = conn.execute(
        f"SELECT session_id, position FROM {TABLE} WHERE id = ?", (item_id,)
    ).fetchone()
    while found is not None and found[0] not in seen:
        session_id, upto = found
        seen.add(session_id)
        rows = conn.execute(
            f"{_SELECT} WHERE session_id = ? AND position <= ? ORDER BY position",
            (session_id, upto),
        ).fetchall()
        segments.append(rows)
        base = rows[0][2] if rows else None
        if base is None:
            break
        found = conn.execute(
            f"SELECT session_id, position FROM {TABLE} WHERE id = ?", (base,)
        ).fetchone()
    return [row for rows in reversed(segments) for row in rows]
