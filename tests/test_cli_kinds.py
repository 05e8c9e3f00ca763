"""The plugin kinds the docs list are the ones ``agentkit plugins new --help`` offers.

docs/cli.md has them as a table (kind and summary), docs/plugins.md and the tutorial as a list
of names, each between ``<!-- plugin kinds -->`` and ``<!-- /plugin kinds -->``.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from agentkit_core.cli._scaffold import KINDS
from tests.conftest import run_cli

DOCS = Path(__file__).resolve().parent.parent / "docs"
MARKED = re.compile(r"<!--\s*plugin\s+kinds\b.*?-->(.*?)<!--\s*/plugin\s+kinds\s*-->", re.S)


def marked(page: str) -> str:
    (found,) = MARKED.findall((DOCS / page).read_text(encoding="utf-8"))
    return found


def help_kinds() -> list[tuple[str, str]]:
    """(kind, summary) as ``agentkit plugins new --help`` prints them."""
    out = run_cli("plugins", "new", "--help")
    assert out.returncode == 0, out.stderr
    listed = out.stdout.split("kinds:\n", 1)[1].split("\n\n", 1)[0]
    return [tuple(line.split(None, 1)) for line in listed.splitlines()]  # type: ignore[misc]


def test_the_help_lists_every_kind_with_a_gap_before_its_summary() -> None:
    kinds = help_kinds()
    assert [kind for kind, _ in kinds] == list(KINDS)
    assert all(summary == KINDS[k].summary.replace("$name", "NAME") for k, summary in kinds)


def test_the_cli_page_has_the_helps_table() -> None:
    rows = re.findall(r"^\| `([^`]+)` \| (.+) \|$", marked("cli.md"), re.M)
    assert [(kind, html.unescape(summary)) for kind, summary in rows] == help_kinds()


@pytest.mark.parametrize("page", ["plugins.md", "tutorial-plugin.md"])
def test_the_guides_name_every_kind_in_the_helps_order(page: str) -> None:
    assert re.findall(r"`([^`]+)`", marked(page)) == list(KINDS)
