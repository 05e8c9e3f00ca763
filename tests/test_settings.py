"""Request settings: checked where they are given, merged Agent < Kit config < run, per request."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import ModelSettings
from agentkit_core import ToolDecision
from agentkit_core import agent_tool
from agentkit_core import tool
from agentkit_core._settings import SETTINGS_SCHEMA
from agentkit_core._settings import check_settings
from agentkit_core._settings import merge_settings
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.plugin import read_kit_options
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

finite = st.floats(allow_nan=False, allow_infinity=False, width=32)
extras = st.dictionaries(st.text(min_size=1, max_size=8), st.integers(), max_size=3)

#: A strategy for each key's valid values.
VALID: dict[str, st.SearchStrategy[Any]] = {
    "temperature": st.floats(0, 2),
    "top_p": st.floats(0, 1),
    "top_k": st.integers(1, 500),
    "max_tokens": st.integers(1, 100_000),
    "stop": st.lists(st.text(min_size=1, max_size=5), max_size=3),
    "seed": st.integers(-(2**31), 2**31),
    "presence_penalty": finite,
    "frequency_penalty": finite,
    "tool_choice": st.sampled_from(["auto", "none", "required"]) | st.text(min_size=1),
    "parallel_tool_calls": st.booleans(),
    "reasoning_effort": st.sampled_from(["none", "minimal", "low", "medium", "high", "xhigh"]),
    "timeout": st.floats(0.001, 600),
    "extra_body": extras,
}

valid_settings = st.fixed_dictionaries({}, optional=VALID)

#: A value each key refuses.
INVALID: dict[str, list[Any]] = {
    "temperature": [-0.1, "0.2", True, float("nan"), None],
    "top_p": [1.5, -1, "x"],
    "top_k": [0, 1.5, True],
    "max_tokens": [0, -3, 2.0, "100", False],
    "stop": [[""], [1], {"a": 1}, 5],
    "seed": [1.5, "1", True],
    "presence_penalty": [float("inf"), "1"],
    "frequency_penalty": [None, []],
    "tool_choice": ["", 3, None],
    "parallel_tool_calls": [1, "yes", None],
    "reasoning_effort": ["max", "", 2, None],
    "timeout": [0, -1, "5", float("inf")],
    "extra_body": [[("a", 1)], {1: 2}, "x"],
}


def test_every_key_has_valid_and_invalid_examples() -> None:
    assert set(VALID) == set(INVALID) == set(SETTINGS_SCHEMA)
    assert set(SETTINGS_SCHEMA) == set(ModelSettings.__optional_keys__)


@pytest.mark.parametrize(("key", "bad"), [(k, v) for k, values in INVALID.items() for v in values])
def test_a_bad_value_names_the_key_and_where(key: str, bad: Any) -> None:
    with pytest.raises(ConfigError, match=rf"^{key} in Agent\(settings=\) must be ") as caught:
        Agent("a", "test", settings={key: bad})  # type: ignore[misc]
    assert caught.value.source == "Agent(settings=)"


def test_an_unknown_key_names_the_nearest_and_extra_body() -> None:
    with pytest.raises(
        ConfigError,
        match=r"unknown key 'temprature' in Kit\(settings=\); did you mean 'temperature'\?.*"
        r"a provider's own field goes in extra_body",
    ):
        Kit(model="test", settings={"temprature": 0.2})  # type: ignore[typeddict-unknown-key]


@pytest.mark.parametrize("bad", [5, "temperature=0", ["temperature"], {1: 2}])
def test_settings_must_be_a_mapping(bad: Any) -> None:
    agent = Agent("a", ScriptedModel(["x"]), hooks=Hooks())
    with pytest.raises(ConfigError, match=r"run\(settings=\) takes ModelSettings"):
        agent.run_sync("go", settings=bad)


def test_one_stop_text_becomes_a_list() -> None:
    assert check_settings({"stop": "END"}, "here") == {"stop": ["END"]}


@given(valid_settings)
def test_valid_settings_pass_unchanged(given_settings: dict[str, Any]) -> None:
    checked = check_settings(given_settings, "here")
    expected = dict(given_settings)
    if "stop" in expected:
        expected["stop"] = list(expected["stop"])
    assert checked == expected
    assert checked is not given_settings


@given(valid_settings, st.sampled_from(sorted(INVALID)), st.data())
def test_one_bad_value_among_good_ones_is_refused(
    given_settings: dict[str, Any], key: str, data: st.DataObject
) -> None:
    bad = data.draw(st.sampled_from(INVALID[key]))
    with pytest.raises(ConfigError, match=rf"^{key} in here must be "):
        check_settings({**given_settings, key: bad}, "here")


@given(st.lists(valid_settings, max_size=4))
def test_merging_takes_the_last_value_and_merges_extras(layers: list[dict[str, Any]]) -> None:
    merged = merge_settings(*layers)  # type: ignore[arg-type]
    assert set(merged) == {key for layer in layers for key in layer}
    for key, value in merged.items():
        if key == "extra_body":
            expected: dict[str, Any] = {}
            for layer in layers:
                expected.update(layer.get("extra_body", {}))
            assert value == expected
        else:
            assert value == [layer[key] for layer in layers if key in layer][-1]


@given(valid_settings, valid_settings, valid_settings)
def test_merging_is_associative_with_an_identity(a: Any, b: Any, c: Any) -> None:
    assert merge_settings(merge_settings(a, b), c) == merge_settings(a, merge_settings(b, c))
    assert merge_settings({}, a) == merge_settings(a, None) == merge_settings(a)
    before = {k: (dict(v) if isinstance(v, dict) else v) for k, v in a.items()}
    merge_settings(a, b)
    assert a == before  # no layer is changed by merging it


# ----------------------------------------------------------------- reaching the model


def run_with(agent: Agent, task: str = "go", **kwargs: Any) -> Any:
    return agent.run_sync(task, **kwargs)


def test_kit_settings_ride_every_request_and_the_run_goes_over_them() -> None:
    model = ScriptedModel(["one", "two"])
    kit = Kit(
        model=model,
        settings={"temperature": 0.1, "max_tokens": 50, "extra_body": {"a": 1}},
    )
    config = kit.config()
    assert config.settings == {"temperature": 0.1, "max_tokens": 50, "extra_body": {"a": 1}}
    agent = Agent.from_config(config, hooks=Hooks())
    run_with(agent)
    run_with(agent, settings={"temperature": 0.9, "extra_body": {"b": 2}})
    first, second = (r.settings for r in model.requests)
    assert first == {"temperature": 0.1, "max_tokens": 50, "extra_body": {"a": 1}}
    assert second == {"temperature": 0.9, "max_tokens": 50, "extra_body": {"a": 1, "b": 2}}
    assert kit.config().settings == config.settings  # the run changed nothing of the kit's


def test_from_config_takes_the_agents_own_settings_over_the_kits() -> None:
    model = ScriptedModel(["one"])
    config = Kit(model=model, settings={"temperature": 0.1, "seed": 7}).config()
    agent = Agent.from_config(config, hooks=Hooks(), settings={"temperature": 0.5})
    run_with(agent)
    assert model.requests[0].settings == {"temperature": 0.5}


@tool
def act() -> str:
    """Act."""
    return "done"


async def test_stream_and_resume_take_settings_too(pm) -> None:
    model = ScriptedModel([Message.assistant("", [tool_call("act")]), "finished", "streamed"])
    asks = Hooks.of("t", before_tool_call=lambda ctx, call: ToolDecision("ask", "check", "t"))
    store = await open_checkpoint_store("memory://", manager=pm)
    agent = Agent("a", model, tools=[act], hooks=asks, settings={"seed": 1}, checkpointer=store)
    suspended = await agent.run("go", settings={"top_p": 0.5})
    assert suspended.status == "suspended"
    resumed = await agent.resume(suspended.run_id, [suspended.pending[0].id], settings={"seed": 2})
    assert resumed.output == "finished"
    events = [e async for e in agent.run_stream("again", settings={"temperature": 0})]
    assert events[-1].result.output == "streamed"
    assert [r.settings for r in model.requests] == [
        {"seed": 1, "top_p": 0.5},
        {"seed": 2},
        {"seed": 1, "temperature": 0},
    ]


def test_a_hook_editing_one_requests_settings_leaves_the_next_alone() -> None:
    model = ScriptedModel(["one", "two"])

    def hot(ctx: Any, request: ModelRequest) -> ModelRequest:
        request.settings["temperature"] = 2.0
        return request

    agent = Agent("a", model, hooks=Hooks.of("t", before_model_call=hot), settings={"seed": 3})
    run_with(agent)
    run_with(agent)
    assert [r.settings for r in model.requests] == [{"seed": 3, "temperature": 2.0}] * 2
    assert agent.settings == {"seed": 3}


def test_a_kit_file_sets_settings_and_a_bad_one_names_the_file(tmp_path: Path) -> None:
    good = tmp_path / "agentkit.toml"
    good.write_text(
        '[kit]\nmodel = "test"\ndescription = "Sorts issues."\nmax_parallel_tools = 2\n'
        '[kit.settings]\ntemperature = 0.3\nstop = "END"\n'
    )
    options = read_kit_options(good)
    assert options["settings"] == {"temperature": 0.3, "stop": ["END"]}
    config = Kit.from_file(good).config()
    assert (config.settings, config.description, config.max_parallel_tools) == (
        {"temperature": 0.3, "stop": ["END"]},
        "Sorts issues.",
        2,
    )
    bad = tmp_path / "bad" / "agentkit.toml"
    bad.parent.mkdir()
    bad.write_text('[kit]\nmodel = "test"\n[kit.settings]\nmax_tokens = 0\n')
    with pytest.raises(ConfigError, match=rf"max_tokens in settings in \[kit\] in {bad}"):
        read_kit_options(bad)


# ----------------------------------------------------------------- the other options


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4"])
def test_max_parallel_tools_must_be_a_count(bad: Any) -> None:
    with pytest.raises(ConfigError, match=r"^Kit\(max_parallel_tools=\) must be at least 1"):
        Kit(model="test", max_parallel_tools=bad)
    with pytest.raises(ConfigError, match="max_parallel_tools must be at least 1"):
        Agent("a", "test", max_parallel_tools=bad)


async def test_max_parallel_tools_bounds_a_batch() -> None:
    running = 0
    peak = 0

    @tool
    async def slow(n: int) -> str:
        """Wait a little."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.02)
        running -= 1
        return str(n)

    calls = [tool_call("slow", f'{{"n": {i}}}', id=f"c{i}") for i in range(6)]
    for limit in (1, 3, 6):
        peak = 0
        kit = Kit(model=ScriptedModel([Message.assistant("", calls), "ok"]), tools=[slow])
        config = dataclasses.replace(kit.config(), max_parallel_tools=limit)
        result = await Agent.from_config(config, hooks=Hooks()).run("go")
        assert result.output == "ok"
        assert peak == limit


def test_description_reaches_the_child_tool_and_the_config() -> None:
    child = Agent("researcher", "test", description="Finds sources for a claim.")
    assert agent_tool(child).description == "Finds sources for a claim."
    plain = Agent("helper", "test")
    assert agent_tool(plain).description == "Hand a task to the helper agent and get its answer."
    config = Kit(model="test", name="r", description="Finds sources.").config()
    assert config.description == "Finds sources."
    assert Agent.from_config(config).description == "Finds sources."
