"""``agentkit chat``: an interactive conversation with an agent, on one recorded session.

Each message is a run of the agent at the session's leaf, streamed as ``agentkit run`` streams
(:mod:`._stream`): the answer's text on stdout as it arrives, a line per step on stderr. The
agent is the one ``agentkit run`` builds (the same kit options: ``kit_options_from_args``).
The loop reads lines synchronously (readline's editing and history) and runs each turn on one
event loop (:class:`TurnLoop`), where Ctrl-C cancels the turn's task; the run cancelled leaves
its session consistent, so the next message (or ``--resume``) goes on from it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from collections.abc import Coroutine
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

from .._errors import AgentkitError
from .._messages import Usage
from ..plugin import create_private
from ._run import add_agent_arguments
from ._run import kit_options_from_args
from ._show import StepPrinter
from ._show import _short

if TYPE_CHECKING:  # asyncio and the event model load when a chat starts, not for listing
    import asyncio

T = TypeVar("T")

PROMPT = "you> "

COMMANDS = {
    "/approve": "run the calls waiting for approval (all, or the CALL_IDs given), then go on",
    "/deny": "refuse the calls waiting for approval (all, or the CALL_IDs given), then go on",
    "/tools": "list the agent's tools",
    "/usage": "the tokens and requests of this chat so far",
    "/fork": "fork the session at its leaf and go on in the fork",
    "/exit": "leave (Ctrl-D too)",
}


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    chat = sub.add_parser(
        "chat",
        help="talk with an agent, message by message, on one session",
        description="An interactive conversation on one session, streamed. Commands: "
        + "; ".join(f"{name}: {what}" for name, what in COMMANDS.items())
        + ". Ctrl-C cancels the turn running, Ctrl-D leaves.",
    )
    add_agent_arguments(chat)
    chat.add_argument(
        "--session",
        metavar="URL",
        help="the session store to record the conversation in (default: sqlite sessions.db "
        "in the user's state directory, $XDG_STATE_HOME/agentkit)",
    )
    chat.add_argument("--resume", metavar="ID", help="continue session ID at its leaf")
    chat.add_argument(
        "--history",
        metavar="FILE",
        help="the file of the lines typed (default: chat_history in the state directory)",
    )
    chat.set_defaults(func=_chat)


def state_dir() -> Path:
    """Where agentkit keeps the user's state: ``$XDG_STATE_HOME/agentkit`` (~/.local/state)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "agentkit"


def _chat(args: argparse.Namespace) -> int:
    options = kit_options_from_args(args)
    if args.session:
        options["session"] = args.session
    else:
        create_private(state_dir(), directory=True)  # what was said, and typed: the user's only
        options["session"] = f"sqlite:///{state_dir() / 'sessions.db'}"
    if args.resume:
        options["resume"] = args.resume
    save_history = _line_editing(Path(args.history) if args.history else None)
    runner = TurnLoop()
    try:
        chat = runner.run(Chat.open(args, options))
        try:
            _loop(runner, chat)
        finally:
            save_history()
            runner.run(chat.close())
    finally:
        runner.close()
    return 0


class TurnLoop:
    """One event loop for the whole chat; Ctrl-C while it runs cancels the task it runs.

    The kit's connections live on this loop from one line to the next. The cancelled task's
    ``run`` raises KeyboardInterrupt, for the caller to go back to the prompt.
    """

    def __init__(self) -> None:
        import asyncio

        self.loop: asyncio.AbstractEventLoop = asyncio.new_event_loop()

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        import asyncio
        import signal

        task = self.loop.create_task(work)
        interrupted = False

        def cancel() -> None:
            nonlocal interrupted
            interrupted = True
            task.cancel()

        try:
            self.loop.add_signal_handler(signal.SIGINT, cancel)
        except (NotImplementedError, RuntimeError):  # no signal handlers here: plain Ctrl-C
            pass
        try:
            return self.loop.run_until_complete(task)
        except asyncio.CancelledError:
            if interrupted:
                raise KeyboardInterrupt from None
            raise
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                self.loop.remove_signal_handler(signal.SIGINT)

    def close(self) -> None:
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


def _line_editing(history: Path | None) -> Callable[[], None]:
    """Readline's line editing for ``input()``, its history read from ``history``; the saver."""
    if not sys.stdin.isatty():
        return lambda: None
    try:
        import readline
    except ImportError:  # no readline on this Python (Windows): plain lines
        return lambda: None
    path = history if history is not None else state_dir() / "chat_history"
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(1000)

    def save() -> None:
        with contextlib.suppress(OSError):
            create_private(path.parent, directory=True)
            create_private(path)
            readline.write_history_file(path)

    return save


def _loop(runner: TurnLoop, chat: Chat) -> None:
    """Read a line, act on it, until ``/exit`` or Ctrl-D; Ctrl-C cancels a turn, not the loop."""
    while True:
        try:
            line = input(PROMPT).strip()
        except EOFError:  # Ctrl-D
            print()
            return
        except KeyboardInterrupt:  # at the prompt: a fresh line, as a shell does
            print()
            continue
        if line == "/exit":
            return
        if not line:
            continue
        try:
            runner.run(chat.command(line) if line.startswith("/") else chat.turn(line))
        except KeyboardInterrupt:
            chat.printer.end_line()
            chat.say("turn cancelled; the session goes on from before it")
        except AgentkitError as exc:
            chat.printer.end_line()
            chat.say(f"error: {' '.join(str(exc).split())}")


class Chat:
    """One conversation: the kit, the agent on the session's recorder, what the chat used."""

    def __init__(self, kit: Any, exporters: list[Any]) -> None:
        from ._stream import StreamPrinter

        self.kit = kit
        self.printer = StreamPrinter()
        self.exporters = [*exporters, StepPrinter(before=self.printer.before_line)]
        self.usage = Usage()
        self.use(kit.recorder)

    @classmethod
    async def open(cls, args: argparse.Namespace, options: dict[str, Any]) -> Chat:
        from .._kit import Kit
        from .._lookup import span_exporters
        from ._run import check_file_plugin_options

        try:
            kit = await Kit.open(**options)
        except TypeError:  # a plugin's factory refused an option of the file: name it, if so
            check_file_plugin_options(options, args.kit_source, returned=True)
            raise
        chat = cls(kit, span_exporters(manager=args.plugin_manager))
        resumed = " (resumed)" if args.resume else ""
        chat.say(f"session {kit.session_id}{resumed}; /exit or Ctrl-D leaves")
        chat.tell_held()
        return chat

    def use(self, recorder: Any) -> None:
        """Go on in ``recorder``'s session, with an agent recording there."""
        from .._agent import Agent

        self.recorder = recorder
        config = replace(self.kit.config(), recorder=recorder)
        self.agent = Agent.from_config(config, exporters=self.exporters)

    async def close(self) -> None:
        for exporter in self.exporters:
            close = getattr(exporter, "close", None)
            if callable(close):
                close()
        await self.kit.aclose()

    def say(self, text: str) -> None:
        print(f"agentkit: {text}", file=sys.stderr, flush=True)

    async def turn(self, text: str) -> None:
        """The user's message: a run of the agent at the session's leaf, streamed."""
        from ._stream import stream_run

        wc = self.recorder.working_context(self.agent.model.name)
        self.show(await stream_run(self.agent.run_stream_events(text, wc=wc), self.printer))

    def show(self, result: Any) -> None:
        """A turn's end: the answer unless it streamed, the calls waiting if it suspended."""
        self.usage = self.usage + result.usage
        if result.status == "done" and not self.printer.shown(result):
            print(result.output, flush=True)
        elif result.status != "done":
            self.printer.end_line()
            self.say(f"run {result.status}: {result.stop_reason}")
        self.tell_held()

    def tell_held(self) -> None:
        held = self.recorder.state.held
        for call in held:
            self.say(f"waiting for approval: {call.id} {call.name} {_short(call.arguments)}")
        if held:
            self.say("/approve or /deny answers them (all, or the CALL_IDs named)")

    async def command(self, line: str) -> None:
        name, *words = line.split()
        if name in ("/approve", "/deny"):
            await self.answer(name == "/approve", words)
        elif name == "/tools":
            for origin in self.kit.tools():
                print(f"{origin.name}  ({origin.source})", flush=True)
        elif name == "/usage":
            u = self.usage
            self.say(
                f"usage: {u.input_tokens} in / {u.output_tokens} out tokens, "
                f"{u.requests} requests in this chat"
            )
        elif name == "/fork":
            await self.fork()
        else:
            self.say(f"unknown command {name}; the commands: {', '.join(COMMANDS)}")

    async def answer(self, approved: bool, ids: list[str]) -> None:
        """Answer the calls the session's run holds, then continue that run, streamed."""
        from .._approvals import Approval
        from ._stream import stream_run

        state = self.recorder.state
        held, run = state.held, state.run or ""
        if not held:
            self.say("no call is waiting for approval")
            return
        chosen = ids or [call.id for call in held]
        answers = [Approval(call, approved=approved, by="person") for call in chosen]
        # The resume checks each answer against the held calls and decides each call again
        # under the agent's policy (a deny stays one). Not PolicyEngine.release: it knows only
        # the policy's own asks, so a call a hook or guard held could be neither approved nor
        # denied under a policy that allows it.
        events = self.agent.resume_stream_events(run, answers)
        self.show(await stream_run(events, self.printer))

    async def fork(self) -> None:
        """A new session based at this one's leaf; the chat goes on there."""
        from .._recorder import Recorder

        kit, recorder = self.kit, self.recorder
        forked = await Recorder.fork(
            recorder.sessions, recorder.session_id, header=kit.header(), parts=kit.parts_for
        )
        kit.regrant(forked)
        self.use(forked)
        self.say(f"session {forked.session_id}, a fork of {recorder.session_id}")
