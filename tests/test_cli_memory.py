"""``agentkit memory ...`` on real file and SQLite memory stores.

The commands run in this process through ``main`` (:func:`tests.conftest.run_main`), the
entry point ``python -m agentkit_core`` exits with; one test runs them in real subprocesses.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit_core import open_memory
from tests.conftest import run_main


def agentkit(
    *args: str, env: dict[str, str] | None = None, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_main("memory", *args, env=env, stdin=stdin, cwd=cwd)


def in_a_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentkit_core", "memory", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentkit: error: "), out.stderr
    return lines[0]


@pytest.fixture(params=["file", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return f"file://{tmp_path}/mem" if request.param == "file" else f"sqlite:///{tmp_path}/m.db"


def ok(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 0, (out.stdout, out.stderr)
    return out.stdout


def test_edit_list_show_forget(url: str) -> None:
    store = ["--store", url]
    assert ok(agentkit("edit", *store, "--scope", "user", "Tabs", "--body", "Tabs only.")) == (
        "saved 'Tabs' in scope 'user' (version 1)\n"
    )
    ok(agentkit("edit", *store, "--scope", "project", "Deploy", "--file", "-", stdin="make\n"))
    assert ok(agentkit("list", *store)) == "project  1 entry\nuser  1 entry\n"
    assert json.loads(ok(agentkit("list", *store, "--json"))) == {"project": 1, "user": 1}
    [line] = ok(agentkit("list", *store, "--scope", "user")).splitlines()
    assert line.startswith("Tabs  v1  20") and line.endswith("  -")
    shown = json.loads(ok(agentkit("show", *store, "--scope", "user", "Tabs", "--json")))
    assert (shown["title"], shown["version"], shown["body"]) == ("Tabs", 1, "Tabs only.")
    assert ok(agentkit("show", *store, "--scope", "user", "Tabs")).endswith("\n\nTabs only.\n")
    again = agentkit("edit", *store, "--scope", "user", "Tabs", "--body", "Tabs only.")
    assert ok(again) == "'Tabs' unchanged (version 1)\n"
    ok(agentkit("edit", *store, "--scope", "user", "Tabs", "--body", "Tabs, width 4."))
    assert (
        json.loads(ok(agentkit("show", *store, "--scope", "user", "Tabs", "--json")))["version"]
        == 2
    )
    assert ok(agentkit("forget", *store, "--scope", "user", "Tabs")) == (
        "forgot 'Tabs' in scope 'user'\n"
    )
    assert "no entry 'Tabs'" in error(agentkit("show", *store, "--scope", "user", "Tabs"))
    assert "no entry 'Tabs'" in error(agentkit("forget", *store, "--scope", "user", "Tabs"))


def test_edit_in_the_editor_is_based_on_the_version_it_read(tmp_path: Path) -> None:
    url = f"file://{tmp_path}/mem"
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text() + 'Edited by hand.\\n')\n"
    )
    env = {"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""}
    ok(agentkit("edit", "--store", url, "--scope", "user", "k", "--body", "First."))
    ok(agentkit("edit", "--store", url, "--scope", "user", "k", env=env))
    shown = json.loads(ok(agentkit("show", "--store", url, "--scope", "user", "k", "--json")))
    assert (shown["body"], shown["version"]) == ("First.\nEdited by hand.", 2)
    # a run writes while the person edits: the person's edit is refused, naming the text now
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import asyncio, sys, pathlib\n"
        "from agentkit_core import PluginManager, open_memory\n"
        "async def run():\n"
        f"    async with await open_memory({url!r}, manager=PluginManager()) as m:\n"
        "        await m.save('user', 'k', 'A run wrote this.', base=2)\n"
        "asyncio.run(run())\n"
        "pathlib.Path(sys.argv[1]).write_text('The person wrote this.')\n"
    )
    out = agentkit(
        "edit", "--store", url, "--scope", "user", "k", env={"EDITOR": f"{sys.executable} {slow}"}
    )
    line = error(out)
    assert "based on version 2" in line and "at version 3" in line
    assert out.stdout == "The person wrote this.\n"  # not lost
    assert (
        json.loads(ok(agentkit("show", "--store", url, "--scope", "user", "k", "--json")))["body"]
        == "A run wrote this."
    )
    failing = {"EDITOR": f"{sys.executable} -c 'raise SystemExit(3)'", "VISUAL": ""}
    assert "exited with 3" in error(
        agentkit("edit", "--store", url, "--scope", "user", "k", env=failing)
    )
    assert "set VISUAL or EDITOR" in error(
        agentkit("edit", "--store", url, "--scope", "user", "k", env={"EDITOR": "", "VISUAL": ""})
    )


def test_bad_input_is_one_line_naming_it(tmp_path: Path) -> None:
    # in real processes: what the shell sees is exit code 2 and one line, no traceback
    url = f"file://{tmp_path}/mem"
    assert "'User' is not a scope name" in error(
        in_a_process("list", "--store", url, "--scope", "User")
    )
    assert "over the bound of 5 bytes" in error(
        in_a_process(
            "edit",
            "--store",
            url,
            "--scope",
            "u",
            "k",
            "--body",
            "too long",
            "--max-entry-bytes",
            "5",
        )
    )
    assert "body is empty" in error(
        in_a_process("edit", "--store", url, "--scope", "u", "k", "--body", " ")
    )
    assert "installed schemes" in error(in_a_process("list", "--store", "nope://x"))


def test_an_unreadable_entry_is_listed_and_forgotten(tmp_path: Path) -> None:
    url = f"file://{tmp_path}/mem"
    ok(agentkit("edit", "--store", url, "--scope", "user", "good", "--body", "fine"))
    bad = tmp_path / "mem" / "user" / "bad.md"
    bad.write_text("---\nversion: 1\nno closing fence")
    out = agentkit("list", "--store", url, "--scope", "user")
    assert out.returncode == 2 and out.stdout.splitlines()[-1] == f"!! {bad}: unreadable"
    assert "no closing '---'" in out.stderr
    rows = json.loads(agentkit("list", "--store", url, "--scope", "user", "--json").stdout)
    assert [r.get("title") or r["corrupt"] for r in rows] == ["good", str(bad)]
    assert ok(agentkit("forget", "--store", url, "--scope", "user", "bad"))
    assert not bad.exists()


def test_the_store_defaults_to_the_environment_then_the_kit_s_default(tmp_path: Path, pm) -> None:
    env = {"AGENTKIT_MEMORY_STORE": f"file://{tmp_path}/from-env"}
    ok(agentkit("edit", "--scope", "user", "k", "--body", "x", env=env))
    assert (tmp_path / "from-env" / "user" / "k.md").is_file()
    ok(
        agentkit(
            "edit",
            "--scope",
            "user",
            "k",
            "--body",
            "x",
            env={"AGENTKIT_MEMORY_STORE": ""},
            cwd=tmp_path,
        )
    )
    assert (tmp_path / ".agentkit" / "memory" / "user" / "k.md").is_file()

    async def read() -> str:
        async with await open_memory(f"file://{tmp_path}/.agentkit/memory", manager=pm) as memory:
            found = await memory.get("user", "k")
            assert found is not None
            return found.body

    assert asyncio.run(read()) == "x"


def said(out: subprocess.CompletedProcess[str]) -> list[str]:
    """The lines on stderr, but a plugin's load warning (another distribution's business)."""
    return [line for line in out.stderr.splitlines() if not line.startswith("agentkit: warning")]


def test_an_empty_store_or_scope_is_said_on_stderr_with_how_to_fill_it(url: str) -> None:
    store = ["--store", url]
    empty = agentkit("list", *store)
    assert ok(empty) == ""  # stdout stays empty for scripts
    assert said(empty) == [
        f"agentkit: no entries in {url}; agentkit memory edit --scope SCOPE TITLE writes one"
    ]
    scope = agentkit("list", *store, "--scope", "user")
    assert ok(scope) == ""
    assert said(scope) == [
        f"agentkit: no entries in scope 'user' of {url}; agentkit memory edit --scope user "
        "TITLE writes one"
    ]
    # --json says it with an empty value
    quiet = agentkit("list", *store, "--json")
    assert json.loads(ok(quiet)) == {} and said(quiet) == []
    ok(agentkit("edit", *store, "--scope", "user", "Tabs", "--body", "Tabs only."))
    assert said(agentkit("list", *store, "--scope", "project"))[0].startswith(
        "agentkit: no entries in scope 'project'"
    )
    assert said(agentkit("list", *store)) == []


@pytest.mark.parametrize("name", ["missing.md", "."])
def test_an_unreadable_file_is_one_line_naming_it(url: str, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    line = error(agentkit("edit", "--store", url, "--scope", "user", "Tabs", "--file", str(path)))
    assert f"cannot read --file {str(path)!r}: " in line and "'Tabs' was not saved" in line
    assert "unexpected" not in line and "Error" not in line
    assert json.loads(ok(agentkit("list", "--store", url, "--json"))) == {}  # nothing written
