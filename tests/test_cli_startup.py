"""`agentkit plugins list` loads metadata and registrations, not the machinery of a run.

Each check runs in a fresh interpreter, since the test session has long imported everything.
What listing must not import: asyncio (about 25 ms) and any plugin's private implementation
module (``agentkit_<plugin>._*``). A plugin's entry module holds its hookimpls; their bodies (or
the factories they register) import the implementation when called.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

#: Private plugin modules listing genuinely needs: the ``agentkit_cli_commands`` hooks add their
#: subcommands to the parser the CLI builds before it dispatches, so the argparse wiring (not the
#: implementation it calls) is imported. Each is a few hundred microseconds.
#: guardrail-web keeps its hookimpls in ``_hooks`` and the settings TypedDict it declares at
#: registration in ``_settings``: registration, not the guardrail (``_guardrail``, ``_framing``).
#: schema-attrs and schema-dataclass register their probe, which their adapter (loaded on first
#: use) shares, from ``_probe``: one small function over the standard library.
ALLOWED = {
    "agentkit_executor_dbos._cli",
    "agentkit_mcp_client._cli",
    "agentkit_policy_rules._cli",
    "agentkit_guardrail_web._hooks",
    "agentkit_guardrail_web._settings",
    "agentkit_mcp_server._defaults",
    "agentkit_schema_attrs._probe",
    "agentkit_schema_dataclass._probe",
}

ROOT = Path(__file__).resolve().parent.parent

_PRIVATE = re.compile(r"agentkit_(?!core\.)\w+\._\w+")


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (stdout is discarded)."""
    script = (
        "import json, sys\n"
        "out = sys.stdout\n"
        "sys.stdout = open('/dev/null', 'w')\n"
        "try:\n" + "".join(f"    {line}\n" for line in code.splitlines()) + "except SystemExit:\n"
        "    pass\n"
        "out.write(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def _heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m == "asyncio" or _PRIVATE.fullmatch(m)} - ALLOWED


def test_core_plugin_loading_imports_no_asyncio() -> None:
    """The core modules `plugins list` goes through import neither asyncio nor the hook folds."""
    modules = _modules_after(
        "import agentkit_core.cli._main, agentkit_core.cli._plugins, agentkit_core._lookup\n"
        "import agentkit_core._plugins, agentkit_core._config"
    )
    assert "asyncio" not in modules
    assert "agentkit_core._hooks" not in modules  # it imports asyncio and the message types


def test_hook_fields_match_the_folding_rules() -> None:
    """_hookfields (light, for loading) agrees with the rules _hooks folds by."""
    from agentkit_core import _hookfields
    from agentkit_core import _hooks

    rules = _hooks._RULES
    assert _hookfields.FIELD_OF_HOOK == {rule.hook: name for name, rule in rules.items()}
    assert set(_hookfields.ARGUMENTS) == set(_hookfields.FIELDS) == set(rules)


_ENTRY_MODULES = sorted({ep.value.split(":")[0] for ep in entry_points(group="agentkit")})


@pytest.mark.parametrize("module", _ENTRY_MODULES)
def test_entry_module_imports_no_implementation(module: str) -> None:
    assert _heavy(_modules_after(f"import {module}")) == set()


def test_plugins_list_imports_no_implementation() -> None:
    """The whole command, every installed plugin loaded, as `agentkit plugins list` runs it."""
    modules = _modules_after(
        "from agentkit_core.cli import main\nsys.argv = ['agentkit', 'plugins', 'list']\nmain()"
    )
    assert _heavy(modules) == set()


def test_the_cli_package_is_its_pinned_names_each_loaded_on_first_use() -> None:
    """``agentkit_core.cli``'s names are tests/api/agentkit_core.cli.txt; importing the package
    loads no command module (``agentkit_core.TraceFile`` goes through it), and each name
    resolves."""
    import agentkit_core.cli

    pinned = (ROOT / "tests" / "api" / "agentkit_core.cli.txt").read_text(encoding="utf-8").split()
    assert sorted(agentkit_core.cli.__all__) == pinned
    assert all(callable(getattr(agentkit_core.cli, name)) for name in pinned)
    loaded = _modules_after("import agentkit_core.cli")
    core = {m for m in loaded if m.startswith("agentkit_core")}
    assert core == {"agentkit_core", "agentkit_core._lazy", "agentkit_core.cli"}
    assert "argparse" not in loaded
