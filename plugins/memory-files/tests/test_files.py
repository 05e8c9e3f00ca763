"""What is particular to the files store: the file format, hand edits, names and bad files."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentkit_memory_files._store import file_name
from agentkit_memory_files._store import title_of
from hypothesis import given
from hypothesis import settings

from agentkit_core import ConfigError
from agentkit_core import Memory
from agentkit_core import open_memory
from agentkit_core.plugin import CorruptMemoryEntry
from agentkit_core.plugin import open_memory_store
from agentkit_core.testing._memory import titles


@pytest.fixture
async def memory(tmp_path: Path, pm):
    async with await open_memory(f"file://{tmp_path}/mem", manager=pm) as memory:
        yield memory


def entry_file(tmp_path: Path, scope: str, title: str) -> Path:
    return tmp_path / "mem" / scope / file_name(title)


async def test_an_entry_is_a_markdown_file_with_front_matter(memory: Memory, tmp_path: Path):
    saved = await memory.save("user", "Prefers tabs", "Tabs, never spaces.", base=0, session="s9")
    text = entry_file(tmp_path, "user", "Prefers tabs").read_text()
    assert text == (
        f"---\nversion: 1\nupdated: {saved.updated_at}\nsession: s9\n---\nTabs, never spaces.\n"
    )
    assert not [p for p in (tmp_path / "mem" / "user").iterdir() if p.name.startswith(".")]


async def test_a_file_added_by_hand_is_an_entry_at_version_1(memory: Memory, tmp_path: Path):
    (tmp_path / "mem" / "project").mkdir(parents=True)
    path = tmp_path / "mem" / "project" / "Likes short answers.md"
    path.write_text("Keep answers to one line.\r\n\r\n")
    [found] = (await memory.entries("project")).entries
    assert (found.title, found.body, found.version, found.session) == (
        "Likes short answers",
        "Keep answers to one line.",
        1,
        "",
    )
    assert abs(found.time.timestamp() - path.stat().st_mtime) < 1
    saved = await memory.save("project", "Likes short answers", "One line.", base=1)
    assert saved.version == 2 and "version: 2" in path.read_text()


async def test_an_edit_by_hand_is_read_on_the_next_listing(memory: Memory, tmp_path: Path):
    await memory.save("user", "k", "first", base=0)
    path = entry_file(tmp_path, "user", "k")
    assert (await memory.entries("user")).entries[0].body == "first"
    path.write_text(path.read_text().replace("first", "second, longer"))
    assert (await memory.entries("user")).entries[0].body == "second, longer"
    path.unlink()
    assert (await memory.entries("user")).entries == ()


async def test_unknown_front_matter_keys_are_ignored(memory: Memory, tmp_path: Path):
    (tmp_path / "mem" / "user").mkdir(parents=True)
    (tmp_path / "mem" / "user" / "k.md").write_text("---\nversion: 4\ntags: a, b\n\n---\nbody\n")
    [found] = (await memory.entries("user")).entries
    assert (found.version, found.body) == (4, "body")


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("bad.md", b"\xff\xfe not utf-8", "not UTF-8"),
        ("open.md", b"---\nversion: 1\nbody without a fence", "no closing '---'"),
        ("version.md", b"---\nversion: 0\n---\nx", "version '0'"),
        ("time.md", b"---\nupdated: yesterday\n---\nx", "'yesterday' is not an ISO-8601"),
        ("line.md", b"---\njust words\n---\nx", "line 2 of its front matter"),
        ("empty.md", b"---\nversion: 2\n---\n  \n", "holds no text"),
        ("a%2fb.md", b"x", "should be 'a%2Fb.md'"),
        ("bad%ff.md", b"x", "%XX-escaped UTF-8"),
        # a name of bytes that are no UTF-8 (os.fsdecode: a surrogate), which get cannot ask for
        ("caf\udce9.md", b"x", "its name is not UTF-8"),
    ],
)
async def test_a_bad_file_is_reported_by_path_and_the_rest_lists(
    memory: Memory, tmp_path: Path, name: str, content: bytes, problem: str
):
    await memory.save("user", "fine", "a good entry", base=0)
    bad = tmp_path / "mem" / "user" / name
    bad.write_bytes(content)
    listing = await memory.entries("user")
    assert [e.title for e in listing.entries] == ["fine"]
    [corrupt] = listing.corrupt
    assert corrupt.name == str(bad)
    assert problem in str(corrupt) and repr(str(bad)) in str(corrupt)


async def test_a_corrupt_entry_is_forgotten_but_not_written_over(memory: Memory, tmp_path: Path):
    await memory.save("user", "k", "text", base=0)
    entry_file(tmp_path, "user", "k").write_text("---\nversion: x\n---\ny")
    with pytest.raises(CorruptMemoryEntry, match="forget it"):
        await memory.save("user", "k", "over it", base=None)
    with pytest.raises(CorruptMemoryEntry, match="version 'x'"):
        await memory.save("user", "k", "over it", base=1)  # refused, naming the file
    assert await memory.forget("user", "k", base=None) is None
    assert not entry_file(tmp_path, "user", "k").exists()


@settings(max_examples=200, deadline=None)
@given(titles)
def test_every_title_has_one_file_name_and_back(title: str) -> None:
    name = file_name(title)
    assert "/" not in name and "\\" not in name and not name.startswith(".")
    assert name.endswith(".md") and name not in (".md", "..md")
    assert title_of(name) == title


async def test_a_title_too_long_for_a_file_name_is_refused(memory: Memory):
    with pytest.raises(ConfigError, match="over the 255"):
        await memory.save("user", "界" * 90, "x", base=0)


async def test_temporary_and_hidden_files_are_not_entries(memory: Memory, tmp_path: Path):
    await memory.save("user", "k", "text", base=0)
    (tmp_path / "mem" / "user" / ".0a1b.tmp").write_text("half a write")
    (tmp_path / "mem" / "user" / "notes.txt").write_text("not an entry")
    (tmp_path / "mem" / ".hidden").mkdir()
    (tmp_path / "mem" / ".hidden" / "x.md").write_text("x")
    assert [e.title for e in (await memory.entries("user")).entries] == ["k"]
    assert await memory.scopes() == ["user"]


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("file://otherhost/srv/mem", "names the host 'otherhost'"),
        ("file:///srv/mem?fsync=0", "takes no options"),
        ("file:", "names no directory"),
        # a ValueError from urlsplit, and from the file system, before
        ("file://]/mem", r"it is no URL \(Invalid IPv6 URL\)"),
        ("file:///srv/mem%00x", "holds a NUL character"),
        ("file:///srv/mem\x00x", "holds a NUL character"),
    ],
)
async def test_bad_urls_are_refused_naming_the_form(url: str, problem: str, pm):
    with pytest.raises(ConfigError, match=problem) as raised:
        await open_memory_store(url, manager=pm)
    assert "file:///srv/app/memory" in str(raised.value)


async def test_a_url_naming_a_file_is_refused(tmp_path: Path, pm):
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="not a directory"):
        await open_memory_store(f"file://{tmp_path}/f", manager=pm)


async def test_a_relative_url_is_under_the_working_directory(tmp_path: Path, monkeypatch, pm):
    monkeypatch.chdir(tmp_path)
    async with await open_memory("file:.agentkit/memory", manager=pm) as memory:
        await memory.save("user", "k", "x", base=0)
    assert (tmp_path / ".agentkit" / "memory" / "user" / "k.md").is_file()


async def test_a_directory_it_cannot_write_is_a_storage_error(tmp_path: Path, pm):
    from agentkit_core import StorageError

    (tmp_path / "mem").mkdir()
    (tmp_path / "mem" / "user").write_text("a file where the scope's directory would be")
    async with await open_memory(f"file://{tmp_path}/mem", manager=pm) as memory:
        with pytest.raises(StorageError, match="failed"):
            await memory.save("user", "k", "x", base=0)
