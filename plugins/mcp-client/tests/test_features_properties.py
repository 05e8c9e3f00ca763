"""Invariants of the client features over random inputs (hypothesis): what a sampling request
becomes, and what a resource part keeps under a byte budget."""

from __future__ import annotations

import json

import mcp_types
from agentkit_mcp_client import ResourcePart
from agentkit_mcp_client._connection import Connection
from agentkit_mcp_client._connection import ServerParams
from agentkit_mcp_client._features import _sampling_request
from agentkit_mcp_client._source import MCPServerSource
from hypothesis import given
from hypothesis import strategies as st

texts = st.text(max_size=200)
sampled = st.lists(st.tuples(st.sampled_from(["user", "assistant"]), texts), min_size=1, max_size=6)


@given(sampled, st.one_of(st.none(), texts), st.integers(1, 100_000))
def test_a_sampling_request_keeps_every_message_and_says_it_to_the_policy(
    messages, system, max_tokens
):
    params = mcp_types.CreateMessageRequestParams(
        messages=[
            mcp_types.SamplingMessage(role=role, content=mcp_types.TextContent(text=text))
            for role, text in messages
        ],
        system_prompt=system,
        max_tokens=max_tokens,
    )
    request, arguments = _sampling_request(params)
    sent = list(request.messages)
    if system:
        assert sent.pop(0).text == system
    assert [(m.role, m.text) for m in sent] == messages
    assert request.settings["max_tokens"] == max_tokens
    assert json.loads(json.dumps(arguments))["messages"] == [
        {"role": r, "text": t} for r, t in messages
    ]


def _server() -> MCPServerSource:
    connection = Connection(
        ServerParams("unused"),
        "mcp:#1 unused",
        connect_timeout=1,
        call_timeout=None,
        elicitor=None,
        stderr=None,
    )
    return MCPServerSource(connection)


@given(
    st.dictionaries(st.text(min_size=1, max_size=20), st.text(max_size=300), min_size=1),
    st.one_of(st.none(), st.integers(1, 2000)),
    st.one_of(st.none(), st.integers(1, 2000)),
)
def test_a_resource_part_stays_within_its_budget_and_reports_the_rest(texts, own, given_budget):
    part = ResourcePart(_server(), list(texts), max_bytes=own)
    part.texts.update(texts)
    rendered = part.render(given_budget)
    budgets = [b for b in (own, given_budget) if b is not None]
    if budgets:
        assert len(rendered.text.encode()) <= min(budgets)
    left = [o.what for o in rendered.omissions]
    kept = [u for u in texts if u not in left]
    assert rendered.text == "\n\n".join(f"## {u}\n{texts[u]}" for u in kept)
    assert left == [u for u in texts if u in left]  # in the order given
