"""Malformed limits fail closed: refused where they are given, naming the value; never read as a
weaker limit (the options of a guard given in guards= as a table dropped for the defaults, a
limit of NaN, infinity or text let through)."""

from __future__ import annotations

import math
from typing import Any

import agentkit_guard_limits
import pytest
from agentkit_guard_limits import MaxInput
from agentkit_guard_limits import MaxOutput
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import GuardBlocked
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core.testing import ScriptedModel


def manager() -> PluginManager:
    pm = PluginManager(entry_points=False)
    pm.register(agentkit_guard_limits, name="limits")
    return pm


async def answer(text: str, **options: Any) -> str:
    kit = Kit(model=ScriptedModel([text]), manager=manager(), **options)
    return (await Agent.from_config(kit.config()).run("hi")).output


async def test_options_given_in_guards_as_a_table_are_refused_not_dropped() -> None:
    # guards={"max-output": {...}} built max-output with its default of 20 000 characters: a
    # 500-character answer went through the limit of 100 the table said.
    with pytest.raises(ConfigError) as err:
        await answer("x" * 500, guards={"max-output": {"max_chars": 100}})
    assert str(err.value) == (
        "guards= takes a list of guards, such as ['redact']; got the table {'max-output': "
        "{'max_chars': 100}} (a guard's options go in guard_options=)"
    )
    assert err.value.source == "Kit(guards=)"
    with pytest.raises(GuardBlocked, match=r"the answer is 500 characters, over max_chars=100"):
        await answer(
            "x" * 500, guards=["max-output"], guard_options={"max-output": {"max_chars": 100}}
        )


@pytest.mark.parametrize(
    ("guard_options", "message"),
    [
        (
            [("max-output", {"max_chars": 100})],
            r"^guard_options= takes a table of each guard's options, .*; got \[\('max-output'",
        ),
        (
            {"max-output": [("max_chars", 100)]},
            r"^guard_options\['max-output'\] takes a table of the plugin's options, .*; got \[",
        ),
        (
            {"max-output": "max_chars=100"},
            r"^guard_options\['max-output'\] takes a table .*; got 'max_chars=100'",
        ),
    ],
)
def test_guard_options_that_are_no_table_are_refused(guard_options: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Kit(
            model=ScriptedModel(["ok"]),
            guards=["max-output"],
            guard_options=guard_options,
            manager=manager(),
        )


@pytest.mark.parametrize(
    "bad", [math.nan, math.inf, "100", None, [100], {"max": 100}, 10**3 + 0.5, -1, 0, True]
)
def test_a_limit_is_a_whole_number_from_one_in_code_and_through_the_kit(bad: object) -> None:
    for guard, key in ((MaxInput, "max_tokens"), (MaxOutput, "max_chars")):
        with pytest.raises(ConfigError, match=rf"{key}=.*must be a whole number of at least 1"):
            guard(bad)  # type: ignore[arg-type]
        with pytest.raises(ConfigError) as err:
            Kit(
                model=ScriptedModel(["ok"]),
                guards=[guard.name],
                guard_options={guard.name: {key: bad}},
                manager=manager(),
            )
        assert key in str(err.value) and repr(bad) in str(err.value)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.integers(min_value=-5, max_value=400),
        st.floats(),
        st.text(max_size=4),
        st.booleans(),
        st.none(),
    )
)
def test_a_limit_taken_is_the_limit_kept(limit: Any) -> None:
    """A limit is refused, or it is an integer from 1 and an answer one longer is refused."""
    try:
        guard = MaxOutput(limit)
    except ConfigError as err:
        assert not (isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1)
        assert repr(limit) in str(err)
        return
    assert type(limit) is int and limit >= 1
    assert guard.check_output(Message.assistant("x" * limit)).action == "allow"
    assert guard.check_output(Message.assistant("x" * (limit + 1))).action == "block"
