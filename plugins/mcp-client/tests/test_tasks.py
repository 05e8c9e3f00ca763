"""One owner task per connection: servers added, called, removed and closed from other tasks."""

from __future__ import annotations

import asyncio

import pytest
from agentkit_mcp_client import MCPToolSource
from mcp_client_helpers import toy

from agentkit_core import ToolSourceError


async def in_task(coro):
    return await asyncio.create_task(coro)


async def test_add_in_one_task_call_in_another_remove_in_a_third():
    async with MCPToolSource() as source:
        first = await in_task(source.add(toy(), tool_filter="echo"))
        second = await in_task(source.add(toy(), tool_filter="echo", prefix="b_"))

        async def call(name, text):
            tool = next(t for t in await source.list_tools() if t.name == name)
            return (await tool.invoke({"text": text}, None)).content

        answers = await asyncio.gather(in_task(call("echo", "1")), in_task(call("b_echo", "2")))
        assert answers == ["1", "2"]
        await in_task(source.remove(first))  # not the task that added it
        assert [t.name for t in await source.list_tools()] == ["b_echo"]
        assert source.labels == [second]


async def test_concurrent_adds_get_distinct_labels():
    async with MCPToolSource() as source:
        labels = await asyncio.gather(
            *(source.add(toy(), tool_filter="echo", prefix=f"s{i}_") for i in range(3))
        )
        assert sorted(label[:6] for label in labels) == ["mcp:#1", "mcp:#2", "mcp:#3"]
        assert sorted(source.labels) == sorted(labels)
        assert sorted(t.name for t in await source.list_tools()) == [
            "s0_echo",
            "s1_echo",
            "s2_echo",
        ]


async def test_close_from_another_task_ends_a_call_started_elsewhere():
    source = await MCPToolSource([toy()]).start()
    sleep = next(t for t in await source.list_tools() if t.name == "sleep")
    call = asyncio.create_task(sleep.invoke({"seconds": 60}, None))
    await asyncio.sleep(0.3)
    await asyncio.wait_for(in_task(source.aclose()), 10)
    with pytest.raises(ToolSourceError, match=r"mcp:#1 .* was closed while calling tool 'sleep'"):
        await call
    await source.aclose()  # closing twice is fine
