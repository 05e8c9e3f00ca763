"""WireServer, the recorded-wire server of provider plugins' tests, read by a real HTTP client."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core.testing import WireServer
from agentkit_core.testing import sse_events


@pytest.fixture
def server(tmp_path: Path) -> Iterator[WireServer]:
    wire = WireServer(tmp_path, base_path="/v1")
    yield wire
    wire.close()


def post(server: WireServer, body: bytes = b"{}", timeout: float = 5.0) -> http.client.HTTPResponse:
    host, port = server.url.removeprefix("http://").split("/")[0].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    conn.request("POST", "/v1/messages", body, {"Content-Type": "application/json"})
    return conn.getresponse()


def test_keepalives_open_a_stream_of_comments_only(server: WireServer) -> None:
    """A server that keeps a stream alive and never answers: SSE comments, no data, no end."""
    server.keepalives(0.01)
    response = post(server)
    assert response.status == 200
    assert response.getheader("Content-Type") == "text/event-stream"
    first = response.read1(64)  # a stream: the first comment, not an empty JSON body
    assert first.startswith(b": keep-alive\n\n")
    response.close()


def test_raw_answers_exactly_what_it_is_given(server: WireServer) -> None:
    server.raw(529, b'{"type": "error"}', headers={"retry-after": "3"})
    server.raw(chunks=[b"data: 1\n\n", b"data: 2"], drop=True)
    refused = post(server)
    assert (refused.status, refused.getheader("retry-after")) == (529, "3")
    assert refused.read() == b'{"type": "error"}'
    with pytest.raises(http.client.IncompleteRead) as cut:
        post(server).read()
    assert cut.value.partial == b"data: 1\n\ndata: 2"  # then the connection ended mid-body
    assert [r.json() for r in server.received] == [{}, {}]
    assert server.received[0].path == "/v1/messages"


def test_recordings_are_read_from_the_folder(server: WireServer, tmp_path: Path) -> None:
    (tmp_path / "answer.json").write_bytes(b'{"ok": true}')
    (tmp_path / "answer.sse").write_bytes(b"data: a\n\ndata: b\n\n")
    server.json("answer.json")
    server.sse("answer.sse", drop_after=1)
    assert post(server).read() == b'{"ok": true}'
    with pytest.raises(http.client.IncompleteRead) as cut:
        post(server).read()
    assert cut.value.partial == b"data: a\n\n"


_FIELD = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=20)
#: An SSE event: one to three field lines (``data: ...``), none of them blank.
_EVENT = st.lists(_FIELD.map("data: {}".format), min_size=1, max_size=3).map("\n".join)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_EVENT, min_size=1, max_size=5))
def test_a_recorded_stream_arrives_byte_for_byte(server: WireServer, events: list[str]) -> None:
    """Any recorded SSE stream, split into events and sent one per chunk, reaches the client
    as it was recorded (each event with its blank line)."""
    recorded = "".join(f"{e}\n\n" for e in events).encode()
    server.events(*sse_events(recorded))
    assert post(server).read() == recorded
