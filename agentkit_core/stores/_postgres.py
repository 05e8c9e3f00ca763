"""One PostgreSQL database as the PostgreSQL store plugins use it (checkpoints, sessions).

What every such store needs and must get right once: its ``postgresql://`` URL (libpq's, plus
the store's own options), a connection pool opened on first use, its table created under an
advisory lock, one retry of a statement whose pooled connection the server dropped, and errors
that name the URL with its password masked.

The password never reaches libpq's URL parser: it is taken out of the URL (the userinfo's, or
``password=`` / ``sslpassword=`` in the query), percent-decoded here, and handed to libpq as a
keyword, so no libpq message can quote it.

psycopg 3 and psycopg-pool are the dependencies of the plugins that use this, not of core; they
are imported on first use (``from_url``), so core and the plugins' entry modules stay light.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any
from typing import NamedTuple
from typing import TypeVar
from urllib.parse import unquote
from urllib.parse import unquote_to_bytes

from .._errors import ConfigError
from .._errors import StorageError
from .._urls import mask_url
from ._text import unstorable

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

T = TypeVar("T")

SCHEMES = ("postgresql", "postgres")
SYNCHRONOUS_COMMIT = ("on", "off", "local", "remote_write", "remote_apply")
POSTGRES_OPTIONS = ("table", "pool_min", "pool_max", "pool_timeout", "synchronous_commit")
#: libpq parameters that hold secrets: taken out of the URL, decoded here, given as keywords.
SECRET_PARAMS = ("password", "sslpassword")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_NOT_A_PORT = "its port is not a number (write host:5432)"


def _oneline(exc: BaseException) -> str:
    """Libpq's multi-line message on one line."""
    return " ".join(str(exc).split())


def _psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool  # noqa: F401 - checked here, used by _ready
    except ImportError as exc:  # pragma: no cover - the plugins depend on both
        raise ImportError(
            f"a postgresql:// store needs psycopg 3 and psycopg-pool ({exc}); "
            "pip install 'psycopg[binary]>=3.1' 'psycopg-pool>=3.2'"
        ) from exc
    return psycopg


class PostgresPool:
    """A PostgreSQL database opened for a store: its connection pool and its table.

    Build it with :meth:`from_url`; nothing connects until the first :meth:`run`, which opens
    an ``AsyncConnectionPool`` of autocommit connections (each statement its own transaction,
    so a write that returned is committed) and runs the store's ``schema`` once. ``aclose``
    closes the pool; later calls raise :class:`StorageError`.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        display: str,
        what: str,
        table: str,
        schema: Callable[[str], tuple[str, ...]],
        pool_min: int = 1,
        pool_max: int = 4,
        pool_timeout: float = 30.0,
    ) -> None:
        if not _IDENTIFIER.fullmatch(table):
            raise ConfigError(
                f"{what} store {display!r}: table={table!r} is not a plain SQL identifier "
                "(letters, digits and underscores, at most 63, not starting with a digit)",
                value=table,
            )
        self.conninfo = conninfo
        self.url = display
        self.what = what
        self.table = table
        #: The table's name quoted for SQL (safe: the identifier is checked above).
        self.quoted = f'"{table}"'
        self._schema = schema(self.quoted)
        self._pool_min, self._pool_max, self._pool_timeout = pool_min, pool_max, pool_timeout
        self._pool: AsyncConnectionPool[Any] | None = None
        self._opening = asyncio.Lock()
        self._closed = False

    @classmethod
    def from_url(
        cls, url: str, *, what: str, table: str, schema: Callable[[str], tuple[str, ...]]
    ) -> PostgresPool:
        """Parse a ``postgresql://`` URL; options it knows are taken out, the rest go to libpq.

        ``what`` (``"checkpoint"``) names the store in errors; ``table`` is the default of the
        ``table=`` option; ``schema(quoted_table)`` gives the statements that create it. The
        password (userinfo, ``password=``, ``sslpassword=``) is decoded here and given to libpq
        as a keyword. A URL libpq would refuse, a bad percent-escape in a password, a port that
        is not a number or a bad option is a :class:`ConfigError` naming the URL masked, never
        the password; nothing connects yet.
        """
        psycopg = _psycopg()
        from psycopg.conninfo import conninfo_to_dict
        from psycopg.conninfo import make_conninfo

        if not isinstance(url, str):
            raise ConfigError(
                f"{what} store URL must be a string, got {mask_url(url)}", value=mask_url(url)
            )
        base, secrets, options = _take_apart(url, what)
        pool_min = _int_option(url, what, options, "pool_min", 1, 0)
        pool_max = _int_option(url, what, options, "pool_max", max(4, pool_min), 1)
        if pool_min > pool_max:
            raise _bad(url, what, f"pool_min={pool_min} is larger than pool_max={pool_max}")
        pool_timeout = float(_int_option(url, what, options, "pool_timeout", 30, 1))
        sync = options.get("synchronous_commit")
        if sync is not None and sync not in SYNCHRONOUS_COMMIT:
            raise _bad(
                url,
                what,
                f"synchronous_commit={sync!r} is not one of {', '.join(SYNCHRONOUS_COMMIT)}",
            )
        try:  # libpq parses no secret: they join as keywords after its parse
            params = conninfo_to_dict(base)
        except psycopg.Error as exc:
            raise _bad(url, what, f"libpq refuses it ({_oneline(exc)})") from None
        if not all(p.isdigit() for p in str(params.get("port") or "").split(",") if p):
            raise _bad(url, what, _NOT_A_PORT)  # ?port=... (a port in the host is checked)
        if sync is not None:
            given = params.get("options", "")
            params["options"] = f"{given} -c synchronous_commit={sync}".strip()
        params.setdefault("connect_timeout", 10)
        conninfo = make_conninfo("", **{**params, **secrets})
        return cls(
            conninfo,
            display=mask_url(url),
            what=what,
            table=options.get("table", table),
            schema=schema,
            pool_min=pool_min,
            pool_max=pool_max,
            pool_timeout=pool_timeout,
        )

    def error(self, action: str, exc: BaseException) -> StorageError:
        """The error for ``action`` failing with ``exc``."""
        return StorageError(
            f"PostgreSQL {self.what} store {self.url}: {action} failed: {_oneline(exc)}"
        )

    async def _ready(self) -> AsyncConnectionPool[Any]:
        """The open pool; the first caller creates the table and opens it."""
        psycopg = _psycopg()
        from psycopg_pool import AsyncConnectionPool

        async with self._opening:
            if self._closed:
                raise StorageError(
                    f"PostgreSQL {self.what} store {self.url} is closed; open a new one"
                )
            if self._pool is None:
                await self._create_table()
                pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
                    self.conninfo,
                    min_size=self._pool_min,
                    max_size=self._pool_max,
                    timeout=self._pool_timeout,
                    kwargs={"autocommit": True},
                    open=False,
                    name=f"agentkit-{self.what}s {self.url}",
                )
                try:
                    await pool.open(wait=self._pool_min > 0, timeout=self._pool_timeout)
                except psycopg.Error as exc:
                    await pool.close()
                    raise self.error("opening the connection pool", exc) from exc
                self._pool = pool
        return self._pool

    async def _create_table(self) -> None:
        """Create the table once; an advisory lock keeps concurrent first uses from racing."""
        psycopg = _psycopg()
        try:
            conn = await psycopg.AsyncConnection.connect(self.conninfo)
        except psycopg.Error as exc:
            raise StorageError(
                f"cannot connect to the PostgreSQL {self.what} store {self.url}: "
                f"{_oneline(exc)} — check that the server runs and the URL's host, port, "
                "user and database are right"
            ) from exc
        try:
            async with conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [self.table])
                for statement in self._schema:
                    await conn.execute(statement)
        except psycopg.Error as exc:
            raise self.error(f"creating the table {self.table!r}", exc) from exc

    async def run(self, fn: Callable[[AsyncConnection[Any], bool], Awaitable[T]], action: str) -> T:
        """``await fn(connection, retried)`` on a pooled connection.

        A connection the server dropped (a restart, a failover, an idle timeout) is retried
        once with ``retried=True``; a write must then find out whether its first try
        committed. The idle connections were dropped with it, so before the retry the pool
        checks them all and replaces the stale ones: the retry and every call after it run on
        a live connection, and the first call after a server restart succeeds. Errors name
        ``action``. (getconn/putconn rather than ``pool.connection()``: autocommit leaves no
        transaction to end, and the context manager's bookkeeping costs a tenth of a write.)
        """
        psycopg = _psycopg()
        pool = self._pool if self._pool is not None else await self._ready()
        for attempt in (1, 2):
            try:
                if attempt == 2:
                    await pool.check()
                conn = await pool.getconn()
            except psycopg.Error as exc:
                raise self.error(action, exc) from exc
            try:
                return await fn(conn, attempt > 1)
            except psycopg.OperationalError as exc:
                if attempt == 1 and conn.broken:
                    continue
                raise self.error(action, exc) from exc
            except psycopg.Error as exc:
                raise self.error(action, exc) from exc
            except UnicodeEncodeError as exc:  # a lone surrogate bound as text
                raise unstorable(exc, f"PostgreSQL {self.what} store {self.url}") from None
            finally:
                await pool.putconn(conn)
        raise AssertionError("unreachable: the second attempt returns or raises")

    @staticmethod
    def blob_schema(quoted: str) -> str:
        """The statement creating the blob table beside the quoted table ``quoted``.

        It holds content-part bytes by sha256 (``agentkit_core.content``); a store's ``schema``
        includes it.
        """
        return (
            f'CREATE TABLE IF NOT EXISTS {quoted[:-1]}_blobs" '
            "(sha256 text PRIMARY KEY, data bytea NOT NULL)"
        )

    async def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Write each blob to the blob table unless its sha256 is there (never rewritten)."""
        insert = (
            f'INSERT INTO {self.quoted[:-1]}_blobs" (sha256, data) VALUES (%s, %s) '
            "ON CONFLICT DO NOTHING"
        )

        async def write(conn: AsyncConnection[Any], retried: bool) -> None:
            async with conn.cursor() as cur:
                await cur.executemany(insert, list(blobs.items()))

        await self.run(write, "writing content blobs")

    async def get_blobs(self, hashes: Collection[str]) -> dict[str, bytes]:
        """The blobs of the blob table with these hashes (a missing one is left out)."""
        query = f'SELECT sha256, data FROM {self.quoted[:-1]}_blobs" WHERE sha256 = ANY(%s)'
        rows = await self.fetch(query, (list(hashes),), "reading content blobs")
        return {digest: bytes(data) for digest, data in rows}

    async def fetch(self, query: str, params: tuple[Any, ...], action: str) -> list[Any]:
        """The rows of one statement, through :meth:`run`."""

        async def rows(conn: AsyncConnection[Any], retried: bool) -> list[Any]:
            cur = await conn.execute(query, params)
            return await cur.fetchall()

        return await self.run(rows, action)

    async def aclose(self) -> None:
        """Close the pool; later calls raise :class:`StorageError`."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    def __repr__(self) -> str:
        return f"PostgresPool({self.url!r}, table={self.table!r})"


class _Parts(NamedTuple):
    """A store URL taken apart: what libpq parses, the secrets it gets as keywords, our options."""

    base: str
    secrets: dict[str, str]
    options: dict[str, str]


def _take_apart(url: str, what: str) -> _Parts:
    """Take the secrets and the store's options out of a ``postgresql://`` URL.

    The userinfo ends at the last ``@`` before the first ``/``, so a password may hold ``@``,
    ``:``, ``?`` and ``#`` as typed (a ``/`` must be ``%2F``, and an ``@`` after the host
    ``%40`` when a ``:`` comes before it). The rest of the query goes to
    libpq as written, for libpq to decode. Nothing here quotes the URL unmasked: a port is
    checked before libpq sees it, since a password typed without its host reads as the port.
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise _bad(url, what, "the scheme must be postgresql:// or postgres://")
    slash = rest.find("/")
    authority = rest if slash < 0 else rest[:slash]
    # With a ':' before the first '/', an '@' after it may end a password that holds a '/':
    # where the password ends would be a guess (mask_url guesses the last '@'), and libpq
    # could quote a piece of it as a host, a database or a query parameter.
    if slash >= 0 and ":" in authority and "@" in rest[slash:]:
        raise _bad(
            url,
            what,
            "it has an '@' after the first '/': write a '/' in the password as %2F, and an "
            "'@' after the host as %40",
        )
    secrets: dict[str, str] = {}
    at = authority.rfind("@")
    if at >= 0:
        user, colon, password = rest[:at].partition(":")
        if colon:
            secrets["password"] = _secret(url, what, password, "the password")
        rest = f"{user}{rest[at:]}" if user else rest[at + 1 :]
    location, _, query = rest.partition("?")
    for host in location.partition("/")[0].rpartition("@")[2].split(","):
        # As libpq reads it: the port follows the first ':' (after the ']' of an IPv6 address).
        port = host.partition("]")[2] if host.startswith("[") else host
        if port.partition(":")[2] and not port.partition(":")[2].isdigit():
            raise _bad(url, what, _NOT_A_PORT)
    options: dict[str, str] = {}
    libpq: list[str] = []
    for pair in filter(None, query.split("&")):
        raw_key, _, raw_value = pair.partition("=")
        key = unquote(raw_key)
        if key in SECRET_PARAMS:
            secrets[key] = _secret(url, what, raw_value, f"the {key} parameter")
        elif key in POSTGRES_OPTIONS:
            options[key] = unquote(raw_value)
        else:
            libpq.append(pair)
    base = f"postgresql://{location}"
    return _Parts(f"{base}?{'&'.join(libpq)}" if libpq else base, secrets, options)


def _secret(url: str, what: str, encoded: str, name: str) -> str:
    """``encoded`` percent-decoded strictly, as libpq would; an error names it, never quotes it.

    libpq refuses a NUL (``%00``) too: its C strings would silently cut the password there.
    """
    if _BAD_ESCAPE.search(encoded):
        raise _bad(url, what, f"{name} has a '%' not followed by two hex digits (write % as %25)")
    try:
        decoded = unquote_to_bytes(encoded).decode("utf-8")
    except UnicodeDecodeError:
        decoded = None  # raised below, outside the handler: the decode error quotes the bytes
    if decoded is None:
        raise _bad(url, what, f"{name} is not UTF-8 once percent-decoded")
    if "\x00" in decoded:
        raise _bad(url, what, f"{name} holds a NUL (%00), which libpq cannot pass on")
    return decoded


def _bad(url: str, what: str, problem: str) -> ConfigError:
    return ConfigError(
        f"{what} store URL {mask_url(url)!r}: {problem}; write it like "
        "'postgresql://user:password@host:5432/dbname?pool_max=4' (options: "
        f"{', '.join(POSTGRES_OPTIONS)}, plus any libpq parameter such as sslmode)",
        value=mask_url(url),
        source=f"postgresql {what} store",
    )


def _int_option(
    url: str, what: str, options: dict[str, str], name: str, default: int, least: int
) -> int:
    raw = options.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise _bad(url, what, f"{name}={raw!r} is not a whole number") from None
    if value < least:
        raise _bad(url, what, f"{name}={value} must be at least {least}")
    return value
