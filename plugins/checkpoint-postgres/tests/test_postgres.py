"""What is particular to the PostgreSQL store: URL options, errors, laziness, the stored text."""

from __future__ import annotations

import asyncio
import logging
import socket
import subprocess
import sys
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from agentkit_checkpoint_postgres import PostgresCheckpointStore
from agentkit_checkpoint_postgres import open_store
from pgcluster import PgCluster
from pgfixtures import kill_blocked_insert

from agentkit_core import AgentkitError
from agentkit_core import ConfigError
from agentkit_core import StorageError
from agentkit_core import StoredCheckpoint
from agentkit_core import open_checkpoint_store


def record(run_id: str, version: int, state: str = '{"v": 1}') -> StoredCheckpoint:
    return StoredCheckpoint(
        run_id=run_id,
        namespace="agent",
        version=version,
        status="running",
        state=state,
        metadata="{}",
        created_at="2026-12-03T07:00:00.123456+00:00",
    )


@contextmanager
def socket_nobody_listens_on() -> Iterator[int]:
    """A port bound but never listened on, so a connect to it is refused for sure."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def table() -> str:
    return f"t_{uuid.uuid4().hex}"


async def test_both_schemes_open_this_store(pg_dsn: str) -> None:
    for url in (pg_dsn, pg_dsn.replace("postgresql://", "postgres://", 1)):
        port = await open_checkpoint_store(url)
        try:
            assert isinstance(port, PostgresCheckpointStore)
            run = f"run-{uuid.uuid4().hex}"
            assert await port.put(record(run, 1))
            assert await port.versions(run, "agent") == [1]
        finally:
            await port.aclose()


async def test_the_table_is_created_on_first_use_and_keeps_the_exact_json(pg_dsn: str) -> None:
    name = table()
    port = await open_checkpoint_store(f"{pg_dsn}?table={name}")
    state = '{"b":  1, "a": [1.0, 2e3], "b": "dup"}'  # jsonb would reorder, dedupe, reformat
    try:
        async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
            cur = await conn.execute("SELECT to_regclass(%s)", [name])
            assert await cur.fetchone() == (None,)  # opening did not touch the database
        assert await port.put(record("r", 1, state))
        got = await port.get("r", "agent", 1)
        assert got is not None and got.state == state
        assert got.created_at == "2026-12-03T07:00:00.123456+00:00"
        async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
            cur = await conn.execute(f'SELECT state, version FROM "{name}"')
            assert await cur.fetchall() == [(state, 1)]
    finally:
        await port.aclose()


async def test_concurrent_first_uses_create_the_table_once(pg_dsn: str) -> None:
    url = f"{pg_dsn}?table={table()}&pool_min=0"
    ports = [open_store(url) for _ in range(5)]
    try:
        won = await asyncio.gather(*(p.put(record("r", i + 1)) for i, p in enumerate(ports)))
        assert won == [True] * 5
        assert await ports[0].versions("r", "agent") == [1, 2, 3, 4, 5]
    finally:
        for p in ports:
            await p.aclose()


async def test_synchronous_commit_option_reaches_the_session(pg_dsn: str) -> None:
    for value in ("off", "on"):
        store = open_store(f"{pg_dsn}?synchronous_commit={value}&application_name=ak")
        async with await psycopg.AsyncConnection.connect(store.pool.conninfo) as conn:
            cur = await conn.execute("SELECT current_setting('synchronous_commit')")
            assert await cur.fetchone() == (value,)
        await store.aclose()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://u:hunter2@h/db?pool_max=many", r"pool_max='many' is not a whole number"),
        ("postgresql://u:hunter2@h/db?pool_max=0", r"pool_max=0 must be at least 1"),
        ("postgresql://u:hunter2@h/db?pool_min=5&pool_max=2", r"pool_min=5 is larger"),
        ("postgresql://u:hunter2@h/db?synchronous_commit=maybe", r"'maybe' is not one of on, off"),
        ("postgresql://u:hunter2@h/db?table=drop;table", r"table='drop;table' is not a plain"),
        ("postgresql://u:hunter2@h/db?colour=blue", r"libpq refuses it .*colour"),
        ("postgresql://u:hunter2@h:fifty/db", r"its port is not a number"),
    ],
)
async def test_bad_urls_are_config_errors_without_the_password(url: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        await open_checkpoint_store(url)
    assert "hunter2" not in str(info.value)
    assert "postgresql://u:***@h" in str(info.value)


# Each URL carries the password "Hunter2Qq" (or pieces of it); none may show anywhere.
SECRET_SHAPES = [
    "postgresql://app:Hunter2%zzQq@127.0.0.1:{port}/db",  # a bad percent-escape
    "postgresql://app:Hunter2%Qq@127.0.0.1:{port}/db",
    "postgresql://app:Hunter2Qq%@127.0.0.1:{port}/db",
    "postgresql://app:Hunter2%ffQq@127.0.0.1:{port}/db",  # not UTF-8 once decoded
    "postgresql://app:Hunter2@Qq@127.0.0.1:{port}/db",  # an unencoded @
    "postgresql://app:Hunter2@@Qq@127.0.0.1:{port}/db",
    "postgresql://app:Hunter2/Qq@127.0.0.1:{port}/db",  # an unencoded /
    "postgresql://app:Hunter2?Qq@127.0.0.1:{port}/db",  # an unencoded ?
    "postgresql://app:Hunter2#Qq@127.0.0.1:{port}/db",  # an unencoded #
    "postgresql://app:Hunter2:Qq@127.0.0.1:{port}/db",  # a colon
    "postgresql://app:Hunter2Qq@[::1:{port}/db",  # a broken IPv6 host
    "postgresql://app:Hunter2Qq@127.0.0.1:{port},[::1/db",
    "postgresql://app:Hunter2Qq",  # no host: libpq would read the password as the port
    "postgresql://app:Hunter2%zzQq",
    "postgresql://app:Hunter2Qq/db",
    "postgresql://127.0.0.1:{port}/db?password=Hunter2%zzQq",
    "postgresql://127.0.0.1:{port}/db?password=Hunter2@Qq",
    "postgresql://127.0.0.1:{port}/db?user=app&password=Hunter2Qq&sslmode=disable",
    "postgresql://127.0.0.1:{port}/db?sslpassword=Hunter2%zzQq",
    "postgresql://app:Hunter2Qq@127.0.0.1:{port}/db?colour=blue",  # libpq refuses the option
    "postgresql://app:Hunter2Qq@127.0.0.1:{port}/db?sslmode=bogus",
    "postgresql://app:Hunter2Qq@127.0.0.1:{port}/db?pool_max=0",
    "postgresql://app:Hunter2Qq@127.0.0.1:{port}/db",  # well-formed: the connection is refused
    "postgresql://app:Hunter2@Qq@127.0.0.1:{port}/db?application_name=a@b",
]


def everything_said(exc: BaseException | None) -> str:
    """What a traceback prints of an error and its cause chain, and our errors' attributes."""
    said = []
    while exc is not None:
        said += [str(exc), repr(exc)]
        if isinstance(exc, AgentkitError):
            said.append(repr(vars(exc)))
        exc = exc.__cause__ or exc.__context__  # suppressed context included: nothing hides
    return "\n".join(said)


@pytest.mark.parametrize("shape", SECRET_SHAPES)
async def test_no_url_shape_shows_its_password_in_errors_reprs_or_logs(
    shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    said: list[str] = []
    with socket_nobody_listens_on() as free:
        url = shape.format(port=free)
        try:
            port = await open_checkpoint_store(url)
        except ConfigError as exc:
            said.append(everything_said(exc))
            assert "postgresql://" in str(exc)  # the URL is named, masked
        else:
            said.append(repr(port))
            with pytest.raises(StorageError) as info:
                await port.latest("r", "agent")
            said.append(everything_said(info.value))
            await port.aclose()
    said += [r.getMessage() for r in caplog.records]
    text = "\n".join(said)
    for piece in ("Hunter2", "Qq", "zz"):
        assert piece not in text, text


async def test_a_password_with_reserved_characters_works(pg_cluster: PgCluster) -> None:
    """Percent-encoded or not (where unambiguous), the password reaches the server."""
    password = "p@ss:w?rd#%+ é"
    async with await psycopg.AsyncConnection.connect(pg_cluster.dsn, autocommit=True) as admin:
        await admin.execute("DROP ROLE IF EXISTS weird")
        await admin.execute(f"CREATE ROLE weird LOGIN PASSWORD '{password}' SUPERUSER")
    host = f"127.0.0.1:{pg_cluster.port}"
    encoded = urllib.parse.quote(password, safe="")
    for url in (
        f"postgresql://weird:{encoded}@{host}/agentkit",
        f"postgresql://weird:p@ss:w?rd#%25+%20%C3%A9@{host}/agentkit",  # @ ? # : left as is
        f"postgresql://weird@{host}/agentkit?password={encoded}",
    ):
        store = await open_checkpoint_store(url)
        try:
            assert await store.latest(f"r-{uuid.uuid4().hex}", "agent") is None
        finally:
            await store.aclose()


async def test_a_refused_connection_names_the_url_without_the_password() -> None:
    with socket_nobody_listens_on() as free:
        port = await open_checkpoint_store(f"postgresql://postgres:hunter2@127.0.0.1:{free}/db")
        with pytest.raises(
            StorageError, match=r"cannot connect .*postgres:\*\*\*@127.0.0.1.*refused"
        ):
            await port.latest("r", "agent")
        with pytest.raises(StorageError, match=r"cannot connect"):  # not cached: tried again
            await port.put(record("r", 1))
        await port.aclose()


async def test_a_missing_database_is_a_storage_error(pg_dsn: str) -> None:
    port = await open_checkpoint_store(pg_dsn.rsplit("/", 1)[0] + "/nosuchdb")
    with pytest.raises(StorageError, match=r'cannot connect .*database "nosuchdb" does not exist'):
        await port.versions("r", "agent")
    await port.aclose()


async def test_a_closed_store_refuses_calls(pg_dsn: str) -> None:
    port = await open_checkpoint_store(pg_dsn)
    assert await port.latest("r", "agent") is None
    await port.aclose()
    with pytest.raises(StorageError, match=r"is closed; open a new one"):
        await port.put(record("r", 1))


def test_loading_the_plugin_does_not_import_psycopg() -> None:
    code = (
        "import sys, agentkit_checkpoint_postgres as p\n"
        "assert 'psycopg' not in sys.modules, 'psycopg imported at plugin load'\n"
        "p.open_store('postgresql://h/db')\n"
        "assert 'psycopg' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_an_open_store_outlives_a_server_restart(pg_cluster: PgCluster) -> None:
    port = await open_checkpoint_store(f"{pg_cluster.dsn}?table={table()}")
    try:
        assert all(await asyncio.gather(*(port.put(record("r", v)) for v in (1, 2, 3, 4))))
        pg_cluster.restart()  # every pooled connection is now dead
        assert all(await asyncio.gather(*(port.put(record("r", v)) for v in (5, 6, 7, 8))))
        assert await port.versions("r", "agent") == [1, 2, 3, 4, 5, 6, 7, 8]
    finally:
        await port.aclose()


@pytest.mark.parametrize("how", ["crash", "fast"])
async def test_the_first_snapshot_after_a_restart_succeeds(pg_cluster: PgCluster, how: str) -> None:
    """A full pool of stale connections: the first put after the restart must not fail."""
    port = await open_checkpoint_store(f"{pg_cluster.dsn}?table={table()}&pool_min=4&pool_max=4")
    try:
        assert all(await asyncio.gather(*(port.put(record("r", v)) for v in (1, 2, 3, 4))))
        await asyncio.sleep(0.2)  # every connection back in the pool, idle
        pg_cluster.restart(immediate=how == "crash")
        for v in (5, 6, 7, 8, 9):  # one at a time: each would meet the next stale connection
            assert await port.put(record("r", v))
        assert await port.latest("r", "agent") is not None
        assert await port.versions("r", "agent") == list(range(1, 10))
    finally:
        await port.aclose()


@pytest.mark.parametrize(
    ("meanwhile", "written"),
    [
        (None, True),  # the killed insert never committed: the retry writes it
        ("ours", True),  # it did commit before its connection died: the version is ours
        ("theirs", False),  # another writer took the version: the CAS is lost
    ],
)
async def test_an_insert_whose_connection_dies_is_retried_without_breaking_the_cas(
    pg_dsn: str, meanwhile: str | None, written: bool
) -> None:
    name = table()
    port = await open_checkpoint_store(f"{pg_dsn}?table={name}")
    ours = record("r", 1, '{"who": "ours"}')
    theirs = record("r", 1, '{"who": "theirs"}')
    try:
        await port.versions("r", "agent")  # creates the table
        async with (
            await psycopg.AsyncConnection.connect(pg_dsn) as locker,
            await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as admin,
        ):
            await locker.execute(f'LOCK TABLE "{name}" IN EXCLUSIVE MODE')
            put = asyncio.create_task(port.put(ours))
            await kill_blocked_insert(admin, name)
            if meanwhile is not None:
                r = ours if meanwhile == "ours" else theirs
                await locker.execute(
                    f'INSERT INTO "{name}" VALUES (%s, %s, %s, %s, %s, %s, %s)',
                    (r.run_id, r.namespace, r.version, r.status, r.state, r.metadata, r.created_at),
                )
            await locker.commit()
            assert await put is written
        got = await port.get("r", "agent", 1)
        assert got is not None and got.state == (theirs if meanwhile == "theirs" else ours).state
        assert await port.versions("r", "agent") == [1]
    finally:
        await port.aclose()
