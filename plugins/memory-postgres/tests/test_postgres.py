"""What is particular to the PostgreSQL store: URLs, passwords, restarts, a write cut mid-way."""

from __future__ import annotations

import asyncio
import socket
import uuid

import psycopg
import pytest
from agentkit_memory_postgres import PostgresMemoryStore
from pgcluster import PgCluster
from pgfixtures import kill_blocked_insert

from agentkit_core import ConfigError
from agentkit_core import MemoryEntry
from agentkit_core import StorageError
from agentkit_core import open_memory
from agentkit_core.plugin import open_memory_store
from agentkit_core.testing._memory import entry


def table() -> str:
    return f"m_{uuid.uuid4().hex}"


async def sql(dsn: str, statement: str, *args: object) -> list[tuple[object, ...]]:
    """Run one statement behind agentkit's back, as a person or another tool would."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute(statement, args)
        return await cur.fetchall() if cur.description else []


async def test_both_schemes_and_the_table_made_on_first_use(pg_dsn: str, pm) -> None:
    name = table()
    for url in (f"{pg_dsn}?table={name}", f"{pg_dsn.replace('postgresql', 'postgres', 1)}"):
        store = await open_memory_store(url, manager=pm)
        assert isinstance(store, PostgresMemoryStore)
        await store.aclose()
    assert await sql(pg_dsn, "SELECT to_regclass(%s)", name) == [(None,)]  # nothing connected
    async with await open_memory(f"{pg_dsn}?table={name}", manager=pm) as memory:
        await memory.save("user", "k", "text", base=0)
    assert await sql(pg_dsn, f'SELECT title, version FROM "{name}"') == [("k", 1)]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://u:hunter2@h/db?pool_max=many", r"pool_max='many' is not a whole number"),
        ("postgresql://u:hunter2@h/db?table=drop;table", r"table='drop;table' is not a plain"),
    ],
)
async def test_bad_urls_are_config_errors_without_the_password(url: str, message: str, pm) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        await open_memory_store(url, manager=pm)
    assert "hunter2" not in str(info.value) and "memory store" in str(info.value)


async def test_a_refused_connection_names_the_url_without_the_password(pm) -> None:
    with socket.socket() as sock:  # bound, never listening: a connect is refused for sure
        sock.bind(("127.0.0.1", 0))
        url = f"postgresql://postgres:hunter2@127.0.0.1:{sock.getsockname()[1]}/db"
        memory = await open_memory(url, manager=pm)
        assert "hunter2" not in repr(memory)
        with pytest.raises(StorageError, match=r"cannot connect .*memory store .*postgres:\*\*\*@"):
            await memory.entries("user")
        await memory.aclose()


async def test_an_open_store_outlives_a_server_restart(pg_cluster: PgCluster, pm) -> None:
    async with await open_memory(f"{pg_cluster.dsn}?table={table()}", manager=pm) as memory:
        await asyncio.gather(*(memory.save("user", f"k{n}", "one", base=0) for n in range(4)))
        pg_cluster.restart()  # a power cut: every pooled connection is now dead
        done = await asyncio.gather(
            *(memory.save("user", f"k{n}", "two", base=1) for n in range(4))
        )
        assert [e.version for e in done] == [2, 2, 2, 2]
        assert [e.body for e in (await memory.entries("user")).entries] == ["two"] * 4


@pytest.mark.parametrize(
    ("meanwhile", "written"),
    [
        (None, True),  # the killed insert never committed: the retry writes it
        ("ours", True),  # it did commit before its connection died: the write is ours
        ("theirs", False),  # another writer created the entry first: the CAS is lost
    ],
)
async def test_a_write_whose_connection_dies_is_retried_without_breaking_the_cas(
    pg_dsn: str, meanwhile: str | None, written: bool, pm
) -> None:
    name = table()
    store = await open_memory_store(f"{pg_dsn}?table={name}", manager=pm)
    try:
        await store.entries("user")  # the table exists
        ours = MemoryEntry("user", "k", "ours", 1, "2026-12-03T07:00:00+00:00", "s1")
        theirs = MemoryEntry("user", "k", "theirs", 1, "2026-12-03T07:00:01+00:00", "s2")
        async with (
            await psycopg.AsyncConnection.connect(pg_dsn) as locker,
            await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as admin,
        ):
            await locker.execute(f'LOCK TABLE "{name}" IN EXCLUSIVE MODE')
            put = asyncio.create_task(store.put(ours, 0))
            await kill_blocked_insert(admin, name)
            if meanwhile is not None:
                e = ours if meanwhile == "ours" else theirs
                await locker.execute(
                    f'INSERT INTO "{name}" VALUES (%s, %s, %s, %s, %s, %s)',
                    (e.scope, e.title, e.body, e.version, e.updated_at, e.session),
                )
            await locker.commit()
            assert await put is written
        kept = theirs if meanwhile == "theirs" else ours
        assert await store.get("user", "k") == kept
    finally:
        await store.aclose()


async def test_scopes_and_ties_are_in_byte_order_whatever_the_collation(pg_dsn: str, pm) -> None:
    """A database whose collation is a language's (ICU en-US, as many hosted servers default
    to) sorts 'a-b' after 'a_c' and 'B' last; the store lists as Python sorts, as the others."""
    database = f"icu_{uuid.uuid4().hex[:12]}"
    await sql(
        pg_dsn,
        f"CREATE DATABASE {database} TEMPLATE template0 LOCALE_PROVIDER icu "
        "ICU_LOCALE 'en-US' LOCALE 'C'",
    )
    store = await open_memory_store(f"{pg_dsn.rsplit('/', 1)[0]}/{database}", manager=pm)
    try:
        written = ["a-b", "ab", "a_c", "B", "a"]
        for scope in written:
            assert await store.put(entry(scope, "k", "same words"), 0)
        assert await store.scopes() == sorted(written)
        hits = await store.query("same words", 10, None)  # equal ranks: by scope, then title
        assert [h.entry.scope for h in hits] == sorted(written)
    finally:
        await store.aclose()
        await sql(pg_dsn, f"DROP DATABASE {database}")
