"""What the command line writes to a terminal is shown, never obeyed: a transcript holding
escape sequences, a carriage return or a bidirectional override, through a real
pseudo-terminal and through a pipe."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pexpect
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import open_sessions
from agentkit_core.cli._terminal import shown
from agentkit_core.testing import ScriptedModel

ROOT = Path(__file__).resolve().parent.parent
#: What a page a tool fetched could have the model say: set the clipboard, retitle the
#: window, overwrite the line, reverse what follows.
HOSTILE = "copy \x1b]52;c;cm0gLXJmIC8=\x07 done\x1b]0;title\x07\roverwritten \u202eexe.txt\x9b2J"
ACTED_ON = {*map(chr, range(0x20)), "\x7f", *map(chr, range(0x80, 0xA0))} - {"\t", "\n"}
ACTED_ON |= {"\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F))}
ACTED_ON |= set(map(chr, range(0x2066, 0x206A)))


@given(st.text())
def test_shown_text_holds_nothing_a_terminal_acts_on_and_loses_nothing_else(text: str) -> None:
    out = shown(text)
    assert not ACTED_ON & set(out)
    escaped = (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" for c in text)
    assert out == "".join(e if c in ACTED_ON else c for c, e in zip(text, escaped, strict=True))


def test_each_character_acted_on_is_written_as_its_escape() -> None:
    assert shown("\x1b[2J\r\n\t\u202e\x9b") == "\\x1b[2J\\x0d\n\t\\u202e\\x9b"


def recorded(tmp_path: Path) -> tuple[str, str]:
    """A session whose answer holds HOSTILE; its store's URL and its id."""
    url = f"sqlite:///{tmp_path / 'sessions.db'}"

    async def record() -> str:
        async with await open_sessions(url, manager=PluginManager()) as sessions:
            recorder = await Recorder.start(sessions)
            agent = Agent("a", model=ScriptedModel([HOSTILE]))
            ctx = agent.new_context()
            ctx.recorder = recorder
            await agent.run("look it up", ctx=ctx)
            return recorder.session_id

    return url, asyncio.run(record())


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKIT_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_a_transcript_on_a_terminal_is_shown_and_in_a_pipe_is_exact(tmp_path: Path) -> None:
    url, session = recorded(tmp_path)
    args = ["-m", "agentkit_core", "sessions", "show", "--store", url, session]
    child = pexpect.spawn(sys.executable, args, env=environment(), timeout=60)
    child.expect(pexpect.EOF)
    on_terminal = child.before.decode("utf-8")
    for escape in ("\\x1b]52;c;cm0gLXJmIC8=\\x07", "\\x1b]0;title\\x07", "\\u202e", "\\x9b2J"):
        assert escape in on_terminal
    assert not ACTED_ON - {"\r"} & set(on_terminal)  # the pty itself writes \r\n line ends
    assert "\r" not in on_terminal.replace("\r\n", "")

    piped = subprocess.run(
        [sys.executable, *args], env=environment(), capture_output=True, text=True, check=True
    )
    for raw in ("\x1b]52;c;cm0gLXJmIC8=\x07", "\x1b]0;title\x07", "\u202e", "\x9b2J"):
        assert raw in piped.stdout
