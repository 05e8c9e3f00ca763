"""What is particular to the PostgreSQL store: URL options, errors, laziness, the stored text."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from agentkit_checkpoint_postgres import PostgresCheckpointStore
from agentkit_checkpoint_postgres import open_store
from pgcluster import PgCluster
from pgfixtures import kill_blocked_insert
from pgfixtures import password_urls

from agentkit_core import ConfigError
from agentkit_core import StorageError
from agentkit_core.plugin import StoredCheckpoint
from agentkit_core.plugin import open_checkpoint_store


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


async def test_both_schemes_open_this_store(pg_dsn: str, pm) -> None:
    for url in (pg_dsn, pg_dsn.replace("postgresql://", "postgres://", 1)):
        port = await open_checkpoint_store(url, manager=pm)
        try:
            assert isinstance(port, PostgresCheckpointStore)
            run = f"run-{uuid.uuid4().hex}"
            assert await port.put(record(run, 1))
            assert await port.versions(run, "agent") == [1]
        finally:
            await port.aclose()


async def test_the_table_is_created_on_first_use_and_keeps_the_exact_json(pg_dsn: str, pm) -> None:
    name = table()
    port = await open_checkpoint_store(f"{pg_dsn}?table={name}", manager=pm)
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
async def test_bad_urls_are_config_errors_without_the_password(url: str, message: str, pm) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        await open_checkpoint_store(url, manager=pm)
    assert "hunter2" not in str(info.value)
    assert "postgresql://u:***@h" in str(info.value)


async def test_a_password_with_reserved_characters_works(pg_cluster: PgCluster, pm) -> None:
    """Percent-encoded, as typed or in the query, the password reaches the server unchanged."""
    urls = await password_urls(pg_cluster)
    for url in urls:
        store = await open_checkpoint_store(url, manager=pm)
        try:
            assert await store.put(record(f"r-{uuid.uuid4().hex}", 1))
        finally:
            await store.aclose()
    store = await open_checkpoint_store(
        urls[0].replace("%40", "@@", 1), manager=pm
    )  # the server checks it
    with pytest.raises(StorageError, match="password authentication failed") as info:
        await store.latest("r", "agent")
    assert "p@@ss" not in str(info.value) and "***" in str(info.value)
    await store.aclose()


async def test_a_refused_connection_names_the_url_without_the_password(pm) -> None:
    with socket_nobody_listens_on() as free:
        port = await open_checkpoint_store(
            f"postgresql://postgres:hunter2@127.0.0.1:{free}/db", manager=pm
        )
        with pytest.raises(
            StorageError, match=r"cannot connect .*postgres:\*\*\*@127.0.0.1.*refused"
        ):
            await port.latest("r", "agent")
        with pytest.raises(StorageError, match=r"cannot connect"):  # not cached: tried again
            await port.put(record("r", 1))
        await port.aclose()


async def test_a_missing_database_is_a_storage_error(pg_dsn: str, pm) -> None:
    port = await open_checkpoint_store(pg_dsn.rsplit("/", 1)[0] + "/nosuchdb", manager=pm)
    with pytest.raises(StorageError, match=r'cannot connect .*database "nosuchdb" does not exist'):
        await port.versions("r", "agent")
    await port.aclose()


async def test_a_closed_store_refuses_calls(pg_dsn: str, pm) -> None:
    port = await open_checkpoint_store(pg_dsn, manager=pm)
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


async def test_an_open_store_outlives_a_server_restart(pg_cluster: PgCluster, pm) -> None:
    port = await open_checkpoint_store(f"{pg_cluster.dsn}?table={table()}", manager=pm)
    try:
        assert all(await asyncio.gather(*(port.put(record("r", v)) for v in (1, 2, 3, 4))))
        pg_cluster.restart()  # every pooled connection is now dead
        assert all(await asyncio.gather(*(port.put(record("r", v)) for v in (5, 6, 7, 8))))
        assert await port.versions("r", "agent") == [1, 2, 3, 4, 5, 6, 7, 8]
    finally:
        await port.aclose()


@pytest.mark.parametrize("how", ["crash", "fast"])
async def test_the_first_snapshot_after_a_restart_succeeds(
    pg_cluster: PgCluster, how: str, pm
) -> None:
    """A full pool of stale connections: the first put after the restart must not fail."""
    port = await open_checkpoint_store(
        f"{pg_cluster.dsn}?table={table()}&pool_min=4&pool_max=4", manager=pm
    )
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
    pg_dsn: str, meanwhile: str | None, written: bool, pm
) -> None:
    name = table()
    port = await open_checkpoint_store(f"{pg_dsn}?table={name}", manager=pm)
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
