"""Seams take objects; names and URLs become objects only in the lookup layer and at the edge.

Each seam that used to resolve a name itself now refuses it with an error naming the lookup
function to call, and that function gives the same object the seam once built.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Folding
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Memory
from agentkit_core import MemoryBlock
from agentkit_core import MemoryEntry
from agentkit_core import PluginManager
from agentkit_core import open_memory_block
from agentkit_core.plugin import adapt
from agentkit_core.plugin import open_memory_store
from agentkit_core.plugin import output_coerce


@dataclass
class Plan:
    steps: list[str]


@given(st.text(max_size=40))
@settings(max_examples=40, deadline=None)
def test_a_fold_refuses_a_model_name_and_says_how_to_resolve_it(name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Folding(budget=1_000, model=name)  # type: ignore[arg-type]
    assert caught.value.value == name
    assert "resolve_model(" in str(caught.value) and "Kit(compaction=" in str(caught.value)


def test_the_kit_resolves_the_fold_s_model_name_on_its_manager() -> None:
    kit = Kit(model="test", compaction={"budget": 1_000, "model": "test"})
    fold = kit.config().compaction
    assert isinstance(fold, Folding) and fold.model is not None
    assert not isinstance(fold.model, str)


def test_the_output_middleware_takes_an_adapter_not_a_type() -> None:
    with pytest.raises(ConfigError, match=r"adapt\(Plan, manager=pm\)") as caught:
        output_coerce(Plan)  # type: ignore[arg-type]
    assert caught.value.value is Plan
    assert output_coerce(adapt(Plan, manager=PluginManager())).adapter.name == "Plan"


def test_hooks_from_plugins_needs_the_manager_to_read() -> None:
    with pytest.raises(TypeError):
        Hooks.from_plugins()  # type: ignore[call-arg]
    assert Hooks.from_plugins(PluginManager(entry_points=False)).empty


async def test_a_memory_block_refuses_a_url_and_names_the_opener(tmp_path: Path) -> None:
    url = f"file://{tmp_path}/mem"
    with pytest.raises(ConfigError, match="open_memory_block") as caught:
        await MemoryBlock.open(url)  # type: ignore[arg-type]
    assert caught.value.value == url


async def test_the_opener_owns_a_url_s_store_and_leaves_a_given_one_open(tmp_path: Path) -> None:
    url = f"file://{tmp_path}/mem"
    store = await open_memory_store(url)
    assert await store.put(MemoryEntry("user", "Tabs", "Indent with tabs.", 1, "2026-12-01"), 0)
    block = await open_memory_block(url, ["user"])
    assert "Indent with tabs." in block.render(None).text
    await block.aclose()
    given_memory = Memory(store)
    lent = await open_memory_block(given_memory, ["user"])
    await lent.aclose()  # the caller's store stays open: it still reads
    assert (await given_memory.get("user", "Tabs")) is not None
    await store.aclose()
