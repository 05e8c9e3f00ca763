"""The ``memory://`` session store: sessions in dicts of this process.

Nothing survives the process, and each ``open_session_store("memory://")`` is a store of its
own; use it in tests and for hosts that need a record only while they run. Items are kept as
the same immutable text records a durable store keeps, so what a reader sees does not depend on
the backend; each read hands out a new item object, so a body one caller decoded and changed is
never what the next caller reads. Every method runs without an ``await`` inside, so each is
atomic in its event loop: that is the compare-and-set. ``append_now`` is the append as a plain
method, so a recorder's flush into this store makes no await.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from agentkit_core import StorageError
from agentkit_core.stores import store_plugin

if TYPE_CHECKING:  # the session records load when a store is used, not when plugins load
    from agentkit_core.plugin import SessionInfo
    from agentkit_core.plugin import SessionItem

__all__ = ["MemorySessionStore"]


class MemorySessionStore:
    """An in-process :class:`~agentkit_core.plugin.SessionStore`; each instance is its own store."""

    url = "memory://"

    def __init__(self) -> None:
        self._items: dict[str, SessionItem] = {}  # every item by id: a path costs its length
        self._sessions: dict[str, list[str]] = {}  # each session's item ids, oldest first
        self._blobs: dict[str, bytes] = {}  # content-part bytes by sha256, each held once
        self._closed = False

    def _open(self) -> None:
        if self._closed:
            raise StorageError("this memory:// session store is closed; open a new one")

    async def create(self, items: Sequence[SessionItem]) -> bool:
        """Add a session holding ``items``, unless its id is taken."""
        self._open()
        if items[0].session_id in self._sessions:
            return False
        self._sessions[items[0].session_id] = []  # a session with no item takes any first
        if self.append_now(items):
            return True
        del self._sessions[items[0].session_id]  # an id taken: no session is left half-made
        return False

    async def append(self, items: Sequence[SessionItem]) -> bool:
        """Add ``items`` if their first's parent is the session's newest item."""
        return self.append_now(items)

    def append_now(self, items: Sequence[SessionItem]) -> bool:
        """:meth:`append`, which never waits, as a plain method (``Sessions.append_now``).

        One method: a recorded turn appends twice. An item id already taken, here or
        earlier in the batch, refuses the batch, as the SQL stores' unique column does: kept, it
        would overwrite an item and could make a path that loops.
        """
        if self._closed:
            self._open()
        first = items[0]
        ids = self._sessions.get(first.session_id)
        if ids is None or (ids and ids[-1] != first.parent):  # [] only inside create: any first
            return False
        kept = self._items
        n = len(ids)
        for item in items:
            key = item.id
            if key in kept:  # taken: what this batch kept so far goes again
                for key in ids[n:]:
                    del kept[key]
                del ids[n:]
                return False
            kept[key] = item  # every read hands out a copy, never this object
            ids.append(key)
        return True

    async def item(self, item_id: str) -> SessionItem | None:
        """The item with that id, or None."""
        self._open()
        found = self._items.get(item_id)
        return None if found is None else replace(found)

    async def leaf(self, session_id: str) -> SessionItem | None:
        """The session's newest item, or None."""
        self._open()
        ids = self._sessions.get(session_id)
        return replace(self._items[ids[-1]]) if ids else None

    async def path(self, item_id: str) -> list[SessionItem]:
        """Root to ``item_id`` by parent pointers, one dict lookup per item."""
        self._open()
        path: list[SessionItem] = []
        item = self._items.get(item_id)
        while item is not None:
            path.append(replace(item))
            item = self._items.get(item.parent) if item.parent is not None else None
        path.reverse()
        return path

    async def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Keep each blob under its sha256; one already held stays as it is."""
        self._open()
        for digest, data in blobs.items():
            self._blobs.setdefault(digest, data)

    async def get_blobs(self, hashes: Collection[str]) -> dict[str, bytes]:
        """The blobs held of ``hashes``."""
        self._open()
        return {h: self._blobs[h] for h in hashes if h in self._blobs}

    async def info(self, session_id: str) -> SessionInfo | None:
        """The session's summary, or None."""
        from agentkit_core.plugin import SessionInfo

        self._open()
        ids = self._sessions.get(session_id)
        if not ids:
            return None
        header, leaf = self._items[ids[0]], self._items[ids[-1]]
        base = self._items.get(header.parent) if header.parent is not None else None
        return SessionInfo(
            id=session_id,
            header=replace(header),
            leaf_id=leaf.id,
            count=len(ids),
            updated_at=leaf.created_at,
            base_session=None if base is None else base.session_id,
        )

    async def sessions(self) -> list[SessionInfo]:
        """Every session's summary, oldest first."""
        self._open()
        found = [await self.info(sid) for sid in self._sessions]
        listed = [info for info in found if info is not None]
        return sorted(listed, key=lambda info: (info.header.created_at, info.id))

    async def aclose(self) -> None:
        """Drop every session; later calls raise :class:`~agentkit_core.StorageError`."""
        self._closed = True
        self._items.clear()
        self._sessions.clear()
        self._blobs.clear()

    def __repr__(self) -> str:
        return f"<MemorySessionStore {len(self._sessions)} sessions>"


def open_store(url: str) -> MemorySessionStore:
    """A fresh, empty store for ``memory://``; the rest of the URL is ignored."""
    return MemorySessionStore()


agentkit_register_session_stores = store_plugin(
    __name__, "session", schemes="memory", opener=open_store
).hook
