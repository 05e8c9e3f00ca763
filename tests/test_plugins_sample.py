"""Core and plugins installed as wheels (never editable), and used there.

An editable install reads the source tree, so a file a wheel leaves out (``py.typed``, the
scaffold's templates) would go unnoticed. .ci/build-wheels builds the wheels, and
.ci/install-wheels installs core, the sample plugin, truncation and sqlite from them into
.ci/wheel-venv, where these tests list, check and run them.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_wheel_holds_every_file_of_its_packages(wheelhouse: Any) -> None:
    missing = {}
    for source in wheelhouse.sources():
        with zipfile.ZipFile(wheelhouse.wheel(source)) as wheel:
            held = set(wheel.namelist())
        wanted = {f.relative_to(source).as_posix() for f in wheelhouse.files(source)}
        assert any(name.endswith("/py.typed") for name in wanted), f"{source}: no py.typed"
        if wanted - held:
            missing[wheelhouse.wheel(source).name] = sorted(wanted - held)
    assert not missing, f"wheels leave out files of their packages: {missing}"


@pytest.fixture(scope="module")
def installed(wheelhouse: Any) -> Any:
    """.ci/wheel-venv: core, the sample plugin, truncation and sqlite, from their wheels."""
    return wheelhouse.installed()


def test_what_runs_there_is_the_wheel_not_this_checkout(installed: Any, tmp_path: Path) -> None:
    where = installed.run(
        "python", "-c", "import agentkit_core, agentkit_sample_greeting as s; print(s.__file__)",
        cwd=tmp_path,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(installed.path), where.stdout


def test_installed_wheels_are_listed_with_what_they_provide(installed: Any, tmp_path: Path) -> None:
    listed = installed.run("agentkit", "plugins", "list", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    plugins = {p["name"]: p for p in json.loads(listed.stdout)["plugins"]}
    assert sorted(plugins) == ["greeting", "sqlite", "truncation"]
    assert {p["status"] for p in plugins.values()} == {"loaded"}
    greeting = plugins["greeting"]
    assert greeting["distribution"] == "agentkit-sample-greeting"
    assert greeting["provides"] == [{"seam": "instruction_parts", "name": "greeting", "meta": {}}]
    assert greeting["commands"] == ["greet"]
    assert plugins["truncation"]["provides"][0]["seam"] == "compactors"
    check = installed.run("agentkit", "plugins", "check", cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr


def test_installed_wheels_are_called(installed: Any, tmp_path: Path) -> None:
    called = installed.run(
        "python",
        "-c",
        "from agentkit_core import Kit, get_plugin_manager as g; pm = g();"
        "kit = Kit(model='test', parts={'greeting': {'who': 'Ada'}});"
        "print(kit.config().instructions);"
        "print(pm.hook.agentkit_before_turn(ctx=None, info=None)[0][0].content)",
        cwd=tmp_path,
    )
    assert called.stdout == "Greet Ada politely.\n(reminder: be polite)\n", called.stderr
    greet = installed.run("agentkit", "greet", "Ada", cwd=tmp_path)
    assert (greet.returncode, greet.stdout) == (0, "hello, Ada\n")


def test_shipped_plugins_run_from_their_wheels(installed: Any, tmp_path: Path) -> None:
    run = installed.run(
        "agentkit", "run", "hello", "--model", "test", "--compactor", "truncation", cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("TestModel answer")
    db = tmp_path / "runs.db"
    code = (
        "import asyncio\n"
        "from agentkit_core import Checkpointer, PluginManager\n"
        "from agentkit_core.plugin import open_checkpoint_store\n"
        "async def main():\n"
        f"    port = await open_checkpoint_store('sqlite:///{db}', manager=PluginManager())\n"
        "    written = await Checkpointer(port).snapshot('r1', {'turn': 1})\n"
        "    await port.aclose()\n"
        "    print(written.version)\n"
        "asyncio.run(main())\n"
    )
    stored = installed.run("python", "-c", code, cwd=tmp_path)
    assert (stored.returncode, stored.stdout) == (0, "1\n"), stored.stderr
    assert db.is_file()
