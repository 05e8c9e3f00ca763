"""lazy_attributes: a plugin entry module's names load their module on first use, once."""

from __future__ import annotations

import sys
import types

import pytest

from agentkit_core.plugin import lazy_attributes


def test_a_name_loads_its_module_on_first_use_and_stays() -> None:
    module = types.ModuleType("lazy_probe_pkg")
    module.__path__ = []  # a package, so a relative module name resolves under it
    sys.modules["lazy_probe_pkg"] = module
    try:
        module.__getattr__ = lazy_attributes("lazy_probe_pkg", {"dumps": "json", "gone": "json"})  # type: ignore[attr-defined]
        assert "dumps" not in vars(module)
        import json

        assert module.dumps is json.dumps
        assert vars(module)["dumps"] is json.dumps  # kept: the next use is a plain read
        with pytest.raises(AttributeError, match="'lazy_probe_pkg' has no attribute 'nothing'"):
            module.nothing  # noqa: B018
        with pytest.raises(AttributeError, match="gone"):
            module.gone  # noqa: B018  # the table names a module that does not define it
    finally:
        del sys.modules["lazy_probe_pkg"]
