"""One answer's tool calls sharing an id: answers, verdicts and results are matched to calls by
id, so one approval could answer two calls (one the person never meant), or a deny and an ask
could share the id the person answers. Whatever model plugin sent it, the answer is refused as a
ProviderResponseError naming the id, and no call of it runs."""

from __future__ import annotations

import asyncio

import pytest
from agentkit_checkpoint_memory import MemoryCheckpointStore
from agentkit_policy_rules import Policy
from agentkit_policy_rules import Rule
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.testing import ScriptedModel


def agent(calls: list[ToolCall], ran: list[str], verdicts: dict[str, str]) -> Agent:
    def ls() -> str:
        """List."""
        ran.append("ls")
        return "files"

    def rm() -> str:
        """Remove."""
        ran.append("rm")
        return "removed"

    model = ScriptedModel([Message.assistant("", tool_calls=calls), Message.assistant("done")])
    policy = Policy([Rule(verdict, tool) for tool, verdict in verdicts.items()])
    return Agent(
        "a",
        model,
        "hi",
        [ls, rm],
        hooks=Hooks(),
        policy=policy,
        checkpointer=MemoryCheckpointStore(),
    )


@pytest.mark.parametrize(
    "verdicts",
    [{"rm": "ask", "ls": "ask"}, {"rm": "deny", "ls": "ask"}, {"rm": "deny", "ls": "allow"}],
)
@pytest.mark.parametrize("first", ["rm", "ls"])
def test_one_id_on_two_calls_runs_nothing(verdicts: dict[str, str], first: str):
    ran: list[str] = []
    second = "ls" if first == "rm" else "rm"
    calls = [ToolCall("c1", first, "{}"), ToolCall("c1", second, "{}")]
    with pytest.raises(ProviderResponseError, match=r"one id to several tool calls .*'c1'"):
        asyncio.run(agent(calls, ran, verdicts).run("go"))
    assert ran == []


@settings(max_examples=40, deadline=None)
@given(ids=st.lists(st.sampled_from(["c1", "c2", "c3", "", " c1"]), min_size=1, max_size=5))
def test_an_answer_runs_exactly_when_its_ids_are_distinct(ids: list[str]):
    ran: list[str] = []
    calls = [ToolCall(i, "ls", "{}") for i in ids]
    run = agent(calls, ran, {"ls": "allow"}).run("go")
    if len(set(ids)) == len(ids):
        assert asyncio.run(run).output == "done"
        assert ran == ["ls"] * len(ids)
    else:
        with pytest.raises(ProviderResponseError):
            asyncio.run(run)
        assert ran == []
