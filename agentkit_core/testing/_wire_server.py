"""A real HTTP server on 127.0.0.1 playing recorded wire bodies: provider plugins' tests.

No hosted model is reachable from a test; a provider is tested with its real client against
this server, which answers with bodies written from the vendor's API reference (JSON, SSE
streams, errors, cut connections) and keeps what the client sent.
"""

from __future__ import annotations

import io
import json
import socket
import socketserver
import threading
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any


@dataclass
class Reply:
    """One answer the server gives.

    ``chunks`` is sent with chunked encoding (an SSE stream); ``drop`` ends the connection
    before the body is complete (after ``chunks``, or halfway through ``body``); ``keepalive``
    (seconds) then sends an SSE comment that often until the client hangs up (a minute at
    most), as a server that never answers but keeps the stream alive does.
    """

    status: int = 200
    body: bytes = b""
    chunks: list[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False
    delay: float = 0.0
    keepalive: float | None = None


def sse_events(raw: bytes) -> list[bytes]:
    """A recorded SSE stream split into its events, each sent as its own chunk."""
    return [e + b"\n\n" for e in raw.split(b"\n\n") if e.strip()]


@dataclass
class Received:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    def json(self) -> Any:
        return json.loads(self.body)


class WireServer:
    """A real HTTP server on 127.0.0.1 that plays scripted, recorded wire-format answers.

    For a provider plugin's tests: point the real client (the vendor's SDK, httpx) at
    ``url`` and script what the server answers. Each connection gets the next reply of the
    script and is then closed (``Connection: close``), so a reply can also end a connection in
    the middle of a body, as a failing server would. Every request is kept in ``received``
    (to assert on the wire body the client sent). ``recordings`` is the folder the named
    recordings are read from; ``base_path`` is appended to ``url`` (``"/v1"``).
    """

    def __init__(self, recordings: Path | None = None, base_path: str = "") -> None:
        self.recordings = recordings
        self.replies: list[Reply] = []
        self.received: list[Received] = []
        server = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                server._handle(self.rfile, self.connection)

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._tcp = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._tcp.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._tcp.server_address[1]}{base_path}"
        self._thread = threading.Thread(target=self._tcp.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def play(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def recording(self, name: str) -> bytes:
        """The bytes of the recording ``name``."""
        if self.recordings is None:
            raise ValueError(f"no recordings folder to read {name!r} from: WireServer(recordings=)")
        return (self.recordings / name).read_bytes()

    def json(self, name: str, status: int = 200, **options: Any) -> None:
        """Answer the next request with the recording ``name`` as a JSON body."""
        self.play(Reply(status, self.recording(name), **options))

    def raw(self, status: int = 200, body: bytes = b"", **options: Any) -> None:
        """Answer the next request with exactly this (``Reply``'s options: chunks, drop...)."""
        self.play(Reply(status, body, **options))

    def answer(self, data: object, status: int = 200) -> None:
        """Answer the next request with ``data`` as a JSON body."""
        self.play(Reply(status, json.dumps(data).encode()))

    def keepalives(self, every: float) -> None:
        """Answer with a stream that sends only SSE comments, ``every`` seconds, never data."""
        self.play(Reply(keepalive=every))

    def events(self, *events: bytes) -> None:
        """Answer with a stream of these SSE events, one per chunk."""
        self.play(Reply(chunks=list(events)))

    def sse(self, name: str, *, drop_after: int | None = None) -> None:
        """Answer with the recorded stream ``name``, one event per chunk.

        ``drop_after=n`` ends the connection after n events, without the chunked-encoding
        terminator.
        """
        events = sse_events(self.recording(name))
        if drop_after is not None:
            self.play(Reply(chunks=events[:drop_after], drop=True))
        else:
            self.play(Reply(chunks=events))

    def _handle(self, rfile: io.BufferedIOBase, conn: socket.socket) -> None:
        request_line = rfile.readline().decode("latin-1").split()
        if len(request_line) < 2:
            return
        headers: dict[str, str] = {}
        while (line := rfile.readline().decode("latin-1").strip()) != "":
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = rfile.read(int(headers.get("content-length", "0")))
        self.received.append(
            Received(request_line[0], request_line[1], headers, body, time.monotonic())
        )
        reply = self.replies.pop(0) if self.replies else Reply(599, b"no reply scripted")
        time.sleep(reply.delay)
        try:
            self._send(reply, conn)
        except OSError:  # the client gave up (a timeout test): nothing left to tell it
            pass

    def _send(self, reply: Reply, conn: socket.socket) -> None:
        head = [f"HTTP/1.1 {reply.status} X", "Connection: close"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        if reply.chunks is None and reply.keepalive is None:
            head += ["Content-Type: application/json", f"Content-Length: {len(reply.body)}"]
            payload = reply.body[: len(reply.body) // 2] if reply.drop else reply.body
            conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
            return
        head += ["Content-Type: text/event-stream", "Transfer-Encoding: chunked"]
        conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        for chunk in reply.chunks or ():
            conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        if reply.keepalive is not None:
            comment = b": keep-alive\n\n"
            for _ in range(int(60 / reply.keepalive)):
                conn.sendall(b"%x\r\n%s\r\n" % (len(comment), comment))
                time.sleep(reply.keepalive)
        if not reply.drop:
            conn.sendall(b"0\r\n\r\n")

    def close(self) -> None:
        self._tcp.shutdown()
        self._tcp.server_close()
        self._thread.join()
