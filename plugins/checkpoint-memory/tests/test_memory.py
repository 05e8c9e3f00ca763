import pytest

from agentkit_core import StorageError
from agentkit_core.plugin import StoredCheckpoint
from agentkit_core.plugin import open_checkpoint_store

REC = StoredCheckpoint("r", "agent", 1, "running", "{}", "{}", "2026-12-03T07:00:00+00:00")


async def test_each_open_is_its_own_store() -> None:
    a = await open_checkpoint_store("memory://")
    b = await open_checkpoint_store("memory://")
    assert await a.put(REC)
    assert await b.versions("r", "agent") == []
    assert await a.versions("r", "agent") == [1]
    await a.aclose()
    await b.aclose()


async def test_a_closed_store_says_so() -> None:
    store = await open_checkpoint_store("memory://")
    await store.aclose()
    with pytest.raises(StorageError, match=r"memory:// checkpoint store is closed"):
        await store.latest("r", "agent")
