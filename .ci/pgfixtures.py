"""pytest fixtures for a throwaway PostgreSQL cluster, one per test session (``pgcluster.py``).

A PostgreSQL plugin's ``tests/conftest.py`` puts ``.ci`` on ``sys.path`` and imports them::

    from pgfixtures import pg_cluster, pg_dsn  # noqa: F401 - fixtures, found by name
"""

from __future__ import annotations

from collections.abc import Iterator

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
