"""The plugin's `agentkit` commands pass the command conformance suite."""

from __future__ import annotations

from types import ModuleType

import agentkit_executor_dbos

from agentkit_core.testing import CommandConformance


class TestCommandConformance(CommandConformance):
    def make_plugin(self) -> ModuleType:
        return agentkit_executor_dbos
