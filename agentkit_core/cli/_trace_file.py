"""A run's trace as a JSON Lines file: what ``agentkit run --trace FILE`` writes and ``view`` reads.

The first line is a header (``{"agentkit_trace": 1, ...}``); every other line is one ended
span, as :meth:`Span.to_dict` gives it with its payload (None once the run is secret-tainted)
and its exported attributes and error (capped; text withheld once the run is secret-tainted).
Children end before their parents, so readers order spans by ``start_ns``.

A model call's request repeats the whole transcript so far, so writing it whole would make the
file grow with the square of the turns. A ``model_call`` line's ``request`` holds only the
messages after the ones it shares with the run's previous model call, and ``request_prefix``
says how many it shares (0: the request is whole, as after a fold).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO
from typing import Any

from .._errors import ConfigError
from .._messages import JSONObject
from .._messages import JSONValue
from .._messages import TranscriptView
from .._tracing import Span
from .._tracing import SpanExporter
from ..plugin import create_private

#: The trace-file format version this core writes and reads.
TRACE_FORMAT = 1


class TraceFile(SpanExporter):
    """A span exporter that appends each ended span to a JSON Lines file.

    Payloads (messages, tool arguments and results) are written unless ``content=False``;
    a secret-tainted run's never are. Each line is flushed as it is written, so a run that
    crashes leaves every span it ended. Close it with :meth:`close` (or use ``with``).
    """

    def __init__(self, path: str | os.PathLike[str], *, content: bool = True) -> None:
        self.path = Path(path)
        self.content = content
        #: Each run's last model request, which the next one's is written against.
        self._requests: dict[str | None, Sequence[Any]] = {}
        try:
            # A lone surrogate (a tool's broken text) can only stand inside a JSON string, where
            # backslashreplace writes it as the \ud800 escape that reads back as itself; strict
            # encoding raised, and the run detached the file. A new file is its owner's only
            # (0600): it holds the conversation; one already there keeps its mode.
            create_private(self.path)
            self._file: IO[str] | None = self.path.open(
                "w", encoding="utf-8", errors="backslashreplace"
            )
        except OSError as exc:
            raise self._cannot_write(exc, "pass a path in a directory you can write to") from exc
        self._write({"agentkit_trace": TRACE_FORMAT}, "pass a path on a disk with room")

    def _cannot_write(self, exc: OSError, fix: str) -> ConfigError:
        return ConfigError(
            f"cannot write the trace file {str(self.path)!r}: {exc.strerror or exc}; {fix}",
            value=str(self.path),
            source="--trace",
        )

    def on_end(self, span: Span) -> None:
        if span.name == "run":
            self._requests.pop(span.run_id, None)
        request = span.payload.get("request") if span.name == "model_call" else None
        if not self.content or span.tainted or not isinstance(request, Sequence):
            self._write(span.to_dict(content=self.content))
            return
        previous = self._requests.get(span.run_id, ())
        shared = 0
        if isinstance(request, TranscriptView) and request.extends(previous):
            shared = len(previous)  # a view of the same transcript: nothing to walk
        else:
            for before, now in zip(previous, request, strict=False):
                if before is not now:
                    break
                shared += 1
        self._requests[span.run_id] = request
        payload = {**span.payload, "request": request[shared:], "request_prefix": shared}
        self._write(span.to_dict(content=True, payload=payload))

    def _write(self, data: dict[str, Any], fix: str = "the rest of the run is not in it") -> None:
        """One line, flushed; a file that refuses it (a full disk) is dropped, the error raised.

        The run detaches an exporter that raises, so the rest of it goes unrecorded, but the
        line the disk refused stays in no buffer that :meth:`close` would try again: a full
        disk ended a finished ``agentkit run`` with an OSError as it closed the file.
        """
        if self._file is None:
            return
        try:
            self._file.write(json.dumps(data, ensure_ascii=False) + "\n")
            self._file.flush()
        except OSError as exc:
            self._drop()
            raise self._cannot_write(exc, fix) from exc

    def _drop(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):  # what it still buffers is the refused line
                file.close()

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError as exc:
                self._drop()
                raise self._cannot_write(exc, "its last line may be cut short") from exc
            self._file = None

    def __enter__(self) -> TraceFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<TraceFile {str(self.path)!r}>"


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection in the block (or the decorated function); restored after.

    For the work of reading a trace and making a view of it: dicts, lists and text without
    cycles, freed by reference counting. With a long trace's spans alive, the collector's full
    passes over them made a 3,000-turn view cost three times per turn what a 300-turn one did
    (benchmarks/observability/RESULTS.md).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@collector_paused()
def read_trace_file(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The spans of a trace file, oldest start first.

    A file that is not a trace (no header), of a newer format, or with a line that is not a
    span (not UTF-8, not JSON, or no name, no string ``span_id``, one an earlier line has, a
    ``parent_id`` not a string or null, a ``start_ns`` not a whole number) is a
    :class:`ConfigError` naming the file and the line; a last line cut short (the writer was
    killed mid-line) is skipped.
    """
    where = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"cannot read the trace file {where!r}: {exc.strerror or exc}",
            value=where,
            source="trace file",
        ) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        finished = raw.rfind(b"\n") + 1
        if exc.start >= finished:  # the writer died mid-character on the last line: drop it
            return _spans_of(raw[:finished].decode("utf-8"), where)
        number = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"trace file {where!r} line {number} is not UTF-8 (byte {raw[exc.start]:#04x}); it "
            "is not a file agentkit run --trace wrote, or it was edited",
            value=where,
            source="trace file",
        ) from exc
    return _spans_of(text, where)


def _spans_of(text: str, where: str) -> list[JSONObject]:
    """The spans of a trace file's text (``where`` names the file), oldest start first."""
    lines = text.split("\n")
    complete = text.endswith("\n")
    spans: list[JSONObject] = []
    #: each span's id, and the line it is on
    lines_of: dict[str, int] = {}
    header: JSONValue = None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:  # also: nested too deep, a 5,000-digit int
            if number == len(lines) and not complete:
                break  # the writer died mid-line: keep what it finished
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc).split(":")[0]
            raise ConfigError(
                f"trace file {where!r} line {number} is not JSON this reader takes ({why}); "
                "it is not a file agentkit run --trace wrote, or it was edited",
                value=where,
                source="trace file",
            ) from exc
        if header is None:
            header = data
            version = data.get("agentkit_trace") if isinstance(data, dict) else None
            if type(version) is not int or version < 1:
                raise ConfigError(
                    f"{where!r} is not an agentkit trace file (its first line has no "
                    "'agentkit_trace' version); write one with agentkit run --trace FILE",
                    value=where,
                    source="trace file",
                )
            if version > TRACE_FORMAT:
                raise ConfigError(
                    f"trace file {where!r} has format {version}, newer than this agentkit "
                    f"reads ({TRACE_FORMAT}); upgrade agentkit-core",
                    value=version,
                    source="trace file",
                )
            continue
        problem = _not_a_span(data, lines_of)
        if problem:
            raise ConfigError(
                f"trace file {where!r} line {number} is not a span: {problem}; it is not a "
                "file agentkit run --trace wrote, or it was edited",
                value=where,
                source="trace file",
            )
        lines_of[data["span_id"]] = number
        spans.append(data)
    if header is None:
        raise ConfigError(
            f"trace file {where!r} is empty; write one with agentkit run --trace FILE",
            value=where,
            source="trace file",
        )
    spans.sort(key=_start)
    return spans


def _start(span: JSONObject) -> int:
    """A read span's ``start_ns`` (:func:`_not_a_span` checked it is a whole number), or 0."""
    start = span.get("start_ns")
    return start if isinstance(start, int) else 0


def _not_a_span(data: object, lines_of: dict[str, int]) -> str:
    """What makes a trace line's ``data`` not a span the viewer can place, or ``""``.

    The fields that place a span in its run (its id, its parent's, its start) must be what
    :meth:`Span.to_dict` writes; a span whose parent is absent from the file is a span (the
    viewer leaves it out), and every other field is shown as whatever it holds.
    """
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return "not a JSON object with a name"
    span_id = data.get("span_id")
    if not isinstance(span_id, str) or not span_id:
        return f"its span_id is {span_id!r}, not a non-empty string"[:200]
    if span_id in lines_of:
        return f"its span_id {span_id!r} is the id of the span on line {lines_of[span_id]}"[:200]
    parent = data.get("parent_id")
    if parent is not None and not isinstance(parent, str):
        return f"its parent_id is {parent!r}, not a string or null"[:200]
    start = data.get("start_ns", 0)
    if type(start) is not int or start < 0:
        return f"its start_ns is {start!r}, not a whole number of nanoseconds"[:200]
    return ""
