"""A row changed outside agentkit is refused by name, never resumed as what it reads as.

A text or fractional version, an unknown status or bytes for the state used to be resumed
as is (status 'WHAT', version '9x') or to fail with a bare TypeError while decoding.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from agentkit_checkpoint_sqlite import SqliteCheckpointStore
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Checkpointer
from agentkit_core.plugin import DecodingError

STATUSES = ("running", "suspended", "done", "failed", "tainted")


async def corrupted(path: Path, sql: str, *args: object) -> Checkpointer:
    cp = Checkpointer(await SqliteCheckpointStore.open(f"sqlite:///{path}"))
    await cp.snapshot("r", {"a": 1})
    with sqlite3.connect(path) as conn:
        conn.execute(sql, args)
    conn.close()
    return cp


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("UPDATE agentkit_checkpoints SET version = '9x'", "version '9x'"),
        ("UPDATE agentkit_checkpoints SET version = 1.5", "version 1.5"),
        ("UPDATE agentkit_checkpoints SET status = 'WHAT'", "status 'WHAT'"),
        ("UPDATE agentkit_checkpoints SET state = x'00ff'", "state is bytes"),
        ("UPDATE agentkit_checkpoints SET metadata = x'7b7d'", "metadata is bytes"),
    ],
)
async def test_a_row_of_the_wrong_shape_is_a_decoding_error(
    tmp_path: Path, sql: str, named: str
) -> None:
    cp = await corrupted(tmp_path / "c.db", sql)
    try:
        with pytest.raises(DecodingError, match=f"run 'r' is corrupt: the {named}|{named}"):
            await cp.resume("r")
    finally:
        await cp.aclose()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=12))
async def test_only_a_known_status_is_resumed(tmp_path: Path, status: str) -> None:
    path = tmp_path / f"{len(list(tmp_path.iterdir()))}.db"
    cp = await corrupted(path, "UPDATE agentkit_checkpoints SET status = ?", status)
    try:
        if status in STATUSES:
            found = await cp.resume("r", include_terminal=True)
            assert found is not None and found.status == status
        else:
            with pytest.raises(DecodingError, match="is not one of"):
                await cp.resume("r", include_terminal=True)
    finally:
        await cp.aclose()
