import asyncio
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest
from agentkit_checkpoint_sqlite import SqliteCheckpointStore

from agentkit_core import ConfigError
from agentkit_core import StorageError
from agentkit_core.plugin import StoredCheckpoint
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.stores import parse_sqlite_url

REC = StoredCheckpoint("r", "agent", 1, "running", '{"a": 1}', "{}", "2026-12-03T07:00:00+00:00")


def test_url_paths_follow_sqlalchemy() -> None:
    assert parse_sqlite_url("sqlite:///runs.db", what="checkpoint") == (
        Path("runs.db"),
        {"synchronous": "full", "busy_timeout": "30000", "writes": "inline"},
    )
    url = "sqlite:////var/x/runs.db?synchronous=NORMAL&busy_timeout=5&writes=thread"
    path, options = parse_sqlite_url(url, what="checkpoint")
    assert path == Path("/var/x/runs.db")
    assert options == {"synchronous": "normal", "busy_timeout": "5", "writes": "thread"}


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite://runs.db", r"not a sqlite checkpoint URL; write sqlite:///"),
        ("sqlite:///", r"names no database file"),
        ("sqlite:///:memory:", r"names no database file.*memory://"),
        ("sqlite:///r.db?journal=wal", r"unknown option 'journal'.*synchronous, busy_timeout"),
        ("sqlite:///r.db?synchronous=fast", r"synchronous='fast'.*not one of off, normal, full"),
        ("sqlite:///r.db?busy_timeout=1s", r"busy_timeout='1s'.*whole milliseconds"),
        ("sqlite:///r.db?writes=async", r"writes='async'.*not one of thread, inline"),
    ],
)
async def test_bad_urls_are_refused(url: str, message: str, pm) -> None:
    with pytest.raises(ConfigError, match=message):
        await open_checkpoint_store(url, manager=pm)


async def test_a_missing_directory_is_a_storage_error(tmp_path: Path, pm) -> None:
    with pytest.raises(StorageError, match=r"cannot open the SQLite checkpoint database .*nope"):
        await open_checkpoint_store(f"sqlite:///{tmp_path}/nope/runs.db", manager=pm)


async def test_wal_and_the_synchronous_setting_are_applied(tmp_path: Path, pm) -> None:
    for option, level in (("", 2), ("?synchronous=normal", 1), ("?synchronous=extra", 3)):
        store = await open_checkpoint_store(f"sqlite:///{tmp_path}/runs.db{option}", manager=pm)
        assert isinstance(store, SqliteCheckpointStore)
        pragmas = await store.db.read(
            lambda conn: [
                conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("synchronous", "journal_mode")
            ]
        )
        assert pragmas == [level, "wal"]
        await store.aclose()


async def test_records_persist_across_opens_and_the_key_is_the_database_s(
    tmp_path: Path, pm
) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    store = await open_checkpoint_store(url, manager=pm)
    assert await store.put(REC)
    await store.aclose()
    # another writer, outside agentkit
    with closing(sqlite3.connect(tmp_path / "runs.db")) as conn, conn:
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            conn.execute(
                "INSERT INTO agentkit_checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)",
                ("r", "agent", 1, "done", "{}", "{}", "t"),
            )
    conn.close()
    again = await open_checkpoint_store(url, manager=pm)
    assert await again.get("r", "agent", 1) == REC
    assert await again.put(REC) is False
    await again.aclose()


async def test_a_closed_store_says_so(tmp_path: Path, pm) -> None:
    store = await open_checkpoint_store(f"sqlite:///{tmp_path}/runs.db", manager=pm)
    await store.aclose()
    with pytest.raises(StorageError, match=r"SQLite checkpoint store .*runs.db' is closed"):
        await store.latest("r", "agent")


async def test_an_inline_put_never_waits_for_a_lock_on_the_event_loop(tmp_path: Path, pm) -> None:
    store = await open_checkpoint_store(
        f"sqlite:///{tmp_path}/runs.db?writes=inline&busy_timeout=10000", manager=pm
    )
    assert await store.put(REC)  # the database is free: written on this thread
    other = sqlite3.connect(tmp_path / "runs.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    put = asyncio.ensure_future(store.put(replace(REC, version=2)))
    await asyncio.sleep(0.2)  # the loop runs: the put waits on the worker thread
    assert not put.done()
    other.execute("COMMIT")
    other.close()
    assert await asyncio.wait_for(put, 10) is True
    assert await store.put(replace(REC, version=2)) is False
    assert await store.versions("r", "agent") == [1, 2]
    await store.aclose()


@pytest.mark.parametrize("writes", ["inline", "thread"])
async def test_reads_answer_from_what_is_committed_while_another_writer_holds_the_lock(
    tmp_path: Path, writes: str, pm
) -> None:
    store = await open_checkpoint_store(f"sqlite:///{tmp_path}/runs.db?writes={writes}", manager=pm)
    assert await store.put(REC)
    other = sqlite3.connect(tmp_path / "runs.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute(
        "INSERT INTO agentkit_checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)",
        ("r", "agent", 2, "running", "{}", "{}", REC.created_at),
    )
    # point reads (inline when the store's own connection is free) and a scan (the worker)
    latest, got, versions = await asyncio.wait_for(
        asyncio.gather(
            store.latest("r", "agent"), store.get("r", "agent", 2), store.versions("r", "agent")
        ),
        5,
    )
    assert (latest, got, versions) == (REC, None, [1])
    other.execute("COMMIT")
    other.close()
    assert await store.latest("r", "agent") == replace(REC, version=2, state="{}")
    await store.aclose()


async def test_a_put_held_past_busy_timeout_fails_writes_nothing_and_never_holds_the_loop(
    tmp_path: Path,
    pm,
) -> None:
    store = await open_checkpoint_store(
        f"sqlite:///{tmp_path}/runs.db?busy_timeout=300", manager=pm
    )
    other = sqlite3.connect(tmp_path / "runs.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock past the timeout
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.ensure_future(tick())
    with pytest.raises(StorageError, match=r"runs.db' failed: database is locked"):
        await store.put(REC)
    ticker.cancel()
    assert ticks >= 10  # the event loop ran while the put waited
    other.execute("COMMIT")
    other.close()
    assert await store.versions("r", "agent") == []
    assert await store.put(REC)  # the lock is free: written
    await store.aclose()


@pytest.mark.parametrize(
    "url",
    [
        "sqlite://app:Hunter2Qq@/runs.db",
        "sqlite://app:Hunter2%zzQq@host/runs.db",
        "sqlite:///runs.db?password=Hunter2Qq",
        "sqlite:///:memory:?token=Hunter2Qq",
    ],
)
async def test_bad_urls_never_show_a_password(url: str, pm) -> None:
    with pytest.raises(ConfigError) as info:
        await open_checkpoint_store(url, manager=pm)
    said = f"{info.value} {info.value.value!r}"
    assert "Hunter2" not in said and "Qq" not in said and "***" in said


@pytest.mark.parametrize("writes", ["inline", "thread"])
@pytest.mark.parametrize("how", ["deleted", "replaced", "moved"])
async def test_a_database_file_gone_while_open_fails_every_later_call(
    tmp_path: Path, writes: str, how: str, pm
) -> None:
    db = tmp_path / "runs.db"
    store = await open_checkpoint_store(f"sqlite:///{db}?writes={writes}", manager=pm)
    assert await store.put(REC)
    for suffix in ("", "-wal", "-shm"):
        if how == "moved":
            Path(f"{db}{suffix}").rename(tmp_path / f"elsewhere.db{suffix}")
        else:
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    if how == "replaced":  # a fresh, empty database where the old one was
        sqlite3.connect(db).close()
    what = "replaced by another file" if how == "replaced" else "deleted or moved"
    gone = rf"SQLite checkpoint database .*runs\.db' was {what} while the store was open"
    with pytest.raises(StorageError, match=gone):
        await store.put(replace(REC, version=2))
    with pytest.raises(StorageError, match=gone):
        await store.latest("r", "agent")
    with pytest.raises(StorageError, match=gone):
        await store.versions("r", "agent")
    await store.aclose()
