"""Memory: what an agent knows across conversations, as scoped, versioned entries.

A **scope** is a namespace of entries (``user``, ``project``); an **entry** is a title, a body,
the time it was last written, the session that wrote it and a **version** that every write
raises by one. Two layers, as for sessions:

* :class:`MemoryStore`, the port a plugin implements (``file:///dir``, ``sqlite:///path``,
  ``postgresql://``): keep entries, list a scope, and write or remove one entry as a
  compare-and-set on its version. A key's version never goes back: forgetting an entry is a
  write too (the key is *forgotten* at the next version), so an entry saved after it carries
  on from there, and a writer that saw the entry before it was forgotten cannot mistake the
  new one for it.
* :class:`Memory`, what the memory block, its tools and the CLI use: it checks scope names,
  titles and bodies (the per-entry bound), refuses a new title that passes for one the scope
  holds (:func:`check_new_title`), stamps versions and times, and turns a lost
  compare-and-set into a :class:`MemoryConflict` carrying the entry as it now is, so no write
  silently replaces one its writer never saw.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Final
from typing import Protocol
from typing import runtime_checkable

from ._errors import ConfigError
from ._errors import CorruptMemoryEntry
from ._errors import StorageError
from ._framing import escape_untrusted
from ._framing import frame_untrusted
from ._framing import hidden
from ._framing import keyed_nonce

#: Bytes of UTF-8 an entry's body may take unless configured otherwise.
DEFAULT_MAX_ENTRY_BYTES: Final = 4096
#: Characters a title may have.
MAX_TITLE: Final = 100
#: The environment variable naming the memory store when none is given.
MEMORY_STORE_ENV: Final = "AGENTKIT_MEMORY_STORE"
#: The store used when neither the configuration nor the environment names one: a directory
#: of Markdown files under the working directory (the memory-files plugin).
DEFAULT_MEMORY_STORE: Final = "file:.agentkit/memory"

_SCOPE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One entry: its scope and title (the key), body, version, time and writer.

    ``version`` is 1 for a title's first entry and one more on every write, forgetting
    included (an entry saved after it carries on from there). ``updated_at`` is an
    ISO-8601 UTC time, ``session`` the id of the session whose run wrote it (``""`` when no
    session was attached, or a person wrote it).
    """

    scope: str
    title: str
    body: str
    version: int
    updated_at: str
    session: str = ""

    @property
    def time(self) -> datetime:
        """When the entry was last written, in UTC (the epoch when the stored time is bad)."""
        try:
            return datetime.fromisoformat(self.updated_at).astimezone(UTC)
        except ValueError:
            return datetime.fromtimestamp(0, UTC)


class MemoryConflict(StorageError):
    """A memory write lost: the entry is no longer at the version the write was based on.

    ``.scope`` and ``.title`` name the entry, ``.base`` the version the writer had seen (0: it
    saw no entry), ``.current`` the entry as it is now (None when it was forgotten). The
    message carries the current text, so whoever retries bases the write on what is there.
    """

    def __init__(
        self, message: str, *, scope: str, title: str, base: int, current: MemoryEntry | None = None
    ) -> None:
        super().__init__(message)
        self.scope = scope
        self.title = title
        self.base = base
        self.current = current


@dataclass(frozen=True, slots=True)
class MemoryListing:
    """A scope's entries, by title, and the ones that could not be read (reported by name)."""

    entries: tuple[MemoryEntry, ...]
    corrupt: tuple[CorruptMemoryEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """An entry a query found, with its provenance: entry, score and store.

    ``entry`` carries the key, version, time and writer; ``store`` is the store's (masked) URL.
    ``score`` is the store's relevance, higher is better; it ranks one answer's hits and means
    nothing across stores.
    """

    entry: MemoryEntry
    score: float
    store: str


#: Words a query keeps at most: a long task is cut to its first words, never refused.
MAX_QUERY_TERMS: Final = 32
_WORD = re.compile(r"[^\W_]+")


def query_terms(text: object, limit: int | None = MAX_QUERY_TERMS) -> list[str]:
    """The words of ``text`` a store looks for: NFKC, casefolded, letters and digits, once each.

    No store reads a query's text as its own syntax (``AND``, quotes, ``*``, ``-``, ``NEAR``):
    each builds its query from these words, quoted, so no text can be a syntax error. At most
    ``limit`` (None: every word, as a store splits an entry it ranks itself); none for text
    without a letter or digit.
    """
    if not isinstance(text, str):
        return []
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    return list(dict.fromkeys(words))[:limit]


@runtime_checkable
class MemoryStore(Protocol):
    """What a memory store implements; every method is async. ``url`` names it in errors.

    The store keeps entries by ``(scope, title)`` and owns durability and the compare-and-set:
    :meth:`put` and :meth:`delete` act only when the entry's stored version is the one the
    caller expects, atomically against other processes. :class:`Memory` above it checks what
    goes in (scope names, titles, bodies without surrounding whitespace, versions). Run
    ``agentkit_core.testing.MemoryStoreConformance`` against an implementation.
    """

    #: The store's URL with any password masked (``mask_url``).
    url: str

    async def scopes(self) -> list[str]:
        """The scopes that hold at least one entry, sorted."""
        ...

    async def entries(self, scope: str) -> MemoryListing:
        """Every entry of ``scope`` sorted by title; an unreadable one goes in ``corrupt``."""
        ...

    async def get(self, scope: str, title: str) -> MemoryEntry | None:
        """The entry, or None; :class:`CorruptMemoryEntry` when it is there but unreadable."""
        ...

    async def forgotten(self, scope: str, title: str) -> int:
        """The version the key was forgotten at; 0 when it was never written or holds an entry."""
        ...

    async def put(self, entry: MemoryEntry, expected: int) -> bool:
        """Write ``entry`` if the stored version of its key is ``expected``.

        The stored version is the entry's, or the one the key was forgotten at (0: the key was
        never written). ``entry.version`` is ``expected + 1``. False, writing nothing, when the
        stored version is another (an unreadable version counts as another).
        """
        ...

    async def delete(self, scope: str, title: str, expected: int | None) -> bool:
        """Forget the entry if its version is ``expected``; False, changing nothing, else.

        The key is left forgotten at the entry's version plus one (:meth:`forgotten`), never
        free to start again from 1. ``expected=None`` forgets the entry whatever its version,
        an unreadable one too; False when there is none.
        """
        ...

    async def query(
        self, text: str, k: int, scopes: Sequence[str] | None = None
    ) -> list[MemoryHit]:
        """At most ``k`` live entries best matching ``text``, best first, with their scores.

        Full-text search over title and body, among ``scopes`` (every scope when None). Only
        the :func:`query_terms` of ``text`` count, an entry holding any of them may be found:
        text without one finds nothing, and no text is a syntax error of the store's. A write
        is found by the next query, a forgotten entry never.
        """
        ...

    async def aclose(self) -> None:
        """Release files, connections and threads; closing twice is harmless."""
        ...


# ---------------------------------------------------------------------- checking what goes in


def check_scope(scope: object, where: str = "scope") -> str:
    """``scope`` when it is a scope name: 1 to 64 of a-z, 0-9, ``_`` and ``-``, from a-z0-9."""
    if isinstance(scope, str) and _SCOPE.fullmatch(scope):
        return scope
    raise ConfigError(
        f"{where} {scope!r} is not a scope name: 1 to 64 lower-case letters, digits, '_' or "
        "'-', starting with a letter or digit (such as 'user' or 'project')",
        value=scope,
        source=where,
    )


def check_title(title: object, where: str = "title") -> str:
    """``title`` as stored: NFC, without surrounding blanks, 1 to 100 characters, one line."""
    if not isinstance(title, str):
        raise ConfigError(f"{where} must be a string, got {title!r}", value=title, source=where)
    text = unicodedata.normalize("NFC", title).strip()
    bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp")), None)
    if not text or len(text) > MAX_TITLE or bad is not None:
        problem = (
            "is empty"
            if not text
            else f"has {len(text)} characters"
            if len(text) > MAX_TITLE
            else f"holds the control character {bad!r}"
        )
        raise ConfigError(
            f"{where} {title!r} {problem}; a title is one line of 1 to {MAX_TITLE} characters",
            value=title,
            source=where,
        )
    return text


def title_key(title: str) -> str:
    """``title`` as a reader tells titles apart; no two titles of a scope share one.

    NFKC, hidden characters dropped, casefolded (then NFKC again), blank runs one space.
    """
    text = "".join(c for c in unicodedata.normalize("NFKC", title) if not hidden(c))
    return " ".join(unicodedata.normalize("NFKC", text.casefold()).split())


def check_new_title(title: str, scope: str, existing: Sequence[str]) -> None:
    """Refuse ``title`` as a new key of ``scope`` (titles ``existing``) that passes for another.

    Refused: the :func:`title_key` of an existing title (it differs only in width, case,
    compatibility forms, invisible characters or blank runs; the error names both), a hidden
    character (a zero-width space, joiner, bidi control, variation selector...), or text that
    reads as the marker entries are framed with.
    """
    key = title_key(title)
    other = next((t for t in existing if t != title and title_key(t) == key), None)
    if other is not None:
        raise ConfigError(
            f"title {title!r} looks like {other!r}, already in scope {scope!r}: the two are "
            "the same once width, case, compatibility forms and invisible characters are set "
            f"aside; to change that entry save it as {other!r}, else choose a title that reads "
            "differently",
            value=title,
            source="title",
        )
    unseen = [c for c in title if hidden(c)]
    if unseen:
        names = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() for c in unseen)
        raise ConfigError(
            f"title {title!r} holds invisible characters ({names}); a title must read as it "
            "is stored: write it without them",
            value=title,
            source="title",
        )
    if escape_untrusted(title) is not title:
        raise ConfigError(
            f"title {title!r} reads as the UNTRUSTED marker that memory entries are framed "
            "with; choose another title",
            value=title,
            source="title",
        )


def check_body(body: object, max_bytes: int, where: str = "body") -> str:
    """``body`` as stored: Unix line ends, no surrounding blanks, within ``max_bytes``."""
    if not isinstance(body, str):
        raise ConfigError(f"{where} must be a string, got {body!r}", value=body, source=where)
    text = body.replace("\r\n", "\n").strip()
    if not text:
        raise ConfigError(
            f"{where} is empty; an entry needs some text (to remove one, forget it)",
            value=body,
            source=where,
        )
    if "\x00" in text:
        raise ConfigError(f"{where} holds a NUL character", value=body, source=where)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ConfigError(
            f"{where} is not valid text ({exc.reason} at position {exc.start})",
            value=body,
            source=where,
        ) from None
    if size > max_bytes:
        raise ConfigError(
            f"{where} is {size} bytes of UTF-8, over the bound of {max_bytes} bytes per entry; "
            "shorten it, or split it into several entries",
            value=size,
            source=where,
        )
    return text


def check_k(k: object, where: str) -> int:
    """``k`` when it is a whole number of entries from 1; ConfigError naming ``where`` else."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(
            f"{where} {k!r} must be a whole number of entries from 1, such as 5",
            value=k,
            source=where,
        )
    return k


def utc_stamp() -> str:
    """The time written on an entry: now, ISO-8601 in UTC."""
    return datetime.now(UTC).isoformat()


# What str.splitlines breaks a line at.
_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
# What may stand in a frame's source as it is; anything else is shown quoted.
_PLAIN = re.compile(r"[A-Za-z0-9_.:@/+-]{1,200}")


def _plain(value: str) -> str:
    """``value`` fit for a line of ours: as it is, or quoted, no line break or angle bracket."""
    if _PLAIN.fullmatch(value):
        return value
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e")


def entry_source(entry: MemoryEntry) -> str:
    """Where ``entry`` came from, as recorded: its scope, version, day and writer."""
    day = entry.time.date().isoformat()
    who = (
        f"by a run of session {_plain(entry.session)}"
        if entry.session
        else "with no session recorded (by a person, or a run without one)"
    )
    return f"memory scope {_plain(entry.scope)}, version {entry.version}, written {day} {who}"


def render_entry(entry: MemoryEntry) -> str:
    """``entry`` as the model reads it: a ``### title`` line, then its body framed as data.

    The frame (:func:`frame_untrusted`, the one tool output gets) says where the entry came
    from, and its nonce is keyed on the whole entry, so a rendering is the same while the
    entry is. No body can end its frame or add a line of the block's own.
    """
    source = entry_source(entry)
    nonce = keyed_nonce(f"{source}\n{entry.title}\n{entry.body}")
    title = entry.title
    # a title made by hand (a file's name) may hold a line break: it is shown quoted
    title = json.dumps(title) if any(c in _BREAKS for c in title) else escape_untrusted(title)
    return f"### {title}\n{frame_untrusted(entry.body, source=source, nonce=nonce)}"


#: The columns of a database row holding an entry, in :func:`stored_entry`'s order.
ENTRY_COLUMNS: Final = "scope, title, body, version, updated_at, session"


def stored_entry(row: Sequence[object], store: str) -> MemoryEntry:
    """The entry a database row (:data:`ENTRY_COLUMNS`) holds, checked as a store reads it.

    A row edited into something else (a version that is no whole number from 1, an empty
    body, a time that does not parse) is a :class:`CorruptMemoryEntry` naming the title and
    ``store``.
    """
    scope, title, body, version, updated_at, session = row
    problem = ""
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        problem = f"its version {version!r} is not a whole number from 1"
    elif not isinstance(body, str) or not body.strip():
        problem = f"its body {body!r} is no text"
    elif not isinstance(session, str) or not isinstance(updated_at, str):
        problem = f"its updated time {updated_at!r} or session {session!r} is no text"
    else:
        try:
            datetime.fromisoformat(updated_at)
        except ValueError:
            problem = f"its updated time {updated_at!r} is not an ISO-8601 time"
    if problem:
        raise CorruptMemoryEntry(
            f"memory entry {title!r} of scope {scope!r} in {store} cannot be read: {problem}; "
            "forget it (agentkit memory forget) and save it again",
            scope=str(scope),
            name=str(title),
        )
    return MemoryEntry(str(scope), str(title), body, version, updated_at, session)  # type: ignore[arg-type]


class EntryRows:
    """Reads a scope's database rows into a listing, reusing the entries of unchanged rows.

    The memory block reads every scope before each model call; a row that is exactly what it
    was last time keeps its entry (no check again, the same object, so the block's render of
    it is reused too). One per store.
    """

    def __init__(self, store: str) -> None:
        self.store = store
        self._seen: dict[str, dict[object, tuple[tuple[object, ...], MemoryEntry]]] = {}

    def listing(self, scope: str, rows: Sequence[Sequence[object]]) -> MemoryListing:
        """The listing of ``scope`` from its rows (:data:`ENTRY_COLUMNS`), in their order."""
        before = self._seen.get(scope, {})
        now: dict[object, tuple[tuple[object, ...], MemoryEntry]] = {}
        entries: list[MemoryEntry] = []
        corrupt: list[CorruptMemoryEntry] = []
        for raw in rows:
            row = tuple(raw)
            kept = before.get(row[1])
            if kept is not None and kept[0] == row:
                entry = kept[1]
            else:
                try:
                    entry = stored_entry(row, self.store)
                except CorruptMemoryEntry as exc:
                    corrupt.append(exc)
                    continue
            now[row[1]] = (row, entry)
            entries.append(entry)
        self._seen[scope] = now
        return MemoryListing(tuple(entries), tuple(corrupt))


# ---------------------------------------------------------------------- the facade


class Memory:
    """Read, write and search a :class:`MemoryStore`, checking everything before it is written.

    Open one with ``await open_memory(url)`` or wrap a store: ``Memory(store)``. Every write
    names the version it is based on (``base``: the version its writer saw, 0 for none); when
    the entry has moved on, nothing is written and :class:`MemoryConflict` carries the entry as
    it is now. ``max_entry_bytes`` bounds a body.
    """

    def __init__(self, store: MemoryStore, *, max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES):
        if not isinstance(store, MemoryStore):
            raise ConfigError(
                f"Memory(store) needs a MemoryStore (url, scopes, entries, get, forgotten, put, "
                f"delete, query, aclose), got {store!r}; open one with open_memory_store(url)",
                value=store,
                source="Memory",
            )
        if isinstance(max_entry_bytes, bool) or not isinstance(max_entry_bytes, int):
            raise ConfigError(
                f"max_entry_bytes must be a whole number of bytes, got {max_entry_bytes!r}",
                value=max_entry_bytes,
                source="max_entry_bytes",
            )
        if max_entry_bytes < 1:
            raise ConfigError(
                f"max_entry_bytes={max_entry_bytes} must be at least 1",
                value=max_entry_bytes,
                source="max_entry_bytes",
            )
        self.store = store
        self.max_entry_bytes = max_entry_bytes

    # ------------------------------------------------------------------ reading

    async def scopes(self) -> list[str]:
        """The scopes that hold entries."""
        return await self.store.scopes()

    async def entries(self, scope: str) -> MemoryListing:
        """The scope's entries by title, and the unreadable ones by name."""
        return await self.store.entries(check_scope(scope))

    async def get(self, scope: str, title: str) -> MemoryEntry | None:
        """The entry, or None; :class:`CorruptMemoryEntry` when it cannot be read."""
        scope, title = check_scope(scope), check_title(title)
        found = await self.store.get(scope, title)
        if found is None and (stored := await self._stored_title(scope, title)) != title:
            found = await self.store.get(scope, stored)
        return found

    async def search(
        self, query: str, scopes: Sequence[str], *, limit: int = 10
    ) -> list[MemoryEntry]:
        """Entries of ``scopes`` holding every word of ``query`` (in title or body, any case).

        Plain text search: the entries with the most occurrences first, then in scope order and
        by title; at most ``limit``.
        """
        words = query.casefold().split() if isinstance(query, str) else []
        if not words:
            raise ConfigError(
                f"search query {query!r} has no words; give the words to look for",
                value=query,
                source="query",
            )
        found: list[tuple[int, int, str, MemoryEntry]] = []
        for rank, scope in enumerate(scopes):
            for entry in (await self.entries(scope)).entries:
                text = f"{entry.title}\n{entry.body}".casefold()
                hits = [text.count(w) for w in words]
                if all(hits):
                    found.append((-sum(hits), rank, entry.title, entry))
        found.sort(key=lambda f: f[:3])
        return [f[3] for f in found[:limit]]

    async def query(
        self, text: str, k: int = 5, scopes: Sequence[str] | None = None
    ) -> list[MemoryHit]:
        """The ``k`` entries of ``scopes`` (every scope when None) best matching ``text``.

        Ranked by the store's full-text search (:meth:`MemoryStore.query`), best first, each
        with its score and provenance; text with no words finds nothing.
        """
        check_k(k, "Memory.query(k=)")
        named = None if scopes is None else [check_scope(s) for s in scopes]
        if not query_terms(text):
            return []
        return await self.store.query(text, k, named)

    # ------------------------------------------------------------------ writing

    async def save(
        self, scope: str, title: str, body: str, *, base: int | None, session: str = ""
    ) -> MemoryEntry:
        """Create or replace the entry, based on version ``base`` (0: no entry was there).

        ``base=None`` writes over whatever is there (for a person editing, who has just read
        it); a writer that showed someone the entry passes the version it showed. Returns the
        entry as stored. A title the scope does not hold yet is checked by
        :func:`check_new_title`: one that could pass for another is refused.
        """
        scope, title = check_scope(scope), check_title(title)
        text = check_body(body, self.max_entry_bytes)
        if not base:  # perhaps a new title: refused when it passes for another
            listing = await self.store.entries(scope)
            titles = [e.title for e in listing.entries]
            if title not in titles:
                stored = stored_title(title, titles)
                if stored == title:
                    check_new_title(title, scope, titles)
                title = stored
        expected = base or 0
        while True:
            if base is None:
                expected = await self._version(scope, title)
            entry = MemoryEntry(scope, title, text, expected + 1, utc_stamp(), session)
            if await self.store.put(entry, expected):
                return entry
            if base == 0 and expected == 0:
                # The key is taken. A writer that saw no entry writes over a forgotten one,
                # never a live one; asked only now, so a new key costs one write.
                expected = await self.store.forgotten(scope, title)
                if expected:
                    continue
            if base and (stored := await self._stored_title(scope, title)) != title:
                title = stored  # the entry's key as written around this facade
                continue
            if base is not None:
                raise await self._conflict(scope, title, base, "saving")

    async def patch(
        self,
        scope: str,
        title: str,
        old: str,
        new: str,
        *,
        base: int | None,
        session: str = "",
    ) -> MemoryEntry:
        """Replace the one occurrence of ``old`` in the entry's body with ``new``.

        ``old`` must occur exactly once (twice is ambiguous: quote more of the text). Based on
        ``base`` as :meth:`save` is.
        """
        scope, title = check_scope(scope), check_title(title)
        current = await self.store.get(scope, title)
        if current is None and (stored := await self._stored_title(scope, title)) != title:
            title, current = stored, await self.store.get(scope, stored)
        if current is None and base:
            raise self._moved(None, scope, title, base, "patching")
        if current is None:
            raise ConfigError(
                f"no entry {title!r} in scope {scope!r} to patch; save it instead",
                value=title,
                source="title",
            )
        if base is not None and current.version != base:
            raise self._moved(current, scope, title, base, "patching")
        return await self.save(
            scope, title, patched(current.body, old, new), base=current.version, session=session
        )

    async def forget(self, scope: str, title: str, *, base: int | None) -> MemoryEntry | None:
        """Remove the entry, based on version ``base``; returns the entry that was removed.

        ``base=None`` removes whatever is there, an unreadable entry too (returning None for
        one that could not be read).
        """
        scope, title = check_scope(scope), check_title(title)
        while True:
            try:
                current = await self.store.get(scope, title)
            except CorruptMemoryEntry:
                if base is not None:
                    raise
                if await self.store.delete(scope, title, None):
                    return None
                continue
            if current is None:
                if (stored := await self._stored_title(scope, title)) != title:
                    title = stored  # the entry's key as written around this facade
                    continue
                if base:
                    raise self._moved(None, scope, title, base, "forgetting")
                raise ConfigError(
                    f"no entry {title!r} in scope {scope!r} to forget",
                    value=title,
                    source="title",
                )
            if base is not None and current.version != base:
                raise self._moved(current, scope, title, base, "forgetting")
            if await self.store.delete(scope, title, current.version):
                return current
            if base is not None:
                raise await self._conflict(scope, title, base, "forgetting")

    # ------------------------------------------------------------------ lifecycle

    async def aclose(self) -> None:
        """Close the store underneath."""
        await self.store.aclose()

    async def __aenter__(self) -> Memory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<Memory {self.store.url}>"

    # ------------------------------------------------------------------ internals

    async def _version(self, scope: str, title: str) -> int:
        try:
            current = await self.store.get(scope, title)
        except CorruptMemoryEntry as exc:
            raise CorruptMemoryEntry(
                f"{exc}; forget it (or fix it by hand) before writing it again",
                scope=exc.scope,
                name=exc.name,
            ) from exc
        return await self.store.forgotten(scope, title) if current is None else current.version

    async def _stored_title(self, scope: str, title: str) -> str:
        """``title`` as ``scope`` stores it, asked when it holds no entry under ``title``."""
        return stored_title(title, [e.title for e in (await self.store.entries(scope)).entries])

    async def _conflict(self, scope: str, title: str, base: int, action: str) -> MemoryConflict:
        return self._moved(await self.store.get(scope, title), scope, title, base, action)

    def _moved(
        self, current: MemoryEntry | None, scope: str, title: str, base: int, action: str
    ) -> MemoryConflict:
        message = moved(current, scope, title, base, action)
        return MemoryConflict(message, scope=scope, title=title, base=base, current=current)


def stored_title(title: str, titles: Sequence[str]) -> str:
    """The one of ``titles`` that :func:`check_title` reads as ``title``; else ``title``.

    An entry written around the facade (a file saved by hand under a decomposed name, a row
    with blanks around its title) keeps its title as written, which ``check_title`` makes
    another: that stored title is the entry's key. ``title`` when no other, or several, read
    so (each stays its own).
    """
    alike = [t for t in titles if t != title and _reads_as(t) == title]
    return alike[0] if len(alike) == 1 else title


def _reads_as(title: str) -> str | None:
    try:
        return check_title(title)
    except ConfigError:
        return None


def patched(body: str, old: str, new: str) -> str:
    """``body`` with the one occurrence of ``old`` replaced by ``new``."""
    if not isinstance(old, str) or not old:
        raise ConfigError("old must be the non-empty text to replace", value=old, source="old")
    if not isinstance(new, str):
        raise ConfigError(f"new must be a string, got {new!r}", value=new, source="new")
    count = body.count(old)
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        raise ConfigError(
            f"the text to replace {old!r} {where} in the entry; quote exactly one passage of it "
            "(longer, to make it unique)",
            value=old,
            source="old",
        )
    return body.replace(old, new, 1)


def moved(current: MemoryEntry | None, scope: str, title: str, base: int, action: str) -> str:
    """Why a write based on version ``base`` was refused, with the entry's current text."""
    seen = f"version {base}" if base else "no entry"
    if current is None:
        return (
            f"{action} {title!r} in scope {scope!r} was refused: it was based on {seen}, but "
            "the entry has been forgotten since; save it again if it still matters"
        )
    by = f" by session {current.session}" if current.session else ""
    return (
        f"{action} {title!r} in scope {scope!r} was refused: it was based on {seen}, but the "
        f"entry is at version {current.version} (written {current.updated_at}{by}). It reads "
        f"now:\n{render_entry(current)}\nBase your change on this text and write it again."
    )
