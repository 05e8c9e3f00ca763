"""Recall@k of each memory store's query() over the labelled set (agentkit_core.testing).

    python benchmarks/memory/recall.py [postgresql://...]

SQLite and files stores in a temporary directory; PostgreSQL when a URL is given, else in a
throwaway cluster (.ci/pgcluster.py) when PostgreSQL is installed. Prints one row per store.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

from agentkit_core import PluginManager
from agentkit_core.plugin import open_memory_store
from agentkit_core.testing._memory_recall import KS
from agentkit_core.testing._memory_recall import QUERIES
from agentkit_core.testing._memory_recall import fill_labelled
from agentkit_core.testing._memory_recall import recall_at_k

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


async def measure(url: str) -> dict[int, float]:
    store = await open_memory_store(url, manager=PM)
    try:
        scopes = {s: f"r{uuid.uuid4().hex[:10]}" for s in ("project", "user")}
        await fill_labelled(store, scopes)
        return await recall_at_k(store, scopes)
    finally:
        await store.aclose()


def main() -> None:
    tmp = tempfile.mkdtemp()
    urls = {"sqlite (FTS5)": f"sqlite:///{tmp}/memory.db", "files (BM25)": f"file://{tmp}/m"}
    cluster = None
    if len(sys.argv) > 1:
        urls["postgres (tsvector)"] = sys.argv[1]
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / ".ci"))
        from pgcluster import PgCluster

        cluster = PgCluster()
        cluster.start()
        urls["postgres (tsvector)"] = cluster.dsn
    try:
        print(f"{len(QUERIES)} queries; " + " | ".join(f"recall@{k}" for k in KS))
        for name, url in urls.items():
            recall = asyncio.run(measure(url))
            print(f"{name}: " + " | ".join(f"{recall[k]:.2f}" for k in KS))
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
