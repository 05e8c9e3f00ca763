"""A writer process for :class:`MemoryStoreProcessConformance` (run with ``python -m``).

``python -m agentkit_core.testing._memory_writer URL SCOPE COUNT`` opens the store, reads the
entry ``counter`` of SCOPE, prints ``ready`` and waits for a line on stdin. Then it adds one to
the counter COUNT times (0: until killed), each time reading the entry and writing its body
plus one, based on the version it read: a write that lost the compare-and-set prints ``lost``
and is tried again from a fresh read; one that won prints ``ok`` once ``put`` returned.
"""

from __future__ import annotations

import asyncio
import sys

from .._lookup import open_memory_store
from .._memory import MemoryEntry
from .._memory import utc_stamp
from .._plugins import PluginManager


async def main(url: str, scope: str, count: int) -> None:
    store = await open_memory_store(url, manager=PluginManager())
    try:
        await store.get(scope, "counter")
        print("ready", flush=True)
        sys.stdin.readline()
        done = 0
        while count == 0 or done < count:
            current = await store.get(scope, "counter")
            assert current is not None
            new = MemoryEntry(
                scope, "counter", str(int(current.body) + 1), current.version + 1, utc_stamp()
            )
            if await store.put(new, current.version):
                done += 1
                print("ok", flush=True)
            else:
                print("lost", flush=True)
    finally:
        await store.aclose()


if __name__ == "__main__":
    url, scope, count = sys.argv[1:4]
    asyncio.run(main(url, scope, int(count)))
