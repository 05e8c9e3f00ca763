"""Checkpoints: the store port a plugin implements, and opening a store from a URL.

The swappable seam is :class:`CheckpointPort`, a small async compare-and-set store of
:class:`StoredCheckpoint` records keyed by ``(run_id, namespace, version)``. Stores are found by
URL scheme (``memory://``, ``sqlite:///runs.db``, ``postgresql://...``) among the installed
``checkpoint_stores`` registrations.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Final
from typing import Protocol
from typing import runtime_checkable
from urllib.parse import urlsplit

from ._errors import ConfigError
from ._errors import PluginError
from ._errors import UnknownNameError

RUNNING: Final = "running"
"""The engine is in motion; a crash resumes from here."""
SUSPENDED: Final = "suspended"
"""Waiting on a person (an approval); ``resume`` continues once they answered."""
DONE: Final = "done"
"""The run finished; ``resume`` refuses it unless asked for terminal checkpoints."""
FAILED: Final = "failed"
"""The run raised; terminal like DONE."""
STATUSES: Final = (RUNNING, SUSPENDED, DONE, FAILED)
TERMINAL: Final = (DONE, FAILED)


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    """One record as a store keeps it: text only, so every backend stores the same thing.

    ``state`` and ``metadata`` are JSON text (the encoder's output); ``created_at`` is an
    ISO-8601 UTC timestamp. A store must hand back records equal to what was put (JSON may be
    re-serialized, e.g. by a ``jsonb`` column, but must decode to the same value).
    """

    run_id: str
    namespace: str
    version: int
    status: str
    state: str
    metadata: str
    created_at: str


@runtime_checkable
class CheckpointPort(Protocol):
    """What a checkpoint store implements; every method is async.

    The store owns durability and the uniqueness of ``(run_id, namespace, version)``; the
    :class:`Checkpointer` above it owns version numbering, clocks, encoding and copies. Run
    ``agentkit_core.testing.CheckpointPortConformance`` against an implementation.
    """

    async def put(self, record: StoredCheckpoint) -> bool:
        """Write ``record`` only if its version is free: True when written.

        False, writing nothing, when ``(run_id, namespace, version)`` is already taken — a
        compare-and-set, atomic even against other processes writing the same store.
        """
        ...

    async def latest(self, run_id: str, namespace: str) -> StoredCheckpoint | None:
        """The record with the highest version of that run and namespace, or None."""
        ...

    async def get(self, run_id: str, namespace: str, version: int) -> StoredCheckpoint | None:
        """The record of exactly that version, or None."""
        ...

    async def versions(self, run_id: str, namespace: str) -> list[int]:
        """Every stored version of that run and namespace, ascending."""
        ...

    async def aclose(self) -> None:
        """Release connections and threads; closing twice is harmless."""
        ...


async def open_checkpoint_store(url: str) -> CheckpointPort:
    """Open the store for ``url`` through the plugin that registered its scheme.

    ``memory://`` (checkpoint-memory), ``sqlite:///path/runs.db`` (checkpoint-sqlite),
    ``postgresql://user@host/db`` (checkpoint-postgres). An unknown scheme raises
    :class:`UnknownNameError` naming the installed ones.
    """
    from ._plugins import get_plugin_manager

    scheme = urlsplit(url).scheme if isinstance(url, str) else ""
    if not scheme:
        raise ConfigError(
            f"checkpoint store URL {url!r} has no scheme; write it like 'memory://', "
            "'sqlite:///runs.db' or 'postgresql://user@host/db'",
            value=url,
            source="open_checkpoint_store",
        )
    pm = get_plugin_manager()
    try:
        reg = pm.lookup("checkpoint_stores", scheme)
    except UnknownNameError as exc:
        raise UnknownNameError(
            f"no checkpoint store handles the scheme {scheme!r} of {url!r}; installed schemes: "
            f"{', '.join(exc.available) or 'none'} (pip install agentkit-checkpoint-<store>)",
            name=scheme,
            available=exc.available,
        ) from None
    port = reg.value(url)
    if inspect.isawaitable(port):
        port = await port
    if not isinstance(port, CheckpointPort):
        raise PluginError(
            f"plugin {reg.plugin!r} opened {url!r} as {port!r}, which is not a CheckpointPort "
            "(put, latest, get, versions, aclose); report it to the plugin's authors",
            plugin=reg.plugin,
        )
    return port
