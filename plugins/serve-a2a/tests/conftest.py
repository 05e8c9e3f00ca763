"""A throwaway PostgreSQL cluster for the test session (``.ci/pgcluster.py``), and two server
processes on it (``.ci/serveprocs.py``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / ".ci"))

from pgfixtures import pg_cluster  # noqa: F401 - fixtures, found by name
from pgfixtures import pg_dsn  # noqa: F401
from serveprocs import launch  # noqa: F401
