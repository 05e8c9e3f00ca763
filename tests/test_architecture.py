"""The architecture contracts: .importlinter, docs/architecture.md and the files agree, and bite."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "agentkit_core"
LINT = ROOT / ".ci" / "lint-imports"


def contracts() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(inline_comment_prefixes=None)
    parser.read(ROOT / ".importlinter", encoding="utf-8")
    return parser


def words(value: str) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in value.splitlines())
    return [line for line in lines if line]


def floors() -> list[set[str]]:
    layers = words(contracts()["importlinter:contract:floors"]["layers"])
    return [{m.strip() for m in layer.split(":")} for layer in layers]


#: The doors stand beside the floors: they re-export, and reach the floors only lazily.
DOORS = {"__init__", "plugin"}


def core_modules() -> set[str]:
    found = {p.stem for p in CORE.glob("*.py")} - DOORS
    return found


def plugin_packages() -> set[str]:
    return {p.name for p in (ROOT / "plugins").glob("*/agentkit_*") if p.is_dir()}


def test_every_core_module_stands_on_exactly_one_floor() -> None:
    placed = [m for floor in floors() for m in floor]
    assert len(placed) == len(set(placed)), "a module is on two floors"
    unplaced, gone = core_modules() - set(placed), set(placed) - core_modules()
    assert not unplaced and not gone, (
        "place each core module on one floor in .importlinter and docs/architecture.md: "
        f"unplaced {sorted(unplaced)}, gone {sorted(gone)}"
    )


def test_every_plugin_package_is_under_the_contracts() -> None:
    config = contracts()
    plugins = plugin_packages()
    roots = set(words(config["importlinter"]["root_packages"]))
    assert roots == {"agentkit_core"} | plugins
    assert set(words(config["importlinter:contract:plugins-independent"]["modules"])) == plugins
    forbidden = config["importlinter:contract:core-imports-no-plugin"]["forbidden_modules"]
    assert set(words(forbidden)) == plugins


def test_the_page_draws_the_floors_the_contract_checks() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([a-z ]+) \| [^|]+ \| ([^|]+) \|$", page, flags=re.MULTILINE)
    drawn = [set(re.findall(r"`([\w.]+)`", modules)) for name, modules in rows if name != "floor"]
    assert drawn == floors()
    ignored = words(contracts()["importlinter:contract:floors"]["ignore_imports"])
    for line in ignored:  # every upward import the contract lets pass is named on the page
        source, target = (part.strip().rsplit(".", 1)[1] for part in line.split("->"))
        assert f"`{source}`" in page and f"`{target}`" in page, line


def test_the_contracts_hold_on_this_checkout() -> None:
    done = subprocess.run(["bash", str(LINT)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("KEPT") == 4


def test_a_primitive_importing_the_loop_breaks_the_floors(tmp_path: Path) -> None:
    """The contract bites: a function-local import up from a primitive fails the lint."""
    copy = tmp_path / "checkout"
    shutil.copytree(CORE, copy / "agentkit_core", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "plugins", copy / "plugins", ignore=shutil.ignore_patterns("tests"))
    shutil.copy(ROOT / ".importlinter", copy / ".importlinter")
    (copy / ".ci").mkdir()
    shutil.copy(LINT, copy / ".ci" / "lint-imports")
    messages = copy / "agentkit_core" / "_messages.py"
    messages.write_text(
        messages.read_text(encoding="utf-8")
        + "\n\ndef _probe() -> None:\n    from ._agent import Agent  # noqa: F401\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        ["bash", str(copy / ".ci" / "lint-imports")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=copy,
        env={"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
    )
    assert done.returncode != 0
    assert "core floors: each imports only from the floors below it BROKEN" in done.stdout
    assert "agentkit_core._messages -> agentkit_core._agent" in done.stdout
