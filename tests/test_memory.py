"""The Memory facade: what it checks before writing, lost updates, patch and search."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Memory
from agentkit_core import MemoryEntry
from agentkit_core import PluginManager
from agentkit_core import UnknownNameError
from agentkit_core import open_memory
from agentkit_core.plugin import MemoryConflict
from agentkit_core.plugin import MemoryStore
from agentkit_core.plugin import open_memory_store
from agentkit_core.plugin import stored_entry

#: A fresh manager for what runs outside a test's fixtures (a Hypothesis test, a
#: parametrize), never the process-wide one.
PM = PluginManager()


@pytest.fixture
async def memory(tmp_path: Path, pm):
    async with await open_memory(
        f"sqlite:///{tmp_path}/memory.db", max_entry_bytes=64, manager=pm
    ) as m:
        yield m


async def test_save_stamps_versions_times_and_the_session(memory: Memory) -> None:
    first = await memory.save("user", "  Tabs ", "Indent with tabs.\r\n", base=0, session="s1")
    assert (first.title, first.body, first.version, first.session) == (
        "Tabs",
        "Indent with tabs.",
        1,
        "s1",
    )
    second = await memory.save("user", "Tabs", "Tabs, width 4.", base=1)
    assert (second.version, second.session) == (2, "")
    assert second.time >= first.time
    assert await memory.get("user", "Tabs") == second
    third = await memory.save("user", "Tabs", "Tabs, width 8.", base=None)  # a person's edit
    assert third.version == 3


async def test_a_write_based_on_an_old_version_is_refused_with_the_current_text(
    memory: Memory,
) -> None:
    await memory.save("project", "Deploy", "make release", base=0, session="s-other")
    await memory.save("project", "Deploy", "make release && tag", base=1, session="s-other")
    with pytest.raises(MemoryConflict) as raised:
        await memory.save("project", "Deploy", "make ship", base=1)
    conflict = raised.value
    assert (conflict.scope, conflict.title, conflict.base) == ("project", "Deploy", 1)
    assert conflict.current is not None and conflict.current.version == 2
    message = str(conflict)
    assert "version 2" in message and "session s-other" in message
    assert "make release && tag" in message  # the text to base a retry on
    with pytest.raises(MemoryConflict, match="based on no entry"):
        await memory.save("project", "Deploy", "new", base=0)
    assert (await memory.get("project", "Deploy")).body == "make release && tag"  # type: ignore[union-attr]


async def test_a_write_over_a_forgotten_entry_says_so(memory: Memory) -> None:
    await memory.save("user", "k", "x", base=0)
    assert (await memory.forget("user", "k", base=1)).body == "x"  # type: ignore[union-attr]
    for attempt in (
        memory.save("user", "k", "y", base=1),
        memory.patch("user", "k", "x", "y", base=1),
        memory.forget("user", "k", base=1),
    ):
        with pytest.raises(MemoryConflict, match="forgotten since"):
            await attempt


async def test_patch_replaces_exactly_one_passage(memory: Memory) -> None:
    await memory.save("user", "k", "red green red", base=0)
    with pytest.raises(ConfigError, match="occurs 2 times"):
        await memory.patch("user", "k", "red", "blue", base=1)
    with pytest.raises(ConfigError, match="does not occur"):
        await memory.patch("user", "k", "purple", "blue", base=1)
    with pytest.raises(ConfigError, match="non-empty"):
        await memory.patch("user", "k", "", "blue", base=1)
    patched = await memory.patch("user", "k", "green", "blue", base=1)
    assert (patched.body, patched.version) == ("red blue red", 2)
    with pytest.raises(MemoryConflict):
        await memory.patch("user", "k", "blue", "green", base=1)
    with pytest.raises(ConfigError, match="to patch; save it"):
        await memory.patch("user", "missing", "a", "b", base=None)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.save("User", "k", "x", base=0), "'User' is not a scope name"),
        (lambda m: m.save("../etc", "k", "x", base=0), "not a scope name"),
        (lambda m: m.save("user", "", "x", base=0), "is empty; a title is one line"),
        (lambda m: m.save("user", "a\nb", "x", base=0), "control character '\\\\n'"),
        (lambda m: m.save("user", "x" * 101, "x", base=0), "has 101 characters"),
        (lambda m: m.save("user", 7, "x", base=0), "title must be a string"),
        (lambda m: m.save("user", "k", "  ", base=0), "body is empty"),
        (lambda m: m.save("user", "k", "a\x00b", base=0), "NUL"),
        (lambda m: m.save("user", "k", "\ud800", base=0), "not valid text"),
        (
            lambda m: m.save("user", "k", "é" * 40, base=0),
            "80 bytes of UTF-8, over the bound of 64",
        ),
        (lambda m: m.search("   ", ["user"]), "has no words"),
    ],
)
async def test_bad_input_is_refused_naming_what_and_nothing_is_written(
    memory: Memory, call, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await call(memory)
    assert await memory.scopes() == []


async def test_search_ranks_by_occurrences_then_scope_then_title(memory: Memory) -> None:
    await memory.save("user", "b", "deploy on fridays, deploy carefully", base=0)
    await memory.save("user", "a", "Deploy notes", base=0)
    await memory.save("project", "c", "deploy with make release", base=0)
    await memory.save("project", "d", "unrelated", base=0)
    found = await memory.search("DEPLOY", ["project", "user"])
    assert [e.title for e in found] == ["b", "c", "a"]
    assert [e.title for e in await memory.search("deploy release", ["project", "user"])] == ["c"]
    assert await memory.search("deploy", ["project", "user"], limit=1) == [found[0]]
    assert await memory.search("nothing here", ["user"]) == []


async def test_concurrent_based_writes_one_wins_the_rest_see_it(memory: Memory) -> None:
    await memory.save("user", "k", "base", base=0)
    results = await asyncio.gather(
        *(memory.save("user", "k", f"w{n}", base=1) for n in range(6)), return_exceptions=True
    )
    won = [r for r in results if isinstance(r, MemoryEntry)]
    lost = [r for r in results if isinstance(r, MemoryConflict)]
    assert len(won) == 1 and len(lost) == 5
    assert all(c.current == won[0] for c in lost)


@pytest.mark.parametrize("url", ["file://{}/mem", "sqlite:///{}/mem.db"])
@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["save", "patch", "forget"])),
        min_size=1,
        max_size=12,
    )
)
# b forgets the entry a saw, then saves it anew: a must not take the new entry for the old one
@example(steps=[("a", "save"), ("b", "save"), ("b", "forget"), ("b", "save"), ("a", "save")])
@example(steps=[("a", "save"), ("b", "save"), ("b", "forget"), ("b", "save"), ("a", "patch")])
def test_two_writers_never_overwrite_each_other_unseen(
    tmp_path_factory: pytest.TempPathFactory, url: str, steps: list[tuple[str, str]]
) -> None:
    """Each writer writes based on what it last saw; every write that lands replaced exactly
    the text its writer had seen, and a refused one shows the writer the current text."""

    async def run() -> None:
        path = tmp_path_factory.mktemp("two")
        async with await open_memory(url.format(path), manager=PM) as memory:
            seen: dict[str, MemoryEntry | None] = {"a": None, "b": None}
            for n, (who, op) in enumerate(steps):
                before = await memory.get("user", "k")
                base = 0 if seen[who] is None else seen[who].version  # type: ignore[union-attr]
                try:
                    if op == "save":
                        after = await memory.save("user", "k", f"{who}{n}", base=base)
                    elif op == "patch" and seen[who] is not None:
                        old = seen[who].body  # type: ignore[union-attr]
                        after = await memory.patch("user", "k", old, f"{who}{n}", base=base)
                    elif op == "forget" and seen[who] is not None:
                        await memory.forget("user", "k", base=base)
                        after = None
                    else:
                        continue
                except MemoryConflict as exc:
                    assert exc.current == before  # refused: it now sees what is there
                    assert before != seen[who]
                    seen[who] = exc.current
                    continue
                assert before == seen[who], "a write landed over a text its writer never saw"
                seen[who] = after

    asyncio.run(run())


async def test_open_names_the_installed_schemes(pm) -> None:
    with pytest.raises(UnknownNameError, match=r"scheme 'nope'.*installed schemes: .*file"):
        await open_memory("nope:///x", manager=pm)
    with pytest.raises(ConfigError, match="has no scheme; write it like 'file:///path"):
        await open_memory_store("just-a-path", manager=pm)
    with pytest.raises(UnknownNameError, match="installed schemes: none"):
        await open_memory_store("file:///x", manager=PluginManager(entry_points=False))


def test_memory_takes_only_a_store_and_a_whole_bound(tmp_path: Path, pm) -> None:
    with pytest.raises(ConfigError, match="needs a MemoryStore"):
        Memory("sqlite:///x.db")  # type: ignore[arg-type]
    store = asyncio.run(open_memory_store(f"file://{tmp_path}", manager=pm))
    assert isinstance(store, MemoryStore)
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ConfigError, match="max_entry_bytes"):
            Memory(store, max_entry_bytes=bad)  # type: ignore[arg-type]


def test_stored_entry_names_a_bad_row() -> None:
    good = ("user", "k", "x", 3, "2026-12-03T07:00:00+00:00", "")
    assert stored_entry(good, "db").version == 3
    for bad, problem in (
        ((*good[:3], True, *good[4:]), "version True"),
        ((*good[:3], "3", *good[4:]), "version '3'"),
        ((*good[:4], None, ""), "updated time None"),
    ):
        with pytest.raises(Exception, match=problem) as raised:
            stored_entry(bad, "db")
        assert raised.value.name == "k"  # type: ignore[attr-defined]


@pytest.mark.parametrize("stored", ["Cafe\u0301", " Café ", "Café\t"])
async def test_an_entry_written_around_the_facade_is_found_by_the_title_it_reads_as(
    memory: Memory, stored: str
) -> None:
    """A title stored as written (decomposed, blanks around it: a file saved by hand) that
    check_title reads as 'Café' is that entry's key: get, save, patch and forget reach it,
    and no second entry is made beside it."""
    store = memory.store
    assert await store.put(MemoryEntry("user", stored, "by hand", 1, "2026-12-03T07:00:00", ""), 0)
    for asked in ("Café", stored):
        found = await memory.get("user", asked)
        assert found is not None and (found.title, found.body) == (stored, "by hand")
    saved = await memory.save("user", "Café", "one", base=1)
    assert (saved.title, saved.version) == (stored, 2)
    saved = await memory.save("user", "Café", "two", base=None)
    assert (saved.title, saved.version) == (stored, 3)
    saved = await memory.patch("user", "Café", "two", "three", base=3)
    assert (saved.title, saved.body, saved.version) == (stored, "three", 4)
    with pytest.raises(MemoryConflict):
        await memory.save("user", "Café", "stale", base=1)
    assert [e.title for e in (await memory.entries("user")).entries] == [stored]
    gone = await memory.forget("user", "Café", base=4)
    assert gone is not None and gone.title == stored
    assert await memory.get("user", "Café") is None
    assert await store.forgotten("user", stored) == 5


async def test_two_titles_that_read_alike_stay_their_own(memory: Memory) -> None:
    store = memory.store
    for n, stored in enumerate(["Cafe\u0301", " Café "]):
        assert await store.put(MemoryEntry("user", stored, f"{n}", 1, "2026-12-03T07:00:00", ""), 0)
    assert await memory.get("user", "Café") is None  # which one is not guessed
    assert (await memory.get("user", "Cafe\u0301")) is None  # read as 'Café' too
    with pytest.raises(ConfigError, match="looks like"):
        await memory.save("user", "Café", "new", base=0)
