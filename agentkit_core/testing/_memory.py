"""The memory-store conformance suites: what every ``agentkit_core.plugin.MemoryStore`` does.

A store plugin's test subclasses :class:`MemoryStoreConformance` and opens a fresh store::

    class TestSqliteConformance(MemoryStoreConformance):
        async def make_store(self, tmp_path):
            url = f"sqlite:///{tmp_path}/memory.db"
            return await open_memory_store(url, manager=PluginManager())

        async def spoil(self, store, tmp_path, scope, title):
            ...  # make that entry unreadable, as a person or a bad disk could

Every test works in scopes of its own, so one shared database serves them all. A store that
needs other fixtures (a throwaway server) overrides the ``store`` fixture instead: an async
generator fixture yielding an open store. :class:`MemoryStoreProcessConformance` runs writer
processes against a URL: several racing on one entry, and one killed mid-write. Requires
pytest (pytest-asyncio in auto mode) and hypothesis.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import uuid
from collections.abc import AsyncIterator
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from .._errors import ConfigError
from .._errors import CorruptMemoryEntry
from .._errors import StorageError
from .._memory import MemoryEntry
from .._memory import MemoryHit
from .._memory import MemoryListing
from .._memory import MemoryStore
from .._memory import check_body
from .._memory import check_title
from .._memory import utc_stamp
from .._plugins import PluginManager
from .._urls import mask_url
from ._memory_recall import fill_labelled
from ._memory_recall import recall_at_k
from ._names import given_name_pairs
from ._writer_process import start_writer

_SHARED = [
    HealthCheck.function_scoped_fixture,
    HealthCheck.too_slow,
    HealthCheck.differing_executors,  # the suite runs once per subclass, by design
]


def fresh_scope() -> str:
    """A scope no other test uses."""
    return f"t{uuid.uuid4().hex[:12]}"


def entry(scope: str, title: str, body: str = "text", version: int = 1) -> MemoryEntry:
    """An entry stamped now."""
    return MemoryEntry(scope, title, body, version, utc_stamp(), "s1")


def _valid(check: Callable[[str], str], text: str) -> bool:
    try:
        return check(text) == text
    except ConfigError:
        return False


#: Titles as the Memory facade stores them (short enough for any file system's names).
titles = st.text(min_size=1, max_size=40).filter(lambda t: _valid(check_title, t))
#: Bodies as the Memory facade stores them.
bodies = st.text(min_size=1, max_size=300).filter(
    lambda b: _valid(lambda x: check_body(x, 4096), b)
)


class MemoryStoreConformance:
    """Contract tests for a memory store; subclass and define :meth:`make_store`.

    ``recall_floor`` is the recall@5 a store's ranking keeps over the labelled set
    (``_memory_recall``; the shipped stores measured 0.91 to 0.94, benchmarks/README.md); a
    store's test may set its own, from what it measured.
    """

    recall_floor = 0.85

    async def make_store(self, tmp_path: Path) -> MemoryStore:
        raise NotImplementedError("define make_store(tmp_path) in the conformance subclass")

    async def spoil(self, store: MemoryStore, tmp_path: Path, scope: str, title: str) -> None:
        """Make the stored entry ``(scope, title)`` unreadable (optional: skipped if absent)."""
        raise NotImplementedError

    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[MemoryStore]:
        made = await self.make_store(tmp_path)
        try:
            yield made
        finally:
            await made.aclose()

    # ------------------------------------------------------------------ shape

    async def test_is_a_store_with_a_safe_url(self, store: MemoryStore) -> None:
        assert isinstance(store, MemoryStore)
        assert isinstance(store.url, str) and ":" in store.url
        assert mask_url(store.url) == store.url, "the url must not show a password"

    async def test_an_empty_scope_lists_nothing(self, store: MemoryStore) -> None:
        scope = fresh_scope()
        assert await store.entries(scope) == MemoryListing(())
        assert await store.get(scope, "anything") is None
        assert scope not in await store.scopes()
        assert await store.delete(scope, "anything", None) is False
        assert await store.forgotten(scope, "anything") == 0

    async def test_put_then_read_back(self, store: MemoryStore) -> None:
        scope = fresh_scope()
        written = [entry(scope, t, f"body of {t}") for t in ("b", "a", "Ünïcode ✓", "C")]
        for e in written:
            assert await store.put(e, 0) is True
        listing = await store.entries(scope)
        assert listing.corrupt == ()
        assert listing.entries == tuple(sorted(written, key=lambda e: e.title))
        for e in written:
            assert await store.get(scope, e.title) == e
        assert scope in await store.scopes()
        assert await store.scopes() == sorted(await store.scopes())

    async def test_put_is_a_compare_and_set_on_the_version(self, store: MemoryStore) -> None:
        scope = fresh_scope()
        first = entry(scope, "k", "one")
        assert await store.put(first, 0) is True
        assert await store.put(entry(scope, "k", "again", 1), 0) is False  # it exists
        assert await store.put(entry(scope, "k", "stale", 3), 2) is False  # not at 2
        assert await store.get(scope, "k") == first
        second = entry(scope, "k", "two", 2)
        assert await store.put(second, 1) is True
        assert await store.get(scope, "k") == second
        assert await store.put(entry(scope, "k", "late", 2), 1) is False
        assert await store.get(scope, "k") == second

    async def test_delete_is_a_compare_and_set_on_the_version(self, store: MemoryStore) -> None:
        scope = fresh_scope()
        await store.put(entry(scope, "k", "one"), 0)
        await store.put(entry(scope, "k", "two", 2), 1)
        assert await store.delete(scope, "k", 1) is False
        assert (await store.get(scope, "k")).version == 2  # type: ignore[union-attr]
        assert await store.delete(scope, "k", 2) is True
        assert await store.get(scope, "k") is None
        assert await store.delete(scope, "k", 2) is False
        await store.put(entry(scope, "j", "x"), 0)
        assert await store.delete(scope, "j", None) is True
        assert await store.entries(scope) == MemoryListing(())
        assert scope not in await store.scopes()

    async def test_a_forgotten_key_carries_on_from_its_version(self, store: MemoryStore) -> None:
        """A forgotten title keeps its version, so a writer that saw the old entry fails."""
        scope = fresh_scope()
        await store.put(entry(scope, "k", "one"), 0)
        assert await store.forgotten(scope, "k") == 0  # it holds an entry
        assert await store.delete(scope, "k", 1) is True
        assert await store.forgotten(scope, "k") == 2
        assert await store.put(entry(scope, "k", "anew"), 0) is False
        assert await store.put(entry(scope, "k", "stale", 2), 1) is False
        again = entry(scope, "k", "anew", 3)
        assert await store.put(again, 2) is True
        assert await store.get(scope, "k") == again
        assert await store.forgotten(scope, "k") == 0
        assert await store.delete(scope, "k", None) is True
        assert await store.forgotten(scope, "k") == 4
        assert await store.get(scope, "k") is None

    async def test_scopes_are_separate_namespaces(self, store: MemoryStore) -> None:
        one, two = fresh_scope(), fresh_scope()
        await store.put(entry(one, "same", "in one"), 0)
        await store.put(entry(two, "same", "in two"), 0)
        assert (await store.get(one, "same")).body == "in one"  # type: ignore[union-attr]
        assert (await store.get(two, "same")).body == "in two"  # type: ignore[union-attr]
        await store.delete(one, "same", 1)
        assert await store.get(two, "same") is not None

    @settings(max_examples=40, deadline=None, suppress_health_check=_SHARED)
    @given_name_pairs
    async def test_two_hostile_scopes_never_meet(
        self, store: MemoryStore, pair: tuple[str, str]
    ) -> None:
        """Two different scopes (see ``_names``) keep apart, or a scope is refused."""
        tag = fresh_scope()
        kept = await _put_each(store, [(tag + name, "k") for name in pair])
        for (scope, _), written in kept.items():
            assert await store.get(scope, "k") == written
            assert (await store.entries(scope)).entries == (written,)
            found = await store.query("zeppelin", 5, [scope])
            assert [h.entry for h in found] == [written]
        assert [s for s in await store.scopes() if s.startswith(tag)] == sorted(
            scope for scope, _ in kept
        )

    @settings(max_examples=40, deadline=None, suppress_health_check=_SHARED)
    @given_name_pairs
    async def test_two_hostile_titles_never_meet(
        self, store: MemoryStore, pair: tuple[str, str]
    ) -> None:
        """Two different titles (see ``_names``) of a scope keep apart, or one is refused."""
        scope = fresh_scope()
        kept = await _put_each(store, [(scope, title) for title in pair])
        for (_, title), written in kept.items():
            assert await store.get(scope, title) == written
            assert await store.forgotten(scope, title) == 0
        listing = await store.entries(scope)
        assert listing.entries == tuple(sorted(kept.values(), key=lambda e: e.title))
        assert listing.corrupt == ()
        if kept:  # forgetting one leaves the other as it was
            first, *rest = kept.values()
            assert await store.delete(scope, first.title, 1) is True
            assert [await store.get(scope, e.title) for e in rest] == rest
            assert [await store.forgotten(scope, e.title) for e in rest] == [0] * len(rest)
            assert await store.put(first, 0) is False  # forgotten at 2, not free
            assert await store.forgotten(scope, first.title) == 2

    async def test_concurrent_writers_on_one_version_one_wins(self, store: MemoryStore) -> None:
        scope = fresh_scope()
        await store.put(entry(scope, "k", "base"), 0)
        results = await asyncio.gather(
            *(store.put(entry(scope, "k", f"writer {n}", 2), 1) for n in range(8))
        )
        assert sorted(results) == [False] * 7 + [True]
        winner = results.index(True)
        assert (await store.get(scope, "k")).body == f"writer {winner}"  # type: ignore[union-attr]
        gone = await asyncio.gather(*(store.delete(scope, "k", 2) for _ in range(5)))
        assert sorted(gone) == [False] * 4 + [True]

    # ------------------------------------------------------------------ query

    async def test_query_ranks_the_obvious_best_match_first(self, store: MemoryStore) -> None:
        scope = fresh_scope()
        written = [
            entry(scope, "Deploy schedule", "Production deploys happen on Tuesday mornings."),
            entry(scope, "Coffee", "The user drinks espresso, no sugar."),
            entry(scope, "Editor", "The user edits in Vim with a dark theme."),
            entry(scope, "Team", "The team meets on Tuesday afternoons."),
        ]
        for e in written:
            assert await store.put(e, 0) is True
        hits = await store.query("when do production deploys happen?", 3, [scope])
        assert hits and all(isinstance(h, MemoryHit) for h in hits)
        assert hits[0].entry == written[0]
        assert hits[0].store == store.url
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        # a word of the title alone finds it too, in any case
        assert [h.entry.title for h in await store.query("COFFEE", 3, [scope])] == ["Coffee"]

    async def test_query_respects_k_and_scopes(self, store: MemoryStore) -> None:
        scope, other = fresh_scope(), fresh_scope()
        for i in range(6):
            assert await store.put(entry(scope, f"note {i}", f"alpha note number {i}"), 0)
        assert await store.put(entry(other, "note", "alpha elsewhere"), 0)
        assert len(await store.query("alpha", 3, [scope])) == 3
        assert len(await store.query("alpha", 10, [scope])) == 6
        found = await store.query("alpha", 10, [scope, other])
        assert {h.entry.scope for h in found} == {scope, other} and len(found) == 7
        assert await store.query("alpha", 10, []) == []
        assert await store.query("alpha", 5, [fresh_scope()]) == []
        twice = await store.query("alpha", 10, [other, scope, other])  # each entry once
        assert sorted((h.entry.scope, h.entry.title) for h in twice) == sorted(
            (h.entry.scope, h.entry.title) for h in found
        )

    async def test_query_sees_a_write_and_not_a_forgotten_entry(self, store: MemoryStore) -> None:
        scope = fresh_scope()
        assert await store.query("zeppelin", 5, [scope]) == []
        first = entry(scope, "Hobby", "The user builds zeppelin models.")
        assert await store.put(first, 0) is True
        assert [h.entry for h in await store.query("zeppelin", 5, [scope])] == [first]
        second = entry(scope, "Hobby", "The user builds kites now.", version=2)
        assert await store.put(second, 1) is True
        assert await store.query("zeppelin", 5, [scope]) == []
        assert [h.entry for h in await store.query("kites", 5, [scope])] == [second]
        assert await store.delete(scope, "Hobby", 2) is True
        assert await store.query("kites", 5, [scope]) == []
        again = entry(scope, "Hobby", "Kites again.", version=4)
        assert await store.put(again, 3) is True
        assert [h.entry for h in await store.query("kites", 5, [scope])] == [again]

    async def test_query_matches_unicode_words(self, store: MemoryStore) -> None:
        scope = fresh_scope()
        written = entry(scope, "Café", "Le café de la gare ouvre à six heures; 東京 too.")
        assert await store.put(written, 0) is True
        assert [h.entry for h in await store.query("CAFÉ", 5, [scope])] == [written]
        assert [h.entry for h in await store.query("gare?", 5, [scope])] == [written]

    async def test_recall_over_the_labelled_set(self, store: MemoryStore) -> None:
        scopes = {"project": fresh_scope(), "user": fresh_scope()}
        await fill_labelled(store, scopes)
        recall = await recall_at_k(store, scopes)
        assert recall[1] <= recall[3] <= recall[5]
        assert recall[5] >= self.recall_floor, f"recall@k fell to {recall}"

    @pytest.mark.parametrize(
        "text", ["", "   ", "\n\t", "?!...", '"', "*", "-", "AND", "OR NOT", "NEAR(", "(", "'"]
    )
    async def test_query_without_words_finds_nothing(self, store: MemoryStore, text: str) -> None:
        scope = fresh_scope()
        assert await store.put(entry(scope, "and", "and or not near"), 0) is True
        found = await store.query(text, 5, [scope])
        assert all(h.entry.title == "and" for h in found)  # its words, if any, only

    @settings(max_examples=60, deadline=None, suppress_health_check=_SHARED)
    @given(
        text=st.one_of(
            st.text(max_size=60),
            st.lists(
                st.sampled_from(
                    [
                        "AND",
                        "OR",
                        "NOT",
                        "NEAR",
                        "NEAR(a b, 2)",
                        '"',
                        "'",
                        "*",
                        "-",
                        "+",
                        ":",
                        "^",
                        "(",
                        ")",
                        "{",
                        "}",
                        "alpha",
                        "alpha*",
                        "-alpha",
                        "title:alpha",
                        "é",
                        "\x00",
                        "\\",
                        "%",
                        "&",
                        "|",
                        "!",
                        "<->",
                        "@@",
                    ]
                ),
                max_size=8,
            ).map(" ".join),
        ),
        k=st.integers(1, 4),
    )
    async def test_no_query_text_is_a_syntax_error(
        self, store: MemoryStore, text: str, k: int
    ) -> None:
        scope = fresh_scope()
        assert await store.put(entry(scope, "alpha", "alpha and beta, or near gamma"), 0)
        found = await store.query(text, k, [scope])
        assert isinstance(found, list) and len(found) <= k
        assert all(h.entry.title == "alpha" for h in found)

    @settings(max_examples=40, deadline=None, suppress_health_check=_SHARED)
    @given(title=titles, body=bodies, session=st.sampled_from(["", "5d1c0f0e9b1a"]))
    async def test_any_title_and_body_round_trip(
        self, store: MemoryStore, title: str, body: str, session: str
    ) -> None:
        scope = fresh_scope()
        written = MemoryEntry(scope, title, body, 1, utc_stamp(), session)
        assert await store.put(written, 0) is True
        assert await store.get(scope, title) == written
        assert (await store.entries(scope)).entries == (written,)

    @settings(max_examples=25, deadline=None, suppress_health_check=_SHARED)
    @given(
        ops=st.lists(
            st.tuples(
                st.sampled_from(["put", "delete", "delete_any"]),
                st.sampled_from(["a", "b", "Ç"]),
                st.integers(0, 3),
            ),
            min_size=1,
            max_size=20,
        )
    )
    async def test_any_sequence_of_writes_matches_a_model(
        self, store: MemoryStore, ops: list[tuple[str, str, int]]
    ) -> None:
        """Whatever is tried, the store holds what a dict of compare-and-sets would."""
        scope = fresh_scope()
        model: dict[str, MemoryEntry] = {}
        forgotten: dict[str, int] = {}
        for n, (op, title, expected) in enumerate(ops):
            current = model.get(title)
            version = forgotten.get(title, 0) if current is None else current.version
            if op == "put":
                new = entry(scope, title, f"write {n}", expected + 1)
                assert await store.put(new, expected) is (expected == version)
                if expected == version:
                    model[title] = new
            else:
                wanted = None if op == "delete_any" else expected
                done = await store.delete(scope, title, wanted)
                assert done is (current is not None and wanted in (None, version))
                if done:
                    del model[title]
                    forgotten[title] = version + 1
            held = title in model
            assert await store.forgotten(scope, title) == (0 if held else forgotten.get(title, 0))
        listing = await store.entries(scope)
        assert listing.entries == tuple(model[t] for t in sorted(model))

    async def test_an_unreadable_entry_is_named_and_the_rest_still_lists(
        self, store: MemoryStore, tmp_path: Path
    ) -> None:
        if type(self).spoil is MemoryStoreConformance.spoil:
            return  # the store has no way to hold an unreadable entry
        scope = fresh_scope()
        good = entry(scope, "good", "still here")
        await store.put(good, 0)
        await store.put(entry(scope, "bad", "to be spoiled"), 0)
        await self.spoil(store, tmp_path, scope, "bad")
        listing = await store.entries(scope)
        assert listing.entries == (good,)
        [broken] = listing.corrupt
        assert isinstance(broken, CorruptMemoryEntry)
        assert broken.scope == scope and broken.name and broken.name in str(broken)
        with pytest.raises(CorruptMemoryEntry) as raised:
            await store.get(scope, "bad")
        assert raised.value.name == broken.name
        assert await store.put(entry(scope, "bad", "over it", 2), 1) is False
        assert await store.delete(scope, "bad", 1) is False
        assert await store.delete(scope, "bad", None) is True
        assert await store.entries(scope) == MemoryListing((good,))

    async def test_a_closed_store_refuses(self, tmp_path: Path) -> None:
        store = await self.make_store(tmp_path)
        await store.aclose()
        with pytest.raises(StorageError):
            await store.entries(fresh_scope())
        with pytest.raises(StorageError):
            await store.put(entry(fresh_scope(), "k"), 0)
        await store.aclose()  # twice is harmless


async def _put_each(
    store: MemoryStore, keys: list[tuple[str, str]]
) -> dict[tuple[str, str], MemoryEntry]:
    """Write an entry under each fresh ``(scope, title)``; the ones the store kept.

    The store may refuse a name it cannot hold, with a ``ConfigError`` or ``StorageError``;
    one it takes is new, so ``put`` at 0 must succeed.
    """
    kept = {}
    for n, (scope, title) in enumerate(keys):
        written = entry(scope, title, f"zeppelin number {n}")
        try:
            done = await store.put(written, 0)
        except (ConfigError, StorageError):
            continue
        assert done is True, f"{(scope, title)!r} is new, yet put at 0 was refused"
        kept[scope, title] = written
    return kept


class MemoryStoreProcessConformance:
    """Several processes on one store: writers racing on one entry, one killed mid-write.

    For stores other processes can share. Subclass and define :meth:`make_url`. The writers
    are ``python -m agentkit_core.testing._memory_writer`` processes with this interpreter.
    """

    def make_url(self, tmp_path: Path) -> str:
        raise NotImplementedError("define make_url(tmp_path) in the conformance subclass")

    @pytest.fixture
    def url(self, tmp_path: Path) -> str:
        return self.make_url(tmp_path)

    async def _seed(self, url: str, manager: PluginManager) -> str:
        from .._lookup import open_memory_store

        scope = fresh_scope()
        store = await open_memory_store(url, manager=manager)
        try:
            assert await store.put(entry(scope, "counter", "0"), 0)
        finally:
            await store.aclose()
        return scope

    async def _counter(self, url: str, scope: str, manager: PluginManager) -> MemoryEntry:
        from .._lookup import open_memory_store

        store = await open_memory_store(url, manager=manager)
        try:
            found = await store.get(scope, "counter")
        finally:
            await store.aclose()
        assert found is not None
        return found

    async def test_processes_racing_on_one_entry_lose_no_increment(
        self, url: str, pm: PluginManager
    ) -> None:
        scope = await self._seed(url, pm)
        per, count = 12, 3
        writers = [_start(url, scope, per) for _ in range(count)]
        for proc in writers:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outputs = []
        for proc in writers:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            outputs.append(out.splitlines())
        assert all(lines.count("ok") == per for lines in outputs)
        final = await self._counter(url, scope, pm)
        assert (final.body, final.version) == (str(per * count), per * count + 1)

    async def test_a_writer_killed_mid_write_leaves_a_whole_entry(
        self, url: str, pm: PluginManager
    ) -> None:
        scope = await self._seed(url, pm)
        proc = _start(url, scope, 0)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
        oks = 0
        while oks < 20:
            line = proc.stdout.readline()
            assert line, f"the writer died early (exit {proc.poll()})"
            oks += line == "ok\n"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        rest = proc.stdout.read()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        oks += rest.splitlines().count("ok")
        final = await self._counter(url, scope, pm)
        assert final.version == int(final.body) + 1
        assert int(final.body) in (oks, oks + 1)  # one in flight may have landed unreported


def _start(url: str, scope: str, count: int) -> subprocess.Popen[str]:
    module = "agentkit_core.testing._memory_writer"
    return start_writer(module, url, scope, str(count), name="memory writer")
