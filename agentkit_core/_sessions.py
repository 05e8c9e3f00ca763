"""Sessions: the durable record of a conversation, as an append-only tree of items.

A session is a chain of items, each naming its parent; its first item is always a ``header``
(cwd, fingerprints, model, metadata). A **fork** is a session whose header's parent is an item
of another session (its base), so the sessions of a store form one tree and the path from the
root to any item crosses from a fork into its base. The **leaf** of a session is its newest item.

Two layers, as for checkpoints:

* :class:`SessionStore`, the port a plugin implements (``memory://``, ``sqlite:///``,
  ``postgresql://``): text records, a compare-and-set on the leaf, the path by parent pointers.
* :class:`Sessions`, what recorders and the CLI use: it makes ids and times, checks kinds,
  encodes bodies (refusing what cannot be encoded, naming the path, before anything is
  written), refuses secret-tainted items, and turns a lost compare-and-set into a
  :class:`SessionConflict` naming the session and both items.

The record's schema is versioned by :data:`SESSION_SCHEMA` (in every header body); the item
kinds of this version are :data:`ITEM_KINDS`. Adding a kind or a body field is additive; a
reader shows a kind it does not know as it is.
"""

from __future__ import annotations

import os
import re
import time
from collections import deque
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import field
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from functools import cached_property
from itertools import pairwise
from typing import Any
from typing import Final
from typing import Protocol
from typing import runtime_checkable

from . import _encoder
from ._blobs import collecting
from ._blobs import inline_blobs
from ._blobs import keeps_blobs
from ._blobs import put_blobs
from ._encoder import decode_state
from ._encoder import encode_finite
from ._encoder import encode_state
from ._errors import ConfigError
from ._errors import CorruptSessionItem
from ._errors import EncodingError
from ._errors import SecretTaintError
from ._errors import SessionConflict
from ._errors import SessionNotFound
from ._messages import JSONObject
from ._messages import JSONValue
from ._records import quick_init
from ._records import record
from ._tables import wrong_kind

SESSION_SCHEMA: Final = 2
"""The version of the record's schema, written into every header body as ``"schema"``.

2 writes no ``tool_call`` items (a call is in its response's message, which 1 repeated
one item per call); a reader reads both."""

ITEM_KINDS: Final = (
    "header",
    "instructions",
    "user",
    "response",
    "tool_call",
    "tool_result",
    "verdict",
    "elicitation",
    "fold",
    "child",
    "handoff",
)
"""The item kinds of the schema (``docs/sessions.md`` gives each one's body).

``header``: the session's header (always the first item; a later one records a change, such
as another model after a restart). ``instructions``: the instruction parts sent and what was
left out, once per distinct render. ``user``, ``response``: the messages (a response's
calls in its message). ``tool_result``: what a call returned. ``tool_call``: a call the model
asked for, written by schema 1 only (read, and still taken from a caller). ``verdict``: what a
contested hook decided, with the plugin and rule. ``elicitation``: a question, its answer and
who answered (never a secret answer's value). ``fold``: what compaction folded. ``child``: a
child agent's run, linking its own session. ``handoff``: the run went on under another agent
(``Kit(handoffs=)``), naming both and the call that took it. A plugin records kinds of its own
under a namespace: ``"<namespace>/<name>"`` (``"memory/manifest"``).
"""

_KINDS = frozenset(ITEM_KINDS)
_KIND = re.compile(r"[a-z][a-z0-9_.-]{0,62}/[a-z0-9][a-z0-9_.-]{0,62}")
#: A session id: no blank, no control character, no lone surrogate (no store keeps one).
_ID = re.compile(r"[^\s\x00-\x1f\x7f\ud800-\udfff]{1,200}")


#: The last second :func:`utc_stamp` wrote and its text up to the seconds (one tuple, so a
#: thread reading it while another replaces it sees a pair that belongs together).
_second: tuple[int, str] = (-1, "")


def utc_stamp(ns: int | None = None) -> str:
    """The time items are stamped with (now, or ``ns`` since the epoch), as ISO-8601 UTC text.

    What ``datetime.now(timezone.utc).isoformat()`` writes, at a quarter of its cost: the text
    up to the seconds is made once a second, and a batch of a recorded turn is stamped twice.
    """
    global _second
    second, micro = divmod((time.time_ns() if ns is None else ns) // 1000, 1_000_000)
    if _second[0] != second:
        _second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    text = _second[1]
    # the six digits as the tail of a seven-digit number: a format spec is parsed on each use
    return f"{text}.{str(1_000_000 + micro)[1:]}+00:00" if micro else f"{text}+00:00"


#: Fresh ids, read from ``os.urandom`` 64 at a time (:func:`new_id`). A deque's ``popleft`` is
#: atomic, so threads never share one; a forked child drops what its parent had read.
_ids: deque[str] = deque()
os.register_at_fork(after_in_child=_ids.clear)


def new_id() -> str:
    """A fresh id for a session or an item: unique in every store (128 random bits, as hex).

    The bits come from ``os.urandom`` as before, read for 64 ids at once: a system call a
    recorded turn rather than three (each id costs a fifth of what it did).
    """
    try:
        return _ids.popleft()
    except IndexError:
        _ids.extend(map(os.urandom(16 * 64).hex().__getitem__, _ID_SLICES))
        return _ids.popleft()


#: Where each of the 64 ids is in the hex of a read from ``os.urandom`` (sliced in C).
_ID_SLICES = tuple(slice(i, i + 32) for i in range(0, 64 * 32, 32))


@record(frozen=True)
class SessionItem:
    """One item as a store keeps it: text only, so every backend stores the same thing.

    ``body_json`` is the body's JSON text (from :func:`~agentkit_core.plugin.encode_state`) and
    ``created_at`` an ISO-8601 UTC time; :attr:`body` and :attr:`time` decode them on first
    access. A record a store hands back that does not decode raises
    :class:`CorruptSessionItem` there, naming the session and the item, so the items around it
    stay readable. ``parent`` is None only for the header of a session that is no fork.
    """

    session_id: str
    id: str
    parent: str | None
    kind: str
    body_json: str = field(repr=False)
    created_at: str

    @cached_property
    def body(self) -> Any:
        """The body, decoded (the caller's own copy)."""
        try:
            return decode_state(self.body_json)
        except (TypeError, ValueError, KeyError) as exc:
            raise self.corrupt(f"its body is not the JSON of a value ({exc})") from exc

    @cached_property
    def time(self) -> datetime:
        """When the item was appended, in UTC."""
        try:
            return datetime.fromisoformat(self.created_at).astimezone(UTC)
        except (TypeError, ValueError) as exc:
            raise self.corrupt(f"its time {self.created_at!r} is not an ISO-8601 time") from exc

    def corrupt(self, problem: str) -> CorruptSessionItem:
        """The error for this record being unreadable because of ``problem``."""
        return CorruptSessionItem(
            f"item {self.id!r} of session {self.session_id!r} is corrupt: {problem}; the other "
            "items stay readable (export the session to see them)",
            session_id=self.session_id,
            item_id=self.id,
        )


@record(frozen=True)
class SessionInfo:
    """A session as listed: its header item, leaf, own item count and base.

    ``base_session`` is the session a fork's base item belongs to (None for no fork); the base
    item itself is ``header.parent``.
    """

    id: str
    header: SessionItem
    leaf_id: str
    count: int
    updated_at: str
    base_session: str | None = None

    @property
    def base_item(self) -> str | None:
        """The item this session was forked at, or None."""
        return self.header.parent


@record(frozen=True)
class SessionHeader:
    """What a session records about where it runs; the body of its ``header`` items.

    ``kit_fingerprint`` and ``plugin_fingerprint`` say which kit and which plugin order
    produced the record (``PluginManager.fingerprint()``); ``metadata`` is free JSON.
    """

    cwd: str = ""
    model: str = ""
    kit_fingerprint: str = ""
    plugin_fingerprint: str = ""
    metadata: Mapping[str, JSONValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("cwd", "model", "kit_fingerprint", "plugin_fingerprint"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise ConfigError(
                    f"session header {name}={value!r} must be a string",
                    value=value,
                    source=f"SessionHeader.{name}",
                )
        if not isinstance(self.metadata, Mapping):
            raise ConfigError(
                f"session header metadata={self.metadata!r} must be a mapping",
                value=self.metadata,
                source="SessionHeader.metadata",
            )

    def to_body(self) -> JSONObject:
        """The header item's body: these fields and ``"schema"``."""
        return {
            "schema": SESSION_SCHEMA,
            "cwd": self.cwd,
            "model": self.model,
            "kit_fingerprint": self.kit_fingerprint,
            "plugin_fingerprint": self.plugin_fingerprint,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_body(cls, body: object) -> SessionHeader:
        """The header a header item's body describes; unknown fields are ignored."""
        if not isinstance(body, Mapping):
            body = {}
        metadata = body.get("metadata")
        return cls(
            cwd=str(body.get("cwd") or ""),
            model=str(body.get("model") or ""),
            kit_fingerprint=str(body.get("kit_fingerprint") or ""),
            plugin_fingerprint=str(body.get("plugin_fingerprint") or ""),
            metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
        )


@quick_init  # made three times a recorded turn
@record(frozen=True, slots=True)
class NewItem:
    """An item to append: its kind and body (any value :func:`encode_state` encodes).

    ``tainted=True`` marks a value derived from a secret (a ``secret=True`` answer); the store
    refuses it with :class:`SecretTaintError` before writing anything. The recorder marks what
    it cannot prove clean and records a redacted item instead.
    """

    kind: str
    body: object = None
    tainted: bool = False
    #: The id the item will have; empty: a fresh one. The recorder names its items as it
    #: records them, so a run's events can point at the item before it is written.
    id: str = ""


#: A checked :class:`NewItem`'s kind, body and id (empty: a fresh one), and whether the body's
#: maker checked it holds no NaN or infinity (:func:`~._encoder.encode_finite`): what a recorder
#: buffers, so that recording an item makes a tuple, not a record. Its kind is known good and it
#: is not tainted (the public append checks each item; a recorder records a redacted body
#: instead).
Entry = tuple[str, object, str, bool]


@runtime_checkable
class SessionStore(Protocol):
    """What a session store implements; every method is async. ``url`` names it in errors.

    The store owns durability, the uniqueness of ids and positions, and the compare-and-set;
    :class:`Sessions` above it owns ids, times, kinds and encoding. Each session's items have
    positions 1, 2, ... (the header is 1); an append derives the next position from the item
    it appends after, so a position taken means the session moved on. Run
    ``agentkit_core.testing.SessionStoreConformance`` against an implementation.

    A store whose ``append`` never waits (one in the process's memory) may also offer
    ``append_now(items) -> bool``: the same append, as a plain method, which
    :meth:`Sessions.append_now` calls so that a recorder's flush makes no await.
    """

    #: The store's URL with any password masked (``mask_url``).
    url: str

    async def create(self, items: Sequence[SessionItem]) -> bool:
        """Write a new session: ``items[0]`` (its header) at position 1, the rest after it.

        All or nothing. False, writing nothing, when the session id is taken.
        """
        ...

    async def append(self, items: Sequence[SessionItem]) -> bool:
        """Write ``items`` after ``items[0].parent`` if that is the session's leaf right now.

        ``items`` are a chain of one session (each the parent of the next). All or nothing,
        atomic against other processes. False, writing nothing, when ``items[0].parent`` is not
        the newest item of ``items[0].session_id`` (another writer appended after it, it is no
        item of that session, or there is no such session).
        """
        ...

    async def item(self, item_id: str) -> SessionItem | None:
        """The item with that id, in whichever session, or None."""
        ...

    async def leaf(self, session_id: str) -> SessionItem | None:
        """The session's newest item, or None when there is no such session."""
        ...

    async def path(self, item_id: str) -> list[SessionItem]:
        """The items from the root to ``item_id``, root first, following parents across forks.

        Costs in proportion to the path's length, not to the sessions or forks stored. Empty
        when there is no such item; a path whose first item still has a parent (a record
        missing) ends there.
        """
        ...

    async def info(self, session_id: str) -> SessionInfo | None:
        """The session's summary, or None when there is no such session."""
        ...

    async def sessions(self) -> list[SessionInfo]:
        """Every session's summary, oldest first (by the header's time, then id)."""
        ...

    async def aclose(self) -> None:
        """Release connections and threads; closing twice is harmless."""
        ...


class Sessions:
    """Create, append to, read and fork sessions in a :class:`SessionStore`.

    Open one with ``await open_sessions(url)`` or wrap a store: ``Sessions(store)``. Every
    write is checked before anything reaches the store; a lost compare-and-set is a
    :class:`SessionConflict`, a missing session or item a :class:`SessionNotFound`.
    """

    def __init__(self, store: SessionStore) -> None:
        if not isinstance(store, SessionStore):
            raise ConfigError(
                f"Sessions(store) needs a SessionStore (url, create, append, item, leaf, path, "
                f"info, sessions, aclose), got {store!r}; open one with open_session_store(url)",
                value=store,
                source="Sessions",
            )
        self.store = store
        self._keeps_blobs = keeps_blobs(store)  # asked once: a protocol check is slow
        self._append_now = getattr(store, "append_now", None)  # see append_now

    # ------------------------------------------------------------------ writing

    async def create(
        self, header: SessionHeader | Mapping[str, object] | None = None, *, session_id: str = ""
    ) -> SessionItem:
        """Start a session; returns its header item (``.session_id``, and the leaf to append to).

        ``header`` is a :class:`SessionHeader` or a mapping of its fields. ``session_id`` picks
        the id (a conversation id a front already has); taken, it is a :class:`SessionConflict`.
        """
        _check_ids("create", session_id=session_id)
        sid = self._new_session_id(session_id)
        head = self._header_item(sid, None, _as_header(header))
        await self._create(head)
        return head

    async def fork(
        self,
        session_id: str,
        *,
        at: str | None = None,
        header: SessionHeader | Mapping[str, object] | None = None,
        new_id: str = "",
    ) -> SessionItem:
        """A new session whose base is item ``at`` of ``session_id`` (default: its leaf).

        The original never changes. ``at`` must be an item of ``session_id`` itself, not of
        a session it was forked from (fork that one instead). The new header is ``header``, or
        a copy of ``session_id``'s own (its first item). Returns the new session's header item.
        """
        _check_ids("fork", session_id=session_id, at=at, new_id=new_id)
        if at is None:
            base = await self._leaf(session_id)
        else:
            base = await self._item_of(session_id, at, "fork")
        if header is None:
            given = SessionHeader.from_body((await self.info(session_id)).header.body)
        else:
            given = _as_header(header)
        head = self._header_item(self._new_session_id(new_id), base.id, given)
        await self._create(head)
        return head

    async def append(
        self, session_id: str, after: str, items: NewItem | Sequence[NewItem]
    ) -> list[SessionItem]:
        """Append ``items`` after ``after``, which must be the session's leaf; atomic.

        Returns the items as stored (the last is the new leaf). Nothing is written when an
        item is tainted (:class:`SecretTaintError`), its kind unknown (:class:`ConfigError`) or
        its body not encodable (:class:`EncodingError` naming the path), or when ``after`` is
        no longer the leaf (:class:`SessionConflict` naming the session, ``after`` and the
        leaf).
        """
        _check_ids("append", session_id=session_id, after=after)
        return await self._append(session_id, after, _checked(session_id, items))

    async def _append(self, session_id: str, after: str, entries: list[Entry]) -> list[SessionItem]:
        """:meth:`append` of checked entries: a recorder's buffer, which makes no NewItem."""
        made, blobs = self._made(session_id, after, entries)
        if blobs:
            await put_blobs(self.store, blobs)  # before the items that name them
        if not await self.store.append(made):
            raise await self._append_refused(session_id, after)
        return made

    def append_now(
        self, session_id: str, after: str, items: NewItem | Sequence[NewItem]
    ) -> list[SessionItem] | None:
        """:meth:`append` done without an await, when the store's own append never waits.

        Such a store offers ``append_now(items) -> bool``, its ``append`` done at once
        (``memory://`` does); a recorder flushes through here first, saving a turn's awaits.
        Refusals of the items raise as :meth:`append` raises them. None, with nothing written,
        when it cannot be done at once: the store has no ``append_now``, the batch holds part
        bytes to write first, or the compare-and-set failed (:meth:`append` says why).
        """
        _check_ids("append_now", session_id=session_id, after=after)
        return self._append_entries_now(session_id, after, _checked(session_id, items))

    def _append_entries_now(
        self, session_id: str, after: str, entries: list[Entry]
    ) -> list[SessionItem] | None:
        """:meth:`append_now` of checked entries: a recorder's buffer, which makes no NewItem."""
        now = self._append_now
        if now is None:
            return None
        made, blobs = self._made(session_id, after, entries)
        return None if blobs or not now(made) else made

    def _made(
        self,
        session_id: str,
        after: str | None,
        entries: list[Entry],
        blobs: dict[str, bytes] | None = None,
    ) -> tuple[list[SessionItem], dict[str, bytes]]:
        """The records of an append of ``entries`` after ``after``, and the part bytes they name.

        The entries' kinds and taint are checked already, once (:func:`_checked` for the public
        append, ``Recorder.record`` for a plugin's kind); each body is encoded here, so an
        unencodable one fails the append before anything is written. Part bytes are encoded
        inline first; for a store that keeps blobs, a batch that held some is made again with
        ``blobs`` collecting them. A batch without one, nearly every batch, is so spared setting
        up the collection (a context variable set and reset: some 5 % of what recording adds
        to a turn).
        """
        stamp = utc_stamp()
        made: list[SessionItem] = []
        parent = after
        inline = _encoder.parts_inline
        try:
            for kind, value, wanted, finite in entries:
                item_id = wanted or new_id()
                if finite:
                    text = encode_finite(value, root="body")
                else:
                    text = encode_state(value, root="body")
                # positional: a record's keywords cost a third of making it
                made.append(SessionItem(session_id, item_id, parent, kind, text, stamp))
                parent = item_id
        except EncodingError as exc:  # the item made next is the one that failed
            raise EncodingError(
                f"nothing was written to session {session_id!r}: "
                f"{_where(len(made), len(entries))} ({entries[len(made)][0]}): {exc}",
                path=exc.path,
                value=exc.value,
            ) from exc
        if blobs is not None or inline == _encoder.parts_inline or not self._keeps_blobs:
            return made, {} if blobs is None else blobs
        blobs = {}
        token = collecting.set(blobs)
        try:
            return self._made(session_id, after, entries, blobs)
        finally:
            collecting.reset(token)

    # ------------------------------------------------------------------ reading

    async def leaf(self, session_id: str) -> SessionItem:
        """The session's newest item; :class:`SessionNotFound` when there is no such session."""
        _check_ids("leaf", session_id=session_id)
        return await self._leaf(session_id)

    async def item(self, session_id: str, item_id: str) -> SessionItem:
        """Item ``item_id`` of ``session_id``; :class:`SessionNotFound` when it is not there."""
        _check_ids("item", session_id=session_id, item_id=item_id)
        return await self._item_of(session_id, item_id, "read")

    async def path(self, session_id: str, *, to: str | None = None) -> list[SessionItem]:
        """The items from the root to the session's leaf (or to its item ``to``), root first.

        For a fork the path starts in its base session. A record missing on the way is a
        :class:`CorruptSessionItem` naming the item whose parent is gone.
        """
        _check_ids("path", session_id=session_id, to=to)
        end = await (
            self._leaf(session_id) if to is None else self._item_of(session_id, to, "read")
        )
        path = await self._inlined(*await self.store.path(end.id))
        if not path or path[-1].id != end.id:
            raise end.corrupt("the store returned no path to it")
        first = path[0]
        if first.parent is not None:
            raise first.corrupt(
                f"its parent {first.parent!r} cannot be followed (missing from the store, or a "
                f"loop), so the path to {end.id!r} starts there"
            )
        for before, after in pairwise(path):
            if after.parent != before.id:
                raise after.corrupt(
                    f"its parent {after.parent!r} is not {before.id!r}, the item before it"
                )
        return path

    async def info(self, session_id: str) -> SessionInfo:
        """The session's summary; :class:`SessionNotFound` when there is no such session."""
        _check_ids("info", session_id=session_id)
        found = await self.store.info(session_id)
        if found is None:
            raise self._not_found(session_id)
        return found

    async def sessions(self) -> list[SessionInfo]:
        """Every session of the store, oldest first."""
        return await self.store.sessions()

    async def aclose(self) -> None:
        """Close the store underneath."""
        await self.store.aclose()

    async def __aenter__(self) -> Sessions:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<Sessions {self.store.url}>"

    # ------------------------------------------------------------------ internals

    def _new_session_id(self, given: str) -> str:
        if not given:
            return new_id()
        if not isinstance(given, str) or not _ID.fullmatch(given):
            raise ConfigError(
                f"session id {given!r} is not 1 to 200 printable characters without spaces "
                "(no blank, control character or lone surrogate)",
                value=given,
                source="Sessions",
            )
        return given

    def _header_item(self, sid: str, parent: str | None, header: SessionHeader) -> SessionItem:
        return self._made(sid, parent, [("header", header.to_body(), "", False)])[0][0]

    async def _create(self, head: SessionItem) -> None:
        if not await self.store.create([head]):
            raise SessionConflict(
                f"session {head.session_id!r} already exists in {self.store.url}; resume it, or "
                "pick another id",
                session_id=head.session_id,
            )

    async def _leaf(self, session_id: str) -> SessionItem:
        leaf = await self.store.leaf(session_id)
        if leaf is None:
            raise self._not_found(session_id)
        [item] = await self._inlined(leaf)
        return item

    async def _inlined(self, *items: SessionItem) -> list[SessionItem]:
        """``items`` with the part bytes they name by hash read back from the store at once."""
        texts = await inline_blobs([item.body_json for item in items], self.store)
        return [
            item if text is item.body_json else replace(item, body_json=text)
            for item, text in zip(items, texts, strict=True)
        ]

    async def _item_of(self, session_id: str, item_id: str, action: str) -> SessionItem:
        found = await self.store.item(item_id)
        if found is not None and found.session_id == session_id:
            [item] = await self._inlined(found)
            return item
        await self._leaf(session_id)  # the session itself missing is the clearer error
        where = "" if found is None else f" (it belongs to session {found.session_id!r}"
        if found is not None:
            where += f"; {action} that session at it instead)" if action == "fork" else ")"
        raise SessionNotFound(
            f"no item {item_id!r} in session {session_id!r} of {self.store.url}{where}",
            session_id=session_id,
            item_id=item_id,
            store=self.store.url,
        )

    async def _append_refused(self, session_id: str, after: str) -> Exception:
        leaf = await self._leaf(session_id)
        await self._item_of(session_id, after, "append")
        why = (
            f"moved on: appending after item {after!r}, but its leaf is now {leaf.id!r} (another "
            "writer appended); read the path to the leaf again and retry, or fork the session at "
            "your item"
            if leaf.id != after
            else f"refused the items after its leaf {after!r}: an id given to one is taken, in "
            "the store or earlier in the batch; leave NewItem's id empty for a fresh one"
        )
        return SessionConflict(
            f"session {session_id!r} {why}",
            session_id=session_id,
            after=after,
            leaf=leaf.id,
        )

    def _not_found(self, session_id: str) -> SessionNotFound:
        return SessionNotFound(
            f"no session {session_id!r} in {self.store.url}; `agentkit sessions list --store "
            f"{self.store.url}` lists the ones there",
            session_id=session_id,
            store=self.store.url,
        )


def _check_ids(method: str, **ids: object) -> None:
    """Each of a public method's ids a string (or None): a dict or a number is no id."""
    for name, value in ids.items():
        if value is not None and not isinstance(value, str):
            raise wrong_kind(f"Sessions.{method}({name}=)", "a string id", value)


def _checked(session_id: str, items: NewItem | Sequence[NewItem]) -> list[Entry]:
    """A public append's items as entries, each checked first: its type, kind and taint.

    In order, so an error names the first wrong item; nothing is encoded before all pass.
    """
    if not isinstance(items, NewItem | Sequence):
        raise wrong_kind("Sessions.append(items=)", "a NewItem or a list of them", items)
    given: Sequence[object] = [items] if isinstance(items, NewItem) else list(items)
    if not given:
        raise ConfigError(
            f"nothing to append to session {session_id!r}: give a NewItem or a non-empty "
            "list of them",
            value=items,
            source="Sessions.append",
        )
    entries: list[Entry] = []
    for index, item in enumerate(given):
        if not isinstance(item, NewItem):
            raise ConfigError(
                f"{_where(index, len(given))} appended to session {session_id!r} is {item!r}; "
                "give NewItem(kind, body)",
                value=item,
                source="Sessions.append",
            )
        check_kind(item.kind)
        if item.tainted:
            raise SecretTaintError(
                f"refused to record {_where(index, len(given))} ({item.kind}) in session "
                f"{session_id!r}: it is marked secret-tainted, and a secret is never written to a "
                "session; record a redacted item instead",
                session_id=session_id,
                kind=item.kind,
            )
        entries.append((item.kind, item.body, item.id, False))
    return entries


def _where(index: int, count: int) -> str:
    """Which item of an append an error is about (built only for an error)."""
    return f"item {index + 1} of {count}" if count > 1 else "the item"


def check_kind(kind: object) -> str:
    """``kind`` when it is one of :data:`ITEM_KINDS` or a namespaced ``"ns/name"``."""
    if isinstance(kind, str) and (kind in _KINDS or _KIND.fullmatch(kind)):
        return kind
    raise ConfigError(
        f"unknown session item kind {kind!r}; use one of {', '.join(ITEM_KINDS)}, or a kind of "
        "your own under a namespace such as 'myplugin/event'",
        value=kind,
        source="NewItem.kind",
    )


def _as_header(header: object) -> SessionHeader:
    if header is None:
        return SessionHeader()
    if isinstance(header, SessionHeader):
        return header
    if isinstance(header, Mapping):
        known = set(SessionHeader.__dataclass_fields__)
        extra = sorted(set(header) - known)
        if extra:
            raise ConfigError(
                f"unknown session header field(s) {', '.join(map(repr, extra))}; the fields are "
                f"{', '.join(sorted(known))} (put anything else under metadata)",
                value=dict(header),
                source="session header",
            )
        return SessionHeader(**header)
    raise ConfigError(
        f"a session header is a SessionHeader or a mapping of its fields, not {header!r}",
        value=header,
        source="session header",
    )
