"""Every distribution declares the Pythons tox tests it on, and no others (issue 35).

tox.ini's matrix (``pyXY`` environments, and the tests environment's ``base_python``) is what
CI runs; each pyproject.toml's ``requires-python`` and ``Programming Language`` classifiers must
name exactly those versions, less the ones a distribution's own dependencies leave out.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
PYPROJECTS = [ROOT / "pyproject.toml", *sorted(ROOT.glob("plugins/*/pyproject.toml"))]
CLASSIFIER = re.compile(r"Programming Language :: Python :: (3\.\d+)$")


def versions_tox_runs() -> list[str]:
    """The Python versions tox.ini runs: ``pyXY`` in env_list, and each ``base_python``."""
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    found = set()
    for env in tox["tox"]["env_list"].replace(",", " ").split():
        if match := re.fullmatch(r"py3(\d+)", env):
            found.add(f"3.{match[1]}")
        section = tox[f"testenv:{env}"] if tox.has_section(f"testenv:{env}") else {}
        if match := re.fullmatch(r"python(3\.\d+)", section.get("base_python", "")):
            found.add(match[1])
    return sorted(found, key=lambda v: tuple(map(int, v.split("."))))


def declared(path: Path) -> tuple[str, list[str]]:
    project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
    versions = [m[1] for c in project.get("classifiers", []) if (m := CLASSIFIER.match(c))]
    return project.get("requires-python", ""), versions


def test_tox_tests_three_versions() -> None:
    assert versions_tox_runs() == ["3.11", "3.12", "3.13"]


@pytest.mark.parametrize("path", PYPROJECTS, ids=lambda p: p.parent.name or "core")
def test_classifiers_name_each_tested_version_requires_python_admits(path: Path) -> None:
    requires, classified = declared(path)
    where = path.relative_to(ROOT)
    assert requires, f"{where}: no requires-python; declare the versions tox.ini tests"
    admitted = [v for v in versions_tox_runs() if SpecifierSet(requires).contains(f"{v}.0")]
    assert admitted, f"{where}: requires-python {requires} admits none of {versions_tox_runs()}"
    assert classified == admitted, (
        f"{where}: classifiers name Python {classified}, but requires-python {requires} admits "
        f"{admitted} of the versions tox.ini tests; list exactly those"
    )
    # nothing older than the oldest version tested: that would be a promise nothing checks
    older = f"3.{int(admitted[0].split('.')[1]) - 1}.99"
    assert not SpecifierSet(requires).contains(older), (
        f"{where}: requires-python {requires} admits Python {older}, which tox.ini does not test"
    )
