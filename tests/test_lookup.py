"""The lookup layer: every name goes through an explicit manager; no silent stand-in model.

Two managers in one process must never see each other's plugins, on any seam. Each seam below
has a tiny plugin class that registers the name ``shared`` carrying a tag; a probe looks the
name up on one manager the way a user (or the kit) would and answers with the tag it found,
or None when the manager has nothing under that name.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import agentkit_compactor_summarization
import pytest
from agentkit_checkpoint_memory import MemoryCheckpointStore
from agentkit_schema_dataclass import DataclassAdapter
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import AgentConfig
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import TurnInfo
from agentkit_core import UnknownNameError
from agentkit_core import compaction
from agentkit_core import hookimpl
from agentkit_core import open_checkpointer
from agentkit_core.cli import main
from agentkit_core.plugin import Guardrail
from agentkit_core.plugin import MemoryListing
from agentkit_core.plugin import Rendered
from agentkit_core.plugin import UnsupportedTypeError
from agentkit_core.plugin import adapt
from agentkit_core.plugin import get_compactor
from agentkit_core.plugin import get_guardrail
from agentkit_core.plugin import get_instruction_part
from agentkit_core.plugin import get_tool_source
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.plugin import open_memory_store
from agentkit_core.plugin import resolve_model
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import TestModel
from agentkit_core.testing import make_test_ctx

# ----------------------------------------------------------------- tagged implementations


class TaggedCompactor:
    def __init__(self, tag: str) -> None:
        self.tag = tag

    async def compact(self, messages: list[Message], ctx: Any) -> list[Message]:
        return messages


class TaggedGuardrail(Guardrail):
    def __init__(self, tag: str) -> None:
        self.tag = tag

    def check_url(self, url: str) -> None:
        return None


class TaggedModel(ScriptedModel):
    def __init__(self, tag: str, name: str) -> None:
        super().__init__(["ok"])
        self.tag = tag
        self.name = f"{tag}:{name}"


class TaggedStore(MemoryCheckpointStore):
    def __init__(self, tag: str) -> None:
        super().__init__()
        self.tag = tag


class TaggedMemoryStore:
    url = "shared://x"

    def __init__(self, tag: str) -> None:
        self.tag = tag

    async def scopes(self) -> list[str]:
        return []

    async def entries(self, scope: str) -> MemoryListing:
        return MemoryListing(())

    async def get(self, scope: str, title: str) -> None:
        return None

    async def forgotten(self, scope: str, title: str) -> int:
        return 0

    async def put(self, entry: Any, expected: int) -> bool:
        return False

    async def delete(self, scope: str, title: str, expected: int | None) -> bool:
        return False

    async def query(self, text: str, k: int, scopes: Any = None) -> list[Any]:
        return []

    async def aclose(self) -> None:
        return None


@dataclass
class TaggedPart:
    tag: str
    id: str = "shared"
    source: str = "shared"
    shrinkable: bool = False
    tools: tuple[Any, ...] = ()

    def render(self, max_bytes: int | None) -> Rendered:
        return Rendered(f"part from {self.tag}")


@dataclass
class TaggedSource:
    label: str

    async def list_tools(self) -> list[Any]:
        return []

    async def tools(self) -> list[Any]:
        return []

    async def aclose(self) -> None:
        return None


@dataclass
class Marker:
    """An output type only the ``shared`` schema flavour accepts (before the stock ones)."""

    text: str = ""


class TaggedAdapter(DataclassAdapter[Marker]):
    def __init__(self, tag: str) -> None:
        super().__init__(Marker)
        self.tag = tag


# ----------------------------------------------------------------- one plugin per seam


class Plugin:
    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.AGENTKIT_NAME = f"{type(self).__name__.lower()}-{tag}"


class CompactorPlugin(Plugin):
    @hookimpl
    def agentkit_register_compactors(self, register: Any) -> None:
        register("shared", lambda: TaggedCompactor(self.tag))


class GuardrailPlugin(Plugin):
    @hookimpl
    def agentkit_register_guardrails(self, register: Any) -> None:
        register("shared", lambda: TaggedGuardrail(self.tag))


class ModelPlugin(Plugin):
    @hookimpl
    def agentkit_register_models(self, register: Any) -> None:
        register("shared", lambda name: TaggedModel(self.tag, name))


class StorePlugin(Plugin):
    @hookimpl
    def agentkit_register_checkpoint_stores(self, register: Any) -> None:
        register("shared", lambda url: TaggedStore(self.tag))


class MemoryStorePlugin(Plugin):
    @hookimpl
    def agentkit_register_memory_stores(self, register: Any) -> None:
        register("shared", lambda url: TaggedMemoryStore(self.tag))


class FlavourPlugin(Plugin):
    @hookimpl
    def agentkit_register_schema_adapters(self, register: Any) -> None:
        register("shared", lambda tp: tp is Marker, lambda tp: TaggedAdapter(self.tag), rank=1)


class PartPlugin(Plugin):
    @hookimpl
    def agentkit_register_instruction_parts(self, register: Any) -> None:
        register("shared", lambda: TaggedPart(self.tag))


class SourcePlugin(Plugin):
    @hookimpl
    def agentkit_register_tool_sources(self, register: Any) -> None:
        register("shared", lambda: TaggedSource(self.tag))


class HookPlugin(Plugin):
    @hookimpl
    def agentkit_before_turn(self, ctx: Any, info: Any) -> list[Message]:
        return [Message.user(self.tag)]


class CommandPlugin(Plugin):
    @hookimpl
    def agentkit_register_commands(self, cli: Any) -> None:
        cli.add_parser("shared").set_defaults(func=lambda args: EXIT_CODES[self.tag])


EXIT_CODES = {"a": 11, "b": 12}


def _missing(probe: Callable[[PluginManager], str]) -> Callable[[PluginManager], str | None]:
    def run(pm: PluginManager) -> str | None:
        try:
            return probe(pm)
        except (UnknownNameError, UnsupportedTypeError):
            return None

    return run


def _command(pm: PluginManager) -> str | None:
    code = main(["shared"], manager=pm)  # 2: a usage error, no such command on this manager
    return {v: k for k, v in EXIT_CODES.items()}.get(code) if code != 2 else None


def _hooks(pm: PluginManager) -> str | None:
    added = asyncio.run(Hooks.from_plugins(pm).run_before_turn(make_test_ctx(), TurnInfo(1)))
    return added[0].text if added else None


#: seam -> (the plugin class, how a user reaches it by name on one manager)
SEAMS: dict[str, tuple[type[Plugin], Callable[[PluginManager], str | None]]] = {
    "compactor": (CompactorPlugin, _missing(lambda pm: get_compactor("shared", manager=pm).tag)),  # type: ignore[attr-defined]
    "guardrail": (GuardrailPlugin, _missing(lambda pm: get_guardrail("shared", manager=pm).tag)),  # type: ignore[attr-defined]
    "model prefix": (
        ModelPlugin,
        _missing(lambda pm: resolve_model("shared:m", manager=pm).tag),  # type: ignore[attr-defined]
    ),
    "checkpoint store scheme": (
        StorePlugin,
        _missing(lambda pm: asyncio.run(open_checkpoint_store("shared://x", manager=pm)).tag),  # type: ignore[attr-defined]
    ),
    "memory store scheme": (
        MemoryStorePlugin,
        _missing(lambda pm: asyncio.run(open_memory_store("shared://x", manager=pm)).tag),  # type: ignore[attr-defined]
    ),
    "schema adapter flavour": (
        FlavourPlugin,
        _missing(lambda pm: adapt(Marker, manager=pm).tag),  # type: ignore[attr-defined]
    ),
    "instruction part": (
        PartPlugin,
        _missing(lambda pm: get_instruction_part("shared", manager=pm).tag),  # type: ignore[attr-defined]
    ),
    "tool source": (SourcePlugin, _missing(lambda pm: get_tool_source("shared", manager=pm).label)),
    "contested hooks": (HookPlugin, _hooks),
    "CLI commands": (CommandPlugin, _command),
}


def lonely(*plugins: Any) -> PluginManager:
    return PluginManager(entry_points=False, plugins=plugins)


@pytest.mark.parametrize("seam", SEAMS)
def test_each_manager_sees_only_its_own_plugin_on_every_seam(seam: str) -> None:
    plugin, probe = SEAMS[seam]
    a, b, empty = lonely(plugin("a")), lonely(plugin("b")), lonely()
    assert (probe(a), probe(b), probe(empty)) == ("a", "b", None)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(SEAMS)), st.sampled_from(["a", "b", "both"])))
def test_any_split_of_plugins_over_two_managers_keeps_them_apart(split: dict[str, str]) -> None:
    """Whatever each manager holds, a lookup on it finds its own plugin or nothing."""
    on_a = [SEAMS[s][0]("a") for s, where in split.items() if where in ("a", "both")]
    on_b = [SEAMS[s][0]("b") for s, where in split.items() if where in ("b", "both")]
    a, b = lonely(*on_a), lonely(*on_b)
    for seam, (_, probe) in SEAMS.items():
        where = split.get(seam)
        assert probe(a) == ("a" if where in ("a", "both") else None), seam
        assert probe(b) == ("b" if where in ("b", "both") else None), seam


def everything(tag: str) -> PluginManager:
    return lonely(*(plugin(tag) for plugin, _ in SEAMS.values()))


MEMORY: Any = {"store": "shared://x", "scopes": ["user"]}
KIT_OPTIONS: dict[str, Any] = {
    "model": "shared:m",
    "compactor": "shared",
    "guardrail": "shared",
    "parts": {"shared": {}},
}


async def test_two_kits_on_two_managers_never_see_each_others_plugins() -> None:
    a, b = everything("a"), everything("b")
    async with (
        await Kit.open(
            manager=a, tool_sources={"shared": {}}, memory=MEMORY, **KIT_OPTIONS
        ) as kit_a,
        await Kit.open(
            manager=b, tool_sources={"shared": {}}, memory=MEMORY, **KIT_OPTIONS
        ) as kit_b,
    ):
        for kit, tag in ((kit_a, "a"), (kit_b, "b")):
            config = kit.config()
            assert config.model.tag == tag  # type: ignore[union-attr]
            assert config.instructions.endswith(f"part from {tag}")  # after memory, by name
            assert kit.memory.memory.store.tag == tag  # type: ignore[union-attr]
            (compacting,) = config.middlewares
            assert compacting.compactor.tag == tag  # type: ignore[attr-defined]
            assert config.guardrail.tag == tag  # type: ignore[union-attr]
            assert [s for s, _ in config.hooks.before_turn] == [f"hookplugin-{tag}"]
            assert [o for o in kit._union_sources if o[0] == tag]
            agent = Agent.from_config(config, output=Marker)
            assert agent.manager is (a if tag == "a" else b)
            assert agent._adapter.tag == tag  # type: ignore[union-attr]


@pytest.mark.parametrize("option", ["model", "compactor", "guardrail", "parts"])
def test_a_kit_on_a_manager_without_the_plugin_names_what_is_installed(option: str) -> None:
    options = {"model": "test", option: KIT_OPTIONS[option]}
    Kit(manager=everything("a"), **options)
    with pytest.raises(UnknownNameError, match=r"'shared'.*installed: none"):
        Kit(manager=lonely(), **options)
    with pytest.raises(UnknownNameError, match=r"'shared'"):
        Kit(**options)  # the process-wide default has no such plugin either


async def test_agent_and_checkpointer_look_up_on_their_manager() -> None:
    a = everything("a")
    agent = Agent("x", "shared:m", output=Marker, manager=a)
    assert agent.model.tag == "a"  # type: ignore[attr-defined]
    assert [s for s, _ in agent.hooks.before_turn] == ["hookplugin-a"]
    with pytest.raises(UnknownNameError, match=r"no model named 'shared'"):
        Agent("x", "shared:m", manager=lonely())
    with pytest.raises(UnsupportedTypeError, match=r"installed flavours: none"):
        Agent("x", "test", output=Marker, manager=lonely())
    cp = await open_checkpointer("shared://x", manager=a)
    assert cp.port.tag == "a"  # type: ignore[attr-defined]
    with pytest.raises(UnknownNameError, match=r"scheme 'shared'.*installed schemes: none"):
        await open_checkpointer("shared://x", manager=lonely())


def test_a_factory_that_declares_manager_gets_the_one_the_lookup_ran_on() -> None:
    a = lonely(agentkit_compactor_summarization, ModelPlugin("a"))
    compactor = get_compactor("summarization", manager=a, model="shared:m")
    assert compactor.model.tag == "a"  # type: ignore[attr-defined]
    with pytest.raises(UnknownNameError, match=r"no model named 'shared'"):
        get_compactor(
            "summarization", manager=lonely(agentkit_compactor_summarization), model="shared:m"
        )
    kit = Kit(
        model="test",
        manager=a,
        compactor="summarization",
        compactor_options={"model": "shared:m"},
    )
    assert kit.config().middlewares[0].compactor.model.tag == "a"  # type: ignore[attr-defined]


def test_manager_is_never_an_option() -> None:
    a = lonely(agentkit_compactor_summarization)
    with pytest.raises(ConfigError, match=r"compactor_options names 'manager'.*Kit\(manager=pm\)"):
        Kit(model="test", manager=a, compactor="summarization", compactor_options={"manager": a})


def test_seams_take_objects_not_names() -> None:
    for given_ in ("truncation", TaggedCompactor):
        with pytest.raises(ConfigError, match=r"compaction\(\) needs a Compactor object"):
            compaction(given_)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"get_compactor\('truncation', manager=pm\)"):
        compaction("truncation")  # type: ignore[arg-type]


# ----------------------------------------------------------------- no silent stand-in model


def test_no_model_is_an_error_that_says_how_to_pass_one(
    monkeypatch: pytest.MonkeyPatch, pm
) -> None:
    monkeypatch.delenv("AGENTKIT_MODEL", raising=False)
    with pytest.raises(ConfigError, match=r"no model given: pass model=.*or set AGENTKIT_MODEL"):
        Agent("ops")
    with pytest.raises(ConfigError, match=r"no model given: pass model=.*or set AGENTKIT_MODEL"):
        Kit(manager=lonely())
    with pytest.raises(ConfigError, match=r"no model given"):
        Agent.from_config(AgentConfig())
    monkeypatch.setenv("AGENTKIT_MODEL", "  ")
    with pytest.raises(ConfigError, match=r"AGENTKIT_MODEL is set but empty"):
        resolve_model(None, manager=pm)


#: Runs agents the ways a product does, on the real installed plugins, then reports which
#: ``agentkit_core.testing`` modules were imported.
RUNTIME = textwrap.dedent(
    """
    import asyncio, contextlib, io, os, sys
    from agentkit_core import Agent, Kit, tool
    from agentkit_core.cli import main

    @tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

    assert Agent("calc", "test", tools=[add]).run_sync("add").status == "done"
    kit = Kit(model="test", tools=[add], compactor="truncation", guardrail="web")
    assert Agent.from_config(kit.config()).run_sync("add").status == "done"
    os.environ["AGENTKIT_MODEL"] = "test"
    assert Agent("calc", tools=[add]).run_sync("add").status == "done"
    del os.environ["AGENTKIT_MODEL"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["run", "say hi"]) == 0  # the CLI's labelled demo run
        assert main(["plugins", "list"]) == 0
    print(sorted(m for m in sys.modules if m.startswith("agentkit_core.testing")))
    """
)


def test_running_agents_on_the_real_plugins_never_imports_the_testing_package() -> None:
    env = {k: v for k, v in os.environ.items() if k != "AGENTKIT_MODEL"}
    out = subprocess.run(
        [sys.executable, "-c", RUNTIME], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_agentkit_model_names_the_model_when_none_is_passed(
    monkeypatch: pytest.MonkeyPatch,
    pm,
) -> None:
    monkeypatch.setenv("AGENTKIT_MODEL", "test")
    assert isinstance(Agent("ops", hooks=None, manager=lonely()).model, TestModel)
    assert isinstance(
        resolve_model(None, environ={"AGENTKIT_MODEL": "test"}, manager=pm), TestModel
    )
    monkeypatch.setenv("AGENTKIT_MODEL", "shared:m")
    assert Agent("ops", manager=everything("b")).model.tag == "b"  # type: ignore[attr-defined]


def test_a_model_prefix_is_looked_up_on_the_given_manager() -> None:
    with pytest.raises(UnknownNameError, match=r"no model named 'openai' is installed"):
        resolve_model("openai:gpt-4o-mini", manager=lonely())
