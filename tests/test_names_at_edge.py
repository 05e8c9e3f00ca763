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


async def test_the_opener_owns_a_url_s_store_and_leaves_a_given_one_open(
    tmp_path: Path, pm
) -> None:
    url = f"file://{tmp_path}/mem"
    store = await open_memory_store(url, manager=pm)
    assert await store.put(MemoryEntry("user", "Tabs", "Indent with tabs.", 1, "2026-12-01"), 0)
    block = await open_memory_block(url, ["user"], manager=pm)
    assert "Indent with tabs." in block.render(None).text
    await block.aclose()
    given_memory = Memory(store)
    lent = await open_memory_block(given_memory, ["user"], manager=pm)
    await lent.aclose()  # the caller's store stays open: it still reads
    assert (await given_memory.get("user", "Tabs")) is not None
    await store.aclose()


def _lookup_layer() -> list[tuple[str, object]]:
    """Every public function of the lookup layer: the modules that turn names into objects."""
    import inspect

    from agentkit_core import _executor
    from agentkit_core import _kit_options
    from agentkit_core import _lookup
    from agentkit_core import _pricing

    found = []
    for module in (_lookup, _executor, _pricing, _kit_options):
        for name, value in vars(module).items():
            if (
                inspect.isfunction(value)
                and value.__code__.co_filename == module.__file__  # the doors rename __module__
                and not name.startswith("_")
                and "manager" in inspect.signature(value).parameters
            ):
                found.append((f"{module.__name__}.{name}", value))
    return found


def test_every_lookup_takes_its_manager_as_a_required_argument() -> None:
    """Only the edges (Kit, Agent(...), the CLI) fall back to the process-wide manager."""
    import inspect

    functions = _lookup_layer()
    assert len(functions) >= 30, [name for name, _ in functions]
    optional = [
        name
        for name, fn in functions
        if inspect.signature(fn).parameters["manager"].default is not inspect.Parameter.empty
    ]
    assert optional == []


async def test_a_lookup_without_a_manager_is_a_type_error_naming_it() -> None:
    from agentkit_core import open_checkpointer
    from agentkit_core.plugin import get_compactor

    with pytest.raises(
        TypeError, match=r"get_compactor.*required keyword-only argument: 'manager'"
    ):
        get_compactor("truncation")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"open_checkpointer.*argument: 'manager'"):
        await open_checkpointer("memory://")  # type: ignore[call-arg]


def test_one_function_creates_the_process_wide_manager_and_only_the_edges_read_it() -> None:
    """``get_plugin_manager`` builds it; only the edges' ``manager_or_default`` calls it.

    Nothing else in the core or a plugin's package reads the process-wide manager: a run is
    priced on its agent's, an MCP token store opens on the kit's, a compactor resolves its
    model string on the manager it is given.
    """
    import ast

    root = Path(__file__).resolve().parents[1]
    packages = [root / "agentkit_core", *(root / "plugins").glob("*/agentkit_*")]
    creators, readers = [], []
    for path in (p for package in packages for p in package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "_default" for t in node.targets)
                    and isinstance(node.value, ast.Call)
                ):
                    creators.append(f"{path.name}:{fn.name}")
                called = node.func if isinstance(node, ast.Call) else None
                name = getattr(called, "id", None) or getattr(called, "attr", None)
                if name == "get_plugin_manager":
                    readers.append(f"{path.relative_to(root)}:{fn.name}")
    assert creators == ["_plugins.py:get_plugin_manager"]
    assert readers == ["agentkit_core/_plugins.py:manager_or_default"]
