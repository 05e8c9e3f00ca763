"""Real HTTP servers on loopback addresses, with routes a test sets and a log of what they saw."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer

import pytest


@dataclass
class Server:
    address: str
    port: int
    #: path -> (status, headers, body)
    routes: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)
    #: (method, path, Host header) of every request received
    seen: list[tuple[str, str, str]] = field(default_factory=list)
    #: path -> a function that writes the whole answer itself (drips, endless bodies...)
    handlers: dict[str, Callable[[BaseHTTPRequestHandler], None]] = field(default_factory=dict)

    def url(self, path: str = "/") -> str:
        return f"http://{self.address}:{self.port}{path}"


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def _answer(self) -> None:
        spec = self.server.spec
        spec.seen.append((self.command, self.path, self.headers.get("Host", "")))
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        handler = spec.handlers.get(self.path)
        if handler is not None:
            try:
                handler(self)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client hung up, as it should on a body it refuses
            self.close_connection = True
            return
        status, headers, body = spec.routes.get(
            self.path, (200, {}, f"hello from {spec.address}".encode())
        )
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    spec: Server


def _start(address: str, port: int) -> tuple[_HTTPServer, threading.Thread]:
    httpd = _HTTPServer((address, port), _Handler)
    httpd.spec = Server(address, httpd.server_address[1])
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    return httpd, thread


@pytest.fixture(autouse=True)
def _no_web_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``AGENTKIT_WEB_*`` variable of the machine's reaches a guardrail a test builds."""
    for name in list(os.environ):
        if name.startswith("AGENTKIT_WEB_"):
            monkeypatch.delenv(name)


@pytest.fixture
def servers() -> Iterator[tuple[Server, Server]]:
    """``(good, evil)``: servers on 127.0.0.1 and 127.0.0.2 listening on the same port."""
    started: list[tuple[_HTTPServer, threading.Thread]] = []
    for _ in range(20):
        evil = _start("127.0.0.2", 0)
        try:
            good = _start("127.0.0.1", evil[0].server_address[1])
        except OSError:
            evil[0].shutdown()
            evil[0].server_close()
            continue
        started = [good, evil]
        break
    assert started, "could not bind 127.0.0.1 and 127.0.0.2 on one port"
    try:
        yield started[0][0].spec, started[1][0].spec
    finally:
        for httpd, thread in started:
            httpd.shutdown()
            httpd.server_close()
            thread.join(5)
