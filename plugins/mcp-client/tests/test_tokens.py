"""The file and SQLite token stores pass the MCP token-store conformance suite, by URL."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import agentkit_mcp_client
import pytest

from agentkit_core import ConfigError
from agentkit_core import PluginManager
from agentkit_core import StorageError
from agentkit_core.plugin import MCPTokenStore
from agentkit_core.plugin import open_mcp_token_store
from agentkit_core.testing import MCPTokenStoreConformance


def manager() -> PluginManager:
    pm = PluginManager(entry_points=False)
    pm.register(agentkit_mcp_client, name="mcp-client")
    return pm


class TestFileTokenStore(MCPTokenStoreConformance):
    async def make_store(self, tmp_path: Path) -> MCPTokenStore:
        return await open_mcp_token_store(f"file://{tmp_path}/tokens", manager=manager())


class TestSqliteTokenStore(MCPTokenStoreConformance):
    async def make_store(self, tmp_path: Path) -> MCPTokenStore:
        return await open_mcp_token_store(f"sqlite:///{tmp_path}/tokens.db", manager=manager())


async def test_file_grants_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    store = await open_mcp_token_store(f"file://{tmp_path}/t", manager=manager())
    await store.put("https://s.example/mcp", "ann", {"access_token": "secret"})
    await store.put("https://s.example/mcp", "ann", {"access_token": "secret2"})
    (only,) = list((tmp_path / "t").iterdir())  # replaced in place: no temp file left
    assert stat.S_IMODE(only.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "t").stat().st_mode) == 0o700


async def test_the_sqlite_file_is_created_owner_only(tmp_path: Path) -> None:
    store = await open_mcp_token_store(f"sqlite:///{tmp_path}/t.db", manager=manager())
    await store.aclose()
    assert stat.S_IMODE(os.stat(tmp_path / "t.db").st_mode) == 0o600


async def test_a_file_url_with_a_host_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file:///var/lib/agent/mcp-tokens"):
        await open_mcp_token_store("file://elsewhere/tokens", manager=manager())


@pytest.mark.parametrize("stored", ["[1, 2]", "null", '"a token"', "7"])
async def test_a_sqlite_grant_that_is_no_object_is_a_storage_error_as_in_a_file(
    tmp_path: Path, stored: str
) -> None:
    """It read as 'no grant', so the user was sent to log in again with nothing said."""
    import sqlite3

    store = await open_mcp_token_store(f"sqlite:///{tmp_path}/t.db", manager=manager())
    await store.put("https://s.example/mcp", "ann", {"access_token": "secret"})
    with sqlite3.connect(tmp_path / "t.db") as db:
        db.execute("UPDATE mcp_tokens SET grant_json = ?", (stored,))
    with pytest.raises(StorageError, match=r"https://s\.example/mcp.*not a JSON object"):
        await store.get("https://s.example/mcp", "ann")
    await store.aclose()
    files = await open_mcp_token_store(f"file://{tmp_path}/f", manager=manager())
    await files.put("https://s.example/mcp", "ann", {"access_token": "secret"})
    (path,) = (tmp_path / "f").iterdir()
    path.write_text(json.dumps({"server": "x", "user": "ann", "grant": json.loads(stored)}))
    with pytest.raises(StorageError):  # the file store already said so
        await files.get("https://s.example/mcp", "ann")
