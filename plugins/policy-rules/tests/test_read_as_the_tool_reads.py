"""A deny or ask rule on a value holds for every spelling the tool reads as that value.

A tool's arguments are validated loosely (pydantic's lax mode, as ``@tool`` does): ``"1000000"``,
``1e6`` and ``" 1000000 "`` are the int 1000000, ``"yes"`` and ``1`` are true. An ``equals``
deny that compared JSON exactly let each of those through to a tool that ran it as the denied
value. An allow rule still compares exactly (``test_equals_compares_json_values_exactly``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentkit_policy_rules import Policy
from agentkit_policy_rules import Rule
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import ToolCall
from agentkit_core import tool
from agentkit_core.testing import make_test_ctx

paid: list[int] = []


@tool
def transfer(amount: int, confirm: bool = False) -> str:
    """Move money."""
    paid.append(amount)
    return f"moved {amount!r} ({confirm!r})"


def policy() -> Policy:
    return Policy(
        [
            Rule("deny", "transfer", id="no-million", match={"amount": {"equals": [1000000]}}),
            Rule("ask", "transfer", id="confirmed", match={"confirm": {"equals": [True]}}),
        ],
        default="allow",
    )


def decide(arguments: dict[str, Any]) -> str:
    return policy().would(ToolCall("c", "transfer", json.dumps(arguments)), source="tools").kind


async def read_by_the_tool(arguments: dict[str, Any]) -> str:
    """What the tool itself does with ``arguments``: the result it gives."""
    result = await transfer.invoke(arguments, make_test_ctx())
    return str(result.content)


@pytest.mark.parametrize(
    "amount", [1000000.0, 1e6, "1000000", " 1000000 ", "1000000.0", "+1000000"]
)
async def test_a_denied_amount_is_denied_however_it_is_spelt(amount: Any) -> None:
    assert (await read_by_the_tool({"amount": amount})).startswith("moved 1000000 ")
    assert decide({"amount": amount, "confirm": False}) == "deny", amount


@pytest.mark.parametrize("confirm", [1, "yes", "true", "On", "1", " t "])
async def test_an_asked_about_flag_is_asked_about_however_it_is_spelt(confirm: Any) -> None:
    read = await read_by_the_tool({"amount": 5, "confirm": confirm})
    if read.endswith("(True)"):  # the tool reads it as true: a person decides
        assert decide({"amount": 5, "confirm": confirm}) == "ask", confirm


@pytest.mark.parametrize("amount", [999999, "1000001", 1000000.5, "a million", [1000000]])
def test_other_values_are_not_denied(amount: Any) -> None:
    assert decide({"amount": amount, "confirm": False}) == "allow"


def spellings(number: int) -> st.SearchStrategy[Any]:
    """``number`` as JSON may spell it, and its neighbours, padded or signed."""
    near = st.sampled_from([number, number + 1, -number])
    return st.one_of(
        near,
        near.map(float),
        near.map(str),
        near.map(lambda n: f"{float(n):e}"),
        st.tuples(
            st.sampled_from(["", " ", "\t", "+"]), near, st.sampled_from(["", " ", ".0"])
        ).map(lambda t: f"{t[0]}{t[1]}{t[2]}"),
        st.booleans(),
        st.text(max_size=6),
    )


@given(st.sampled_from([0, 1, 7, 1000000]).flatmap(lambda n: st.tuples(st.just(n), spellings(n))))
async def test_what_the_tool_reads_as_the_denied_value_is_denied(case: tuple[int, Any]) -> None:
    denied, amount = case
    rules = [Rule("deny", "transfer", match={"amount": {"equals": [denied]}})]
    call = ToolCall("c", "transfer", json.dumps({"amount": amount}))
    verdict = Policy(rules, default="allow").would(call, source="tools").kind
    if (await read_by_the_tool({"amount": amount})).startswith(f"moved {denied} "):
        assert verdict == "deny", amount
