"""What is particular to the SQLite session store: its table, bad URLs, records edited on disk."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from agentkit_session_sqlite import SqliteSessionStore

from agentkit_core import ConfigError
from agentkit_core import StorageError
from agentkit_core import open_sessions
from agentkit_core.plugin import CorruptSessionItem
from agentkit_core.plugin import NewItem
from agentkit_core.plugin import open_session_store

TABLE = "agentkit_session_items"


def edit(path: Path, statement: str, *args: object) -> None:
    """Change the file behind agentkit's back, as a person or a broken tool would."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(statement, args)
    conn.close()


async def test_the_table_and_its_keys_are_the_database_s(tmp_path: Path, pm) -> None:
    url = f"sqlite:///{tmp_path}/sessions.db"
    async with await open_sessions(url, manager=pm) as sessions:
        assert isinstance(sessions.store, SqliteSessionStore)
        assert sessions.store.url == url
        head = await sessions.create()
        await sessions.append(head.session_id, head.id, NewItem("user", {"text": "hi"}))
    conn = sqlite3.connect(tmp_path / "sessions.db")
    rows = conn.execute(f"SELECT session_id, position, kind FROM {TABLE} ORDER BY position")
    assert rows.fetchall() == [(head.session_id, 1, "header"), (head.session_id, 2, "user")]
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):  # another writer, outside agentkit
        conn.execute(
            f"INSERT INTO {TABLE} VALUES (?, 2, 'x', ?, 'user', '{{}}', 't')",
            (head.session_id, head.id),
        )
    conn.close()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite://s.db", r"not a sqlite session URL; write sqlite:///relative/sessions.db"),
        ("sqlite:///:memory:", r"names no database file.*memory://"),
        ("sqlite:///s.db?journal=wal", r"unknown option 'journal'"),
        ("sqlite:///s.db?writes=async", r"writes='async'.*not one of thread, inline"),
    ],
)
async def test_bad_urls_are_refused(url: str, message: str, pm) -> None:
    with pytest.raises(ConfigError, match=message):
        await open_session_store(url, manager=pm)


async def test_a_missing_directory_is_a_storage_error(tmp_path: Path, pm) -> None:
    with pytest.raises(StorageError, match=r"cannot open the SQLite session database .*nope"):
        await open_session_store(f"sqlite:///{tmp_path}/nope/sessions.db", manager=pm)


async def test_a_corrupt_body_names_its_item_and_the_rest_stays_readable(
    tmp_path: Path, pm
) -> None:
    url = f"sqlite:///{tmp_path}/sessions.db"
    async with await open_sessions(url, manager=pm) as sessions:
        head = await sessions.create({"model": "m"})
        items = await sessions.append(
            head.session_id, head.id, [NewItem("user", {"n": n}) for n in range(3)]
        )
        other = await sessions.create()
    edit(
        tmp_path / "sessions.db",
        f"UPDATE {TABLE} SET body = ? WHERE id = ?",
        '{"n": 1',
        items[1].id,
    )
    async with await open_sessions(url, manager=pm) as sessions:
        path = await sessions.path(head.session_id)
        assert [i.id for i in path] == [head.id, *(i.id for i in items)]
        with pytest.raises(CorruptSessionItem) as info:
            path[2].body  # noqa: B018
        assert (info.value.session_id, info.value.item_id) == (head.session_id, items[1].id)
        assert f"item {items[1].id!r} of session {head.session_id!r} is corrupt" in str(info.value)
        assert [path[1].body, path[3].body] == [{"n": 0}, {"n": 2}]
        assert {s.id for s in await sessions.sessions()} >= {head.session_id, other.session_id}
        assert (await sessions.info(head.session_id)).count == 4
        [more] = await sessions.append(head.session_id, items[-1].id, NewItem("user", {"n": 3}))
        fork = await sessions.fork(head.session_id, at=items[0].id)
        assert (await sessions.leaf(head.session_id)).id == more.id
        assert len(await sessions.path(fork.session_id)) == 3


async def test_a_missing_record_is_named_not_skipped(tmp_path: Path, pm) -> None:
    url = f"sqlite:///{tmp_path}/sessions.db"
    async with await open_sessions(url, manager=pm) as sessions:
        head = await sessions.create()
        items = await sessions.append(
            head.session_id, head.id, [NewItem("user", {"n": n}) for n in range(3)]
        )
    edit(tmp_path / "sessions.db", f"DELETE FROM {TABLE} WHERE id = ?", items[1].id)
    async with await open_sessions(url, manager=pm) as sessions:
        with pytest.raises(CorruptSessionItem, match=rf"its parent '{items[1].id}' is not"):
            await sessions.path(head.session_id)
        assert [i.id for i in await sessions.path(head.session_id, to=items[0].id)] == [
            head.id,
            items[0].id,
        ]


async def test_forks_edited_into_a_loop_end_the_walk(tmp_path: Path, pm) -> None:
    url = f"sqlite:///{tmp_path}/sessions.db"
    async with await open_sessions(url, manager=pm) as sessions:
        head = await sessions.create()
        [a] = await sessions.append(head.session_id, head.id, NewItem("user", {}))
        fork = await sessions.fork(head.session_id, at=a.id)
        [b] = await sessions.append(fork.session_id, fork.id, NewItem("user", {}))
    # the root's header now claims to be forked from the fork's item: a loop of two sessions
    edit(tmp_path / "sessions.db", f"UPDATE {TABLE} SET parent = ? WHERE id = ?", b.id, head.id)
    async with await open_sessions(url, manager=pm) as sessions:
        with pytest.raises(CorruptSessionItem, match=r"cannot be followed .*or a loop"):
            await sessions.path(fork.session_id)
