"""The PostgreSQL memory store: one table, a pool; each write is one compare-and-set statement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import MemoryEntry
from agentkit_core.plugin import ENTRY_COLUMNS as COLUMNS
from agentkit_core.plugin import EntryRows
from agentkit_core.plugin import MemoryHit
from agentkit_core.plugin import MemoryListing
from agentkit_core.plugin import query_terms
from agentkit_core.plugin import stored_entry
from agentkit_core.stores import PostgresPool

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["PostgresMemoryStore"]


#: The text search configuration: English stems (a query's "deploying" finds "deploys").
CONFIG = "english"
#: What an entry is searched by: its title, weighted above its body.
DOCUMENT = (
    f"setweight(to_tsvector('{CONFIG}'::regconfig, title), 'A') || "
    f"setweight(to_tsvector('{CONFIG}'::regconfig, body), 'B')"
)


def _schema(table: str) -> tuple[str, ...]:
    # The search column is generated, so a table made before it is filled as it is added and
    # every writer keeps it current; the GIN index serves the @@ match.
    index = table[:-1] + '_search"'  # the table's quoted name, '"name"'
    return (
        f"CREATE TABLE IF NOT EXISTS {table} (scope text NOT NULL, title text NOT NULL, "
        "body text NOT NULL, version bigint NOT NULL, updated_at text NOT NULL, "
        "session text NOT NULL DEFAULT '', PRIMARY KEY (scope, title))",
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS search tsvector "
        f"GENERATED ALWAYS AS ({DOCUMENT}) STORED",
        f"CREATE INDEX IF NOT EXISTS {index} ON {table} USING gin (search)",
    )


class PostgresMemoryStore:
    """A :class:`~agentkit_core.plugin.MemoryStore` on one PostgreSQL table (a ``PostgresPool``).

    Build it with :meth:`from_url`; the first call opens the pool and creates the table if it
    is missing. ``aclose`` closes the pool.
    """

    def __init__(self, pool: PostgresPool) -> None:
        self.pool = pool
        self.url = pool.url
        self._rows = EntryRows(pool.url)
        t = pool.quoted
        self._select = f"SELECT {COLUMNS} FROM {t}"
        self._insert = (
            f"INSERT INTO {t} ({COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
        )
        self._update = (
            f"UPDATE {t} SET body = %s, version = %s, updated_at = %s, session = %s "
            "WHERE scope = %s AND title = %s AND version = %s"
        )
        # A forgotten key keeps its row, with an empty body, at the next version.
        self._live = f"{self._select} WHERE scope = %s AND title = %s AND body <> ''"
        self._delete = (
            f"UPDATE {t} SET body = '', version = GREATEST(version, 0) + 1 "
            "WHERE scope = %s AND title = %s AND body <> ''"
        )
        self._forgotten = f"SELECT version FROM {t} WHERE scope = %s AND title = %s AND body = ''"
        # Byte order (as Python sorts), whatever the database's collation.
        self._scopes = f"SELECT DISTINCT scope COLLATE \"C\" FROM {t} WHERE body <> '' ORDER BY 1"

    @classmethod
    def from_url(cls, url: str) -> PostgresMemoryStore:
        """Parse a ``postgresql://`` URL (see README.md for its options); nothing connects yet."""
        pool = PostgresPool.from_url(
            url, what="memory", table="agentkit_memory_entries", schema=_schema
        )
        return cls(pool)

    async def scopes(self) -> list[str]:
        """The scopes holding entries."""
        rows = await self.pool.fetch(self._scopes, (), "listing the scopes")
        return [str(r[0]) for r in rows]

    async def entries(self, scope: str) -> MemoryListing:
        """The scope's rows by title (byte order, as Python sorts); unreadable ones by title."""
        query = f"{self._select} WHERE scope = %s AND body <> '' ORDER BY title COLLATE \"C\""
        rows = await self.pool.fetch(query, (scope,), f"listing scope {scope!r}")
        return self._rows.listing(scope, rows)

    async def get(self, scope: str, title: str) -> MemoryEntry | None:
        """The entry's row, or None."""
        rows = await self.pool.fetch(self._live, (scope, title), f"reading {title!r}")
        return stored_entry(rows[0], self.url) if rows else None

    async def forgotten(self, scope: str, title: str) -> int:
        """The version of the key's forgotten row (empty body), or 0."""
        rows = await self.pool.fetch(self._forgotten, (scope, title), f"reading {title!r}")
        return int(rows[0][0]) if rows else 0

    async def put(self, entry: MemoryEntry, expected: int) -> bool:
        """INSERT a new entry (``expected`` 0) or UPDATE the row still at ``expected``.

        On a retry after a dropped connection, the first try may have committed: then the row
        holds exactly this entry.
        """
        e = entry
        if expected == 0:
            statement = self._insert
            args: tuple[Any, ...] = (e.scope, e.title, e.body, e.version, e.updated_at, e.session)
        else:
            statement = self._update
            args = (e.body, e.version, e.updated_at, e.session, e.scope, e.title, expected)

        async def write(conn: AsyncConnection[Any], retried: bool) -> bool:
            if (await conn.execute(statement, args)).rowcount == 1:
                return True
            if not retried:
                return False
            cur = await conn.execute(
                f"{self._select} WHERE scope = %s AND title = %s", (e.scope, e.title)
            )
            row = await cur.fetchone()
            return row is not None and tuple(row) == (
                e.scope,
                e.title,
                e.body,
                e.version,
                e.updated_at,
                e.session,
            )

        return await self.pool.run(write, f"writing {e.title!r}")

    async def delete(self, scope: str, title: str, expected: int | None) -> bool:
        """Empty the row's body and raise its version (at ``expected``, unless None).

        On a retry after a dropped connection, an entry that is gone counts as forgotten.
        """
        statement = self._delete
        args: tuple[str | int, ...] = (scope, title)
        if expected is not None:
            statement, args = f"{statement} AND version = %s", (scope, title, expected)

        async def remove(conn: AsyncConnection[Any], retried: bool) -> bool:
            if (await conn.execute(statement, args)).rowcount == 1:
                return True
            if not retried:
                return False
            cur = await conn.execute(self._live, args[:2])
            return await cur.fetchone() is None

        return await self.pool.run(remove, f"forgetting {title!r}")

    async def query(
        self, text: str, k: int, scopes: Sequence[str] | None = None
    ) -> list[MemoryHit]:
        """Full-text search ranked by ``ts_rank_cd``: the words of ``text`` quoted, OR-ed.

        ``websearch_to_tsquery`` never raises a syntax error, and each word is quoted so none
        is read as its operators.
        """
        terms = query_terms(text)
        if not terms:
            return []
        words = " or ".join('"' + t.replace('"', " ") + '"' for t in terms)
        where = "" if scopes is None else " AND scope = ANY(%s)"
        statement = (
            f"SELECT {COLUMNS}, ts_rank_cd(search, q) AS rank FROM {self.pool.quoted}, "
            f"websearch_to_tsquery('{CONFIG}'::regconfig, %s) AS q "
            f"WHERE search @@ q AND body <> ''{where} "
            'ORDER BY rank DESC, scope COLLATE "C", title COLLATE "C" LIMIT %s'
        )
        args = (words, *(() if scopes is None else (list(scopes),)), k)
        rows = await self.pool.fetch(statement, args, "searching memory")
        return [MemoryHit(stored_entry(r[:-1], self.url), float(r[-1]), self.url) for r in rows]

    async def aclose(self) -> None:
        """Close the pool; later calls raise ``StorageError``."""
        await self.pool.aclose()

    def __repr__(self) -> str:
        return f"<PostgresMemoryStore {self.url}>"
