"""Memory in the kit: the block in every request, writes between runs, processes and sessions."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import agentkit_memory_files
import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import open_memory
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import open_session_store
from agentkit_core.testing import ScriptedModel


def manager() -> PluginManager:
    """Only the files store: no other plugin's hooks in the requests these tests read."""
    return PluginManager(entry_points=False, plugins=[agentkit_memory_files])


def save(title: str, body: str, scope: str = "project", id: str = "c1") -> Message:
    args = {"scope": scope, "title": title, "body": body}
    return Message.assistant("", [ToolCall(id, "memory_save", json.dumps(args))])


def memory_options(tmp_path: Path, **more: Any) -> dict[str, Any]:
    return {"store": f"file://{tmp_path}/mem", "scopes": ["user", "project"], **more}


def results(transcript: list[Message]) -> list[str]:
    return [str(m.content) for m in transcript if m.role == "tool"]


def test_memory_needs_an_opened_kit(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="memory= must be opened"):
        Kit(model="test", manager=manager(), memory=memory_options(tmp_path))


@pytest.mark.parametrize(
    ("memory", "message"),
    [
        ({"store": "file:x", "scope": ["user"]}, "unknown key 'scope'.*did you mean 'scopes'"),
        ("file:x", "memory= takes a table of options"),
        ({"store": "file:x", "scopes": ["user"], "read_only": ["user"]}, "every memory scope"),
    ],
)
async def test_bad_memory_options_are_refused(memory: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        await Kit.open(model="test", manager=manager(), memory=memory)


async def test_the_memory_group_takes_its_place_in_the_order(tmp_path: Path) -> None:
    options = memory_options(tmp_path, scopes=["user"])
    async with await Kit.open(
        model="test", manager=manager(), instructions="Be brief.", memory=options
    ) as kit:
        assert [p.id for p in kit.parts()] == [
            "product",
            "memory",
            "memory/user",
            "memory:summary",
            "memory:usage",
        ]
        assert [(o.name, o.source) for o in kit.tools()] == [
            ("memory_save", "memory"),
            ("memory_patch", "memory"),
            ("memory_forget", "memory"),
            ("memory_search", "memory"),
        ]
    async with await Kit.open(
        model="test",
        manager=manager(),
        instructions="Be brief.",
        memory=options,
        order=["memory", "product"],
    ) as kit:
        assert [p.id for p in kit.parts()][-1] == "product"
        assert kit.config().instructions.endswith("\n\nBe brief.")


async def test_a_save_in_one_turn_is_in_the_next_request(tmp_path: Path) -> None:
    model = ScriptedModel([save("Deploy", "Run make release."), "noted"])
    async with await Kit.open(
        model=model, manager=manager(), instructions="Be brief.", memory=memory_options(tmp_path)
    ) as kit:
        before = kit.memory_manifest()
        result = await Agent.from_config(kit.config()).run("remember how we deploy")
        first, second = (r.messages[0].text for r in model.requests)
        assert "Run make release." not in first and "Run make release." in second
        assert second.startswith("Be brief.\n\n# Memory")
        assert results(result.transcript) == ["saved 'Deploy' in scope 'project' (version 1)"]
        after = kit.memory_manifest()
        assert after.hash != before.hash and after.shown == (("project", "Deploy", 1),)
        assert "memory/project/Deploy" in [p.id for p in kit.parts()]
        assert kit.config().instructions == first  # a config is a value: the first render


async def test_the_budget_drops_the_block_and_its_writes_and_says_so(tmp_path: Path, pm) -> None:
    async with await open_memory(f"file://{tmp_path}/mem", manager=pm) as memory:
        await memory.save("user", "Tabs", "Indent with tabs.", base=0)
    model = ScriptedModel([save("Deploy", "x"), "ok"])
    async with await Kit.open(
        model=model,
        manager=manager(),
        instructions="Be brief.",
        memory=memory_options(tmp_path),
        instruction_budget=100,
    ) as kit:
        assert [o.what for o in kit.omitted()] == ["memory", "memory/user/Tabs"]
        assert kit.config().instructions == "Be brief."
        result = await Agent.from_config(kit.config()).run("save it")
        assert [t.name for t in model.requests[0].tools] == ["memory_search"]
        [refused] = results(result.transcript)
        assert "did not fit the instruction budget" in refused


class Gated(ScriptedModel):
    """A scripted model whose first answer waits until the test opens the gate."""

    def __init__(self, steps: list[Any]) -> None:
        super().__init__(steps)
        self.gate = asyncio.Event()

    async def request(self, request: ModelRequest) -> ModelResponse:
        response = self._next(request)
        if len(self.requests) == 1:
            await self.gate.wait()
        return response


async def test_concurrent_runs_off_one_kit_each_write_over_their_own_render(
    tmp_path: Path,
    pm,
) -> None:
    async with await open_memory(f"file://{tmp_path}/mem", manager=pm) as memory:
        await memory.save("project", "Deploy", "make release", base=0)
    slow = Gated([save("Deploy", "make ship"), save("Deploy", "make ship", id="c2"), "done"])
    fast = ScriptedModel([save("Deploy", "make release && tag"), "done"])
    async with await Kit.open(
        model="test", manager=manager(), memory=memory_options(tmp_path)
    ) as kit:
        config = kit.config()
        a = asyncio.create_task(Agent.from_config(config, model=slow).run("a"))
        while not slow.requests:  # a has rendered (version 1) and waits for its answer
            await asyncio.sleep(0.01)
        b = await Agent.from_config(config, model=fast).run("b")
        assert results(b.transcript) == ["saved 'Deploy' in scope 'project' (version 2)"]
        slow.gate.set()
        refused, retried = results((await a).transcript)
    assert "based on version 1" in refused and "make release && tag" in refused
    assert retried == "saved 'Deploy' in scope 'project' (version 3)"
    assert "make release && tag" in slow.requests[1].messages[0].text  # re-rendered for a


WORKER = textwrap.dedent(
    """
    import asyncio, json, sys
    import agentkit_memory_files
    from agentkit_core import Agent, Kit, Message, PluginManager, ToolCall
    from agentkit_core.testing import ScriptedModel

    class Waits(ScriptedModel):
        async def request(self, request):
            response = self._next(request)
            if len(self.requests) == 1:
                print("rendered", flush=True)
                await asyncio.to_thread(sys.stdin.readline)
            return response

    def save(id, body):
        args = {"scope": "project", "title": "Deploy", "body": body}
        return Message.assistant("", [ToolCall(id, "memory_save", json.dumps(args))])

    async def main():
        pm = PluginManager(entry_points=False, plugins=[agentkit_memory_files])
        model = Waits([save("c1", "from the worker"), save("c2", "from the worker"), "done"])
        memory = {"store": sys.argv[1], "scopes": ["project"]}
        async with await Kit.open(model=model, manager=pm, memory=memory) as kit:
            result = await Agent.from_config(kit.config()).run("save")
        print(json.dumps([str(m.content) for m in result.transcript if m.role == "tool"]))

    asyncio.run(main())
    """
)


async def test_two_processes_never_write_over_each_other_unseen(tmp_path: Path, pm) -> None:
    url = f"file://{tmp_path}/mem"
    async with await open_memory(url, manager=pm) as memory:
        await memory.save("project", "Deploy", "make release", base=0)
        worker = subprocess.Popen(
            [sys.executable, "-c", WORKER, url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert worker.stdout is not None and worker.stdin is not None
        assert worker.stdout.readline() == "rendered\n"
        await memory.save("project", "Deploy", "make release, from this process", base=1)
        out, err = worker.communicate("go\n", timeout=60)
        assert worker.returncode == 0, err
        refused, retried = json.loads(out.splitlines()[-1])
        assert "based on version 1" in refused and "from this process" in refused
        assert retried == "saved 'Deploy' in scope 'project' (version 3)"
        assert (await memory.get("project", "Deploy")).body == "from the worker"  # type: ignore[union-attr]


async def test_a_write_names_its_session_and_is_recorded_as_the_entry_s_part(
    tmp_path: Path,
    pm,
) -> None:
    sessions = Sessions(await open_session_store("memory://", manager=pm))
    model = ScriptedModel([save("CI", "Runs on push."), "noted"])
    async with await Kit.open(
        model=model,
        manager=manager(),
        instructions="Be brief.",
        memory=memory_options(tmp_path),
        session=sessions,
    ) as kit:
        await Agent.from_config(kit.config()).run("remember CI")
        path = await sessions.path(kit.session_id)
        entry = await kit.memory.memory.get("project", "CI")  # type: ignore[union-attr]
    assert entry is not None and entry.session == kit.session_id
    first, second = [i.body for i in path if i.kind == "instructions"]
    assert [p["id"] for p in first["parts"]][:2] == ["product", "memory"]
    assert second["base"] == first["hash"]
    assert [p["id"] for p in second["changed"]] == ["memory/project/CI", "memory:summary"]
    assert "memory/project/CI" in second["order"]
    [write] = [i.body for i in path if i.kind == "memory/write"]
    assert (write["op"], write["part"], write["version"]) == ("save", "memory/project/CI", 1)
    kinds = [i.kind for i in path]
    assert kinds.index("memory/write") < kinds.index("tool_result")


async def test_the_kit_fingerprint_does_not_follow_what_memory_holds(tmp_path: Path, pm) -> None:
    prints = []
    for body in (None, "one fact", "another fact"):
        if body is not None:
            async with await open_memory(f"file://{tmp_path}/mem", manager=pm) as memory:
                await memory.save("user", "k", body, base=None)
        async with await Kit.open(
            model="test", manager=manager(), memory=memory_options(tmp_path)
        ) as kit:
            prints.append(kit.fingerprint())
    assert len(set(prints)) == 1


async def test_a_store_the_kit_opened_is_closed_with_it_and_one_given_is_not(
    tmp_path: Path,
    pm,
) -> None:
    kit = await Kit.open(model="test", manager=manager(), memory=memory_options(tmp_path))
    opened = kit.memory.memory  # type: ignore[union-attr]
    await kit.aclose()
    with pytest.raises(Exception, match="closed"):
        await opened.entries("user")
    async with await open_memory(f"file://{tmp_path}/mem", manager=pm) as given:
        options = memory_options(tmp_path, store=given)
        async with await Kit.open(model="test", manager=manager(), memory=options):
            pass
        assert (await given.entries("user")).entries == ()  # still open


async def test_a_memory_write_is_a_memory_write_event_a_refused_one_is_not(
    tmp_path: Path,
) -> None:
    from agentkit_core.events import MemoryWrite
    from agentkit_core.events import ToolFinished

    model = ScriptedModel(
        [save("Deploy", "with make", id="c1"), save("X", "y", scope="nope", id="c2"), "saved"]
    )
    async with await Kit.open(
        model=model, manager=manager(), memory=memory_options(tmp_path)
    ) as kit:
        events = [e async for e in Agent.from_config(kit.config()).run_stream_events("save")]
    writes = [e for e in events if isinstance(e, MemoryWrite)]
    assert [(w.tool, w.call_id) for w in writes] == [("memory_save", "c1")]
    finished = {e.call_id: e for e in events if isinstance(e, ToolFinished)}
    assert finished["c2"].is_error and not finished["c1"].is_error
    assert writes[0].seq < finished["c1"].seq  # told by the tool, before its call ends
