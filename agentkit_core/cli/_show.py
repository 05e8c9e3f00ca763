"""What ``agentkit run`` shows: a line per step on stderr, then the answer, JSON or pending calls.

Kept apart from ``_run`` (which builds the agent) so the run command only adds its options
here (:func:`add_show_arguments`) and hands its agent to :func:`run_and_show`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from typing import IO
from typing import TYPE_CHECKING
from typing import Any

from .._errors import ConfigError
from .._lookup import open_checkpointer
from .._tracing import Span
from .._tracing import SpanExporter

if TYPE_CHECKING:
    from ._stream import StreamPrinter

#: Characters of a tool call's arguments a step line shows.
SHORT = 80

#: Exit codes of ``agentkit run`` (docs/cli.md lists them).
EXIT_DONE, EXIT_NOT_DONE, EXIT_ERROR = 0, 1, 2


def add_show_arguments(run: argparse.ArgumentParser) -> None:
    """The options of ``agentkit run`` that choose what it shows and keeps."""
    run.add_argument(
        "--json",
        action="store_true",
        help="print the whole result as JSON (status, output, transcript, usage, pending)",
    )
    run.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no step lines on stderr: only the answer, printed whole at the end (or with "
        "--json, the JSON)",
    )
    run.add_argument(
        "--events",
        action="store_true",
        help="print each event of the run as one JSON line on stdout (docs/events.md), "
        "instead of the answer",
    )
    run.add_argument(
        "--trace",
        metavar="FILE",
        help="write the run's spans to FILE (JSON Lines) for agentkit view FILE",
    )
    run.add_argument(
        "--store",
        metavar="URL",
        help="checkpoint the run in this store (sqlite:///runs.db...), so a suspended run "
        "can be approved and resumed",
    )
    run.add_argument(
        "--resume", metavar="RUN_ID", help="continue a suspended run from --store (no TASK)"
    )
    run.add_argument(
        "--approve",
        action="append",
        default=[],
        metavar="CALL_ID",
        help="with --resume: run this pending call (repeatable)",
    )
    run.add_argument(
        "--deny",
        action="append",
        default=[],
        metavar="CALL_ID",
        help="with --resume: refuse this pending call (repeatable)",
    )


def check_show_arguments(args: argparse.Namespace) -> None:
    """Refuse option combinations that cannot mean anything, naming the option."""
    session = getattr(args, "session", None)
    if session and (args.approve or args.deny or args.store):
        raise ConfigError(
            "--session records a conversation; --store, --approve and --deny resume a "
            "checkpointed run: use one or the other",
            value=session,
            source="--session",
        )
    if args.events and args.json:
        raise ConfigError(
            "--events and --json both print on stdout: choose the event lines or the result",
            value="--events",
            source="--events",
        )
    if session:
        return  # --resume ID continues the session ID, with TASK as its next message
    if args.resume and not args.store:
        raise ConfigError(
            "--resume needs --store URL, the checkpoint store the run was written to (or "
            "--session URL, the session store of the conversation to continue)",
            value=args.resume,
            source="--resume",
        )
    if (args.approve or args.deny) and not args.resume:
        raise ConfigError(
            "--approve and --deny answer the pending calls of a suspended run; pass "
            "--resume RUN_ID (and --store URL) with them",
            value=[*args.approve, *args.deny],
            source="--approve/--deny",
        )
    both = sorted(set(args.approve) & set(args.deny))
    if both:
        raise ConfigError(
            f"calls both approved and denied: {', '.join(both)}",
            value=both,
            source="--approve/--deny",
        )
    if args.resume and args.task:
        raise ConfigError(
            f"--resume continues run {args.resume!r} with its own task; drop the TASK "
            f"{args.task!r}",
            value=args.task,
            source="TASK",
        )


def _short(value: Any, limit: int = SHORT) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _ms(span: Span) -> str:
    duration = span.duration
    return "" if duration is None else f" ({duration * 1000:.0f} ms)"


class StepPrinter(SpanExporter):
    """Prints one line per step of a run: model calls, tool calls, results, verdicts, folds."""

    def __init__(
        self, stream: IO[str] | None = None, before: Callable[[], None] | None = None
    ) -> None:
        self.stream = stream
        self.before = before  # ends the streamed text's line on a shared terminal
        self.turn = 0

    def _line(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        if self.before is not None:
            self.before()
        print(f"agentkit: [{self.turn}] {text}", file=stream, flush=True)

    def on_start(self, span: Span) -> None:
        if span.name == "turn":
            self.turn = int(span.attributes.get("turn") or 0)
        elif span.name == "tool_call":
            arguments = "(withheld)" if span.tainted else _short(span.payload.get("arguments"))
            self._line(f"  tool {span.attributes.get('tool')} {arguments}")

    def on_end(self, span: Span) -> None:
        a = span.exported_attributes()
        failure = span.exported_error()
        if span.name == "model_call":
            names = a.get("tool_call_names") or []
            what = f"calls {', '.join(names)}" if names else "answers"
            from ._viewer import usage_extra

            tokens = f"{a.get('input_tokens')} in / {a.get('output_tokens')} out tokens"
            tokens += usage_extra(a) + cost_text(a.get("cost"), ", $")
            error = f" failed: {failure}" if failure else f" {what}, {tokens}"
            self._line(f"model {a.get('model') or ''}{error}{_ms(span)}")
        elif span.name == "model_attempt" and failure:
            self._line(f"model {a.get('model')} failed, attempt {a.get('attempt')}: {failure}")
        elif span.name == "run" and span.parent_id is None and not failure:
            stream = self.stream if self.stream is not None else sys.stderr
            print(f"agentkit: {run_totals(a)}", file=stream, flush=True)
        elif span.name == "tool_call":
            if failure:
                outcome = f"raised {failure}"
            elif a.get("is_error"):
                text = "(withheld)" if span.tainted else _short(span.payload.get("result"))
                outcome = f"error: {text}"
            else:  # the size, and the start of what the model reads
                text = "(withheld)" if span.tainted else _short(span.payload.get("result"), 40)
                outcome = f"{a.get('result_chars')} chars: {text}"
            self._line(f"  -> {a.get('tool')}: {outcome}{_ms(span)}")
        elif span.name in ("verdict", "guardrail") and (
            a.get("decision") != "allow" or a.get("source")
        ):
            from ._viewer import verdict_text

            self._line(f"  {span.name} on {a.get('tool')}: {verdict_text(a)}")
        elif span.name == "fold":
            if a.get("fold_error"):
                self._line(f"fold failed: {a.get('fold_error')}")
            else:
                self._line(
                    f"fold: {a.get('fold_messages')} messages into a summary, tokens "
                    f"{a.get('fold_tokens_before')} -> {a.get('fold_tokens_after')}"
                )


def cost_text(cost: object, prefix: str = "$") -> str:
    """``cost`` (US dollars) as ``prefix`` and four decimals; "" when it is not a number."""
    if isinstance(cost, bool) or not isinstance(cost, (int, float)):
        return ""
    return f"{prefix}{cost:.4f}"


def run_totals(a: Mapping[str, Any]) -> str:
    """The closing line of a run: its tokens, cache hits and cost (or that it is unknown)."""
    from ._viewer import usage_extra

    cost = cost_text(a.get("cost"), "cost $") or "cost unknown (a model without a price)"
    return (
        f"{a.get('requests')} model calls, {a.get('input_tokens')} in / "
        f"{a.get('output_tokens')} out tokens{usage_extra(a)}, {cost}"
    )


def show_exporters(
    args: argparse.Namespace, printer: StreamPrinter | None = None
) -> list[SpanExporter]:
    """The exporters ``agentkit run``'s options ask for (step lines, the trace file)."""
    from ._trace_file import TraceFile

    exporters: list[SpanExporter] = []
    if not args.quiet:
        exporters.append(StepPrinter(before=None if printer is None else printer.before_line))
    if args.trace:
        exporters.append(TraceFile(args.trace))
    return exporters


def stream_printer(args: argparse.Namespace) -> StreamPrinter | None:
    """What shows the run as it happens (None: the answer is printed whole at the end).

    Every event for ``--events``; nothing for ``--json`` or ``--quiet``; else the answer's text
    as it arrives.
    """
    from ._stream import StreamPrinter  # the event model imports asyncio: not for listing

    if args.events:
        return StreamPrinter(events=True)
    if args.json or args.quiet:
        return None
    return StreamPrinter(text=not getattr(args, "output", None))


async def run_and_show(
    args: argparse.Namespace,
    make_agent: Callable[[Any, list[SpanExporter]], Any],
    run: Callable[[Any, StreamPrinter | None], Awaitable[Any]],
) -> int:
    """Build the agent (with the installed and the asked-for exporters), run it, show it.

    ``make_agent(checkpointer, exporters)`` builds the agent; ``run(agent, printer)`` runs it
    on the task, shown by ``printer``; ``--resume`` continues a run from ``--store`` instead,
    shown the same way. Returns the exit code.
    """
    from .._lookup import span_exporters
    from ._stream import stream_run

    printer = stream_printer(args)
    exporters = [*span_exporters(manager=args.plugin_manager), *show_exporters(args, printer)]
    checkpointer = (
        await open_checkpointer(args.store, manager=args.plugin_manager) if (args.store) else None
    )
    try:
        agent = make_agent(checkpointer, exporters)
        if args.resume and not getattr(args, "session", None):
            approvals = {**dict.fromkeys(args.approve, True), **dict.fromkeys(args.deny, False)}
            if printer is None:
                result = await agent.resume(args.resume, approvals)
            else:  # streamed as a fresh run is
                events = agent.resume_stream_events(args.resume, approvals)
                result = await stream_run(events, printer)
        else:
            result = await run(agent, printer)
    finally:
        for exporter in exporters:
            close = getattr(exporter, "close", None)
            if callable(close):
                close()
        if checkpointer is not None:
            await checkpointer.aclose()
    return show_result(args, result, shown=printer is not None and printer.shown(result))


def show_result(
    args: argparse.Namespace, result: Any, out: IO[str] | None = None, *, shown: bool = False
) -> int:
    """Print ``result`` as ``args`` ask; a suspended run's pending calls go to stderr.

    ``shown``: the answer is on stdout already (streamed), so it is not printed again.
    """
    from .._encoder import jsonable

    out = out if out is not None else sys.stdout
    if args.json:
        data = {
            "run_id": result.run_id,
            "status": result.status,
            "stop_reason": result.stop_reason,
            "output": result.output,
            "usage": {
                "input_tokens": result.usage.input_tokens,
                "output_tokens": result.usage.output_tokens,
                "requests": result.usage.requests,
                "cache_read_tokens": result.usage.cache_read_tokens,
                "cache_write_tokens": result.usage.cache_write_tokens,
                "reasoning_tokens": result.usage.reasoning_tokens,
            },
            "pending": result.pending,
            "transcript": result.transcript,
        }
        print(json.dumps(jsonable(data), indent=2, ensure_ascii=False), file=out)
    elif result.status == "done" and not shown:
        if isinstance(result.output, str):
            print(result.output, file=out)
        else:
            print(json.dumps(jsonable(result.output), indent=2, ensure_ascii=False), file=out)
    if result.status == "suspended":
        _tell_pending(args, result)
        return EXIT_NOT_DONE
    if result.status != "done":
        print(f"agentkit: run {result.status}: {result.stop_reason}", file=sys.stderr)
    if args.store:
        _tell_stored(args, result)
    return EXIT_DONE if result.status == "done" else EXIT_NOT_DONE


def _tell_stored(args: argparse.Namespace, result: Any) -> None:
    """A checkpointed run's id on stderr, with the command that views it: nothing else has it."""
    from .._urls import mask_url

    store = mask_url(args.store)
    print(
        f"agentkit: run {result.run_id} {result.status}, checkpointed in {store}: "
        f"agentkit view {shlex.quote(result.run_id)} --store {shlex.quote(store)} shows it",
        file=sys.stderr,
    )


def _agent_options(args: argparse.Namespace) -> list[str]:
    """The command-line words that rebuild the agent of ``args`` and find its run.

    The options ``add_agent_arguments`` added (a resume must build the same agent, the same
    tools above all, or an approved call finds no tool to run), then ``--output``, ``--store``.
    """
    words: list[str] = []
    rebuild = (*getattr(args, "agent_options", ()), ("output", "--output"), ("store", "--store"))
    for attr, flag in rebuild:
        value = getattr(args, attr, None)
        for each in value if isinstance(value, list) else [value]:
            if each is not None and each != "":
                words += [flag, str(each)]
    return words


def _tell_pending(args: argparse.Namespace, result: Any) -> None:
    err = sys.stderr
    print(f"agentkit: run {result.run_id} suspended: {result.stop_reason}", file=err)
    for call in result.pending:
        print(f"agentkit:   pending {call.id}: {call.name} {_short(call.arguments)}", file=err)
    ids = " ".join(f"--approve {shlex.quote(c.id)}" for c in result.pending)
    if args.store:
        again = " ".join(shlex.quote(word) for word in _agent_options(args))
        print(
            f"agentkit: approve with: agentkit run {again} --resume "
            f"{shlex.quote(result.run_id)} {ids} (--deny CALL_ID refuses one)",
            file=err,
        )
    else:
        print(
            "agentkit: this run was not checkpointed, so it cannot be resumed; run it again "
            "with --store sqlite:///runs.db to approve its calls with agentkit run --resume",
            file=err,
        )
