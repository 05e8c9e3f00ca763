"""Checkpoints: the store port a plugin implements, opening one from a URL, and the facade.

The swappable seam is :class:`CheckpointPort`, a small async compare-and-set store of
:class:`StoredCheckpoint` records keyed by ``(run_id, namespace, version)``. Stores are found by
URL scheme (``memory://``, ``sqlite:///runs.db``, ``postgresql://...``) among the installed
``checkpoint_stores`` registrations. Producers use :class:`Checkpointer` over a port, found
through :func:`resolve_checkpointer`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import field
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import Protocol
from typing import runtime_checkable
from urllib.parse import quote

from ._blobs import collected
from ._blobs import inline_blobs
from ._blobs import keeps_blobs
from ._blobs import put_blobs
from ._encoder import decode_state
from ._encoder import encode_state
from ._errors import ConfigError
from ._errors import DecodingError
from ._errors import VersionConflict
from ._records import quick_init
from ._records import record
from ._scope import current_run
from ._urls import mask_url

if TYPE_CHECKING:
    pass

RUNNING: Final = "running"
"""The engine is in motion; a crash resumes from here."""
SUSPENDED: Final = "suspended"
"""Waiting on a person (an approval); ``resume`` continues once they answered."""
DONE: Final = "done"
"""The run finished; ``resume`` refuses it unless asked for terminal checkpoints."""
FAILED: Final = "failed"
"""The run raised; terminal like DONE."""
TAINTED: Final = "tainted"
"""A secret reached the run: this marker (no state) is its last record, and it never resumes."""
STATUSES: Final = (RUNNING, SUSPENDED, DONE, FAILED, TAINTED)
_SKIPPED: Final = '{"skipped": "secret_taint"}'
TERMINAL: Final = (DONE, FAILED, TAINTED)


@quick_init
@record(frozen=True, slots=True)
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


@record(frozen=True)
class Checkpoint:
    """What a :class:`Checkpointer` hands back: one version of a run.

    ``state`` and ``metadata`` are decoded from the stored JSON text (on first access, once
    per Checkpoint object), so they are the caller's own copies: mutating them never changes
    the stored record. A skipped snapshot (secret-tainted run) has ``version == 0``, ``state
    is None`` and ``metadata == {"skipped": "secret_taint"}``.

    A record that does not decode raises :class:`DecodingError` naming ``store`` (the store's
    repr, its password masked), the run, the version and the path in the state.
    """

    run_id: str
    namespace: str
    version: int
    status: str
    created_at: datetime
    state_json: str = field(repr=False)
    metadata_json: str = field(repr=False)
    store: str = field(default="", repr=False, compare=False)

    @cached_property
    def state(self) -> Any:
        """The state, decoded by :func:`~agentkit_core.plugin.decode_state`."""
        return self._decode(self.state_json, "state")

    @cached_property
    def metadata(self) -> dict[str, Any]:
        """The metadata, decoded."""
        value: dict[str, Any] = self._decode(self.metadata_json, "metadata")
        return value

    def _decode(self, text: str, root: str) -> Any:
        try:
            return decode_state(text, root=root)
        except DecodingError as exc:
            raise self.corrupt(str(exc), exc.path) from exc

    def corrupt(self, problem: str, path: str) -> DecodingError:
        """The error for this record when ``path`` in it is wrong (``problem`` says how)."""
        return _corrupt(self.store, self.run_id, self.namespace, self.version, problem, path)

    @property
    def terminal(self) -> bool:
        """DONE or FAILED: nothing left to resume."""
        return self.status in TERMINAL


Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


class Checkpointer:
    """What producers use: numbered, stamped, encoded snapshots over a :class:`CheckpointPort`.

    ``snapshot`` numbers versions latest + 1 and retries under the port's compare-and-set, so
    producers of one run — other tasks, other processes — never collide or lose a version.
    Each producer writes under its own ``namespace`` (the agent loop uses ``"agent"``) so two
    never share version numbers. A secret-tainted run is never written: its first skipped
    snapshot writes a TAINTED marker instead, so it is not resumed from an earlier version.
    """

    #: Compare-and-set rounds a snapshot tries before :class:`VersionConflict`.
    attempts = 64

    def __init__(
        self, port: CheckpointPort, *, clock: Clock = utc_now, url: str | None = None
    ) -> None:
        if not isinstance(port, CheckpointPort):
            raise ConfigError(
                f"Checkpointer(port=...) needs a CheckpointPort (put, latest, get, versions, "
                f"aclose), got {port!r}; open one with open_checkpoint_store(url)",
                value=port,
                source="Checkpointer",
            )
        self.port = port
        self._keeps_blobs = keeps_blobs(port)  # asked once: a protocol check is slow
        self.clock = clock
        #: How messages name the store: its URL (``url``, which :meth:`open` passes), else the
        #: port's repr; either with any password masked.
        self.store = mask_url(url if url else repr(port))
        # The version this checkpointer wrote last, per (run, namespace): the next guess, so a
        # lone producer needs no read per snapshot. A wrong guess just loses the CAS.
        self._last: dict[tuple[str, str], int] = {}
        # The tainted runs this checkpointer has marked TAINTED already.
        self._marked: set[tuple[str, str]] = set()

    async def snapshot(
        self,
        run_id: str,
        state: object,
        status: str = RUNNING,
        metadata: Mapping[str, object] | None = None,
        *,
        namespace: str = "agent",
        ctx: object = None,
    ) -> Checkpoint:
        """Write the next version of ``run_id`` and return it as stored.

        ``state`` and ``metadata`` go through :func:`~agentkit_core.plugin.encode_state` first;
        state that cannot be encoded raises :class:`EncodingError` and nothing is written.

        Inside a secret-tainted run — ``ctx``, or the agent run executing in this task (and
        the tasks it started), whichever is tainted — nothing of it is written and version 0
        comes back; the first such snapshot of a run writes a TAINTED marker with no state, so
        the run is never resumed from a version before the secret.
        """
        if status not in STATUSES:
            raise ConfigError(
                f"unknown checkpoint status {status!r}; use one of {', '.join(STATUSES)}",
                value=status,
                source="Checkpointer.snapshot",
            )
        now = self._now()
        key = (run_id, namespace)
        if _tainted(ctx):
            if key not in self._marked:
                await self._put_next(key, TAINTED, "null", _SKIPPED, now.isoformat())
                self._marked.add(key)
            return Checkpoint(run_id, namespace, 0, status, now, "null", _SKIPPED, self.store)
        with collected(self._keeps_blobs) as blobs:
            text = encode_state(state)
        meta = "{}" if metadata is None else encode_state(metadata, root="metadata")
        await put_blobs(self.port, blobs)  # before the record that names them
        record = await self._put_next(key, status, text, meta, now.isoformat())
        return _decoded(await self._inlined(record, blobs), self.store, now)

    async def _inlined(self, record: StoredCheckpoint, blobs: object = None) -> StoredCheckpoint:
        """``record`` with the part bytes its state names by hash read back.

        From ``blobs`` (those just written) when given, else from the store.
        """
        [text] = await inline_blobs([record.state], self.port if blobs is None else blobs)
        return record if text is record.state else replace(record, state=text)

    async def _put_next(
        self, key: tuple[str, str], status: str, state: str, metadata: str, stamp: str
    ) -> StoredCheckpoint:
        """Put the record at the next free version, retrying under the compare-and-set."""
        run_id, namespace = key
        version = self._last.get(key)
        if version is None:
            version = await self._latest_version(run_id, namespace)
        for _ in range(self.attempts):
            version += 1
            record = StoredCheckpoint(run_id, namespace, version, status, state, metadata, stamp)
            if await self.port.put(record):
                if status in TERMINAL:  # the run is over: keep no guess for it
                    self._last.pop(key, None)
                else:
                    self._last[key] = version
                return record
            version = await self._latest_version(run_id, namespace)
        raise VersionConflict(
            f"could not snapshot run {run_id!r} (namespace {namespace!r}): the next version was "
            f"taken {self.attempts} times in a row by other writers",
            run_id=run_id,
            version=version,
        )

    async def resume(
        self, run_id: str, *, namespace: str = "agent", include_terminal: bool = False
    ) -> Checkpoint | None:
        """The latest checkpoint of ``run_id``; None when there is none or it is DONE/FAILED.

        A finished run is not resumed by accident; pass ``include_terminal=True`` to read it
        anyway (an audit view, a replay).
        """
        record = await self.port.latest(run_id, namespace)
        if record is None or (record.status in TERMINAL and not include_terminal):
            return None
        return _decoded(await self._inlined(_checked(record, self.store)), self.store)

    async def list_versions(self, run_id: str, *, namespace: str = "agent") -> list[int]:
        """Every version of ``run_id``, ascending."""
        return await self.port.versions(run_id, namespace)

    async def at_version(
        self, run_id: str, version: int, *, namespace: str = "agent"
    ) -> Checkpoint | None:
        """Exactly ``version`` of ``run_id`` (time travel), or None."""
        record = await self.port.get(run_id, namespace, version)
        if record is None:
            return None
        return _decoded(await self._inlined(_checked(record, self.store)), self.store)

    async def aclose(self) -> None:
        """Close the store underneath."""
        await self.port.aclose()

    async def __aenter__(self) -> Checkpointer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _now(self) -> datetime:
        now = self.clock()
        if not isinstance(now, datetime) or now.tzinfo is None:
            raise ConfigError(
                f"the checkpoint clock returned {now!r}; it must return an aware datetime "
                "(datetime.now(timezone.utc))",
                value=now,
                source="Checkpointer(clock=...)",
            )
        return now if now.tzinfo is UTC else now.astimezone(UTC)

    async def _latest_version(self, run_id: str, namespace: str) -> int:
        latest = await self.port.latest(run_id, namespace)
        return 0 if latest is None else latest.version

    def __repr__(self) -> str:
        return f"<Checkpointer {self.store}>"


def _tainted(ctx: object) -> bool:
    """Whether a snapshot made now, for ``ctx``, would carry a secret."""
    running = current_run()
    return bool(getattr(ctx, "secret_tainted", False)) or (
        running is not None and running.secret_tainted
    )


def _checked(record: StoredCheckpoint, store: str) -> StoredCheckpoint:
    """``record`` when each field has its type and the status is known, else DecodingError.

    A row changed outside agentkit (a text version, an unknown status, bytes for the state)
    would otherwise be resumed as whatever it reads as, or fail deep in decoding.
    """
    problem, path = None, ""
    if type(record.version) is not int or record.version < 1:
        problem, path = f"the version {record.version!r:.40} is not a whole number", "version"
    elif record.status not in STATUSES:
        problem, path = f"the status {record.status!r:.40} is not one of {STATUSES}", "status"
    else:
        for name in ("state", "metadata", "created_at"):
            if not isinstance(getattr(record, name), str):
                kind = type(getattr(record, name)).__name__
                problem, path = f"{name} is {kind}, not text", name
                break
    if problem is None:
        return record
    version = record.version if type(record.version) is int else 0
    raise _corrupt(store, record.run_id, record.namespace, version, problem, path)


def _decoded(
    record: StoredCheckpoint, store: str, created_at: datetime | None = None
) -> Checkpoint:
    """``record`` as a Checkpoint; ``created_at`` is its stamp as a datetime, when known."""
    try:
        if created_at is None:
            created_at = datetime.fromisoformat(record.created_at)
    except (TypeError, ValueError):
        raise _corrupt(
            store,
            record.run_id,
            record.namespace,
            record.version,
            f"created_at {str(record.created_at)[:40]!r} is not an ISO-8601 time",
            "created_at",
        ) from None
    return Checkpoint(
        record.run_id,
        record.namespace,
        record.version,
        record.status,
        created_at,
        record.state,
        record.metadata,
        store,
    )


def _corrupt(
    store: str, run_id: str, namespace: str, version: int, problem: str, path: str
) -> DecodingError:
    where = "" if namespace == "agent" else f" (namespace {namespace!r})"
    return DecodingError(
        f"{store}: version {version} of run {run_id!r}{where} is corrupt: {problem}. It was "
        "changed outside agentkit or written by something else; earlier versions may still "
        "be read with at_version()",
        path=path,
        store=store,
        run_id=run_id,
        version=version,
    )


@runtime_checkable
class KeyValueStore(Protocol):
    """A ``ctx.store``: any object with async ``get(key)`` and ``put(key, value)`` of strings.

    :func:`resolve_checkpointer` bridges one into a :class:`CheckpointPort`. Its
    compare-and-set holds within one process only (a lock per bridge); across processes use
    a real checkpoint store.
    """

    async def get(self, key: str) -> str | None: ...

    async def put(self, key: str, value: str) -> None: ...


class StoreBridge:
    """A :class:`CheckpointPort` over a :class:`KeyValueStore` (``ctx.store``).

    Keys: ``agentkit/checkpoints/<run>/<namespace>`` holds the JSON list of versions,
    ``.../<version>`` each record's JSON.
    """

    prefix = "agentkit/checkpoints"

    def __init__(self, store: KeyValueStore) -> None:
        self.store = store
        self._lock = asyncio.Lock()

    def _key(self, run_id: str, namespace: str, version: int | None = None) -> str:
        # Each name percent-encoded whole, so no two make one key; a lone surrogate as the
        # three bytes surrogatepass gives it, which no other character encodes to.
        run, ns = (quote(n.encode("utf-8", "surrogatepass"), safe="") for n in (run_id, namespace))
        key = f"{self.prefix}/{run}/{ns}"
        return key if version is None else f"{key}/{version}"

    async def put(self, record: StoredCheckpoint) -> bool:
        """Write unless the version is listed already (atomic within this process)."""
        async with self._lock:
            versions = await self.versions(record.run_id, record.namespace)
            if record.version in versions:
                return False
            key = self._key(record.run_id, record.namespace, record.version)
            await self.store.put(key, json.dumps(dataclasses.asdict(record)))
            versions = sorted([*versions, record.version])
            await self.store.put(self._key(record.run_id, record.namespace), json.dumps(versions))
            return True

    async def latest(self, run_id: str, namespace: str) -> StoredCheckpoint | None:
        """The highest listed version's record."""
        versions = await self.versions(run_id, namespace)
        return await self.get(run_id, namespace, versions[-1]) if versions else None

    async def get(self, run_id: str, namespace: str, version: int) -> StoredCheckpoint | None:
        """That version's record, or None."""
        text = await self.store.get(self._key(run_id, namespace, version))
        if text is None:
            return None
        fields = {f.name for f in dataclasses.fields(StoredCheckpoint)}
        data = self._json(text, run_id, namespace, version, "the record")
        if not isinstance(data, dict) or set(data) != fields:
            raise self._corrupt(run_id, namespace, version, "the record is not a checkpoint")
        record = StoredCheckpoint(**data)
        # compared as JSON writes them: a surrogate pair written as two escapes reads back as one
        # character, so the names are handed back as asked (the key holds them exactly)
        named = [json.dumps(n) for n in (record.run_id, record.namespace, run_id, namespace)]
        if named[:2] != named[2:] or record.version != version:
            raise self._corrupt(run_id, namespace, version, "the record names another checkpoint")
        return dataclasses.replace(record, run_id=run_id, namespace=namespace)

    async def versions(self, run_id: str, namespace: str) -> list[int]:
        """The listed versions, ascending.

        A list that is not one of whole numbers is refused, never read as no checkpoint (a
        resume would then start the run over).
        """
        text = await self.store.get(self._key(run_id, namespace))
        if text is None:
            return []
        data = self._json(text, run_id, namespace, 0, "the version list")
        if not isinstance(data, list) or not all(type(v) is int and v > 0 for v in data):
            raise self._corrupt(run_id, namespace, 0, "the version list is not whole numbers")
        return sorted(data)

    def _json(self, text: str, run_id: str, namespace: str, version: int, what: str) -> object:
        try:
            data: object = json.loads(text)
        except (ValueError, RecursionError):
            raise self._corrupt(run_id, namespace, version, f"{what} is not JSON") from None
        return data

    def _corrupt(self, run_id: str, namespace: str, version: int, problem: str) -> DecodingError:
        key = self._key(run_id, namespace, version or None)
        return _corrupt(repr(self), run_id, namespace, version, f"{problem} (key {key!r})", key)

    async def aclose(self) -> None:
        """The store belongs to whoever put it on the context; nothing to close here."""

    def __repr__(self) -> str:
        return f"<StoreBridge over {type(self.store).__name__}>"


def resolve_checkpointer(explicit: object = None, ctx: Any = None) -> Checkpointer | None:
    """The checkpointer a producer uses: explicit, ctx.checkpointer, a bridge over ctx.store.

    None when there is none of the three (no durability). Every producer that checkpoints
    resolves through here, so wiring any one of the three persists every producer. Each may
    be a :class:`Checkpointer` or a :class:`CheckpointPort`; ``ctx.store`` may also be a
    :class:`KeyValueStore`. What is built from the context is kept on ``ctx.checkpointer``, so
    one run numbers its versions through one checkpointer.
    """
    if explicit is not None:
        return _as_checkpointer(explicit, "checkpointer=")
    if ctx is None:
        return None
    if getattr(ctx, "checkpointer", None) is not None:
        found = _as_checkpointer(ctx.checkpointer, "ctx.checkpointer")
    elif getattr(ctx, "store", None) is not None:
        store = ctx.store
        if isinstance(store, CheckpointPort):
            found = Checkpointer(store)
        elif isinstance(store, KeyValueStore):
            found = Checkpointer(StoreBridge(store))
        else:
            raise ConfigError(
                f"ctx.store is {store!r}, which is neither a CheckpointPort nor a key-value "
                "store with async get(key) and put(key, value)",
                value=store,
                source="ctx.store",
            )
    else:
        return None
    ctx.checkpointer = found
    return found


def _as_checkpointer(value: object, where: str) -> Checkpointer:
    if isinstance(value, Checkpointer):
        return value
    if isinstance(value, CheckpointPort):
        return Checkpointer(value)
    raise ConfigError(
        f"{where} is {value!r}; give a Checkpointer or a CheckpointPort (from "
        "open_checkpoint_store(url))",
        value=value,
        source=where,
    )
