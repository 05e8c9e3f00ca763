"""Every seam a plugin can register on has a conformance suite, documented, and every plugin's
tests run the suite of each seam it registers on: a new seam or plugin cannot skip them."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

import agentkit_core.testing
from agentkit_core import PluginManager
from agentkit_core import hookspecs
from agentkit_core.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = sorted(p.parent for p in ROOT.glob("plugins/*/pyproject.toml"))

#: Each registration hook's seam and the suite its implementations run.
SUITES = {
    "checkpoint_stores": "CheckpointPortConformance",
    "commands": "CommandConformance",
    "compactors": "CompactorConformance",
    "executors": "ExecutorConformance",
    "guardrails": "GuardrailConformance",
    "guards": "GuardConformance",
    "instruction_parts": "InstructionPartConformance",
    "mcp_token_stores": "MCPTokenStoreConformance",
    "memory_stores": "MemoryStoreConformance",
    "models": "ModelConformance",
    "policy_engines": "PolicyEngineConformance",
    "prices": "PriceSourceConformance",
    "schema_adapters": "SchemaAdapterConformance",
    "servers": "ServerConformance",
    "session_stores": "SessionStoreConformance",
    "span_exporters": "SpanExporterConformance",
    "tool_sources": "ToolSourceConformance",
}


def test_every_registration_hook_has_a_suite_that_the_docs_name() -> None:
    hooks = {
        name.removeprefix("agentkit_register_")
        for name, _ in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith("agentkit_register_")
    }
    assert hooks == set(SUITES), "a seam without a conformance suite, or a suite of no seam"
    table = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    for suite in SUITES.values():
        assert suite in agentkit_core.testing.__all__, suite
        assert f"`{suite}`" in table, f"docs/plugins.md's table of suites lacks {suite}"


def _seams(package: str) -> set[str]:
    """The seams the plugin ``package`` registers on, its commands included."""
    manager = PluginManager(entry_points=False, plugins=[importlib.import_module(package)])
    build_parser(manager)
    seams = set()
    for info in manager.plugins():
        seams.update(reg.seam for reg in info.registrations)
        if info.commands:
            seams.add("commands")
    return seams


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_each_plugins_tests_run_the_suite_of_each_seam_it_registers_on(plugin: Path) -> None:
    package = next(p.name for p in plugin.glob("agentkit_*") if p.is_dir())
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (plugin / "tests").rglob("*.py"))
    missing = sorted(SUITES[s] for s in _seams(package) if SUITES[s] not in tests)
    assert missing == [], f"{plugin.name}'s tests run none of {missing}"


TEMPLATES = sorted((ROOT / "agentkit_core" / "cli" / "_templates").glob("*/plugin.py.tmpl"))


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.parent.name)
def test_each_scaffold_kinds_test_runs_its_seams_suite(template: Path) -> None:
    """``agentkit plugins new KIND`` starts a plugin whose own tests run the suite from day one."""
    source = template.read_text(encoding="utf-8")
    # a hook defined, or made (stores: ``agentkit_register_session_stores = store_plugin(...)``)
    seams = [s for s in SUITES if re.search(rf"agentkit_register_{s}\b( =|\()", source)]
    tests = (template.parent / "test.py.tmpl").read_text(encoding="utf-8")
    assert template.parent.name == "hooks" or seams, "a kind that registers on no seam"
    assert [SUITES[s] for s in seams if SUITES[s] not in tests] == []
