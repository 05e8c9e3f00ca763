"""The SQLite store itself: imported on first open, so loading the plugin stays light."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from collections.abc import Mapping
from typing import Any

from agentkit_core.plugin import StoredCheckpoint
from agentkit_core.stores import SqliteFile

_SCHEMA = """
CREATE TABLE IF NOT EXISTS agentkit_checkpoints (
    run_id     TEXT    NOT NULL,
    namespace  TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    status     TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    metadata   TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    PRIMARY KEY (run_id, namespace, version)
)
"""
#: Content-part bytes by sha256, written once however many versions name them.
BLOBS = "agentkit_checkpoint_blobs"
_COLUMNS = "run_id, namespace, version, status, state, metadata, created_at"
_KEY = "run_id = ? AND namespace = ?"
_INSERT = f"INSERT INTO agentkit_checkpoints ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"


class SqliteCheckpointStore:
    """A :class:`~agentkit_core.plugin.CheckpointPort` over one SQLite file (a :class:`SqliteFile`).

    Open it with ``open_checkpoint_store("sqlite:///runs.db")``; the URL's options
    (``synchronous``, ``busy_timeout``, ``writes``) and what they guarantee are
    :class:`~agentkit_core.stores.SqliteFile`'s, see the README.
    """

    def __init__(self, db: SqliteFile) -> None:
        self.db = db
        self.path = db.path

    @classmethod
    async def open(cls, url: str) -> SqliteCheckpointStore:
        """Open (creating when missing) the database a ``sqlite:///`` URL names, and its table."""
        schema = (_SCHEMA, SqliteFile.blob_schema(BLOBS))
        return cls(await SqliteFile.open_url(url, schema=schema, what="checkpoint"))

    async def put(self, record: StoredCheckpoint) -> bool:
        """INSERT the record; False when the primary key (its version) is taken."""
        row = (
            record.run_id,
            record.namespace,
            record.version,
            record.status,
            record.state,
            record.metadata,
            record.created_at,
        )

        def insert(conn: sqlite3.Connection) -> bool:
            try:
                conn.execute(_INSERT, row)
            except sqlite3.IntegrityError:
                return False
            return True

        return await self.db.write(insert)

    async def _one(self, where: str, args: tuple[Any, ...]) -> StoredCheckpoint | None:
        query = f"SELECT {_COLUMNS} FROM agentkit_checkpoints WHERE {where}"
        row = await self.db.read(lambda conn: conn.execute(query, args).fetchone(), point=True)
        return None if row is None else StoredCheckpoint(*row)

    async def latest(self, run_id: str, namespace: str) -> StoredCheckpoint | None:
        """The highest version's record, or None."""
        return await self._one(f"{_KEY} ORDER BY version DESC LIMIT 1", (run_id, namespace))

    async def get(self, run_id: str, namespace: str, version: int) -> StoredCheckpoint | None:
        """That version's record, or None."""
        return await self._one(f"{_KEY} AND version = ?", (run_id, namespace, version))

    async def versions(self, run_id: str, namespace: str) -> list[int]:
        """The stored versions, ascending."""
        query = f"SELECT version FROM agentkit_checkpoints WHERE {_KEY} ORDER BY version"
        rows = await self.db.read(lambda conn: conn.execute(query, (run_id, namespace)).fetchall())
        return [v for (v,) in rows]

    async def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Keep each blob under its sha256, written once (the blob table)."""
        await self.db.put_blobs(BLOBS, blobs)

    async def get_blobs(self, hashes: Collection[str]) -> dict[str, bytes]:
        """The blobs held of ``hashes``."""
        return await self.db.get_blobs(BLOBS, hashes)

    async def aclose(self) -> None:
        """Close the connections and stop the worker thread; closing twice is harmless."""
        await self.db.aclose()

    def __repr__(self) -> str:
        return f"<SqliteCheckpointStore {str(self.path)!r} synchronous={self.db.synchronous}>"
