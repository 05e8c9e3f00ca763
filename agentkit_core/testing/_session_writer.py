"""A writer process for :class:`SessionStoreProcessConformance` (run with ``python -m``).

``python -m agentkit_core.testing._session_writer URL SESSION AFTER COUNT NAME`` opens the
store, reads the session's leaf (so it is connected), prints ``ready``, and waits for a line on
stdin. Then it appends COUNT batches of two items (0: until killed), the first after AFTER (or
after the leaf it reads, for ``-``) and each next one after the batch before. Each appended
batch prints ``ok I ID1 ID2`` once ``append`` returned; a lost compare-and-set prints
``conflict I LEAF`` and the writer reads the leaf again and retries the same batch. Bodies
are ``{"writer": NAME, "i": I, "half": "a"|"b", ...}``.
"""

from __future__ import annotations

import asyncio
import sys

from .._errors import SessionConflict
from .._lookup import open_sessions
from .._plugins import PluginManager
from .._sessions import NewItem


async def main(url: str, session_id: str, after: str, count: int, name: str) -> None:
    async with await open_sessions(url, manager=PluginManager()) as sessions:
        leaf = (await sessions.leaf(session_id)).id
        print("ready", flush=True)
        sys.stdin.readline()
        if after != "-":
            leaf = after
        i = 0
        while count == 0 or i < count:
            batch = [
                NewItem("user", {"writer": name, "i": i, "half": half, "pad": "ü✓ " * 300})
                for half in "ab"
            ]
            try:
                written = await sessions.append(session_id, leaf, batch)
            except SessionConflict as exc:
                print(f"conflict {i} {exc.leaf}", flush=True)
                leaf = (await sessions.leaf(session_id)).id
                continue
            leaf = written[-1].id
            print(f"ok {i} {written[0].id} {written[1].id}", flush=True)
            i += 1


if __name__ == "__main__":
    url, session_id, after, count, name = sys.argv[1:6]
    asyncio.run(main(url, session_id, after, int(count), name))
