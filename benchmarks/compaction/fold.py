"""Summary calls over a long run: agentkit's fold beside LangChain's SummarizationMiddleware.

One run of TURNS turns: each turn the model calls ``fetch(page=i)``, whose result is about a
hundred tokens, then it answers. Both frameworks fold the transcript into a summary when it
passes THRESHOLD tokens and keep the newest KEEP tokens verbatim, counting tokens the same way
(agentkit's estimator: content, tool-call names, ids and arguments, 4 characters a token, 4 per
message). Both models are stubs that count what they are sent; the summary is a fixed text.

Reported: the summary calls each made, the folds (agentkit's on_fold observer; LangChain
replaces the transcript once per summary), the agent's own calls, and the tokens sent to the
model, the agent's requests and the summary requests apart.

    bash benchmarks/compaction/setup.sh
    benchmarks/.envs/compaction-all/bin/python benchmarks/compaction/fold.py
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

from agentkit_compactor_summarization import SummarizationCompactor
from bench import count_tokens
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool as lc_tool

from agentkit_core import Agent
from agentkit_core import Folding
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core import compaction
from agentkit_core import tool
from agentkit_core.plugin import Fold
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import estimate_tokens

TURNS = 200
THRESHOLD = 4_000
KEEP = 2_000
SUMMARY = "Pages fetched so far: all of them said lorem ipsum."
ANSWER = "I read every page."


def page(n: int) -> str:
    return f"page {n}: " + "lorem ipsum dolor " * 20


@dataclass
class Count:
    summary_calls: int = 0
    summary_tokens: int = 0
    agent_calls: int = 0
    agent_tokens: int = 0
    folds: int = 0


# --------------------------------------------------------------------------- agentkit


class AgentkitStub:
    """Calls fetch TURNS times, then answers; answers a summary request with SUMMARY."""

    name = "stub"

    def __init__(self, count: Count) -> None:
        self.count = count

    async def request(self, request: ModelRequest) -> ModelResponse:
        tokens = estimate_tokens(request.messages)
        if request.metadata.get("compaction"):
            self.count.summary_calls += 1
            self.count.summary_tokens += tokens
            return ModelResponse(Message.assistant(SUMMARY), Usage(tokens, 10, 1), "stop")
        self.count.agent_calls += 1
        self.count.agent_tokens += tokens
        n = self.count.agent_calls
        if n > TURNS:
            return ModelResponse(Message.assistant(ANSWER), Usage(tokens, 5, 1), "stop")
        call = ToolCall(f"call_{n}", "fetch", json.dumps({"n": n}))
        return ModelResponse(Message.assistant("", [call]), Usage(tokens, 10, 1), "tool_calls")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield StreamEvent("done", response=await self.request(request))


@tool
def fetch(n: int) -> str:
    """Fetch page n."""
    return page(n)


async def run_agentkit(stateless: bool = False) -> Count:
    """The fold; or, ``stateless``, the summarization compactor on every request (before it)."""
    count = Count()

    def heard(ctx: RunContext, fold: Fold) -> None:
        count.folds += 1
        assert fold.error is None, fold.error

    options: dict[str, Any] = {
        "compaction": Folding(budget=THRESHOLD, keep_recent=KEEP, on_fold=heard)
    }
    if stateless:
        summarizer = SummarizationCompactor(max_tokens=THRESHOLD, keep_recent=KEEP)
        options = {"middlewares": [compaction(summarizer)]}
    agent = Agent(
        "reader",
        AgentkitStub(count),
        "You read pages.",
        tools=[fetch],
        hooks=Hooks(),
        max_turns=TURNS + 1,
        **options,
    )
    result = await agent.run("Read every page.")
    assert result.output == ANSWER
    if stateless:
        count.folds = count.summary_calls  # each summary shortens one request, then is lost
    return count


# --------------------------------------------------------------------------- LangChain


class LangChainStub(BaseChatModel):
    """The same script as a LangChain chat model; ``summarizer=True`` answers SUMMARY."""

    count: Any
    summarizer: bool = False

    @property
    def _llm_type(self) -> str:
        return "stub"

    def bind_tools(self, tools: Any, **kwargs: Any) -> LangChainStub:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        tokens = count_tokens(list(messages))
        count = self.count
        if self.summarizer:
            count.summary_calls += 1
            count.summary_tokens += tokens
            message = AIMessage(SUMMARY)
        else:
            count.agent_calls += 1
            count.agent_tokens += tokens
            n = count.agent_calls
            if n > TURNS:
                message = AIMessage(ANSWER)
            else:
                call = {"name": "fetch", "args": {"n": n}, "id": f"call_{n}", "type": "tool_call"}
                message = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Any:
        return self._generate(messages, stop)


@lc_tool
def lc_fetch(n: int) -> str:
    """Fetch page n."""
    return page(n)


lc_fetch.name = "fetch"


async def run_langchain() -> Count:
    count = Count()
    summarize = SummarizationMiddleware(
        LangChainStub(count=count, summarizer=True),
        trigger=("tokens", THRESHOLD),
        keep=("tokens", KEEP),
        token_counter=count_tokens,
    )
    graph = create_agent(
        LangChainStub(count=count),
        [lc_fetch],
        system_prompt="You read pages.",
        middleware=[summarize],
    )
    result = await graph.ainvoke(
        {"messages": [("user", "Read every page.")]}, {"recursion_limit": 4 * TURNS + 10}
    )
    assert result["messages"][-1].content == ANSWER
    count.folds = count.summary_calls  # each summary replaces the transcript once
    return count


def main() -> None:
    print(
        f"{TURNS} turns, each a fetch of ~{count_tokens([AIMessage(page(1))])} tokens; fold past "
        f"{THRESHOLD} tokens keeping {KEEP}; langchain {version('langchain')}\n"
    )
    rows = {"agentkit Folding": asyncio.run(run_agentkit())}
    rows["LangChain SummarizationMiddleware"] = asyncio.run(run_langchain())
    rows["agentkit compaction(summarization), stateless"] = asyncio.run(run_agentkit(True))
    print(
        "| run | summary calls | folds | summary calls per fold | agent calls | tokens sent, "
        "agent | tokens sent, summaries | tokens sent, total |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, c in rows.items():
        per = c.summary_calls / c.folds if c.folds else float("nan")
        total = c.agent_tokens + c.summary_tokens
        print(
            f"| {name} | {c.summary_calls} | {c.folds} | {per:.2f} | {c.agent_calls} | "
            f"{c.agent_tokens:,} | {c.summary_tokens:,} | {total:,} |"
        )
    ours, theirs, _ = rows.values()
    sent = (ours.agent_tokens + ours.summary_tokens) / (theirs.agent_tokens + theirs.summary_tokens)
    calls = ours.summary_calls / theirs.summary_calls
    print(f"\nagentkit / LangChain: summary calls {calls:.2f}x, total tokens sent {sent:.2f}x")


if __name__ == "__main__":
    main()
