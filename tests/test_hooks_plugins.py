"""Contested-field folds over plugins loaded by the manager: plugin order, async, attribution."""

from __future__ import annotations

from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginConfig
from agentkit_core import PluginManager
from agentkit_core import ToolDecision
from agentkit_core import TurnInfo
from agentkit_core import hookimpl


class Tagger:
    """Appends its tag to the transcript (sync or async) and answers the turn hooks."""

    def __init__(self, name: str, priority: int = 0, asynchronous: bool = False) -> None:
        self.AGENTKIT_NAME = name
        self.AGENTKIT_PRIORITY = priority
        self.asynchronous = asynchronous

    @hookimpl
    def agentkit_transform(self, ctx, transcript):
        if self.asynchronous:

            async def later():
                return [*transcript, Message.user(self.AGENTKIT_NAME)]

            return later()
        return [*transcript, Message.user(self.AGENTKIT_NAME)]

    @hookimpl
    async def agentkit_should_stop_after_turn(self, ctx, turn):
        return f"{self.AGENTKIT_NAME} says stop" if turn.turn >= 2 else None

    @hookimpl
    def agentkit_before_tool_call(self, ctx, call):
        return ToolDecision.ask("check") if self.AGENTKIT_NAME == "b" else ToolDecision.allow()


def hooks_of(*plugins) -> Hooks:
    pm = PluginManager(entry_points=False, plugins=plugins, config=PluginConfig())
    return Hooks.from_plugins(pm)


async def test_transform_pipeline_runs_in_plugin_order_mixing_sync_and_async():
    hooks = hooks_of(Tagger("c"), Tagger("a", asynchronous=True), Tagger("b", priority=3))
    assert [s for s, _ in hooks.transform] == ["b", "a", "c"]
    assert [m.text for m in await hooks.run_transform(None, [])] == ["b", "a", "c"]


async def test_first_stop_wins_and_names_its_plugin():
    hooks = hooks_of(Tagger("z", priority=1), Tagger("y"))
    assert await hooks.run_should_stop_after_turn(None, TurnInfo(turn=1)) is None
    stop = await hooks.run_should_stop_after_turn(None, TurnInfo(turn=2))
    assert (stop.reason, stop.source) == ("z says stop", "z")


async def test_ask_beats_allow_and_names_the_plugin():
    decision = await hooks_of(Tagger("a"), Tagger("b")).run_before_tool_call(None, None)
    assert (decision.kind, decision.reason, decision.source) == ("ask", "check", "b")


async def test_user_hooks_merge_after_plugin_hooks():
    user = Hooks.of(transform=lambda transcript: [*transcript, Message.user("user")])
    merged = hooks_of(Tagger("a")).merged(user)
    out = await merged.run_transform(None, [Message.user("start")])
    assert [m.text for m in out] == ["start", "a", "user"]
