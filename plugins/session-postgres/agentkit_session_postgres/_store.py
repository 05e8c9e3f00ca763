"""The PostgreSQL session store: one table, a pool, the primary key does the compare-and-set."""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import UTC
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core.plugin import SessionInfo
from agentkit_core.plugin import SessionItem
from agentkit_core.stores import PostgresPool

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["PostgresSessionStore"]

_COLUMNS = "session_id, id, parent, kind, body, created_at"


def _schema(table: str) -> tuple[str, ...]:
    headers = f'{table[:-1]}_headers"'
    return (
        f"CREATE TABLE IF NOT EXISTS {table} (session_id text NOT NULL, position bigint NOT NULL, "
        "id text NOT NULL UNIQUE, parent text, kind text NOT NULL, body text NOT NULL, "
        "created_at timestamptz NOT NULL, PRIMARY KEY (session_id, position))",
        # Listing sessions reads only the headers (position 1), in the order they were created.
        f"CREATE INDEX IF NOT EXISTS {headers} ON {table} (created_at, session_id) "
        "WHERE position = 1",
        # Content-part bytes by sha256, written once however many items name them.
        PostgresPool.blob_schema(table),
    )


def _item(row: Sequence[Any]) -> SessionItem:
    session_id, item_id, parent, kind, body, created_at = row
    stamp = created_at.astimezone(UTC).isoformat()
    return SessionItem(session_id, item_id, parent, kind, body, stamp)


def _info(row: Sequence[Any]) -> SessionInfo:
    header = _item(row[:6])
    leaf_id, count, updated_at, base_session = row[6:]
    stamp = updated_at.astimezone(UTC).isoformat()
    return SessionInfo(header.session_id, header, leaf_id, count, stamp, base_session)


class PostgresSessionStore:
    """A :class:`~agentkit_core.plugin.SessionStore` on one PostgreSQL table (a ``PostgresPool``).

    Build it with :meth:`from_url`; the first call opens the pool and creates the table if it
    is missing. ``aclose`` closes the pool.
    """

    def __init__(self, pool: PostgresPool) -> None:
        self.pool = pool
        self.url = pool.url
        self.table = pool.table
        t = pool.quoted
        values = "%s, %s, %s, %s, %s, %s::timestamptz"
        self._insert = (
            f"INSERT INTO {t} (position, {_COLUMNS}) VALUES (%s, {values}) ON CONFLICT DO NOTHING"
        )
        # The compare-and-set: the position is read from the parent in the same statement, and
        # the primary key refuses it when another item already follows that parent.
        self._insert_after = (
            f"INSERT INTO {t} (position, {_COLUMNS}) SELECT position + 1, {values} "
            f"FROM {t} WHERE id = %s AND session_id = %s ON CONFLICT DO NOTHING"
        )
        self._item = f"SELECT {_COLUMNS} FROM {t} WHERE id = %s"
        self._leaf = (
            f"SELECT {_COLUMNS} FROM {t} WHERE session_id = %s ORDER BY position DESC LIMIT 1"
        )
        # Within a session an item's parent is the item one position before it: the path is,
        # per session on the way, a range of positions; the walk from a fork's header to its
        # base stops at a session it has met (a record edited into a loop).
        self._path = f"""
            WITH RECURSIVE seg(session_id, upto, depth, trail) AS (
                SELECT session_id, position, 0, ARRAY[session_id] FROM {t} WHERE id = %s
              UNION ALL
                SELECT b.session_id, b.position, seg.depth + 1, seg.trail || b.session_id
                FROM seg
                JOIN {t} h ON h.session_id = seg.session_id AND h.position = 1
                JOIN {t} b ON b.id = h.parent
                WHERE NOT b.session_id = ANY(seg.trail)
            )
            SELECT i.session_id, i.id, i.parent, i.kind, i.body, i.created_at
            FROM seg JOIN {t} i ON i.session_id = seg.session_id AND i.position <= seg.upto
            ORDER BY seg.depth DESC, i.position
        """
        self._info = f"""
            SELECT h.session_id, h.id, h.parent, h.kind, h.body, h.created_at,
                   l.id, l.position, l.created_at, b.session_id
            FROM {t} h
            JOIN {t} l ON l.session_id = h.session_id
             AND l.position = (SELECT max(position) FROM {t} WHERE session_id = h.session_id)
            LEFT JOIN {t} b ON b.id = h.parent
            WHERE h.position = 1
        """

    @classmethod
    def from_url(cls, url: str) -> PostgresSessionStore:
        """Parse a ``postgresql://`` URL (see README.md for its options); nothing connects yet."""
        pool = PostgresPool.from_url(
            url, what="session", table="agentkit_session_items", schema=_schema
        )
        return cls(pool)

    async def _write(self, statement: str, rows: list[tuple[Any, ...]], first: str) -> bool:
        """Run ``statement`` once per row in one transaction; False (nothing kept) when refused.

        On a retry after a dropped connection, the first try may have committed: then the
        first item, whose id is unique, is in the table.
        """

        async def write(conn: AsyncConnection[Any], retried: bool) -> bool:
            if len(rows) == 1:
                done = (await conn.execute(statement, rows[0])).rowcount == 1
            else:
                done = await _transaction(conn, statement, rows)
            if done or not retried:
                return done
            return await (await conn.execute(self._item, (first,))).fetchone() is not None

        return await self.pool.run(write, f"writing item {first!r}")

    async def create(self, items: Sequence[SessionItem]) -> bool:
        """INSERT the items at positions 1, 2...; False when position 1 of the id is taken."""
        rows = [(position, *_row(item)) for position, item in enumerate(items, 1)]
        return await self._write(self._insert, rows, items[0].id)

    async def append(self, items: Sequence[SessionItem]) -> bool:
        """INSERT each item after its parent; False when a position is taken (or no parent)."""
        rows = [(*_row(item), item.parent, item.session_id) for item in items]
        return await self._write(self._insert_after, rows, items[0].id)

    async def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Keep each blob under its sha256, written once (the blob table)."""
        await self.pool.put_blobs(blobs)

    async def get_blobs(self, hashes: Collection[str]) -> dict[str, bytes]:
        """The blobs held of ``hashes``."""
        return await self.pool.get_blobs(hashes)

    async def item(self, item_id: str) -> SessionItem | None:
        """The item with that id, or None."""
        rows = await self.pool.fetch(self._item, (item_id,), f"reading item {item_id!r}")
        return _item(rows[0]) if rows else None

    async def leaf(self, session_id: str) -> SessionItem | None:
        """The session's item with the highest position, or None."""
        action = f"reading the leaf of session {session_id!r}"
        rows = await self.pool.fetch(self._leaf, (session_id,), action)
        return _item(rows[0]) if rows else None

    async def path(self, item_id: str) -> list[SessionItem]:
        """Root to ``item_id``: one range of positions per session on the way, one query."""
        rows = await self.pool.fetch(self._path, (item_id,), f"reading the path to {item_id!r}")
        return [_item(row) for row in rows]

    async def info(self, session_id: str) -> SessionInfo | None:
        """The session's summary, or None."""
        query = f"{self._info} AND h.session_id = %s"
        rows = await self.pool.fetch(query, (session_id,), f"reading session {session_id!r}")
        return _info(rows[0]) if rows else None

    async def sessions(self) -> list[SessionInfo]:
        """Every session's summary, oldest first."""
        # ids in byte order (as Python sorts), whatever the database's collation
        query = f'{self._info} ORDER BY h.created_at, h.session_id COLLATE "C"'
        return [_info(row) for row in await self.pool.fetch(query, (), "listing the sessions")]

    async def aclose(self) -> None:
        """Close the pool; later calls raise :class:`~agentkit_core.StorageError`."""
        await self.pool.aclose()

    def __repr__(self) -> str:
        return f"PostgresSessionStore({self.url!r}, table={self.table!r})"


def _row(item: SessionItem) -> tuple[Any, ...]:
    return (item.session_id, item.id, item.parent, item.kind, item.body_json, item.created_at)


class _Refused(Exception):
    """A row the table refused: roll the transaction back."""


async def _transaction(conn: AsyncConnection[Any], statement: str, rows: list[Any]) -> bool:
    try:
        async with conn.transaction():
            for row in rows:
                if (await conn.execute(statement, row)).rowcount != 1:
                    raise _Refused
    except _Refused:
        return False
    return True
