"""A Kit option of the wrong kind is a ConfigError naming it, never a crash deep inside.

``Kit(order=1016)`` used to end in ``TypeError: 'int' object is not iterable`` from the
instruction composer, ``Kit(parts="x")`` in an AttributeError, ``Kit(instructions=("x",))`` in a
``str.join`` TypeError: nothing said which option was wrong or what it takes.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import AgentkitError
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import PluginManager
from tests.argument_values import argument_values


@pytest.mark.parametrize(
    ("key", "value", "takes"),
    [
        ("tool_sources", [478], "a table of each plugin's options"),
        ("tool_sources", {"mcp": [1]}, "a table of each plugin's options"),
        ("parts", "abc", "a table of each plugin's options"),
        ("parts", [None, "x"], "a table of each plugin's options"),
        ("instructions", ("Be brief.",), "a string"),
        ("name", 7, "a string"),
        ("instruction_budget", [], "an integer"),
        ("instruction_budget", True, "an integer"),
        ("order", 1016, "a list of part names"),
        ("order", [{}], "a list of part names"),
        ("order", "skills", "a list of part names"),
        ("mcp", True, "a list of MCP servers"),
        ("middlewares", -3.5, "a list of middlewares"),
        ("tools", True, "a list of tools"),
        ("agents", 3, "a list of agents"),
        ("compactor", ["truncation"], "a string"),
        ("agents", [None], "a list of agents"),
        ("handoffs", (None,), "a list of kits"),
        ("handoffs", 5, "a list of kits"),
    ],
)
def test_a_value_of_the_wrong_kind_is_refused_naming_the_option(
    key: str, value: object, takes: str
) -> None:
    with pytest.raises(ConfigError, match=rf"Kit\({key}=\) must be {takes}") as err:
        Kit(model="test", manager=PluginManager(entry_points=False), **{key: value})  # type: ignore[misc]
    assert err.value.value == value and err.value.source == f"Kit({key}=)"


@pytest.mark.parametrize("value", [math.nan, -1789, 2.5])
def test_guards_that_are_no_list_are_refused(value: object) -> None:
    with pytest.raises(ConfigError, match=r"guards= takes a list of guards"):
        Kit(model="test", manager=PluginManager(entry_points=False), guards=value)  # type: ignore[arg-type]


def test_the_right_kinds_still_build() -> None:
    kit = Kit(
        model="test",
        manager=PluginManager(entry_points=False),
        name="helper",
        instructions="Be brief.",
        instruction_budget=400,
        parts={},
        tool_sources={},
        middlewares=(),
        tools=[],
    )
    assert kit.config().name == "helper"


KEYS = [
    "name", "description", "instructions", "parts", "order", "instruction_budget", "tools",
    "agents", "handoffs", "tool_sources", "mcp", "compaction", "compactor",
    "compactor_options", "guardrail", "guardrail_options", "guards", "guard_options",
    "guard_fail_open", "policy", "policy_engine", "middlewares", "max_turns",
    "max_parallel_tools", "settings", "header", "session_id", "resume", "fork", "fork_at",
]  # fmt: skip
VALUES = argument_values("test", "truncation", "redact", "max-input", "mcp")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(KEYS), VALUES, min_size=1, max_size=2))
def test_any_option_values_build_a_kit_or_raise_an_agentkit_error(options: dict[str, Any]) -> None:
    try:
        Kit(model="test", manager=PluginManager(entry_points=False), **options)
    except AgentkitError:
        pass
