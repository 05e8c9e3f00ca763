"""Showing a run as it happens: its answer's text on stdout, or every event as a JSON line.

``agentkit run`` and ``agentkit chat`` consume :meth:`Agent.run_stream_events
<agentkit_core.Agent.run_stream_events>` (a resumed run's :meth:`Agent.resume_stream_events
<agentkit_core.Agent.resume_stream_events>`) through :class:`StreamPrinter`. The step lines (model
calls, tool calls and results, verdicts, folds) stay :class:`~._show.StepPrinter`'s, written
from the run's spans; this printer adds what only the events carry: the text as it arrives,
retries and approval answers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import IO
from typing import Any

from .._events import ApprovalAnswered
from .._events import ModelRequestStarted
from .._events import Retry
from .._events import RunEvent
from .._events import RunFinished
from .._events import RunStarted
from .._events import RunSuspended
from .._events import TextDelta


class StreamPrinter:
    """Prints a run's events as they come: the top run's text deltas, or (``events``) all.

    ``text=False`` prints no text (a typed answer is shown whole at the end). ``answer`` is the
    text the last model request of the top run streamed: when it is the run's output, the
    answer is on stdout already and only its closing newline is missing.
    """

    def __init__(self, *, events: bool = False, text: bool = True) -> None:
        self.events = events
        self.text = text
        self.answer = ""
        self.open_line = False  # text was written on stdout since its last newline
        self.run_id: str | None = None

    @property
    def out(self) -> IO[str]:
        return sys.stdout  # looked up at each write: a test's capture replaces it

    @property
    def err(self) -> IO[str]:
        return sys.stderr

    def show(self, event: RunEvent) -> None:
        """Print ``event`` as this printer's mode says."""
        if isinstance(event, RunStarted):  # a child's run starts with ChildRunStarted
            self.run_id = event.run_id
        if self.events:
            print(json.dumps(event.to_json(), default=str, ensure_ascii=False), file=self.out)
            self.out.flush()
            return
        top = event.run_id == self.run_id  # a child agent's text is not the answer
        if isinstance(event, TextDelta) and top and self.text:
            self.write(event.text)
        elif isinstance(event, ModelRequestStarted) and top:
            self.end_line()
            self.answer = ""
        elif isinstance(event, Retry):
            self.line(f"retry {event.attempt} in {event.wait:.1f} s after: {event.error}")
        elif isinstance(event, ApprovalAnswered):
            answer = "approved" if event.approved else "refused"
            self.line(f"call {event.call_id} {answer} by {event.by}")

    def write(self, text: str) -> None:
        """Some of the answer's text, on stdout at once."""
        self.answer += text
        self.out.write(text)
        self.out.flush()
        self.open_line = not text.endswith("\n")

    def end_line(self) -> None:
        """End the text's line, so what follows starts on its own."""
        if self.open_line:
            self.out.write("\n")
            self.out.flush()
            self.open_line = False

    def before_line(self) -> None:
        """Before a line on stderr: end the text's line when both go to one terminal."""
        if self.open_line and _one_terminal(self.out, self.err):
            self.end_line()

    def line(self, text: str) -> None:
        """One line on stderr."""
        self.before_line()
        print(f"agentkit: {text}", file=self.err, flush=True)

    def shown(self, result: Any) -> bool:
        """Whether ``result``'s output is on stdout already (or stdout holds the events)."""
        if self.events:
            return True
        streamed = self.text and result.status == "done" and result.output == self.answer
        if streamed or self.answer:
            self.end_line()  # a text not the output (a guard changed it) ends its line first
        self.answer = ""
        return bool(streamed) and bool(result.output)


def _one_terminal(out: IO[str], err: IO[str]) -> bool:
    try:
        return out.isatty() and err.isatty()
    except (AttributeError, ValueError):
        return False


async def stream_run(events: AsyncIterator[RunEvent], printer: StreamPrinter) -> Any:
    """A run's ``events`` (a fresh or a resumed run's stream), shown by ``printer``; its result.

    A failed run raises its error, as :meth:`Agent.run` does.
    """
    result = None
    async for event in events:
        printer.show(event)
        if isinstance(event, RunFinished | RunSuspended):
            result = event.result
    return result
