"""The lookup layer: every name goes through an explicit manager; no silent stand-in model."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import UnknownNameError
from agentkit_core import get_compactor
from agentkit_core import hookimpl
from agentkit_core import resolve_model
from agentkit_core.testing import TestModel


class KeepAll:
    async def compact(self, messages: list[Message], ctx: Any) -> list[Message]:
        return messages


class OnlyHere:
    """A plugin registered in code on one manager only."""

    AGENTKIT_NAME = "only-here"

    @hookimpl
    def agentkit_register_compactors(self, register: Any) -> None:
        register("only-here", KeepAll)


def lonely(*plugins: Any) -> PluginManager:
    return PluginManager(entry_points=False, plugins=plugins)


def test_two_kits_on_two_managers_never_see_each_others_plugins() -> None:
    with_it, without_it = lonely(OnlyHere()), lonely()
    kit = Kit(model="test", manager=with_it, compactor="only-here")
    assert kit.config().middlewares  # the compaction middleware over KeepAll
    assert isinstance(get_compactor("only-here", manager=with_it), KeepAll)
    with pytest.raises(UnknownNameError, match=r"no compactor named 'only-here'.*installed: none"):
        Kit(model="test", manager=without_it, compactor="only-here")
    with pytest.raises(UnknownNameError, match=r"'only-here'"):
        get_compactor("only-here")  # the process-wide default has no such plugin


def test_no_model_is_an_error_that_says_how_to_pass_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTKIT_MODEL", raising=False)
    with pytest.raises(ConfigError, match=r"no model given: pass model=.*or set AGENTKIT_MODEL"):
        Agent("ops")
    with pytest.raises(ConfigError, match=r"no model given"):
        Kit(manager=lonely())
    monkeypatch.setenv("AGENTKIT_MODEL", "  ")
    with pytest.raises(ConfigError, match=r"AGENTKIT_MODEL is set but empty"):
        resolve_model(None)


def test_agentkit_model_names_the_model_when_none_is_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTKIT_MODEL", "test")
    assert isinstance(Agent("ops", hooks=None, manager=lonely()).model, TestModel)
    assert isinstance(resolve_model(None, environ={"AGENTKIT_MODEL": "test"}), TestModel)


def test_a_model_prefix_is_looked_up_on_the_given_manager() -> None:
    with pytest.raises(UnknownNameError, match=r"no model named 'openai' is installed"):
        resolve_model("openai:gpt-4o-mini", manager=lonely())
