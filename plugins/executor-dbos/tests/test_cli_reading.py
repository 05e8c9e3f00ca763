"""``agentkit result``, ``cancel`` and ``approve`` read runs: against a database that does not
exist, or holds no runs, they fail naming it and create nothing (``submit`` and a worker do);
a run the database does not hold is named with the database, in one line."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from workers import agentkit

from agentkit_core.cli import main

READERS = [["result", "run-1"], ["cancel", "run-1"], ["approve", "run-1"]]


def databases(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        return {row[0] for row in conn.execute("SELECT datname FROM pg_database")}


def schemas(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        return {row[0] for row in conn.execute("SELECT nspname FROM pg_namespace")}


def on(dsn: str, database: str, password: str = "") -> str:
    """``dsn`` (postgres@host:port/db, no password) naming ``database``, with ``password``."""
    where = dsn.rsplit("/", 1)[0].replace(
        "postgres@", f"postgres:{password}@" if password else "postgres@"
    )
    return f"{where}/{database}"


@pytest.mark.parametrize("command", READERS, ids=lambda c: c[0])
def test_a_postgres_database_that_does_not_exist_is_named_and_not_created(
    pg_dsn: str, tmp_path: Path, command: list[str]
) -> None:
    absent = f"agentkit_absent_{uuid.uuid4().hex[:8]}"
    url = on(pg_dsn, absent, password="hunter2")  # the cluster trusts postgres: any password
    done = agentkit(tmp_path, command[0], "--executor", "dbos", "--database", url, *command[1:])
    assert done.returncode == 2, done.stderr
    assert "postgresql://postgres:***@" in done.stderr and "hunter2" not in done.stderr
    assert f"database {absent!r} does not exist" in done.stderr
    assert "nothing was submitted there" in done.stderr and "--database" in done.stderr
    assert "Traceback" not in done.stderr
    assert absent not in databases(pg_dsn)


def test_a_postgres_database_without_runs_gets_no_tables(pg_dsn: str, tmp_path: Path) -> None:
    empty = f"agentkit_empty_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{empty}"')
    url = on(pg_dsn, empty)
    done = agentkit(tmp_path, "result", "--executor", "dbos", "--database", url, "run-1")
    assert done.returncode == 2, done.stderr
    assert "holds no DBOS runs" in done.stderr and "nothing was submitted there" in done.stderr
    assert "dbos" not in schemas(url)


@pytest.mark.parametrize("command", READERS, ids=lambda c: c[0])
def test_a_sqlite_file_that_does_not_exist_is_named_and_not_created(
    tmp_path: Path, command: list[str]
) -> None:
    db = ["--executor", "dbos", "--database", "sqlite:///runs.sqlite"]
    done = agentkit(tmp_path, command[0], *db, *command[1:])
    assert done.returncode == 2, done.stderr
    assert "'sqlite:///runs.sqlite'" in done.stderr and "does not exist" in done.stderr
    assert not (tmp_path / "runs.sqlite").exists()


def test_a_sqlite_file_without_runs_is_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE notes (text TEXT)").connection.commit()
    before = path.read_bytes()
    done = agentkit(tmp_path, "result", "--database", f"sqlite:///{path}", "run-1")
    assert done.returncode == 2 and "holds no DBOS runs" in done.stderr, done.stderr
    assert path.read_bytes() == before


def test_a_database_with_runs_still_reads(tmp_path: Path) -> None:
    db = ["--executor", "dbos", "--database", f"sqlite:///{tmp_path / 'runs.sqlite'}"]
    assert agentkit(tmp_path, "submit", *db, "--id", "run-1", "a task").returncode == 0
    waiting = agentkit(tmp_path, "result", *db, "run-1")
    assert waiting.returncode == 3 and "did not finish" in waiting.stderr
    unknown = agentkit(tmp_path, "result", *db, "run-2")
    assert unknown.returncode == 2 and "no run 'run-2'" in unknown.stderr


@pytest.mark.parametrize(
    "command", [*READERS, ["result", "run-1", "--stream"]], ids=lambda c: " ".join(c[::2])
)
def test_an_unknown_run_is_one_line_naming_it_and_the_masked_database(
    pg_dsn: str, tmp_path: Path, command: list[str]
) -> None:
    held = f"agentkit_held_{uuid.uuid4().hex[:8]}"
    url = on(pg_dsn, held, password="hunter2")
    # submit makes the database and its tables; the run read is another
    assert (
        agentkit(tmp_path, "submit", "--database", url, "--id", "other", "a task").returncode == 0
    )
    done = agentkit(tmp_path, command[0], "--database", url, *command[1:])
    assert done.returncode == 2, done.stderr
    shown = url.replace(":hunter2@", ":***@")
    assert done.stderr == (
        f"agentkit: error: no run 'run-1' in {shown}; check the run id (agentkit submit "
        "printed it) and that this is the database it was submitted to\n"
    )


#: Database names as PostgreSQL takes them (quoted), URL-encoded in the URL.
names = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=20
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=names, command=st.sampled_from(READERS))
def test_reading_never_creates_a_database(
    pg_dsn: str, tmp_path: Path, name: str, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from urllib.parse import quote

    before = databases(pg_dsn)
    url = on(pg_dsn, quote(f"agentkit_{name}", safe=""))
    code = main([command[0], "--database", url, *command[1:]])
    assert code == 2, capsys.readouterr().err
    assert databases(pg_dsn) == before


def test_a_run_id_no_database_can_hold_is_named_on_every_command(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    assert agentkit(tmp_path, "submit", "--database", url, "--id", "r1", "a task").returncode == 0
    bad = "run\udcff"  # undecodable bytes in a shell's argument (b"run\xff")
    for command in (["submit", "--id", bad, "a task"], *[[c[0], bad] for c in READERS]):
        done = agentkit(tmp_path, command[0], "--database", url, *command[1:])
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("agentkit: error: run id 'run\\udcff' holds a lone surrogate")
        assert done.stderr.count("\n") == 1 and "unexpected" not in done.stderr


#: Run ids of any text, lone surrogates and control characters included.
run_ids = st.text(st.characters(exclude_categories=()), max_size=12)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(run_id=run_ids)
def test_any_run_id_is_a_run_an_unknown_run_or_refused_by_name(tmp_path: Path, run_id: str) -> None:
    import asyncio

    from agentkit_executor_dbos import DBOSExecutor
    from agentkit_executor_dbos import RunNotFound

    from agentkit_core import ConfigError

    executor = DBOSExecutor(database=f"sqlite:///{tmp_path / 'ids.sqlite'}")
    surrogate = any("\ud800" <= ch <= "\udfff" for ch in run_id)
    fine = bool(run_id.strip()) and not surrogate

    async def probe() -> None:
        try:
            await executor.handle(run_id).record()
        except RunNotFound as missing:  # nothing was submitted: every fine id is unknown
            assert fine and missing.run_id == run_id
        except ConfigError as refused:
            assert not fine and repr(run_id) in str(refused)
        else:
            pytest.fail(f"run {run_id!r} found in an empty database")

    try:
        asyncio.run(probe())
    finally:
        executor.close()
