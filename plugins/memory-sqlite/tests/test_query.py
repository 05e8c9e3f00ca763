"""A database made before the full-text index: indexed on open, nothing stored lost."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentkit_core import open_memory

# The table as the store made it before it had a full-text index.
OLD_SCHEMA = """
    CREATE TABLE agentkit_memory_entries (
        scope TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, version INTEGER NOT NULL,
        updated_at TEXT NOT NULL, session TEXT NOT NULL DEFAULT '', PRIMARY KEY (scope, title)
    ) WITHOUT ROWID
"""
ROWS = [
    ("user", "Deploys", "Production deploys happen on Tuesdays.", 3, "2025-01-02T00:00:00+00:00"),
    ("user", "Coffee", "The user drinks espresso.", 1, "2025-01-03T00:00:00+00:00"),
    ("project", "Stack", "The service is written in Rust.", 2, "2025-01-04T00:00:00+00:00"),
    ("user", "Gone", "", 2, "2025-01-05T00:00:00+00:00"),  # forgotten at version 2
]


def old_database(path: Path) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(OLD_SCHEMA)
        conn.executemany("INSERT INTO agentkit_memory_entries VALUES (?, ?, ?, ?, ?, '')", ROWS)
    conn.close()


async def test_a_database_made_before_the_index_is_indexed_on_open(tmp_path: Path, pm) -> None:
    old_database(tmp_path / "memory.db")
    async with await open_memory(f"sqlite:///{tmp_path}/memory.db", manager=pm) as memory:
        listed = [(e.title, e.version) for e in (await memory.entries("user")).entries]
        assert listed == [("Coffee", 1), ("Deploys", 3)]
        assert await memory.store.forgotten("user", "Gone") == 2
        [hit] = await memory.query("when are deploys?", 5)
        assert (hit.entry.title, hit.entry.version) == ("Deploys", 3)
        assert [h.entry.title for h in await memory.query("rust", 5)] == ["Stack"]
        await memory.save("user", "Coffee", "The user drinks tea now.", base=1)
        assert await memory.query("espresso", 5) == []
    # opened again: indexed once, not twice
    async with await open_memory(f"sqlite:///{tmp_path}/memory.db", manager=pm) as memory:
        assert len(await memory.query("deploys tuesdays", 5)) == 1
