"""What is particular to the PostgreSQL session store: URL, laziness, restarts, edited records."""

from __future__ import annotations

import asyncio
import socket
import uuid

import psycopg
import pytest
from agentkit_session_postgres import PostgresSessionStore
from pgcluster import PgCluster
from pgfixtures import kill_blocked_insert
from pgfixtures import password_urls

from agentkit_core import ConfigError
from agentkit_core import SessionConflict
from agentkit_core import StorageError
from agentkit_core import open_sessions
from agentkit_core.plugin import CorruptSessionItem
from agentkit_core.plugin import NewItem
from agentkit_core.plugin import SessionItem
from agentkit_core.plugin import open_session_store


def table() -> str:
    return f"s_{uuid.uuid4().hex}"


async def sql(dsn: str, statement: str, *args: object) -> list[tuple[object, ...]]:
    """Run one statement behind agentkit's back, as a person or another tool would."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute(statement, args)
        return await cur.fetchall() if cur.description else []


async def test_both_schemes_and_the_table_made_on_first_use(pg_dsn: str, pm) -> None:
    name = table()
    for url in (
        f"{pg_dsn}?table={name}",
        f"{pg_dsn.replace('postgresql', 'postgres', 1)}?table={name}",
    ):
        store = await open_session_store(url, manager=pm)
        assert isinstance(store, PostgresSessionStore) and store.table == name
        await store.aclose()
    assert await sql(pg_dsn, "SELECT to_regclass(%s)", name) == [(None,)]  # nothing connected
    async with await open_sessions(f"{pg_dsn}?table={name}", manager=pm) as sessions:
        head = await sessions.create()
        body = '{"b":  1, "a": [1.0, 2e3], "b": "dup"}'  # jsonb would reorder and dedupe
        item = SessionItem(
            head.session_id, "x1", head.id, "user", body, "2026-12-03T07:00:00.5+00:00"
        )
        assert await sessions.store.append([item])
        got = await sessions.item(head.session_id, "x1")
        assert got.body_json == body and got.created_at == "2026-12-03T07:00:00.500000+00:00"
    rows = await sql(pg_dsn, f'SELECT position, kind FROM "{name}" ORDER BY position')
    assert rows == [(1, "header"), (2, "user")]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://u:hunter2@h/db?pool_max=many", r"pool_max='many' is not a whole number"),
        ("postgresql://u:hunter2@h/db?table=drop;table", r"table='drop;table' is not a plain"),
        ("postgresql://u:hunter2@h/db?colour=blue", r"libpq refuses it .*colour"),
        ("postgresql://u:hunter2%zz@h/db", r"the password has a '%' not followed by two hex"),
        ("postgresql://u:hunter2@h:fifty/db", r"its port is not a number"),
    ],
)
async def test_bad_urls_are_config_errors_without_the_password(url: str, message: str, pm) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        await open_session_store(url, manager=pm)
    assert "hunter2" not in str(info.value) and "u:***@h" in str(info.value)
    assert "zz" not in str(info.value)
    assert "session store" in str(info.value)


async def test_a_refused_connection_names_the_url_without_the_password(pm) -> None:
    with socket.socket() as sock:  # bound, never listening: a connect is refused for sure
        sock.bind(("127.0.0.1", 0))
        url = f"postgresql://postgres:hunter2@127.0.0.1:{sock.getsockname()[1]}/db"
        sessions = await open_sessions(url, manager=pm)
        assert "hunter2" not in repr(sessions) and "hunter2" not in repr(sessions.store)
        with pytest.raises(
            StorageError, match=r"cannot connect .*session store .*postgres:\*\*\*@"
        ):
            await sessions.sessions()
        await sessions.aclose()


async def test_an_open_store_outlives_a_server_restart(pg_cluster: PgCluster, pm) -> None:
    async with await open_sessions(f"{pg_cluster.dsn}?table={table()}", manager=pm) as sessions:
        heads = await asyncio.gather(*(sessions.create() for _ in range(4)))
        pg_cluster.restart()  # every pooled connection is now dead
        done = await asyncio.gather(
            *(sessions.append(h.session_id, h.id, NewItem("user", {})) for h in heads)
        )
        for head, [item] in zip(heads, done, strict=True):
            assert [i.id for i in await sessions.path(head.session_id)] == [head.id, item.id]


@pytest.mark.parametrize("how", ["crash", "fast"])
async def test_the_first_append_after_a_restart_succeeds(
    pg_cluster: PgCluster, how: str, pm
) -> None:
    """A full pool of stale connections: each call's retry must not meet the next stale one."""
    url = f"{pg_cluster.dsn}?table={table()}&pool_min=4&pool_max=4"
    async with await open_sessions(url, manager=pm) as sessions:
        heads = await asyncio.gather(*(sessions.create() for _ in range(4)))
        await asyncio.sleep(0.2)  # every connection back in the pool, idle
        pg_cluster.restart(immediate=how == "crash")
        for head in heads:  # one at a time: each would meet the next stale connection
            [item] = await sessions.append(head.session_id, head.id, NewItem("user", {}))
            assert [i.id for i in await sessions.path(head.session_id)] == [head.id, item.id]


async def test_a_password_with_reserved_characters_works(pg_cluster: PgCluster, pm) -> None:
    """Percent-encoded, as typed or in the query, the password reaches the server unchanged."""
    urls = await password_urls(pg_cluster)
    for url in urls:
        async with await open_sessions(url, manager=pm) as s:
            head = await s.create()
            await s.append(head.session_id, head.id, NewItem("user", {}))
            assert len(await s.path(head.session_id)) == 2
            assert "p@ss" not in repr(s.store) and "***" in repr(s.store)
    sessions = await open_sessions(
        urls[0].replace("%40", "@@", 1), manager=pm
    )  # the server checks it
    with pytest.raises(StorageError, match="password authentication failed") as info:
        await sessions.sessions()
    assert "p@@ss" not in str(info.value)
    await sessions.aclose()


@pytest.mark.parametrize(
    ("meanwhile", "written"),
    [
        (None, True),  # the killed insert never committed: the retry writes it
        ("ours", True),  # it did commit before its connection died: the append is ours
        ("theirs", False),  # another writer appended after the same leaf: the CAS is lost
    ],
)
async def test_an_append_whose_connection_dies_is_retried_without_breaking_the_cas(
    pg_dsn: str, meanwhile: str | None, written: bool, pm
) -> None:
    name = table()
    async with await open_sessions(f"{pg_dsn}?table={name}", manager=pm) as sessions:
        head = await sessions.create()
        stamp = head.created_at

        def batch(who: str) -> list[SessionItem]:
            a = SessionItem(head.session_id, f"{who}-a", head.id, "user", "{}", stamp)
            return [a, SessionItem(head.session_id, f"{who}-b", a.id, "user", "{}", stamp)]

        ours, theirs = batch("ours"), batch("theirs")
        async with (
            await psycopg.AsyncConnection.connect(pg_dsn) as locker,
            await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as admin,
        ):
            await locker.execute(f'LOCK TABLE "{name}" IN EXCLUSIVE MODE')
            append = asyncio.create_task(sessions.store.append(ours))
            await kill_blocked_insert(admin, name)
            if meanwhile is not None:
                for position, item in enumerate(ours if meanwhile == "ours" else theirs, 2):
                    await locker.execute(
                        f'INSERT INTO "{name}" VALUES (%s, %s, %s, %s, %s, %s, %s)',
                        (item.session_id, position, item.id, item.parent, "user", "{}", stamp),
                    )
            await locker.commit()
            assert await append is written
        kept = ours if meanwhile != "theirs" else theirs
        path = await sessions.path(head.session_id)
        assert [i.id for i in path] == [head.id, *(i.id for i in kept)]
        if not written:
            with pytest.raises(SessionConflict, match="moved on"):
                await sessions.append(head.session_id, head.id, NewItem("user", {}))


async def test_a_corrupt_body_names_its_item_and_the_rest_stays_readable(pg_dsn: str, pm) -> None:
    name = table()
    async with await open_sessions(f"{pg_dsn}?table={name}", manager=pm) as sessions:
        head = await sessions.create()
        items = await sessions.append(
            head.session_id, head.id, [NewItem("user", {"n": n}) for n in range(3)]
        )
        await sql(pg_dsn, f'UPDATE "{name}" SET body = %s WHERE id = %s', "{nope", items[1].id)
        path = await sessions.path(head.session_id)
        with pytest.raises(CorruptSessionItem, match=rf"item '{items[1].id}' of session"):
            path[2].body  # noqa: B018
        assert [path[1].body, path[3].body] == [{"n": 0}, {"n": 2}]
        assert (await sessions.info(head.session_id)).count == 4


async def test_forks_edited_into_a_loop_end_the_walk(pg_dsn: str, pm) -> None:
    name = table()
    async with await open_sessions(f"{pg_dsn}?table={name}", manager=pm) as sessions:
        head = await sessions.create()
        [a] = await sessions.append(head.session_id, head.id, NewItem("user", {}))
        fork = await sessions.fork(head.session_id, at=a.id)
        [b] = await sessions.append(fork.session_id, fork.id, NewItem("user", {}))
        await sql(pg_dsn, f'UPDATE "{name}" SET parent = %s WHERE id = %s', b.id, head.id)
        with pytest.raises(CorruptSessionItem, match=r"cannot be followed .*or a loop"):
            await sessions.path(fork.session_id)


async def test_sessions_of_one_time_list_in_byte_order_whatever_the_collation(
    pg_dsn: str, pm
) -> None:
    """In a database whose collation is a language's (ICU en-US, as many hosted servers
    default to), 'a_c' sorts before 'a-b' and 'B' last; sessions of one time still list by id
    as Python sorts, as the other stores list them."""
    database = f"icu_{uuid.uuid4().hex[:12]}"
    async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as admin:
        await admin.execute(
            f"CREATE DATABASE {database} TEMPLATE template0 LOCALE_PROVIDER icu "
            "ICU_LOCALE 'en-US' LOCALE 'C'"
        )
    store = await open_session_store(f"{pg_dsn.rsplit('/', 1)[0]}/{database}", manager=pm)
    try:
        ids = ["a-b", "ab", "a_c", "B", "a"]
        stamp = "2026-12-03T07:00:00+00:00"
        for sid in ids:
            head = SessionItem(sid, uuid.uuid4().hex, None, "header", "{}", stamp)
            assert await store.create([head]) is True
        assert [info.id for info in await store.sessions()] == sorted(ids)
    finally:
        await store.aclose()
        async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as admin:
            await admin.execute(f"DROP DATABASE {database}")
