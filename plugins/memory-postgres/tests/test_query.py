"""A table made before the full-text column: filled as it is added, nothing stored lost."""

from __future__ import annotations

import uuid

import psycopg

from agentkit_core import open_memory


async def test_a_table_made_before_the_search_column_is_indexed_on_open(pg_dsn: str, pm) -> None:
    name = f"m_{uuid.uuid4().hex}"
    async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as conn:
        await conn.execute(  # the table as the store made it before its search column
            f"CREATE TABLE {name} (scope text NOT NULL, title text NOT NULL, body text NOT "
            "NULL, version bigint NOT NULL, updated_at text NOT NULL, session text NOT NULL "
            "DEFAULT '', PRIMARY KEY (scope, title))"
        )
        await conn.execute(
            f"INSERT INTO {name} VALUES ('user', 'Deploys', 'Production deploys happen on "
            "Tuesdays.', 3, '2025-01-02T00:00:00+00:00', ''), ('user', 'Gone', '', 2, "
            "'2025-01-05T00:00:00+00:00', '')"
        )
    async with await open_memory(f"{pg_dsn}?table={name}", manager=pm) as memory:
        assert [(e.title, e.version) for e in (await memory.entries("user")).entries] == [
            ("Deploys", 3)
        ]
        assert await memory.store.forgotten("user", "Gone") == 2
        [hit] = await memory.query("when are deploys?", 5)
        assert (hit.entry.title, hit.entry.version, hit.store) == ("Deploys", 3, memory.store.url)
    async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as conn:
        cur = await conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", [name])
        assert any("gin (search)" in row[0] for row in await cur.fetchall())
