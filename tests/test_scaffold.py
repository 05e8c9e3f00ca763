"""``agentkit plugins new``: what it writes, what it refuses, and that what it writes works.

The end-to-end check scaffolds every kind in a temporary directory outside the repository,
installs them all (editable, as an author would) into one fresh venv that holds only core
from its wheel, offline, and runs each plugin's own tests and ``agentkit plugins check``
there, with no pytest configuration but what the plugin itself carries.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core.cli import main
from agentkit_core.cli._scaffold import KINDS
from agentkit_core.cli._scaffold import plan
from agentkit_core.cli._scaffold import write

ROOT = Path(__file__).resolve().parent.parent
#: The longest name the scaffold takes: its files must still be lint- and format-clean.
LONGEST = "abcdefghijabcdefghijabcd"


# ---------------------------------------------------------------------- in this process


def test_every_seam_has_a_kind() -> None:
    from agentkit_core._plugins import SEAMS

    assert {k.seam for k in KINDS.values() if k.seam} == set(SEAMS)
    assert [k.name for k in KINDS.values() if k.seam is None] == ["hooks"]


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(sorted(KINDS)),
    name=st.from_regex(r"[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,5}){0,2}", fullmatch=True),
)
def test_any_valid_name_gives_a_distribution_of_valid_python(kind: str, name: str) -> None:
    new = plan(kind, name)
    assert new.dist == f"agentkit-{kind}-{name}"
    assert new.package == new.dist.replace("-", "_") and new.package.isidentifier()
    assert set(new.files) == {
        "pyproject.toml",
        "README.md",
        f"{new.package}/__init__.py",
        f"{new.package}/py.typed",
        "tests/test_plugin.py",
        "tests/test_conformance.py" if KINDS[kind].seam else "tests/test_hooks.py",
    }
    for path, text in new.files.items():
        assert "$" not in text.replace("$$", ""), f"{path} kept a template placeholder"
        if path.endswith(".py"):
            ast.parse(text, filename=path)
    project = _toml(new.files["pyproject.toml"])
    assert project["project"]["entry-points"]["agentkit"] == {name: new.package}
    assert project["project"]["dependencies"][0] == "agentkit-core>=0.1,<1"


def _toml(text: str) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(text)


@pytest.mark.parametrize(
    ("kind", "name", "match"),
    [
        ("compactr", "x", r"no plugin kind 'compactr'; the kinds are compactor, schema"),
        ("compactor", "Keep", r"plugin name 'Keep' is not lower-case words"),
        ("compactor", "keep_recent", r"'keep_recent' is not lower-case words"),
        ("compactor", "-keep", r"'-keep' is not"),
        ("compactor", "keep--recent", r"'keep--recent' is not"),
        ("compactor", "1keep", r"'1keep' is not"),
        ("compactor", "", r"plugin name '' is not"),
        ("compactor", LONGEST + "x", r"is 25 characters long, over 24"),
    ],
)
def test_a_bad_kind_or_name_is_refused_naming_it(kind: str, name: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        plan(kind, name)


def test_a_directory_in_use_is_refused_and_left_alone(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match=r"taken already exists and is not an empty directory"):
        write(plan("compactor", "keep"), taken)
    assert [p.name for p in taken.iterdir()] == ["notes.txt"]
    a_file = tmp_path / "a-file"
    a_file.write_text("mine")
    with pytest.raises(ConfigError, match="is not an empty directory"):
        write(plan("compactor", "keep"), a_file)
    assert a_file.read_text() == "mine"
    empty = tmp_path / "empty"
    empty.mkdir()
    write(plan("compactor", "keep"), empty)
    assert (empty / "pyproject.toml").is_file()


def test_a_write_that_fails_leaves_nothing_behind(tmp_path: Path) -> None:
    new = plan("compactor", "keep")
    new.files["z/\0bad"] = "x"  # written last; no file system accepts the name
    with pytest.raises(ValueError):
        write(new, tmp_path / "keep")
    assert list(tmp_path.iterdir()) == []


def test_the_command_writes_the_files_and_says_what_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["plugins", "new", "guardrail", "allow-docs"]) == 0
    out = capsys.readouterr().out
    root = tmp_path / "agentkit-guardrail-allow-docs"
    assert (root / "agentkit_guardrail_allow_docs" / "__init__.py").is_file()
    assert f"pip install -e '{root.name}[test]' && pytest {root.name}" in out
    assert main(["plugins", "new", "guardrail", "allow-docs"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists" in err
    assert main(["plugins", "new", "--help"]) == 0
    assert "model strings NAME:<model>" in capsys.readouterr().out
    assert main(["plugins", "new", "nope", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'nope'" in err
    assert main(["plugins", "new", "model", "Bad Name", "--dir", "x"]) == 2
    assert "'Bad Name' is not lower-case" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.fixture(scope="module")
def longest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every kind scaffolded under the longest name allowed."""
    root = tmp_path_factory.mktemp("longest")
    return {kind: write(plan(kind, LONGEST), root / kind) for kind in KINDS}


def _check(command: list[str], cwd: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", *command], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"{' '.join(command)} in {cwd}:\n{proc.stdout}{proc.stderr}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_what_it_writes_passes_ruff_with_its_own_settings(
    kind: str, longest: dict[str, Path]
) -> None:
    _check(["ruff", "check", "--no-cache", "."], longest[kind])
    _check(["ruff", "format", "--no-cache", "--check", "."], longest[kind])


def test_what_it_writes_passes_strict_mypy(longest: dict[str, Path], tmp_path: Path) -> None:
    """One mypy run over every kind (each plugin's own setting is strict = true).

    Each plugin's tests become a package of their own here, since every plugin's test modules
    share names (one run per plugin would cost a cold mypy start each).
    """
    for kind, directory in longest.items():
        package = plan(kind, LONGEST).package
        shutil.copytree(directory / package, tmp_path / package)
        tests = tmp_path / f"tests_{package}"
        shutil.copytree(directory / "tests", tests)
        (tests / "__init__.py").write_text("")
    _check(["mypy", "--strict", "--explicit-package-bases", "--no-incremental", "."], tmp_path)


# ---------------------------------------------------------------------- outside, in a fresh venv


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Any) -> tuple[Any, Path]:
    """One venv with core[testing] from its wheel, and every kind scaffolded and installed.

    The build backend is installed beside core and builds without isolation, which saves a
    build environment per plugin; the tutorial's test installs the isolated way.
    """
    root = tmp_path_factory.mktemp("outside")
    core = f"{wheelhouse.wheel(ROOT)}[testing]"
    env = wheelhouse.venv(root / "venv", core, "hatchling", "editables")
    for kind in KINDS:
        made = env.run("agentkit", "plugins", "new", kind, f"my-{kind}", cwd=root)
        assert made.returncode == 0, made.stderr
    dirs = [f"--editable={root / f'agentkit-{kind}-my-{kind}'}" for kind in KINDS]
    env.pip_install("--no-build-isolation", *dirs)
    return env, root


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_passes_its_own_tests_as_written(kind: str, outside: tuple[Any, Path]) -> None:
    env, root = outside
    directory = root / f"agentkit-{kind}-my-{kind}"
    proc = env.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=directory)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.fullmatch(r"\d+ passed in [\d.]+s", summary), summary  # none skipped or failed
    assert int(summary.split()[0]) >= 3


def test_every_kind_is_listed_loaded_and_checked(outside: tuple[Any, Path]) -> None:
    env, root = outside
    listed = env.run("agentkit", "plugins", "list", "--json", cwd=root)
    assert listed.returncode == 0, listed.stderr
    plugins = {p["name"]: p for p in json.loads(listed.stdout)["plugins"]}
    assert sorted(plugins) == sorted(f"my-{kind}" for kind in KINDS)
    for kind, spec in KINDS.items():
        info = plugins[f"my-{kind}"]
        assert (info["status"], info["distribution"]) == ("loaded", f"agentkit-{kind}-my-{kind}")
        provides = [(p["seam"], p["name"]) for p in info["provides"]]
        assert provides == ([(spec.seam, f"my-{kind}")] if spec.seam else [])
    check = env.run("agentkit", "plugins", "check", cwd=root)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith(f"ok: {len(KINDS)} plugins loaded")
