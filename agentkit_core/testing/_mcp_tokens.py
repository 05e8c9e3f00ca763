"""The MCP token-store conformance suite: what every :class:`MCPTokenStore` must do.

A store plugin's test subclasses :class:`MCPTokenStoreConformance` and opens a store::

    class TestFileTokens(MCPTokenStoreConformance):
        async def make_store(self, tmp_path):
            url = f"file://{tmp_path}/tokens"
            return await open_mcp_token_store(url, manager=PluginManager())

``make_store`` called again with the same ``tmp_path`` must open the same grants (what a
restart does); a store that keeps them in memory only sets ``durable = False`` (a reopened one
then starts empty). The suite closes each store it opens. Requires pytest (pytest-asyncio in
auto mode) and hypothesis.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from .._errors import StorageError
from ..hookspecs import MCPTokenStore
from ._json import json_values

#: Any JSON object: what a grant is to the store.
_JSON = json_values(
    text=st.text(max_size=20),
    keys=st.text(max_size=8),
    integers=st.integers(-(2**53), 2**53),
    floats=False,
    max_size=4,
    max_leaves=12,
)
GRANTS = st.dictionaries(st.text(max_size=12), _JSON, max_size=6)
#: Server URLs and users as a caller may give them: any text, separators and Unicode included.
KEYS = st.text(min_size=1, max_size=40) | st.sampled_from(
    ["https://mcp.example.com/mcp", "http://127.0.0.1:8000/mcp?x=/", "..", "a/b", "ü:ß\x00"]
)

_SHARED = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
_SHARED.append(HealthCheck.differing_executors)  # the suite runs once per subclass, by design


class MCPTokenStoreConformance:
    """Contract tests for an MCP token store; subclass and define :meth:`make_store`."""

    #: Whether a second ``make_store(tmp_path)`` sees what the first stored.
    durable = True

    async def make_store(self, tmp_path: Path) -> MCPTokenStore:
        raise NotImplementedError("define make_store(tmp_path) in the conformance subclass")

    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[MCPTokenStore]:
        made = await self.make_store(tmp_path)
        try:
            yield made
        finally:
            await made.aclose()

    async def test_has_a_url_and_the_methods(self, store: MCPTokenStore) -> None:
        assert isinstance(store.url, str) and store.url
        for method in ("get", "put", "delete", "aclose"):
            assert callable(getattr(store, method))

    async def test_nothing_stored_is_none(self, store: MCPTokenStore) -> None:
        assert await store.get("https://never.example/mcp", "nobody") is None
        assert await store.delete("https://never.example/mcp", "nobody") is False

    @settings(max_examples=40, deadline=None, suppress_health_check=_SHARED)
    @given(server=KEYS, user=KEYS, grant=GRANTS)
    async def test_any_grant_under_any_key_round_trips(
        self, store: MCPTokenStore, server: str, user: str, grant: dict[str, Any]
    ) -> None:
        await store.put(server, user, grant)
        assert await store.get(server, user) == grant
        assert await store.delete(server, user) is True
        assert await store.get(server, user) is None

    @settings(max_examples=25, deadline=None, suppress_health_check=_SHARED)
    @given(keys=st.lists(st.tuples(KEYS, KEYS), min_size=2, max_size=5, unique=True))
    async def test_keys_never_collide(
        self, store: MCPTokenStore, keys: list[tuple[str, str]]
    ) -> None:
        for n, (server, user) in enumerate(keys):
            await store.put(server, user, {"n": n})
        for n, (server, user) in enumerate(keys):
            assert await store.get(server, user) == {"n": n}, (server, user)
        for server, user in keys:
            await store.delete(server, user)

    async def test_put_replaces_the_whole_grant(self, store: MCPTokenStore) -> None:
        await store.put("https://s.example/mcp", "ann", {"tokens": {"a": 1}, "client": "c"})
        await store.put("https://s.example/mcp", "ann", {"tokens": {"b": 2}})
        assert await store.get("https://s.example/mcp", "ann") == {"tokens": {"b": 2}}

    async def test_concurrent_puts_leave_one_whole_grant(self, store: MCPTokenStore) -> None:
        grants = [{"n": n, "pad": "x" * (1000 * n)} for n in range(8)]
        await asyncio.gather(*(store.put("https://s.example/mcp", "bo", g) for g in grants))
        assert await store.get("https://s.example/mcp", "bo") in grants

    async def test_a_reopened_store_keeps_the_grants_if_durable(self, tmp_path: Path) -> None:
        """A durable store gives the grant back after a reopen; one in memory starts empty."""
        first = await self.make_store(tmp_path)
        try:
            await first.put("https://s.example/mcp", "ünï", {"access_token": "t"})
        finally:
            await first.aclose()
        second = await self.make_store(tmp_path)
        try:
            kept = await second.get("https://s.example/mcp", "ünï")
        finally:
            await second.aclose()
        assert kept == ({"access_token": "t"} if self.durable else None)

    async def test_a_closed_store_raises_storage_error(self, tmp_path: Path) -> None:
        store = await self.make_store(tmp_path)
        await store.aclose()
        with pytest.raises(StorageError):
            await store.get("https://s.example/mcp", "ann")
        with pytest.raises(StorageError):
            await store.put("https://s.example/mcp", "ann", {})
