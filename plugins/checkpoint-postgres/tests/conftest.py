"""A throwaway PostgreSQL cluster for the whole test session (see ``pgcluster.py``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

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
