"""pytest fixtures for a throwaway PostgreSQL cluster, one per test session (``pgcluster.py``).

A PostgreSQL plugin's ``tests/conftest.py`` puts ``.ci`` on ``sys.path`` and imports them::

    from pgfixtures import pg_cluster, pg_dsn  # noqa: F401 - fixtures, found by name
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from pgcluster import PASSWORD_ROLE
from pgcluster import ClusterError
from pgcluster import PgCluster
from psycopg import sql

#: A password with every character a URL reserves, a '%', a '+', a blank and a non-ASCII letter.
RESERVED_PASSWORD = "p@ss:w?rd#%+ é/&="


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """A running cluster; fails (never skips) when PostgreSQL is not installed."""
    try:
        cluster = PgCluster()
        cluster.start()
    except ClusterError as exc:
        pytest.fail(f"cannot start the throwaway PostgreSQL cluster: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def pg_dsn(pg_cluster: PgCluster) -> str:
    """``postgresql://postgres@127.0.0.1:<port>/agentkit`` of the session's cluster."""
    return pg_cluster.dsn


async def kill_blocked_insert(admin: Any, table: str) -> None:
    """Wait until an INSERT into ``table`` is blocked on a lock, then kill its backend.

    ``admin`` is an autocommit ``psycopg.AsyncConnection``. A test holds ``LOCK TABLE`` on
    another connection, starts a write, and calls this: the write's connection dies mid-flight,
    as in a server restart or a failover, while the test decides what the table holds after.
    """
    pid = None
    while pid is None:
        await asyncio.sleep(0.02)
        cur = await admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
            [f'INSERT INTO "{table}"%'],
        )
        pid = (await cur.fetchone() or [None])[0]
    await admin.execute("SELECT pg_terminate_backend(%s)", [pid])


async def password_urls(cluster: PgCluster, password: str = RESERVED_PASSWORD) -> list[str]:
    """Give ``PASSWORD_ROLE`` ``password``; URLs that log in as it, the password written each way.

    Percent-encoded in the userinfo; as typed (``@ : ? #`` and blanks left as they are, only
    ``%`` and ``/`` encoded); and as ``?password=``. The cluster checks this role's password,
    so a URL whose password arrives changed fails to log in.
    """
    async with await psycopg.AsyncConnection.connect(cluster.dsn, autocommit=True) as admin:
        cur = await admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [PASSWORD_ROLE])
        verb = "ALTER" if await cur.fetchone() else "CREATE"
        # PASSWORD takes no bind parameter; the literal is quoted by psycopg.
        literal = sql.Literal(password).as_string(admin)
        await admin.execute(f"{verb} ROLE {PASSWORD_ROLE} LOGIN SUPERUSER PASSWORD {literal}")
    where = f"127.0.0.1:{cluster.port}/{cluster.database}"
    encoded = quote(password, safe="")
    typed = password.replace("%", "%25").replace("/", "%2F")
    return [
        f"postgresql://{PASSWORD_ROLE}:{encoded}@{where}",
        f"postgresql://{PASSWORD_ROLE}:{typed}@{where}",
        f"postgresql://{PASSWORD_ROLE}@{where}?password={encoded}",
    ]
