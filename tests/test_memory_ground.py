"""Grounding from memory: the k entries best matching a run's task in its request, recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import agentkit_memory_files
import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Memory
from agentkit_core import MemoryGrounder
from agentkit_core import PluginManager
from agentkit_core import Sessions
from agentkit_core import open_memory
from agentkit_core.plugin import RequestBuilder
from agentkit_core.plugin import open_session_store
from agentkit_core.testing import ScriptedModel

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

NOTES = {
    ("project", "Deploy"): "Production deploys run with make release on Tuesdays.",
    ("project", "CI"): "CI runs the test suite on every push.",
    ("user", "Coffee"): "The user drinks espresso.",
    ("user", "Editor"): "The user edits in Vim.",
}


def manager() -> PluginManager:
    return PluginManager(entry_points=False, plugins=[agentkit_memory_files])


async def filled(tmp_path: Path) -> Memory:
    memory = await open_memory(f"file://{tmp_path}/mem", manager=PM)
    for (scope, title), body in NOTES.items():
        await memory.save(scope, title, body, base=0)
    return memory


def grounding(request: Any) -> str:
    """The request's grounding message: the system message after the prompt."""
    texts = [m.text for m in request.messages if m.role == "system"]
    return next((t for t in texts if t.startswith("Relevant context:")), "")


async def test_an_agent_with_memory_is_grounded_on_the_best_entries(tmp_path: Path) -> None:
    memory = await filled(tmp_path)
    model = ScriptedModel(["Tuesdays."])
    agent = Agent(model=model, prompt="Be brief.", memory=MemoryGrounder(memory, k=2))
    await agent.run("when do production deploys run?")
    block = grounding(model.requests[0])
    assert "### Deploy" in block and "make release on Tuesdays" in block
    assert block.index("### Deploy") < block.index("### CI")  # best first
    assert "Coffee" not in block and "Editor" not in block  # k=2, and no match
    # provenance: the store and score, then the entry framed with its scope and version
    assert f"[{memory.store.url} score " in block
    assert "memory scope project, version 1" in block
    assert model.requests[0].messages[-1].text == "when do production deploys run?"
    await memory.aclose()


async def test_nothing_matching_adds_no_grounding(tmp_path: Path) -> None:
    memory = await filled(tmp_path)
    model = ScriptedModel(["ok"])
    await Agent(model=model, memory=memory).run("?!")
    assert grounding(model.requests[0]) == ""
    await memory.aclose()


async def test_a_kit_grounds_and_records_what_it_grounded_on(tmp_path: Path, pm) -> None:
    await (await filled(tmp_path)).aclose()
    sessions = Sessions(await open_session_store("memory://", manager=pm))
    model = ScriptedModel(["Vim."])
    options = {"store": f"file://{tmp_path}/mem", "scopes": ["user"], "ground": 1}
    async with await Kit.open(
        model=model, manager=manager(), memory=options, session=sessions
    ) as kit:
        assert kit.config().memory is not None
        await Agent.from_config(kit.config()).run("which editor does the user use?")
        path = await sessions.path(kit.session_id)
    block = grounding(model.requests[0])
    assert "### Editor" in block and "### Coffee" not in block
    [ground] = [i.body for i in path if i.kind == "memory/ground"]
    assert ground["k"] == 1 and ground["scopes"] == ["user"]
    [hit] = ground["hits"]
    assert (hit["scope"], hit["title"], hit["version"]) == ("user", "Editor", 1)
    assert hit["store"] == f"file://{tmp_path}/mem" and hit["score"] > 0
    kinds = [i.kind for i in path]
    assert kinds.index("memory/ground") < kinds.index("response")
    # the grounding reached the session as the request's instructions, with the block
    [instructions] = [i.body for i in path if i.kind == "instructions"]
    [part] = [p for p in instructions["parts"] if p["message"] == 1]
    assert part["text"] == block and part["source"] == "request"


async def test_a_kit_without_ground_does_not_ground(tmp_path: Path) -> None:
    options = {"store": f"file://{tmp_path}/mem", "scopes": ["user"]}
    async with await Kit.open(model="test", manager=manager(), memory=options) as kit:
        assert kit.config().memory is None


@pytest.mark.parametrize("k", [0, -1, True, False, "3", 2.5])
async def test_bad_ground_values_are_refused_naming_value_and_where(tmp_path: Path, k: Any) -> None:
    options = {"store": f"file://{tmp_path}/mem", "scopes": ["user"], "ground": k}
    with pytest.raises(ConfigError, match=r"Kit\(memory=\{'ground': \.\.\.\}\)") as caught:
        await Kit.open(model="test", manager=manager(), memory=options)
    assert caught.value.value == k and repr(k) in str(caught.value)
    assert not (tmp_path / "mem").exists()  # refused before the store was opened
    with pytest.raises(ConfigError, match=r"MemoryGrounder\(k=\)"):
        MemoryGrounder(Memory.__new__(Memory), k=k)


async def test_bad_memory_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"Agent\(memory=\) takes a MemoryGrounder"):
        Agent(model="test", memory="file:mem")  # type: ignore[arg-type]
    memory = await filled(tmp_path)
    builder = RequestBuilder(Agent(model="test").request_builder.prompt)
    with pytest.raises(ConfigError, match="both memory= and request_builder="):
        Agent(model="test", memory=memory, request_builder=builder)
    with pytest.raises(ConfigError, match=r"Memory.query\(k=\) 0"):
        await memory.query("deploys", 0)
    await memory.aclose()
