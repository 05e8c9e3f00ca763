"""The ``sqlite:///path`` checkpoint store: one SQLite file in WAL mode, safe for many processes.

The compare-and-set is the table's primary key ``(run_id, namespace, version)``: a put is one
``INSERT`` in its own transaction, and a taken version fails on the key, so two writers — two
tasks, two threads or two processes — can never overwrite each other. All SQLite calls of a
store run on one worker thread of its own, so the event loop never waits on a lock or an fsync.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from typing import TypeVar
from urllib.parse import parse_qsl

from agentkit_core import ConfigError
from agentkit_core import StorageError
from agentkit_core import StoredCheckpoint
from agentkit_core import hookimpl

__all__ = ["SqliteCheckpointStore", "parse_url"]

T = TypeVar("T")

SYNCHRONOUS = ("off", "normal", "full", "extra")
DEFAULTS = {"synchronous": "full", "busy_timeout": "30000"}
PREFIX = "sqlite:///"

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
_COLUMNS = "run_id, namespace, version, status, state, metadata, created_at"
_KEY = "run_id = ? AND namespace = ?"


def parse_url(url: str) -> tuple[Path, dict[str, str]]:
    """The file path and options of ``sqlite:///path?synchronous=normal&busy_timeout=5000``.

    Like SQLAlchemy: ``sqlite:///runs.db`` is relative to the working directory,
    ``sqlite:////var/lib/runs.db`` absolute.
    """
    if not url.startswith(PREFIX):
        raise ConfigError(
            f"{url!r} is not a sqlite checkpoint URL; write sqlite:///relative/runs.db or "
            "sqlite:////absolute/runs.db",
            value=url,
            source="sqlite checkpoint store",
        )
    path, _, query = url[len(PREFIX) :].partition("?")
    if not path or path == ":memory:":
        raise ConfigError(
            f"{url!r} names no database file; a checkpoint store needs one (use memory:// for "
            "an in-process store)",
            value=url,
            source="sqlite checkpoint store",
        )
    options = dict(DEFAULTS)
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in DEFAULTS:
            raise ConfigError(
                f"unknown option {key!r} in {url!r}; the options are {', '.join(DEFAULTS)}",
                value=key,
                source="sqlite checkpoint store",
            )
        options[key] = value.lower()
    if options["synchronous"] not in SYNCHRONOUS:
        raise ConfigError(
            f"synchronous={options['synchronous']!r} in {url!r} is not one of "
            f"{', '.join(SYNCHRONOUS)}",
            value=options["synchronous"],
            source="sqlite checkpoint store",
        )
    if not options["busy_timeout"].isdigit():
        raise ConfigError(
            f"busy_timeout={options['busy_timeout']!r} in {url!r} must be whole milliseconds",
            value=options["busy_timeout"],
            source="sqlite checkpoint store",
        )
    return Path(path), options


class SqliteCheckpointStore:
    """A :class:`~agentkit_core.CheckpointPort` over one SQLite file.

    Open it with ``open_checkpoint_store("sqlite:///runs.db")`` (or ``await
    SqliteCheckpointStore.open(path)``). ``synchronous`` is ``full`` by default: a snapshot that
    returned survives a power loss; ``normal`` survives a crash of the process (not of the
    machine) and is about twice as fast. ``busy_timeout`` (ms) is how long a writer waits for
    another process's transaction.
    """

    def __init__(self, path: Path, *, synchronous: str = "full", busy_timeout: int = 30000):
        self.path = path
        self.synchronous = synchronous
        self.busy_timeout = busy_timeout
        self._executor: ThreadPoolExecutor | None = ThreadPoolExecutor(
            1, thread_name_prefix="agentkit-sqlite"
        )
        self._conn: sqlite3.Connection | None = None

    @classmethod
    async def open(
        cls, path: str | Path, *, synchronous: str = "full", busy_timeout: int = 30000
    ) -> SqliteCheckpointStore:
        """Open (creating when missing) the database and its table."""
        store = cls(Path(path), synchronous=synchronous, busy_timeout=busy_timeout)
        try:
            await store._run(store._connect)
        except BaseException:
            await store.aclose()
            raise
        return store

    def _connect(self) -> None:
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout / 1000,
                isolation_level=None,  # autocommit: each INSERT is its own transaction
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise StorageError(
                f"cannot open the SQLite checkpoint database {str(self.path)!r}: {exc}; "
                "check that its directory exists and is writable"
            ) from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout)}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode != "wal":
                raise StorageError(
                    f"SQLite database {str(self.path)!r} refused WAL mode (got {mode!r}); a "
                    "checkpoint store needs a local file system"
                )
            conn.execute(f"PRAGMA synchronous = {self.synchronous.upper()}")
            conn.execute(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._executor is None:
            raise StorageError(
                f"the SQLite checkpoint store {str(self.path)!r} is closed; open a new one"
            )
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, fn, *args)
        except sqlite3.Error as exc:
            raise StorageError(
                f"SQLite checkpoint database {str(self.path)!r} failed: {exc}"
            ) from exc

    def _db(self) -> sqlite3.Connection:
        assert self._conn is not None, "store used before open()"
        return self._conn

    def _put(self, record: StoredCheckpoint) -> bool:
        try:
            self._db().execute(
                f"INSERT INTO agentkit_checkpoints ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    record.run_id,
                    record.namespace,
                    record.version,
                    record.status,
                    record.state,
                    record.metadata,
                    record.created_at,
                ),
            )
        except sqlite3.IntegrityError:
            return False
        return True

    def _one(self, where: str, args: tuple[Any, ...]) -> StoredCheckpoint | None:
        row = (
            self._db()
            .execute(f"SELECT {_COLUMNS} FROM agentkit_checkpoints WHERE {where}", args)
            .fetchone()
        )
        return None if row is None else StoredCheckpoint(*row)

    def _versions(self, run_id: str, namespace: str) -> list[int]:
        rows = self._db().execute(
            f"SELECT version FROM agentkit_checkpoints WHERE {_KEY} ORDER BY version",
            (run_id, namespace),
        )
        return [v for (v,) in rows]

    async def put(self, record: StoredCheckpoint) -> bool:
        """INSERT the record; False when the primary key (its version) is taken."""
        return await self._run(self._put, record)

    async def latest(self, run_id: str, namespace: str) -> StoredCheckpoint | None:
        """The highest version's record, or None."""
        return await self._run(
            self._one, f"{_KEY} ORDER BY version DESC LIMIT 1", (run_id, namespace)
        )

    async def get(self, run_id: str, namespace: str, version: int) -> StoredCheckpoint | None:
        """That version's record, or None."""
        return await self._run(self._one, f"{_KEY} AND version = ?", (run_id, namespace, version))

    async def versions(self, run_id: str, namespace: str) -> list[int]:
        """The stored versions, ascending."""
        return await self._run(self._versions, run_id, namespace)

    async def aclose(self) -> None:
        """Close the connection and stop the worker thread; closing twice is harmless."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        conn, self._conn = self._conn, None
        if conn is not None:
            await asyncio.get_running_loop().run_in_executor(executor, conn.close)
        executor.shutdown(wait=False)

    def __repr__(self) -> str:
        return f"<SqliteCheckpointStore {str(self.path)!r} synchronous={self.synchronous}>"


async def open_store(url: str) -> SqliteCheckpointStore:
    """The opener registered for ``sqlite``: parse the URL, open the file."""
    path, options = parse_url(url)
    return await SqliteCheckpointStore.open(
        path, synchronous=options["synchronous"], busy_timeout=int(options["busy_timeout"])
    )


@hookimpl
def agentkit_register_checkpoint_stores(register: Any) -> None:
    """Offer ``sqlite:///path``."""
    register("sqlite", open_store)
