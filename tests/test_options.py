"""The option records: Agent(...) and Kit(...) take them, and the flat keywords build them."""

from __future__ import annotations

import dataclasses

import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import PluginManager
from agentkit_core import tool
from agentkit_core.options import CompactionOptions
from agentkit_core.options import GuardOptions
from agentkit_core.options import Limits
from agentkit_core.options import SessionOptions
from agentkit_core.options import ToolOptions
from agentkit_core.testing import ScriptedModel


@tool
def shout(text: str) -> str:
    """Shout the text."""
    return text.upper()


def test_a_record_is_frozen_and_a_wrong_field_is_the_nearest_key_error() -> None:
    limits = Limits(max_turns=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.max_turns = 4  # type: ignore[misc]
    with pytest.raises(ConfigError, match=r"unknown key 'max_turn' in Limits.*'max_turns'"):
        Limits(max_turn=3)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"unknown key 'gards' in GuardOptions.*'guards'"):
        GuardOptions(gards=["redact"])  # type: ignore[call-arg]


def test_an_agent_s_limits_are_the_record_or_its_flat_aliases(pm: PluginManager) -> None:
    model = ScriptedModel(["ok"])
    by_record = Agent(
        "a",
        model,
        limits=Limits(max_turns=3, max_parallel_tools=2, tool_timeout=5, model_deadline=9),
        manager=pm,
    )
    by_flat = Agent(
        "a", model, max_turns=3, max_parallel_tools=2, tool_timeout=5, model_deadline=9, manager=pm
    )
    for agent in (by_record, by_flat):
        assert (agent.max_turns, agent.max_parallel_tools) == (3, 2)
        assert (agent.tool_timeout, agent.model_deadline) == (5, 9)
    with pytest.raises(ConfigError, match=r"both limits=Limits\(...\) and max_turns="):
        Agent("a", model, limits=Limits(max_turns=3), max_turns=4, manager=pm)


def test_an_agent_takes_guard_objects_only(pm: PluginManager) -> None:
    model = ScriptedModel(["ok"])
    agent = Agent("a", model, guards=GuardOptions(guards=[], policy=None), manager=pm)
    assert agent.guards is not None and agent.guards.names == []
    with pytest.raises(ConfigError, match="an agent takes Guard objects"):
        Agent("a", model, guards=GuardOptions(guards=["redact"]), manager=pm)
    with pytest.raises(ConfigError, match="an agent takes Guard objects"):
        Agent("a", model, guards=GuardOptions(guard_fail_open=["redact"]), manager=pm)


def test_a_kit_builds_the_same_config_from_records_as_from_flat_keys(pm: PluginManager) -> None:
    flat_kit = Kit(
        model="test",
        manager=pm,
        tools=[shout],
        max_turns=4,
        max_parallel_tools=3,
        compaction={"budget": 50_000},
        compactor="truncation",
        compactor_options={"max_tokens": 9_000},
        guards=["max-input"],
        guard_options={"max-input": {"max_tokens": 8_000}},
    )
    grouped_kit = Kit(
        model="test",
        manager=pm,
        tools=ToolOptions(tools=[shout]),
        limits=Limits(max_turns=4, max_parallel_tools=3),
        compaction=CompactionOptions(
            compaction={"budget": 50_000},
            compactor="truncation",
            compactor_options={"max_tokens": 9_000},
        ),
        guards=GuardOptions(["max-input"], guard_options={"max-input": {"max_tokens": 8_000}}),
    )
    flat, grouped = flat_kit.config(), grouped_kit.config()
    assert (grouped.max_turns, grouped.max_parallel_tools) == (flat.max_turns, 3)
    assert [o.name for o in grouped_kit.tools()] == [o.name for o in flat_kit.tools()] == ["shout"]
    assert (
        repr(grouped.compaction)
        == repr(flat.compaction)
        == "Folding(budget=50000, keep_recent=25000)"
    )
    assert len(grouped.middlewares) == len(flat.middlewares)
    assert grouped.guards is not None and flat.guards is not None
    assert grouped.guards.names == flat.guards.names


def test_a_kit_refuses_a_record_beside_its_flat_key_and_an_agent_only_field(
    pm: PluginManager,
) -> None:
    with pytest.raises(ConfigError, match=r"both limits=Limits\(...\) and max_turns="):
        Kit(model="test", manager=pm, limits=Limits(max_turns=3), max_turns=4)
    with pytest.raises(ConfigError, match=r"does not take Limits\(tool_timeout=...\)"):
        Kit(model="test", manager=pm, limits=Limits(tool_timeout=5))
    with pytest.raises(ConfigError, match="session= must be opened"):
        Kit(model="test", manager=pm, session=SessionOptions(session="memory://"))
    with pytest.raises(ConfigError, match=r"resume need session="):
        Kit(model="test", manager=pm, session=SessionOptions(resume="s1"))


def test_from_config_takes_a_record_over_the_fields_it_groups(pm: PluginManager) -> None:
    config = Kit(model="test", manager=pm, max_turns=12, max_parallel_tools=3).config()
    agent = Agent.from_config(config, limits=Limits(max_turns=2))
    assert (agent.max_turns, agent.max_parallel_tools) == (2, 8)  # the record's, whole
    assert Agent.from_config(config).max_turns == 12
