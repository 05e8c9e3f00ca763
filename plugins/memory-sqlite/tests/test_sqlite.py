"""What is particular to the SQLite store: its URL, and rows edited behind its back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentkit_core import ConfigError
from agentkit_core import open_memory
from agentkit_core.plugin import CorruptMemoryEntry
from agentkit_core.plugin import open_memory_store


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite://memory.db", r"not a sqlite memory URL"),
        ("sqlite:///:memory:", r"names no database file"),
        ("sqlite:///m.db?synchronous=sometimes", r"synchronous='sometimes'"),
    ],
)
async def test_bad_urls_are_config_errors(url: str, message: str, pm) -> None:
    with pytest.raises(ConfigError, match=message):
        await open_memory_store(url, manager=pm)


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        ("version", "two", "version 'two'"),
        ("version", 0, "version 0"),
        ("body", "   ", "body '   ' is no text"),
        ("body", b"\x00", "is no text"),
        ("updated_at", "yesterday", "'yesterday' is not an ISO-8601"),
    ],
)
async def test_a_row_edited_into_something_else_is_named_and_forgotten(
    tmp_path: Path, column: str, value: object, problem: str, pm
) -> None:
    async with await open_memory(f"sqlite:///{tmp_path}/m.db", manager=pm) as memory:
        await memory.save("user", "good", "fine", base=0)
        await memory.save("user", "bad", "to spoil", base=0)
        conn = sqlite3.connect(tmp_path / "m.db")
        with conn:
            conn.execute(
                f"UPDATE agentkit_memory_entries SET {column} = ? WHERE title = 'bad'", (value,)
            )
        conn.close()
        listing = await memory.entries("user")
        assert [e.title for e in listing.entries] == ["good"]
        [corrupt] = listing.corrupt
        assert corrupt.name == "bad" and problem in str(corrupt)
        assert "agentkit memory forget" in str(corrupt)
        with pytest.raises(CorruptMemoryEntry):
            await memory.get("user", "bad")
        assert await memory.forget("user", "bad", base=None) is None
        assert (await memory.entries("user")).corrupt == ()
