"""The PostgreSQL store behind ``postgresql://``: one table, a pool, the key does the CAS."""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core.plugin import StoredCheckpoint
from agentkit_core.stores import PostgresPool

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["PostgresCheckpointStore"]

_COLUMNS = "run_id, namespace, version, status, state, metadata, created_at"


def _schema(table: str) -> tuple[str, ...]:
    return (
        f"CREATE TABLE IF NOT EXISTS {table} (run_id text NOT NULL, namespace text NOT NULL, "
        "version bigint NOT NULL, status text NOT NULL, state text NOT NULL, "
        "metadata text NOT NULL, created_at timestamptz NOT NULL, "
        "PRIMARY KEY (run_id, namespace, version))",
        # Content-part bytes by sha256, written once however many versions name them.
        PostgresPool.blob_schema(table),
    )


def _same(stored: StoredCheckpoint, record: StoredCheckpoint) -> bool:
    """Whether the stored row is ``record`` (its timestamp compared as an instant)."""
    return (stored.status, stored.state, stored.metadata) == (
        record.status,
        record.state,
        record.metadata,
    ) and datetime.fromisoformat(stored.created_at) == datetime.fromisoformat(record.created_at)


class PostgresCheckpointStore:
    """A :class:`~agentkit_core.plugin.CheckpointPort` on one PostgreSQL table (a ``PostgresPool``).

    Build it with :meth:`from_url`; the first call opens the pool and creates the table if it
    is missing. ``aclose`` closes the pool.
    """

    def __init__(self, pool: PostgresPool) -> None:
        self.pool = pool
        self.url = pool.url
        self.table = pool.table
        t = pool.quoted
        self._insert = (
            f"INSERT INTO {t} ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s::timestamptz) "
            "ON CONFLICT (run_id, namespace, version) DO NOTHING"
        )
        where = "WHERE run_id = %s AND namespace = %s"
        self._latest = f"SELECT {_COLUMNS} FROM {t} {where} ORDER BY version DESC LIMIT 1"
        self._get = f"SELECT {_COLUMNS} FROM {t} {where} AND version = %s"
        self._versions = f"SELECT version FROM {t} {where} ORDER BY version"

    @classmethod
    def from_url(cls, url: str) -> PostgresCheckpointStore:
        """Parse a ``postgresql://`` URL (see README.md for its options); nothing connects yet."""
        pool = PostgresPool.from_url(
            url, what="checkpoint", table="agentkit_checkpoints", schema=_schema
        )
        return cls(pool)

    @staticmethod
    def _record(row: tuple[Any, ...]) -> StoredCheckpoint:
        run_id, namespace, version, status, state, metadata, created_at = row
        return StoredCheckpoint(
            run_id=run_id,
            namespace=namespace,
            version=version,
            status=status,
            state=state,
            metadata=metadata,
            created_at=created_at.astimezone(UTC).isoformat(),
        )

    async def put(self, record: StoredCheckpoint) -> bool:
        """Insert ``record``; False when the primary key already holds that version."""
        r = record
        params = (r.run_id, r.namespace, r.version, r.status, r.state, r.metadata, r.created_at)

        async def insert(conn: AsyncConnection[Any], retried: bool) -> bool:
            cur = await conn.execute(self._insert, params)
            if cur.rowcount == 1 or not retried:
                return cur.rowcount == 1
            # The first try's connection dropped, perhaps after its commit: the version is
            # ours if what holds it is exactly our record.
            cur = await conn.execute(self._get, (r.run_id, r.namespace, r.version))
            row = await cur.fetchone()
            return row is not None and _same(self._record(row), r)

        return await self.pool.run(insert, f"writing version {r.version} of run {r.run_id!r}")

    async def latest(self, run_id: str, namespace: str) -> StoredCheckpoint | None:
        """The highest version's record, or None."""
        action = f"reading the latest checkpoint of {run_id!r}"
        rows = await self.pool.fetch(self._latest, (run_id, namespace), action)
        return self._record(rows[0]) if rows else None

    async def get(self, run_id: str, namespace: str, version: int) -> StoredCheckpoint | None:
        """That version's record, or None."""
        action = f"reading version {version} of {run_id!r}"
        rows = await self.pool.fetch(self._get, (run_id, namespace, version), action)
        return self._record(rows[0]) if rows else None

    async def versions(self, run_id: str, namespace: str) -> list[int]:
        """The stored versions, ascending."""
        action = f"listing the versions of {run_id!r}"
        rows = await self.pool.fetch(self._versions, (run_id, namespace), action)
        return [version for (version,) in rows]

    async def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Keep each blob under its sha256, written once (the blob table)."""
        await self.pool.put_blobs(blobs)

    async def get_blobs(self, hashes: Collection[str]) -> dict[str, bytes]:
        """The blobs held of ``hashes``."""
        return await self.pool.get_blobs(hashes)

    async def aclose(self) -> None:
        """Close the pool; later calls raise :class:`~agentkit_core.StorageError`."""
        await self.pool.aclose()

    def __repr__(self) -> str:
        return f"PostgresCheckpointStore({self.url!r}, table={self.table!r})"
