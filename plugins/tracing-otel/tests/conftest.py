"""Fixtures of the tracing-otel tests: the OTLP/HTTP collector stand-in."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # otel_collector, weather_tools

from otel_collector import Collector
from otel_collector import handler_for


@pytest.fixture
def collector() -> Iterator[Collector]:
    got = Collector()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(got))
    got.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
