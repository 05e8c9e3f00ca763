import pytest

from agentkit_core import StorageError
from agentkit_core.plugin import StoredCheckpoint
from agentkit_core.plugin import open_checkpoint_store

REC = StoredCheckpoint("r", "agent", 1, "running", "{}", "{}", "2026-12-03T07:00:00+00:00")


async def test_each_open_is_its_own_store(pm) -> None:
    a = await open_checkpoint_store("memory://", manager=pm)
    b = await open_checkpoint_store("memory://", manager=pm)
    assert await a.put(REC)
    assert await b.versions("r", "agent") == []
    assert await a.versions("r", "agent") == [1]
    await a.aclose()
    await b.aclose()


async def test_a_closed_store_says_so(pm) -> None:
    store = await open_checkpoint_store("memory://", manager=pm)
    await store.aclose()
    with pytest.raises(StorageError, match=r"memory:// checkpoint store is closed"):
        await store.latest("r", "agent")
