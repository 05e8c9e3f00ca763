"""Every plugin declares what its tests import: its dependencies, plus its ``test`` extra.

A plugin's tests must pass after ``pip install 'plugins/NAME[test]'`` alone, so a sibling
package or a third-party library a test imports (``psutil``, ``agentkit-mcp-client``) is
declared there, and the test tools come from ``agentkit-core[testing]``.
"""

from __future__ import annotations

import ast
import functools
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = sorted(p.parent for p in ROOT.glob("plugins/*/pyproject.toml"))


def project(directory: Path) -> dict[str, object]:
    data = tomllib.loads((directory / "pyproject.toml").read_text(encoding="utf-8"))
    data["project"]["packages"] = data["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    return data["project"]


#: Our packages by import name, to the distribution that ships each.
OURS = {
    package: canonicalize_name(meta["name"])
    for meta in map(project, [ROOT, *PLUGINS])
    for package in meta["packages"]
}


def imports(tests: Path) -> set[str]:
    """The top-level modules the files under ``tests`` import, wherever the import sits."""
    found: set[str] = set()
    for path in tests.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.partition(".")[0])
    local = {p.stem for p in tests.rglob("*.py")} | {p.name for p in tests.rglob("*") if p.is_dir()}
    local |= {p.stem for p in (ROOT / ".ci").glob("*.py")}  # the repo's shared test helpers
    return found - set(sys.stdlib_module_names) - {"__future__"} - local


@functools.cache
def installed() -> dict[str, list[str]]:
    """Installed top-level modules to their distributions: read once, not once per plugin."""
    return packages_distributions()


def declared(meta: dict[str, object]) -> set[str]:
    """The distributions a plugin's runtime and ``test`` requirements bring, extras expanded."""
    core_extras = project(ROOT)["optional-dependencies"]
    names: set[str] = set()
    for line in [*meta["dependencies"], *meta.get("optional-dependencies", {}).get("test", [])]:
        req = Requirement(line)
        names.add(canonicalize_name(req.name))
        if req.name == "agentkit-core":
            for extra in req.extras:
                names.update(canonicalize_name(Requirement(r).name) for r in core_extras[extra])
    return names


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_the_tests_import_only_what_the_plugin_declares(plugin: Path) -> None:
    meta = project(plugin)
    tools = [Requirement(r) for r in meta.get("optional-dependencies", {}).get("test", [])]
    assert any(r.name == "agentkit-core" and "testing" in r.extras for r in tools), (
        f"{plugin.name}: its test extra must bring agentkit-core[testing]"
    )
    have = declared(meta)
    third_party = installed()
    missing = {}
    for module in sorted(imports(plugin / "tests") - set(meta["packages"]) - {"agentkit_core"}):
        dists = (
            {OURS[module]}
            if module in OURS
            else set(map(canonicalize_name, third_party.get(module, [module])))
        )
        if not dists & have:
            missing[module] = sorted(dists)
    assert not missing, f"{plugin.name}'s tests import {missing}; declare them in its test extra"


def test_the_import_finder_sees_imports_anywhere(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("import json\n")
    (tmp_path / "test_x.py").write_text(
        "import helper\nfrom . import y\n"
        "def f():\n    import psutil.tests\n    from mcp import types\n"
    )
    assert imports(tmp_path) == {"psutil", "mcp"}
