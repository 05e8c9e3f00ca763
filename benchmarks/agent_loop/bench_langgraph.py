"""LangGraph: the prebuilt ReAct agent (create_react_agent) on a stub chat model."""

from __future__ import annotations

import warnings
from collections.abc import Awaitable
from collections.abc import Callable

from common import ANSWER
from common import MAX_TURNS
from common import main
from common import tools
from fake_chat import StubChat

warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of create_agent


def make(kind: str) -> Callable[[int], Awaitable[object]]:
    from langgraph.prebuilt import create_react_agent

    graph = create_react_agent(StubChat(), list(tools(kind)), prompt="You are a benchmark.")

    async def run(turns: int) -> object:
        result = await graph.ainvoke(
            {"messages": [("user", "go")]}, {"recursion_limit": 2 * MAX_TURNS + 10}
        )
        assert result["messages"][-1].content == ANSWER, result["messages"][-1]
        return result

    return run


if __name__ == "__main__":
    main(make, "LangGraph create_react_agent", "langgraph")
