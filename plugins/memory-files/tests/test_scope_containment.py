"""The store keeps every file it writes under its root, whoever calls it: a scope that is not
one plain directory name inside the root is refused by the store itself, not only by the
Memory facade above it (a third party may call the store directly)."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import PluginManager
from agentkit_core.plugin import MemoryStore
from agentkit_core.plugin import open_memory_store
from agentkit_core.testing._memory import entry

#: A fresh manager for what runs outside a test's fixtures (a Hypothesis test, a
#: parametrize), never the process-wide one.
PM = PluginManager()


def files_under(directory: Path) -> set[Path]:
    """Every file and directory below ``directory``, links not followed."""
    found: set[Path] = set()
    for parent, dirs, files in os.walk(directory):
        found.update(Path(parent, name) for name in [*dirs, *files])
    return found


async def every_operation(store: MemoryStore, scope: str) -> list[str]:
    """Each store call on ``scope``, and the message of each refusal."""
    refusals = []
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: store.put(entry(scope, "k", "x"), 0),
        lambda: store.get(scope, "k"),
        lambda: store.entries(scope),
        lambda: store.forgotten(scope, "k"),
        lambda: store.delete(scope, "k", None),
    ]
    for call in calls:
        try:
            await call()
        except ConfigError as exc:
            refusals.append(str(exc))
    return refusals


@pytest.mark.parametrize(
    ("scope", "problem"),
    [
        ("..", "starts with '.'"),
        (".", "starts with '.'"),
        (".lock", "starts with '.'"),
        ("a/../../x", "holds '/'"),
        ("nested/scope", "holds '/'"),
        ("a\\..\\..\\x", "holds '\\\\'"),
        ("a\x00b", "holds '\\x00'"),
        ("", "is empty"),
        ("é" * 128, "256 bytes"),
    ],
)
async def test_a_scope_that_is_no_plain_name_is_refused_by_the_store(
    tmp_path: Path, scope: str, problem: str, pm
) -> None:
    root = tmp_path / "data" / "mem"
    store = await open_memory_store(f"file://{root}", manager=pm)
    refusals = await every_operation(store, scope)
    assert len(refusals) == 5
    for message in refusals:
        assert message.startswith(f"scope {scope!r} ")
        assert problem in message and f"file://{root}" in message
    assert all(p == tmp_path / "data" or p.is_relative_to(root) for p in files_under(tmp_path))


async def test_an_absolute_scope_is_refused_and_nothing_is_written_there(
    tmp_path: Path, pm
) -> None:
    root = tmp_path / "mem"
    elsewhere = tmp_path / "elsewhere"
    store = await open_memory_store(f"file://{root}", manager=pm)
    refusals = await every_operation(store, str(elsewhere))
    assert len(refusals) == 5 and "holds '/'" in refusals[0]
    assert not elsewhere.exists()


@pytest.mark.parametrize("target", ["outside", "."])
async def test_a_scope_that_is_a_link_out_of_the_root_is_refused(
    tmp_path: Path, target: str, pm
) -> None:
    root = tmp_path / "mem"
    (tmp_path / "outside").mkdir()
    root.mkdir()
    (root / "linked").symlink_to(tmp_path / target if target != "." else root)
    store = await open_memory_store(f"file://{root}", manager=pm)
    refusals = await every_operation(store, "linked")
    assert len(refusals) == 5 and "a link to" in refusals[0]
    assert list((tmp_path / "outside").iterdir()) == []
    assert not (root / "k.md").exists()
    assert await store.scopes() == []


async def test_a_link_to_a_scope_inside_the_root_still_works(tmp_path: Path, pm) -> None:
    root = tmp_path / "mem"
    (root / "project").mkdir(parents=True)
    (root / "alias").symlink_to(root / "project")
    store = await open_memory_store(f"file://{root}", manager=pm)
    assert await every_operation(store, "alias") == []


#: Pieces of scopes: names, dots, separators, NUL, and the links the test puts in the root.
pieces = st.sampled_from(["a", "b c", "é", "..", ".", "", "/", "\\", "\x00", "out", "loop", "in"])


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(pieces, min_size=1, max_size=6), absolute=st.booleans())
def test_every_file_the_store_writes_stays_under_its_root(parts: list[str], absolute: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        root = base / "deep" / "mem"
        (base / "outside").mkdir()
        root.mkdir(parents=True)
        (root / "out").symlink_to(base / "outside")  # out of the root
        (root / "loop").symlink_to(root)  # the root itself
        (root / "inside").mkdir()
        (root / "in").symlink_to(root / "inside")  # a scope inside it
        scope = "".join(parts)
        if absolute:
            scope = f"{base}/{scope}"
        before = files_under(base)

        async def attempt() -> None:
            store = await open_memory_store(f"file://{root}", manager=PM)
            await every_operation(store, scope)
            await store.aclose()

        asyncio.run(attempt())
        made = files_under(base) - before
        assert all(p.resolve().is_relative_to(root) and p.resolve() != root for p in made), made
        assert list((base / "outside").iterdir()) == []
