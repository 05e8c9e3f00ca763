"""guardrail-web builds its pinned transport on public httpx/httpcore API only, so it sets no
upper bound on httpx (the bound the old private ``AsyncHTTPTransport._pool`` assignment forced)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement

PLUGIN = Path(__file__).resolve().parent.parent / "plugins" / "guardrail-web"


def test_httpx_has_no_upper_bound() -> None:
    meta = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (httpx,) = [Requirement(r) for r in meta["dependencies"] if Requirement(r).name == "httpx"]
    assert not [s for s in httpx.specifier if s.operator in ("<", "<=", "==", "~=", "===")], httpx
