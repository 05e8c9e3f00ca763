"""Build tests/sample_plugin with pip, install it beside core in a fresh venv, see it work."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Core's import-time dependencies (and theirs), linked from this environment: no download.
RUNTIME = ("pluggy", "importlib-metadata", "packaging")


def _link_runtime(target: Path) -> None:
    from importlib import metadata

    from packaging.requirements import Requirement

    target.mkdir()
    todo, done = list(RUNTIME), set()
    while todo:
        dist = metadata.distribution(todo.pop())
        if dist.metadata["Name"] in done:
            continue
        done.add(dist.metadata["Name"])
        for line in dist.requires or ():
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
        tops = {f.parts[0] for f in dist.files or () if not f.parts[0].endswith(".dist-info")}
        for top in tops - {"..", "__pycache__"}:
            source = Path(str(dist.locate_file(top)))
            if source.exists() and not (target / top).exists():
                (target / top).symlink_to(source)


def test_sample_plugin_installed_with_pip_is_listed_and_called(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    _link_runtime(tmp_path / "runtime")
    (Path(purelib) / "_runtime.pth").write_text(str(tmp_path / "runtime") + "\n")

    offline = importlib.util.find_spec("hatchling") is not None
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels)]
        + (["--no-build-isolation", "--no-index"] if offline else [])
        + [str(ROOT), str(ROOT / "tests" / "sample_plugin")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            *map(str, sorted(wheels.glob("*.whl"))),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr

    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTKIT_", "PYTHON"))}
    agentkit = env_dir / "bin" / "agentkit"
    listed = subprocess.run(
        [agentkit, "plugins", "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert listed.returncode == 0, listed.stderr
    (plugin,) = json.loads(listed.stdout)["plugins"]
    assert (plugin["name"], plugin["distribution"], plugin["status"]) == (
        "greeting",
        "agentkit-sample-greeting",
        "loaded",
    )
    assert plugin["provides"] == [{"seam": "instruction_parts", "name": "greeting", "meta": {}}]
    assert plugin["commands"] == ["greet"]

    called = subprocess.run(
        [
            python,
            "-c",
            "from agentkit_core import get_plugin_manager as g; pm = g();"
            "print(pm.lookup('instruction_parts', 'greeting').value(name='Ada'));"
            "print(pm.hook.agentkit_before_turn(ctx=None, info=None)[0][0].content)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert called.stdout == "Greet Ada politely.\n(reminder: be polite)\n", called.stderr
    greet = subprocess.run([agentkit, "greet", "Ada"], capture_output=True, text=True, env=env)
    assert (greet.returncode, greet.stdout) == (0, "hello, Ada\n")
