"""pytest fixtures for a throwaway PostgreSQL cluster, one per test session (``pgcluster.py``).

A PostgreSQL plugin's ``tests/conftest.py`` puts ``.ci`` on ``sys.path`` and imports them::

    from pgfixtures import pg_cluster, pg_dsn  # noqa: F401 - fixtures, found by name
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from pgcluster import ClusterError
from pgcluster import PgCluster


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
