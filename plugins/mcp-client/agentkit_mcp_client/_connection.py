"""One MCP server connection: its spec, its label, its stderr tail and the task that owns it.

The SDK's ``Client`` must be closed in the task that opened it (its cancel scopes belong to
that task). So every connection gets one owner task that opens the client, reports ready,
and waits to be told to close; callers in any task send requests through the open session.
That is what lets servers be added and removed at run time in any order.

A failed request is told apart by cause: no answer within its deadline (the server stays
connected), an error or a malformed answer the server sent (a protocol error for that call;
the server stays up), or the transport gone (the server died, or an HTTP connection dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import TextIO
from urllib.parse import urlsplit

from agentkit_core import ConfigError
from agentkit_core import ElicitationError
from agentkit_core import ToolSourceError
from agentkit_core.plugin import Elicitor

from ._auth import HttpServer
from ._auth import LoginRequired
from ._auth import header_secrets
from ._auth import http_server
from ._auth import http_transport
from ._auth import masked
from ._features import ClientFeatures

if TYPE_CHECKING:
    import mcp
    import mcp_types
    from mcp.shared.dispatcher import ProgressFnT

    from agentkit_core import PluginManager

#: How much of a server's stderr is kept for error messages.
STDERR_TAIL_BYTES = 2048

#: Seconds any request but a tool call (tools/list, the handshake's follow-ups) may take.
DEFAULT_REQUEST_TIMEOUT = 60.0
#: Seconds a tools/call may take on the wire when no call_timeout is set.
DEFAULT_CALL_TIMEOUT = 300.0
#: How long ``aclose`` waits for a stdio server's process group to end after SIGTERM.
GROUP_GRACE = 2.0

#: Where a server's stderr goes besides the kept tail: a callable given each chunk, a text
#: file, or None (nowhere).
StderrSink = Callable[[str], Any] | TextIO | None


@dataclass(frozen=True)
class ServerParams:
    """A stdio server started as ``program *args`` with extra ``env`` in ``cwd``."""

    program: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None


ServerSpec = str | ServerParams | HttpServer


def parse_spec(spec: ServerSpec | Mapping[str, Any]) -> ServerParams | str | HttpServer:
    """A URL string stays a URL; any other string is a command line split on whitespace.

    A mapping with ``url`` is an HTTP server with headers or auth (see ``_auth``).
    """
    if isinstance(spec, (ServerParams, HttpServer)):
        return spec
    if isinstance(spec, Mapping) and "url" in spec:
        return http_server(spec)
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"program", "args", "env", "cwd"}
        if "program" not in spec or unknown:
            raise ConfigError(
                f"an MCP server given as a mapping needs 'program' and may have 'args', 'env', "
                f"'cwd' (or 'url' and 'headers', 'auth'... for HTTP); got keys {sorted(spec)}",
                value=sorted(spec),
                source="mcp server",
            )
        return ServerParams(
            str(spec["program"]), tuple(spec.get("args", ())), spec.get("env"), spec.get("cwd")
        )
    if not isinstance(spec, str):
        raise ConfigError(
            f"an MCP server is a command line, a URL, a mapping or ServerParams; "
            f"got {type(spec).__name__}",
            value=spec,
            source="mcp server",
        )
    text = spec.strip()
    if text.startswith(("http://", "https://")):
        return text
    words = text.split()
    if not words:
        raise ConfigError(
            "an MCP server command line is empty; give a program, e.g. 'mcp-server-time'",
            value=spec,
            source="mcp server",
        )
    return ServerParams(words[0], tuple(words[1:]))


def describe(spec: ServerParams | str | HttpServer) -> str:
    """What a label shows: a program's base name, or a URL's scheme and host (no secrets)."""
    if isinstance(spec, ServerParams):
        return os.path.basename(spec.program) or spec.program
    parts = urlsplit(spec.url if isinstance(spec, HttpServer) else spec)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return f"{parts.scheme}://{host}"


class StderrTail:
    """Reads a server's stderr from a pipe, feeds the sink and keeps the last 2 KB."""

    def __init__(self, sink: StderrSink) -> None:
        self._sink = sink
        self._tail = bytearray()
        self._eof = asyncio.Event()
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self._read_fd = read_fd
        found = os.fstat(read_fd)
        #: The pipe's identity: the server process is the child whose stderr it is.
        self.pipe = (found.st_dev, found.st_ino)
        self.writer: TextIO | None = os.fdopen(write_fd, "w")
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(read_fd, self._on_readable)

    def _on_readable(self) -> None:
        try:
            chunk = os.read(self._read_fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._finish()
            return
        self._tail += chunk
        del self._tail[:-STDERR_TAIL_BYTES]
        self._emit(chunk.decode("utf-8", "replace"))

    def _emit(self, text: str) -> None:
        if self._sink is None:
            return
        try:
            if callable(self._sink):
                self._sink(text)
            else:
                self._sink.write(text)
        except Exception as exc:  # a broken sink must not take the connection down
            print(f"agentkit-mcp-client: stderr sink failed: {exc!r}", file=sys.stderr)
            self._sink = None

    def close_writer(self) -> None:
        """Drop our copy of the pipe's write end once the child has its own."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def _finish(self) -> None:
        if self._eof.is_set():
            return
        self._loop.remove_reader(self._read_fd)
        os.close(self._read_fd)
        self._eof.set()

    async def settle(self, timeout: float = 1.0) -> str:
        """The tail, after waiting (bounded) for the server to close its stderr."""
        self.close_writer()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._eof.wait(), timeout)
        return self.text()

    def text(self) -> str:
        return bytes(self._tail).decode("utf-8", "replace").strip()

    def close(self) -> None:
        self.close_writer()
        self._finish()


def with_tail(message: str, tail: str) -> str:
    """The error message, ending with the server's last stderr lines when there are any."""
    if not tail:
        return f"{message} (it wrote nothing to stderr)"
    return f"{message}; its stderr ended with:\n{tail}"


def _mcp_error_text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    code = getattr(exc, "code", None)
    return f"{text} (MCP error {code})" if code is not None else text


@dataclass
class _Watch:
    """What a stdio transport learns: whether the server's stdout ended, and its process."""

    ended: bool = False
    pid: int | None = None
    #: An HTTP server's 401/403 answer (``_auth.http_transport`` notes it).
    refused: str | None = None


@dataclass
class Connection:
    """One open (or opening) server; the owner task holds the SDK client."""

    spec: ServerParams | str | HttpServer
    label: str
    connect_timeout: float
    call_timeout: float | None
    elicitor: Elicitor | None
    stderr: StderrSink
    protocol: str = "auto"
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    #: What the server may ask of us (sampling, roots) and the notifications it sends.
    features: ClientFeatures = field(default_factory=lambda: ClientFeatures(""))
    #: The plugin manager of whoever built the connection: an OAuth token store named by URL
    #: is opened on it (None: this plugin's own stores only).
    manager: PluginManager | None = None
    client: mcp.Client | None = None
    _owner: asyncio.Task[None] | None = None
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _tail: StderrTail | None = None
    _inflight: set[asyncio.Task[Any]] = field(default_factory=set)
    _closing: bool = False
    _dead: str | None = None
    _watch: _Watch = field(default_factory=_Watch)

    @property
    def is_http(self) -> bool:
        return not isinstance(self.spec, ServerParams)

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Start the owner task and wait until the server answered the handshake."""
        self._stop = asyncio.Event()
        self._dead = None
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._own(ready), name=f"agentkit {self.label}")
        try:
            await asyncio.shield(ready)
        except asyncio.CancelledError:
            await self.aclose()
            if ready.done() and not ready.cancelled():
                ready.exception()  # the caller is gone: the connect error is nobody's to raise
            raise

    async def _own(self, ready: asyncio.Future[None]) -> None:
        import anyio
        import mcp

        tail = StderrTail(self.stderr) if not self.is_http else None
        self._tail = tail
        self._watch = _Watch()
        try:
            # One scope around the whole session (the SDK's task groups live inside it): its
            # deadline bounds the handshake and is lifted once the server has answered.
            with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
                async with mcp.Client(
                    self._transport(mcp, tail),
                    read_timeout_seconds=self.request_timeout,
                    elicitation_callback=self._elicit,
                    cache=None,
                    mode=self.protocol,
                    **self.features.client_options(),
                ) as client:
                    scope.deadline = math.inf
                    self.client = client
                    ready.set_result(None)
                    await self._stop.wait()
            if not ready.done():
                ready.set_exception(await self._start_error(TimeoutError()))
        except Exception as exc:
            if not ready.done():
                ready.set_exception(await self._start_error(exc))
            else:
                self._dead = _mcp_error_text(_leaf(exc))
        except BaseException:
            if not ready.done():
                ready.set_exception(ToolSourceError(f"{self.label}: connecting was cancelled"))
            raise
        finally:
            self.client = None
            if tail is not None:
                await tail.settle(0.5)
                tail.close()

    def _transport(self, mcp: Any, tail: StderrTail | None) -> Any:
        if isinstance(self.spec, str):
            return self.spec
        if isinstance(self.spec, HttpServer):
            return http_transport(self.spec, self._watch, manager=self.manager)
        assert tail is not None
        params = mcp.StdioServerParameters(
            command=self.spec.program,
            args=list(self.spec.args),
            env=dict(self.spec.env) if self.spec.env is not None else None,
            cwd=self.spec.cwd,
        )
        return _stdio_transport(mcp, params, tail, self._watch)

    async def _start_error(self, exc: BaseException) -> ToolSourceError:
        tail = await self._tail.settle() if self._tail is not None else ""
        what = describe(self.spec)
        if isinstance(exc, TimeoutError):
            message = (
                f"{self.label}: the server did not answer within {self.connect_timeout:g}s "
                "(connect_timeout=); is it an MCP server speaking on stdout?"
                if not self.is_http
                else f"{self.label}: {what} did not answer within {self.connect_timeout:g}s"
            )
        elif isinstance(exc, OSError) and not self.is_http:
            message = f"{self.label}: could not start {what!r}: {exc}"
        elif isinstance(_leaf(exc), (LoginRequired, ConfigError)):
            message = f"{self.label}: {_leaf(exc)}"
        elif type(_leaf(exc)).__module__.startswith("mcp.client.auth"):
            message = f"{self.label}: the OAuth flow failed: {_leaf(exc)}"
        elif self._watch.refused and isinstance(self.spec, HttpServer):
            names = ", ".join(sorted(self.spec.headers)) or "none"
            message = (
                f"{self.label}: {describe(self.spec)} refused the credentials "
                f"({self._watch.refused}); check the values of the headers sent ({names}; "
                "values not shown) or configure auth='oauth'"
            )
        else:
            message = f"{self.label}: the server failed to start: {_mcp_error_text(_leaf(exc))}"
        message = with_tail(message, tail) if not self.is_http else message
        error = ToolSourceError(masked(message, self._secrets()))
        error.__cause__ = exc
        return error

    def _secrets(self) -> list[str]:
        """What no error may show: the server's header values."""
        return header_secrets(self.spec) if isinstance(self.spec, HttpServer) else []

    async def aclose(self) -> None:
        """End calls in flight with a clear error, then close the client in its owner task."""
        self._closing = True
        for task in list(self._inflight):
            task.cancel()
        self._stop.set()
        owner, self._owner = self._owner, None
        if owner is not None and owner is not asyncio.current_task():
            if self.client is None:  # still connecting: the handshake would run to its deadline
                owner.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.shield(owner)

    # ------------------------------------------------------------------ requests

    async def _live(self) -> mcp.Client:
        if self._closing:
            raise ToolSourceError(f"{self.label} is closed")
        if self.client is None and self.is_http:
            await self.open()  # the previous connection dropped: reconnect for this call
        if self.client is None:
            raise ToolSourceError(
                with_tail(
                    f"{self.label}: the server is gone{f' ({self._dead})' if self._dead else ''}",
                    self._tail.text() if self._tail else "",
                )
            )
        return self.client

    async def list_tools(self) -> list[mcp_types.Tool]:
        """Every tool the server lists (all pages)."""
        tools: list[mcp_types.Tool] = await self.list_all("tools")
        return tools

    async def list_all(self, kind: str) -> list[Any]:
        """Every ``tools``, ``resources`` or ``prompts`` item the server lists (all pages)."""
        client = await self._live()
        listing = getattr(client, f"list_{kind}")
        found: list[Any] = []
        cursor: str | None = None
        while True:
            page = await self._request(
                listing(cursor=cursor), f"listing {kind}", self.request_timeout
            )
            found.extend(getattr(page, kind))
            cursor = page.next_cursor
            if not cursor:
                return found

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        timeout: float | None,
        progress: ProgressFnT | None = None,
    ) -> mcp_types.CallToolResult:
        client = await self._live()
        deadline = timeout or self.call_timeout or DEFAULT_CALL_TIMEOUT
        result: mcp_types.CallToolResult = await self._request(
            client.call_tool(
                name, arguments, read_timeout_seconds=deadline, progress_callback=progress
            ),
            f"calling tool {name!r}",
            deadline,
        )
        return result

    async def _request(self, coro: Any, doing: str, deadline: float) -> Any:
        task = asyncio.ensure_future(coro)
        self._inflight.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            if self._closing and task.cancelled() and not _outer_cancelled():
                raise ToolSourceError(f"{self.label} was closed while {doing}") from None
            raise
        except Exception as exc:
            failure = await self._failure(exc, doing, deadline)
            if self._secrets():
                failure = ToolSourceError(masked(str(failure), self._secrets()))
            raise failure from exc
        finally:
            self._inflight.discard(task)

    async def _failure(self, exc: Exception, doing: str, deadline: float) -> ToolSourceError:
        """The error for a failed request, and whether the server is gone (see the module)."""
        import mcp_types
        from pydantic import ValidationError

        leaf = _leaf(exc)
        code = getattr(leaf, "code", None)
        if self._closing:
            return ToolSourceError(f"{self.label} was closed while {doing}")
        if isinstance(leaf, TimeoutError) or code == (mcp_types.REQUEST_TIMEOUT):
            return ToolSourceError(
                f"{self.label}: no answer while {doing} within {deadline:g} s "
                f"({_mcp_error_text(leaf)}); the server stays connected"
            )
        if getattr(leaf, "data", None) is _MALFORMED:  # a reply _misshapen could route
            why: str | None = str(getattr(leaf, "message", leaf))
        else:
            why = _first(leaf) if isinstance(leaf, ValidationError) else None
        if why is not None:
            return ToolSourceError(
                f"{self.label}: the server's answer to {doing} is malformed: {why}"
            )
        # -32000 is both what servers send for their own errors and what the SDK reports when
        # the transport closed: over stdio the transport says which (did stdout end?).
        sent = code is not None and (
            code != mcp_types.CONNECTION_CLOSED or (not self.is_http and not self._watch.ended)
        )
        if sent:
            return ToolSourceError(
                f"{self.label}: the server answered {doing} with an error: {_mcp_error_text(leaf)}"
            )
        self._dead = _mcp_error_text(leaf)
        if self.is_http:
            # drop this connection; the next call opens a fresh one
            self.client = None
            self._stop.set()
            return ToolSourceError(
                f"{self.label}: the connection dropped while {doing}: {self._dead}; "
                "the next call reconnects"
            )
        self.client = None
        self._stop.set()
        tail = await self._tail.settle() if self._tail is not None else ""
        return ToolSourceError(
            with_tail(f"{self.label}: the server died while {doing} ({self._dead})", tail)
        )

    # ------------------------------------------------------------------ elicitation

    async def _elicit(
        self, context: Any, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        """Ask the configured elicitor; without one, or when it declines, decline."""
        import mcp_types

        if self.elicitor is None:
            return mcp_types.ElicitResult(action="decline")
        if isinstance(params, mcp_types.ElicitRequestURLParams):
            question, schema = f"{params.message}\n{params.url}", None
        else:
            question = params.message
            schema = params.requested_schema
            if hasattr(schema, "model_dump"):
                schema = schema.model_dump(by_alias=True, exclude_none=True)
        try:
            answer = await self.elicitor(question, schema, False)
        except ElicitationError:
            return mcp_types.ElicitResult(action="decline")
        if answer is None:
            return mcp_types.ElicitResult(action="decline")
        if not isinstance(answer, dict):
            props = list((schema or {}).get("properties", {}))
            if len(props) != 1:
                return mcp_types.ElicitResult(action="decline")
            answer = {props[0]: answer}
        return mcp_types.ElicitResult(action="accept", content=answer)


@contextlib.asynccontextmanager
async def _stdio_transport(
    mcp: Any, params: Any, tail: StderrTail, watch: _Watch
) -> AsyncIterator[Any]:
    """The SDK's stdio transport, with stderr into our pipe and its stdout watched for its end.

    When the SDK has stopped the server (stdin closed, then SIGTERM and SIGKILL to its group
    if it lingers), whatever is left of the server's process group is ended too: a server
    that exits at once on its own would otherwise leave the helpers it started running.
    """
    import anyio

    try:
        async with mcp.stdio_client(params, errlog=tail.writer) as (read, write):
            watch.pid = _child_with_stderr(tail.pipe)
            tail.close_writer()
            yield _Watched(read, watch), write
    finally:
        tail.close_writer()
        if watch.pid is not None:
            with anyio.CancelScope(shield=True):
                await _end_group(watch.pid)


class _Watched:
    """A transport's read stream that notes, in ``watch.ended``, when it ends.

    It also turns a reply the transport could not parse into an error for the request it
    answers (see ``_misshapen``).
    """

    def __init__(self, stream: Any, watch: _Watch) -> None:
        self._stream = stream
        self._watch = watch

    async def receive(self) -> Any:
        import anyio

        try:
            item = await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._watch.ended = True
            raise
        if isinstance(item, Exception):
            return _misshapen(item) or item
        return item

    def __aiter__(self) -> _Watched:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _Watched:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:  # what else the SDK reads (last_context)
        return getattr(self._stream, name)


def _child_with_stderr(pipe: tuple[int, int]) -> int | None:
    """Our child process whose stderr is ``pipe`` — the server — through Linux's /proc.

    None where there is no /proc: the SDK's own stop still applies there.
    """
    me = str(os.getpid()).encode()
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return None
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                if f.read().rpartition(b")")[2].split()[1] != me:  # the parent's pid
                    continue
            found = os.stat(f"/proc/{entry}/fd/2")
        except (OSError, IndexError):
            continue
        if (found.st_dev, found.st_ino) == pipe:
            return int(entry)
    return None


async def _end_group(pgid: int) -> None:
    """SIGTERM what is left of the server's process group, then SIGKILL after a grace."""
    import anyio

    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return  # the group is gone
        except PermissionError:  # a member we may not signal: nothing more we can do
            return
        deadline = time.monotonic() + GROUP_GRACE
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return
            await anyio.sleep(0.02)


class _Malformed:
    """Marks the error ``_misshapen`` made, so it is reported as malformed, not as sent."""


_MALFORMED = _Malformed()


def _misshapen(exc: Exception) -> Any:
    """A reply the transport could not parse, as a JSON-RPC error for the request it answers.

    The SDK drops a line that is not a valid JSON-RPC message (``"result": "text"``), and the
    request it answers would wait out its whole deadline. When the line is a JSON object with
    an ``id`` and no ``method`` it is a reply to that request, which then fails at once.
    None for anything else (no id to route it by: the SDK drops it as before).
    """
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return None
    problems = exc.errors(include_url=False)
    reply = next(
        (
            p["input"]
            for p in problems
            if isinstance(p.get("input"), dict) and "id" in p["input"] and "jsonrpc" in p["input"]
        ),
        None,
    ) or _too_deep(problems)
    if reply is None or "method" in reply:
        return None
    request_id = reply["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    import mcp_types
    from mcp.shared.message import SessionMessage

    # The union's branch the reply meant: an error if it has "error", a result otherwise.
    meant = "JSONRPCError" if "error" in reply else "JSONRPCResponse"
    own = [{**p, "loc": p["loc"][1:]} for p in problems if p.get("loc", ())[:1] == (meant,)]
    error = mcp_types.ErrorData(
        code=mcp_types.PARSE_ERROR, message=_first_problem(own or problems), data=_MALFORMED
    )
    return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _too_deep(problems: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A reply the SDK's JSON reader gave up on as nested too deeply, read by Python's.

    Pydantic's reader stops at a depth of 200 (``recursion limit exceeded``), so a schema or a
    structured result deeper than that was a line dropped unread. Python's reader goes deeper
    (to its recursion limit), deep enough to find the reply's ``id``; past that, None.
    """
    for problem in problems:
        text = problem.get("input")
        if problem.get("type") != "json_invalid" or not isinstance(text, str | bytes):
            continue
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if isinstance(parsed, dict) and "id" in parsed and "jsonrpc" in parsed:
            return parsed
    return None


def _first(error: Any) -> str:
    """A pydantic ValidationError in one line: how many problems, and the first."""
    return _first_problem(error.errors())


def _first_problem(problems: Sequence[Mapping[str, Any]]) -> str:
    """Pydantic's problems in one line: how many, and the first."""
    first = problems[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "the result"
    got = repr(first.get("input"))
    got = got if len(got) <= 120 else got[:117] + "..."
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}: {first.get('msg', 'invalid')}, got {got}{more}"


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(getattr(exc, "exceptions", None), tuple) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc


def _outer_cancelled() -> bool:
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling()) if cancelling is not None else False
