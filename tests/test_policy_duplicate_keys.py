"""Tool-call arguments that name a key twice: JSON readers differ on which value counts (Python
keeps the last, others the first), so a policy could decide on one value while a server runs
the other. The arguments are refused where they are decoded, and the tool never runs."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest
from agentkit_policy_rules import Policy
from agentkit_policy_rules import Rule
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import tool
from agentkit_core.plugin import Verdict
from agentkit_core.testing import ScriptedModel

TWICE = '{"command": "git status", "command": "rm -rf /"}'

#: A JSON text's tree: ("object", [(key, child), ...]), ("array", [child, ...]) or a scalar's text.
Tree = Any
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3)).map(json.dumps)
trees: st.SearchStrategy[Tree] = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda items: ("array", items)),
        st.lists(st.tuples(st.sampled_from(["a", "b", "é", "k\n"]), inner), max_size=4).map(
            lambda pairs: ("object", pairs)
        ),
    ),
    max_leaves=10,
)


def text_of(tree: Tree) -> str:
    if isinstance(tree, str):
        return tree
    kind, items = tree
    if kind == "array":
        return "[" + ", ".join(text_of(i) for i in items) + "]"
    return "{" + ", ".join(f"{json.dumps(k)}: {text_of(v)}" for k, v in items) + "}"


def duplicated(tree: Tree) -> set[str]:
    """Every key some object of ``tree`` names twice."""
    if isinstance(tree, str):
        return set()
    kind, items = tree
    found: set[str] = set()
    if kind == "object":
        keys = [k for k, _ in items]
        found |= {k for k in keys if keys.count(k) > 1}
        items = [v for _, v in items]
    for child in items:
        found |= duplicated(child)
    return found


@settings(max_examples=300)
@given(trees, st.sampled_from(["", " ", "\n"]))
def test_a_key_named_twice_anywhere_is_refused_naming_it(tree: Tree, space: str) -> None:
    text = space + text_of(tree) + space
    twice = duplicated(tree)
    if not twice:
        assert ToolCall("c", "t", text).parsed_arguments() == json.loads(text)
        return
    with pytest.raises(json.JSONDecodeError) as caught:
        ToolCall("c", "t", text).parsed_arguments()
    key = caught.value.msg.removeprefix("duplicate key ")
    assert key != caught.value.msg and ast.literal_eval(key) in twice  # as repr() writes it


def test_the_error_points_at_the_second_spelling() -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        ToolCall("c", "t", TWICE).parsed_arguments()
    assert (caught.value.msg, caught.value.pos) == ("duplicate key 'command'", TWICE.rindex('"c'))
    spelt_apart = '{"\\u00e9": 1, "é": 2}'  # one key, two spellings
    with pytest.raises(json.JSONDecodeError, match="duplicate key 'é'"):
        ToolCall("c", "t", spelt_apart).parsed_arguments()


ran: list[str] = []


@tool
def bash(command: str) -> str:
    """Run a shell command (here: note it)."""
    ran.append(command)
    return f"ran {command}"


def script() -> ScriptedModel:
    return ScriptedModel(
        [
            Message.assistant(
                "",
                [
                    ToolCall("c1", "bash", TWICE),
                    ToolCall("c2", "bash", '{"command": "ls"}'),
                ],
            ),
            "done",
        ]
    )


def tool_texts(transcript: list[Message]) -> dict[str | None, tuple[bool, str]]:
    return {m.tool_call_id: (m.is_error, m.text) for m in transcript if m.role == "tool"}


async def test_a_run_refuses_the_call_and_never_runs_the_tool() -> None:
    ran.clear()
    result = await Agent("a", script(), tools=[bash]).run("tidy up")
    assert ran == ["ls"] and result.output == "done"
    error, text = tool_texts(result.transcript)["c1"]
    assert error and "duplicate key 'command'" in text


async def test_the_policy_denies_the_call_naming_the_key() -> None:
    ran.clear()
    seen: list[Verdict] = []
    policy = Policy(
        [Rule("allow", "bash", id="reads", match={"command": {"prefix": ["git status", "ls"]}})],
        default="allow",
    )
    agent = Agent("a", script(), tools=[bash], policy=policy, verdict_observer=seen.append)
    result = await agent.run("tidy up")
    assert ran == ["ls"] and result.status == "done"
    decided = {v.subject_id: (v.verdict, v.rule) for v in seen if v.namespace == "policy"}
    assert decided == {"c1": ("deny", "unreadable-arguments"), "c2": ("allow", "reads")}
    error, text = tool_texts(result.transcript)["c1"]
    assert error and "duplicate key 'command'" in text and "denied" in text
