"""The SQLite store itself: imported on first open, so loading the plugin stays light."""

from __future__ import annotations

import asyncio
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import TypeVar

from agentkit_core import StorageError
from agentkit_core import StoredCheckpoint

T = TypeVar("T")

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


class SqliteCheckpointStore:
    """A :class:`~agentkit_core.CheckpointPort` over one SQLite file.

    Open it with ``open_checkpoint_store("sqlite:///runs.db")`` (or ``await
    SqliteCheckpointStore.open(path)``). ``synchronous`` is ``full`` by default: a snapshot that
    returned survives a power loss; ``normal`` survives a crash of the process (not of the
    machine) and is about twice as fast. ``busy_timeout`` (ms) is how long a writer waits for
    another process's transaction. ``writes="inline"`` puts on the caller's thread when the
    database is free (see the module docstring).
    """

    def __init__(
        self,
        path: Path,
        *,
        synchronous: str = "full",
        busy_timeout: int = 30000,
        writes: str = "inline",
    ) -> None:
        self.path = path
        self.synchronous = synchronous
        self.busy_timeout = busy_timeout
        self.writes = writes
        self._worker: _Worker | None = _Worker()
        self._conn: sqlite3.Connection | None = None
        # writes="inline": a second connection that never waits for a lock, used by one
        # caller at a time; whoever finds it taken or the database busy goes to the worker.
        self._inline: sqlite3.Connection | None = None
        self._inline_lock = threading.Lock()
        # The file's identity when opened: if the path stops naming it (deleted, moved,
        # replaced), SQLite goes on writing to the unlinked file and every write is lost.
        self._where = os.path.abspath(path)
        self._identity: tuple[int, int] | None = None

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        synchronous: str = "full",
        busy_timeout: int = 30000,
        writes: str = "inline",
    ) -> SqliteCheckpointStore:
        """Open (creating when missing) the database and its table."""
        store = cls(Path(path), synchronous=synchronous, busy_timeout=busy_timeout, writes=writes)
        try:
            await store._run(store._connect)
        except BaseException:
            await store.aclose()
            raise
        return store

    def _connect(self) -> None:
        conn = self._connection(self.busy_timeout)
        try:
            mode = _wal(conn, self.busy_timeout / 1000)
            if mode != "wal":
                raise StorageError(
                    f"SQLite database {str(self.path)!r} refused WAL mode (got {mode!r}); a "
                    "checkpoint store needs a local file system"
                )
            conn.execute(_SCHEMA)
            if self.writes == "inline":
                self._inline = self._connection(0)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        found = os.stat(self._where)
        self._identity = (found.st_dev, found.st_ino)

    def _check_file(self) -> None:
        """Raise StorageError when the path no longer names the file this store has open."""
        try:
            found = os.stat(self._where)
        except FileNotFoundError:
            what = "deleted or moved"
        else:
            if (found.st_dev, found.st_ino) == self._identity:
                return
            what = "replaced by another file"
        raise StorageError(
            f"SQLite checkpoint database {str(self.path)!r} was {what} while the store was "
            "open: SQLite would go on writing to the old, unlinked file, so nothing written "
            "since is kept and this store refuses every call; open the store again"
        )

    def _connection(self, busy_timeout: int) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=busy_timeout / 1000,
                isolation_level=None,  # autocommit: each INSERT is its own transaction
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise StorageError(
                f"cannot open the SQLite checkpoint database {str(self.path)!r}: {exc}; "
                "check that its directory exists and is writable"
            ) from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout)}")
            conn.execute(f"PRAGMA synchronous = {self.synchronous.upper()}")
        except BaseException:
            conn.close()
            raise
        return conn

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._worker is None:
            raise StorageError(
                f"the SQLite checkpoint store {str(self.path)!r} is closed; open a new one"
            )
        try:
            return await self._worker.call(fn, *args)
        except sqlite3.Error as exc:
            raise StorageError(
                f"SQLite checkpoint database {str(self.path)!r} failed: {exc}"
            ) from exc

    def _db(self) -> sqlite3.Connection:
        assert self._conn is not None, "store used before open()"
        return self._conn

    def _put(self, record: StoredCheckpoint, conn: sqlite3.Connection | None = None) -> bool:
        """INSERT; the file is checked after, so a put into a deleted file never says True."""
        try:
            (conn or self._db()).execute(
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
            self._check_file()
            return False
        self._check_file()
        return True

    def _one(self, where: str, args: tuple[Any, ...]) -> StoredCheckpoint | None:
        self._check_file()
        row = (
            self._db()
            .execute(f"SELECT {_COLUMNS} FROM agentkit_checkpoints WHERE {where}", args)
            .fetchone()
        )
        return None if row is None else StoredCheckpoint(*row)

    def _versions(self, run_id: str, namespace: str) -> list[int]:
        self._check_file()
        rows = self._db().execute(
            f"SELECT version FROM agentkit_checkpoints WHERE {_KEY} ORDER BY version",
            (run_id, namespace),
        )
        return [v for (v,) in rows]

    async def put(self, record: StoredCheckpoint) -> bool:
        """INSERT the record; False when the primary key (its version) is taken."""
        if self._inline is not None and self._inline_lock.acquire(blocking=False):
            try:
                return self._put(record, self._inline)
            except sqlite3.OperationalError as exc:
                if not _busy(exc):
                    raise StorageError(
                        f"SQLite checkpoint database {str(self.path)!r} failed: {exc}"
                    ) from exc
            finally:
                self._inline_lock.release()
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
        worker, self._worker = self._worker, None
        if worker is None:
            return
        conns = [c for c in (self._conn, self._inline) if c is not None]
        self._conn = self._inline = None
        with self._inline_lock:  # no inline put is half-way through
            for conn in conns:
                await worker.call(conn.close)
        worker.stop()

    def __repr__(self) -> str:
        return f"<SqliteCheckpointStore {str(self.path)!r} synchronous={self.synchronous}>"


class _Worker:
    """One thread running jobs in order; each answer is handed back to the caller's loop.

    Lighter than ``run_in_executor`` (no concurrent future to chain): a snapshot's hop to the
    thread and back is most of what the store adds to SQLite's own cost.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="agentkit-sqlite", daemon=True)
        self._thread.start()

    def call(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((loop, future, fn, args))
        return future

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            loop, future, fn, args = job
            try:
                result, error = fn(*args), None
            except BaseException as exc:  # handed to the awaiting task, raised there
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:  # that loop is closed; nobody is waiting any more
                pass

    def stop(self) -> None:
        self._jobs.put(None)
        self._thread.join(timeout=5)


def _wal(conn: sqlite3.Connection, timeout: float) -> str:
    """Switch to WAL; another process opening the file at once can make one try say no."""
    deadline = time.monotonic() + timeout
    while (mode := conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]) != "wal":
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    return str(mode)


def _busy(exc: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED: another connection holds the lock; nothing was written."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    return code in (5, 6) if code is not None else "locked" in str(exc)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
