"""Files holding a conversation are created for their owner only; existing ones keep their mode.

``create_private`` (the plugin door's, which the stores use) and the two files the command
line writes: ``agentkit run --trace FILE`` and the page ``agentkit view`` writes. Each test
sets a permissive umask (0o022, under which a plain ``open`` makes a file every local user
may read) and restores it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import StorageError
from agentkit_core import open_memory
from agentkit_core.plugin import create_private
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.plugin import open_memory_store
from agentkit_core.plugin import open_session_store
from tests.conftest import main_cli

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("--tools", "tests.view_runs:CLI_TOOLS")
UMASKS = st.sampled_from([0o000, 0o002, 0o022, 0o027, 0o077])


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask() -> Iterator[None]:
    """The umask of most systems, 0o022: a plain new file is 0644, readable by everyone."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


@settings(max_examples=40, deadline=None)
@given(mask=UMASKS, depth=st.integers(0, 3), existing=st.integers(0o400, 0o777))
def test_a_new_file_or_directory_is_the_owners_and_an_existing_one_keeps_its_mode(
    mask: int, depth: int, existing: int
) -> None:
    before = os.umask(mask)
    try:
        with tempfile.TemporaryDirectory() as top:
            file = Path(top) / "store.db"
            assert create_private(file) is True
            assert mode(file) == 0o600 & ~mask and file.read_bytes() == b""
            assert create_private(file) is False  # there already: left as it is
            assert mode(file) == 0o600 & ~mask
            chosen = Path(top) / "chosen.db"
            chosen.write_text("kept")
            os.chmod(chosen, existing)
            assert create_private(chosen) is False
            assert (mode(chosen), chosen.read_text()) == (existing, "kept")
            made = [Path(top, *("d" * (n + 1) for n in range(k + 1))) for k in range(depth + 1)]
            assert create_private(str(made[-1]) + os.sep, directory=True) is True
            assert [mode(d) for d in made] == [0o700 & ~mask] * len(made)
            assert create_private(made[-1], directory=True) is False
            os.chmod(made[0], existing | 0o700)
            assert create_private(made[0] / "new", directory=True) is True
            assert mode(made[0]) == existing | 0o700  # a directory above keeps its mode too
    finally:
        os.umask(before)


def test_a_file_where_a_directory_should_be_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("")
    with pytest.raises(FileExistsError):
        create_private(tmp_path / "taken", directory=True)
    with pytest.raises(FileNotFoundError):
        create_private(tmp_path / "missing" / "store.db")  # the caller says what to do


def test_a_link_is_never_followed_to_create_its_target(tmp_path: Path) -> None:
    (tmp_path / "link.db").symlink_to(tmp_path / "target.db")
    assert create_private(tmp_path / "link.db") is False
    assert not (tmp_path / "target.db").exists()


def test_the_trace_file_and_the_viewers_page_are_the_owners(tmp_path: Path, umask: None) -> None:
    trace, page = tmp_path / "t.jsonl", tmp_path / "t.html"
    run = main_cli("run", "look up ann", *TOOLS, "--model", "test", "-q", "--trace", str(trace))
    assert run.returncode == 0, run.stderr
    view = main_cli("view", str(trace), "--out", str(page), "--no-open", cwd=ROOT)
    assert view.returncode == 0, view.stderr
    assert (mode(trace), mode(page)) == (0o600, 0o600)
    assert "look up ann" in trace.read_text() and "lookup" in page.read_text()


def test_a_trace_file_and_page_already_there_keep_the_mode_they_had(
    tmp_path: Path, umask: None
) -> None:
    trace, page = tmp_path / "t.jsonl", tmp_path / "t.html"
    for path in (trace, page):
        path.write_text("written before")
        os.chmod(path, 0o644)
    run = main_cli("run", "look up ann", *TOOLS, "--model", "test", "-q", "--trace", str(trace))
    assert run.returncode == 0, run.stderr
    view = main_cli("view", str(trace), "--out", str(page), "--no-open", cwd=ROOT)
    assert view.returncode == 0, view.stderr
    assert (mode(trace), mode(page)) == (0o644, 0o644)
    assert all(not p.read_text().startswith("written before") for p in (trace, page))


OPENERS = {
    "checkpoint": open_checkpoint_store,
    "session": open_session_store,
    "memory": open_memory_store,
}


@pytest.mark.parametrize("seam", sorted(OPENERS))
async def test_a_new_sqlite_store_and_its_wal_files_are_the_owners(
    tmp_path: Path, umask: None, seam: str, pm: Any
) -> None:
    db = tmp_path / f"{seam}.db"
    store = await OPENERS[seam](f"sqlite:///{db}", manager=pm)
    try:
        await store.db.write(lambda conn: conn.execute("CREATE TABLE written (x)"))
        files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
        assert [mode(f) for f in files] == [0o600] * 3
    finally:
        await store.aclose()


@pytest.mark.parametrize("seam", sorted(OPENERS))
async def test_a_sqlite_store_already_there_keeps_its_mode(
    tmp_path: Path, umask: None, seam: str, pm: Any
) -> None:
    db = tmp_path / f"{seam}.db"
    db.touch()
    os.chmod(db, 0o644)  # chosen by its owner: shared with the group, say
    store = await OPENERS[seam](f"sqlite:///{db}", manager=pm)
    try:
        await store.db.write(lambda conn: conn.execute("CREATE TABLE written (x)"))
        assert (mode(db), mode(Path(f"{db}-wal"))) == (0o644, 0o644)
    finally:
        await store.aclose()


@pytest.mark.parametrize("seam", sorted(OPENERS))
async def test_a_sqlite_path_holding_a_nul_is_a_config_error(seam: str, pm: Any) -> None:
    # creating the file first raised ValueError('embedded null byte') from os.open
    with pytest.raises(ConfigError, match=r"holds a NUL character"):
        await OPENERS[seam]("sqlite:///runs\x00.db", manager=pm)


async def test_a_sqlite_store_in_no_directory_is_still_refused_by_sqlite(
    tmp_path: Path, pm: Any
) -> None:
    with pytest.raises(StorageError, match=r"check that its directory exists"):
        await open_memory_store(f"sqlite:///{tmp_path}/missing/m.db", manager=pm)


async def test_new_memory_files_and_directories_are_the_owners(
    tmp_path: Path, umask: None, pm: Any
) -> None:
    root = tmp_path / "new" / "memory"
    memory = await open_memory(f"file://{root}", manager=pm)
    async with memory:
        await memory.save("user", "Deploy", "make deploy", base=0)
        await memory.save("user", "Style", "short lines", base=0)
        await memory.forget("user", "Style", base=1)
    made = [root.parent, root, root / "user"]
    assert [mode(d) for d in made] == [0o700] * 3
    files = [root / "user" / "Deploy.md", root / "user" / ".forgotten.json"]
    assert [mode(f) for f in files] == [0o600] * 2


async def test_a_memory_file_rewritten_keeps_the_mode_its_owner_chose(
    tmp_path: Path, umask: None, pm: Any
) -> None:
    (tmp_path / "user").mkdir(mode=0o755)
    entry = tmp_path / "user" / "Deploy.md"
    entry.write_text("make deploy\n")
    os.chmod(entry, 0o640)
    memory = await open_memory(f"file://{tmp_path}", manager=pm)
    async with memory:
        await memory.save("user", "Deploy", "make deploy-all", base=1)
    assert (mode(tmp_path / "user"), mode(entry)) == (0o755, 0o640)
    assert "deploy-all" in entry.read_text()
