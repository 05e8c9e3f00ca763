"""What ``serve_asgi`` refuses of a browser, on a real socket: a request a page on another
site sent (its ``Origin``), or one addressed to a name rebound to this machine (its ``Host``).
A program's request (no ``Origin``) and the server's own page (same origin) are served."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core.cli import serve_asgi

served: list[str] = []


async def hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    served.append(scope["path"])
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


@pytest.fixture
async def port() -> AsyncIterator[int]:
    bound: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_asgi(hello, "127.0.0.1", 0, bound.set_result))
    yield int((await bound).rsplit(":", 1)[1])
    server.cancel()
    await asyncio.gather(server, return_exceptions=True)


async def status(port: int, headers: dict[str, str], method: str = "POST") -> int:
    """The status a raw HTTP/1.1 request with exactly ``headers`` is answered with."""
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            f"{method} /agent HTTP/1.1\r\n{lines}Content-Type: text/plain\r\n"
            "Content-Length: 2\r\nConnection: close\r\n\r\nhi".encode()
        )
        return int((await asyncio.wait_for(reader.readline(), 30)).split()[1])
    finally:
        writer.close()


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST.:{port}", "127.0.0.1"]
)
async def test_a_program_and_the_servers_own_page_are_served(port: int, host: str) -> None:
    host = host.format(port=port)
    assert await status(port, {"Host": host}) == 200
    assert await status(port, {"Host": host, "Origin": f"http://{host}"}) == 200
    assert await status(port, {"Host": host, "Origin": f"http://{host}"}, "GET") == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "127.0.0.1:{port}", "Origin": "http://evil.example"},
        {"Host": "127.0.0.1:{port}", "Origin": "null"},
        {"Host": "127.0.0.1:{port}", "Origin": "http://127.0.0.1:1"},  # another port, another site
        {"Host": "127.0.0.1:{port}", "Origin": "http://localhost:{port}"},  # another name
        {"Host": "evil.example:{port}"},
        {"Host": "evil.example:{port}", "Origin": "http://evil.example:{port}"},  # rebound
        {"Host": "127.0.0.1.evil.example:{port}"},
        {"Host": "127.0.0.1:notaport"},
    ],
    ids=repr,
)
async def test_what_a_page_elsewhere_could_send_is_refused_unseen(
    port: int, headers: dict[str, str]
) -> None:
    served.clear()
    sent = {k: v.format(port=port) for k, v in headers.items()}
    assert await status(port, sent) == 403
    assert served == []


NAMES = st.sampled_from(["127.0.0.1", "localhost", "evil.example", "127.0.0.2", "[::1]", "ex"])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(host=NAMES, host_port=st.booleans(), origin=st.none() | st.tuples(NAMES, st.booleans()))
@example(host="127.0.0.1", host_port=True, origin=("127.0.0.1", True))
async def test_only_this_machine_and_its_own_origin_are_served(
    port: int, host: str, host_port: bool, origin: tuple[str, bool] | None
) -> None:
    """Served iff the Host names this machine and the Origin, if any, is the Host's own."""
    served.clear()
    host_header = f"{host}:{port}" if host_port else host
    headers = {"Host": host_header}
    if origin is not None:
        headers["Origin"] = f"http://{origin[0]}:{port}" if origin[1] else f"http://{origin[0]}"
    local = host in ("127.0.0.1", "localhost", "[::1]")
    same = origin is None or (origin[0] == host and origin[1] == host_port)
    expected = 200 if local and same else 403
    assert await status(port, headers) == expected, headers
    assert served == (["/agent"] if expected == 200 else [])
