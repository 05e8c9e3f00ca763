"""LangChain: create_agent on a stub chat model."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable

from common import ANSWER
from common import MAX_TURNS
from common import main
from common import tools
from fake_chat import StubChat
from langchain.agents import create_agent


def make(kind: str) -> Callable[[int], Awaitable[object]]:
    graph = create_agent(StubChat(), list(tools(kind)), system_prompt="You are a benchmark.")

    async def run(turns: int) -> object:
        result = await graph.ainvoke(
            {"messages": [("user", "go")]}, {"recursion_limit": 2 * MAX_TURNS + 10}
        )
        assert result["messages"][-1].content == ANSWER, result["messages"][-1]
        return result

    return run


if __name__ == "__main__":
    main(make, "LangChain create_agent", "langchain")
