"""agentkit-policy-rules: a policy engine of allow / ask / deny rules over tool calls.

Registered as the policy engine ``"rules"``, so ``Kit(policy="policy.toml")`` and
``load_policy("policy.toml")`` read a policy file with it; ``Policy(rules, default=...)`` builds
one in code. Adds ``agentkit policy explain``. The engine itself (``_engine``) is imported on
first use, so loading the plugin stays cheap.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from agentkit_core.plugin import PolicyLoader
    from agentkit_core.plugin import Register

    from ._engine import Policy
    from ._engine import RuleSet
    from ._matchers import Equals
    from ._matchers import Matcher
    from ._matchers import Prefix
    from ._matchers import Regex
    from ._matchers import Within
    from ._rules import Rule
    from ._rules import ToolSettings

__all__ = [
    "ENGINE",
    "Equals",
    "Matcher",
    "Policy",
    "Prefix",
    "Regex",
    "Rule",
    "RuleSet",
    "ToolSettings",
    "Within",
    "agentkit_register_commands",
    "agentkit_register_policy_engines",
    "load",
]

#: The name the engine is registered under (``Kit(policy_engine="rules")``).
ENGINE = "rules"

_LAZY = {
    "Policy": "_engine",
    "RuleSet": "_engine",
    "Equals": "_matchers",
    "Matcher": "_matchers",
    "Prefix": "_matchers",
    "Regex": "_matchers",
    "Within": "_matchers",
    "Rule": "_rules",
    "ToolSettings": "_rules",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def load(path: str | os.PathLike[str]) -> Policy:
    """The policy a TOML policy file describes (the engine's loader)."""
    from ._engine import Policy

    return Policy.from_file(path)


@hookimpl
def agentkit_register_policy_engines(register: Register[PolicyLoader]) -> None:
    """Offer the rules engine as ``"rules"``."""
    register(ENGINE, load)


@hookimpl
def agentkit_register_commands(cli: Any) -> None:
    """Add ``agentkit policy explain``."""
    from ._cli import add_commands

    add_commands(cli)
