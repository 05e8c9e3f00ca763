"""One SQLite file in WAL mode, as the SQLite store plugins use it (checkpoints, sessions).

What every such store needs and must get right once: its ``sqlite:///path?options`` URL, the
connection settings (``synchronous``, ``busy_timeout``, WAL), a worker thread so the event loop
never waits on a lock, and the inline write path that meets the bare insert loop's speed: a
write runs on the caller's thread when the database is free (it never waits for a lock there —
a busy database sends it to the worker) and the loop waits only for the commit's fsync. With
``writes=thread`` every call runs on the worker.

``sqlite3`` is imported on first open, so a plugin that merely imports this stays light.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import queue
import threading
import time
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar
from urllib.parse import parse_qsl

from .._errors import ConfigError
from .._errors import StorageError
from .._threads import answer
from .._urls import mask_url
from ._private import create_private
from ._text import unstorable

if TYPE_CHECKING:
    import sqlite3

T = TypeVar("T")

SYNCHRONOUS = ("off", "normal", "full", "extra")
WRITES = ("thread", "inline")
SQLITE_DEFAULTS = {"synchronous": "full", "busy_timeout": "30000", "writes": "inline"}
PREFIX = "sqlite:///"


def parse_sqlite_url(url: str, *, what: str) -> tuple[Path, dict[str, str]]:
    """The file path and options of ``sqlite:///path?synchronous=normal&busy_timeout=5000``.

    Like SQLAlchemy: ``sqlite:///runs.db`` is relative to the working directory,
    ``sqlite:////var/lib/runs.db`` absolute. ``what`` (``"checkpoint"``) names the store in
    errors. The options and their defaults are :data:`SQLITE_DEFAULTS`.
    """
    source = f"sqlite {what} store"
    shown = mask_url(url)  # how messages show the URL: never with a password
    if not url.startswith(PREFIX):
        raise ConfigError(
            f"{shown!r} is not a sqlite {what} URL; write sqlite:///relative/{what}s.db or "
            f"sqlite:////absolute/{what}s.db",
            value=shown,
            source=source,
        )
    path, _, query = url[len(PREFIX) :].partition("?")
    if not path or path == ":memory:":
        raise ConfigError(
            f"{shown!r} names no database file; a {what} store needs one (use memory:// for "
            "an in-process store)",
            value=shown,
            source=source,
        )
    options = dict(SQLITE_DEFAULTS)
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in SQLITE_DEFAULTS:
            raise ConfigError(
                f"unknown option {key!r} in {shown!r}; the options are "
                f"{', '.join(SQLITE_DEFAULTS)}",
                value=key,
                source=source,
            )
        options[key] = value.lower()
    for key, allowed in (("synchronous", SYNCHRONOUS), ("writes", WRITES)):
        if options[key] not in allowed:
            raise ConfigError(
                f"{key}={options[key]!r} in {shown!r} is not one of {', '.join(allowed)}",
                value=options[key],
                source=source,
            )
    if not options["busy_timeout"].isdigit():
        raise ConfigError(
            f"busy_timeout={options['busy_timeout']!r} in {shown!r} must be whole milliseconds",
            value=options["busy_timeout"],
            source=source,
        )
    return Path(path), options


class SqliteFile:
    """A SQLite database file opened for a store: its connections and its worker thread.

    Open it with ``await SqliteFile.open(path, schema=...)``; run ``fn(connection)`` with
    :meth:`read` (on the worker) or :meth:`write` (inline when the database is free, see the
    module docstring). ``synchronous`` is ``full`` by default: a write that returned survives a
    power loss; ``normal`` survives a crash of the process (not of the machine) and is about
    twice as fast. ``busy_timeout`` (ms) is how long a call waits for another process's
    transaction. A ``sqlite3.Error`` comes out as :class:`StorageError` naming the file.
    """

    def __init__(
        self,
        path: Path,
        *,
        what: str,
        synchronous: str = "full",
        busy_timeout: int = 30000,
        writes: str = "inline",
    ) -> None:
        self.path = path
        self.what = what
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
        schema: tuple[str, ...],
        what: str,
        synchronous: str = "full",
        busy_timeout: int = 30000,
        writes: str = "inline",
    ) -> SqliteFile:
        """Open (creating when missing) the database in WAL mode and run ``schema``.

        A new file is its owner's only (0600), and so are the -wal and -shm files SQLite makes
        with its mode: a store holds conversations, memories, tokens. A file already there
        keeps its mode; one that cannot be created is left for the connection to report.
        """
        if "\x00" in os.fspath(path):
            raise ConfigError(
                f"the {what} database path {os.fspath(path)!r} holds a NUL character, which no "
                "file name can; name the file without it",
                value=os.fspath(path),
                source=f"sqlite {what} store",
            )
        with contextlib.suppress(OSError):
            create_private(path)
        db = cls(
            Path(path),
            what=what,
            synchronous=synchronous,
            busy_timeout=busy_timeout,
            writes=writes,
        )
        try:
            await db._call(db._connect, schema)
        except BaseException:
            await db.aclose()
            raise
        return db

    @classmethod
    async def open_url(cls, url: str, *, schema: tuple[str, ...], what: str) -> SqliteFile:
        """:meth:`open` the file and options a ``sqlite:///`` URL names."""
        path, options = parse_sqlite_url(url, what=what)
        return await cls.open(
            path,
            schema=schema,
            what=what,
            synchronous=options["synchronous"],
            busy_timeout=int(options["busy_timeout"]),
            writes=options["writes"],
        )

    @property
    def name(self) -> str:
        """``SQLite <what> database '<path>'``, for messages."""
        return f"SQLite {self.what} database {str(self.path)!r}"

    def _connect(self, schema: tuple[str, ...]) -> None:
        conn = self._connection(self.busy_timeout)
        try:
            mode = _wal(conn, self.busy_timeout / 1000)
            if mode != "wal":
                raise StorageError(
                    f"{self.name} refused WAL mode (got {mode!r}); a {self.what} store needs a "
                    "local file system"
                )
            for statement in schema:
                conn.execute(statement)
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
            f"{self.name} was {what} while the store was open: SQLite would go on writing to "
            "the old, unlinked file, so nothing written since is kept and this store refuses "
            "every call; open the store again"
        )

    def _connection(self, busy_timeout: int) -> sqlite3.Connection:
        import sqlite3

        try:
            conn = sqlite3.connect(
                self.path,
                timeout=busy_timeout / 1000,
                isolation_level=None,  # autocommit: each statement is its own transaction
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise StorageError(
                f"cannot open the {self.name}: {exc}; check that its directory exists and is "
                "writable"
            ) from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout)}")
            conn.execute(f"PRAGMA synchronous = {self.synchronous.upper()}")
        except BaseException:
            conn.close()
            raise
        return conn

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        import sqlite3

        if self._worker is None:
            raise StorageError(
                f"the SQLite {self.what} store {str(self.path)!r} is closed; open a new one"
            )
        try:
            return await self._worker.call(fn, *args)
        except sqlite3.Error as exc:
            raise StorageError(f"{self.name} failed: {exc}") from exc
        except UnicodeEncodeError as exc:  # a lone surrogate bound as text
            raise unstorable(exc, self.name) from None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StorageError(
                f"the SQLite {self.what} store {str(self.path)!r} is closed; open a new one"
            )
        return self._conn

    async def read(self, fn: Callable[[sqlite3.Connection], T], *, point: bool = False) -> T:
        """``fn(connection)`` on the worker thread, once the file is checked to be ours.

        ``point=True`` is for a read of a row or two by key: it runs as :meth:`write` does,
        inline when the database is free, since the hop to the worker would cost more than
        the read. A scan stays on the worker, so a big one never holds up the event loop.
        """
        if point:
            return await self.write(fn)

        def checked() -> T:
            self._check_file()
            return fn(self._db())

        return await self._call(checked)

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(connection)`` inline when the database is free, else on the worker thread.

        ``fn`` may be tried inline first and, when that finds the database busy, once more on
        the worker: a transaction it opened is rolled back in between, so it must write
        nothing outside one. After it, the file is checked to be still the one opened (a
        write into a deleted file would be lost while reporting success). Point reads
        (``read(fn, point=True)``) take this path too.
        """
        import sqlite3

        inline = self._inline
        if inline is not None and self._inline_lock.acquire(blocking=False):
            try:
                result = fn(inline)
            except UnicodeEncodeError as exc:  # a lone surrogate bound as text
                if inline.in_transaction:
                    inline.rollback()
                raise unstorable(exc, self.name) from None
            except sqlite3.Error as exc:
                if inline.in_transaction:
                    inline.rollback()
                if not (isinstance(exc, sqlite3.OperationalError) and _busy(exc)):
                    raise StorageError(f"{self.name} failed: {exc}") from exc
            else:
                self._check_file()
                return result
            finally:
                self._inline_lock.release()
        result = await self._call(lambda: fn(self._db()))
        self._check_file()
        return result

    @staticmethod
    def blob_schema(table: str) -> str:
        """The statement creating blob table ``table``.

        It holds content-part bytes by sha256 (``agentkit_core.content``); a store's ``schema``
        includes it.
        """
        return f"CREATE TABLE IF NOT EXISTS {table} (sha256 TEXT PRIMARY KEY, data BLOB NOT NULL)"

    async def put_blobs(self, table: str, blobs: Mapping[str, bytes]) -> None:
        """Write each blob to ``table`` unless its sha256 is there (never rewritten)."""
        insert = f"INSERT OR IGNORE INTO {table} (sha256, data) VALUES (?, ?)"
        rows = list(blobs.items())
        await self.write(lambda conn: conn.executemany(insert, rows))  # each row idempotent

    async def get_blobs(self, table: str, hashes: Collection[str]) -> dict[str, bytes]:
        """The blobs of ``table`` with these hashes (a missing one is left out)."""
        wanted = list(hashes)
        query = f"SELECT sha256, data FROM {table} WHERE sha256 IN ({', '.join('?' * len(wanted))})"
        rows = await self.read(lambda conn: conn.execute(query, wanted).fetchall())
        return {digest: bytes(data) for digest, data in rows}

    async def aclose(self) -> None:
        """Close the connections and stop the worker thread; closing twice is harmless."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        conns = [c for c in (self._conn, self._inline) if c is not None]
        self._conn = self._inline = None
        with self._inline_lock:  # no inline write is half-way through
            for conn in conns:
                await worker.call(conn.close)
        worker.stop()

    def __repr__(self) -> str:
        return f"<SqliteFile {str(self.path)!r} synchronous={self.synchronous}>"


class _Worker:
    """One thread running jobs in order; each answer is handed back to the caller's loop.

    Lighter than ``run_in_executor`` (no concurrent future to chain): a call's hop to the
    thread and back is most of what a store adds to SQLite's own cost.
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
            answer(loop, future, functools.partial(fn, *args))

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
