"""``agentkit chat`` driven through a real pseudo-terminal (pexpect), as a person types."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.chat_models import CHAT_PLUGIN
from tests.conftest import run_cli
from tests.view_runs import POLICY_PLUGIN

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("--tools", "tests.view_runs:CLI_TOOLS")
PROMPT = "you> "
SESSION = re.compile(r"agentkit: session ([0-9a-f]+)")


@pytest.fixture
def site(make_site: Any) -> Path:
    """The chat model (``chat:NAME``) and a plugin asking a person before every transfer."""
    site = make_site("chat")
    site.add("agentkit-test-chat", {"chat": "akt_chat"}, {"akt_chat": CHAT_PLUGIN})
    site.add("agentkit-test-policy", {"policy": "akt_policy"}, {"akt_policy": POLICY_PLUGIN})
    return Path(site.path)


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'sessions.db'}"


def chat(tmp_path: Path, site: Path | None, *args: str, config: Path | None = None) -> Any:
    """``agentkit chat ARGS`` on a pseudo-terminal, its state directory under ``tmp_path``.

    ``config``: the project file (``AGENTKIT_CONFIG``); none read otherwise.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKIT_")}
    if config is not None:
        env["AGENTKIT_CONFIG"] = str(config)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (site, ROOT) if p is not None)
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agentkit_core", "chat", *args],
        cwd=str(ROOT),
        env=env,
        encoding="utf-8",
        timeout=60,  # a loaded machine starts Python slowly
        dimensions=(24, 200),
    )
    child.expect(SESSION)
    child.session = child.match.group(1)
    child.expect_exact(PROMPT)
    return child


def say(child: Any, line: str, *expected: str) -> str:
    """Type ``line``; what the chat printed up to its next prompt, holding each ``expected``."""
    child.sendline(line)
    child.expect_exact(PROMPT)
    shown = child.before or ""
    for text in expected:
        assert text in shown, shown
    return shown


def leave(child: Any) -> None:
    """Ctrl-D: the chat ends, exit code 0."""
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before


def test_a_conversation_with_tools_usage_and_a_fork(tmp_path: Path, site: Path, store: str) -> None:
    child = chat(tmp_path, site, "--model", "chat:a", *TOOLS, "--session", store)
    say(child, "hello", "echo 1: hello")
    shown = say(child, "look ann", "done after lookup")
    assert 'tool lookup {"name": "ann"}' in shown and "-> lookup: " in shown
    say(child, "/tools", "lookup  (tools)", "transfer  (tools)")
    usage = say(child, "/usage")
    assert re.search(r"usage: \d+ in / \d+ out tokens, 3 requests in this chat", usage), usage
    forked = say(child, "/fork", f"a fork of {child.session}")
    fork = re.findall(r"session ([0-9a-f]+), a fork", forked)[0]
    say(child, "and then", "echo 3: and then")  # the fork holds the conversation so far
    say(child, "/nope", "unknown command /nope")
    leave(child)
    # the original session did not move; the fork has the last message
    for session, count in ((child.session, 2), (fork, 3)):
        proc = run_cli("sessions", "export", session, "--store", store, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count('"kind": "user"') == count, proc.stdout


def test_the_builtin_test_model_and_resume(tmp_path: Path, store: str) -> None:
    child = chat(tmp_path, None, "--model", "test", *TOOLS, "--session", store)
    say(child, "hi", "tool transfer", "TestModel answer after 2 tool result(s)")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    again = chat(tmp_path, None, "--model", "test", "--session", store, "--resume", child.session)
    assert again.session == child.session
    say(again, "more", "TestModel answer after 2 tool result(s)")
    leave(again)


def test_approve_and_deny_a_held_call(tmp_path: Path, site: Path, store: str) -> None:
    child = chat(tmp_path, site, "--model", "chat:b", *TOOLS, "--session", store)
    say(child, "/approve", "no call is waiting for approval")
    say(child, "pay 5", "waiting for approval: call_pay_5 transfer", "/approve or /deny")
    shown = say(child, "/approve", "call call_pay_5 approved by person", "done after transfer")
    assert "-> transfer: " in shown and "(error)" not in shown
    assert shown.count("done after transfer") == 1  # streamed, not printed again
    say(child, "pay 7", "waiting for approval: call_pay_7 transfer")
    leave(child)
    # the held call is still waiting in the session: a new chat on it answers it
    resume = ("--session", store, "--resume", child.session)
    again = chat(tmp_path, site, "--model", "chat:b", *TOOLS, *resume)
    assert "waiting for approval: call_pay_7 transfer" in again.before
    denied = say(again, "/deny", "call call_pay_7 refused by person")
    assert denied.count("done after transfer (error)") == 1
    leave(again)


def _policy_kit(tmp_path: Path, default: str, *rules: str) -> Path:
    """An agentkit.toml whose kit has a policy file: ``default`` and the ``rules`` given."""
    policy = tmp_path / "policy.toml"
    policy.write_text(f'default = "{default}"\n' + "".join(rules))
    config = tmp_path / "agentkit.toml"
    config.write_text(f'[kit]\npolicy = "{policy}"\n')
    return config


def test_a_call_a_hook_holds_is_answered_under_a_policy_that_allows_it(
    tmp_path: Path, site: Path, store: str
) -> None:
    # the policy allows transfers; the hook asks: a person's answer settles the hook's ask
    config = _policy_kit(tmp_path, "allow")
    child = chat(tmp_path, site, "--model", "chat:p", *TOOLS, "--session", store, config=config)
    say(child, "pay 5", "waiting for approval: call_pay_5 transfer")
    refused = ("call call_pay_5 refused by person", "done after transfer (error)")
    say(child, "/deny call_pay_5", *refused)
    say(child, "pay 6", "waiting for approval: call_pay_6 transfer")
    shown = say(child, "/approve", "call call_pay_6 approved by person", "done after transfer")
    assert "(error)" not in shown
    leave(child)


def test_a_policy_deny_outlasts_every_chat_answer(tmp_path: Path, site: Path, store: str) -> None:
    deny = '[[rules]]\nid = "no-transfer"\nverdict = "deny"\ntool = "transfer"\n'
    config = _policy_kit(tmp_path, "allow")
    child = chat(tmp_path, site, "--model", "chat:q", *TOOLS, "--session", store, config=config)
    say(child, "pay 5", "waiting for approval: call_pay_5 transfer")
    leave(child)
    # the policy now denies transfers: the held call's approval does not lift it
    config = _policy_kit(tmp_path, "allow", deny)
    resume = ("--session", store, "--resume", child.session)
    again = chat(tmp_path, site, "--model", "chat:q", *TOOLS, *resume, config=config)
    # a tool the policy denies is not offered: the approval is refused, nothing ran
    shown = say(again, "/approve call_pay_5", "has no tool 'transfer'", "or refuse the call")
    assert "-> transfer" not in shown, shown
    say(again, "/deny call_pay_5", "call call_pay_5 refused by person", "transfer (error)")
    leave(again)


def test_ctrl_c_cancels_the_turn_not_the_chat(tmp_path: Path, site: Path, store: str) -> None:
    child = chat(tmp_path, site, "--model", "chat:c", "--session", store)
    say(child, "hello", "echo 1: hello")
    child.sendline("hang")
    child.expect_exact("thinking")
    child.sendintr()
    child.expect_exact("turn cancelled")
    child.expect_exact(PROMPT)
    say(child, "still there", "echo ")  # the chat goes on
    leave(child)
    again = chat(tmp_path, site, "--model", "chat:c", "--session", store, "--resume", child.session)
    shown = say(again, "after", "echo ")
    assert re.search(r"echo [3-9]: after", shown), shown  # the session holds what came before
    leave(again)


SLOW_TOOLS = """
import asyncio
from agentkit_core import tool


@tool
async def lookup(name: str) -> str:
    \"\"\"Look a name up (``slow`` takes a minute).\"\"\"
    if name == "slow":
        await asyncio.sleep(60)
    return f"found {name}"


TOOLS = [lookup]
"""


def test_ctrl_c_mid_tool_leaves_the_session_whole(tmp_path: Path, site: Path, store: str) -> None:
    (site / "slowtools.py").write_text(SLOW_TOOLS)
    tools = ("--tools", "slowtools:TOOLS")
    child = chat(tmp_path, site, "--model", "chat:t", *tools, "--session", store)
    say(child, "hello", "echo 1: hello")
    child.sendline("look slow")
    child.expect_exact('tool lookup {"name": "slow"}')
    child.sendintr()
    child.expect_exact("turn cancelled")
    child.expect_exact(PROMPT)
    say(child, "look ann", "done after lookup")
    leave(child)
    resume = ("--session", store, "--resume", child.session)
    again = chat(tmp_path, site, "--model", "chat:t", *tools, *resume)
    # the model is sent the finished turns only: the cut one, its call without a result, is
    # left out (a provider refuses a call with no result), so it saw 3 user messages, not 4
    say(again, "after", "echo 3: after")
    leave(again)
    exported = run_cli("sessions", "export", child.session, "--store", store, pythonpath=[ROOT])
    assert exported.returncode == 0, exported.stderr
    users = [
        json.loads(line)["body"]["message"]["content"]
        for line in exported.stdout.splitlines()
        if json.loads(line)["kind"] == "user"
    ]
    assert users == ["hello", "look slow", "look ann", "after"]  # the cut turn is kept


def test_ctrl_c_at_the_prompt_and_history(tmp_path: Path) -> None:
    history = tmp_path / "history"
    child = chat(tmp_path, None, "--model", "test", "--history", str(history))
    child.sendintr()
    # A ^C landing after readline drew the prompt but before it waits for a key is only seen at
    # the next key (CPython's readline checks signals when select() is interrupted): under
    # CI's load that window was hit once. A person presses Ctrl-C again; so does the test.
    if child.expect_exact([PROMPT, pexpect.TIMEOUT], timeout=5) == 1:
        child.sendintr()
        child.expect_exact(PROMPT)  # a fresh prompt, the chat still running
    say(child, "remember me", "TestModel answer")
    leave(child)
    assert "remember me" in history.read_text()
    assert (tmp_path / "state" / "agentkit" / "sessions.db").exists()  # the default store


def test_what_was_typed_and_said_is_the_users_only(tmp_path: Path) -> None:
    # before, the state directory, the history file and the session store followed the umask
    old = os.umask(0o022)
    try:
        child = chat(tmp_path, None, "--model", "test")
        say(child, "my card is 4111 1111 1111 1111", "TestModel answer")
        leave(child)
    finally:
        os.umask(old)
    state = tmp_path / "state" / "agentkit"
    modes = {
        path.name: stat.S_IMODE(path.stat().st_mode)
        for path in (state, state / "chat_history", state / "sessions.db")
    }
    assert modes == {"agentkit": 0o700, "chat_history": 0o600, "sessions.db": 0o600}
