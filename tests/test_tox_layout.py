"""README's test command installs everything once per Python, not once per tox environment.

Before issue 35 the ``type`` and ``docs`` environments each ran ``.ci/install-dev`` again on the
same Python as ``tests`` (about 100 s each); mypy and the docs' code blocks now run inside
``tests``. This reads tox.ini as tox does (an environment inherits ``[testenv]``'s keys).
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tox_ini() -> configparser.ConfigParser:
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "tox.ini", encoding="utf-8")
    return config


def setting(config: configparser.ConfigParser, env: str, key: str) -> str:
    """``key`` of ``env``'s own section, else of ``[testenv]`` (tox 4's inheritance).

    Its own section may name it generatively: ``[testenv:py31{2,3}]`` is py312's and py313's.
    """
    own = [s for s in config.sections() if s.startswith("testenv:") and env in _names(s[8:])]
    for section in (*own, "testenv"):
        if config.has_option(section, key):
            return config.get(section, key)
    return ""


def _names(pattern: str) -> list[str]:
    """The environment names a section name stands for (each ``{a,b}`` expanded)."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [name for part in match[1].split(",") for name in _names(head + part + tail)]


def python_of(config: configparser.ConfigParser, env: str) -> str:
    if base := setting(config, env, "base_python"):
        return base
    if match := re.fullmatch(r"py3(\d+)", env):
        return f"python3.{match[1]}"
    return "the Python tox runs on"


def env_list(config: configparser.ConfigParser) -> list[str]:
    return config["tox"]["env_list"].replace(",", " ").split()


def test_each_python_installs_once() -> None:
    config = tox_ini()
    installs: dict[str, list[str]] = {}
    for env in env_list(config):
        if ".ci/install-dev" in setting(config, env, "commands_pre"):
            installs.setdefault(python_of(config, env), []).append(env)
    twice = {python: envs for python, envs in installs.items() if len(envs) > 1}
    assert not twice, f"these environments each install everything on one Python: {twice}"


def test_mypy_and_the_docs_blocks_run_in_the_tests_environment() -> None:
    config = tox_ini()
    commands = setting(config, "tests", "commands").split("\n")
    assert "mypy" in [c.strip() for c in commands]
    # tests/test_docs.py runs the docs' code blocks; a bare pytest collects it (testpaths)
    assert "pytest {[matrix]xdist} {posargs}" in [c.strip() for c in commands]
    assert setting(config, "tests", "ignore_errors") == "true", "both must run when one fails"


def test_mypy_checks_the_branches_of_every_python_the_matrix_tests() -> None:
    """``sys.version_info`` branches are read for one Python a run: each version's env runs it."""
    config = tox_ini()
    for env in env_list(config):
        commands = [c.strip() for c in setting(config, env, "commands").split("\n")]
        if env == "tests":
            assert "mypy" in commands
        elif re.fullmatch(r"py3\d+", env):
            assert "mypy --python-version {py_dot_ver}" in commands, env
            assert setting(config, env, "ignore_errors") == "true", env


def test_each_environments_tests_use_every_core() -> None:
    """A worker per core in each environment: the one left running at the end uses them all."""
    config = tox_ini()
    assert config["matrix"]["xdist"].split()[:2] == ["-n", "logical"]
    for env in env_list(config):
        for command in setting(config, env, "commands").split("\n"):
            if command.strip().startswith("pytest"):
                assert command.split()[1] == "{[matrix]xdist}", f"{env}: {command}"


def test_missing_interpreters_fail_the_run() -> None:
    assert tox_ini()["tox"]["skip_missing_interpreters"] == "false"


def test_mypy_runs_while_the_background_setup_still_fetches() -> None:
    """The tests environment's wait for .ci/setup comes after mypy, which needs none of it."""
    config = tox_ini()
    steps = [
        c.strip()
        for key in ("commands_pre", "commands")
        for c in setting(config, "tests", key).split("\n")
        if c.strip()
    ]
    assert (
        steps.index("mypy")
        < steps.index("bash .ci/setup")
        < steps.index("pytest {[matrix]xdist} {posargs}")
    )
    assert "bash .ci/setup" not in setting(config, "tests", "commands_pre")


def test_hypothesis_examples_have_no_deadline() -> None:
    """The checkout's conftest.py lifts hypothesis' 200 ms deadline for every suite in it."""
    from hypothesis import settings

    assert settings.default.deadline is None


def test_the_durations_conftest_orders_by_name_real_files() -> None:
    """Each file .ci/test-durations.txt names exists: a renamed one would lose its place."""
    import importlib.util

    # by its path: every plugin's tests have a conftest module of that name too
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    assert spec is not None and spec.loader is not None
    root_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root_conftest)
    listed = root_conftest.file_seconds()
    assert len(listed) > 20
    assert [path for path in listed if not (ROOT / path).is_file()] == []
