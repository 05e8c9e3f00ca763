"""agentkit with the web guardrail on every tool call: the per-turn price of egress + framing.

Like ``bench_agentkit.py``, plus the agentkit-guardrail-web plugin's hooks and the agent's own
guardrail (``guardrail=WebGuardrail()``: ``egress()`` checks every call's arguments, the hooks
frame every result). Compare its figures with ``bench_agentkit.py``'s in the same venv; the
difference is the guardrail's cost per tool call. Needs agentkit-guardrail-web installed (the
repository's dev venv has it).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import agentkit_guardrail_web
from bench_agentkit import make as make_agentkit
from common import main

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import PluginConfig
from agentkit_core import PluginManager


def make(kind: str) -> Callable[[int], Awaitable[object]]:
    pm = PluginManager(entry_points=False, plugins=[agentkit_guardrail_web], config=PluginConfig())
    options: dict[str, Any] = {"hooks": Hooks.from_plugins(pm)}
    if "guardrail" in inspect.signature(Agent).parameters:  # before it, the hooks did all of it
        options.update(guardrail=agentkit_guardrail_web.WebGuardrail(), manager=pm)
    return make_agentkit(kind, **options)


if __name__ == "__main__":
    main(make, "agentkit + web guardrail", "agentkit-core")
