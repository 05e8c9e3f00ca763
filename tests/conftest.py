"""Fixtures: throwaway plugin distributions on a path entry, and fresh venvs from built wheels.

The venvs are filled only from the wheelhouse ``.ci/build-wheels`` made, with ``--no-index``:
no test downloads or builds a package of ours or anyone else's.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import textwrap
import tomllib
import venv
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

CORE_RANGE = "agentkit-core>=0.1,<1"
ROOT = Path(__file__).resolve().parent.parent
#: Where .ci/build-wheels puts the wheels of this checkout and of their dependencies, and the
#: venv .ci/install-wheels fills from them (tox moves both into each environment's directory).
WHEELS = Path(os.environ.get("AGENTKIT_WHEELS", ROOT / ".ci" / "wheels"))
WHEEL_VENV = Path(os.environ.get("AGENTKIT_WHEEL_VENV", ROOT / ".ci" / "wheel-venv"))
BUILD_WHEELS = "bash .ci/build-wheels (bash .ci/install-dev runs it)"
INSTALL_WHEELS = "bash .ci/install-wheels (bash .ci/install-dev runs it)"


def plugin_source(
    label: str,
    *,
    registers: dict[str, list[str]] | None = None,
    priority: int | None = None,
    before: tuple[str, ...] = (),
    after: tuple[str, ...] = (),
    before_turn: bool = True,
    extra: str = "",
) -> str:
    """A plugin module: registers names on seams and answers before_turn with ``[label]``."""
    lines = ["from agentkit_core import hookimpl", ""]
    if priority is not None:
        lines.append(f"AGENTKIT_PRIORITY = {priority}")
    if before:
        lines.append(f"AGENTKIT_BEFORE = {list(before)!r}")
    if after:
        lines.append(f"AGENTKIT_AFTER = {list(after)!r}")
    for seam, names in (registers or {}).items():
        body = "".join(f"\n    register({n!r}, {label!r})" for n in names) or "\n    pass"
        lines.append(f"\n@hookimpl\ndef agentkit_register_{seam}(register):{body}\n")
    if before_turn:
        lines.append(f"\n@hookimpl\ndef agentkit_before_turn(ctx, info):\n    return [{label!r}]\n")
    lines.append(textwrap.dedent(extra))
    return "\n".join(lines) + "\n"


class Site:
    """A directory that acts as site-packages for throwaway distributions."""

    source = staticmethod(plugin_source)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.modules: list[str] = []
        path.mkdir(parents=True, exist_ok=True)

    def add(
        self,
        dist: str,
        entry_points: dict[str, str],
        code: dict[str, str],
        *,
        version: str = "1.0",
        requires: tuple[str, ...] = (CORE_RANGE,),
    ) -> Site:
        """One distribution: its modules, METADATA (with Requires-Dist) and entry_points.txt."""
        for module, source in code.items():
            (self.path / f"{module}.py").write_text(source, encoding="utf-8")
            self.modules.append(module)
        info = self.path / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        meta = [
            "Metadata-Version: 2.1",
            f"Name: {dist}",
            f"Version: {version}",
            *(f"Requires-Dist: {r}" for r in requires),
        ]
        (info / "METADATA").write_text("\n".join(meta) + "\n", encoding="utf-8")
        eps = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
        (info / "entry_points.txt").write_text(f"[agentkit]\n{eps}", encoding="utf-8")
        return self

    def plugin(self, name: str, dist: str | None = None, **kwargs: object) -> Site:
        """Shorthand: distribution ``dist`` (``agentkit-test-<name>``), one plugin ``name``."""
        version = str(kwargs.pop("version", "1.0"))
        requires = kwargs.pop("requires", (CORE_RANGE,))
        module = str(kwargs.pop("module", f"akt_{name}".replace("-", "_")))
        source = plugin_source(name, **kwargs)  # type: ignore[arg-type]
        return self.add(
            dist or f"agentkit-test-{name}",
            {name: module},
            {module: source},
            version=version,
            requires=requires,  # type: ignore[arg-type]
        )


@pytest.fixture
def make_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """``make_site("a")`` -> a :class:`Site` on ``sys.path``; its modules are dropped after."""
    sites: list[Site] = []
    monkeypatch.chdir(tmp_path)
    for var in ("LOAD_PLUGINS", "DISABLE_PLUGINS", "STRICT_PLUGINS", "CONFIG"):
        monkeypatch.delenv(f"AGENTKIT_{var}", raising=False)

    def make(name: str = "site") -> Site:
        site = Site(tmp_path / name)
        monkeypatch.syspath_prepend(str(site.path))
        sites.append(site)
        return site

    yield make
    for site in sites:
        for module in site.modules:
            sys.modules.pop(module, None)


@pytest.fixture
def cli() -> object:
    """Run ``agentkit`` in a subprocess: ``cli("plugins", "list", pythonpath=[...], **env)``."""
    return run_cli


def run_cli(
    *args: str,
    pythonpath: list[Path] = (),  # type: ignore[assignment]
    cwd: Path | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """``agentkit ARGS`` in a fresh interpreter with ``pythonpath`` in front and ``env`` set."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKIT_")}
    full["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "agentkit_core", *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd,
        timeout=60,
        check=False,
    )


def run_main(
    *args: str,
    env: dict[str, str | None] | None = None,
    stdin: str | None = None,
    cwd: Path | None = None,
    pythonpath: list[Path] = (),  # type: ignore[assignment]
) -> subprocess.CompletedProcess[str]:
    """``agentkit ARGS`` in this process, as ``python -m agentkit_core ARGS`` would run it.

    ``main(ARGS)``, whose return value that process exits with, on a fresh plugin manager (the
    process-wide one is left alone); ``env`` on top of this process's environment (None unsets
    a variable), ``stdin`` as its input, ``cwd`` its directory, ``pythonpath`` first on
    sys.path, Python's default warning filters (not pytest's), its stdout and stderr captured;
    all of it restored after.
    For tests of what a command does: ~30 ms of CPU against ~0.4 s for a subprocess. Tests of
    what the shell sees (usage errors, tracebacks, signals, what a process imports) keep
    :func:`run_cli`.
    """
    from agentkit_core import PluginManager
    from agentkit_core.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        for name, value in (env or {}).items():
            if value is None:
                patch.delenv(name, raising=False)
            else:
                patch.setenv(name, value)
        if cwd is not None:
            patch.chdir(cwd)
        patch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        # a copy: --tools puts the working directory on it
        patch.setattr(sys, "path", [*map(str, pythonpath), *sys.path])
        warnings.resetwarnings()
        for quiet in (
            DeprecationWarning,
            PendingDeprecationWarning,
            ImportWarning,
            ResourceWarning,
        ):
            warnings.simplefilter("ignore", quiet)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args), manager=PluginManager())
    return subprocess.CompletedProcess(["agentkit", *args], code, out.getvalue(), err.getvalue())


def main_cli(
    *args: str,
    pythonpath: list[Path] = (),  # type: ignore[assignment]
    cwd: Path | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` in this process (:func:`run_main`): no ``AGENTKIT_*`` but ``env``."""
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("AGENTKIT_")}
    return run_main(*args, env={**unset, **env}, cwd=cwd, pythonpath=pythonpath)


# ---------------------------------------------------------------------- wheels and fresh venvs


class Venv:
    """A fresh virtualenv outside the repository, filled only from the wheelhouse, offline.

    ``env`` is a clean environment for its commands: its ``bin`` first on PATH, pip pointed at
    the wheelhouse with no index and no user configuration, no ``AGENTKIT_*`` or ``PYTHON*``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bin = path / "bin"
        self.python = self.bin / "python"
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AGENTKIT_", "PYTHON", "PIP_", "PYTEST_", "VIRTUAL_ENV"))
        }
        self.env = {
            **keep,
            "PATH": f"{self.bin}{os.pathsep}{keep.get('PATH', '')}",
            "VIRTUAL_ENV": str(path),
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(WHEELS),
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }

    @classmethod
    def create(cls, path: Path) -> Venv:
        """A new, empty venv at ``path`` (no pip in it: this process's pip installs into it)."""
        venv.EnvBuilder(with_pip=False).create(path)
        return cls(path)

    def pip_install(self, *args: str) -> None:
        """``pip install ARGS`` into this venv with this process's pip; offline."""
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(self.python), "install", "-q", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=600,
        )
        assert proc.returncode == 0, f"pip install {' '.join(args)} failed:\n{proc.stderr}"

    def run(
        self, *command: str | Path, cwd: Path, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        """Run ``command`` (a program of the venv's ``bin`` by name) in ``cwd``."""
        return subprocess.run(
            [str(c) for c in command],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=cwd,
            timeout=timeout,
        )


class Wheelhouse:
    """The wheels .ci/build-wheels built from this checkout, and what each must hold."""

    path = WHEELS

    @staticmethod
    def sources() -> list[Path]:
        """Every distribution built from this checkout: core, each plugin, the sample."""
        plugins = sorted(p.parent for p in ROOT.glob("plugins/*/pyproject.toml"))
        return [ROOT, *plugins, ROOT / "tests" / "sample_plugin"]

    @staticmethod
    def packages(source: Path) -> tuple[str, list[str]]:
        """A source tree's distribution name and the package directories its wheel holds."""
        data = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
        packages = data["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
        return data["project"]["name"], list(packages)

    def files(self, source: Path) -> list[Path]:
        """The files a wheel of ``source`` must hold (code and data; no caches)."""
        return [
            f
            for package in self.packages(source)[1]
            for f in sorted((source / package).rglob("*"))
            if f.is_file() and "__pycache__" not in f.parts
        ]

    def wheel(self, source: Path) -> Path:
        """The wheel built from ``source``; fails naming the command to run when it is missing.

        A wheel older than its sources fails too: a test would otherwise check stale code.
        """
        dist = self.packages(source)[0]
        found = sorted(WHEELS.glob(f"{dist.replace('-', '_')}-*.whl"))
        if not found:
            pytest.fail(f"no wheel of {dist} in {WHEELS}; build the wheelhouse: {BUILD_WHEELS}")
        newest = max(f.stat().st_mtime for f in [source / "pyproject.toml", *self.files(source)])
        if found[-1].stat().st_mtime < newest:
            pytest.fail(f"{found[-1].name} is older than its sources; rebuild: {BUILD_WHEELS}")
        return found[-1]

    def venv(self, path: Path, *wanted: Path | str) -> Venv:
        """A fresh venv at ``path`` with what is ``wanted``, and what that depends on.

        A Path is a source tree, installed from its wheel; a string is a requirement
        (``"/path/to.whl[testing]"``) pip resolves in the wheelhouse.
        """
        env = Venv.create(path)
        if wanted:
            env.pip_install(*(str(self.wheel(w)) if isinstance(w, Path) else w for w in wanted))
        return env

    def installed(self) -> Venv:
        """.ci/wheel-venv, which .ci/install-wheels fills from the wheelhouse; fails if stale."""
        path = WHEEL_VENV
        marker = path / "bin" / "agentkit"
        if not marker.exists():
            pytest.fail(f"{path} is missing; install it: {INSTALL_WHEELS}")
        if marker.stat().st_mtime < self.wheel(ROOT).stat().st_mtime:
            pytest.fail(f"{path} is older than the wheels; reinstall it: {INSTALL_WHEELS}")
        return Venv(path)


@pytest.fixture(scope="session")
def wheelhouse() -> Wheelhouse:
    """The wheelhouse, checked to hold an up-to-date core wheel."""
    house = Wheelhouse()
    house.wheel(ROOT)
    return house
