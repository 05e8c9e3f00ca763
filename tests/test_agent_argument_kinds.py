"""An Agent argument of the wrong kind is a ConfigError naming it, never a crash inside a run.

``Agent(hooks={})`` ran until the first turn and ended in ``'dict' object has no attribute
'before_turn'``; ``Agent(model={})`` in ``'dict' object has no attribute 'name'`` at the first
request; ``Agent(limits={...})``, ``Agent(budget=[...])`` and ``Agent(guards=0)`` in an
AttributeError or TypeError from deep inside; ``Agent(tools=None)`` in ``'NoneType' object is
not iterable``.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import AgentkitError
from agentkit_core import Budget
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import PluginManager
from agentkit_core import RunContext
from agentkit_core.options import Limits
from tests.argument_values import argument_values


def build(**arguments: Any) -> Agent:
    arguments.setdefault("model", "test")
    return Agent(manager=PluginManager(entry_points=False), **arguments)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("name", 7, r"Agent\(name=\) must be a string"),
        ("description", ("x",), r"Agent\(description=\) must be a string"),
        ("prompt", 2565684, r"Agent\(prompt=\) must be a string or a Prompt"),
        ("prompt", [{"role": "user"}], r"Agent\(prompt=\) must be a string or a Prompt"),
        ("tools", None, r"Agent\(tools=\) must be a list of tools"),
        ("tools", "search", r"Agent\(tools=\) must be a list of tools"),
        ("middlewares", None, r"Agent\(middlewares=\) must be a list of middlewares"),
        ("middlewares", -math.inf, r"Agent\(middlewares=\) must be a list of middlewares"),
        ("middlewares", (True,), r"Agent\(middlewares=\) must be a list of middlewares"),
        ("hooks", {}, r"Agent\(hooks=\) must be a Hooks"),
        ("budget", [None], r"Agent\(budget=\) must be a Budget"),
        ("recorder", ([],), r"Agent\(recorder=\) must be a Recorder"),
        ("elicitor", "ask", r"Agent\(elicitor=\) must be a function"),
        ("verdict_observer", 3, r"Agent\(verdict_observer=\) must be a function"),
        ("limits", {"max_turns": 3}, r"Agent\(limits=\) must be a Limits\(\.\.\.\)"),
        ("limits", ([],), r"Agent\(limits=\) must be a Limits\(\.\.\.\)"),
        ("guards", 0, r"Agent\(guards=\) must be a list of guards"),
        ("guards", True, r"Agent\(guards=\) must be a list of guards"),
        ("exporters", 900.0, r"exporters= takes a list of agentkit_core.plugin.SpanExporter"),
        ("model", {}, r"model= takes a Model"),
        ("model", ({},), r"model= takes a Model"),
        ("model", 5, r"model= takes a Model"),
    ],
)
def test_a_wrong_kind_is_refused_at_construction_naming_the_argument(
    key: str, value: object, message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        build(**{key: value})
    assert err.value.value is value or err.value.value == value or key == "model"


async def test_the_right_kinds_build_and_run() -> None:
    agent = build(
        name="helper",
        description="helps",
        prompt="Be brief.",
        tools=[],
        middlewares=(),
        hooks=Hooks(),
        limits=Limits(max_turns=3, budget=Budget(max_requests=5)),
        elicitor=None,
        verdict_observer=print,
    )
    result = await agent.run("hi")
    assert result.output


VALUES = argument_values("test", "rules")
KEYS = [
    "name", "model", "prompt", "tools", "output", "max_turns", "middlewares", "hooks",
    "max_parallel_tools", "tool_timeout", "output_retries", "checkpointer", "elicitor",
    "budget", "compaction", "guardrail", "model_deadline", "exporters", "recorder",
    "verdict_observer", "policy", "policy_engine", "settings", "description", "guards",
    "executor", "memory", "limits",
]  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(KEYS), VALUES, min_size=1, max_size=2))
async def test_any_arguments_build_an_agent_that_runs_or_raise_an_agentkit_error(
    arguments: dict[str, Any],
) -> None:
    try:
        await build(**arguments).run("hi")
    except AgentkitError:
        pass


RUN_ARGUMENTS = [
    ("ctx", {}, r"run\(ctx=\) must be a RunContext"),
    ("ctx", ("x",), r"run\(ctx=\) must be a RunContext"),
    ("wc", [], r"run\(wc=\) must be a WorkingContext"),
    ("on_event", ((None,),), r"run\(on_event=\) must be a function"),
]


@pytest.mark.parametrize(
    ("way", "key", "value", "message"),
    [
        (way, *argument)
        for way in ("run", "run_stream", "run_stream_events", "resume")
        for argument in RUN_ARGUMENTS
        # the streams take no on_event: the stream is where the events go
        if not (way.startswith("run_stream") and argument[0] == "on_event")
    ],
)
async def test_every_way_into_a_run_refuses_a_wrong_kind(
    way: str, key: str, value: object, message: str
) -> None:
    # before: 'dict' object has no attribute 'secret_tainted' / 'agent_name' / 'deps', or a
    # TypeError when the first event was handed to a tuple
    agent = build()
    with pytest.raises(ConfigError, match=message):
        if way == "run":
            await agent.run("hi", **{key: value})
        elif way == "resume":
            await agent.resume("r1", **{key: value})
        else:
            async for _ in getattr(agent, way)("hi", **{key: value}):
                pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    VALUES,
    st.dictionaries(st.sampled_from(["ctx", "wc", "settings", "deps", "on_event"]), VALUES),
)
async def test_any_run_arguments_run_or_raise_an_agentkit_error(
    task: Any, arguments: dict[str, Any]
) -> None:
    try:
        await build().run(task, **arguments)
    except AgentkitError:
        pass


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"services": {}}, r"RunContext\(services=\) must be a RunServices"),
        ({"invoker": ("x",)}, r"RunContext\(invoker=\) must be an Invoker"),
        ({"parent": (1.5,)}, r"RunContext\(parent=\) must be a RunScope"),
        ({"budget": [None]}, r"RunContext\(budget=\) must be a Budget"),
        ({"run_id": 5}, r"RunContext\(run_id=\) must be a str"),
        ({"model": [None]}, r"RunContext\(model=\) takes a Model"),
    ],
)
def test_a_run_context_refuses_a_wrong_kind(arguments: dict[str, Any], message: str) -> None:
    # before: 'dict' object has no attribute 'checkpointer', 'tuple' ... 'bind' / 'depth', and
    # a context holding the int 5 as its run id
    with pytest.raises(ConfigError, match=message):
        RunContext(**arguments)


def test_hooks_refuse_a_field_that_is_no_list_of_pairs() -> None:
    with pytest.raises(ConfigError, match=r"Hooks\(should_stop_after_turn=\.\.\.\) takes a list"):
        Hooks(should_stop_after_turn=None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"Hooks\(before_turn=\.\.\.\) takes a list"):
        Hooks(before_turn="system")  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "run_id",
                "model",
                "services",
                "invoker",
                "parent",
                "budget",
                "grant_scope",
                "model_deadline",
                "elicit_timeout",
            ]
        ),
        VALUES,
    )
)
def test_any_run_context_arguments_build_one_or_raise_an_agentkit_error(
    arguments: dict[str, Any],
) -> None:
    try:
        ctx = RunContext(**arguments)
    except AgentkitError:
        return
    assert isinstance(ctx.run_id, str) and ctx.run_id
