"""The Kit: instruction parts, budget and omissions, hook composition, the tool union."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import agentkit_instructions_agentsmd
import agentkit_instructions_skills
import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Tool
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import ToolResult
from agentkit_core import TurnInfo
from agentkit_core import UnknownNameError
from agentkit_core import hookimpl
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ToolConflictError
from agentkit_core.testing import make_test_ctx


def manager(*plugins: Any) -> PluginManager:
    return PluginManager(
        entry_points=False,
        plugins=[agentkit_instructions_agentsmd, agentkit_instructions_skills, *plugins],
    )


def repo(tmp_path: Path) -> Path:
    (tmp_path / "AGENTS.md").write_text("Run the tests before you commit.")
    skills = tmp_path / "skills" / "release"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("---\nname: release\ndescription: Cut a release\n---\nbump")
    return tmp_path


class Echo(Tool):
    def __init__(self, name: str) -> None:
        super().__init__(name, f"the {name} tool")

    async def invoke(self, arguments: dict[str, Any], ctx: Any) -> ToolResult:
        return ToolResult(self.name)


# ----------------------------------------------------------------- instruction parts


def test_parts_join_in_the_default_order(tmp_path: Path) -> None:
    root = repo(tmp_path)
    kit = Kit(
        model="test",
        manager=manager(),
        instructions="Be brief.",
        parts={"agentsmd": {"path": root, "root": root}, "skills": {"dirs": [root / "skills"]}},
    )
    assert [p.id for p in kit.parts()] == ["product", "skills", "agentsmd"]
    assert kit.config().instructions == "\n\n".join(p.text for p in kit.parts())
    assert kit.parts()[0].text == "Be brief."


def test_order_replaces_the_default_and_must_name_every_part_once(tmp_path: Path) -> None:
    root = repo(tmp_path)
    parts = {"agentsmd": {"path": root, "root": root}}
    kit = Kit(
        model="test",
        manager=manager(),
        instructions="p",
        parts=parts,
        order=["agentsmd", "product"],
    )
    assert [p.id for p in kit.parts()] == ["agentsmd", "product"]
    with pytest.raises(ConfigError, match=r"left out: agentsmd"):
        Kit(model="test", manager=manager(), instructions="p", parts=parts, order=["product"])
    with pytest.raises(ConfigError, match=r"named twice: product"):
        Kit(
            model="test",
            manager=manager(),
            instructions="p",
            parts=parts,
            order=["product", "product", "agentsmd"],
        )
    with pytest.raises(ConfigError, match=r"not configured: memory"):
        Kit(
            model="test",
            manager=manager(),
            instructions="p",
            parts=parts,
            order=["product", "agentsmd", "memory"],
        )


def test_unknown_part_names_the_installed_ones() -> None:
    with pytest.raises(UnknownNameError, match="agentsmd, skills"):
        Kit(model="test", manager=manager(), parts={"memroy": {}})


def test_budget_shortens_what_can_be_shortened_and_reports_it(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "sub").mkdir()
    (root / "sub" / "AGENTS.md").write_text("Sub rules: " + "s" * 100)
    options = {
        "model": "test",
        "manager": manager(),
        "instructions": "Be brief.",
        "parts": {"agentsmd": {"path": root / "sub", "root": root}},
    }
    full = Kit(**options).config().instructions
    kit = Kit(**options, instruction_budget=len(full.encode()) - 10)
    text = kit.config().instructions
    assert len(text.encode()) <= len(full.encode()) - 10
    assert "Sub rules" in text and "Run the tests" not in text  # the root file went first
    (omitted,) = kit.omitted()
    assert omitted.what == str(root / "AGENTS.md") and omitted.reason == "over budget"


def test_budget_smaller_than_the_fixed_parts_fails_construction(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"instruction_budget=5 bytes.*product 9"):
        Kit(model="test", manager=manager(), instructions="Be brief.", instruction_budget=5)


def test_omissions_collect_every_layer(tmp_path: Path) -> None:
    root = repo(tmp_path)
    other = tmp_path / "more"
    (other / "release").mkdir(parents=True)
    (other / "release" / "SKILL.md").write_text("---\nname: release\ndescription: dup\n---\nx")
    kit = Kit(model="test", manager=manager(), parts={"skills": {"dirs": [root / "skills", other]}})
    assert [(o.part, o.reason) for o in kit.omitted()] == [("skills", "shadowed")]


def test_reload_parts_sees_a_new_skill(tmp_path: Path) -> None:
    root = repo(tmp_path)
    kit = Kit(model="test", manager=manager(), parts={"skills": {"dirs": [root / "skills"]}})
    (root / "skills" / "triage").mkdir()
    (root / "skills" / "triage" / "SKILL.md").write_text(
        "---\nname: triage\ndescription: Sort issues\n---\nx"
    )
    assert "triage" not in kit.config().instructions
    kit.reload_parts()
    assert "- triage: Sort issues" in kit.config().instructions


# ----------------------------------------------------------------- hook composition


def recording_plugin(name: str, log: list[str], priority: int = 0) -> Any:
    class Plugin:
        AGENTKIT_NAME = name
        AGENTKIT_PRIORITY = priority

        @hookimpl
        def agentkit_before_model_call(self, ctx: Any, request: ModelRequest) -> ModelRequest:
            log.append(f"{name}:before_model_call")
            return ModelRequest((*request.messages, Message.user(name)))

        @hookimpl
        def agentkit_before_tool_call(self, ctx: Any, call: ToolCall) -> ToolDecision:
            log.append(f"{name}:before_tool_call")
            return ToolDecision.ask(f"{name} asks")

        @hookimpl
        async def agentkit_after_tool_call(
            self, ctx: Any, call: ToolCall, result: ToolResult
        ) -> ToolResult:
            log.append(f"{name}:after_tool_call")
            return ToolResult(f"{result.content}+{name}")

        @hookimpl
        def agentkit_output_guard(self, ctx: Any, message: Message) -> Message:
            log.append(f"{name}:output_guard")
            return Message.assistant(message.text + f"+{name}")

        @hookimpl
        def agentkit_should_stop_after_turn(self, ctx: Any, turn: Any) -> None:
            log.append(f"{name}:should_stop_after_turn")

        @hookimpl
        def agentkit_before_turn(self, ctx: Any, info: Any) -> list[Message]:
            log.append(f"{name}:before_turn")
            return [Message.user(f"from {name}")]

        @hookimpl
        def agentkit_transform(self, ctx: Any, transcript: list[Message]) -> list[Message]:
            log.append(f"{name}:transform")
            return [*transcript, Message.user(name)]

    return Plugin()


async def test_every_contested_field_composes_plugins_then_user_in_order() -> None:
    log: list[str] = []

    def user(field: str, result: Any = None) -> Any:
        """Logs, then answers; called with the arguments ``result`` names (none for a value)."""

        def fn(*args: Any) -> Any:
            log.append(f"user:{field}")
            return result(*args) if callable(result) else result

        return functools.update_wrapper(fn, result) if callable(result) else fn

    kit = Kit(
        model="test",
        manager=manager(recording_plugin("beta", log), recording_plugin("alpha", log, priority=5)),
        before_model_call=user(
            "before_model_call",
            lambda ctx, request: ModelRequest((*request.messages, Message.user("user"))),
        ),
        before_tool_call=user("before_tool_call", ToolDecision.deny("user says no")),
        after_tool_call=user(
            "after_tool_call", lambda result: ToolResult(f"{result.content}+user")
        ),
        output_guard=user("output_guard", lambda message: Message.assistant(message.text + "+u")),
        should_stop_after_turn=user("should_stop_after_turn", "user stops"),
        before_turn=user("before_turn", [Message.user("from user")]),
        transform=user("transform", lambda transcript: [*transcript, Message.user("user")]),
    )
    hooks: Hooks = kit.config().hooks
    ctx = make_test_ctx()
    request = await hooks.run_before_model_call(ctx, ModelRequest(()))
    assert [m.text for m in request.messages] == ["alpha", "beta", "user"]
    decision = await hooks.run_before_tool_call(ctx, ToolCall("1", "x"))
    assert (decision.kind, decision.source) == ("deny", "user")
    result = await hooks.run_after_tool_call(ctx, ToolCall("1", "x"), ToolResult("r"))
    assert result.content == "r+alpha+beta+user"
    message = await hooks.run_output_guard(ctx, Message.assistant("m"))
    assert message.text == "m+alpha+beta+u"
    stop = await hooks.run_should_stop_after_turn(ctx, TurnInfo(1))
    assert stop is not None and (stop.reason, stop.source) == ("user stops", "user")
    added = await hooks.run_before_turn(ctx, TurnInfo(1))
    assert [m.text for m in added] == ["from alpha", "from beta", "from user"]
    transcript = await hooks.run_transform(ctx, [])
    assert [m.text for m in transcript] == ["alpha", "beta", "user"]
    fields = ["before_model_call", "before_tool_call", "after_tool_call", "output_guard",
              "should_stop_after_turn", "before_turn", "transform"]  # fmt: skip
    assert log == [f"{who}:{f}" for f in fields for who in ("alpha", "beta", "user")]


# ----------------------------------------------------------------- the tool union


class ChangingSource:
    """A dynamic source whose list changes between turns, like an MCP server's."""

    def __init__(self, label: str, *listings: list[Tool]) -> None:
        self.label = label
        self.listings = list(listings)
        self.closed = 0

    async def list_tools(self) -> list[Tool]:
        return self.listings.pop(0) if len(self.listings) > 1 else self.listings[0]

    async def aclose(self) -> None:
        self.closed += 1


def source_plugin(sources: dict[str, Any]) -> Any:
    class Plugin:
        AGENTKIT_NAME = "fake-sources"

        @hookimpl
        def agentkit_register_tool_sources(self, register: Any) -> None:
            for name, factory in sources.items():
                register(name, factory)

    return Plugin()


def test_tools_are_labelled_by_source_in_a_stable_order(tmp_path: Path) -> None:
    root = repo(tmp_path)
    child = Agent("explorer", "test")
    kit = Kit(
        model="test",
        manager=manager(),
        tools=[Echo("read"), Echo("write")],
        agents=[child],
        parts={"skills": {"dirs": [root / "skills"]}},
    )
    assert [(t.name, t.source) for t in kit.tools()] == [
        ("read", "tools"),
        ("write", "tools"),
        ("explorer", "agent:#1 explorer"),
        ("read_skill", "skills"),
    ]


def test_duplicate_at_construction_names_both_sources() -> None:
    child = Agent("read", "test")
    with pytest.raises(ToolConflictError, match=r"'read' is offered by tools and by agent:#1 read"):
        Kit(model="test", manager=manager(), tools=[Echo("read")], agents=[child])


def test_filter_runs_before_the_duplicate_check_and_wrap_replaces() -> None:
    seen: list[tuple[str, str]] = []

    def keep(source: str, tool: Tool) -> bool:
        seen.append((source, tool.name))
        return source != "agent:#1 read"

    def wrap(source: str, tool: Tool) -> Tool:
        return Echo(f"logged_{tool.name}")

    kit = Kit(
        model="test",
        manager=manager(),
        tools=[Echo("read")],
        agents=[Agent("read", "test")],
        tool_filter=keep,
        tool_wrap=wrap,
    )
    assert seen == [("tools", "read"), ("agent:#1 read", "read")]
    assert [(t.name, t.source) for t in kit.tools()] == [("logged_read", "tools")]


async def test_turn_time_duplicate_drops_the_later_and_reports_it() -> None:
    first = [Echo("search")]
    # listed once to connect and once to check the union, then changed
    source = ChangingSource("mcp:#1 server", first, first, [Echo("search"), Echo("read")])
    conflicts: list[Any] = []
    kit = await Kit.open(
        model="test",
        manager=manager(source_plugin({"fake": lambda: source})),
        tools=[Echo("read")],
        tool_sources={"fake": {}},
        on_tool_conflict=conflicts.append,
    )
    union = kit.config().tools
    tools = await union.tools()  # the server's list changed since construction
    assert [t.name for t in tools] == ["read", "search"]
    assert [(c.name, c.kept, c.dropped) for c in conflicts] == [("read", "tools", "mcp:#1 server")]
    await kit.aclose()
    await kit.aclose()
    assert source.closed == 1


async def test_failed_construction_closes_what_it_opened() -> None:
    opened = ChangingSource("mcp:#1 ok", [Echo("read")])

    def broken() -> Any:
        raise ConfigError("server #2 would not start")

    with pytest.raises(ConfigError, match="would not start"):
        await Kit.open(
            model="test",
            manager=manager(source_plugin({"a": lambda: opened, "b": broken})),
            tool_sources={"a": {}, "b": {}},
        )
    assert opened.closed == 1


def test_sync_construction_refuses_sources_that_need_connecting() -> None:
    with pytest.raises(ConfigError, match=r"await Kit.open"):
        Kit(model="test", manager=manager(source_plugin({"fake": list})), tool_sources={"fake": {}})


def test_unknown_option_is_named() -> None:
    with pytest.raises(
        ConfigError,
        match=r"unknown key 'instruction_budgt' in Kit\(\.\.\.\); did you mean "
        r"'instruction_budget'",
    ):
        Kit(instruction_budgt=10)


def test_kit_from_a_config_file(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (tmp_path / "agentkit.toml").write_text(
        f'[kit]\ninstructions = "Be brief."\nmax_turns = 4\n'
        f'[kit.parts.agentsmd]\npath = "{root}"\nroot = "{root}"\n'
    )
    kit = Kit.from_file(tmp_path / "agentkit.toml", model="test", manager=manager())
    assert kit.config().max_turns == 4
    assert [p.id for p in kit.parts()] == ["product", "agentsmd"]
    with pytest.raises(ConfigError, match=r"no \[kit\] table"):
        (tmp_path / "empty.toml").write_text("")
        Kit.from_file(tmp_path / "empty.toml")
