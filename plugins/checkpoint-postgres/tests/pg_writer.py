"""A writer process for the crash and concurrency tests (run as a script, not collected).

``python pg_writer.py DSN RUN_ID COUNT NAME``: opens the store, prints ``ready``, waits for a
line on stdin, then takes COUNT snapshots of RUN_ID (0: until killed), printing each version
as soon as ``snapshot`` returned it.
"""

from __future__ import annotations

import asyncio
import sys

from agentkit_core import Checkpointer
from agentkit_core import PluginManager
from agentkit_core.plugin import open_checkpoint_store

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


async def main(dsn: str, run_id: str, count: int, name: str) -> None:
    checkpointer = Checkpointer(await open_checkpoint_store(dsn, manager=PM))
    try:
        await checkpointer.list_versions(run_id)  # connect before the start signal
        print("ready", flush=True)
        sys.stdin.readline()
        i = 0
        while count == 0 or i < count:
            state = {"writer": name, "i": i, "text": "ünïcode ✓ " * 200, "rows": list(range(50))}
            checkpoint = await checkpointer.snapshot(run_id, state, metadata={"writer": name})
            print(checkpoint.version, flush=True)
            i += 1
    finally:
        await checkpointer.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]))
