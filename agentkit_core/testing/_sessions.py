"""The session-store conformance suite: what every :class:`SessionStore` must do.

A store plugin's test subclasses :class:`SessionStoreConformance` and opens a fresh store::

    class TestSqliteConformance(SessionStoreConformance):
        async def make_store(self, tmp_path):
            url = f"sqlite:///{tmp_path}/sessions.db"
            return await open_session_store(url, manager=PluginManager())

The suite closes the store after each test. A store that needs other fixtures (a throwaway
server) overrides the ``store`` fixture itself instead: an async generator fixture yielding an
open store. Every test makes fresh sessions, and only :meth:`test_listing` reads the whole
store's list (checking only its own sessions in it), so one shared database serves them all.
The tests drive the store through :class:`Sessions`, as every caller does, and check the port's
contract underneath. Requires pytest (pytest-asyncio in auto mode) and hypothesis.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import AsyncIterator
from collections.abc import Collection
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from .._blobs import BlobStore
from .._content import ImagePart
from .._content import TextPart
from .._errors import ConfigError
from .._errors import EncodingError
from .._errors import SecretTaintError
from .._errors import SessionConflict
from .._errors import SessionNotFound
from .._errors import StorageError
from .._messages import Message
from .._messages import ToolCall
from .._sessions import ITEM_KINDS
from .._sessions import SESSION_SCHEMA
from .._sessions import NewItem
from .._sessions import SessionHeader
from .._sessions import SessionItem
from .._sessions import Sessions
from .._sessions import SessionStore
from .._sessions import new_id
from .._urls import mask_url
from ._names import given_name_pairs


def user(text: str) -> NewItem:
    """A ``user`` item whose body is ``{"text": text}``."""
    return NewItem("user", {"text": text})


def ids(items: list[SessionItem]) -> list[str]:
    """The ids of ``items``, in order."""
    return [i.id for i in items]


async def unchanged(sessions: Sessions, session_id: str, before: list[SessionItem]) -> None:
    """The session's path is still exactly ``before``: ids, kinds and bodies."""
    after = await sessions.path(session_id)
    assert ids(after) == ids(before)
    assert [(i.kind, i.body) for i in after] == [(i.kind, i.body) for i in before]
    assert (await sessions.leaf(session_id)).id == before[-1].id


# The store fixture is shared by the examples of a @given test: each makes its own sessions.
_SHARED = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
_SHARED.append(HealthCheck.differing_executors)  # the suite runs once per subclass, by design


@dataclass
class _Model:
    """What the store should hold: each session's item ids, and each item's session."""

    chains: dict[str, list[str]] = field(default_factory=dict)
    base: dict[str, str | None] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)
    parent: dict[str, str | None] = field(default_factory=dict)

    def add(self, items: list[SessionItem]) -> None:
        for item in items:
            self.chains.setdefault(item.session_id, []).append(item.id)
            self.owner[item.id] = item.session_id
            self.parent[item.id] = item.parent

    def path(self, item_id: str) -> list[str]:
        path: list[str] = []
        current: str | None = item_id
        while current is not None:
            path.append(current)
            current = self.parent[current]
        return path[::-1]


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("create")),
        st.tuples(st.just("append"), st.integers(0, 50), st.integers(1, 3)),
        st.tuples(st.just("stale"), st.integers(0, 50), st.integers(0, 50)),
        st.tuples(st.just("fork"), st.integers(0, 50), st.integers(0, 50)),
        st.tuples(st.just("fork_elsewhere"), st.integers(0, 50), st.integers(0, 50)),
    ),
    min_size=1,
    max_size=25,
)


class SessionStoreConformance:
    """Contract tests for a session store; subclass and define :meth:`make_store`."""

    async def make_store(self, tmp_path: Path) -> SessionStore:
        raise NotImplementedError("define make_store(tmp_path) in the conformance subclass")

    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[SessionStore]:
        made = await self.make_store(tmp_path)
        try:
            yield made
        finally:
            await made.aclose()

    @pytest.fixture
    def sessions(self, store: SessionStore) -> Sessions:
        return Sessions(store)

    # ------------------------------------------------------------------ shape

    async def test_is_a_store_with_a_safe_url(self, store: SessionStore) -> None:
        assert isinstance(store, SessionStore)
        assert isinstance(store.url, str) and "://" in store.url
        assert mask_url(store.url) == store.url, "the url must not show a password"

    async def test_create_then_read_back(self, sessions: Sessions) -> None:
        start = datetime.now(UTC) - timedelta(seconds=5)
        header = SessionHeader(cwd="/srv/app", model="openai:gpt-4o-mini", metadata={"k": [1]})
        head = await sessions.create(header)
        assert head.kind == "header" and head.parent is None
        assert head.body == {**header.to_body(), "schema": SESSION_SCHEMA}
        assert SessionHeader.from_body(head.body) == header
        leaf = await sessions.leaf(head.session_id)
        assert (leaf.id, leaf.kind, leaf.body) == (head.id, "header", head.body)
        assert start <= leaf.time <= datetime.now(UTC) + timedelta(seconds=5)
        assert leaf.time.tzinfo is not None
        info = await sessions.info(head.session_id)
        assert (info.id, info.header.id, info.leaf_id, info.count) == (
            head.session_id,
            head.id,
            head.id,
            1,
        )
        assert info.base_session is None and info.base_item is None
        assert ids(await sessions.path(head.session_id)) == [head.id]

    async def test_append_extends_the_path_and_moves_the_leaf(self, sessions: Sessions) -> None:
        head = await sessions.create()
        sid = head.session_id
        first = await sessions.append(sid, head.id, user("one"))
        more = await sessions.append(
            sid,
            first[-1].id,
            [NewItem("response", {"text": "two"}), NewItem("tool_call", {"name": "ls"})],
        )
        assert [i.parent for i in first + more] == [head.id, first[0].id, more[0].id]
        assert all(i.session_id == sid for i in first + more)
        path = await sessions.path(sid)
        assert ids(path) == ids([head, *first, *more])
        assert [i.kind for i in path] == ["header", "user", "response", "tool_call"]
        assert path[1].body == {"text": "one"}
        assert (await sessions.leaf(sid)).id == more[-1].id
        info = await sessions.info(sid)
        assert (info.count, info.leaf_id) == (4, more[-1].id)
        assert ids(await sessions.path(sid, to=first[0].id)) == [head.id, first[0].id]
        got = await sessions.item(sid, more[0].id)
        assert (got.kind, got.body, got.parent) == ("response", {"text": "two"}, first[0].id)

    async def test_bodies_round_trip(self, sessions: Sessions) -> None:
        head = await sessions.create()
        when = datetime(2026, 12, 3, 7, 0, 1, 250, tzinfo=UTC)
        body = {
            "message": Message.assistant("calling", [ToolCall("c1", "ls", '{"d": "/"}')]),
            "when": when,
            "blob": b"\x00\xff",
            "nested": {"list": [1, 2.5, None, True, "x"], "empty": {}},
        }
        for value in (body, None, "text", 42, [1, [2, [3]]]):
            leaf = await sessions.leaf(head.session_id)
            [item] = await sessions.append(head.session_id, leaf.id, NewItem("user", value))
            got = await sessions.item(head.session_id, item.id)
            assert got.body == value

    async def test_every_item_kind_round_trips(self, sessions: Sessions) -> None:
        """Each kind of :data:`ITEM_KINDS` after the header (a ``handoff`` among them)."""
        head = await sessions.create()
        batch = [
            NewItem(kind, {"kind": kind, "from": "triage", "to": "billing", "call": "c1"})
            for kind in ITEM_KINDS
            if kind != "header"
        ]
        await sessions.append(head.session_id, head.id, batch)
        path = await sessions.path(head.session_id)
        assert [(i.kind, i.body) for i in path[1:]] == [(n.kind, n.body) for n in batch]

    async def test_reads_are_independent_copies(self, sessions: Sessions) -> None:
        head = await sessions.create()
        [item] = await sessions.append(head.session_id, head.id, NewItem("user", {"l": [1]}))
        item.body["l"].append(2)
        first = await sessions.item(head.session_id, item.id)
        first.body["l"].append(3)
        again = await sessions.item(head.session_id, item.id)
        assert again.body == {"l": [1]}

    async def test_unicode_and_large_bodies(self, sessions: Sessions) -> None:
        sid = f"sessiön-{uuid.uuid4().hex}-🙂"
        head = await sessions.create(
            {"cwd": "/häus/名前", "metadata": {"ключ": "ñ ✓"}}, session_id=sid
        )
        text = 'héllo wörld — 你好 — مرحبا — 🙂🚀 \t\n"\\'
        big = {"blob": "x" * 1_000_000, "rows": [{"i": i, "s": text} for i in range(500)]}
        items = await sessions.append(sid, head.id, [user(text), NewItem("tool_result", big)])
        path = await sessions.path(sid)
        assert ids(path) == ids([head, *items])
        assert path[0].body["cwd"] == "/häus/名前"
        assert path[1].body == {"text": text} and path[2].body == big
        assert (await sessions.info(sid)).id == sid

    async def test_a_message_with_image_bytes_round_trips(
        self, store: SessionStore, sessions: Sessions
    ) -> None:
        """Part bytes come back equal; a store that keeps blobs holds them once, by sha256."""
        png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
        message = Message.user((TextPart("look"), ImagePart(data=png, media_type="image/png")))
        head = await sessions.create()
        turns = [NewItem("user", {"message": message}) for _ in range(3)]
        await sessions.append(head.session_id, head.id, turns)
        path = await sessions.path(head.session_id)
        assert [item.body["message"] for item in path[1:]] == [message] * 3
        assert path[1].body["message"].content[1].data == png
        if isinstance(store, BlobStore):
            digest = hashlib.sha256(png).hexdigest()
            raw = await store.path(path[-1].id)
            assert all(digest in i.body_json and "iVBORw0KGgo" not in i.body_json for i in raw[1:])
            assert await store.get_blobs([digest, "0" * 64]) == {digest: png}

    async def test_a_path_reads_its_blobs_in_one_request(self, store: SessionStore) -> None:
        """However many items name blobs, reading the path asks the store for them once."""
        counting = _CountingBlobs(store) if isinstance(store, BlobStore) else None
        sessions = Sessions(counting or store)  # type: ignore[arg-type]
        head = await sessions.create()
        turns = [
            NewItem(
                "user",
                {
                    "message": Message.user(
                        (ImagePart(data=bytes([i]) * 64, media_type="image/png"),)
                    )
                },
            )
            for i in range(5)
        ]
        await sessions.append(head.session_id, head.id, turns)
        path = await sessions.path(head.session_id)
        assert [item.body["message"].content[0].data for item in path[1:]] == [
            bytes([i]) * 64 for i in range(5)
        ]
        if counting is not None:  # a store without blobs keeps the bytes inline: no request
            assert counting.reads == 2  # the leaf, then the path: not one request per item

    # ------------------------------------------------------------------ the compare-and-set

    async def test_appending_after_an_old_item_is_a_conflict(self, sessions: Sessions) -> None:
        head = await sessions.create()
        sid = head.session_id
        [one] = await sessions.append(sid, head.id, user("one"))
        before = await sessions.path(sid)
        with pytest.raises(SessionConflict, match=r"moved on") as info:
            await sessions.append(sid, head.id, [user("late"), user("later")])
        err = info.value
        assert (err.session_id, err.after, err.leaf) == (sid, head.id, one.id)
        assert sid in str(err) and head.id in str(err) and one.id in str(err)
        await unchanged(sessions, sid, before)

    async def test_append_now_is_the_append_at_once_or_nothing(self, sessions: Sessions) -> None:
        """``append_now`` is the append, compare-and-set too, on a store that never waits.

        On any other store it is None, with nothing written: the caller awaits the append.
        """
        head = await sessions.create()
        sid = head.session_id
        made = sessions.append_now(sid, head.id, [user("one"), user("two")])
        if sessions._append_now is None:
            assert made is None and ids(await sessions.path(sid)) == [head.id]
            return
        assert made is not None and ids(await sessions.path(sid)) == ids([head, *made])
        before = await sessions.path(sid)
        assert sessions.append_now(sid, head.id, user("late")) is None  # the leaf moved on
        with pytest.raises(EncodingError, match=r"item 2 of 2"):
            sessions.append_now(sid, made[-1].id, [user("ok"), NewItem("user", float("nan"))])
        await unchanged(sessions, sid, before)

    async def test_an_item_id_taken_refuses_the_batch_and_loses_nothing(
        self, sessions: Sessions
    ) -> None:
        head = await sessions.create()
        sid = head.session_id
        taken = f"i-{uuid.uuid4().hex}"
        [one] = await sessions.append(sid, head.id, NewItem("user", "one", id=taken))
        before = await sessions.path(sid)
        again = f"j-{uuid.uuid4().hex}"
        for batch in ([NewItem("user", "two", id=taken)], [NewItem("user", 2, id=again)] * 2):
            with pytest.raises(SessionConflict, match=r"an id given to one is taken"):
                await sessions.append(sid, one.id, batch)
            await unchanged(sessions, sid, before)
        assert (await sessions.item(sid, taken)).body == "one"

    async def test_a_taken_session_id_is_a_conflict(self, sessions: Sessions) -> None:
        sid = f"s-{uuid.uuid4().hex}"
        head = await sessions.create({"model": "a"}, session_id=sid)
        with pytest.raises(SessionConflict, match=r"already exists") as info:
            await sessions.create({"model": "b"}, session_id=sid)
        assert info.value.session_id == sid
        path = await sessions.path(sid)
        assert ids(path) == [head.id] and path[0].body["model"] == "a"

    async def test_concurrent_appends_after_one_leaf_have_one_winner(
        self, sessions: Sessions
    ) -> None:
        head = await sessions.create()
        sid = head.session_id
        outcomes = await asyncio.gather(
            *(sessions.append(sid, head.id, [user(f"w{i}"), user(f"w{i}b")]) for i in range(12)),
            return_exceptions=True,
        )
        won = [o for o in outcomes if isinstance(o, list)]
        lost = [o for o in outcomes if not isinstance(o, list)]
        assert len(won) == 1, outcomes
        assert all(isinstance(e, SessionConflict) for e in lost), lost
        assert all(e.leaf == won[0][-1].id for e in lost if isinstance(e, SessionConflict))
        path = await sessions.path(sid)
        assert ids(path) == ids([head, *won[0]])  # the winner's pair, nothing interleaved
        assert (await sessions.info(sid)).count == 3

    async def test_writers_that_follow_the_leaf_all_land_in_order(self, sessions: Sessions) -> None:
        head = await sessions.create()
        sid = head.session_id

        async def writer(name: str) -> list[str]:
            written: list[str] = []
            while len(written) < 5:
                leaf = await sessions.leaf(sid)
                try:
                    new = await sessions.append(sid, leaf.id, [user(f"{name}{len(written)}")])
                except SessionConflict:
                    continue
                written.append(new[0].body["text"])
            return written

        results = await asyncio.gather(*(writer(n) for n in "abcd"))
        path = await sessions.path(sid)
        assert len(path) == 21
        texts = [i.body["text"] for i in path[1:]]
        for name, written in zip("abcd", results, strict=True):
            assert [t for t in texts if t.startswith(name)] == written  # each writer in order
        assert all(b.parent == a.id for a, b in pairwise(path))

    # ------------------------------------------------------------------ refused before writing

    async def test_a_batch_is_all_or_nothing(self, sessions: Sessions) -> None:
        head = await sessions.create()
        sid = head.session_id
        before = await sessions.path(sid)
        bad_batches: list[tuple[list[NewItem], type[Exception], str]] = [
            (
                [user("ok"), NewItem("user", {"x": [1, object()]})],
                EncodingError,
                r'body\["x"\]\[1\]',
            ),
            ([user("ok"), NewItem("user", "secret", tainted=True)], SecretTaintError, "tainted"),
            ([user("ok"), NewItem("no such kind", {})], ConfigError, "unknown session item kind"),
            ([user("ok"), NewItem("user", float("nan"))], EncodingError, r"body"),
        ]
        for batch, error, message in bad_batches:
            with pytest.raises(error, match=message) as info:
                await sessions.append(sid, head.id, batch)
            assert "item 2 of 2" in str(info.value) or error is ConfigError
        with pytest.raises(ConfigError, match="nothing to append"):
            await sessions.append(sid, head.id, [])
        with pytest.raises(ConfigError, match=r"give NewItem"):
            await sessions.append(sid, head.id, [("user", "x")])  # type: ignore[list-item]
        await unchanged(sessions, sid, before)
        assert (await sessions.info(sid)).count == 1

    async def test_the_encoding_error_names_the_path_and_the_session(
        self, sessions: Sessions
    ) -> None:
        head = await sessions.create()
        with pytest.raises(EncodingError) as info:
            await sessions.append(head.session_id, head.id, NewItem("tool_result", {"r": {1j}}))
        assert info.value.path == 'body["r"][0]'
        assert head.session_id in str(info.value) and "nothing was written" in str(info.value)

    async def test_namespaced_kinds_are_accepted(self, sessions: Sessions) -> None:
        head = await sessions.create()
        [item] = await sessions.append(head.session_id, head.id, NewItem("memory/manifest", {}))
        assert (await sessions.leaf(head.session_id)).kind == "memory/manifest" == item.kind
        for bad in ("", "User", "memory/", "/x", "a b/c", 3):
            with pytest.raises(ConfigError, match="unknown session item kind"):
                await sessions.append(head.session_id, item.id, NewItem(bad, {}))  # type: ignore[arg-type]

    # ------------------------------------------------------------------ forks

    async def test_fork_at_an_item_leaves_the_original_alone(self, sessions: Sessions) -> None:
        head = await sessions.create({"model": "first", "cwd": "/a"})
        sid = head.session_id
        items = await sessions.append(sid, head.id, [user("1"), user("2"), user("3")])
        before = await sessions.path(sid)
        fork = await sessions.fork(sid, at=items[0].id)
        assert fork.session_id != sid and fork.parent == items[0].id
        assert SessionHeader.from_body(fork.body).model == "first"  # the forked session's
        [mine] = await sessions.append(fork.session_id, fork.id, user("fork says"))
        path = await sessions.path(fork.session_id)
        assert ids(path) == [head.id, items[0].id, fork.id, mine.id]
        await unchanged(sessions, sid, before)
        info = await sessions.info(fork.session_id)
        assert (info.base_session, info.base_item, info.count) == (sid, items[0].id, 2)
        # the original can still grow; the fork does not see it
        [later] = await sessions.append(sid, items[-1].id, user("4"))
        assert ids(await sessions.path(fork.session_id)) == ids(path)
        assert (await sessions.leaf(sid)).id == later.id

    async def test_fork_defaults_to_the_leaf_and_takes_a_new_header(
        self, sessions: Sessions
    ) -> None:
        head = await sessions.create({"model": "a"})
        [one] = await sessions.append(head.session_id, head.id, user("1"))
        fork = await sessions.fork(head.session_id, header={"model": "b"}, new_id="my-fork")
        assert (fork.session_id, fork.parent) == ("my-fork", one.id)
        assert SessionHeader.from_body(fork.body).model == "b"
        with pytest.raises(SessionConflict, match="already exists"):
            await sessions.fork(head.session_id, new_id="my-fork")

    async def test_a_fork_of_a_fork_reads_through_both_bases(self, sessions: Sessions) -> None:
        head = await sessions.create({"model": "root"})
        [a] = await sessions.append(head.session_id, head.id, user("a"))
        f1 = await sessions.fork(head.session_id, at=a.id, header={"model": "f1"})
        [b] = await sessions.append(f1.session_id, f1.id, user("b"))
        f2 = await sessions.fork(f1.session_id, at=b.id)
        [c] = await sessions.append(f2.session_id, f2.id, user("c"))
        path = await sessions.path(f2.session_id)
        assert ids(path) == [head.id, a.id, f1.id, b.id, f2.id, c.id]
        assert [i.session_id for i in path] == [head.session_id] * 2 + [f1.session_id] * 2 + [
            f2.session_id
        ] * 2
        assert SessionHeader.from_body(f2.body).model == "f1"
        # forking at the header of a fork is allowed: it is that session's own item
        f3 = await sessions.fork(f1.session_id, at=f1.id)
        assert ids(await sessions.path(f3.session_id)) == [head.id, a.id, f1.id, f3.id]

    async def test_a_fork_at_an_item_of_another_session_is_refused(
        self, sessions: Sessions
    ) -> None:
        head = await sessions.create()
        [a] = await sessions.append(head.session_id, head.id, user("a"))
        fork = await sessions.fork(head.session_id, at=a.id)
        with pytest.raises(SessionNotFound, match=r"belongs to session") as info:
            await sessions.fork(fork.session_id, at=a.id)  # a is on its path, not its own
        assert info.value.session_id == fork.session_id and info.value.item_id == a.id
        assert head.session_id in str(info.value)
        other = await sessions.create()
        with pytest.raises(SessionNotFound, match=r"belongs to session"):
            await sessions.fork(other.session_id, at=a.id)
        assert (await sessions.info(other.session_id)).count == 1

    # ------------------------------------------------------------------ missing things

    async def test_a_missing_session_names_it_and_the_store(self, sessions: Sessions) -> None:
        missing = f"missing-{uuid.uuid4().hex}"
        url = sessions.store.url
        calls = [
            sessions.leaf(missing),
            sessions.info(missing),
            sessions.path(missing),
            sessions.fork(missing),
            sessions.append(missing, "x", user("hi")),
            sessions.item(missing, "x"),
        ]
        for call in calls:
            with pytest.raises(SessionNotFound) as info:
                await call
            assert f"no session {missing!r} in {url}" in str(info.value)
            assert (info.value.session_id, info.value.store) == (missing, url)
            assert isinstance(info.value, LookupError)

    async def test_a_missing_item_names_it_and_the_session(self, sessions: Sessions) -> None:
        head = await sessions.create()
        sid = head.session_id
        before = await sessions.path(sid)
        for call in (
            sessions.append(sid, "nope", user("x")),
            sessions.fork(sid, at="nope"),
            sessions.path(sid, to="nope"),
            sessions.item(sid, "nope"),
        ):
            with pytest.raises(SessionNotFound, match=rf"no item 'nope' in session {sid!r}"):
                await call
        other = await sessions.create()
        with pytest.raises(SessionNotFound, match=r"belongs to session"):
            await sessions.append(sid, other.id, user("x"))
        await unchanged(sessions, sid, before)
        assert await sessions.store.item("nope") is None
        assert await sessions.store.path("nope") == []
        assert await sessions.store.leaf("nope") is None
        assert await sessions.store.info("nope") is None

    async def test_bad_session_ids_and_headers_are_refused(self, sessions: Sessions) -> None:
        for bad in ("has space", "x" * 201, "tab\there", "nul\x00", "\udcc3\udca9"):
            with pytest.raises(ConfigError, match=r"session id"):
                await sessions.create(session_id=bad)
        with pytest.raises(ConfigError, match=r"unknown session header field\(s\) 'colour'"):
            await sessions.create({"colour": "blue"})
        with pytest.raises(ConfigError, match=r"cwd=3 must be a string"):
            await sessions.create({"cwd": 3})
        with pytest.raises(ConfigError, match=r"SessionHeader or a mapping"):
            await sessions.create("cwd=/")  # type: ignore[arg-type]

    @settings(max_examples=30, deadline=None, suppress_health_check=_SHARED)
    @given_name_pairs
    async def test_two_hostile_session_ids_never_meet(
        self, sessions: Sessions, pair: tuple[str, str]
    ) -> None:
        """Two different session ids (see ``_names``) keep apart, or one is refused."""
        tag = new_id()
        kept = {}
        for n, name in enumerate(pair):
            sid = tag + name
            try:
                head = await sessions.create({"model": f"m{n}"}, session_id=sid)
            except ConfigError:
                with pytest.raises((SessionNotFound, ConfigError, StorageError)):
                    await sessions.info(sid)
                continue
            [item] = await sessions.append(sid, head.id, user(f"in {n}"))
            kept[sid] = (n, head, item)
        listed = {i.id: i for i in await sessions.sessions() if i.id.startswith(tag)}
        assert sorted(listed) == sorted(kept)
        for sid, (n, head, item) in kept.items():
            assert ids(await sessions.path(sid)) == [head.id, item.id]
            info = await sessions.info(sid)
            assert (info.id, info.leaf_id, info.count) == (sid, item.id, 2)
            assert info.header.body["model"] == listed[sid].header.body["model"] == f"m{n}"
            assert (await sessions.store.leaf(sid)) == item
            fork = await sessions.fork(sid)
            assert (await sessions.info(fork.session_id)).base_session == sid

    # ------------------------------------------------------------------ listing and closing

    async def test_listing(self, sessions: Sessions) -> None:
        a = await sessions.create({"model": "a"})
        [one] = await sessions.append(a.session_id, a.id, user("1"))
        b = await sessions.fork(a.session_id, at=one.id)
        listed = {i.id: i for i in await sessions.sessions()}
        assert listed[a.session_id].count == 2 and listed[a.session_id].leaf_id == one.id
        assert listed[b.session_id].base_session == a.session_id
        assert listed[b.session_id].base_item == one.id
        assert listed[a.session_id].header.body["model"] == "a"
        order = [i.id for i in await sessions.sessions()]
        assert order.index(a.session_id) < order.index(b.session_id)
        times = [(i.header.created_at, i.id) for i in await sessions.sessions()]
        assert [datetime.fromisoformat(t) for t, _ in times] == sorted(
            datetime.fromisoformat(t) for t, _ in times
        )

    async def test_close_twice_is_harmless_and_a_closed_store_says_so(
        self, sessions: Sessions
    ) -> None:
        head = await sessions.create()
        await sessions.aclose()
        await sessions.aclose()  # and the fixture closes it a third time
        with pytest.raises(StorageError, match="closed"):
            await sessions.leaf(head.session_id)

    # ------------------------------------------------------------------ against a model

    @settings(max_examples=25, deadline=None, suppress_health_check=_SHARED)
    @given(ops=_OPS)
    async def test_random_appends_and_forks_match_a_simple_model(
        self, sessions: Sessions, ops: list[tuple[Any, ...]]
    ) -> None:
        model = _Model()
        head = await sessions.create()
        model.add([head])
        for op in ops:
            names = list(model.chains)
            sid = names[op[1] % len(names)] if len(op) > 1 else ""
            if op[0] == "create":
                model.add([await sessions.create()])
            elif op[0] == "append":
                leaf = model.chains[sid][-1]
                new = await sessions.append(sid, leaf, [user(str(i)) for i in range(op[2])])
                model.add(new)
            elif op[0] == "stale":
                chain = model.chains[sid]
                if len(chain) < 2:
                    continue
                old = chain[op[2] % (len(chain) - 1)]
                with pytest.raises(SessionConflict) as info:
                    await sessions.append(sid, old, user("stale"))
                assert (info.value.after, info.value.leaf) == (old, chain[-1])
            elif op[0] == "fork":
                chain = model.chains[sid]
                at = chain[op[2] % len(chain)]
                fork = await sessions.fork(sid, at=at)
                model.add([fork])
                model.base[fork.session_id] = sid
            else:  # fork_elsewhere: at an item of another session
                elsewhere = [i for i, s in model.owner.items() if s != sid]
                if not elsewhere:
                    continue
                with pytest.raises(SessionNotFound):
                    await sessions.fork(sid, at=elsewhere[op[2] % len(elsewhere)])
        for sid, chain in model.chains.items():
            assert (await sessions.leaf(sid)).id == chain[-1]
            assert ids(await sessions.path(sid)) == model.path(chain[-1])
            middle = chain[len(chain) // 2]
            assert ids(await sessions.path(sid, to=middle)) == model.path(middle)
            summary = await sessions.info(sid)
            assert (summary.count, summary.leaf_id, summary.base_session) == (
                len(chain),
                chain[-1],
                model.base.get(sid),
            )


class _CountingBlobs:
    """A store that counts its blob reads and passes everything to the store it wraps."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store
        self.reads = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    async def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        await self._store.put_blobs(blobs)  # type: ignore[attr-defined]

    async def get_blobs(self, hashes: Collection[str]) -> dict[str, bytes]:
        self.reads += 1
        found: dict[str, bytes] = await self._store.get_blobs(hashes)  # type: ignore[attr-defined]
        return found
