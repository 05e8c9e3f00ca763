"""Fixtures that build throwaway plugin distributions: real ``.dist-info`` dirs on a path entry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

CORE_RANGE = "agentkit-core>=0.1,<1"


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
