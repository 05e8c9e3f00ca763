"""Hooks are called the way pluggy calls them: with the arguments each one names, any subset."""

from __future__ import annotations

import asyncio
import functools
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginConfig
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core import ToolResult
from agentkit_core import TurnInfo
from agentkit_core import hookimpl
from agentkit_core.plugin import ModelRequest
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx

_RELAY = PluginManager(entry_points=False).pm.hook
#: Each contested field and the arguments its hookspec declares, in order, as pluggy reads them.
SPECS = {
    name.removeprefix("agentkit_"): getattr(_RELAY, name).spec.argnames
    for name in vars(_RELAY)
    if name.startswith("agentkit_") and not name.startswith("agentkit_register_")
}


def sample_arguments() -> dict[str, Any]:
    return {
        "ctx": make_test_ctx(),
        "request": ModelRequest((Message.user("q"),)),
        "call": ToolCall("1", "search", "{}"),
        "result": ToolResult("found"),
        "message": Message.assistant("answer"),
        "turn": TurnInfo(2),
        "info": TurnInfo(1),
        "transcript": [Message.user("hello")],
    }


def run_fold(hooks: Hooks, field: str, values: dict[str, Any]) -> Any:
    fold = getattr(hooks, f"run_{field}")
    return asyncio.run(fold(*(values[name] for name in SPECS[field])))


def recorder(names: tuple[str, ...], seen: list[dict[str, Any]], defaults: int = 0) -> Any:
    """A function whose parameters are ``names`` (the last ``defaults`` with a default)."""
    required = names[: len(names) - defaults]
    optional = [f"{n}='default'" for n in names[len(required) :]]
    params = ", ".join([*required, *optional])
    body = f"def impl({params}):\n    seen.append(dict({', '.join(f'{n}={n}' for n in names)}))\n"
    scope: dict[str, Any] = {"seen": seen}
    exec(body, scope)  # a function with generated parameter names
    return scope["impl"]


@st.composite
def signatures(draw: st.DrawFn) -> tuple[str, tuple[str, ...], int]:
    field = draw(st.sampled_from(sorted(SPECS)))
    names = tuple(draw(st.permutations(SPECS[field]))[: draw(st.integers(0, len(SPECS[field])))])
    defaults = draw(st.integers(0, len(names)))
    return field, names, defaults


@settings(max_examples=120, deadline=None)
@given(signatures(), st.booleans())
def test_an_implementation_gets_exactly_the_arguments_it_names(shape, as_plugin) -> None:
    field, names, defaults = shape
    seen: list[dict[str, Any]] = []
    impl = recorder(names, seen, defaults)
    if as_plugin:
        plugin = SimpleNamespace(AGENTKIT_NAME="subset", **{f"agentkit_{field}": hookimpl(impl)})
        pm = PluginManager(entry_points=False, plugins=[plugin], config=PluginConfig())
        assert pm.plugins()[0].status == "loaded", pm.plugins()[0].error
        hooks = Hooks.from_plugins(pm)
        (pluggy_impl,) = getattr(pm.pm.hook, f"agentkit_{field}").get_hookimpls()
        required = names[: len(names) - defaults]
        assert pluggy_impl.argnames == required  # what pluggy itself would pass
    else:
        hooks = Hooks.of(**{field: impl})
    values = sample_arguments()
    run_fold(hooks, field, values)
    (got,) = seen
    required = names[: len(names) - defaults]
    assert {n: got[n] for n in required} == {n: values[n] for n in required}
    assert all(got[n] == "default" for n in names[len(required) :])


class MethodPlugin:
    """A class-based plugin whose hooks take fewer arguments than their specs."""

    AGENTKIT_NAME = "methods"

    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def agentkit_before_turn(self, info):
        self.seen.append(info.turn)
        return [Message.user(f"turn {info.turn}")]

    @hookimpl
    def agentkit_transform(self, transcript):
        return [m for m in transcript if m.text != "noise"]

    @hookimpl
    async def agentkit_after_tool_call(self, result):
        return ToolResult(result.content.upper())

    @hookimpl
    def agentkit_output_guard(self, message):
        return Message.assistant(message.text + " (checked)")

    @hookimpl
    @staticmethod
    def agentkit_should_stop_after_turn():
        return None


async def test_subset_signatures_work_in_a_real_run() -> None:
    """The issue's case: a subset hook is listed as loaded, and a run no longer dies on it."""
    plugin = MethodPlugin()
    pm = PluginManager(entry_points=False, plugins=[plugin], config=PluginConfig())
    (info,) = pm.plugins()
    assert info.status == "loaded" and len(info.hooks) == 5

    def search(query: str) -> str:
        """Search."""
        return f"results for {query}"

    model = ScriptedModel(
        [
            Message.assistant("", [ToolCall("c1", "search", '{"query": "x"}')]),
            lambda request: Message.assistant(" | ".join(m.text for m in request.messages)),
        ]
    )
    agent = Agent("subset", model, "sys", [search], manager=pm)
    result = await agent.run("noise")
    assert plugin.seen == [1, 2]
    assert result.output.endswith("(checked)")
    assert "RESULTS FOR X" in result.output
    shown = [m.text for m in model.requests[0].messages]
    assert "noise" not in shown and "turn 1" in shown


def test_partials_callable_objects_and_wrapped_functions_are_read_by_signature() -> None:
    seen: list[Any] = []

    def tagged(tag: str, transcript: list[Message]) -> list[Message]:
        return [*transcript, Message.user(tag)]

    class Counter:
        def __call__(self, info: TurnInfo) -> None:
            seen.append(info.turn)

    def logged(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any) -> Any:
            seen.append("logged")
            return fn(*args)

        return wrapper

    @logged
    def guard(message: Message) -> Message:
        return Message.assistant(message.text.upper())

    hooks = Hooks.of(
        transform=functools.partial(tagged, "p"), before_turn=Counter(), output_guard=guard
    )
    values = sample_arguments()
    assert [m.text for m in run_fold(hooks, "transform", values)] == ["hello", "p"]
    assert run_fold(hooks, "before_turn", values) == []
    assert run_fold(hooks, "output_guard", values).text == "ANSWER"
    assert seen == [1, "logged"]


@pytest.mark.parametrize(
    ("fn", "match"),
    [
        (
            lambda ctx, t: t,
            r"hook agentkit_transform of 'user' \(.*<lambda>\): takes 't', which "
            r"agentkit_transform does not pass; name the parameters after its arguments "
            r"\(ctx, transcript: any of them, in any order\)",
        ),
        (
            lambda transcript, *, limit: transcript,
            r"keyword-only parameter 'limit' has no default",
        ),
        (42, r"42 is not a function whose parameters can be read"),
    ],
)
def test_a_user_function_the_hook_cannot_call_is_refused_when_hooks_are_built(fn, match) -> None:
    with pytest.raises(ConfigError, match=match):
        Hooks.of(transform=fn)


def test_hooks_fields_take_source_function_pairs() -> None:
    with pytest.raises(ConfigError, match=r"takes \(source, function\) pairs, got <function"):
        Hooks(transform=(lambda transcript: None,))  # type: ignore[arg-type]
    hooks = Hooks(transform=[("mine", lambda transcript: None)])
    assert hooks.transform[0][0] == "mine" and not hooks.empty


def test_every_contested_hookspec_is_a_field_of_hooks() -> None:
    assert len(SPECS) == 7
    hooks = Hooks.of(**{field: (lambda: None) for field in SPECS})
    assert all(len(getattr(hooks, field)) == 1 for field in SPECS)
