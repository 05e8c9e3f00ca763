"""The session seam in core: lookup by scheme, URL masking, items that do not decode."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC
from datetime import datetime
from typing import Any

import pytest
from agentkit_session_memory import MemorySessionStore
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import PluginError
from agentkit_core import PluginManager
from agentkit_core import Sessions
from agentkit_core import UnknownNameError
from agentkit_core import hookimpl
from agentkit_core import open_sessions
from agentkit_core.plugin import ITEM_KINDS
from agentkit_core.plugin import CorruptSessionItem
from agentkit_core.plugin import NewItem
from agentkit_core.plugin import SessionHeader
from agentkit_core.plugin import SessionItem
from agentkit_core.plugin import mask_url
from agentkit_core.plugin import open_session_store


def item(body_json: str = "{}", created_at: str = "2026-12-03T07:00:00+00:00") -> SessionItem:
    return SessionItem("s1", "i1", None, "user", body_json, created_at)


async def test_an_unknown_scheme_names_the_installed_ones_without_the_password(pm) -> None:
    with pytest.raises(
        UnknownNameError, match=r"no session store handles the scheme 'redis'"
    ) as info:
        await open_session_store("redis://u:hunter2@h/0", manager=pm)
    assert {"memory", "sqlite", "postgresql", "postgres"} <= set(info.value.available)
    assert "hunter2" not in str(info.value) and "redis://u:***@h/0" in str(info.value)
    with pytest.raises(ConfigError, match=r"'sessions.db' has no scheme"):
        await open_session_store("sessions.db", manager=pm)


async def test_the_scheme_is_looked_up_on_the_given_manager() -> None:
    class Bogus:
        AGENTKIT_NAME = "bogus"

        @hookimpl
        def agentkit_register_session_stores(self, register: Any) -> None:
            register("bogus", lambda url: {"url": url})

    manager = PluginManager(entry_points=False, plugins=[Bogus()])
    with pytest.raises(PluginError, match=r"plugin 'bogus' opened 'bogus://x' as \{'url'"):
        await open_session_store("bogus://x", manager=manager)
    with pytest.raises(UnknownNameError, match=r"installed schemes: bogus"):
        await open_sessions("memory://", manager=manager)


def test_sessions_needs_a_store() -> None:
    with pytest.raises(ConfigError, match=r"Sessions\(store\) needs a SessionStore .* got None"):
        Sessions(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:hunter2@h:5432/db", "postgresql://u:***@h:5432/db"),
        (
            "postgresql://u@h/db?password=hunter2&sslmode=off",
            "postgresql://u@h/db?password=***&sslmode=off",
        ),
        ("postgres://u:p%40ss@h/db?password=x", "postgres://u:***@h/db?password=***"),
        ("memory://", "memory://"),
        ("sqlite:////var/x.db?synchronous=full", "sqlite:////var/x.db?synchronous=full"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


@given(
    user=st.text(st.characters(blacklist_characters=":@/?#[]"), min_size=1, max_size=10),
    password=st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=4, max_size=12),
    host=st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True),
)
def test_mask_url_never_shows_a_session_store_password(user: str, password: str, host: str) -> None:
    url = f"postgresql://{user}:{password}@{host}/db?password={password}"
    # the whole form, not "the password is nowhere": a password such as 'post' or 'word' is
    # part of the scheme or of the option's name
    assert mask_url(url) == f"postgresql://{user}:***@{host}/db?password=***"


def test_a_body_that_does_not_decode_names_the_session_and_the_item() -> None:
    bad = item('{"text": "cut sh')
    with pytest.raises(CorruptSessionItem, match=r"item 'i1' of session 's1' is corrupt") as info:
        bad.body  # noqa: B018
    assert (info.value.session_id, info.value.item_id) == ("s1", "i1")
    assert isinstance(info.value, ValueError)
    tagged = item('{"__agentkit__": "datetime", "iso": "not a time"}')
    with pytest.raises(CorruptSessionItem, match=r"not the JSON of a value"):
        tagged.body  # noqa: B018
    with pytest.raises(CorruptSessionItem, match=r"its time 'yesterday'"):
        item(created_at="yesterday").time  # noqa: B018
    assert item('{"text": "fine"}').body == {"text": "fine"}


def test_the_header_reads_back_from_any_body() -> None:
    header = SessionHeader(cwd="/a", model="m", kit_fingerprint="k", metadata={"x": 1})
    assert SessionHeader.from_body(header.to_body()) == header
    assert SessionHeader.from_body(None) == SessionHeader()
    assert SessionHeader.from_body({"cwd": "/b", "later": "field", "metadata": 3}) == SessionHeader(
        cwd="/b"
    )
    assert header.to_body()["schema"] == 2


def test_the_kinds_are_the_documented_ones() -> None:
    assert ITEM_KINDS[0] == "header"
    assert set(ITEM_KINDS) >= {"user", "response", "tool_call", "tool_result", "verdict", "fold"}


@given(st.integers(0, 253402300799 * 10**9 + 999_999_999), st.integers(0, 2))
def test_an_item_s_stamp_is_what_datetime_writes(ns: int, again: int) -> None:
    """The stamp made once a second and per item is ``datetime.isoformat``'s text of that time."""
    from agentkit_core._sessions import utc_stamp

    second, micro = divmod(ns // 1000, 1_000_000)
    when = datetime.fromtimestamp(second, UTC).replace(microsecond=micro)
    for _ in range(again + 1):  # the second's text is kept: the same second again, and others
        assert utc_stamp(ns) == when.isoformat()
    assert datetime.fromisoformat(utc_stamp()).tzinfo is not None


ENTRIES = st.lists(
    st.tuples(
        st.sampled_from(["user", "tool_result", "acme/event"]),  # kinds a recorder takes
        st.one_of(
            st.none(),
            st.integers(),
            st.text(max_size=4),
            st.just(float("nan")),
            st.dictionaries(st.text(max_size=3), st.one_of(st.integers(), st.floats()), max_size=2),
        ),
        st.sampled_from(["", "given-id"]),
        st.just(False),  # not checked for NaN by its maker (a recorder's response may be)
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=60, deadline=None)
@given(entries=ENTRIES, now=st.booleans())
def test_a_recorders_entries_append_as_the_same_new_items_do(
    entries: list[tuple[str, object, str, bool]], now: bool
) -> None:
    """The recorder's path (tuples, no NewItem made, nothing checked again) is the public one.

    A recorder's entries are checked as it records them (a kind; it never buffers a tainted
    body). The same batch goes to two stores, as NewItems through ``append``/``append_now`` and
    as the recorder's entries: the same items (kinds, bodies, ids given, chain), or the same
    error with the same words, and the same session after it.
    """

    async def outcome(public: bool) -> tuple[object, list[tuple[str, str]]]:
        sessions = Sessions(MemorySessionStore())
        head = await sessions.create(session_id="s")
        try:
            if public:
                items = [NewItem(k, b, False, i) for k, b, i, _ in entries]
                made = (
                    sessions.append_now("s", head.id, items)
                    if now
                    else await sessions.append("s", head.id, items)
                )
            else:
                made = (
                    sessions._append_entries_now("s", head.id, list(entries))
                    if now
                    else await sessions._append("s", head.id, list(entries))
                )
            got: object = [(m.kind, m.body_json, m.id == "given-id") for m in made or ()]
        except Exception as exc:
            got = (type(exc), str(exc).replace(head.id, "<header>"))  # each store's own
        stored = [(m.kind, m.body_json) for m in await sessions.path("s")]
        return got, stored

    assert asyncio.run(outcome(True)) == asyncio.run(outcome(False))


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@settings(max_examples=40, deadline=None)
@given(
    count=st.integers(1, 3),
    at=st.integers(0, 2),
    named=st.lists(st.booleans(), min_size=3, max_size=3),
    path=st.sampled_from(["entries now", "entries", "public now", "public"]),
)
def test_a_batch_holding_a_part_is_stored_with_its_bytes_as_a_blob(
    count: int, at: int, named: list[bool], path: str
) -> None:
    """A batch is encoded with part bytes inline, then again collecting them if it held one.

    On a store that keeps blobs the items name the part by hash and hold no base64, the store
    holds the bytes once, a read puts them back, and the items are those appended: the ids
    given kept, each chained to the one before.
    """
    from agentkit_core import Message
    from agentkit_core.content import ImagePart

    at = min(at, count - 1)
    bodies = [
        {
            "message": Message.user(
                (ImagePart(data=PNG, media_type="image/png"),) if i == at else "x"
            )
        }
        for i in range(count)
    ]
    ids = [f"given-{i}" if named[i] else "" for i in range(count)]

    async def append() -> tuple[list[SessionItem], list[SessionItem], dict[str, bytes], Any]:
        store = MemorySessionStore()
        sessions = Sessions(store)
        head = await sessions.create(session_id="s")
        entries = [("user", b, i, False) for b, i in zip(bodies, ids, strict=True)]
        items = [NewItem("user", b, False, i) for b, i in zip(bodies, ids, strict=True)]
        made = {
            "entries now": lambda: sessions._append_entries_now("s", head.id, entries),
            "public now": lambda: sessions.append_now("s", head.id, items),
        }.get(path)
        if made is not None:
            written = made()
            assert written is None  # part bytes to write first: the awaited append's work
        written = await (
            sessions._append("s", head.id, entries)
            if path.startswith("entries")
            else sessions.append("s", head.id, items)
        )
        stored = await store.path(written[-1].id)
        blobs = await store.get_blobs([hashlib.sha256(PNG).hexdigest()])
        return written, stored[1:], blobs, (await sessions.path("s"))[1 + at].body

    written, stored, blobs, read = asyncio.run(append())
    assert [i.id for i in written] == [i.id for i in stored]
    assert [i.parent for i in stored[1:]] == [i.id for i in stored[:-1]]
    assert all(i.id == given for i, given in zip(stored, ids, strict=True) if given)
    digest = hashlib.sha256(PNG).hexdigest()
    assert blobs == {digest: PNG}
    assert [digest in i.body_json for i in stored] == [i == at for i in range(count)]
    assert not any("iVBORw0KGgo" in i.body_json for i in stored)  # no base64 of the PNG kept
    assert read["message"].content[0].data == PNG  # read through Sessions: the bytes put back


@settings(max_examples=60, deadline=None)
@given(
    items=st.lists(
        st.builds(
            NewItem,
            st.sampled_from(["user", "acme/event", "no kind"]),
            st.sampled_from([None, 1, float("nan")]),
            st.booleans(),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_public_append_checks_every_item_before_it_encodes_one(items: list[NewItem]) -> None:
    """The first item of a wrong kind or tainted is named, even after a body that fails."""
    from agentkit_core.plugin import EncodingError
    from agentkit_core.plugin import SecretTaintError

    async def outcome() -> tuple[object, int]:
        sessions = Sessions(MemorySessionStore())
        head = await sessions.create(session_id="s")
        try:
            await sessions.append("s", head.id, items)
            got: object = None
        except (ConfigError, SecretTaintError, EncodingError) as exc:
            got = type(exc)
        return got, len(await sessions.path("s"))

    def refusal(item: NewItem) -> type[Exception] | None:  # its kind is checked before its taint
        return ConfigError if item.kind == "no kind" else SecretTaintError if item.tainted else None

    refused = [r for r in map(refusal, items) if r is not None]
    if refused:
        want: tuple[object, int] = (refused[0], 1)
    elif any(n.body != n.body for n in items):  # a NaN
        want = (EncodingError, 1)
    else:
        want = (None, 1 + len(items))
    assert asyncio.run(outcome()) == want


async def test_an_append_names_its_first_wrong_item_whether_kind_or_type() -> None:
    """Items are checked in order: an unknown kind before a later non-NewItem, and back."""
    sessions = Sessions(await open_session_store("memory://", manager=PluginManager()))
    head = await sessions.create(session_id="s")
    with pytest.raises(ConfigError, match="unknown session item kind 'no kind'"):
        await sessions.append("s", head.id, [NewItem("no kind"), 5])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r"item 2 of 3 appended to session 's' is 5; give"):
        await sessions.append(
            "s",
            head.id,
            [NewItem("user", {}), 5, NewItem("no kind")],  # type: ignore[list-item]
        )
    with pytest.raises(ConfigError, match=r"the item appended to session 's' is 'x'; give"):
        sessions.append_now("s", head.id, "x")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"nothing to append to session 's': give a NewItem"):
        await sessions.append("s", head.id, [])
    assert [m.kind for m in await sessions.path("s")] == ["header"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.leaf({}), r"Sessions\.leaf\(session_id=\) must be a string id"),
        (lambda s: s.info(7), r"Sessions\.info\(session_id=\) must be a string id"),
        (lambda s: s.item("s1", {"id": 1}), r"Sessions\.item\(item_id=\) must be a string id"),
        (lambda s: s.path("s1", to=("x",)), r"Sessions\.path\(to=\) must be a string id"),
        (lambda s: s.fork("s1", at=[1]), r"Sessions\.fork\(at=\) must be a string id"),
        (lambda s: s.create(session_id=5), r"Sessions\.create\(session_id=\) must be a string id"),
        (lambda s: s.append("s1", 5, []), r"Sessions\.append\(after=\) must be a string id"),
        (lambda s: s.append("s1", "x", None), r"Sessions\.append\(items=\) must be a NewItem"),
    ],
)
async def test_an_id_that_is_no_string_is_refused_naming_it(call: Any, message: str) -> None:
    # before: TypeError("unhashable type: 'dict'") from the store, or 'NoneType' object is not
    # iterable; an int id was looked up and reported as no such session
    sessions = Sessions(MemorySessionStore())
    with pytest.raises(ConfigError, match=message):
        await call(sessions)
