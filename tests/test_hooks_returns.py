"""Every fold checks what each implementation returns against its field's rule."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import HookError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginConfig
from agentkit_core import PluginError
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import ToolResult
from agentkit_core import TurnInfo
from agentkit_core import hookimpl
from agentkit_core.plugin import ModelRequest
from agentkit_core.testing import make_test_ctx

KINDS = ("allow", "ask", "deny")
MESSAGE = Message.assistant("m")
REQUEST = ModelRequest((Message.user("q"),))
RESULT = ToolResult("r")
CALL = ToolCall("1", "x", "{}")

#: field -> (the arguments of its fold, the description of what it accepts)
FIELDS: dict[str, tuple[tuple[Any, ...], str]] = {
    "before_model_call": ((REQUEST,), "a ModelRequest, or None"),
    "before_tool_call": (
        (CALL,),
        "a ToolDecision, one of the strings 'allow', 'ask', 'deny', or None",
    ),
    "after_tool_call": ((CALL, RESULT), "a ToolResult, or None"),
    "output_guard": ((MESSAGE,), "a Message, or None"),
    "should_stop_after_turn": ((TurnInfo(1),), "a non-empty reason string, or None"),
    "before_turn": ((TurnInfo(1),), "a list of Messages, or None"),
    "transform": (([Message.user("u")],), "a list of Messages, or None"),
}


def acceptable(field: str, value: Any) -> bool:
    """The documented rule of each field, written out independently of the implementation."""
    if value is None:
        return True
    if field == "before_model_call":
        return isinstance(value, ModelRequest)
    if field == "before_tool_call":
        kind = value if isinstance(value, str) else getattr(value, "kind", None)
        return isinstance(value, str | ToolDecision) and isinstance(kind, str) and kind in KINDS
    if field == "after_tool_call":
        return isinstance(value, ToolResult)
    if field == "output_guard":
        return isinstance(value, Message)
    if field == "should_stop_after_turn":
        return isinstance(value, str) and value != ""
    return isinstance(value, list | tuple) and all(isinstance(m, Message) for m in value)


leaves = st.one_of(
    st.none(),
    st.text(max_size=12),
    st.sampled_from([*KINDS, "", "DENY", "stop", "yes"]),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.binary(max_size=4),
    st.sampled_from(
        [
            MESSAGE,
            REQUEST,
            RESULT,
            CALL,
            TurnInfo(3),
            ToolDecision.deny("no"),
            ToolDecision.ask(),
            ToolDecision("maybe"),  # type: ignore[arg-type]
            ToolDecision(["deny"]),  # type: ignore[arg-type]
            object(),
            {"kind": "deny"},
        ]
    ),
)
shapes = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(st.just(MESSAGE), max_size=3),
        st.tuples(inner, inner),
        st.lists(st.one_of(st.just(MESSAGE), inner), max_size=4),
        st.dictionaries(st.text(max_size=3), inner, max_size=2),
    ),
    max_leaves=8,
)


def hooks_returning(field: str, value: Any, asynchronous: bool) -> Hooks:
    if asynchronous:

        async def impl() -> Any:
            return value
    else:

        def impl() -> Any:
            return value

    plugin = SimpleNamespace(AGENTKIT_NAME="shaper", **{f"agentkit_{field}": hookimpl(impl)})
    pm = PluginManager(entry_points=False, plugins=[plugin], config=PluginConfig())
    return Hooks.from_plugins(pm)


def fold(hooks: Hooks, field: str) -> Any:
    args = FIELDS[field][0]
    return asyncio.run(getattr(hooks, f"run_{field}")(make_test_ctx(), *args))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(FIELDS)), shapes, st.booleans())
def test_a_value_the_field_does_not_allow_names_plugin_hook_value_and_allowed(
    field: str, value: Any, asynchronous: bool
) -> None:
    hooks = hooks_returning(field, value, asynchronous)
    if acceptable(field, value):
        out = fold(hooks, field)
        if value is None or field == "before_tool_call":
            return
        expected = {
            "should_stop_after_turn": lambda: out.reason,
            "before_turn": lambda: tuple(out),
            "transform": lambda: tuple(out),
        }.get(field, lambda: out)()
        assert expected == (tuple(value) if isinstance(value, list | tuple) else value)
        return
    with pytest.raises(HookError) as caught:
        fold(hooks, field)
    err = caught.value
    assert isinstance(err, PluginError)
    assert (err.plugin, err.hook, err.allowed) == ("shaper", f"agentkit_{field}", FIELDS[field][1])
    assert err.value is value
    text = str(err)
    assert text.startswith(f"hook agentkit_{field} of plugin 'shaper' (")
    assert f"; allowed: {FIELDS[field][1]}." in text
    assert "AGENTKIT_DISABLE_PLUGINS=shaper" in text


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_wrong_value_after_good_ones_names_the_plugin_that_returned_it(field: str) -> None:
    good = {
        "before_model_call": REQUEST,
        "before_tool_call": "allow",
        "after_tool_call": RESULT,
        "output_guard": MESSAGE,
        "should_stop_after_turn": None,  # a reason would end the fold before the bad one
        "before_turn": [MESSAGE],
        "transform": [MESSAGE],
    }[field]
    hooks = Hooks.of("fine", **{field: lambda: good}).merged(Hooks.of("bad", **{field: lambda: 7}))
    with pytest.raises(HookError, match=r"of plugin 'bad' .* returned 7 \(int\); allowed: ") as e:
        fold(hooks, field)
    assert e.value.plugin == "bad"


def test_a_list_with_one_wrong_item_names_the_item_and_the_value_is_abridged() -> None:
    long = "x" * 10_000
    hooks = Hooks.of("trimmer", transform=lambda transcript: [*transcript, long])
    with pytest.raises(HookError, match=r"returned a list whose item 1 is 'xxx.*' \(str\)") as e:
        fold(hooks, "transform")
    assert len(str(e.value)) < 600
    hooks = Hooks.of("guard", output_guard=lambda: long)
    with pytest.raises(HookError, match=r"returned 'x+\.\.\.x+' \(str\)") as e:
        fold(hooks, "output_guard")
    assert len(str(e.value)) < 600 and e.value.value == long


def test_a_users_own_hook_is_not_told_to_disable_a_plugin() -> None:
    hooks = Hooks.of(output_guard=lambda message: "text")
    with pytest.raises(HookError, match=r"allowed: a Message, or None\. Fix the hook$"):
        fold(hooks, "output_guard")


def test_the_old_silent_cases_are_errors_now() -> None:
    """True used to stop a run with the reason 'True'; '' and False used to mean 'go on'."""
    for value in (True, False, "", 1):
        hooks = Hooks.of("stopper", should_stop_after_turn=lambda value=value: value)
        with pytest.raises(HookError, match="allowed: a non-empty reason string, or None"):
            fold(hooks, "should_stop_after_turn")
    hooks = Hooks.of("policy", before_tool_call=lambda: "maybe")
    with pytest.raises(HookError, match=r"returned 'maybe' \(str\); allowed: a ToolDecision, "):
        fold(hooks, "before_tool_call")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=6))
def test_a_chain_hands_each_hook_what_the_last_replacement_left(
    hooks: list[tuple[bool, bool]],
) -> None:
    """Each hook sees the result the last non-None return left; the fold returns the last."""
    seen: list[ToolResult] = []

    def make(i: int, replaces: bool, is_async: bool) -> Any:
        def sync(ctx: Any, call: ToolCall, result: ToolResult) -> ToolResult | None:
            seen.append(result)
            return ToolResult(f"{result.content}+{i}") if replaces else None

        async def coro(ctx: Any, call: ToolCall, result: ToolResult) -> ToolResult | None:
            return sync(ctx, call, result)

        return coro if is_async else sync

    fns = [make(i, replaces, is_async) for i, (replaces, is_async) in enumerate(hooks)]
    out = asyncio.run(
        Hooks.of(after_tool_call=fns).run_after_tool_call(make_test_ctx(), CALL, RESULT)
    )
    expected = "r"
    for i, ((replaces, _), got) in enumerate(zip(hooks, seen, strict=True)):
        assert got.content == expected
        if replaces:
            expected = f"{expected}+{i}"
    assert out.content == expected
    assert (out is RESULT) == (not any(replaces for replaces, _ in hooks))
