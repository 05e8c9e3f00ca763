"""``agentkit sessions ...`` on a real SQLite session store.

The commands run in this process through ``main`` (:func:`tests.conftest.run_main`), the
entry point ``python -m agentkit_core`` exits with; the bad-input test runs real subprocesses.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core import open_sessions
from agentkit_core.plugin import NewItem
from agentkit_core.plugin import SessionItem
from tests.conftest import run_main

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


def agentkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_main(*args, env=env)


def in_a_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentkit_core", *args], capture_output=True, text=True, timeout=60
    )


def one_error_line(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentkit: error: "), out.stderr
    return lines[0]


class Store:
    """A SQLite session store with one conversation and a fork of it."""

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "sessions.db"
        self.url = f"sqlite:///{self.path}"
        self.items: list[SessionItem] = []

    async def fill(self) -> None:
        async with await open_sessions(self.url, manager=PM) as sessions:
            head = await sessions.create({"cwd": "/srv", "model": "m1"}, session_id="talk")
            call = ToolCall("c1", "weather", '{"city": "Paris"}')
            self.items = [head] + await sessions.append(
                "talk",
                head.id,
                [
                    NewItem("user", {"text": "Weather in Paris?"}),
                    NewItem("response", {"message": Message.assistant("Checking.", [call])}),
                    NewItem("verdict", {"decision": "allow", "plugin": "policy", "rule": "r3"}),
                    NewItem("tool_result", {"content": "18°C"}),
                    NewItem("fold", {"folded": 4, "summary": "asked about the weather"}),
                ],
            )
            await sessions.fork("talk", at=self.items[1].id, new_id="branch")

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return agentkit("sessions", *args, "--store", self.url)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    made = Store(tmp_path)
    asyncio.run(made.fill())
    return made


def test_an_empty_store_is_said_on_stderr(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    out = agentkit("sessions", "list", "--store", url)
    assert out.returncode == 0 and out.stdout == ""
    assert f"agentkit: no sessions in {url}; agentkit run TASK --session {url} records one\n" in (
        out.stderr
    )
    quiet = agentkit("sessions", "list", "--store", url, "--json")
    assert json.loads(quiet.stdout) == [] and "no sessions" not in quiet.stderr


def test_list_prints_one_session_a_line_id_first(store: Store) -> None:
    out = store.run("list")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["talk", "branch"]
    assert "6 items  model=m1  cwd=/srv" in lines[0]
    assert "1 item  model=m1" in lines[1] and lines[1].endswith("fork of talk")
    listed: list[dict[str, Any]] = json.loads(store.run("list", "--json").stdout)
    assert [s["id"] for s in listed] == ["talk", "branch"]
    assert listed[0]["items"] == 6 and listed[0]["leaf"] == store.items[-1].id
    assert listed[0]["base"] is None and listed[0]["header"]["model"] == "m1"
    assert listed[1]["base"] == {"session": "talk", "item": store.items[1].id}


def test_show_is_a_readable_transcript_with_verdicts_and_folds(store: Store) -> None:
    out = store.run("show", "talk")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("session talk  (sqlite:///") and "6 items of its own" in lines[0]
    body = lines[1:]
    assert [line.split()[0] for line in body] == [i.id for i in store.items]
    assert "user" in body[1] and "Weather in Paris?" in body[1]
    assert 'assistant: Checking. weather({"city": "Paris"})' in body[2]
    assert '"decision":"allow"' in body[3] and '"rule":"r3"' in body[3]
    assert "18°C" in body[4]
    assert "fold" in body[5] and "asked about the weather" in body[5]
    fork = store.run("show", "branch").stdout.splitlines()
    assert fork[1] == f"forked from session talk at item {store.items[1].id}"
    assert [line[:2] for line in fork[2:]] == ["| ", "| ", "  "]  # | : from the base session


def test_show_json_and_export_give_the_raw_items(store: Store) -> None:
    shown = json.loads(store.run("show", "branch", "--json").stdout)
    exported = [json.loads(line) for line in store.run("export", "branch").stdout.splitlines()]
    assert shown == exported
    assert [r["session"] for r in exported] == ["talk", "talk", "branch"]
    assert [r["kind"] for r in exported] == ["header", "user", "header"]
    assert exported[1] == {
        "session": "talk",
        "id": store.items[1].id,
        "parent": store.items[0].id,
        "kind": "user",
        "time": store.items[1].created_at,
        "body": {"text": "Weather in Paris?"},
    }
    lines = store.run("export", "talk").stdout.splitlines()
    assert len(lines) == 6
    assert json.loads(lines[2])["body"]["message"]["__agentkit__"] == "message"


def test_fork_prints_the_new_id(store: Store) -> None:
    out = store.run("fork", "talk", "--at", store.items[3].id)
    assert out.returncode == 0, out.stderr
    new = out.stdout.strip()
    exported = [json.loads(line) for line in store.run("export", new).stdout.splitlines()]
    assert [r["id"] for r in exported[:4]] == [i.id for i in store.items[:4]]
    assert exported[4]["kind"] == "header" and exported[4]["session"] == new
    at_leaf = store.run("fork", "talk").stdout.strip()
    last = json.loads(store.run("list", "--json").stdout)[-1]
    assert (last["id"], last["base"]) == (at_leaf, {"session": "talk", "item": store.items[-1].id})


def test_bad_input_is_one_line_and_exit_2(store: Store, tmp_path: Path) -> None:
    # in real processes: what the shell sees is exit code 2 and one line, no traceback
    line = one_error_line(in_a_process("sessions", "show", "nope", "--store", store.url))
    assert f"no session 'nope' in {store.url}" in line
    line = one_error_line(
        in_a_process("sessions", "fork", "branch", "--at", store.items[1].id, "--store", store.url)
    )
    assert "belongs to session 'talk'" in line
    assert "no session store given" in one_error_line(in_a_process("sessions", "list"))
    line = one_error_line(in_a_process("sessions", "list", "--store", "redis://u:hunter2@h/0"))
    assert "installed schemes: " in line and "sqlite" in line and "hunter2" not in line
    with socket.socket() as sock:  # bound, never listening: a connect is refused for sure
        sock.bind(("127.0.0.1", 0))
        url = f"postgresql://u:hunter2@127.0.0.1:{sock.getsockname()[1]}/db"
        line = one_error_line(in_a_process("sessions", "list", "--store", url))
    assert "cannot connect" in line and "u:***@127.0.0.1" in line and "hunter2" not in line


def test_the_store_can_come_from_the_environment(store: Store) -> None:
    out = agentkit("sessions", "list", env={"AGENTKIT_SESSION_STORE": store.url})
    assert out.returncode == 0 and out.stdout.split()[0] == "talk"


def test_a_corrupt_item_is_shown_as_such_and_the_rest_still_printed(store: Store) -> None:
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute(
            "UPDATE agentkit_session_items SET body = '{\"cut' WHERE id = ?", (store.items[2].id,)
        )
    conn.close()
    out = store.run("show", "talk")
    line = one_error_line(out)
    assert f"item {store.items[2].id!r} of session 'talk' is corrupt" in line
    lines = out.stdout.splitlines()
    assert len(lines) == 7 and "!! item" in lines[3] and "18°C" in lines[5]
    out = store.run("export", "talk")
    one_error_line(out)
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(records) == 6
    assert records[2]["body"] is None and records[2]["body_text"] == '{"cut'
    assert "is corrupt" in records[2]["corrupt"]
    assert records[4]["body"] == {"content": "18°C"}
    assert store.run("list").returncode == 0  # the header is fine: listing is unaffected
