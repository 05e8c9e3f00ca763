"""The PostgreSQL store behind ``postgresql://``: one table, a pool, the key does the CAS."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime
from datetime import timezone
from typing import Any
from typing import NamedTuple
from urllib.parse import unquote_plus
from urllib.parse import unquote_to_bytes
from urllib.parse import urlencode

from agentkit_core import ConfigError
from agentkit_core import StorageError
from agentkit_core import StoredCheckpoint
from agentkit_core import mask_url

try:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict
    from psycopg.conninfo import make_conninfo
    from psycopg_pool import AsyncConnectionPool
except ImportError as exc:  # pragma: no cover - the distribution depends on both
    raise ImportError(
        f"the postgresql:// checkpoint store needs psycopg 3 and psycopg-pool ({exc}); "
        "pip install 'psycopg[binary]>=3.1' 'psycopg-pool>=3.2'"
    ) from exc

__all__ = ["PostgresCheckpointStore"]

SCHEMES = ("postgresql", "postgres")
SYNCHRONOUS_COMMIT = ("on", "off", "local", "remote_write", "remote_apply")
OPTIONS = ("table", "pool_min", "pool_max", "pool_timeout", "synchronous_commit")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


#: libpq parameters that hold secrets: taken out of the URL and handed to libpq as keywords,
#: so libpq never parses them and no libpq message can quote them.
SECRET_PARAMS = ("password", "sslpassword")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


class _Split(NamedTuple):
    """A URL taken apart: what libpq may parse, the secrets, our options, libpq's options."""

    base: str
    secrets: dict[str, str]
    options: dict[str, str]
    libpq: list[tuple[str, str]]


def _split(url: str) -> _Split:
    """Take the password (userinfo or query) and our options out of a ``postgresql://`` URL.

    The userinfo ends at the last ``@`` before the first ``/``, so a password may hold ``@``,
    ``:``, ``?`` and ``#`` unencoded; a ``/`` in it must be ``%2F``. Secrets are percent-decoded
    strictly (a ``%`` not followed by two hex digits is an error that does not quote them).
    """
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in SCHEMES:
        raise _bad(url, "the scheme must be postgresql:// or postgres://")
    slash = rest.find("/")
    head = rest if slash < 0 else rest[:slash]
    if slash >= 0 and "@" in rest[slash:].partition("?")[0]:
        raise _bad(
            url,
            "it has an '@' after the first '/': a '/' in the password must be written %2F "
            "(and an '@' in the database name %40)",
        )
    secrets: dict[str, str] = {}
    at = head.rfind("@")
    if at >= 0:
        userinfo, hosts = rest[:at], rest[at + 1 :]
        user, colon, password = userinfo.partition(":")
        if colon:
            secrets["password"] = _secret(url, password, "the password")
        rest = f"{user}@{hosts}" if user else hosts
    location, _, query = rest.partition("?")
    for host in location.split("/", 1)[0].rpartition("@")[2].split(","):
        port = host.rpartition("]")[2] if host.startswith("[") else host
        if ":" in port and not port.rpartition(":")[2].isdigit():
            raise _bad(url, "its port is not a number (write host:5432)")
    options: dict[str, str] = {}
    libpq: list[tuple[str, str]] = []
    for pair in filter(None, query.split("&")):
        raw_key, _, raw_value = pair.partition("=")
        key = unquote_plus(raw_key)
        if key in SECRET_PARAMS:
            secrets[key] = _secret(url, raw_value, f"the {key} parameter")
        elif key in OPTIONS:
            options[key] = unquote_plus(raw_value)
        else:
            libpq.append((key, unquote_plus(raw_value)))
    return _Split(f"postgresql://{location}", secrets, options, libpq)


def _secret(url: str, encoded: str, what: str) -> str:
    """``encoded`` percent-decoded strictly, as libpq would; an error never quotes it."""
    if _BAD_ESCAPE.search(encoded):
        raise _bad(url, f"{what} has a '%' not followed by two hex digits (write a '%' as %25)")
    raw = unquote_to_bytes(encoded)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass  # raised outside: the decode error quotes the bytes, and would ride as context
    raise _bad(url, f"{what} is not UTF-8 once percent-decoded")


class _Result(NamedTuple):
    rowcount: int
    rows: list[tuple[Any, ...]]
    retried: bool


def _same(stored: StoredCheckpoint, record: StoredCheckpoint) -> bool:
    """Whether the stored row is ``record`` (its timestamp compared as an instant)."""
    return (stored.status, stored.state, stored.metadata) == (
        record.status,
        record.state,
        record.metadata,
    ) and datetime.fromisoformat(stored.created_at) == datetime.fromisoformat(record.created_at)


def _oneline(exc: BaseException) -> str:
    """Libpq's multi-line message on one line."""
    return " ".join(str(exc).split())


def _bad(url: str, problem: str) -> ConfigError:
    return ConfigError(
        f"checkpoint store URL {mask_url(url)!r}: {problem}; write it like "
        "'postgresql://user:password@host:5432/dbname?pool_max=4' (options: "
        f"{', '.join(OPTIONS)}, plus any libpq parameter such as sslmode)",
        value=mask_url(url),
        source="open_checkpoint_store",
    )


def _int_option(url: str, options: dict[str, str], name: str, default: int, least: int) -> int:
    raw = options.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise _bad(url, f"{name}={raw!r} is not a whole number") from None
    if value < least:
        raise _bad(url, f"{name}={value} must be at least {least}")
    return value


class PostgresCheckpointStore:
    """A :class:`~agentkit_core.CheckpointPort` on one PostgreSQL table.

    Build it with :meth:`from_url`. The first call opens an ``AsyncConnectionPool`` (autocommit
    connections: every statement is its own transaction, so a ``put`` that returned True is
    committed) and creates the table if it is missing. ``aclose`` closes the pool.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        display: str,
        table: str = "agentkit_checkpoints",
        pool_min: int = 1,
        pool_max: int = 4,
        pool_timeout: float = 30.0,
    ) -> None:
        if not _IDENTIFIER.fullmatch(table):
            raise ConfigError(
                f"checkpoint store {display!r}: table={table!r} is not a plain SQL identifier "
                "(letters, digits and underscores, at most 63, not starting with a digit)",
                value=table,
            )
        self.url = display
        self.table = table
        self._conninfo = conninfo
        self._pool_min, self._pool_max, self._pool_timeout = pool_min, pool_max, pool_timeout
        self._pool: AsyncConnectionPool[Any] | None = None
        self._opening = asyncio.Lock()
        self._closed = False
        # The identifier is validated above, so quoting it by hand is safe.
        cols = "run_id, namespace, version, status, state, metadata, created_at"
        t = f'"{table}"'
        self._create = (
            f"CREATE TABLE IF NOT EXISTS {t} (run_id text NOT NULL, namespace text NOT NULL, "
            "version bigint NOT NULL, status text NOT NULL, state text NOT NULL, "
            "metadata text NOT NULL, created_at timestamptz NOT NULL, "
            "PRIMARY KEY (run_id, namespace, version))"
        )
        self._insert = (
            f"INSERT INTO {t} ({cols}) VALUES (%s, %s, %s, %s, %s, %s, %s::timestamptz) "
            "ON CONFLICT (run_id, namespace, version) DO NOTHING"
        )
        where = "WHERE run_id = %s AND namespace = %s"
        self._latest = f"SELECT {cols} FROM {t} {where} ORDER BY version DESC LIMIT 1"
        self._get = f"SELECT {cols} FROM {t} {where} AND version = %s"
        self._versions = f"SELECT version FROM {t} {where} ORDER BY version"

    @classmethod
    def from_url(cls, url: str) -> PostgresCheckpointStore:
        """Parse a ``postgresql://`` URL; options it knows are taken out, the rest go to libpq.

        Raises :class:`~agentkit_core.ConfigError` for a URL libpq would refuse or a bad option;
        nothing connects yet.
        """
        if not isinstance(url, str):
            raise ConfigError(
                f"checkpoint store URL must be a string, got {mask_url(url)}", value=mask_url(url)
            )
        base, secrets, options, libpq = _split(url)
        pool_min = _int_option(url, options, "pool_min", 1, 0)
        pool_max = _int_option(url, options, "pool_max", max(4, pool_min), 1)
        if pool_min > pool_max:
            raise _bad(url, f"pool_min={pool_min} is larger than pool_max={pool_max}")
        pool_timeout = float(_int_option(url, options, "pool_timeout", 30, 1))
        extra: dict[str, Any] = dict(secrets)
        sync = options.get("synchronous_commit")
        if sync is not None:
            if sync not in SYNCHRONOUS_COMMIT:
                raise _bad(
                    url,
                    f"synchronous_commit={sync!r} is not one of {', '.join(SYNCHRONOUS_COMMIT)}",
                )
            given = dict(libpq).get("options", "")
            extra["options"] = f"{given} -c synchronous_commit={sync}".strip()
        if not any(k == "connect_timeout" for k, _ in libpq):
            extra["connect_timeout"] = 10
        if libpq:
            base = f"{base}?{urlencode(libpq)}"
        try:  # libpq parses no secret here: they are keywords, added after its parse
            conninfo = make_conninfo(base, **extra)
            ports = str(conninfo_to_dict(conninfo).get("port") or "")
        except psycopg.Error as exc:
            raise _bad(url, f"libpq refuses it ({_oneline(exc)})") from None
        if not all(p.isdigit() for p in ports.split(",") if p):
            raise _bad(url, "its port is not a number (write host:5432)")
        return cls(
            conninfo,
            display=mask_url(url),
            table=options.get("table", "agentkit_checkpoints"),
            pool_min=pool_min,
            pool_max=pool_max,
            pool_timeout=pool_timeout,
        )

    def _error(self, action: str, exc: BaseException) -> StorageError:
        return StorageError(
            f"PostgreSQL checkpoint store {self.url}: {action} failed: {_oneline(exc)}"
        )

    async def _ready(self) -> AsyncConnectionPool[Any]:
        """The open pool; the first caller creates the table and opens it."""
        async with self._opening:
            if self._closed:
                raise StorageError(
                    f"PostgreSQL checkpoint store {self.url} is closed; open a new one"
                )
            if self._pool is None:
                await self._create_table()
                pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
                    self._conninfo,
                    min_size=self._pool_min,
                    max_size=self._pool_max,
                    timeout=self._pool_timeout,
                    kwargs={"autocommit": True},
                    open=False,
                    name=f"agentkit-checkpoints {self.url}",
                )
                try:
                    await pool.open(wait=self._pool_min > 0, timeout=self._pool_timeout)
                except psycopg.Error as exc:
                    await pool.close()
                    raise self._error("opening the connection pool", exc) from exc
                self._pool = pool
        return self._pool

    async def _create_table(self) -> None:
        """Create the table once; an advisory lock keeps concurrent first uses from racing."""
        try:
            conn = await psycopg.AsyncConnection.connect(self._conninfo)
        except psycopg.Error as exc:
            raise StorageError(
                f"cannot connect to the PostgreSQL checkpoint store {self.url}: "
                f"{_oneline(exc)} — check that the server runs and the URL's host, port, "
                "user and database are right"
            ) from exc
        try:
            async with conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [self.table])
                await conn.execute(self._create)
        except psycopg.Error as exc:
            raise self._error(f"creating the table {self.table!r}", exc) from exc

    async def _execute(self, query: str, params: tuple[Any, ...], action: str) -> _Result:
        """Run one statement on a pooled connection; ``action`` is formatted with ``params``.

        A connection the server dropped (a restart, a failover, an idle timeout) is retried
        once. The idle connections dropped with it are stale too, so before the retry the pool
        checks them all and replaces the broken ones: the retry, and every call after it, gets
        a live connection, and a long-lived store outlives a server restart with no failed
        call. (getconn/putconn rather than ``pool.connection()``: autocommit leaves no
        transaction to end, and the context manager's bookkeeping is a tenth of a snapshot's
        CPU.)
        """
        pool = self._pool if self._pool is not None else await self._ready()
        for attempt in (1, 2):
            if attempt == 2:
                await pool.check()
            try:
                conn = await pool.getconn()
            except psycopg.Error as exc:
                raise self._error(action.format(*params), exc) from exc
            try:
                cur = await conn.execute(query, params)
                rows = await cur.fetchall() if cur.description else []
                return _Result(cur.rowcount, rows, retried=attempt > 1)
            except psycopg.OperationalError as exc:
                if attempt == 1 and conn.broken:
                    continue
                raise self._error(action.format(*params), exc) from exc
            except psycopg.Error as exc:
                raise self._error(action.format(*params), exc) from exc
            finally:
                await pool.putconn(conn)
        raise AssertionError("unreachable: the second attempt returns or raises")

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
            created_at=created_at.astimezone(timezone.utc).isoformat(),
        )

    async def put(self, record: StoredCheckpoint) -> bool:
        """Insert ``record``; False when the primary key already holds that version."""
        r = record
        params = (r.run_id, r.namespace, r.version, r.status, r.state, r.metadata, r.created_at)
        done = await self._execute(self._insert, params, "writing version {2} of run {0!r}")
        if done.rowcount == 1 or not done.retried:
            return done.rowcount == 1
        # The first try's connection dropped, perhaps after its commit: the version is ours
        # if what holds it is exactly our record.
        stored = await self.get(r.run_id, r.namespace, r.version)
        return stored is not None and _same(stored, r)

    async def latest(self, run_id: str, namespace: str) -> StoredCheckpoint | None:
        """The highest version's record, or None."""
        action = "reading the latest checkpoint of {0!r}"
        done = await self._execute(self._latest, (run_id, namespace), action)
        return self._record(done.rows[0]) if done.rows else None

    async def get(self, run_id: str, namespace: str, version: int) -> StoredCheckpoint | None:
        """That version's record, or None."""
        action = "reading version {2} of {0!r}"
        done = await self._execute(self._get, (run_id, namespace, version), action)
        return self._record(done.rows[0]) if done.rows else None

    async def versions(self, run_id: str, namespace: str) -> list[int]:
        """The stored versions, ascending."""
        action = "listing the versions of {0!r}"
        done = await self._execute(self._versions, (run_id, namespace), action)
        return [version for (version,) in done.rows]

    async def aclose(self) -> None:
        """Close the pool; later calls raise :class:`~agentkit_core.StorageError`."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    def __repr__(self) -> str:
        return f"PostgresCheckpointStore({self.url!r}, table={self.table!r})"
