"""SafeFetcher against a raw socket server on 127.0.0.1 that breaks HTTP: every failure on the
wire comes out as a GuardrailViolation naming the URL and what to do, never an httpx error."""

from __future__ import annotations

import socket
import threading
import zlib
from collections.abc import Iterator

import httpx
import pytest
from agentkit_guardrail_web import WebGuardrail
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import GuardrailViolation

LAB = ["127.0.0.1/32"]
#: A reply that never comes: the server holds the connection open and says nothing.
SILENT = b"<silent>"


class RawServer:
    """Answers each request on 127.0.0.1 with the bytes set for its path, then hangs up."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.replies: dict[str, bytes] = {}
        self._open: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        request = b""
        try:
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                request += chunk
            path = request.split(b" ", 2)[1].decode()
            reply = self.replies.get(path, b"")
            if reply == SILENT:
                self._open.append(conn)  # closed with the server
                return
            conn.sendall(reply)
        except OSError:
            pass  # the client hung up first, as it should on a reply it refuses
        conn.close()

    def close(self) -> None:
        self.listener.close()
        for conn in self._open:
            conn.close()


@pytest.fixture(scope="module")
def raw() -> Iterator[RawServer]:
    server = RawServer()
    try:
        yield server
    finally:
        server.close()


def ok(body: bytes = b"fine", headers: bytes = b"") -> bytes:
    # Connection: close, so the next request never races the server's hang-up on a reused one.
    head = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n" % len(body)
    return head + headers + b"\r\n" + body


FLOOD = b"HTTP/1.1 200 OK\r\n" + b"".join(
    b"X-Flood-%d: %s\r\n" % (i, b"v" * 40) for i in range(20_000)
)

BROKEN = {
    "/flood": FLOOD + b"Content-Length: 0\r\n\r\n",
    "/endless-headers": FLOOD * 10,  # no end of the header block at all
    "/garbage": b"\x00\xff\xfe garbage \x13\x37\r\n\r\n",
    "/long-garbage": b"\x01" * 300_000 + b"\r\n\r\n",
    "/nothing": b"",
    "/cut-body": b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nonly this",
    "/bad-chunks": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot hex\r\n",
    "/bad-status": b"HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n",
    "/bad-header": b"HTTP/1.1 200 OK\r\nNo colon here\r\nContent-Length: 0\r\n\r\n",
}


@pytest.mark.parametrize("path", sorted(BROKEN))
async def test_a_reply_that_is_not_http_is_the_documented_error(raw: RawServer, path: str) -> None:
    raw.replies[path] = BROKEN[path]
    url = raw.url(path)
    async with WebGuardrail(allow_private_networks=LAB).fetcher(deadline=10) as fetch:
        with pytest.raises(GuardrailViolation) as info:
            await fetch.get(url)
    exc = info.value
    assert exc.value == url and f"URL {url!r} refused" in str(exc)
    assert "could not be read as HTTP" in str(exc) and "use another URL" in str(exc)
    assert isinstance(exc.__cause__, httpx.RemoteProtocolError)
    assert len(str(exc)) < 800  # the server's bytes are quoted, but not all of them


async def test_a_refused_connection_is_the_documented_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as placeholder:
        port = placeholder.getsockname()[1]  # closed on leaving: nothing listens there
    url = f"http://127.0.0.1:{port}/"
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        with pytest.raises(GuardrailViolation, match=r"no connection could be made") as info:
            await fetch.get(url)
    assert info.value.value == url and "check that the host is up" in str(info.value)
    assert isinstance(info.value.__cause__, httpx.ConnectError)


async def test_a_server_that_never_answers_is_the_documented_error(raw: RawServer) -> None:
    raw.replies["/silent"] = SILENT
    async with WebGuardrail(allow_private_networks=LAB).fetcher(timeout=0.3) as fetch:
        with pytest.raises(GuardrailViolation, match=r"did not answer within timeout=0.3 s"):
            await fetch.get(raw.url("/silent"))


async def test_a_body_that_does_not_decode_is_the_documented_error(raw: RawServer) -> None:
    raw.replies["/gzip"] = ok(b"not gzip at all", b"Content-Encoding: gzip\r\n")
    raw.replies["/deflate"] = ok(
        zlib.compress(b"x" * 100)[:-6] + b"!!!!!!", b"Content-Encoding: deflate\r\n"
    )
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        for path, coding in (("/gzip", "gzip"), ("/deflate", "deflate")):
            with pytest.raises(
                GuardrailViolation, match=rf"declared '{coding}' but does not decode"
            ):
                await fetch.get(raw.url(path))


async def test_a_failed_hop_after_a_redirect_names_that_hop(raw: RawServer) -> None:
    raw.replies["/hop"] = (
        b"HTTP/1.1 302 Found\r\nConnection: close\r\nLocation: /flood-after\r\n"
        b"Content-Length: 0\r\n\r\n"
    )
    raw.replies["/flood-after"] = FLOOD + b"\r\n"
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        with pytest.raises(GuardrailViolation) as info:
            await fetch.get(raw.url("/hop"))
    assert info.value.value == raw.url("/flood-after")


async def test_the_fetcher_still_reads_a_well_formed_reply(raw: RawServer) -> None:
    raw.replies["/ok"] = ok(b"hello", b"X-Many: " + b"a" * 1000 + b"\r\n")
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        response = await fetch.get(raw.url("/ok"))
    assert response.text == "hello" and response.headers["X-Many"] == "a" * 1000


header_lines = st.lists(
    st.one_of(
        st.binary(max_size=60).filter(lambda b: b"\r\n" not in b),
        st.builds(
            lambda n, v: b"%s: %s" % (n, v),
            st.sampled_from([b"Content-Length", b"Transfer-Encoding", b"Content-Encoding", b"X"]),
            st.sampled_from([b"0", b"5", b"-1", b"chunked", b"gzip", b"deflate", b"br", b""]),
        ),
    ),
    max_size=6,
)


@st.composite
def replies(draw: st.DrawFn) -> bytes:
    """Anything a hostile server might send: raw bytes, or HTTP-shaped lines with junk in them."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=300))
    status = draw(
        st.sampled_from([b"HTTP/1.1 200 OK", b"HTTP/1.1 302 Found", b"HTTP/1.0 200", b"HTTP/9 x"])
    )
    lines = [status, *draw(header_lines)]
    return b"\r\n".join(lines) + b"\r\n\r\n" + draw(st.binary(max_size=100))


@given(reply=replies())
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
async def test_whatever_the_server_sends_the_fetch_answers_or_raises_the_documented_error(
    raw: RawServer, reply: bytes
) -> None:
    raw.replies["/any"] = reply
    async with WebGuardrail(allow_private_networks=LAB).fetcher(timeout=2, deadline=5) as fetch:
        try:
            response = await fetch.get(raw.url("/any"))
        except GuardrailViolation as exc:
            assert exc.value == raw.url("/any") and f"URL {exc.value!r} refused: " in str(exc)
        else:
            assert isinstance(response, httpx.Response)
