"""A throwaway PostgreSQL cluster for the whole test session (``.ci/pgcluster.py``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / ".ci"))

from pgfixtures import pg_cluster  # noqa: F401 - fixtures, found by name
from pgfixtures import pg_dsn  # noqa: F401
